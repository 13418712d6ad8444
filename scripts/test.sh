#!/usr/bin/env bash
# The project's tests: every Rust test of the workspace, with the GPU backend's tests on
# Mesa's lavapipe (installed by scripts/gpu-driver.sh when missing and this runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."

env_line="$(scripts/gpu-driver.sh)"
eval "$env_line"
if [ -n "$env_line" ]; then
    echo "test: GPU tests run on lavapipe (${env_line#export })"
fi
cargo test --workspace "$@"
