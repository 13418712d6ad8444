#!/usr/bin/env bash
# The GPU measurements on a lent NVIDIA machine (the `device` tool), in as few device
# minutes as possible: everything is built here and carried there (issues 11 and 39).
#
#   scripts/gpu-device-kit.sh prepare   here: build target/device-kit/ (the release
#                                       binary, the GPU test binaries as tests.tar.gz, the
#                                       ONNX models) and .gl/ (Debian's Vulkan loader and
#                                       GL vendor libraries, which the device image lacks)
#   scripts/gpu-device-kit.sh run       there, with carry [".gl", "target/device-kit"],
#                                       timeout_s 540: in this order, each step under its
#                                       own `timeout` inside one deadline (470 s):
#                                       1. the tuning sweep: LOADS_IN_FLIGHT, then
#                                          MIN_ROW_UNITS, chosen by bench/gpu_tune.py
#                                          (sweep-loads.json, sweep-rows.json, tuned.json)
#                                       2. `ewise bench --device gpu` on every op x dtype x
#                                          layout at 16Mi and 256Mi with the tuned values
#                                          (table.json, with the overheads)
#                                       3. the GPU test binaries on the GPU (tests.txt)
#                                       4. optional, while time is left: bench/gpu_peers.py
#                                          on the table's contiguous rows (peers.txt), then
#                                          bench/run_vs_sign.py (GPU and CPU), the CPU
#                                          kernels' tests and `ewise bench` on the host's
#                                          CPU (rest.txt)
#                                       everything under $OUT (8 files; log.txt has each
#                                       step's command, time and errors)
#   scripts/gpu-device-kit.sh recheck [BENCH ARGS]
#                                       there, a second short call (same carry): the GPU
#                                       tests again, then `ewise bench --device gpu --json
#                                       BENCH ARGS` (recheck-bench.json), by 200 s
#   scripts/gpu-device-kit.sh smoke     here: the same steps on lavapipe with tiny sizes
#                                       and few samples, no .gl, no NVIDIA ICD, no
#                                       EWISE_REQUIRE_GPU, OUT=/tmp/kit-out (also
#                                       KIT_SMOKE=1 ... run)
#
# Arguments after `run` go to bench/gpu_peers.py (e.g. --op sign).
set -euo pipefail
cd "$(dirname "$0")/.."
kit=target/device-kit

