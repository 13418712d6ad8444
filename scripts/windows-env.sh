# Sourced by scripts/windows-test.sh and scripts/windows-c-test.sh, with `who` set to
# the caller's name for its messages: defines `skip REASON` (exit 0 with the reason, or
# exit 1 under CI=true) and `target`, adds the rustup target x86_64-pc-windows-gnu when
# missing, and prepares the wine prefix (scripts/wine.sh --prepare, which installs wine
# and mingw as root), skipping when they cannot be had; `windows_test_args`: the one build
# both scripts use.

target=x86_64-pc-windows-gnu

# `cargo test` arguments for the Windows test build: the crates whose Rust tests run under
# wine, ewise-c included so that the C programs link against this very build's DLL (any
# other package set resolves the dependencies' features otherwise and builds most of them
# again: 4 minutes here).
windows_test_args=(--target "$target" -p ewise-core -p ewise-cpu -p ewise-gpu -p ewise-onnx -p ewise-cli -p ewise-c)

what="Windows test"
# shellcheck source=scripts/lib/skip.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/skip.sh"

if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    rustup target add "$target" >&2 || skip "rustup could not add the target $target"
fi

prepared=0
scripts/wine.sh --prepare || prepared=$?
case "$prepared" in
    0) ;;
    3) skip "wine or mingw is missing (scripts/wine.sh said which)" ;;
    *) echo "$who: scripts/wine.sh --prepare failed (exit $prepared)" >&2; exit "$prepared" ;;
esac
