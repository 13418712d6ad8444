#!/usr/bin/env bash
# ewise-gpu's Rust tests in a browser: crates/ewise-gpu/tests/web.rs built for
# wasm32-unknown-unknown and run by wasm-bindgen-test-runner (cargo's runner) in headless
# Chromium through chromedriver, on the browser's WebGPU (SwiftShader where there is no
# GPU), with the flags of crates/ewise-gpu/webdriver.json (--enable-unsafe-webgpu, and
# --no-sandbox, which root needs). The async API against the CPU backend, bit for bit.
#
# Installs what is missing: the rustup target, wasm-bindgen-cli at Cargo.lock's
# wasm-bindgen version (scripts/lib/wasm-bindgen-cli.sh, into target/tools), and
# Debian's chromium and chromium-driver (apt-get, as root). What cannot be had is named
# and the tests skip (exit 0), or fail under CI=true.
#
# Environment: CHROMEDRIVER (the driver; default: chromedriver on PATH, which starts the
# Chromium it was built for), WASM_BINDGEN_TEST_TIMEOUT (seconds for the whole run;
# default 300).
#
# Usage: scripts/web-rust-test.sh [CARGO TEST ARGS...]   (e.g. -- packed)
set -euo pipefail
cd "$(dirname "$0")/.."

who=web-rust-test what="web Rust test"
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh
# shellcheck source=scripts/lib/wasm-bindgen-cli.sh
source scripts/lib/wasm-bindgen-cli.sh

command -v cargo >/dev/null || skip "needs cargo (https://rustup.rs)"
command -v rustup >/dev/null || skip "needs rustup, to add the wasm32-unknown-unknown target"
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    echo "web-rust-test: rustup target add wasm32-unknown-unknown" >&2
    rustup target add wasm32-unknown-unknown >&2 || skip "rustup could not add the wasm32-unknown-unknown target"
fi

driver=${CHROMEDRIVER:-$(command -v chromedriver || true)}
if [ -z "$driver" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "web-rust-test: apt-get install chromium chromium-driver (about 220 MB)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >&2 ||
            skip "apt-get could not install chromium and chromium-driver"
        driver=${CHROMEDRIVER:-$(command -v chromedriver || true)}
    fi
    [ -n "$driver" ] || skip "needs chromedriver and Chromium with WebGPU (Debian: apt-get install chromium chromium-driver; or set CHROMEDRIVER)"
fi

wasm_bindgen_cli

# chromedriver makes a profile directory per session in $TMPDIR, and Chromium its own
# temporary directories: they go into one scratch directory, removed however this ends.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ewise-web-rust-test-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch

export CHROMEDRIVER=$driver
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=$wasm_bindgen_bin/wasm-bindgen-test-runner
export WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-300}
log=${CARGO_TARGET_DIR:-target}/web/rust-test.log
mkdir -p "$(dirname "$log")"

echo "web-rust-test: cargo test -p ewise-gpu --test web --target wasm32-unknown-unknown ($("$driver" --version | head -n 1); wasm-bindgen-test-runner $wasm_bindgen_version)" >&2
status=0
cargo test -p ewise-gpu --test web --target wasm32-unknown-unknown "$@" 2>&1 | tee "$log" || status=$?
result=$(grep -E '^test result: ' "$log" | tail -n 1 || true)
if [ -z "$result" ]; then
    echo "web-rust-test: FAILED: no test result (see $log)" >&2
    exit 1
fi
passed=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$result")
echo "web-rust-test: ${result#test result: } (tests/web.rs in headless Chromium with WebGPU)" >&2
[ "$status" -eq 0 ] || exit "$status"
[ "$passed" -gt 0 ] || { echo "web-rust-test: FAILED: no test passed" >&2; exit 1; }
