#!/usr/bin/env bash
# Extra CI checks, run by .ci/run when present (after scripts/dist.sh): ONNX's own backend
# conformance cases for Sign and IsInf, through `ewise onnx-test` and `ewise run` (onnx
# 1.22.0 in target/onnx-venv provides them) with the CLI of dist's Linux tarball, on the
# CPU and on the GPU (lavapipe), the layout tests again on the portable kernels, the other
# targets, and the crates as a registry takes them. The cargo-fuzz targets (scripts/fuzz.sh)
# and scripts/package-check.sh (cargo publish --dry-run, each package built on its own,
# and cargo install of the CLI: 6 minutes of debug builds here) are run by hand; dist.sh
# packages every crate in CI and dist-check.sh checks what each package holds.
set -euo pipefail
cd "$(dirname "$0")/.."

# The CLI users download: dist's tarball for this machine, unpacked.
triple="$(rustc -vV | sed -n 's/^host: //p')"
tarball="$(ls target/dist/ewise-cli-*-"$triple".tar.gz 2>/dev/null | head -n 1)"
[ -n "$tarball" ] || { echo "ci-extra: no target/dist/ewise-cli-*-$triple.tar.gz: run scripts/dist.sh first" >&2; exit 1; }
cli_dir="$(mktemp -d)"
trap 'rm -rf "$cli_dir"' EXIT
tar -xzf "$tarball" -C "$cli_dir" --strip-components=1
ewise="$cli_dir/ewise"
[ -x "$ewise" ] || { echo "ci-extra: $tarball holds no ewise at its top" >&2; exit 1; }

data="$(scripts/onnx-conformance.sh)"
cases=(
    "$data/node/test_sign"
    "$data/node/test_isinf"
    "$data/node/test_isinf_positive"
    "$data/node/test_isinf_negative"
    "$data/node/test_isinf_float16"
    "$data/simple/test_sign_model"
)
"$ewise" onnx-test "${cases[@]}"

# The same cases through `ewise run` (inputs as .npy files, streamed in chunks, outputs
# compared byte for byte), with the default chunks and with the smallest.
conformance_py=target/onnx-venv/bin/python
run_cases() {
    "$conformance_py" scripts/onnx-run-conformance.py --ewise "$ewise" --args "$1" "${cases[@]}"
}
run_cases ""
run_cases "--chunk-size 4Ki"

# The same cases with --device gpu, on lavapipe: the outputs must not change. (Every CLI
# option on both devices, byte for byte, is the CLI's tests/device.rs, natively and under
# wine.)
gpu_env="$(scripts/gpu-driver.sh)"
if [ -n "$gpu_env" ]; then
    (
        eval "$gpu_env"
        "$ewise" onnx-test --device gpu "${cases[@]}"
        run_cases "--device gpu"
        run_cases "--device gpu --chunk-size 4Ki"
    )
else
    echo "ci-extra: SKIPPING the --device gpu runs: no Vulkan driver (see scripts/gpu-driver.sh)" >&2
fi

# The portable kernels (what machines without AVX2 run) through the layout walks,
# transposes included: the kernel tests compare every instruction set, but a walk uses
# the one chosen for its process.
EWISE_FORCE_PORTABLE=1 cargo test -q --workspace --test large --test strided

# macOS type-checks; ewise-core and ewise-cpu pass their tests on aarch64 (under
# qemu-user).
scripts/cross-check.sh

# The facade without its default GPU backend.
cargo clippy -q -p ewise --no-default-features -- -D warnings
