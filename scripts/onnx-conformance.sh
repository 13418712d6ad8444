#!/usr/bin/env bash
# Provides ONNX's backend test data (the onnx wheel that still ships it as files) and
# prints the path of its `onnx/backend/test/data` directory on stdout.
#
# Usage: scripts/onnx-conformance.sh [--print-path] [--venv DIR]
#   (no flag)     create the virtualenv if missing, install onnx, print the data path
#   --print-path  print the data path of an existing virtualenv; fail if it is missing
#   --venv DIR    the virtualenv to use (default: target/onnx-venv under the repository)
#
# Example: EWISE_ONNX_TEST_DATA="$(scripts/onnx-conformance.sh)" cargo test -p ewise-onnx
set -euo pipefail

ONNX_VERSION="1.22.0"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${repo_root}/target/onnx-venv"
print_only=0

while [ $# -gt 0 ]; do
    case "$1" in
        --print-path) print_only=1 ;;
        --venv)
            [ $# -ge 2 ] || { echo "error: --venv needs a directory" >&2; exit 2; }
            venv="$2"
            shift
            ;;
        -h | --help)
            sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *) echo "error: unknown argument '$1' (accepted: --print-path, --venv DIR, --help)" >&2; exit 2 ;;
    esac
    shift
done

python="${venv}/bin/python"

installed_version() {
    "${python}" -c 'import onnx; print(onnx.__version__)' 2>/dev/null || true
}

if [ "${print_only}" -eq 0 ]; then
    if [ ! -x "${python}" ]; then
        python3 -m venv "${venv}" >&2
    fi
    if [ "$(installed_version)" != "${ONNX_VERSION}" ]; then
        "${python}" -m pip install --quiet --disable-pip-version-check "onnx==${ONNX_VERSION}" >&2
    fi
elif [ ! -x "${python}" ]; then
    echo "error: no virtualenv at ${venv} (run $0 without --print-path to create it)" >&2
    exit 1
fi

data="$("${python}" -c 'import os, onnx; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data"))')"
if [ ! -d "${data}/node/test_sign" ]; then
    echo "error: ${data} does not hold node/test_sign (onnx $(installed_version) installed; ${ONNX_VERSION} ships the files)" >&2
    exit 1
fi
echo "${data}"