prepare() {
    local exclude
    exclude="$(git rev-parse --git-path info/exclude)"
    mkdir -p "$(dirname "$exclude")"
    grep -qx '/.gl/' "$exclude" 2>/dev/null || echo /.gl/ >>"$exclude"
    if ! compgen -G ".gl/libvulkan1_*.deb" >/dev/null; then
        mkdir -p .gl /tmp/amd64/partial
        local o=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64)
        apt-get "${o[@]}" update -qq
        (cd .gl && apt-get "${o[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
    fi
    cargo build --release -q -p ewise-cli
    rm -rf "$kit" && mkdir -p "$kit/tests"
    cp target/release/ewise "$kit/"
    if [ ! -x target/py-venv/bin/python ]; then
        echo "gpu-device-kit: target/py-venv is missing: run scripts/python-test.sh once (it installs onnx there)" >&2
        exit 1
    fi
    target/py-venv/bin/python bench/run_vs_sign.py --write-models "$kit/models"
    local tests
    tests="$(cargo test --release -q -p ewise-cpu -p ewise-gpu -p ewise-onnx --features ewise-onnx/gpu \
        --no-run --message-format=json 2>/dev/null |
        python3 -c 'import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] != ["bin"]:
        if m["target"]["name"] in ("adapter", "api", "compile_bounds", "exhaustive", "fork",
                                   "layouts", "rows", "stream", "timing", "vector", "gpu",
                                   "ewise_cpu", "ewise_gpu"):
            crate = os.path.basename(os.path.dirname(m["manifest_path"]))
            print(m["executable"] + "=" + crate + "." + os.path.basename(m["executable"]))')"
    # Named CRATE.TARGET-HASH: run sorts them into the GPU tests and the CPU's.
    for t in $tests; do
        cp "${t%%=*}" "$kit/tests/${t#*=}"
    done
    strip "$kit/ewise" "$kit"/tests/* 2>/dev/null || true
    # The carry holds 64 MiB in all: the test binaries travel compressed.
    tar -C "$kit" -czf "$kit/tests.tar.gz" tests && rm -rf "$kit/tests"
    # Test binaries find their data files under the checkout they were built in.
    pwd >"$kit/built-at"
    # Sizes of the carry (at most 64 MiB with the working tree).
    du -sh "$kit" "$kit"/* .gl
    du -sch "$kit" .gl | tail -1
    echo 'device run: command "bash scripts/gpu-device-kit.sh run", carry [".gl", "target/device-kit"]'
}

# Seconds left before the run's deadline.
left() {
    echo $((deadline - $(date +%s)))
}

# step NAME CAP COMMAND...: runs COMMAND under `timeout` for at most CAP seconds and
# never past the deadline (skipped with a line when less than 10 s are left); logs its
# command, exit status and seconds to log.txt. Returns COMMAND's status.
step() {
    local name="$1" cap="$2" budget t0 rc
    shift 2
    budget="$(left)"
    budget=$((budget - 5))
    if [ "$budget" -gt "$cap" ]; then budget="$cap"; fi
    if [ "$budget" -lt 10 ]; then
        echo "== $name: skipped, $(left) s left before the deadline" | tee -a "$out/log.txt" >&3
        return 124
    fi
    echo "== $name (timeout ${budget}s, $(left) s left): $*" >>"$out/log.txt"
    t0="$(date +%s)"
    rc=0
    timeout -k 5 "$budget" "$@" || rc=$?
    echo "== $name: exit $rc after $(($(date +%s) - t0)) s" | tee -a "$out/log.txt" >&3
    return "$rc"
}

# The environment the GPU runs need: on the device, Debian's Vulkan loader unpacked from
# .gl/ and NVIDIA's ICD found (~5 s), a GPU required; with 1 (smoke), lavapipe. Test
# binaries find their data files under the checkout they were built in: a link to here.
gpu_env() {
    if [ "$1" = 1 ]; then
        eval "$(scripts/gpu-driver.sh)"
        unset EWISE_REQUIRE_GPU
        export EWISE_GPU_BACKEND=vulkan
    else
        for f in .gl/*.deb; do dpkg -x "$f" /; done
        ldconfig
        local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
        if [ ! -e "$icd" ]; then
            icd="$(timeout 20 find / -xdev -name nvidia_icd.json -not -path '/proc/*' 2>/dev/null | head -1 || true)"
        fi
        if [ -n "$icd" ]; then
            export VK_DRIVER_FILES="$icd"
        fi
        export EWISE_GPU_BACKEND=vulkan EWISE_REQUIRE_GPU=1
    fi
    local built_at
    built_at="$(cat "$kit/built-at" 2>/dev/null || true)"
    if [ -n "$built_at" ] && [ ! -e "$built_at" ]; then
        mkdir -p "$(dirname "$built_at")" && ln -s "$PWD" "$built_at"
    fi
}

# The GPU test binaries (ewise-gpu's unit and integration tests, ewise-onnx's GPU tests),
# unpacked under $2/tests, each under `step` (60 s each on the device; 1 = smoke, 1800 s);
# $out/tests.txt gets each one's exit status and summary, or its last 40 lines.
gpu_tests() {
    local smoke="$1" tmp="$2" t name
    mkdir -p "$tmp/tests" && tar -C "$tmp" -xzf "$kit/tests.tar.gz"
    : >"$out/tests.txt"
    for t in "$tmp"/tests/*; do
        name="$(basename "$t")"
        case "$name" in ewise-gpu.* | ewise-onnx.*) ;; *) continue ;; esac
        local budget=60 rc=0
        if [ "$smoke" = 1 ]; then budget=1800; fi
        step "test $name" "$budget" "$t" --test-threads 4 >"$tmp/test.log" 2>&1 || rc=$?
        {
            echo "== $name: exit $rc"
            if [ "$rc" = 0 ]; then grep -E '^test result:' "$tmp/test.log" | tail -2; else tail -40 "$tmp/test.log"; fi
        } >>"$out/tests.txt"
    done
    cat "$out/tests.txt"
}

# A second, short device call: the GPU tests again, then `ewise bench --device gpu --json`
# with the arguments given (if any) into $out/recheck-bench.json. Ends by 200 s.
recheck() {
    out="${OUT:-/tmp/ewise-out}"
    exec 3>&1
    mkdir -p "$out"
    deadline=$(($(date +%s) + ${KIT_DEADLINE_S:-200}))
    local tmp=/tmp/ewise-kit
    rm -rf "$tmp" && mkdir -p "$tmp"
    gpu_env "${KIT_SMOKE:-0}"
    { nvidia-smi --query-gpu=name,driver_version --format=csv || true; } >>"$out/log.txt" 2>&1
    gpu_tests "${KIT_SMOKE:-0}" "$tmp"
    if [ $# -gt 0 ]; then
        step recheck-bench 90 "$kit/ewise" bench --device gpu --json "$@" \
            >"$out/recheck-bench.json" 2>>"$out/log.txt" || true
    fi
}

run() {
    out="${OUT:-/tmp/ewise-out}"
    local smoke="${KIT_SMOKE:-0}"
    # Progress lines of `step` go to the run's own output (fd 3), whatever a step's
    # output is redirected to.
    exec 3>&1
    mkdir -p "$out"
    local t_start
    t_start="$(date +%s)"
    # The H100 budget: the device call's timeout is 540 s, its start and transfers
    # aside; the steps end by 470 s. The smoke run on lavapipe has no such limit.
    if [ "$smoke" = 1 ]; then
        deadline=$((t_start + 7200))
    else
        deadline=$((t_start + ${KIT_DEADLINE_S:-470}))
    fi
    local ewise="$kit/ewise" tune="python3 bench/gpu_tune.py" tmp=/tmp/ewise-kit
    rm -rf "$tmp" && mkdir -p "$tmp"
    # Sizes and samples: the H100's, or tiny ones for the smoke run.
    local sizes=(16Mi 256Mi) row_size=16Mi sweep_samples=7 table_samples=9
    if [ "$smoke" = 1 ]; then
        sizes=(16Ki 64Ki) row_size=64Ki sweep_samples=3 table_samples=3
    fi
    gpu_env "$smoke"
    {
        date -u
        echo "smoke=$smoke sizes=${sizes[*]} row_size=$row_size samples=$sweep_samples/$table_samples"
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv || true
        echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-} EWISE_GPU_ADAPTER=${EWISE_GPU_ADAPTER:-}"
        nproc
        timeout 60 "$ewise" devices
    } >>"$out/log.txt" 2>&1
    cat "$out/log.txt"

    # 1a. LOADS_IN_FLIGHT: 1 2 4 8 16, each case timed under each value in turn (one
    # process per group: one device, pools filled once). H100 estimate: 14 cases x 5
    # values ~ 0.15 s each + pipelines + pools (up to 2 x 2 GiB) + 3 device opens: ~30 s
    # (cap 110 s).
    local loads_raw="$out/sweep-loads.json"
    : >"$loads_raw"
    local sweep=("$ewise" bench --device gpu --json --sizes "${sizes[@]}" --samples "$sweep_samples"
        --gpu-loads-in-flight 1 2 4 8 16)
    {
        step sweep-loads-sign 60 "${sweep[@]}" --op sign --dtype float32,float16,int8,float64 --layout contiguous
        step sweep-loads-isinf 40 "${sweep[@]}" --op is-infinity --dtype float32,float16 --layout contiguous
        step sweep-loads-rows 30 "${sweep[@]}" --op sign --dtype float32 --layout rows --row-units 256
    } >>"$loads_raw" 2>>"$out/log.txt" || true
    $tune merge "$loads_raw" "$loads_raw" | tee -a "$out/log.txt"
    local loads
    loads="$($tune loads "$loads_raw")"
    echo "chosen loads_in_flight: $loads" | tee -a "$out/log.txt"

    # 1b. MIN_ROW_UNITS, under the chosen loads: rows of 1 to 32 units, each with the
    # row kernel (min 1) and without (min 2^30: the strided walk), sign float32 and int8
    # at 16Mi. H100 estimate: 24 cases ~ 0.2 s + one device open: ~10 s (cap 50 s).
    local rows_raw="$out/sweep-rows.json"
    step sweep-rows 50 "$ewise" bench --device gpu --json --sizes "$row_size" \
        --samples "$sweep_samples" --op sign --dtype float32,int8 --layout rows \
        --row-units 1 2 4 8 16 32 --gpu-loads-in-flight "$loads" \
        --gpu-min-row-units 1 1073741824 >"$rows_raw" 2>>"$out/log.txt" || true
    $tune merge "$rows_raw" "$rows_raw" | tee -a "$out/log.txt"
    local note=()
    if [ "$smoke" = 1 ]; then note=(--note "smoke run on a software adapter: not a measurement"); fi
    $tune write "$out/tuned.json" "$loads_raw" "$rows_raw" "${note[@]}" | tee -a "$out/log.txt"
    local min_rows
    min_rows="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["min_row_units"])' "$out/tuned.json")"

    # 2. The table: every op x dtype (16 pairs) x 16Mi, 256Mi x contiguous, transposed,
    # broadcast, rows (256 units), with the tuned values; then the overheads. H100
    # estimate: 128 cases ~ 0.3 s with pipelines + pool fills up to 2 x 2 GiB: ~60 s
    # (cap 170 s). Rows go out as they are measured.
    step table 170 "$ewise" bench --device gpu --json --sizes "${sizes[@]}" \
        --samples "$table_samples" --layout all --gpu-loads-in-flight "$loads" \
        --gpu-min-row-units "$min_rows" >"$out/table.json" 2>>"$out/log.txt" || true
    $tune merge "$out/table.json" "$out/table.json" | tee -a "$out/log.txt"

    # 3. The GPU test binaries on the GPU (the unit tests of ewise-gpu, its integration
    # tests, ewise-onnx's GPU tests). H100 estimate: ~40 s in all (cap 110 s; 60 s per
    # binary).
    local unpacked="$tmp/tests"
    gpu_tests "$smoke" "$tmp"

    # 4. Optional, each under its own timeout while time is left: the peers on the
    # table's contiguous rows (~40 s, cap 60 s), ewise run vs ewise sign on 1 GiB
    # (~40 s each), the CPU kernels' tests and the CPU bench.
    step peers 60 env PYTHONUNBUFFERED=1 python3 bench/gpu_peers.py --ewise "$ewise" \
        --ewise-json "$out/table.json" --layout contiguous --samples "$table_samples" "$@" \
        >"$out/peers.txt" 2>&1 || true
    {
        local size_mib=1024 py=python3
        if [ "$smoke" = 1 ]; then
            size_mib=4
            # numpy and onnx: the venv of scripts/python-test.sh, where there is one.
            if [ -x target/py-venv/bin/python ]; then py=target/py-venv/bin/python; fi
        fi
        for device in gpu cpu; do
            step "run_vs_sign $device" 50 "$py" bench/run_vs_sign.py --ewise "$ewise" \
                --models "$kit/models" --device "$device" --size-mib "$size_mib" --rounds 3 || true
        done
        for t in "$unpacked"/ewise-cpu.*; do
            step "test $(basename "$t")" 60 "$t" --test-threads "$(nproc)" 2>&1 | tail -3 || true
        done
        grep -m1 'model name' /proc/cpuinfo || true
        step cpu-bench 40 "$ewise" bench --device cpu --sizes 64Ki 16Mi --layout contiguous --samples 9 || true
    } >"$out/rest.txt" 2>&1
    echo "== done after $(($(date +%s) - t_start)) s" | tee -a "$out/log.txt"
    ls -l "$out"
}

case "${1:-}" in
    prepare) prepare ;;
    run) shift && run "$@" ;;
    smoke) shift && KIT_SMOKE=1 OUT="${OUT:-/tmp/kit-out}" run "$@" ;;
    recheck) shift && recheck "$@" ;;
    *) sed -n '2,33p' "$0" >&2 && exit 2 ;;
esac
