#!/usr/bin/env bash
# Makes a Vulkan driver available for the GPU tests and prints the environment that
# selects it, for `eval "$(scripts/gpu-driver.sh)"`.
#
# With a Vulkan driver of Mesa's lavapipe (software Vulkan) present, or installable here
# (as root, through apt-get: mesa-vulkan-drivers and libvulkan1), it prints
#   export EWISE_REQUIRE_GPU=1 EWISE_GPU_BACKEND=vulkan EWISE_GPU_ADAPTER=llvmpipe
# so that the GPU tests run on lavapipe and fail, rather than skip, without an adapter.
# XDG_RUNTIME_DIR is left as it is: ewise's Vulkan instance enables no window-system
# surface, so Mesa's layers never look for a display (crates/ewise-gpu/src/instance.rs).
# Otherwise it says on stderr exactly what is missing and prints nothing, and the GPU
# tests skip with one line each; under CI (CI=true) that is an error.
set -euo pipefail

have_lavapipe() {
    compgen -G "/usr/share/vulkan/icd.d/lvp_icd*.json" >/dev/null &&
        compgen -G "/usr/lib/*/libvulkan.so.1" >/dev/null
}

if ! have_lavapipe; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "gpu-driver: installing Mesa's lavapipe (mesa-vulkan-drivers libvulkan1)" >&2
        export DEBIAN_FRONTEND=noninteractive
        { apt-get update -qq && apt-get install -y -qq mesa-vulkan-drivers libvulkan1; } >&2 ||
            echo "gpu-driver: apt-get could not install them" >&2
    fi
fi

if have_lavapipe; then
    line="export EWISE_REQUIRE_GPU=1 EWISE_GPU_BACKEND=vulkan EWISE_GPU_ADAPTER=llvmpipe"
    echo "$line"
    exit 0
fi

msg="gpu-driver: no Vulkan software driver: the GPU tests will SKIP. Install Debian's mesa-vulkan-drivers and libvulkan1 (as root: apt-get install -y mesa-vulkan-drivers libvulkan1)"
if [ "${CI:-}" = true ]; then
    echo "$msg, which CI requires" >&2
    exit 1
fi
echo "$msg" >&2
