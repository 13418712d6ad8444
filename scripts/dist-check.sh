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
#     PyPI and cargo; unoptimized, to share the debug builds' dependencies), and that
#     wheel imports and runs;
#   - the C tarball unpacked in a new directory: examples/c/sign.c builds with pkg-config
#     against it and runs, linked with the shared library and, by INSTALL.md's command,
#     with libewise.a alone (no libewise.so needed at run time);
#   - the glibc floor, 2.28: no ELF file of any artefact (the CLIs, libewise.so of both
#     Linux targets, the wheel's extension module) requires a GLIBC_ symbol version above
#     it (readelf -V), so they start on RHEL 8, Debian 10, Ubuntu 20.04 and later;
#   - aarch64 Linux under qemu-user (qemu-aarch64 -L /usr/aarch64-linux-gnu): the CLI
#     tarball's `ewise --version`, and a sign run giving the same bytes as the x86-64 CLI;
#     examples/c/sign.c built with aarch64-linux-gnu-gcc against the aarch64 C tarball
#     (shared and static) and run;
#   - Windows under wine (scripts/wine.sh): the CLI zip's ewise.exe gives the same version
#     and bytes as the Linux CLI; examples/c/sign.c built with x86_64-w64-mingw32-gcc
#     against the C zip's libewise.dll.a and, separately, its MSVC-format ewise.lib, and
#     run with the zip's ewise.dll beside it; both zips are reproducible (entries sorted,
#     one date) and the DLL and the .exe import only Windows' own DLLs;
#   - every binary artefact and the wheel hold LICENSE-MIT, LICENSE-APACHE and
#     THIRD-PARTY-NOTICES.txt, whose list names every crate of that artefact's graph for its
#     target (scripts/lib/third-party-notices.py check); the CLI's also completions/
#     (bash, zsh, fish, PowerShell) and man/man1/ewise.1; every relative link of a shipped
#     .md file resolves inside its artefact (scripts/lib/markdown-links.py check);
#   - no binary holds the builder's paths: $HOME, $CARGO_HOME's registry, this checkout;
#   - a new crate made with the README's `cargo add ewise --path .../crates/ewise` builds
#     offline and runs (a debug build, in target/debug with the others).
#
# Needs what scripts/dist.sh needs (its target/dist-venv), PyPI (numpy's wheel, maturin for
# the sdist), cc and pkg-config (installed by scripts/c-test.sh --tools-only as root when
# missing), readelf, qemu-user, gcc-aarch64-linux-gnu and libc6-dev-arm64-cross (installed
# as root like scripts/cross-check.sh does), wine and mingw-w64 (scripts/wine.sh --prepare).
# Without one of them it fails, naming it.
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
glibc_floor=2.28
windows=x86_64-pc-windows-gnu
aarch64=aarch64-unknown-linux-gnu
cargo_home="$(cd "${CARGO_HOME:-$HOME/.cargo}" && pwd -P)"

# The newest GLIBC_ version FILE (an ELF file of any architecture) requires; fails above
# the floor, naming the symbols that need more.
check_glibc() {
    local file="$1" newest unversioned
    readelf -W -V "$file" >"$work/readelf.txt" 2>&1 || fail "readelf -V $file: $(head -3 "$work/readelf.txt")"
    newest="$(grep -o 'Name: GLIBC_[0-9.]*' "$work/readelf.txt" | sed 's/.*GLIBC_//' | sort -V | tail -n 1)"
    [ -n "$newest" ] || fail "$file requires no GLIBC_ version: is it linked against glibc?"
    if [ "$(printf '%s\n%s\n' "$newest" "$glibc_floor" | sort -V | tail -n 1)" != "$glibc_floor" ]; then
        fail "$file requires GLIBC_$newest, above the floor $glibc_floor: $(readelf -W --dyn-syms "$file" |
            grep -oE '[A-Za-z0-9_]+@GLIBC_[0-9.]+' | awk -F@GLIBC_ -v f="$glibc_floor" '{ split($2, a, "."); split(f, b, ".");
            if (a[1] > b[1] || (a[1] == b[1] && a[2] > b[2])) print }' | sort -u | tr '\n' ' ')"
    fi
    # A symbol the zig-made glibc 2.28 stubs do not define is left undefined and
    # unversioned (a shared object links anyway): the loader then refuses the file on
    # glibc 2.28. Python's C API (Py*, _Py*) is the wheel's one expected exception.
    unversioned="$(readelf -W --dyn-syms "$file" | awk '$7 == "UND" && $5 == "GLOBAL" && $8 != "" && $8 !~ /@/ && $8 !~ /^_?Py/ { print $8 }' | sort -u | tr '\n' ' ')"
    [ -z "$unversioned" ] || fail "$file needs $unversioned, undefined in glibc $glibc_floor (a libc function newer than the floor, called directly)"
    echo "$newest"
}

