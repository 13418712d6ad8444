#!/usr/bin/env bash
# The npm package under Deno, whose WebGPU runs here on Mesa's lavapipe (software Vulkan):
# (a) the package's own tests (crates/ewise-web/tests/*.test.mjs, written for node:test,
# which Deno runs through `deno test`) less the Node-only ones listed below, and (b) the
# browser tests (crates/ewise-web/tests/browser/*.test.mjs) through
# crates/ewise-web/browser/deno-run.mjs, WebGPU included, with the WGSL of every
# ewise-gpu kernel written into target/web/wgsl first (as scripts/browser-test.sh does).
# Each runs with the narrowest permissions that work, said below; a failure in (a) still
# runs (b), and the script fails after both.
#
# Installs what is missing: Deno (the npm package deno, pinned in scripts/lib/deno.sh,
# into target/tools), Mesa's lavapipe (scripts/gpu-driver.sh: apt-get, as root) and the
# package (scripts/web-build.sh). What cannot be had is named and the tests skip (exit 0),
# or fail under CI=true.
#
# Environment: EWISE_WEB_TOOLS (default target/tools), EWISE_BROWSER_TIMEOUT_S (per
# browser test module, default 600), and fuzz.test.mjs's EWISE_FUZZ_RUNS and
# EWISE_FUZZ_SEED.
#
# Time (2 cores): about 100 s once the package and the WGSL example are built (the
# package's tests 45 s, the browser tests 50 s); installing Deno adds about 6 s.
#
# Usage: scripts/deno-test.sh [REGEXP]   (only the browser test modules whose file name
# matches; the package's own tests run whole)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

who=deno-test what="Deno test"
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh
# shellcheck source=scripts/lib/deno.sh
source scripts/lib/deno.sh
source scripts/lib/wgsl-sources.sh

command -v node >/dev/null || skip "needs Node >= 20 (node), to build the package"
deno_cli || skip "no Deno $deno_version (see above)"

driver=$(scripts/gpu-driver.sh) || skip "no Vulkan driver (see gpu-driver's message)"
[ -n "$driver" ] || skip "no Vulkan software driver: install Debian's mesa-vulkan-drivers and libvulkan1 (scripts/gpu-driver.sh does, as root)"

status=0
EWISE_WEB_SKIP_STATUS=75 scripts/web-build.sh || status=$?
[ "$status" -ne 75 ] || skip "the package was not built (see web-build's message)"
[ "$status" -eq 0 ] || exit "$status"
pkg=crates/ewise-web/pkg

wgsl_sources deno-test

# Deno's WebGPU is wgpu: on Vulkan (lavapipe here) rather than OpenGL through EGL, which
# Mesa's llvmpipe also offers. Mesa's Vulkan window-system layer looks for a Wayland
# display in XDG_RUNTIME_DIR and complains on every device when there is none: an empty
# directory of ours quiets it.
export DENO_WEBGPU_BACKEND=vulkan NO_COLOR=1
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ewise-deno-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
[ -n "${XDG_RUNTIME_DIR:-}" ] || export XDG_RUNTIME_DIR=$scratch

echo "deno-test: $("$deno_bin" --version | head -n 1), WebGPU on Vulkan (Mesa's lavapipe here)" >&2

# (a) The package's own tests, less these, which check Node itself or drive Node's
# command line (name, a tab, why it cannot run under Deno):
excluded="\
defaults table: software renderer chosen unasked = warning (\`console.warn\`)	checks that Node, which has no WebGPU, refuses requestGpu(); Deno has WebGPU, and the warning itself is checked by tests/browser/defaults.test.mjs, run below
Node has no WebGPU: WebGpuUnavailableError naming what is missing	Node's own error; Deno has WebGPU
requestGpu checks every option before it looks for WebGPU	its last checks expect Node's missing WebGPU once the options are accepted; under Deno they open a device
navigator.gpu outside a window or worker, then with no adapter: typed errors, and the module keeps working	replaces Node's missing navigator and deletes globalThis.Window afterwards, which Deno has as its own
init(path), init(file URL) read the file in Node; a bad source is a LoadError	runs Node's command line (process.execPath --input-type=module -e), which deno is not
JavaScript arrays sized by the caller's data that cannot be allocated: OutOfMemoryError with the RangeError as cause	runs a Node child (process.execPath) that lowers its own address-space limit with prlimit"
# Each must still be there (a defaults-table test is named after its row of the table).
while IFS=$'\t' read -r name _; do
    grep -qF "$(sed -e 's/^defaults table: //' -e 's/ = .*//' <<<"$name")" crates/ewise-web/tests/*.test.mjs ||
        { echo "deno-test: the excluded test \"$name\" is in no crates/ewise-web/tests/*.test.mjs: update the list" >&2; exit 1; }
done <<<"$excluded"

# fuzz.test.mjs takes fast-check from target/tools (scripts/web-test.sh installs it);
# without it that test skips, saying so (a failure under CI=true). Its own imports
# (pure-rand) resolve through the node_modules folder that holds it
# (--node-modules-dir=manual: Deno's resolution of Node packages in place).
fast_check=${EWISE_WEB_FAST_CHECK:-${EWISE_WEB_TOOLS:-$root/target/tools}/node_modules/fast-check}

# Permissions: --allow-read for the tests' own folder (the shared-memory workers' module),
# the package (loadPackage() imports it; init() reads its .wasm), docs/SEMANTICS.md (the
# defaults table) and the node_modules folder of fast-check and pure-rand; --allow-env
# for the variables the tests read (the package's folder, fast-check's, fuzz.test.mjs's
# runs and seed, CI) and the exclusions.
echo "deno-test: deno test crates/ewise-web/tests/*.test.mjs ($(grep -c . <<<"$excluded") Node-only tests left out)" >&2
status=0
EWISE_DENO_EXCLUDE=$excluded EWISE_WEB_FAST_CHECK=$fast_check "$deno_bin" test --node-modules-dir=manual \
    --allow-read="crates/ewise-web/tests,$pkg,docs/SEMANTICS.md,$(dirname "$fast_check")" \
    --allow-env=EWISE_DENO_EXCLUDE,EWISE_WEB_PKG,EWISE_WEB_FAST_CHECK,EWISE_FUZZ_RUNS,EWISE_FUZZ_SEED,CI \
    --preload crates/ewise-web/tests/deno-exclude.mjs crates/ewise-web/tests/*.test.mjs || status=1

# (b) The browser tests, WebGPU and every kernel's WGSL included. Permissions:
# --allow-read for the runner and the tests (imported as they are found), the package
# (init() reads its .wasm), docs/SEMANTICS.md (defaults.test.mjs reads its table) and
# target/web/wgsl (wgsl.test.mjs); --allow-env for the runner's time limit.
echo "deno-test: crates/ewise-web/browser/deno-run.mjs $*" >&2
"$deno_bin" run \
    --allow-read="crates/ewise-web/browser,crates/ewise-web/tests,$pkg,docs/SEMANTICS.md,target/web/wgsl" \
    --allow-env=EWISE_BROWSER_TIMEOUT_S \
    crates/ewise-web/browser/deno-run.mjs "$@" || status=1
[ "$status" -eq 0 ] || echo "deno-test: FAILED (see above)" >&2
exit "$status"
