#!/usr/bin/env bash
# Extra CI checks, run by .ci/run when present: ONNX's own backend conformance cases for
# Sign and IsInf, through `ewise onnx-test` and `ewise run` (onnx 1.22.0 in
# target/onnx-venv provides them)
# on the CPU and on the GPU (lavapipe), the CLI tests with --device gpu,
# the layout tests again on the portable kernels, the other targets, and a brief fuzz
# of the ONNX loader.
set -euo pipefail
cd "$(dirname "$0")/.."

data="$(scripts/onnx-conformance.sh)"
cases=(
    "$data/node/test_sign"
    "$data/node/test_isinf"
    "$data/node/test_isinf_positive"
    "$data/node/test_isinf_negative"
    "$data/node/test_isinf_float16"
    "$data/simple/test_sign_model"
)
cargo run --release -q -p ewise-cli -- onnx-test "${cases[@]}"

# The same cases through `ewise run` (inputs as .npy files, streamed in chunks, outputs
# compared byte for byte), with the default chunks and with the smallest.
cargo build --release -q -p ewise-cli
conformance_py=target/onnx-venv/bin/python
run_cases() {
    "$conformance_py" scripts/onnx-run-conformance.py --ewise target/release/ewise --args "$1" "${cases[@]}"
}
run_cases ""
run_cases "--chunk-size 4Ki"

# The same cases and every CLI test again with --device gpu, on lavapipe: the outputs
# must not change.
gpu_env="$(scripts/gpu-driver.sh)"
if [ -n "$gpu_env" ]; then
    (
        eval "$gpu_env"
        cargo run --release -q -p ewise-cli -- onnx-test --device gpu "${cases[@]}"
        run_cases "--device gpu"
        run_cases "--device gpu --chunk-size 4Ki"
        # The CLI's test files, picked from the workspace (the build `cargo test --workspace`
        # made: `-p ewise-cli` would resolve features for the CLI alone and build again);
        # ewise-c's files of the same names run too, unchanged by EWISE_DEVICE.
        mapfile -t cli_tests < <(for f in crates/ewise-cli/tests/*.rs; do
            printf -- '--test\n%s\n' "$(basename "$f" .rs)"
        done)
        EWISE_DEVICE=gpu cargo test -q --workspace "${cli_tests[@]}"
    )
else
    echo "ci-extra: SKIPPING the --device gpu runs: no Vulkan driver (see scripts/gpu-driver.sh)" >&2
fi

# The portable kernels (what machines without AVX2 run) through the layout walks,
# transposes included: the kernel tests compare every instruction set, but a walk uses
# the one chosen for its process.
EWISE_FORCE_PORTABLE=1 cargo test -q --workspace --test large --test strided

# Windows and macOS type-check; ewise-core, ewise-cpu and the CLI pass their tests on
# aarch64 (under qemu-user).
scripts/cross-check.sh

# The crates as a registry takes them (cargo publish --dry-run, each package built on
# its own) and the CLI through cargo install, run.
scripts/package-check.sh

# The facade without its default GPU backend.
cargo clippy -q -p ewise --no-default-features -- -D warnings

# cargo-fuzz for 20 s per target: the ONNX loader (any model bytes, and external data
# over a tree of files, directories, FIFOs and links inside and outside the model's
# directory) and the C ABI (random DML_* descriptions, NULLs, lying sizes, bindings,
# aliasing wrapped memory, release orders; every status with its message and every
# execution against the scalar reference).
scripts/fuzz.sh