# Fails when FILE holds one of the builder's paths.
check_no_paths() {
    local file="$1" path
    for path in "$HOME/" "$cargo_home/registry" "$root/" "$(cd "$root" && pwd -P)/"; do
        if grep -F -a -q -- "$path" "$file"; then
            fail "$(basename "$file") holds the builder's path $path: $(grep -F -a -o -- "$path[^[:cntrl:]]*" "$file" | head -n 2 | tr '\n' ' ')"
        fi
    done
}

# DIR holds LICENSE-MIT, LICENSE-APACHE and THIRD-PARTY-NOTICES.txt naming every crate of
# PACKAGE on TARGET.
check_licences() {
    local dir="$1" package="$2" t="$3" what="$4" f
    for f in LICENSE-MIT LICENSE-APACHE THIRD-PARTY-NOTICES.txt; do
        [ -s "$dir/$f" ] || fail "$what has no $f"
    done
    cmp -s "$dir/LICENSE-MIT" LICENSE-MIT && cmp -s "$dir/LICENSE-APACHE" LICENSE-APACHE ||
        fail "$what's LICENSE-MIT or LICENSE-APACHE differs from the checkout's"
    python3 scripts/lib/third-party-notices.py check "$package" "$t" "$dir/THIRD-PARTY-NOTICES.txt" ||
        fail "$what's THIRD-PARTY-NOTICES.txt"
}

# The CLI's companions in DIR: completions for four shells and the man page.
check_cli_companions() {
    local dir="$1" what="$2" f
    for f in completions/ewise.bash completions/_ewise completions/ewise.fish completions/_ewise.ps1 man/man1/ewise.1; do
        [ -s "$dir/$f" ] || fail "$what has no $f"
    done
    head -c 300 "$dir/man/man1/ewise.1" | grep -q '^\.TH' || fail "$what's man/man1/ewise.1 is not a roff page"
}

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
wheel_dir="$work/wheel-files"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$wheel_dir"
licences="$(echo "$wheel_dir"/ewise-"$version".dist-info/licenses)"
check_licences "$licences" ewise-python "$triple" "$(basename "$wheel")"
grep -qx 'License-File: THIRD-PARTY-NOTICES.txt' "$wheel_dir/ewise-$version.dist-info/METADATA" ||
    fail "the wheel's METADATA does not name THIRD-PARTY-NOTICES.txt in a License-File line"
grep -q '^Project-URL: Documentation, https://' "$wheel_dir/ewise-$version.dist-info/METADATA" ||
    fail "the wheel's METADATA has no Project-URL: Documentation line"
grep -qx 'Provides-Extra: dask' "$wheel_dir/ewise-$version.dist-info/METADATA" &&
    grep -q "^Requires-Dist: xarray.*extra == .dask." "$wheel_dir/ewise-$version.dist-info/METADATA" ||
    fail "the wheel's extra 'dask' does not bring xarray (the README's Dask example needs it)"
module="$(echo "$wheel_dir"/ewise/_ewise*.so)"
[ -f "$module" ] || fail "the wheel holds no ewise/_ewise*.so"
check_no_paths "$module"
if [ "$(uname -s)" = Linux ]; then
    newest="$(check_glibc "$module")"
    ok "the wheel's extension module requires GLIBC_$newest at most; licences and notices in .dist-info/licenses/"
