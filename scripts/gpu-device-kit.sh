#!/usr/bin/env bash
# The GPU measurements of issue 11 on a lent NVIDIA machine (the `device` tool), in as
# few device minutes as possible: everything is built here and carried there.
#
#   scripts/gpu-device-kit.sh prepare   here: build target/device-kit/ (the release
#                                       binary, the GPU test binaries) and .gl/ (Debian's
#                                       Vulkan loader and GL vendor libraries, which the
#                                       device image lacks)
#   scripts/gpu-device-kit.sh run       there, with carry [".gl", "target/device-kit"]:
#                                       install the loader, list the adapters, run the GPU
#                                       tests on the GPU, then bench/gpu_peers.py (ewise
#                                       beside PyTorch and CuPy), `ewise run` against
#                                       `ewise sign` (bench/run_vs_sign.py, GPU and CPU),
#                                       writing to $OUT; then the
#                                       CPU kernels' tests and `ewise bench` on the host's
#                                       CPU, issue 13's other kind of host (cpu.txt)
#
# Arguments after `run` go to bench/gpu_peers.py (e.g. --sizes 16Mi 256Mi --op sign).
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
        python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] != ["bin"]:
        if m["target"]["name"] in ("api", "exhaustive", "layouts", "rows", "stream", "timing",
                                   "vector", "gpu", "ewise_cpu", "ewise_gpu"):
            print(m["executable"])')"
    for t in $tests; do
        cp "$t" "$kit/tests/"
    done
    strip "$kit/ewise" "$kit"/tests/* 2>/dev/null || true
    # The carry holds 64 MiB in all: the test binaries travel compressed.
    tar -C "$kit" -czf "$kit/tests.tar.gz" tests && rm -rf "$kit/tests"
    # Test binaries find their data files under the checkout they were built in.
    pwd >"$kit/built-at"
    du -sh "$kit" .gl
    echo 'device run: command "bash scripts/gpu-device-kit.sh run", carry [".gl", "target/device-kit"]'
}

run() {
    local out="${OUT:-/tmp/ewise-out}"
    mkdir -p "$out"
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
    local icd
    icd="$(find / -name nvidia_icd.json -not -path '*/proc/*' 2>/dev/null | head -1 || true)"
    if [ -n "$icd" ]; then
        export VK_DRIVER_FILES="$icd"
    fi
    export EWISE_GPU_BACKEND=vulkan EWISE_REQUIRE_GPU=1
    local built_at
    built_at="$(cat "$kit/built-at" 2>/dev/null || true)"
    if [ -n "$built_at" ] && [ ! -e "$built_at" ]; then
        mkdir -p "$(dirname "$built_at")" && ln -s "$PWD" "$built_at"
    fi
    {
        date -u
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
        echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"
        "$kit/ewise" devices
    } 2>&1 | tee "$out/devices.txt"
    local unpacked=/tmp/ewise-device-kit
    rm -rf "$unpacked" && mkdir -p "$unpacked" && tar -C "$unpacked" -xzf "$kit/tests.tar.gz"
    for t in "$unpacked"/tests/*; do
        echo "== $t" && "$t" --test-threads 4 2>&1 | tail -3
    done 2>&1 | tee "$out/tests.txt"
    python3 bench/gpu_peers.py --ewise "$kit/ewise" --save-json "$out/ewise-bench.json" "$@" \
        2>&1 | tee "$out/peers.txt"
    for device in gpu cpu; do
        python3 bench/run_vs_sign.py --ewise "$kit/ewise" --models "$kit/models" \
            --device "$device" --size-mib 1024 --rounds 3
    done 2>&1 | tee "$out/run.txt"
    {
        grep -m1 'model name' /proc/cpuinfo && grep -m1 flags /proc/cpuinfo && nproc
        "$kit/ewise" bench --sizes 64Ki --threads 1 --layout contiguous --samples 31
        "$kit/ewise" bench --sizes 64Ki --threads 1 --layout contiguous --samples 31 --nan zero --op sign
        timeout 180 "$kit/ewise" bench --sizes 4Ki 1Mi 16Mi --samples 9
    } 2>&1 | tee "$out/cpu.txt"
}

case "${1:-}" in
    prepare) prepare ;;
    run) shift && run "$@" ;;
    *) sed -n '2,15p' "$0" >&2 && exit 2 ;;
esac
