#!/usr/bin/env bash
# Checks what scripts/dist.sh left in target/dist/, taking each artefact as its users do:
#
#   - SHA256SUMS matches every file, and every file is listed;
#   - one version everywhere: the workspace's, each .crate's name and Cargo.toml, the
#     wheel's name and METADATA, the sdist's name and PKG-INFO, ewise.h's
#     EWISE_VERSION_STRING and ewise.pc in the C tarball, `ewise --version` from the CLI
#     tarball, `ewise.__version__` from the installed wheel;
#   - each .crate holds sources, manifests, licences and readme only (no tests, data or
#     generated files);
#   - the wheel: `pip install --no-index --find-links` into a fresh venv whose only other
#     wheel is numpy's (downloaded beforehand into target/wheelhouse), imported from that
#     venv's site-packages, and run; the CLI from its tarball on the same input gives the
#     same bytes. The venv is left at target/wheel-venv: `EWISE_PYTHON_VENV=target/wheel-venv
#     scripts/python-test.sh` runs the package's tests against it;
#   - the sdist builds a wheel from source in another fresh venv (pip, with maturin from
#     PyPI and cargo), and that wheel imports and runs;
#   - the C tarball unpacked in a new directory: examples/c/sign.c builds with pkg-config
#     against it and runs;
#   - a new crate made with the README's `cargo add ewise --path .../crates/ewise` builds
#     offline and runs.
#
# Needs what scripts/dist.sh needs (its target/dist-venv), PyPI (numpy's wheel, maturin for the sdist), cc and
# pkg-config (installed by scripts/c-test.sh --tools-only as root when missing).
#
# Usage: scripts/dist-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
dist="$target_dir/dist"
work="$target_dir/dist-check"

fail() {
    echo "dist-check: FAILED: $*" >&2
    exit 1
}
ok() { echo "dist-check: ok: $*" >&2; }

[ -f "$dist/SHA256SUMS" ] || fail "no $dist/SHA256SUMS: run scripts/dist.sh first"
rm -rf "$work"
mkdir -p "$work"

version="$(cargo metadata --no-deps --format-version 1 --locked |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["packages"][0]["version"])')"
triple="$(rustc -vV | sed -n 's/^host: //p')"