fi
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
# Unoptimized (maturin's --profile dev), in the workspace's target directory: its
# dependencies are the ones the debug builds of the Rust crate below, of doc-test.sh and of
# package-check.sh compile (the sdist's own crates build again, from its sources). What
# this checks is that the sdist builds and runs; the optimized build is the wheel's.
MATURIN_PEP517_ARGS="--profile dev" CARGO_TARGET_DIR="$target_dir" \
    "$sdist_venv/bin/pip" wheel --quiet --disable-pip-version-check \
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
if [ "$(uname -s)" = Linux ]; then
    # Statically, as INSTALL.md says: libewise.a by name, then the system libraries of
    # `pkg-config --static --libs` (Libs.private); the program needs no libewise.so.
    pc="PKG_CONFIG_PATH=$prefix/lib/pkgconfig"
    # shellcheck disable=SC2046
    cc -std=c99 -Wall -Werror examples/c/sign.c $(env "$pc" pkg-config --cflags ewise) -L"$prefix/lib" -l:libewise.a \
        $(env "$pc" pkg-config --static --libs-only-l ewise | sed 's/-lewise //') -o "$work/c/sign-static" ||
        fail "examples/c/sign.c does not link statically against the C tarball's libewise.a"
    ! readelf -d "$work/c/sign-static" | grep -q 'NEEDED.*libewise' || fail "the static build of sign.c still needs libewise.so"
    mv "$prefix/lib" "$prefix/lib.away"
    "$work/c/sign-static" >"$work/c/sign-static.txt" || fail "the static build of sign.c fails: $(cat "$work/c/sign-static.txt")"
    mv "$prefix/lib.away" "$prefix/lib"
    cmp -s "$work/c/sign.txt" "$work/c/sign-static.txt" || fail "the static and shared builds of sign.c print different things"
fi
ok "ewise-c-$version-$triple.tar.gz: ewise.h and ewise.pc at $version; examples/c/sign.c builds and runs, linked with libewise.so and with libewise.a alone"
# --- every Linux binary artefact: contents, glibc floor, the builder's paths --------------
if [ "$(uname -s)" = Linux ]; then
    scripts/c-test.sh --tools-only >/dev/null
    for t in "$triple" "$aarch64"; do
        for kind in cli c; do
            name="ewise-$kind-$version-$t"
            [ -f "$dist/$name.tar.gz" ] || fail "no $name.tar.gz"
            dir="$work/linux/$name"
            mkdir -p "$work/linux"
            tar -xzf "$dist/$name.tar.gz" -C "$work/linux"
            if [ "$kind" = cli ]; then
                check_licences "$dir" ewise-cli "$t" "$name.tar.gz"
                check_cli_companions "$dir" "$name.tar.gz"
                elves="$dir/ewise"
            else
                check_licences "$dir/share/doc/ewise" ewise-c "$t" "$name.tar.gz"
                [ -f "$dir/share/doc/ewise/examples/sign.c" ] || fail "$name.tar.gz has no share/doc/ewise/examples/sign.c"
                elves="$dir/lib/libewise.so.$version"
                soname="$(readelf -d "$elves" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
                [ "$soname" = "libewise.so.${version%%.*}" ] || fail "$name.tar.gz's libewise.so has SONAME '$soname'"
            fi
            python3 scripts/lib/markdown-links.py check "$dir" || fail "$name.tar.gz's Markdown files"
            newest="$(check_glibc "$elves")"
            check_no_paths "$elves"
            [ "$kind" = cli ] || check_no_paths "$dir/lib/libewise.a"
            ok "$name.tar.gz: needs GLIBC_$newest at most; licences, notices, links$([ "$kind" = c ] || echo ", completions, man page"); no builder's paths"
        done
    done

    # --- aarch64 under qemu-user -----------------------------------------------------------
    qemu_sysroot=/usr/aarch64-linux-gnu
    packages="qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
    if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null || [ ! -d "$qemu_sysroot/lib" ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "dist-check: installing $packages (apt-get)" >&2
            # shellcheck disable=SC2086
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages; } >&2 ||
                fail "apt-get could not install $packages"
        else
            fail "the aarch64 artefacts need qemu-aarch64 and aarch64-linux-gnu-gcc (Debian: apt-get install $packages)"
        fi
    fi
    qemu=(qemu-aarch64 -L "$qemu_sysroot")
    a_cli="$work/linux/ewise-cli-$version-$aarch64/ewise"
    [ "$("${qemu[@]}" "$a_cli" --version)" = "ewise $version" ] || fail "the aarch64 ewise --version says '$("${qemu[@]}" "$a_cli" --version)'"
    (cd "$work" && "${qemu[@]}" "$a_cli" sign x.npy y-aarch64.npy) || fail "the aarch64 CLI's sign run failed"
    cmp -s "$work/y.npy" "$work/y-aarch64.npy" || fail "the aarch64 and x86-64 CLIs' sign outputs differ"
    a_prefix="$work/linux/ewise-c-$version-$aarch64"
    a_pc="PKG_CONFIG_PATH=$a_prefix/lib/pkgconfig"
    # shellcheck disable=SC2046
    aarch64-linux-gnu-gcc -std=c99 -Wall -Werror examples/c/sign.c $(env "$a_pc" pkg-config --cflags --libs ewise) \
        -Wl,-rpath,"$a_prefix/lib" -o "$work/linux/sign-aarch64" || fail "examples/c/sign.c does not build for aarch64 against its tarball"
    "${qemu[@]}" "$work/linux/sign-aarch64" >"$work/linux/sign-aarch64.txt" ||
        fail "examples/c/sign.c for aarch64 fails under qemu: $(cat "$work/linux/sign-aarch64.txt")"
    # shellcheck disable=SC2046
    aarch64-linux-gnu-gcc -std=c99 -Wall -Werror examples/c/sign.c $(env "$a_pc" pkg-config --cflags ewise) -L"$a_prefix/lib" \
        -l:libewise.a $(env "$a_pc" pkg-config --static --libs-only-l ewise | sed 's/-lewise //') -o "$work/linux/sign-aarch64-static" ||
        fail "examples/c/sign.c does not link statically for aarch64 against its tarball's libewise.a"
    "${qemu[@]}" "$work/linux/sign-aarch64-static" >"$work/linux/sign-aarch64-static.txt" ||
        fail "the static aarch64 build of sign.c fails under qemu: $(cat "$work/linux/sign-aarch64-static.txt")"
    cmp -s "$work/c/sign.txt" "$work/linux/sign-aarch64.txt" && cmp -s "$work/c/sign.txt" "$work/linux/sign-aarch64-static.txt" ||
        fail "sign.c prints different things on aarch64 and x86-64"
    ok "aarch64 under qemu-user: ewise --version = $version, sign gives the x86-64 CLI's bytes; sign.c builds (shared and static) and runs"

    # --- Windows under wine ----------------------------------------------------------------
    scripts/wine.sh --prepare || fail "scripts/wine.sh --prepare failed: wine and mingw-w64 are needed for the Windows zips"
    win="$work/windows"
    mkdir -p "$win"
    for kind in cli c; do
        name="ewise-$kind-$version-$windows"
        [ -f "$dist/$name.zip" ] || fail "no $name.zip"
        python3 - "$dist/$name.zip" "$win" <<'EOF' || fail "$name.zip"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = [i.filename for i in z.infolist()]
