#!/usr/bin/env bash
# Runs a Windows program under wine, in ewise's own wine prefix, e.g.
#   scripts/wine.sh target/x86_64-pc-windows-gnu/release/ewise.exe run model.onnx ...
# and as cargo's runner for the Windows target (an absolute path, since cargo runs test
# binaries from each package's folder):
#   CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$PWD/scripts/wine.sh" \
#       cargo test --target x86_64-pc-windows-gnu -p ewise-core
#
# The first use prepares the prefix (about 10 s; later uses only check a stamp):
#   - installs wine (64-bit) and gcc-mingw-w64-x86-64 with apt-get when missing and
#     running as root; otherwise says what to install and exits 3;
#   - creates the prefix headless (`wineboot --init`, Mono, Gecko and the menu builder
#     disabled, so no dialog and nothing written outside the prefix);
#   - where wine has no bcryptprimitives.dll (before 8.13), builds the stand-in
#     scripts/wine/bcryptprimitives.c with mingw and puts it in the prefix's system32:
#     Rust's standard library (1.78 and later) imports its ProcessPrng, and without it
#     every Rust program exits with status 53 before main (rust-lang/rust#121337).
# The prefix is rebuilt when the DLL's source or the wine binary is newer than it, or when
# this script's prefix_version changes. Concurrent first uses (cargo runs doc-tests in
# parallel) wait on a lock.
#
# wine starts helper programs on demand (services.exe, rpcss.exe, ...) that inherit the
# standard output and error of the program that needed them, and live until 3 s after the
# prefix's last program ends, or, after --persist, until --kill: so do not read a wine
# program's output through a pipe to its end of file (`| grep`, `| tee`, `$(...)`) while
# a persistent server runs (scripts/windows-test.sh writes to a file descriptor that it
# closes, then --kill, then waits for tee).
#
# Usage: scripts/wine.sh COMMAND [ARGS...]   runs COMMAND (a .exe path) under wine; its
#                                            exit status is COMMAND's
#        scripts/wine.sh --prepare           only makes sure the tools and prefix are there
#        scripts/wine.sh --persist           starts the prefix's wineserver to stay until
#                                            --kill (each program then starts in about
#                                            0.1 s instead of 0.7 s)
#        scripts/wine.sh --kill              stops the prefix's wineserver (and its
#                                            programs) now, instead of 3 s after the last
#
# Environment:
#   EWISE_WINEPREFIX   the prefix (default: $CARGO_TARGET_DIR or target/, + /wine-prefix)
#   WINEDEBUG          default -all (wine's own messages off)
#   WINEDLLOVERRIDES   added after this script's (mscoree, mshtml, winemenubuilder off)
#   WINE               the wine loader to use (default: wine64, /usr/lib/wine/wine64, wine)
# Exit status 3: wine or mingw missing and not installable here (the message says which).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
prefix="${EWISE_WINEPREFIX:-$target/wine-prefix}"
dll_src=("$here/wine/bcryptprimitives.c" "$here/wine/bcryptprimitives.def")
mingw=x86_64-w64-mingw32-gcc

say() { echo "wine.sh: $*" >&2; }

case "${1:-}" in
    "")
        say "usage: scripts/wine.sh COMMAND [ARGS...] | --prepare | --persist | --kill"
        exit 2
        ;;
esac

find_wine() {
    if [ -n "${WINE:-}" ]; then
        command -v "$WINE" || true
        return
    fi
    # Debian's /usr/bin/wine is a wrapper that prefers a 32-bit wine and, without one,
    # complains about wine32 on every start: the 64-bit loader directly.
    command -v wine64 || { [ -x /usr/lib/wine/wine64 ] && echo /usr/lib/wine/wine64; } ||
        command -v wine || true
}
find_wineserver() {
    local dir
    dir="$(dirname "$(readlink -f "$wine")")"
    for s in "$dir/wineserver64" "$dir/wineserver" "$(command -v wineserver64 || true)" \
        "$(command -v wineserver || true)"; do
        if [ -n "$s" ] && [ -x "$s" ]; then
            echo "$s"
            return
        fi
    done
}

