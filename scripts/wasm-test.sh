#!/usr/bin/env bash
# WebAssembly: the tests of ewise-core and ewise-cpu built for wasm32-wasip1 and run under
# Node's WASI (scripts/wasi-run.mjs as cargo's runner; doc-tests included), twice: with
# SIMD128 (`-C target-feature=+simd128`, so the SIMD128 kernels are the ones chosen, and
# the exhaustive tests check them on every 8- and 16-bit pattern) and without it (the
# scalar loops, for runtimes without SIMD). Then `cargo check -p ewise-cpu` for
# wasm32-unknown-unknown (the browser target), with and without SIMD128.
#
# wasm32 has no threads (everything runs on the calling thread) and wasm32-wasip1 aborts
# on a panic, so a failing test ends its binary: cargo names the binary, and
# `-- --nocapture` shows the panic.
#
# Needs the rustup targets wasm32-wasip1 and wasm32-unknown-unknown (added here when
# missing) and Node >= 20 (`node`). Without them it says what is missing and skips
# (exit 0), or fails under CI=true.
#
# Usage: scripts/wasm-test.sh [CARGO TEST ARGS...]   (e.g. -- --nocapture)
#   (default: --no-fail-fast, so that every failing binary is reported)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

who=wasm-test what="wasm test"
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh

command -v rustup >/dev/null || skip "needs rustup, to add the wasm32-wasip1 and wasm32-unknown-unknown targets"
installed="$(rustup target list --installed 2>/dev/null || true)"
for t in wasm32-wasip1 wasm32-unknown-unknown; do
    if ! grep -qx "$t" <<<"$installed"; then
        rustup target add "$t" >&2 || skip "rustup could not add the target $t"
    fi
done

command -v node >/dev/null || skip "needs Node >= 20 (node), which runs the wasm32-wasip1 tests"
major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
[ "$major" -ge 20 ] 2>/dev/null || skip "needs Node >= 20 (node:wasi); found $(node --version 2>/dev/null || echo none)"

export CARGO_TARGET_WASM32_WASIP1_RUNNER="node $root/scripts/wasi-run.mjs"
# Without debug info (the test profile's default): a cold run took 23% less CPU time
# (5.1 instead of 6.7 minutes) and half the disk; panics still name their functions.
export CARGO_PROFILE_TEST_DEBUG="${CARGO_PROFILE_TEST_DEBUG:-false}"
flags="${RUSTFLAGS:-}"
args=("$@")
[ $# -gt 0 ] || args=(--no-fail-fast)

for simd in "+simd128" ""; do
    name="${simd:-scalar}"
    export RUSTFLAGS="$flags${simd:+ -C target-feature=$simd}"
    echo "wasm-test: cargo test -p ewise-core -p ewise-cpu --target wasm32-wasip1 ($name, under Node $(node --version))" >&2
    cargo test -p ewise-core -p ewise-cpu --target wasm32-wasip1 "${args[@]}"
    echo "wasm-test: cargo check -p ewise-cpu --target wasm32-unknown-unknown ($name)" >&2
    cargo check -q -p ewise-cpu --target wasm32-unknown-unknown
done
echo "wasm-test: passed" >&2
