#!/usr/bin/env bash
# The C ABI's tests as Windows programs, under wine: the Windows counterpart of
# scripts/c-test.sh. Cross-builds the C library for x86_64-pc-windows-gnu (`cargo test
# --no-run` with scripts/windows-env.sh's `windows_test_args`, the build of
# scripts/windows-test.sh, which leaves the DLL ewise_c.dll and its import library
# libewise_c.dll.a in target/x86_64-pc-windows-gnu/debug/deps/), then compiles with mingw-w64's cross compilers
# (the posix-thread ones, x86_64-w64-mingw32-gcc-posix / -g++-posix, whose winpthreads
# gives the tests <pthread.h> and C++ its std::thread)
#   - every C test crates/ewise-c/tests/c/*.c (C99),
#   - every C++ test crates/ewise-c/tests/cpp/*.cpp (C++17),
#   - examples/c/sign.c (C99),
# with c-test.sh's warnings (-Wall -Wextra -Werror -pedantic; no sanitizers: mingw has
# none), each against crates/ewise-c/include/ewise.h and the import library, and linked
# -static otherwise (libgcc, libstdc++ and winpthread inside the .exe), so that each
# program needs only Windows' own DLLs and ewise_c.dll, which is copied beside the
# programs in target/windows-c-tests/ (Windows looks for a program's DLLs in its folder
# first). A program that imports a mingw runtime DLL all the same fails its build.
#
# A C test that cannot be a Windows program says so in its leading comment with a line
#   * unix-only: REASON
# (fork.c: fork(2) and waitpid(2)); it is not compiled here, and its line says SKIP with
# the reason.
#
# Each program runs under scripts/wine.sh, in a wine prefix of this script's own
# (target/wine-prefix-c, made on first use: about 10 s and 0.7 GB), since its persistent
# wineserver, started at the beginning and stopped (with whatever still runs in it) at the
# end, would otherwise stop the programs of anyone else using target/wine-prefix
# (scripts/windows-test.sh, cargo with scripts/wine.sh as its runner) and fail to start
# while one of theirs runs. Each program gets its device as argv[1] and in EWISE_C_DEVICE,
# as in c-test.sh, and 900 s (the only watchdog where a test's own is SIGALRM, which
# Windows has not); it exits 0 on success and may print "SKIP: ..." and exit 0. Each runs
# on the CPU, then on the GPU (the host's lavapipe, with scripts/gpu-driver.sh's
# settings): wine reaches the host's Vulkan only through its X11 display driver
# (winex11.drv), so an X server is needed, a virtual one started here and stopped at the
# end (scripts/lib/xvfb.sh; the one scripts/windows-test.sh started when it runs this).
# Without Xvfb or lavapipe the GPU runs are SKIPPED with one line, or fail under CI=true.
#
# One line per program and device: PASS, FAIL or SKIP (logs in target/windows-c-tests/);
# the exit status is nonzero when any failed. Needs the rustup target (added here when
# missing), wine and the mingw-w64 C and C++ compilers (as root: wine and gcc-mingw-w64
# by scripts/wine.sh, g++-mingw-w64-x86-64-posix here, with apt-get). Without them it says
# what is missing and skips (exit 0), or fails under CI=true.
#
# Usage: scripts/windows-c-test.sh
# Environment: MINGW_CC, MINGW_CXX   the cross compilers (default
#                                    x86_64-w64-mingw32-gcc-posix, x86_64-w64-mingw32-g++-posix)
#              EWISE_C_CFLAGS        extra compiler flags, as for c-test.sh
#              EWISE_WINEPREFIX      the wine prefix (default: target/wine-prefix-c)
set -euo pipefail
case "${1:-}" in
    "") ;;
    *) echo "windows-c-test: unknown argument $1 (usage: scripts/windows-c-test.sh)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
