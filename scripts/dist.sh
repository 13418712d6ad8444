#!/usr/bin/env bash
# Every artefact of a release of ewise, built from this checkout into target/dist/:
#
#   ewise-VERSION.crate, ewise-core-VERSION.crate, ...   the crates as `cargo publish`
#                                  uploads them (scripts/package-check.sh builds each one
#                                  on its own; this script packages without verifying)
#   ewise-VERSION-cp310-abi3-manylinux_2_28_x86_64.whl  the Python package for CPython >=
#                                  3.10 on glibc >= 2.28 (maturin with zig; checked with
#                                  auditwheel), with the licences and THIRD-PARTY-NOTICES.txt
#                                  in its .dist-info/licenses/; on macOS a wheel for this machine
#   ewise-VERSION.tar.gz           the Python sdist (builds with maturin and cargo)
#   ewise-c-VERSION-TRIPLE.tar.gz  the C library for x86_64- and aarch64-unknown-linux-gnu:
#                                  include/ewise.h, lib/libewise.so*, lib/libewise.a,
#                                  lib/pkgconfig/ewise.pc (relocatable), share/doc/ewise/
#                                  (README.md, licences, notices, C-API.md, examples/sign.c)
#   ewise-cli-VERSION-TRIPLE.tar.gz   the `ewise` binary for those targets, README.md,
#                                  licences, notices, completions/ and man/man1/ewise.1
#   ewise-cli-VERSION-x86_64-pc-windows-gnu.zip   ewise.exe and the same companions
#   ewise-c-VERSION-x86_64-pc-windows-gnu.zip     bin/ewise.dll, lib/libewise.dll.a (MinGW),
#                                  lib/ewise.lib (MSVC's linker), lib/ewise.def,
#                                  include/ewise.h, examples/sign.c, C-API.md, README.md,
#                                  licences, notices
#   SHA256SUMS                     `sha256sum -c SHA256SUMS` checks them all
#
# Every Linux binary (the CLI, libewise.so, the wheel's module) is linked by zig against
# glibc 2.28's symbol versions (cargo-zigbuild's TRIPLE.2.28 targets, built in
# target/zig/; maturin --zig), so it starts on glibc 2.28 and later; the Windows ones are
# linked by mingw-w64 (target/x86_64-pc-windows-gnu/release/). The
# builder's paths ($CARGO_HOME, the toolchain's sysroot, this checkout) are remapped out of
# every binary (--remap-path-prefix). THIRD-PARTY-NOTICES.txt in each binary artefact lists
# the crates linked into it for its target, with their licence texts
# (scripts/lib/third-party-notices.py, which fails when a text cannot be found).
# On macOS only the crates, the wheel, the sdist and this machine's CLI and C tarballs.
#
# The directory is replaced whole at the end, so it never holds a mix of two runs.
# Tarballs and zips are reproducible: entries sorted, owner 0, mtimes of the last commit.
# Needs cargo and rustup (targets aarch64-unknown-linux-gnu and x86_64-pc-windows-gnu are
# added when missing), python3 with venv and pip (PyPI: scripts/dist-requirements.txt, with
# maturin, ziglang and cargo-zigbuild, installed into target/dist-venv), mingw-w64's gcc
# and binutils (installed with wine by scripts/wine.sh --prepare as root), tar and gzip.
# The completions and man page come from `ewise completions SHELL` and `ewise man`.
# scripts/dist-check.sh checks the result.
#
# Usage: scripts/dist.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/ewise-pc.sh
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
glibc_floor=2.28
windows=x86_64-pc-windows-gnu
zig_dir="$target_dir/zig"

# The builder's paths out of every binary built from here on (panic locations and the
# like name /cargo/registry/src/..., /rustc-sysroot/..., /ewise/crates/...): the same
# flags for the wheel and the binaries, so that their common dependencies build once per
# target. Build scripts and proc-macros (run here, not shipped) do not get them.
cargo_home="$(cd "${CARGO_HOME:-$HOME/.cargo}" && pwd -P)"
sysroot="$(rustc --print sysroot)"
remap=""
for pair in "$cargo_home=/cargo" "$sysroot=/rustc-sysroot" "$(pwd -P)=/ewise"; do
    remap="$remap${remap:+$'\x1f'}--remap-path-prefix=$pair"
