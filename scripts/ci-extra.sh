#!/usr/bin/env bash
# Extra CI checks, run by .ci/run when present: ONNX's own backend conformance cases for
# Sign and IsInf, through `ewise onnx-test` (onnx 1.22.0 in target/onnx-venv provides them).
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
