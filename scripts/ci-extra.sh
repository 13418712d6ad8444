#!/usr/bin/env bash
# Extra CI checks, run by .ci/run when present: ONNX's own backend conformance cases for
# Sign and IsInf, through `ewise onnx-test` (onnx 1.22.0 in target/onnx-venv provides them),
# the layout tests again on the portable kernels, and the other targets.
set -euo pipefail
cd "$(dirname "$0")/.."

data="$(scripts/onnx-conformance.sh)"
cargo run --release -q -p ewise-cli -- onnx-test \
    "$data/node/test_sign" \
    "$data/node/test_isinf" \
    "$data/node/test_isinf_positive" \
    "$data/node/test_isinf_negative" \
    "$data/node/test_isinf_float16" \
    "$data/simple/test_sign_model"

# The portable kernels (what machines without AVX2 run) through the layout walks,
# transposes included: the kernel tests compare every instruction set, but a walk uses
# the one chosen for its process.
EWISE_FORCE_PORTABLE=1 cargo test -q -p ewise-cpu --test large --test strided

# Windows and macOS type-check; ewise-core, ewise-cpu and the CLI pass their tests on
# aarch64 (under qemu-user).
scripts/cross-check.sh

# The facade without its default GPU backend.
cargo clippy -q -p ewise --no-default-features -- -D warnings
