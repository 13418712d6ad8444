#!/usr/bin/env bash
# Runs every fenced code block of README.md, docs/*.md, crates/*/README.md and
# crates/ewise-web/js/README.md as a user pastes it (scripts/lib/doc_blocks.py holds the
# convention and the runners): rust blocks as complete programs in one scratch crate on
# `ewise` by path (offline, this workspace's Cargo.lock and target directory), python
# blocks in a fresh folder as a script and pasted into `python -i`, js blocks under Node as
# ESM and as CommonJS in a scratch npm project (`js deno` blocks under Deno instead, with the
# command and permissions their comment gives), c blocks built with the command their
# comment gives against the C library tarball, sh blocks in a scratch folder with the CLI
# on PATH. A block marked `<!-- not run: REASON -->` is listed with its reason. Prints one
# line per block; fails when a block fails or a fence has no info string.
#
# Needs: python3 (the runner), cargo; for python blocks target/wheel-venv (made by
# scripts/dist-check.sh; target/py-venv, from scripts/python-test.sh, where there is none)
# with dask and xarray (`ewise[dask]`; installed from PyPI with the package's constraints
# when missing); for js blocks Node >= 20, npm and crates/ewise-web/pkg
# (scripts/web-build.sh), and for `js deno` blocks Deno (the pinned one of
# scripts/lib/deno.sh in target/tools, installed from npm when missing); for c blocks cc,
# pkg-config and target/dist/ewise-c-*.tar.gz
# (scripts/dist.sh); for sh blocks the CLI: target/release/ewise or
# target/HOST/release/ewise, else the binary of target/dist's CLI tarball, else
# target/debug/ewise. What is missing is named; the blocks that need it fail.
#
# EWISE_DOC_VENV and EWISE_DOC_C_TARBALL name another venv or C tarball.
#
# Usage: scripts/doc-test.sh [--list] [--only FILE[:LINE]]... [--keep] [-v] [FILE.md...]
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"

who=doc-test
# shellcheck source=scripts/lib/deno.sh
source scripts/lib/deno.sh

fail() {
    echo "doc-test: $*" >&2
    exit 1
}

command -v python3 >/dev/null || fail "needs python3 (the runner, scripts/lib/doc_blocks.py)"

args=()
files=()
while [ $# -gt 0 ]; do
    case "$1" in
        --only) args+=("$1" "$2"); shift 2 ;;
        --list | --keep | -v | --verbose) args+=("$1"); shift ;;
        -*) fail "unknown option $1 (accepted: --list, --only FILE[:LINE], --keep, -v)" ;;
        *) files+=("$1"); shift ;;
    esac
done
if [ ${#files[@]} -eq 0 ]; then
    files=(README.md docs/*.md crates/*/README.md crates/ewise-web/js/README.md)
fi

missing=()
python=""
for venv in "${EWISE_DOC_VENV:-}" "$target_dir/wheel-venv" "$target_dir/py-venv"; do
    if [ -n "$venv" ] && [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import ewise' 2>/dev/null; then
        python="$venv/bin/python"
        break
    fi
done
if [ -z "$python" ]; then
    missing+=("a venv with ewise (scripts/dist.sh then scripts/dist-check.sh make target/wheel-venv)")
elif ! "$python" -c 'import dask.array, xarray' 2>/dev/null; then
    echo "doc-test: installing dask[array] and xarray (ewise[dask]) into $(dirname "$(dirname "$python")")" >&2
    "$python" -m pip install --quiet --disable-pip-version-check -c crates/ewise-python/constraints.txt \
        "dask[array]" xarray || fail "pip could not install dask[array] and xarray (PyPI)"
fi

host="$(rustc -vV | sed -n 's/^host: //p')"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/ewise-doc-test-sh.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT

# The CLI: a release build, else the CLI tarball's binary, else a debug build.
cli_dir=""
cli_tarball="$(ls "$target_dir"/dist/ewise-cli-*-"$host".tar.gz 2>/dev/null | head -n 1 || true)"
for d in "$target_dir/release" "$target_dir/$host/release" tarball "$target_dir/debug"; do
    if [ "$d" = tarball ] && [ -n "$cli_tarball" ]; then
        tar -xzf "$cli_tarball" -C "$scratch"
        d="$(dirname "$(ls "$scratch"/ewise-cli-*/ewise)")"
    fi
    if [ -x "$d/ewise" ]; then
        cli_dir="$d"
        break
    fi
done
[ -n "$cli_dir" ] || missing+=("the CLI (cargo build --release -p ewise-cli, or scripts/dist.sh's tarball)")

npm_pkg="$root/crates/ewise-web/pkg"
[ -f "$npm_pkg/package.json" ] || missing+=("the npm package (scripts/web-build.sh)")
command -v node >/dev/null && command -v npm >/dev/null || missing+=("node and npm (Node >= 20)")
deno_cli || { deno_bin=""; missing+=("Deno $deno_version (scripts/lib/deno.sh installs it from npm)"); }

c_tarball="${EWISE_DOC_C_TARBALL:-$(ls "$target_dir"/dist/ewise-c-*-"$host".tar.gz 2>/dev/null | head -n 1 || true)}"
[ -n "$c_tarball" ] || missing+=("the C library tarball (scripts/dist.sh)")
command -v cc >/dev/null && command -v pkg-config >/dev/null || missing+=("cc and pkg-config (scripts/c-test.sh --tools-only installs them)")

for m in "${missing[@]}"; do
    echo "doc-test: missing: $m; the blocks that need it fail" >&2
done

start=$SECONDS
status=0
python3 scripts/lib/doc_blocks.py --root "$root" --target-dir "$target_dir" \
    ${python:+--python "$python"} ${cli_dir:+--cli-dir "$cli_dir"} --npm-pkg "$npm_pkg" \
    ${c_tarball:+--c-tarball "$c_tarball"} ${deno_bin:+--deno "$deno_bin"} "${args[@]}" "${files[@]}" || status=$?
echo "doc-test: $((SECONDS - start)) s (the CLI from $cli_dir)"
exit "$status"
