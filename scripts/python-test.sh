#!/usr/bin/env bash
# The Python package's tests: builds `ewise` (crates/ewise-python) into a virtualenv
# with the pinned test dependencies, then runs its pytest suite (doctests, the Dask
# cluster test and the type-stub check included).
#
# Usage: scripts/python-test.sh [--venv DIR] [PYTEST ARGS...]
#   --venv DIR   the virtualenv (default: target/py-venv under the repository)
# With EWISE_PYTHON_VENV=DIR, the tests run against the ewise already installed in that
# virtualenv from a wheel (scripts/dist-check.sh leaves target/wheel-venv so), with the
# test dependencies added and nothing built: CI tests the wheel users would install.
# Without python3 or PyPI it says what is missing and exits 0 (skipped), or 1 under CI=true.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}"
venv="${repo_root}/target/py-venv"
installed="${EWISE_PYTHON_VENV:-}"
if [ -n "${installed}" ]; then
    venv="$(cd "${installed}" && pwd)"
fi
if [ "${1:-}" = "--venv" ]; then
    [ $# -ge 2 ] || { echo "error: --venv needs a directory" >&2; exit 2; }
    venv="$2"
    shift 2
fi
package="crates/ewise-python"

who=python-test what="Python suite"
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh

command -v python3 >/dev/null || skip "python3 is not installed (the Python package needs CPython >= 3.10 with pip and venv)"
if [ ! -x "${venv}/bin/python" ]; then
    python3 -m venv "${venv}" || skip "python3 -m venv failed (Debian: apt-get install python3-venv)"
fi
py="${venv}/bin/python"
export PATH="${venv}/bin:${PATH}"
tools=(numpy ml_dtypes pytest hypothesis "dask[array]" distributed xarray pandas cloudpickle onnx mypy)
[ -n "${installed}" ] || tools+=(maturin)
"${py}" -m pip install --quiet --disable-pip-version-check -c "${package}/constraints.txt" "${tools[@]}" \
    || skip "pip could not install the test dependencies from PyPI (see above)"

if [ -n "${installed}" ]; then
    # Installed from a wheel, not from a source tree or in editable mode.
    "${py}" - <<'EOF'
import importlib.metadata as md, json, sys
dist = md.distribution("ewise")
direct = dist.read_text("direct_url.json")
if direct and not json.loads(direct)["url"].endswith(".whl"):
    sys.exit(f"python-test: ewise in this venv was not installed from a wheel: {direct}")
print(f"python-test: testing the installed ewise {dist.version} ({dist.locate_file('ewise')})", file=sys.stderr)
EOF
else
    # A release build into the venv, sharing the workspace's target directory.
    "${py}" -m pip install --quiet --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps "./${package}"
fi

# The hand-written stub of the native module matches what it exports.
(cd /tmp && "${py}" -m mypy.stubtest ewise._ewise --ignore-missing-stub)
"${py}" -m mypy --strict --no-error-summary "${package}/python/ewise"

# The CLI binary lets the tests compare `ewise.support()` with `ewise support --json`.
cli="${CARGO_TARGET_DIR:-${repo_root}/target}/debug/ewise"
[ -x "${cli}" ] && export EWISE_CLI="${cli}"

cd "${package}"
"${py}" -m pytest -q -p no:cacheprovider "$@"
