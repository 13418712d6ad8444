# Sourced by scripts/browser-test.sh and scripts/deno-test.sh, from the repository root.
#
# wgsl_sources WHO: writes the WGSL of every ewise-gpu kernel into target/web/wgsl (for
# crates/ewise-web/tests/browser/wgsl.test.mjs) with ewise-gpu's wgsl_sources example,
# built as `cargo test --workspace` builds it (the test profile, the workspace's
# features), so that after the tests nothing is built again (`cargo run -p ewise-gpu`
# would build wgpu once more, for ewise-gpu's features alone).
wgsl_sources() {
    local target_dir=${CARGO_TARGET_DIR:-target}
    echo "$1: the WGSL of every ewise-gpu kernel into target/web/wgsl (for wgsl.test.mjs)" >&2
    cargo build -q --workspace --examples --profile test >&2
    rm -rf target/web/wgsl
    "$target_dir/debug/examples/wgsl_sources" target/web/wgsl >&2
}