wine="$(find_wine)"
if [ -z "$wine" ] || ! command -v "$mingw" >/dev/null; then
    missing=()
    [ -n "$wine" ] || missing+=(wine)
    command -v "$mingw" >/dev/null || missing+=("$mingw")
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing wine wine64 gcc-mingw-w64-x86-64 (apt-get; missing: ${missing[*]})"
        export DEBIAN_FRONTEND=noninteractive
        { apt-get update -qq && apt-get install -y -qq wine wine64 gcc-mingw-w64-x86-64; } \
            >&2 || say "apt-get could not install them"
        wine="$(find_wine)"
    fi
    if [ -z "$wine" ] || ! command -v "$mingw" >/dev/null; then
        say "missing ${missing[*]} (Debian, as root: apt-get install -y wine wine64 gcc-mingw-w64-x86-64)"
        exit 3
    fi
fi
wineserver="$(find_wineserver)"

export WINEPREFIX="$prefix"
export WINELOADER="${WINELOADER:-$wine}"
[ -n "$wineserver" ] && export WINESERVER="${WINESERVER:-$wineserver}"
export WINEDEBUG="${WINEDEBUG:--all}"
# Empty (=) disables: no "install Mono / Gecko?" dialog, no .desktop files in $HOME.
export WINEDLLOVERRIDES="mscoree,mshtml,winemenubuilder.exe=${WINEDLLOVERRIDES:+;$WINEDLLOVERRIDES}"

# Raise when prepare() changes, so that existing prefixes are made again.
prefix_version=1
stamp="$prefix/.ewise-ready"
ready() {
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$prefix_version $wine" ] || return 1
    local f
    for f in "${dll_src[@]}" "$(readlink -f "$wine")"; do
        [ "$f" -nt "$stamp" ] && return 1
    done
    return 0
}

prepare() {
    local start=$SECONDS system32="$prefix/drive_c/windows/system32"
    say "preparing the wine prefix $prefix ($("$wine" --version 2>/dev/null || echo wine))"
    [ -n "$wineserver" ] && "$wineserver" -k >/dev/null 2>&1 || true
    rm -rf "$prefix"
    mkdir -p "$prefix"
    # Headless: no display, so nothing can open a window.
    if ! env -u DISPLAY -u WAYLAND_DISPLAY "$wine" wineboot --init >/dev/null 2>&1; then
        say "wineboot --init failed in $prefix"
        exit 1
    fi
    [ -n "$wineserver" ] && "$wineserver" -w || true
    if [ ! -d "$system32" ]; then
        say "wineboot made no $system32"
        exit 1
    fi
    # wineboot puts a placeholder in system32 for each DLL wine has built in: one for
    # bcryptprimitives means this wine has its own (8.13 and later).
    if [ -e "$system32/bcryptprimitives.dll" ]; then
        say "wine has its own bcryptprimitives.dll: no stand-in"
    else
        local out="$target/wine"
        mkdir -p "$out"
        "$mingw" -Wall -Wextra -Werror -shared -O2 -s -nostdlib -Wl,--entry,DllMain \
            -o "$out/bcryptprimitives.dll" "${dll_src[@]}" -lkernel32 -ladvapi32
        cp "$out/bcryptprimitives.dll" "$system32/bcryptprimitives.dll"
    fi
    echo "$prefix_version $wine" >"$stamp"
    say "prefix ready in $((SECONDS - start)) s"
}

if ! ready; then
    mkdir -p "$(dirname "$prefix")"
    exec 9>"$prefix.lock"
    if command -v flock >/dev/null; then
        flock 9
    fi
    ready || prepare
    exec 9>&-
fi

case "$1" in
    --prepare) exit 0 ;;
    --persist)
        [ -n "$wineserver" ] || { say "no wineserver found next to $wine"; exit 1; }
        # It daemonizes; its output (none with WINEDEBUG=-all) must not hold a pipe open.
        "$wineserver" -p </dev/null >/dev/null 2>&1
        exit 0
        ;;
    --kill)
        [ -n "$wineserver" ] && "$wineserver" -k >/dev/null 2>&1 || true
        exit 0
        ;;
    --*)
        say "unknown option $1 (usage: scripts/wine.sh COMMAND [ARGS...] | --prepare | --persist | --kill)"
        exit 2
        ;;
esac
exec "$wine" "$@"
