# Sourced by the scripts that run a tool or a suite which may be missing here.
#
# skip MESSAGE...: prints "$who: SKIPPED: MESSAGE" on stderr and exits with
# $skip_status (default 0), so a machine without the tool passes loudly; under CI=true
# it exits 1 instead, naming what was skipped ("a skipped $what is a failure").
# The sourcing script sets `who` (its name) and `what` (what it runs) first.
skip() {
    echo "${who:?}: SKIPPED: $*" >&2
    if [ "${CI:-}" = "true" ]; then
        echo "$who: CI=true, so a skipped ${what:?} is a failure" >&2
        exit 1
    fi
    exit "${skip_status:-0}"
}