# --- SHA256SUMS --------------------------------------------------------------------------
(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match"
listed="$(awk '{ print $2 }' "$dist/SHA256SUMS" | sort)"
present="$(cd "$dist" && ls -A | grep -vx SHA256SUMS | sort)"
[ "$listed" = "$present" ] || fail "SHA256SUMS lists $(echo $listed) but the directory holds $(echo $present)"
ok "SHA256SUMS ($(echo "$listed" | wc -l) files)"

# --- the crates ---------------------------------------------------------------------------
crates="$(cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["publish"] != []:
        print(p["name"])')"
for crate in $crates; do
    file="$dist/$crate-$version.crate"
    [ -f "$file" ] || fail "no $crate-$version.crate"
    tar -xzf "$file" -C "$work"
    grep -qx "version = \"$version\"" "$work/$crate-$version/Cargo.toml" ||
        fail "$crate-$version.crate's Cargo.toml does not say version = \"$version\""
    extra="$(tar -tzf "$file" | sed "s|^$crate-$version/||" | grep -Ev \
        '^(src/.*\.rs|include/.*\.h|build\.rs|Cargo\.toml|Cargo\.toml\.orig|Cargo\.lock|\.cargo_vcs_info\.json|README\.md|LICENSE-MIT|LICENSE-APACHE)$' || true)"
    [ -z "$extra" ] || fail "$crate-$version.crate holds more than sources: $(echo $extra)"
done
[ "$(ls "$dist"/*.crate | wc -l)" = "$(echo $crates | wc -w)" ] || fail "stray .crate files in $dist"
ok "crates $(echo $crates) at $version, sources only"

# --- the wheel, offline, beside numpy's alone ----------------------------------------------
wheels=("$dist"/ewise-"$version"-cp310-abi3-*.whl)
[ ${#wheels[@]} = 1 ] && [ -f "${wheels[0]}" ] || fail "expected one ewise-$version-cp310-abi3-*.whl in $dist"
wheel="${wheels[0]}"
case "$(uname -s)" in
    Linux)
        tag="$(basename "$wheel" .whl)"
        tag="${tag##*-}"
        python3 - "$tag" <<'EOF' || fail "the wheel's tag $tag is not manylinux_2_28 or lower"
import re, sys
tags = sys.argv[1].split(".")
ok = all((m := re.fullmatch(r"manylinux_2_(\d+)_\w+", t)) and int(m[1]) <= 28 for t in tags)
sys.exit(0 if ok else 1)
EOF
        ;;
esac
numpy_pin="$(grep -x 'numpy==.*' crates/ewise-python/constraints.txt)"
wheelhouse="$target_dir/wheelhouse"
if ! ls "$wheelhouse"/"${numpy_pin/==/-}"-*.whl >/dev/null 2>&1; then
    rm -rf "$wheelhouse"
    "$target_dir/dist-venv/bin/pip" download --quiet --disable-pip-version-check --only-binary=:all: --no-deps \
        -d "$wheelhouse" "$numpy_pin" || fail "pip could not download $numpy_pin's wheel from PyPI"
fi
venv="$target_dir/wheel-venv"
rm -rf "$venv"
python3 -m venv "$venv" || fail "python3 -m venv failed (Debian: apt-get install python3-venv)"
links="$work/links"
mkdir -p "$links"
cp "$wheel" "$wheelhouse"/*.whl "$links/"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-index --find-links "$links" ewise ||
    fail "pip install --no-index --find-links (the wheel and numpy's) failed"
py="$venv/bin/python"
cli_tar="$dist/ewise-cli-$version-$triple.tar.gz"
[ -f "$cli_tar" ] || fail "no ewise-cli-$version-$triple.tar.gz"
tar -xzf "$cli_tar" -C "$work"
cli="$work/ewise-cli-$version-$triple/ewise"
[ "$("$cli" --version)" = "ewise $version" ] || fail "the CLI tarball's ewise --version says '$("$cli" --version)'"
(cd "$work" && "$py" - "$version" "$venv" "$cli") <<'EOF' || fail "the installed wheel"
import os, subprocess, sys
import numpy as np
import ewise

version, venv, cli = sys.argv[1:]
assert ewise.__version__ == version, (ewise.__version__, version)
where = os.path.realpath(ewise.__file__)
assert where.startswith(os.path.realpath(venv) + os.sep), f"ewise imported from {where}"
x = np.array([-2.5, -0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45], np.float32)
y = ewise.sign(x)
assert y.view(np.uint32).tolist() == [0xBF800000, 0, 0, 0, 0, 0x3F800000, 0xBF800000, 0x3F800000], y
assert ewise.is_infinity(x).tolist() == [0, 0, 0, 0, 0, 1, 1, 0]
np.save("x.npy", x)
subprocess.run([cli, "sign", "x.npy", "y.npy"], check=True)
assert np.load("y.npy").tobytes() == y.tobytes(), "the CLI and the wheel disagree"
EOF
ok "$(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) installs offline beside $numpy_pin, imports from the venv, agrees with the CLI tarball; ewise --version = $version"

# --- the sdist, built from source ---------------------------------------------------------
sdist="$dist/ewise-$version.tar.gz"
[ -f "$sdist" ] || fail "no ewise-$version.tar.gz"
tar -xzOf "$sdist" "ewise-$version/PKG-INFO" | grep -qx "Version: $version" ||
    fail "the sdist's PKG-INFO does not say Version: $version"
sdist_venv="$work/sdist-venv"
python3 -m venv "$sdist_venv"
# The workspace's target directory: the dependencies built for the CLI are reused (the
# sdist's own crates build again, from the sdist's sources).
CARGO_TARGET_DIR="$target_dir" "$sdist_venv/bin/pip" wheel --quiet --disable-pip-version-check \
    --no-deps -w "$work/from-sdist" "$sdist" || fail "the sdist did not build (pip wheel $sdist)"
"$sdist_venv/bin/pip" install --quiet --disable-pip-version-check --no-index \
    --find-links "$work/from-sdist" --find-links "$wheelhouse" ewise || fail "the wheel built from the sdist did not install"
(cd "$work" && "$sdist_venv/bin/python" -c "
import numpy as np, ewise
assert ewise.__version__ == '$version'
assert ewise.sign(np.array([-3, 0, 7], np.int8)).tolist() == [-1, 0, 1]
") || fail "the wheel built from the sdist does not run"
ok "ewise-$version.tar.gz builds from source in a fresh venv and runs"

# --- the C tarball -------------------------------------------------------------------------
c_tar="$dist/ewise-c-$version-$triple.tar.gz"
[ -f "$c_tar" ] || fail "no ewise-c-$version-$triple.tar.gz"
scripts/c-test.sh --tools-only
command -v cc >/dev/null && command -v pkg-config >/dev/null ||
    fail "cc and pkg-config are needed to check the C tarball"
# As the README unpacks it: into a prefix of the user's, without the top directory.
prefix="$work/c/home/.local"
mkdir -p "$prefix"
tar -xzf "$c_tar" -C "$prefix" --strip-components=1
grep -q "^#define EWISE_VERSION_STRING \"$version\"$" "$prefix/include/ewise.h" ||
    fail "the C tarball's ewise.h does not define EWISE_VERSION_STRING \"$version\""
[ "$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion ewise)" = "$version" ] ||
    fail "the C tarball's ewise.pc does not say Version: $version"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Werror examples/c/sign.c $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs ewise) \
    -Wl,-rpath,"$prefix/lib" -o "$work/c/sign" || fail "examples/c/sign.c does not build against the C tarball"
"$work/c/sign" >"$work/c/sign.txt" || fail "examples/c/sign.c built against the C tarball fails: $(cat "$work/c/sign.txt")"
ok "ewise-c-$version-$triple.tar.gz: ewise.h and ewise.pc at $version; examples/c/sign.c builds and runs"
# --- the Rust crate, as the README adds it -------------------------------------------------
app="$work/rust-app"
mkdir -p "$app/src"
printf '[package]\nname = "app"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[workspace]\n\n[dependencies]\n' >"$app/Cargo.toml"
cat >"$app/src/main.rs" <<'EOF'
fn main() {
    let mut data = [-3i8, 0, 9, i8::MIN];
    ewise::array::sign_in_place(&mut data, ewise::NanPolicy::Zero);
    assert_eq!(data, [-1, 0, 1, -1]);
    println!("{data:?}");
}
EOF
# The workspace's Cargo.lock seeds the new crate's, so that it resolves to the versions
# this checkout built and downloaded, not to the newest the local index has heard of
# (which an earlier `cargo install` may have refreshed without fetching them).
cp "$root/Cargo.lock" "$app/Cargo.lock"
(cd "$app" && cargo add --quiet --offline ewise --path "$root/crates/ewise" &&
    CARGO_TARGET_DIR="$target_dir" cargo run --quiet --offline --release >"$work/rust-app.txt") ||
    fail "a new crate with 'cargo add ewise --path crates/ewise' does not build and run offline"
ok "cargo add ewise --path crates/ewise: a new crate builds offline and runs ($(cat "$work/rust-app.txt"))"
echo "dist-check: all passed for ewise $version" >&2
