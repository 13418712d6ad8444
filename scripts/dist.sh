#!/usr/bin/env bash
# Every artefact of a release of ewise, built from this checkout into target/dist/:
#
#   ewise-VERSION.crate, ewise-core-VERSION.crate, ...   the crates as `cargo publish`
#                                  uploads them (scripts/package-check.sh builds each one
#                                  on its own; this script packages without verifying)
#   ewise-VERSION-cp310-abi3-manylinux_2_28_ARCH.whl    the Python package for CPython >=
#                                  3.10 on glibc >= 2.28 (maturin with zig; checked with
#                                  auditwheel); on macOS a wheel for this machine
#   ewise-VERSION.tar.gz           the Python sdist (builds with maturin and cargo)
#   ewise-c-VERSION-TRIPLE.tar.gz  the C library: include/ewise.h, lib/libewise.so*,
#                                  lib/libewise.a, lib/pkgconfig/ewise.pc (relocatable),
#                                  share/doc/ewise/ (licences, C-API.md)
#   ewise-cli-VERSION-TRIPLE.tar.gz   the `ewise` binary for this target
#   SHA256SUMS                     `sha256sum -c SHA256SUMS` checks them all
#
# The directory is replaced whole at the end, so it never holds a mix of two runs.
# Tarballs are reproducible: entries sorted, owner 0, mtimes of the last commit.
# Needs cargo, python3 with venv and pip (PyPI: scripts/dist-requirements.txt, installed
# into target/dist-venv), tar and gzip. scripts/dist-check.sh checks the result.
#
# Usage: scripts/dist.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
out="$target_dir/dist"
stage="$target_dir/dist.tmp"

fail() {
    echo "dist: $*" >&2
    exit 1
}

[ $# -eq 0 ] || fail "takes no arguments (it always builds every artefact into $out)"
command -v python3 >/dev/null || fail "python3 is needed for the wheel (CPython >= 3.10 with venv and pip)"

version="$(cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
versions = {p["version"] for p in json.load(sys.stdin)["packages"]}
if len(versions) != 1:
    sys.exit(f"the workspace packages have several versions: {sorted(versions)}")
print(versions.pop())')"
triple="$(rustc -vV | sed -n 's/^host: //p')"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
echo "dist: ewise $version for $triple into $out" >&2

rm -rf "$stage"
mkdir -p "$stage"

# A tarball of DIR's last component, as reproducible as tar allows.
tarball() {
    local dir="$1" file="$2"
    tar -C "$(dirname "$dir")" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 \
        --numeric-owner -cf - "$(basename "$dir")" | gzip -n -9 >"$file"
}

# The crates.
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
    echo "dist: warning: the working tree has uncommitted changes; the artefacts include them" >&2
fi
cargo package --workspace --exclude ewise-python --exclude ewise-web --exclude ewise-testkit --locked --no-verify --allow-dirty --quiet
crates="$(cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] != []:
        print(p["name"])')"
for crate in $crates; do
    cp "$target_dir/package/$crate-$version.crate" "$stage/"
done

# The Python wheel and sdist.
venv="$target_dir/dist-venv"
if [ ! -x "$venv/bin/maturin" ] || [ ! -e "$venv/.requirements" ] ||
    ! cmp -s scripts/dist-requirements.txt "$venv/.requirements"; then
    rm -rf "$venv"
    python3 -m venv "$venv" || fail "python3 -m venv failed (Debian: apt-get install python3-venv)"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r scripts/dist-requirements.txt ||
        fail "pip could not install scripts/dist-requirements.txt from PyPI (see above)"
    cp scripts/dist-requirements.txt "$venv/.requirements"
fi
package=crates/ewise-python/Cargo.toml
# maturin finds zig (the ziglang package) through the Python on PATH.
export PATH="$venv/bin:$PATH"
case "$(uname -s)" in
    Linux)
        "$venv/bin/maturin" build --quiet --release --locked --zig --compatibility manylinux_2_28 \
            -m "$package" --out "$stage"
        for wheel in "$stage"/*.whl; do
            "$venv/bin/auditwheel" show "$wheel" >"$stage/.auditwheel" 2>&1 ||
                fail "auditwheel show $wheel failed: $(cat "$stage/.auditwheel")"
            tr '\n' ' ' <"$stage/.auditwheel" | grep -q 'consistent with the following platform tag: "manylinux_2_28_' ||
                fail "auditwheel does not find $wheel consistent with manylinux_2_28: $(cat "$stage/.auditwheel")"
            rm "$stage/.auditwheel"
        done
        ;;
    *) "$venv/bin/maturin" build --quiet --release --locked -m "$package" --out "$stage" ;;
esac
"$venv/bin/maturin" sdist -m "$package" --out "$stage"

# The C library, laid out as scripts/c-install.sh installs it, relocatable.
c_dir="$stage/.c/ewise-c-$version-$triple"
scripts/c-install.sh --profile release --relocatable "$c_dir"
mkdir -p "$c_dir/share/doc/ewise"
cp LICENSE-MIT LICENSE-APACHE docs/C-API.md "$c_dir/share/doc/ewise/"
tarball "$c_dir" "$stage/ewise-c-$version-$triple.tar.gz"
rm -rf "$stage/.c"

# The command-line tool.
cargo build --release --locked --quiet -p ewise-cli
cli_dir="$stage/.cli/ewise-cli-$version-$triple"
mkdir -p "$cli_dir"
install -m 755 "$target_dir/release/ewise" "$cli_dir/ewise"
cp README.md LICENSE-MIT LICENSE-APACHE "$cli_dir/"
tarball "$cli_dir" "$stage/ewise-cli-$version-$triple.tar.gz"
rm -rf "$stage/.cli"

(cd "$stage" && sha256sum -- * >SHA256SUMS)
rm -rf "$out"
mv "$stage" "$out"
(cd "$out" && ls -l --time-style=+ -- * | awk '{ printf "dist: %10d  %s\n", $5, $NF }') >&2
