#!/usr/bin/env bash
# The crates as a registry would take them, and the CLI as `cargo install` installs it:
#   1. `cargo publish --workspace --dry-run` (ewise-python, which ships as a wheel,
#      ewise-web, the npm package scripts/web-build.sh makes, and ewise-testkit, the
#      tests' helpers, left out): packages every crate and builds each package on its
#      own, in dependency order, against the packages before it;
#   2. `cargo install --locked --debug --path crates/ewise-cli` into a temporary root, in
#      target/, where step 1 built every dependency of the CLI with these features and
#      this profile (the optimized build of the same sources is scripts/dist.sh's), then
#      `ewise --version` and one real `ewise sign` on a .npy file this script writes, its
#      output checked byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."

# Cargo unpacks the packages it verifies against into $CARGO_HOME/registry/src/-<hash
# of this checkout's path>/ and never unpacks them again while that directory stands,
# so a second run from the same path builds against the first run's sources. The dry
# run therefore gets a CARGO_HOME of its own: the registry's index and downloaded
# crates shared with the real one, the unpacked sources fresh and removed afterwards.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
scratch_home="$(mktemp -d)"
trap 'rm -rf "$scratch_home"' EXIT
mkdir -p "$scratch_home/registry" "$cargo_home/registry/index" "$cargo_home/registry/cache"
ln -s "$cargo_home/registry/index" "$scratch_home/registry/index"
ln -s "$cargo_home/registry/cache" "$scratch_home/registry/cache"
for f in config config.toml credentials credentials.toml; do
    if [[ -f "$cargo_home/$f" ]]; then cp "$cargo_home/$f" "$scratch_home/$f"; fi
done
echo "package-check: cargo publish --workspace --dry-run" >&2
CARGO_HOME="$scratch_home" cargo publish --workspace --exclude ewise-python --exclude ewise-web --exclude ewise-testkit --dry-run --locked
rm -rf "$scratch_home"

root="$(mktemp -d)"
trap 'rm -rf "$root" "$scratch_home"' EXIT
echo "package-check: cargo install --locked --debug --path crates/ewise-cli --root $root" >&2
cargo install --quiet --locked --debug --path crates/ewise-cli --root "$root" --target-dir target
version="$("$root/bin/ewise" --version)"
want="ewise $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)"
if [ "$version" != "$want" ]; then
    echo "package-check: the installed ewise says '$version', not '$want'" >&2
    exit 1
fi

# x = float32 [-2, -0, 0, inf, nan, 3] as a version 1.0 .npy file; sign(x) is
# [-1, 0, 0, 1, 0, 1] (NaN gives +0 by default), its 24 bytes of data checked.
npy() { # element count, data as hex -> a float32 .npy file on stdout
    local header="{'descr': '<f4', 'fortran_order': False, 'shape': ($1,), }"
    while [ $(((10 + ${#header} + 1) % 64)) -ne 0 ]; do header+=" "; done
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf '%02x' $(((${#header} + 1) % 256)))\\x$(printf '%02x' $(((${#header} + 1) / 256)))"
    printf '%s\n' "$header"
    printf "$(printf '%s' "$2" | sed 's/../\\x&/g')"
}
npy 6 000000c000000080000000000000807f0000c07f00004040 >"$root/x.npy"
"$root/bin/ewise" sign "$root/x.npy" "$root/y.npy"
want_data=000080bf00000000000000000000803f000000000000803f
if [ "$(tail -c 24 "$root/y.npy" | od -A n -t x1 | tr -d ' \n')" != "$want_data" ]; then
    echo "package-check: the installed ewise's sign gave other bytes:" >&2
    od -A d -t x1 "$root/y.npy" >&2
    exit 1
fi
echo "package-check: $version installed and ran sign bit-exactly" >&2
