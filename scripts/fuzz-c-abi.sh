#!/usr/bin/env bash
# Fuzzes the C ABI briefly with cargo-fuzz (libFuzzer, AddressSanitizer): the target
# `c_abi` of crates/ewise-c/fuzz (random DML_* descriptor structs, NULL pointers,
# bindings, aliasing buffers and release orders through ewise-c's extern "C" functions
# on the CPU device, every status, message and output byte checked against a model and
# the scalar reference) for EWISE_FUZZ_SECONDS seconds (default 20), any input over 10 s
# counting as a hang. A crash, hang, leak or broken check fails the script; libFuzzer
# saves the input under crates/ewise-c/fuzz/artifacts/c_abi/ (replay it on stable with
# EWISE_ABI_FUZZ_INPUT="$(xxd -p FILE | tr -d '\n')" cargo test -p ewise-c --test abi_fuzz).
#
# Runs on the stable toolchain: RUSTC_BOOTSTRAP=1 lets it take the -Z flags cargo-fuzz
# passes. cargo-fuzz is installed into target/cargo-fuzz when missing (crates.io); the
# build goes to target/fuzz, the corpus to target/fuzz/corpus/c_abi. Without cargo-fuzz
# it says why and exits 0 (skipped), or 1 under CI=true. As scripts/fuzz-loader.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
seconds="${EWISE_FUZZ_SECONDS:-20}"
tools="$repo/target/cargo-fuzz"

skip() {
    echo "fuzz-c-abi: SKIPPED: $*" >&2
    if [ "${CI:-}" = "true" ]; then
        echo "fuzz-c-abi: CI=true, so a skipped fuzz run is a failure" >&2
        exit 1
    fi
    exit 0
}

if [ ! -x "$tools/bin/cargo-fuzz" ]; then
    echo "fuzz-c-abi: installing cargo-fuzz into $tools" >&2
    cargo install cargo-fuzz --locked --root "$tools" >&2 \
        || skip "cargo install cargo-fuzz failed (see above)"
fi
export PATH="$tools/bin:$PATH"
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$repo/target/fuzz"

corpus="$CARGO_TARGET_DIR/corpus/c_abi"
mkdir -p "$corpus"
# Seeds: the empty input (a strict 6_4 device, a one-element FLOAT32 SIGN, executed)
# and a few fixed byte patterns.
: > "$corpus/seed-empty"
for seed in 00 01 02 03 04 05 06 07; do
    head -c 256 /dev/zero | tr '\0' "\\$(printf '%03o' "$((16#$seed * 5 + 1))")" \
        > "$corpus/seed-$seed"
done

cd crates/ewise-c/fuzz
echo "fuzz-c-abi: c_abi for ${seconds}s" >&2
cargo fuzz run c_abi "$corpus" -- \
    -max_total_time="$seconds" -timeout=10 -print_final_stats=1