assert names == sorted(names), "entries not sorted"
dates = {i.date_time for i in z.infolist()}
assert len(dates) == 1, f"entries with {len(dates)} different dates"
z.extractall(sys.argv[2])
EOF
        dir="$win/$name"
        python3 scripts/lib/markdown-links.py check "$dir" || fail "$name.zip's Markdown files"
        if [ "$kind" = cli ]; then
            check_licences "$dir" ewise-cli "$windows" "$name.zip"
            check_cli_companions "$dir" "$name.zip"
            bins="$dir/ewise.exe"
        else
            check_licences "$dir" ewise-c "$windows" "$name.zip"
            for f in bin/ewise.dll lib/libewise.dll.a lib/ewise.lib lib/ewise.def include/ewise.h examples/sign.c; do
                [ -s "$dir/$f" ] || fail "$name.zip has no $f"
            done
            bins="$dir/bin/ewise.dll"
        fi
        check_no_paths "$bins"
        dlls="$(x86_64-w64-mingw32-objdump -p "$bins" | sed -n 's/^\tDLL Name: //p' | tr 'A-Z' 'a-z' | sort -u)"
        foreign="$(echo "$dlls" | grep -Evx 'kernel32\.dll|ntdll\.dll|msvcrt\.dll|advapi32\.dll|bcrypt\.dll|bcryptprimitives\.dll|ws2_32\.dll|userenv\.dll|user32\.dll|gdi32\.dll|ole32\.dll|oleaut32\.dll|shell32\.dll|d3d12\.dll|dxgi\.dll|d3dcompiler_47\.dll|opengl32\.dll|api-ms-win-.*\.dll|synchronization\.dll|shlwapi\.dll|propsys\.dll|secur32\.dll|crypt32\.dll|dwmapi\.dll|winmm\.dll|version\.dll|setupapi\.dll|imm32\.dll|comctl32\.dll|combase\.dll|rpcrt4\.dll|cfgmgr32\.dll|powrprof\.dll|dbghelp\.dll|winhttp\.dll' || true)"
        [ -z "$foreign" ] || fail "$(basename "$bins") imports DLLs that are not Windows' own: $(echo $foreign)"
    done
    w_cli="$win/ewise-cli-$version-$windows"
    w_c="$win/ewise-c-$version-$windows"
    # ewise.lib: one short import object (Microsoft's IMPORT_OBJECT_HEADER, signatures 0
    # and 0xFFFF, what lib.exe writes) per export of ewise.def, naming ewise.dll.
    python3 - "$w_c/lib/ewise.lib" "$w_c/lib/ewise.def" <<'EOF' || fail "ewise.lib is not an MSVC-style import library of ewise.dll's exports"
