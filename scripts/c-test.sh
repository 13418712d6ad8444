#!/usr/bin/env bash
# The C ABI's tests: builds the C libraries (`cargo test --workspace --no-run`, which
# leaves the cdylib and staticlib in target/debug/deps: the very build of `cargo test
# --workspace`, so that nothing is built again after it; `cargo build -p ewise-c` or
# `--workspace --lib` would resolve the dependencies' features otherwise and build 26
# crates again, 1.5 minutes here, or wgpu too), installs them into target/c-prefix with
# scripts/c-install.sh --no-build (and a --static-only copy into target/c-prefix-static), then
# compiles, under AddressSanitizer and UndefinedBehaviorSanitizer,
#   - every C test crates/ewise-c/tests/c/*.c (C99),
#   - every C++ test crates/ewise-c/tests/cpp/*.cpp (C++17),
#   - examples/c/sign.c (C99), once against the shared library and once statically,
# each linked with `pkg-config --cflags --libs ewise` (+ an rpath to the prefix), and runs
# each on the CPU (EWISE_C_DEVICE=cpu) and, where scripts/gpu-driver.sh provides a
# Vulkan driver (lavapipe), on the GPU (EWISE_C_DEVICE=gpu), with LeakSanitizer on
# (LSAN_OPTIONS=suppressions=crates/ewise-c/tests/c/lsan.supp when that file exists).
# Each program gets its device as argv[1] and in EWISE_C_DEVICE; it exits 0 on success
# and may print "SKIP: ..." (no GPU) and exit 0.
#
# One line per program and device: PASS, FAIL or SKIP; the exit status is nonzero when any
# failed. Missing cc / c++ / pkg-config / sanitizer runtimes: installed with apt-get when
# this runs as root; otherwise the script says what is missing and skips (fails under
# CI=true). Compilers: env CC and CXX (default cc and c++).
#
# Usage: scripts/c-test.sh [--tools-only]
#   --tools-only   only make sure the compilers and pkg-config are there (as above), then
#                  exit (scripts/dist-check.sh compiles against the C tarball with them)
set -euo pipefail
tools_only=0
case "${1:-}" in
    "") ;;
    --tools-only) tools_only=1 ;;
    *) echo "c-test: unknown argument $1 (usage: scripts/c-test.sh [--tools-only])" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
root="$(pwd)"

cc="${CC:-cc}"
cxx="${CXX:-c++}"
ci_fail_or_skip() {
    if [ "${CI:-}" = true ]; then
        echo "c-test: $1, which CI requires" >&2
        exit 1
    fi
    echo "c-test: SKIPPED: $1" >&2
    exit 0
}