root="$(pwd)"
work="${CARGO_TARGET_DIR:-$root/target}"
case "$work" in /*) ;; *) work="$root/$work" ;; esac
export EWISE_WINEPREFIX="${EWISE_WINEPREFIX:-$work/wine-prefix-c}"
cc="${MINGW_CC:-x86_64-w64-mingw32-gcc-posix}"
cxx="${MINGW_CXX:-x86_64-w64-mingw32-g++-posix}"
objdump=x86_64-w64-mingw32-objdump

who=windows-c-test
# shellcheck source=scripts/windows-env.sh
source scripts/windows-env.sh

missing_compilers() {
    local m=()
    command -v "$cc" >/dev/null || m+=("$cc")
    command -v "$cxx" >/dev/null || m+=("$cxx")
    echo "${m[*]:-}"
}
missing="$(missing_compilers)"
if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "windows-c-test: installing g++-mingw-w64-x86-64-posix (missing: $missing)" >&2
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq g++-mingw-w64-x86-64-posix; } >&2 ||
        echo "windows-c-test: apt-get could not install it" >&2
    missing="$(missing_compilers)"
fi
[ -z "$missing" ] ||
    skip "missing $missing (Debian, as root: apt-get install -y g++-mingw-w64-x86-64-posix)"

# --- build ------------------------------------------------------------------------------
lib_dir="$work/$target/debug" # the test profile builds into debug/
bin="$work/windows-c-tests"
mkdir -p "$bin"

echo "windows-c-test: cargo test --no-run ${windows_test_args[*]}" >&2
start=$SECONDS
cargo test --no-run "${windows_test_args[@]}"
echo "windows-c-test: cargo build took $((SECONDS - start)) s" >&2
# shellcheck source=scripts/lib/built.sh
source scripts/lib/built.sh
dll="$(built "$lib_dir" ewise_c.dll)"
import_lib="$(built "$lib_dir" libewise_c.dll.a)"
for f in "$dll" "$import_lib"; do
    if [ ! -f "$f" ]; then
        echo "windows-c-test: cargo build left no $f" >&2
        exit 1
    fi
done
rm -f "$bin"/*.exe "$bin"/*.log
ln -f "$dll" "$bin/" 2>/dev/null || cp -f "$dll" "$bin/"

warnings=(-Wall -Wextra -Werror -pedantic)
link=("$import_lib" -static -pthread)
read -r -a cflags_extra <<<"${EWISE_C_CFLAGS:-}"

# The DLLs a program imports that are neither Windows' own nor ewise's (a mingw runtime
# that -static did not take in), one per line.
foreign_dlls() {
    command -v "$objdump" >/dev/null || return 0
    "$objdump" -p "$1" | sed -n 's/^[[:space:]]*DLL Name: //p' |
        grep -iE '^(lib|mingw|cyg)' | grep -ivx 'ewise_c\.dll' || true
}

programs=() # name
failed=()
skipped=0
compile() { # name, compiler, std, source
    local name="$1" compiler="$2" std="$3" src="$4" foreign
    local log="$bin/$name.build.log"
    if "$compiler" "$std" "${warnings[@]}" -g "${cflags_extra[@]}" -I crates/ewise-c/include \
        -I crates/ewise-c/tests/c "$src" -o "$bin/$name.exe" "${link[@]}" >"$log" 2>&1; then
        foreign="$(foreign_dlls "$bin/$name.exe")"
        if [ -n "$foreign" ]; then
            echo "windows-c-test: FAIL  build  $name imports mingw runtime DLLs: $(echo "$foreign" | tr "\n" " ")"
            failed+=("build $name")
        else
            programs+=("$name")
        fi
    else
        echo "windows-c-test: FAIL  build  $name ($src)"
        sed 's/^/    /' "$log" | tail -n 40
        failed+=("build $name")
    fi
}
shopt -s nullglob
for src in crates/ewise-c/tests/c/*.c; do
    name="$(basename "$src" .c)"
    # the reason after "unix-only:" in the file's leading comment
    reason="$(sed -n '1,/\*\//s/^.*unix-only: *//p' "$src" | head -n 1)"
    if [ -n "$reason" ]; then
        echo "windows-c-test: SKIP  cpu  $name: unix-only: $reason"
        skipped=$((skipped + 1))
        continue
    fi
    compile "$name" "$cc" -std=c99 "$src"