import struct, sys
data = open(sys.argv[1], "rb").read()
exports = {l.split()[0] for l in open(sys.argv[2]).read().split("EXPORTS", 1)[1].splitlines() if l.strip()}
assert data[:8] == b"!<arch>\n", "not an archive"
off, names = 8, set()
while off < len(data):
    size = int(data[off + 48:off + 58])
    body = data[off + 60:off + 60 + size]
    if body[:4] == b"\x00\x00\xff\xff":
        strings = body[20:].split(b"\0")
        assert strings[1] == b"ewise.dll", f"an import names {strings[1]!r}"
        names.add(strings[0].decode())
    off += 60 + size + (size & 1)
assert names == exports, f"short imports {sorted(names ^ exports)} differ from ewise.def"
EOF
    x86_64-w64-mingw32-gcc -std=c99 -Wall -Werror -I"$w_c/include" examples/c/sign.c -L"$w_c/lib" -lewise \
        -o "$win/sign-mingw.exe" || fail "examples/c/sign.c does not build with mingw against libewise.dll.a"
    # ewise.lib alone (MSVC's import-library format, read here by GNU ld's ILF support),
    # in a folder of its own so that -lewise cannot pick libewise.dll.a.
    mkdir -p "$win/msvc-lib"
    cp "$w_c/lib/ewise.lib" "$win/msvc-lib/"
    x86_64-w64-mingw32-gcc -std=c99 -Wall -Werror -I"$w_c/include" examples/c/sign.c "$win/msvc-lib/ewise.lib" \
        -o "$win/sign-lib.exe" || fail "examples/c/sign.c does not link against the zip's ewise.lib"
    cp "$w_c/bin/ewise.dll" "$win/"
    cp "$work/x.npy" "$win/"
    scripts/wine.sh --persist
    rc=0
    (cd "$win" && "$root/scripts/wine.sh" "$w_cli/ewise.exe" --version >version.txt 2>&1) || rc=1
    (cd "$win" && "$root/scripts/wine.sh" "$w_cli/ewise.exe" sign x.npy y.npy >sign-cli.txt 2>&1) || rc=2
    (cd "$win" && "$root/scripts/wine.sh" ./sign-mingw.exe >sign-mingw.txt 2>&1) || rc=3
    (cd "$win" && "$root/scripts/wine.sh" ./sign-lib.exe >sign-lib.txt 2>&1) || rc=4
    scripts/wine.sh --kill
    case "$rc" in
        1) fail "ewise.exe --version under wine: $(cat "$win/version.txt")" ;;
        2) fail "ewise.exe sign under wine: $(cat "$win/sign-cli.txt")" ;;
        3) fail "sign.c (mingw, libewise.dll.a) under wine: $(cat "$win/sign-mingw.txt")" ;;
        4) fail "sign.c (ewise.lib) under wine: $(cat "$win/sign-lib.txt")" ;;
    esac
    [ "$(tr -d '\r' <"$win/version.txt")" = "ewise $version" ] || fail "ewise.exe --version says '$(cat "$win/version.txt")'"
    cmp -s "$work/y.npy" "$win/y.npy" || fail "ewise.exe and the Linux CLI's sign outputs differ"
    for f in sign-mingw sign-lib; do
        tr -d '\r' <"$win/$f.txt" | cmp -s "$work/c/sign.txt" - || fail "$f.exe prints otherwise than sign.c on Linux: $(cat "$win/$f.txt")"
    done
    ok "Windows zips under wine: ewise.exe gives the Linux CLI's version and bytes; sign.c builds with mingw against libewise.dll.a and against ewise.lib, and runs"
fi

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
    CARGO_TARGET_DIR="$target_dir" cargo run --quiet --offline >"$work/rust-app.txt") ||
    fail "a new crate with 'cargo add ewise --path crates/ewise' does not build and run offline"
ok "cargo add ewise --path crates/ewise: a new crate builds offline and runs ($(cat "$work/rust-app.txt"))"
echo "dist-check: all passed for ewise $version" >&2