done
[ "$(pwd -P)" = "$root" ] || remap="$remap"$'\x1f'"--remap-path-prefix=$root=/ewise"
export CARGO_ENCODED_RUSTFLAGS="$remap"
unset RUSTFLAGS
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
for wheel in "$stage"/*.whl; do
    python3 scripts/lib/third-party-notices.py write ewise-python "$triple" \
        "the ewise Python package $version" "$stage/.notices.txt"
    python3 scripts/lib/wheel-add-license.py "$wheel" "$stage/.notices.txt" THIRD-PARTY-NOTICES.txt
    rm "$stage/.notices.txt"
done

# The binary artefacts. On Linux: the CLI and the C library for x86-64 and aarch64 Linux,
# linked by zig against glibc 2.28's symbol versions (cargo-zigbuild), and for Windows
# x86-64 with mingw-w64; each target's CLI and library in one cargo invocation, so that
# their dependencies compile once.
if [ "$(uname -s)" = Linux ]; then
    linux_targets="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu"
    targets="$linux_targets $windows"
    for t in $targets; do
        rustup target list --installed 2>/dev/null | grep -qx "$t" || rustup target add "$t" >&2 ||
            fail "rustup could not add the target $t"
    done
    command -v x86_64-w64-mingw32-gcc >/dev/null || scripts/wine.sh --prepare ||
        fail "x86_64-w64-mingw32-gcc (Debian: gcc-mingw-w64-x86-64) is needed for the Windows zips"
    zig_targets=""
    for t in $linux_targets; do zig_targets="$zig_targets --target $t.$glibc_floor"; done
    # A target directory of its own: cargo fingerprints the linker, and maturin's zig
    # wrapper is another than cargo-zigbuild's, so in target/ each would rebuild the
    # other's x86-64 crates on every run.
    # shellcheck disable=SC2086
    CARGO_TARGET_DIR="$zig_dir" "$venv/bin/cargo-zigbuild" zigbuild --release --locked --quiet \
        -p ewise-cli -p ewise-c $zig_targets
    cargo build --release --locked --quiet -p ewise-cli -p ewise-c --target "$windows"
    host_cli="$zig_dir/$triple/release/ewise"
else
    targets="$triple"
    cargo build --release --locked --quiet -p ewise-cli -p ewise-c
    host_cli="$target_dir/release/ewise"
fi
bin_dir() {
    case "$(uname -s):$1" in
        Linux:*-linux-*) echo "$zig_dir/$1/release" ;;
        Linux:*) echo "$target_dir/$1/release" ;;
        *) echo "$target_dir/release" ;;
    esac
}

# Completions and the man page, printed by the CLI built for this machine.
extras="$stage/.extras"
mkdir -p "$extras/completions" "$extras/man/man1"
for pair in bash:ewise.bash zsh:_ewise fish:ewise.fish powershell:_ewise.ps1; do
    shell="${pair%%:*}"
    "$host_cli" completions "$shell" >"$extras/completions/${pair#*:}" ||
        fail "'ewise completions $shell' failed: the CLI needs its completions subcommand (clap_complete)"
    [ -s "$extras/completions/${pair#*:}" ] || fail "'ewise completions $shell' printed nothing"
done
"$host_cli" man >"$extras/man/man1/ewise.1" ||
    fail "'ewise man' failed: the CLI needs its man subcommand (clap_mangen)"
head -c 200 "$extras/man/man1/ewise.1" | grep -q '^\.TH' || fail "'ewise man' did not print a roff page (.TH ...)"

# What every binary artefact holds besides its binaries: the licences, the notices of the
# crates linked in for that target, and a README written for it.
common_files() {
    local dir="$1" package="$2" t="$3" title="$4" readme="$5"
    cp LICENSE-MIT LICENSE-APACHE "$dir/"
    python3 scripts/lib/third-party-notices.py write "$package" "$t" "$title" "$dir/THIRD-PARTY-NOTICES.txt"
    sed -e "s/@VERSION@/$version/g" -e "s/@TARGET@/$t/g" "scripts/lib/$readme" >"$dir/README.md"
}

for t in $targets; do
    from="$(bin_dir "$t")"
    case "$t" in
        *-windows-*)
            # The CLI zip.
            d="$stage/.zip/ewise-cli-$version-$t"
            mkdir -p "$d"
            cp "$from/ewise.exe" "$d/"
            cp -r "$extras/completions" "$extras/man" "$d/"
            common_files "$d" ewise-cli "$t" "the ewise command-line tool $version for $t" dist-readme-cli.md
            python3 scripts/lib/reproducible-zip.py "$d" "$stage/ewise-cli-$version-$t.zip"
            # The C library zip: the DLL under its own name, import libraries for it.
            d="$stage/.zip/ewise-c-$version-$t"
            mkdir -p "$d/bin" "$d/lib" "$d/include" "$d/examples"
            cp "$from/ewise_c.dll" "$d/bin/ewise.dll"
            x86_64-w64-mingw32-objdump -p "$d/bin/ewise.dll" | python3 scripts/lib/dll-def.py ewise.dll >"$d/lib/ewise.def" ||
                fail "could not list the exports of ewise_c.dll"
            x86_64-w64-mingw32-dlltool -m i386:x86-64 -d "$d/lib/ewise.def" -D ewise.dll -l "$d/lib/libewise.dll.a"
            # An import library in the short-import format of Microsoft's lib.exe, made by
            # LLVM's dlltool (inside zig), which MSVC's link.exe and lld-link read.
            (cd "$d/lib" && "$venv/bin/python-zig" dlltool -m i386:x86-64 -d ewise.def -D ewise.dll -l ewise.lib) ||
                fail "zig dlltool could not write ewise.lib"
            cp crates/ewise-c/include/ewise.h "$d/include/"
            cp examples/c/sign.c "$d/examples/"
            python3 scripts/lib/markdown-links.py ship docs/C-API.md "$d/C-API.md" "$d" \
                crates/ewise-c/include/ewise.h=include/ewise.h examples/c/sign.c=examples/sign.c
            common_files "$d" ewise-c "$t" "the ewise C library $version for $t" dist-readme-c-windows.md
            python3 scripts/lib/reproducible-zip.py "$d" "$stage/ewise-c-$version-$t.zip"
            ;;
        *)
            # The C library, laid out as scripts/c-install.sh --relocatable installs it.
            d="$stage/.c/ewise-c-$version-$t"
            mkdir -p "$d/include" "$d/lib/pkgconfig" "$d/share/doc/ewise/examples"
            cp crates/ewise-c/include/ewise.h "$d/include/"
            install -m 644 "$from/libewise_c.a" "$d/lib/libewise.a"
            case "$t" in
                *-linux-*)
                    major="${version%%.*}"
                    install -m 755 "$from/libewise_c.so" "$d/lib/libewise.so.$version"
                    ln -s "libewise.so.$version" "$d/lib/libewise.so.$major"
                    ln -s "libewise.so.$major" "$d/lib/libewise.so"
                    # What rustc prints as native-static-libs for the staticlib on Linux.
                    libs_private="-ldl -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
                    ;;
                *-darwin)
                    major="${version%%.*}"
                    install -m 755 "$from/libewise_c.dylib" "$d/lib/libewise.$version.dylib"
                    install_name_tool -id "@rpath/libewise.$major.dylib" "$d/lib/libewise.$version.dylib"
                    ln -s "libewise.$version.dylib" "$d/lib/libewise.$major.dylib"
                    ln -s "libewise.$major.dylib" "$d/lib/libewise.dylib"
                    libs_private="-liconv -lSystem -lc -lm"
                    ;;
            esac
            write_ewise_pc "$d/lib/pkgconfig/ewise.pc" '${pcfiledir}/../..' "$version" "$libs_private"
            python3 scripts/lib/markdown-links.py ship docs/C-API.md "$d/share/doc/ewise/C-API.md" "$d" \
                crates/ewise-c/include/ewise.h=include/ewise.h examples/c/sign.c=share/doc/ewise/examples/sign.c
            cp examples/c/sign.c "$d/share/doc/ewise/examples/"
            common_files "$d/share/doc/ewise" ewise-c "$t" "the ewise C library $version for $t" dist-readme-c.md
            tarball "$d" "$stage/ewise-c-$version-$t.tar.gz"
            # The command-line tool.
            d="$stage/.cli/ewise-cli-$version-$t"
            mkdir -p "$d"
            install -m 755 "$from/ewise" "$d/ewise"
            cp -r "$extras/completions" "$extras/man" "$d/"
            common_files "$d" ewise-cli "$t" "the ewise command-line tool $version for $t" dist-readme-cli.md
            tarball "$d" "$stage/ewise-cli-$version-$t.tar.gz"
            ;;
    esac
done
rm -rf "$stage/.c" "$stage/.cli" "$stage/.zip" "$extras"

(cd "$stage" && sha256sum -- * >SHA256SUMS)
rm -rf "$out"
mv "$stage" "$out"
(cd "$out" && ls -l --time-style=+ -- * | awk '{ printf "dist: %10d  %s\n", $5, $NF }') >&2
