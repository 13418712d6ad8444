# Sourced by scripts/windows-test.sh and scripts/windows-c-test.sh, with `who` set to
# the caller's name for its messages: defines `skip REASON` (exit 0 with the reason, or
# exit 1 under CI=true) and `target`, adds the rustup target x86_64-pc-windows-gnu when
# missing, and prepares the wine prefix (scripts/wine.sh --prepare, which installs wine
# and mingw as root), skipping when they cannot be had.

target=x86_64-pc-windows-gnu

skip() {
    echo "$who: SKIPPED: $*" >&2
    if [ "${CI:-}" = "true" ]; then
        echo "$who: CI=true, so a skipped Windows test is a failure" >&2
        exit 1
    fi
    exit 0
}

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