done
for src in crates/ewise-c/tests/cpp/*.cpp; do
    compile "$(basename "$src" .cpp)-cpp" "$cxx" -std=c++17 "$src"
done
compile example-sign "$cc" -std=c99 examples/c/sign.c

# --- run --------------------------------------------------------------------------------
# shellcheck source=scripts/lib/xvfb.sh
source scripts/lib/xvfb.sh
trap 'scripts/wine.sh --kill; xvfb_stop' EXIT
devices=(cpu)
gpu_env=""
if xvfb_start; then
    gpu_env="$(scripts/gpu-driver.sh)"
fi
if [ -n "$gpu_env" ]; then
    eval "$gpu_env"
    devices+=(gpu)
elif [ "${CI:-}" = "true" ]; then
    echo "windows-c-test: CI=true, and the GPU runs cannot be made here (no Xvfb or no lavapipe: see above)" >&2
    exit 1
else
    echo "windows-c-test: SKIP  gpu  all programs: no Xvfb or no lavapipe (see above)"
fi

# One wineserver for the whole run (a program starts in 0.1 s instead of 0.7 s), stopped
# at the end with whatever it still runs. Each program's output goes to its log file, never
# to a pipe, which the helpers wine starts would hold open (see scripts/wine.sh).
# (--kill first: a server that an earlier run, killed, left behind would refuse --persist)
scripts/wine.sh --kill
scripts/wine.sh --persist

# The end of a failed program's log; of a crash's dump by wine's debugger (winedbg), only
# the program's own lines before it and the backtrace, not the registers, stack, modules
# and threads.
show_log() {
    awk '
        /^Register dump:/ { skip = 1 }
        /^Backtrace:/ { skip = 0 }
        /^Modules:/ { skip = 1 }
        !skip
    ' "$1" | tail -n 60 | sed 's/^/    /'
}

passed=0
for device in "${devices[@]}"; do
    for name in "${programs[@]}"; do
        log="$bin/$name.$device.log"
        start=$SECONDS
        if EWISE_C_DEVICE="$device" timeout 900 scripts/wine.sh "$bin/$name.exe" "$device" \
            >"$log" 2>&1 </dev/null; then
            if grep -q '^SKIP' "$log"; then
                echo "windows-c-test: SKIP  $device  $name: $(grep -m1 '^SKIP' "$log")"
                skipped=$((skipped + 1))
            else
                echo "windows-c-test: PASS  $device  $name ($((SECONDS - start)) s)"
                passed=$((passed + 1))
            fi
        else
            rc=$?
            if [ "$rc" = 124 ]; then
                echo "windows-c-test: FAIL  $device  $name (no end within 900 s; log $log)"
                # what the killed wine.sh left running in the wineserver
                scripts/wine.sh --kill
                scripts/wine.sh --persist
            else
                echo "windows-c-test: FAIL  $device  $name (exit $rc; log $log)"
            fi
            show_log "$log"
            failed+=("$device $name")
        fi
    done
done

# The example as a user runs it on the GPU, no backend or adapter named: where
# `ewise_create_device` passes adapters over (wine's made-up Direct3D 12 one, on which
# no device opens), it must say so in its stderr line and still give
# DirectML's bits (the example checks them). Under EWISE_EXPECT_FALLBACK=1 (set by
# scripts/windows-test.sh when `ewise devices` tries a Direct3D 12 adapter first), a
# run that passed nothing over fails.
if [ -n "$gpu_env" ] && [[ " ${programs[*]} " == *" example-sign "* ]]; then
    log="$bin/example-sign.gpu-unnamed.log"
    if env -u EWISE_GPU_BACKEND -u EWISE_GPU_ADAPTER timeout 900 \
        scripts/wine.sh "$bin/example-sign.exe" gpu >"$log" 2>&1 </dev/null; then
        fallback="$(grep -m1 "^ewise: warning: the GPU device runs on .*, the next adapter in ewise's order" "$log" || true)"
        if [ -n "$fallback" ]; then
            echo "windows-c-test: PASS  gpu  example-sign, no adapter named: $fallback"
            passed=$((passed + 1))
        elif [ "${EWISE_EXPECT_FALLBACK:-}" = 1 ]; then
            echo "windows-c-test: FAIL  gpu  example-sign, no adapter named: EWISE_EXPECT_FALLBACK=1, but no adapter was passed over (log $log)"
            show_log "$log"
            failed+=("gpu example-sign, no adapter named")
        else
            echo "windows-c-test: PASS  gpu  example-sign, no adapter named (the first adapter was usable: nothing passed over)"
            passed=$((passed + 1))
        fi
    else
        echo "windows-c-test: FAIL  gpu  example-sign, no adapter named (exit $?; log $log)"
        show_log "$log"
        failed+=("gpu example-sign, no adapter named")
    fi
fi

echo "windows-c-test: $passed passed, ${#failed[@]} failed, $skipped skipped"
if [ ${#failed[@]} -gt 0 ]; then
    printf 'windows-c-test: failed: %s\n' "${failed[@]}"
    exit 1
fi
