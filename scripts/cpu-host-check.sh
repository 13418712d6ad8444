#!/usr/bin/env bash
# The CPU checks that a change to the kernels' threading owes every kind of host (issue
# 40 asks for an Intel and an AMD one), in one command, on whatever host this runs on:
#
#   scripts/cpu-host-check.sh [BASE_REV]     BASE_REV: the build to compare with
#                                            (default dd9c743, main before issue 40's
#                                            helpers and placement)
#
# 1. the host: CPU model, CPU count, caches (host.txt)
# 2. bench/ab_repeat.py: this checkout against BASE_REV at 16 Mi and 256 Mi elements,
#    examples/repeat of both builds alternated, on every CPU: calls back to back
#    (ab.txt), then at 16 Mi calls 5 ms apart, each waking the helper threads (the path
#    of Placement::steer: ab-sporadic.txt)
# 3. `ewise bench --device cpu --op sign --layout contiguous` at 64 Ki to 4 Mi, twice,
#    and bench/table.py over both: medium calls on the default thread count, with each
#    case's range between the runs (medium-1.json, medium-2.json, medium.txt)
# 4. bench/peers.py at 4 Ki to 16 Mi, with this checkout's Python package built into the
#    virtualenv of $PYTHON (default target/py-venv/bin/python, which scripts/python-test.sh
#    makes, with numpy and maturin); PyTorch and ONNX Runtime join where installed there
#    (peers.txt)
#
# On the 2-CPU Zen 4 VM of docs/PERFORMANCE.md, with both builds made: 690 s in all
# (step 2: 290 s and 85 s; step 3: 15 s; step 4: 300 s).
#
# Everything goes to $OUT (default target/host-check/out). BASE_REV's sources are
# exported with `git archive` to target/host-check/base-src and built there, leaving the
# repository's worktrees and branches as they are. The base is built with this
# checkout's examples/repeat.rs, so that both builds run the same driver (it uses only
# the public API, which is the same since dd9c743).
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev="${1:-dd9c743}"
root=target/host-check
out="${OUT:-$root/out}"
python="${PYTHON:-target/py-venv/bin/python}"
mkdir -p "$out"

say() { printf '== %s (%d s)\n' "$*" "$SECONDS" | tee -a "$out/log.txt"; }

commit="$(git rev-parse --verify --quiet "$base_rev^{commit}")" || {
    echo "cpu-host-check: $base_rev is not a commit of this repository" >&2
    exit 2
}

say "host"
{
    grep -m1 'model name' /proc/cpuinfo || true
    echo "CPUs this process may use: $(nproc)"
    lscpu | grep -E 'cache|^Vendor|^Model name|Socket|Thread' || true
    git log -1 --format='head: %h %s'
    git log -1 --format='base: %h %s' "$commit"
} | tee "$out/host.txt"

say "build head"
cargo build --release -q -p ewise-cli
cargo build --release -q -p ewise-cpu --example repeat

say "build base $commit"
src="$root/base-src"
if [ "$(cat "$src/.commit" 2>/dev/null)" != "$commit" ]; then
    rm -rf "$src"
    mkdir -p "$src"
    git archive "$commit" | tar -x -C "$src"
    echo "$commit" >"$src/.commit"
fi
cp crates/ewise-cpu/examples/repeat.rs "$src/crates/ewise-cpu/examples/repeat.rs"
(cd "$src" && CARGO_TARGET_DIR="$PWD/../base-target" cargo build --release -q -p ewise-cpu --example repeat)

say "A/B at 16 Mi and 256 Mi"
python3 bench/ab_repeat.py --base "$root/base-target/release/examples/repeat" \
    --head target/release/examples/repeat --sizes 16Mi 256Mi | tee "$out/ab.txt"
say "A/B at 16 Mi, calls 5 ms apart"
python3 bench/ab_repeat.py --base "$root/base-target/release/examples/repeat" \
    --head target/release/examples/repeat --sizes 16Mi --pause-us 5000 | tee "$out/ab-sporadic.txt"

say "medium calls, twice"
for k in 1 2; do
    target/release/ewise bench --device cpu --op sign --layout contiguous \
        --sizes 64Ki 256Ki 1Mi 4Mi --json >"$out/medium-$k.json"
done
python3 bench/table.py "$out/medium-1.json" "$out/medium-2.json" | tee "$out/medium.txt"

say "peers"
if [ -x "$python" ] && "$python" -c 'import numpy, maturin' 2>/dev/null; then
    PATH="$(dirname "$python"):$PATH" "$python" -m pip install --quiet --disable-pip-version-check \
        --no-build-isolation --force-reinstall --no-deps ./crates/ewise-python
    "$python" bench/peers.py --ewise target/release/ewise \
        --sizes 4096 65536 1048576 16777216 | tee "$out/peers.txt"
else
    echo "cpu-host-check: peers skipped: $python does not import numpy and maturin (run scripts/python-test.sh once, or set PYTHON)" | tee -a "$out/log.txt" >&2
fi
say "done: $out"
