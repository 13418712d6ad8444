#!/usr/bin/env bash
# The project's tests: every Rust test of the workspace, with the GPU backend's tests on
# Mesa's lavapipe (installed by scripts/gpu-driver.sh when missing and this runs as root),
# then the C ABI's C and C++ programs under AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/c-test.sh), then the Python package's tests (scripts/python-test.sh: a
# virtualenv under target/). Arguments go to `cargo test`; with arguments, the C and
# Python tests are left out.
set -euo pipefail
cd "$(dirname "$0")/.."

env_line="$(scripts/gpu-driver.sh)"
eval "$env_line"
if [ -n "$env_line" ]; then
    echo "test: GPU tests run on lavapipe (${env_line#export })"
fi
cargo test --workspace "$@"
if [ $# -eq 0 ]; then
    scripts/c-test.sh
    scripts/python-test.sh
fi