# --- tools ------------------------------------------------------------------------------
work="${CARGO_TARGET_DIR:-$root/target}"
case "$work" in /*) ;; *) work="$root/$work" ;; esac
bin="$work/c-tests"
mkdir -p "$bin"

sanitizers_work() {
    printf 'int main(void){return 0;}\n' >"$bin/probe.c"
    "$cc" -fsanitize=address,undefined "$bin/probe.c" -o "$bin/probe" >/dev/null 2>&1 &&
        "$bin/probe" >/dev/null 2>&1
}
missing_tools() {
    local m=()
    command -v "${cc%% *}" >/dev/null || m+=("a C compiler ($cc)")
    command -v "${cxx%% *}" >/dev/null || m+=("a C++ compiler ($cxx)")
    command -v pkg-config >/dev/null || m+=("pkg-config")
    if [ ${#m[@]} -eq 0 ] && ! sanitizers_work; then
        m+=("the sanitizer runtimes (libasan, libubsan) for $cc")
    fi
    echo "${m[*]:-}"
}
missing="$(missing_tools)"
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "c-test: installing gcc g++ pkg-config (missing: $missing)" >&2
        export DEBIAN_FRONTEND=noninteractive
        { apt-get update -qq && apt-get install -y -qq gcc g++ pkg-config; } >&2 ||
            echo "c-test: apt-get could not install them" >&2
        missing="$(missing_tools)"
    fi
fi
if [ -n "$missing" ]; then
    ci_fail_or_skip "missing $missing (as root: apt-get install -y gcc g++ pkg-config)"
fi
[ "$tools_only" = 0 ] || exit 0

# --- build and install ------------------------------------------------------------------
prefix="$work/c-prefix"
static_prefix="$work/c-prefix-static"
echo "c-test: cargo test --workspace --no-run" >&2
cargo test --workspace --no-run
scripts/c-install.sh --profile test --no-build "$prefix"
scripts/c-install.sh --profile test --no-build --static-only "$static_prefix"

pc() { PKG_CONFIG_PATH="$1/lib/pkgconfig" pkg-config "${@:2}" ewise; }
warnings=(-Wall -Wextra -Werror -pedantic)
sanitize=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -g)
read -r -a shared_link <<<"$(pc "$prefix" --cflags --libs) -Wl,-rpath,$prefix/lib -pthread -lm"
read -r -a static_link <<<"$(pc "$static_prefix" --cflags --static --libs) -pthread -lm"
read -r -a cflags_extra <<<"${EWISE_C_CFLAGS:-}"

# --- compile ----------------------------------------------------------------------------
programs=()   # name
failed=()
compile() { # name, compiler, std, source, link flags...
    local name="$1" compiler="$2" std="$3" src="$4"
    shift 4
    local log="$bin/$name.build.log"
    if "$compiler" "$std" "${warnings[@]}" "${sanitize[@]}" "${cflags_extra[@]}" \
        -I crates/ewise-c/tests/c "$src" -o "$bin/$name" "$@" >"$log" 2>&1; then
        programs+=("$name")
    else
        echo "c-test: FAIL  build  $name ($src)"
        sed 's/^/    /' "$log" | tail -n 40
        failed+=("build $name")
    fi
}
shopt -s nullglob
for src in crates/ewise-c/tests/c/*.c; do
    name="$(basename "$src" .c)"
    compile "$name" "$cc" -std=c99 "$src" "${shared_link[@]}"
done
for src in crates/ewise-c/tests/cpp/*.cpp; do
    name="$(basename "$src" .cpp)-cpp"
    compile "$name" "$cxx" -std=c++17 "$src" "${shared_link[@]}"
done
compile example-sign "$cc" -std=c99 examples/c/sign.c "${shared_link[@]}"
compile example-sign-static "$cc" -std=c99 examples/c/sign.c "${static_link[@]}"
if [ -x "$bin/example-sign-static" ] && command -v readelf >/dev/null &&
    readelf -d "$bin/example-sign-static" | grep -q 'NEEDED.*libewise'; then
    echo "c-test: FAIL  build  example-sign-static needs the shared libewise"
    failed+=("static link")
fi

# --- run --------------------------------------------------------------------------------
# allocator_may_return_null: a failed allocation returns NULL (which ewise reports as
# EWISE_ERROR_OUT_OF_MEMORY) instead of ASan aborting the program.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
if [ -f crates/ewise-c/tests/c/lsan.supp ]; then
    export LSAN_OPTIONS="suppressions=$root/crates/ewise-c/tests/c/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
fi

devices=(cpu)
env_line="$(scripts/gpu-driver.sh)"
eval "$env_line"
if [ -n "$env_line" ]; then
    echo "c-test: GPU runs on lavapipe (${env_line#export })"
    devices+=(gpu)
else
    echo "c-test: no Vulkan driver: the GPU runs are SKIPPED"
fi

# LeakSanitizer takes the data of the loaded libraries as roots. The Vulkan loader
# dlcloses the driver at vkDestroyInstance, after which what lavapipe's globals still
# point to looks leaked ("Direct leak ... in <unknown module>"), so the GPU runs keep the
# driver loaded by preloading it (after the program's ASan runtime, which must come
# first).
driver_library() {
    local json lib
    for json in /usr/share/vulkan/icd.d/lvp_icd*.json; do
        lib="$(sed -n 's/.*"library_path": *"\([^"]*\)".*/\1/p' "$json")"
        if [ -n "$lib" ]; then
            echo "$lib"
            return
        fi
    done
}
preload_for() { # device, program
    local rt driver
    [ "$1" = gpu ] || return 0
    driver="$(driver_library)"
    [ -n "$driver" ] || return 0
    rt="$(ldd "$bin/$2" 2>/dev/null | awk '/libasan/ { print $3; exit }')"
    echo "${rt:+$rt }$driver${LD_PRELOAD:+ $LD_PRELOAD}"
}

passed=0
skipped=0
for device in "${devices[@]}"; do
    for name in "${programs[@]}"; do
        log="$bin/$name.$device.log"
        start=$SECONDS
        preload="$(preload_for "$device" "$name")"
        if EWISE_C_DEVICE="$device" LD_PRELOAD="$preload" \
            timeout 900 "$bin/$name" "$device" >"$log" 2>&1; then
            if grep -q '^SKIP' "$log"; then
                echo "c-test: SKIP  $device  $name: $(grep -m1 '^SKIP' "$log")"
                skipped=$((skipped + 1))
            else
                echo "c-test: PASS  $device  $name ($((SECONDS - start)) s)"
                passed=$((passed + 1))
            fi
        else
            rc=$?
            echo "c-test: FAIL  $device  $name (exit $rc; log $log)"
            tail -n 60 "$log" | sed 's/^/    /'
            failed+=("$device $name")
        fi
    done
done

echo "c-test: $passed passed, ${#failed[@]} failed, $skipped skipped"
if [ ${#failed[@]} -gt 0 ]; then
    printf 'c-test: failed: %s\n' "${failed[@]}"
    exit 1
fi
