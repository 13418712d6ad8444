#!/usr/bin/env bash
# Builds ewise's C library (crates/ewise-c) and installs it under PREFIX in the layout of
# Rust C libraries, as cargo-c's `cargo cinstall --prefix PREFIX` would:
#
#   PREFIX/include/ewise.h
#   PREFIX/lib/libewise.so.0.1.0, libewise.so.0 -> it, libewise.so -> libewise.so.0 (Linux;
#       SONAME libewise.so.0)
#   PREFIX/lib/libewise.0.1.0.dylib, libewise.0.dylib, libewise.dylib (macOS; install name
#       PREFIX/lib/libewise.0.dylib)
#   PREFIX/lib/libewise.a
#   PREFIX/lib/pkgconfig/ewise.pc
#
# so that a program builds with `cc prog.c $(pkg-config --cflags --libs ewise)` (with
# PKG_CONFIG_PATH=PREFIX/lib/pkgconfig when PREFIX is not a system prefix), or links the
# static library with `pkg-config --static --libs ewise` against a --static-only prefix.
#
# Usage: scripts/c-install.sh [--profile dev|release|test] [--static-only] [--no-build] [--relocatable] PREFIX
#   --profile P     cargo profile to build with (default release); dev and test build
#                   into target/debug, release into target/release
#   --static-only   install the header, libewise.a and ewise.pc, no shared library (so
#                   that -lewise links statically)
#   --no-build      install what the last build of that profile left in the target
#                   directory (`cargo build`'s or `cargo test`'s), without running cargo
#                   build (scripts/c-test.sh builds with `cargo test --workspace --no-run`
#                   instead, the build `cargo test --workspace` makes)
#   --relocatable   ewise.pc finds its prefix from where it lies (prefix=${pcfiledir}/../..,
#                   which pkg-config and pkgconf both expand), so the tree can be moved or
#                   unpacked anywhere (on macOS the install name is then
#                   @rpath/libewise.0.dylib): scripts/dist.sh makes its C tarball this way
#
# cargo-c users may run `cargo cinstall -p ewise-c --prefix PREFIX` instead
# ([package.metadata.capi] in crates/ewise-c/Cargo.toml names the library ewise).
#
# The pkg-config file's Libs.private (the system libraries a static link needs) is what
# rustc prints for the staticlib (`cargo rustc -p ewise-c --lib -- --print
# native-static-libs`), computed once per profile, toolchain and Cargo.lock and kept
# next to the build; for the test profile (and if that fails) the fixed list that rustc
# prints for it on the OS.
# Windows: not handled here; build with `cargo build -p ewise-c --release` and use
# target/release/ewise_c.dll with its import library ewise_c.dll.lib (rename to ewise.lib
# for -lewise / ewise.lib), or ewise_c.lib (static), with include/ewise.h.
set -euo pipefail

usage() {
    sed -n 's/^# \{0,1\}//; /^Usage:/,/^$/p' "$0" | sed '/^$/q' >&2
    exit 2
}

profile=release
static_only=0
build=1
relocatable=0
prefix=
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) [ $# -ge 2 ] || usage; profile="$2"; shift 2 ;;
        --profile=*) profile="${1#--profile=}"; shift ;;
        --static-only) static_only=1; shift ;;
        --no-build) build=0; shift ;;
        --relocatable) relocatable=1; shift ;;
        -h | --help) usage ;;
        -*) echo "c-install: unknown option $1" >&2; usage ;;
        *) [ -z "$prefix" ] || usage; prefix="$1"; shift ;;
    esac
done
[ -n "$prefix" ] || usage
case "$profile" in
    dev | test) profile_dir=debug ;;
    release) profile_dir=release ;;
    *) echo "c-install: --profile must be dev, release or test (got $profile)" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
. scripts/lib/ewise-pc.sh
root="$(pwd)"
crate="$root/crates/ewise-c"
header="$crate/include/ewise.h"

version="$(sed -n 's/^#define EWISE_VERSION_STRING "\(.*\)"$/\1/p' "$header")"
[ -n "$version" ] || { echo "c-install: no EWISE_VERSION_STRING in $header" >&2; exit 1; }
major="${version%%.*}"

os="$(uname -s)"
case "$os" in
    Linux | Darwin) ;;
    *) echo "c-install: $os is not handled by this script (see its header for Windows, or use cargo cinstall)" >&2; exit 1 ;;
esac

if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    target_dir="$CARGO_TARGET_DIR"
else
    target_dir="$(cargo metadata --no-deps --format-version 1 |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
    [ -n "$target_dir" ] || target_dir="$root/target"
fi
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
out="$target_dir/$profile_dir"

if [ "$build" = 1 ]; then
    echo "c-install: cargo build -p ewise-c --profile $profile" >&2
    cargo build -p ewise-c --profile "$profile"
