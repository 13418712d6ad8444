#!/usr/bin/env bash
# Fuzzes the ONNX loader briefly with cargo-fuzz (libFuzzer, AddressSanitizer): the two
# targets of crates/ewise-onnx/fuzz, `load_model` (any model bytes) and `load_tree`
# (external data over a tree of files, directories, FIFOs and links inside and out),
# each for EWISE_FUZZ_SECONDS seconds (default 20), any input over 10 s counting as a
# hang. A crash or hang fails the script; libFuzzer saves the input under
# crates/ewise-onnx/fuzz/artifacts/.
#
# Runs on the stable toolchain: RUSTC_BOOTSTRAP=1 lets it take the -Z flags cargo-fuzz
# passes. cargo-fuzz is installed into target/cargo-fuzz when missing (crates.io); the
# build goes to target/fuzz, the corpora to target/fuzz/corpus. Without cargo-fuzz it
# says why and exits 0 (skipped), or 1 under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
seconds="${EWISE_FUZZ_SECONDS:-20}"
tools="$repo/target/cargo-fuzz"

skip() {
    echo "fuzz-loader: SKIPPED: $*" >&2
    if [ "${CI:-}" = "true" ]; then
        echo "fuzz-loader: CI=true, so a skipped fuzz run is a failure" >&2
        exit 1
    fi
    exit 0
}

if [ ! -x "$tools/bin/cargo-fuzz" ]; then
    echo "fuzz-loader: installing cargo-fuzz into $tools" >&2
    cargo install cargo-fuzz --locked --root "$tools" >&2 \
        || skip "cargo install cargo-fuzz failed (see above)"
fi
export PATH="$tools/bin:$PATH"
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$repo/target/fuzz"

corpus="$CARGO_TARGET_DIR/corpus"
mkdir -p "$corpus/load_model" "$corpus/load_tree"
for d in crates/ewise-onnx/tests/data/python/*/; do
    cp "$d/model.onnx" "$corpus/load_model/$(basename "$d").onnx"
done

cd crates/ewise-onnx/fuzz
for target in load_model load_tree; do
    echo "fuzz-loader: $target for ${seconds}s" >&2
    cargo fuzz run "$target" "$corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1
done
