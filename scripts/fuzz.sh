#!/usr/bin/env bash
# Fuzzes ewise briefly with cargo-fuzz (libFuzzer, AddressSanitizer), each target for
# EWISE_FUZZ_SECONDS seconds (default 20), any input over 10 s counting as a hang:
#   - load_model, load_tree (crates/ewise-onnx/fuzz): the ONNX loader over any model
#     bytes, and external data over a tree of files, directories, FIFOs and links inside
#     and outside the model's directory;
#   - c_abi (crates/ewise-c/fuzz): random DML_* descriptor structs, NULL pointers,
#     bindings, aliasing buffers and release orders through the C ABI's extern "C"
#     functions on the CPU device, every status, message and output byte checked against
#     a model and the scalar reference (replay an input on stable with
#     EWISE_ABI_FUZZ_INPUT="$(xxd -p FILE | tr -d '\n')" cargo test -p ewise-c --test abi_fuzz).
# Arguments name the targets to run (default: all three). A crash, hang, leak or broken
# check fails the script; libFuzzer saves the input under the fuzz crate's artifacts/.
#
# Runs on the stable toolchain: RUSTC_BOOTSTRAP=1 lets it take the -Z flags cargo-fuzz
# passes. cargo-fuzz is installed into target/cargo-fuzz when missing (crates.io); the
# builds go to target/fuzz, the corpora to target/fuzz/corpus. Without cargo-fuzz it
# says why and exits 0 (skipped), or 1 under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
seconds="${EWISE_FUZZ_SECONDS:-20}"
tools="$repo/target/cargo-fuzz"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(load_model load_tree c_abi)

who=fuzz what="fuzz run"
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh

if [ ! -x "$tools/bin/cargo-fuzz" ]; then
    echo "fuzz: installing cargo-fuzz into $tools" >&2
    # --debug: it only starts cargo and the fuzzer, so it is built unoptimized, sooner.
    cargo install cargo-fuzz --debug --locked --root "$tools" >&2 \
        || skip "cargo install cargo-fuzz failed (see above)"
fi
export PATH="$tools/bin:$PATH"
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR="$repo/target/fuzz"
corpus="$CARGO_TARGET_DIR/corpus"

# Seeds: ONNX's test models for the loader; for the C ABI the empty input (a strict 6_4
# device, a one-element FLOAT32 SIGN, executed) and a few fixed byte patterns.
seed() {
    mkdir -p "$corpus/$1"
    case "$1" in
    load_model)
        for d in crates/ewise-onnx/tests/data/python/*/; do
            cp "$d/model.onnx" "$corpus/load_model/$(basename "$d").onnx"
        done
        ;;
    c_abi)
        : >"$corpus/c_abi/seed-empty"
        for byte in 00 01 02 03 04 05 06 07; do
            head -c 256 /dev/zero | tr '\0' "\\$(printf '%03o' "$((16#$byte * 5 + 1))")" \
                >"$corpus/c_abi/seed-$byte"
        done
        ;;
    esac
}

for target in "${targets[@]}"; do
    case "$target" in
    load_model | load_tree) crate=crates/ewise-onnx/fuzz ;;
    c_abi) crate=crates/ewise-c/fuzz ;;
    *)
        echo "fuzz: unknown target '$target' (accepted: load_model, load_tree, c_abi)" >&2
        exit 2
        ;;
    esac
    seed "$target"
    echo "fuzz: $target for ${seconds}s" >&2
    (cd "$crate" && cargo fuzz run "$target" "$corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1)
done