fi
# shellcheck source=scripts/lib/built.sh
source "$root/scripts/lib/built.sh"
for artifact in libewise_c.a $([ "$static_only" = 1 ] || case "$os" in
    Linux) echo libewise_c.so ;; Darwin) echo libewise_c.dylib ;; esac); do
    if [ ! -f "$(built "$out" "$artifact")" ]; then
        echo "c-install: $out/$artifact is missing (build ewise-c with the $profile profile first)" >&2
        exit 1
    fi
done

# What rustc prints for this staticlib on the OS (checked on Linux with rustc 1.95:
# Rust's standard library's list, with -ldl first for libloading, through which the GPU
# backend opens Vulkan).
fixed_native_static_libs() {
    case "$os" in
        Linux) echo "-ldl -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" ;;
        Darwin) echo "-liconv -lSystem -lc -lm" ;;
    esac
}

# Libs.private: rustc's native-static-libs for this staticlib, kept per profile, toolchain
# and dependency set (computing it rebuilds the crate once with other flags). Not for the
# test profile: `cargo rustc --profile test` builds the unit-test harness (rustc --test),
# which is no staticlib and prints nothing; the fixed list stands in.
native_static_libs() {
    if [ "$profile" = test ]; then
        fixed_native_static_libs
        return
    fi
    local cache="$out/ewise-c-native-static-libs.txt"
    local key
    key="$(
        {
            rustc -vV
            echo "$profile"
            cat "$root/Cargo.lock" "$crate/Cargo.toml" 2>/dev/null
        } | cksum | cut -d' ' -f1
    )"
    if [ -f "$cache" ] && [ "$(sed -n 1p "$cache")" = "$key" ]; then
        sed -n 2p "$cache"
        return
    fi
    local printed
    if printed="$(cargo rustc -p ewise-c --lib --profile "$profile" \
        -- --print native-static-libs 2>&1)"; then
        local libs
        libs="$(printf '%s\n' "$printed" | sed -n 's/.*native-static-libs: //p' | tail -n 1)"
        if [ -n "$libs" ]; then
            printf '%s\n%s\n' "$key" "$libs" >"$cache"
            echo "$libs"
            return
        fi
    fi
    echo "c-install: rustc did not print native-static-libs; using the fixed list for $os" >&2
    fixed_native_static_libs
}
libs_private="$(native_static_libs)"

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
includedir="$prefix/include"
libdir="$prefix/lib"
mkdir -p "$includedir" "$libdir/pkgconfig"

install -m 644 "$header" "$includedir/ewise.h"
echo "c-install: $includedir/ewise.h" >&2

install -m 644 "$(built "$out" libewise_c.a)" "$libdir/libewise.a"
echo "c-install: $libdir/libewise.a" >&2

# Whatever an earlier install left: a --static-only prefix has no shared library.
rm -f "$libdir/libewise.so" "$libdir/libewise.so.$major" "$libdir/libewise.so.$version" \
    "$libdir/libewise.dylib" "$libdir/libewise.$major.dylib" "$libdir/libewise.$version.dylib"
if [ "$static_only" = 0 ]; then
    case "$os" in
        Linux)
            install -m 755 "$(built "$out" libewise_c.so)" "$libdir/libewise.so.$version"
            ln -s "libewise.so.$version" "$libdir/libewise.so.$major"
            ln -s "libewise.so.$major" "$libdir/libewise.so"
            if command -v readelf >/dev/null; then
                soname="$(readelf -d "$libdir/libewise.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
                if [ "$soname" != "libewise.so.$major" ]; then
                    echo "c-install: warning: SONAME is '$soname', expected libewise.so.$major (crates/ewise-c/build.rs)" >&2
                fi
            fi
            echo "c-install: $libdir/libewise.so.$version (+ libewise.so.$major, libewise.so)" >&2
            ;;
        Darwin)
            install -m 755 "$(built "$out" libewise_c.dylib)" "$libdir/libewise.$version.dylib"
            install_name="$libdir/libewise.$major.dylib"
            [ "$relocatable" = 0 ] || install_name="@rpath/libewise.$major.dylib"
            install_name_tool -id "$install_name" "$libdir/libewise.$version.dylib"
            ln -s "libewise.$version.dylib" "$libdir/libewise.$major.dylib"
            ln -s "libewise.$major.dylib" "$libdir/libewise.dylib"
            echo "c-install: $libdir/libewise.$version.dylib (+ libewise.$major.dylib, libewise.dylib)" >&2
            ;;
    esac
fi

pc_prefix="$prefix"
if [ "$relocatable" = 1 ]; then
    pc_prefix='${pcfiledir}/../..'
fi
write_ewise_pc "$libdir/pkgconfig/ewise.pc" "$pc_prefix" "$version" "$libs_private"
echo "c-install: $libdir/pkgconfig/ewise.pc (Libs.private: $libs_private)" >&2
