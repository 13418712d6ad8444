#!/usr/bin/env bash
# Windows for real: cross-builds the tests of ewise-core, ewise-cpu, ewise-gpu, ewise-onnx
# and ewise-cli for x86_64-pc-windows-gnu (mingw) and runs them as Windows programs under wine
# (scripts/wine.sh as cargo's runner; doc-tests included). The CLI's integration tests,
# themselves Windows programs, start the Windows `ewise.exe` directly (CreateProcess inside
# wine), so EWISE_CLI_RUNNER is unset here.
#
# Needs the rustup target x86_64-pc-windows-gnu (added here when missing), wine (64-bit)
# and gcc-mingw-w64-x86-64 (installed by scripts/wine.sh when missing and running as
# root). Without them it says what is missing and skips (exit 0), or fails under CI=true.
# Test files that are unix-only (`#![cfg(unix)]`, fork, signals, ...) build to nothing.
#
# Then the C ABI's C and C++ programs, compiled with mingw against the DLL
# (scripts/windows-c-test.sh). ewise-gpu's tests run too, but without an adapter: wine
# reaches the host's Vulkan (lavapipe) only through its X11 display driver, which needs a
# display, so each GPU test says it skipped; the GPU code is built for the target all
# the same, and `scripts/cross-check.sh` lints the whole workspace (Python package
# included) for it.
#
# Prints cargo's output (also kept in target/windows-test.log), then one summary line per
# crate: test binaries run, tests passed, failed and ignored (not with cargo's -q, which
# hides the lines naming each binary), then one line per C program. Exit status: cargo's,
# else the C programs'.
#
# Usage: scripts/windows-test.sh [CARGO TEST ARGS...]
#   e.g. scripts/windows-test.sh -- --test-threads=1
#   (default: --no-fail-fast, so that every failing binary is reported)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

who=windows-test
# shellcheck source=scripts/windows-env.sh
source scripts/windows-env.sh

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$root/scripts/wine.sh"
unset EWISE_CLI_RUNNER

# One wineserver for the whole run (a program starts in 0.1 s instead of 0.7 s), stopped
# at the end with whatever it still runs.
scripts/wine.sh --persist
trap 'scripts/wine.sh --kill' EXIT

work="${CARGO_TARGET_DIR:-$root/target}"
case "$work" in /*) ;; *) work="$root/$work" ;; esac
mkdir -p "$work"
log="$work/windows-test.log"

args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--no-fail-fast)

echo "windows-test: cargo test --target $target -p ewise-core -p ewise-cpu -p ewise-gpu -p ewise-onnx -p ewise-cli ${args[*]}" >&2
start=$SECONDS
status=0
# Not `cargo ... | tee`: the helpers wine starts on demand (services.exe, rpcss.exe, ...)
# inherit the output pipe and live as long as the persistent wineserver, so a pipeline
# would wait for them forever. tee gets its end of file once --kill has ended them.
exec 3> >(tee "$log")
tee_pid=$!
cargo test --target "$target" -p ewise-core -p ewise-cpu -p ewise-gpu -p ewise-onnx -p ewise-cli "${args[@]}" \
    >&3 2>&1 3>&- || status=$?
exec 3>&-
scripts/wine.sh --kill
wait "$tee_pid" 2>/dev/null || true

# The summary: cargo runs each package's unit tests (lib first) before its integration
# tests, and names each doc-test run; the crate of a test binary is the one whose
# `unittests src/lib.rs` ran last.
awk '
    /^ *Running unittests src\/lib.rs/ {
        m = $0; sub(/.*\/deps\//, "", m); sub(/-[0-9a-f]+(\.exe)?\)$/, "", m); crate = m
        if (!(crate in seen)) { seen[crate] = 1; order[++n] = crate }
    }
    /^ *Doc-tests / { crate = $2; if (!(crate in seen)) { seen[crate] = 1; order[++n] = crate } }
    /^ *(Running|Doc-tests) / { bins[crate]++ }
    /^test result: / {
        for (i = 1; i <= NF; i++) {
            v = $(i - 1) + 0
            if ($i ~ /^passed/) passed[crate] += v
            if ($i ~ /^failed/) failed[crate] += v
            if ($i ~ /^ignored/) ignored[crate] += v
        }
    }
    END {
        for (i = 1; i <= n; i++) {
            c = order[i]
            printf "windows-test: %-12s %3d test binaries: %5d passed, %d failed, %d ignored\n", \
                c, bins[c], passed[c], failed[c], ignored[c]
        }
    }
' "$log" >&2
echo "windows-test: cargo test took $((SECONDS - start)) s (exit $status); log $log" >&2

c_status=0
scripts/windows-c-test.sh || c_status=$?
echo "windows-test: the C ABI's programs (scripts/windows-c-test.sh): exit $c_status" >&2
[ "$status" -ne 0 ] || status="$c_status"
exit "$status"
