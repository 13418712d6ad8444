#!/usr/bin/env bash
# Other targets: `cargo check` of the workspace for macOS on Apple silicon
# (aarch64-apple-darwin), warnings as errors, and the tests of ewise-core and ewise-cpu
# built for aarch64-unknown-linux-gnu and run under qemu-user, where the portable kernels
# (NEON through the compiler) are the only ones (the CLI is the same program on every
# Linux: scripts/dist-check.sh runs the aarch64 CLI's tarball under qemu-user against the
# x86-64 CLI's bytes). Windows is scripts/windows-test.sh's: it builds and runs the tests
# of six crates for x86_64-pc-windows-gnu (no code tells the MSVC and GNU Windows targets
# apart).
#
# Needs the two rustup targets and, for the aarch64 tests, qemu-user and
# gcc-aarch64-linux-gnu (installed here when missing and running as root). Without them it
# says what is missing and skips (exit 0), or fails under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."

who=cross-check what="cross check"
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh

targets=(aarch64-apple-darwin aarch64-unknown-linux-gnu)
installed="$(rustup target list --installed 2>/dev/null || true)"
for t in "${targets[@]}"; do
    if ! grep -qx "$t" <<<"$installed"; then
        rustup target add "$t" >&2 || skip "rustup could not add the target $t"
    fi
done

echo "cross-check: cargo check --workspace --target aarch64-apple-darwin" >&2
RUSTFLAGS="-D warnings" cargo check -q --workspace --target aarch64-apple-darwin

linker=aarch64-linux-gnu-gcc
runner=qemu-aarch64
sysroot=/usr/aarch64-linux-gnu
packages="qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
if ! command -v "$linker" >/dev/null || ! command -v "$runner" >/dev/null || [ ! -d "$sysroot/lib" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "cross-check: installing $packages (apt-get)" >&2
        # shellcheck disable=SC2086
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages; } >&2 \
            || skip "apt-get could not install $packages"
    else
        skip "needs $linker and $runner (Debian: apt-get install $packages)"
    fi
fi

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER="$linker"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$runner -L $sysroot"
# qemu-user aborts in the child when a multi-threaded guest forks (a TCG assertion in
# cpu_exec), so ewise-cpu's fork test runs natively only.
export EWISE_FORK_TESTS_SKIP="qemu-user cannot run a forked child of a multi-threaded process"
echo "cross-check: cargo test for aarch64-unknown-linux-gnu under $runner" >&2
cargo test --target aarch64-unknown-linux-gnu -p ewise-core -p ewise-cpu "$@"
