#!/usr/bin/env bash
# Windows for real: cross-builds the tests of ewise-core, ewise-cpu, ewise-gpu, ewise-onnx,
# ewise-cli and ewise-c for x86_64-pc-windows-gnu (mingw) and runs them as Windows programs
# under wine (scripts/wine.sh as cargo's runner; doc-tests included). The CLI's integration tests,
# themselves Windows programs, start the Windows `ewise.exe` directly (CreateProcess inside
# wine), so EWISE_CLI_RUNNER is unset here.
#
# Needs the rustup target x86_64-pc-windows-gnu (added here when missing), wine (64-bit)
# and gcc-mingw-w64-x86-64 (installed by scripts/wine.sh when missing and running as
# root). Without them it says what is missing and skips (exit 0), or fails under CI=true.
# Test files that are unix-only (`#![cfg(unix)]`, fork, signals, ...) build to nothing.
#
# The GPU tests run on the host's lavapipe: wine reaches the host's Vulkan only through
# its X11 display driver, so the script starts a virtual X server (Xvfb, scripts/lib/xvfb.sh;
# installed as root when missing) for the whole run and stops it at the end, with wine's
# server, nothing left running. ewise-gpu's tests and the CLI's (tests/device.rs: every
# type and option, --device gpu byte for byte against --device cpu) run with
# scripts/gpu-driver.sh's settings (EWISE_REQUIRE_GPU=1, so a missing adapter fails
# them). ewise-gpu's tests/fallback.rs and a check of `ewise.exe --device gpu` run with no
# backend or adapter named: wine also lists a made-up Direct3D 12 adapter ("NVIDIA GeForce
# GTX 470"), first in ewise's order, on which no device opens ("Parent device is lost":
# Debian 12's wine has no shader compiler for wgpu's cs_5_1), so they must pass it over to lavapipe
# and say so (EWISE_EXPECT_FALLBACK=1 when `ewise devices` puts a Direct3D 12 adapter
# first). Without Xvfb or lavapipe the GPU tests skip with one line each, or fail under
# CI=true.
#
# Then the C ABI's C and C++ programs, compiled with mingw against the DLL
# (scripts/windows-c-test.sh), on the CPU and on the GPU (the same X server).
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

# shellcheck source=scripts/lib/xvfb.sh
source scripts/lib/xvfb.sh
trap 'scripts/wine.sh --kill; xvfb_stop' EXIT
gpu_env=""
if xvfb_start; then
    gpu_env="$(scripts/gpu-driver.sh)"
fi
if [ -n "$gpu_env" ]; then
    eval "$gpu_env"
elif [ "${CI:-}" = "true" ]; then
    echo "$who: CI=true, and the GPU tests cannot run here (no Xvfb or no lavapipe: see above)" >&2
    exit 1
else
    echo "$who: SKIPPING the GPU tests (no Xvfb or no lavapipe: see above); the GPU code is still built" >&2
fi

# One wineserver for the whole run (a program starts in 0.1 s instead of 0.7 s), stopped
# at the end with whatever it still runs (and then the X server).
scripts/wine.sh --persist

work="${CARGO_TARGET_DIR:-$root/target}"
case "$work" in /*) ;; *) work="$root/$work" ;; esac
mkdir -p "$work"
log="$work/windows-test.log"

args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--no-fail-fast)

exe="$work/$target/debug/ewise.exe" # the one the CLI's tests start
check="$work/windows-gpu-check"
# Runs the Windows ewise.exe with no GPU backend or adapter named (as a user would),
# standard output and error into $check/NAME.out and NAME.err (files, not pipes: see
# scripts/wine.sh); its exit status.
ewise_unnamed() {
    local name="$1"
    shift
    env -u EWISE_GPU_BACKEND -u EWISE_GPU_ADAPTER scripts/wine.sh "$exe" "$@" \
        >"$check/$name.out" 2>"$check/$name.err" </dev/null
}

# Where the first adapter in ewise's order is a Direct3D 12 one (wine's made-up adapter,
# on which Debian 12's wine opens no device), the tests expect it passed over.
if [ -n "$gpu_env" ]; then
    # The tests' own build, which makes $exe too.
    cargo test --no-run "${windows_test_args[@]}"
    rm -rf "$check"
    mkdir -p "$check"
    if ! ewise_unnamed devices devices --json; then
        echo "$who: ewise.exe devices --json failed:" >&2
        cat "$check/devices.err" >&2
        exit 1
    fi
    first="$(python3 -c 'import json, sys
print(next((a["backend"] for a in json.load(open(sys.argv[1])) if a["try"] == 1), ""))' "$check/devices.out")"
    echo "$who: ewise devices (no backend or adapter named) tries first a ${first:-(none)} adapter:" >&2
    ewise_unnamed devices-table devices || true
    sed 's/^/    /' "$check/devices-table.out" "$check/devices-table.err" >&2
    if [ "$first" = Dx12 ]; then
        export EWISE_EXPECT_FALLBACK=1
    fi
fi

echo "windows-test: cargo test ${windows_test_args[*]} ${args[*]}" >&2
start=$SECONDS
status=0
# Not `cargo ... | tee`: the helpers wine starts on demand (services.exe, rpcss.exe, ...)
# inherit the output pipe and live as long as the persistent wineserver, so a pipeline
# would wait for them forever. tee gets its end of file once --kill has ended them.
exec 3> >(tee "$log")
tee_pid=$!
cargo test "${windows_test_args[@]}" "${args[@]}" \
    >&3 2>&1 3>&- || status=$?
exec 3>&-
scripts/wine.sh --kill
wait "$tee_pid" 2>/dev/null || true

# `ewise.exe --device gpu` as a user runs it, nothing named: the bytes of --device cpu
# (float32 specials, NaN payloads, subnormals, 1 Mi elements), on an adapter it says it
# used after passing over the ones that cannot be used.
if [ -n "$gpu_env" ]; then
    gpu_check=0
    python3 - "$check/x.npy" <<'PY'
import struct, sys
words = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00001, 0xFFA00002,
         0x00000001, 0x807FFFFF, 0x3F800000, 0xC2F60000]
values = [words[k % len(words)] ^ ((k * 2654435761) & 0x007FFFF0) for k in range(1 << 20)]
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
header = header.ljust(118) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%dI" % len(values), *values))
PY
    for op in sign is-infinity; do
        for device in cpu gpu; do
            ewise_unnamed "$op-$device" "$op" "$check/x.npy" "$check/$op-$device.npy" \
                --device "$device" || { echo "$who: FAIL ewise.exe $op --device $device (exit $?):" >&2; cat "$check/$op-$device.err" >&2; gpu_check=1; }
        done
        if cmp -s "$check/$op-cpu.npy" "$check/$op-gpu.npy"; then
            echo "$who: PASS ewise.exe $op --device gpu, nothing named: the bytes of --device cpu" >&2
        else
            echo "$who: FAIL ewise.exe $op --device gpu differs from --device cpu" >&2
            gpu_check=1
        fi
    done
    sed 's/^/    /' "$check/sign-gpu.err" >&2
    if [ "${EWISE_EXPECT_FALLBACK:-}" = 1 ] &&
        ! grep -q "^ewise: warning: the GPU device runs on .*, the next adapter in ewise's order, because .* could not be used (" "$check/sign-gpu.err"; then
        echo "$who: FAIL ewise.exe --device gpu did not say which adapters it passed over" >&2
        gpu_check=1
    fi
    [ "$status" -ne 0 ] || status="$gpu_check"
fi

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
