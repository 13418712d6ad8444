#!/usr/bin/env bash
# Builds the npm package `ewise` into crates/ewise-web/pkg/: crates/ewise-web compiled
# for wasm32-unknown-unknown with SIMD128 (release), wasm-bindgen's `--target web` glue
# (ewise_web.js, ewise_web_bg.wasm), and the package's own entry module, TypeScript
# declarations, README and package.json from crates/ewise-web/js/. One package serves
# browsers and Node >= 20: its init() fetches the .wasm in a browser and reads it from
# disk in Node. It is an ES module (ewise.js) that CommonJS require()s too: ewise.cjs, the
# "require" entry, is ewise.js itself where Node can require() ES modules (20.19+, 22.12+)
# and elsewhere ewise.commonjs.cjs, a CommonJS copy that crates/ewise-web/js/commonjs.mjs
# converts from it (with ewise_web.commonjs.cjs; ewise.d.cts is ewise.d.ts for TypeScript's
# CommonJS resolution). Use it with `npm install ./crates/ewise-web/pkg`.
#
# Needs Node, cargo and rustup (the wasm32-unknown-unknown target is added when missing) and
# the wasm-bindgen CLI at exactly Cargo.lock's wasm-bindgen version: one on PATH is used
# when its version matches, else target/tools/bin/wasm-bindgen, else it is installed
# there (scripts/lib/wasm-bindgen-cli.sh: `cargo install wasm-bindgen-cli`, about 6.5
# minutes of CPU, from crates.io). What cannot be had is named and the build skips,
# exiting 0 (or EWISE_WEB_SKIP_STATUS, which scripts/web-test.sh sets to tell a skip from
# a build); under CI=true that is a failure.
#
# Environment: EWISE_WEB_TARGET_DIR (default ${CARGO_TARGET_DIR:-target}/web), the cargo
# target directory, kept apart so that its RUSTFLAGS do not rebuild the host's;
# EWISE_WEB_RUSTFLAGS (default "-C target-feature=+simd128"; give "" for a build
# without SIMD128). The tools go to target/tools (EWISE_WEB_TOOLS).
#
# Usage: scripts/web-build.sh
set -euo pipefail
cd "$(dirname "$0")/.."

who=web-build what="web build"
skip_status=${EWISE_WEB_SKIP_STATUS:-0}
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh
# shellcheck source=scripts/lib/wasm-bindgen-cli.sh
source scripts/lib/wasm-bindgen-cli.sh

command -v cargo >/dev/null || skip "needs cargo (https://rustup.rs)"
command -v node >/dev/null || skip "needs Node (node), to convert the CommonJS copy"
command -v rustup >/dev/null || skip "needs rustup, to add the wasm32-unknown-unknown target"
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    echo "web-build: rustup target add wasm32-unknown-unknown" >&2
    rustup target add wasm32-unknown-unknown >&2 || skip "rustup could not add the wasm32-unknown-unknown target"
fi

wasm_bindgen_cli
version=$wasm_bindgen_version
bindgen=$wasm_bindgen_bin/wasm-bindgen
web_target=${EWISE_WEB_TARGET_DIR:-${CARGO_TARGET_DIR:-target}/web}

echo "web-build: cargo build -p ewise-web --target wasm32-unknown-unknown --release" >&2
RUSTFLAGS=${EWISE_WEB_RUSTFLAGS--C target-feature=+simd128} \
    CARGO_PROFILE_RELEASE_LTO=true \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
    CARGO_PROFILE_RELEASE_PANIC=abort \
    cargo build -q -p ewise-web --target wasm32-unknown-unknown --release --target-dir "$web_target"

pkg=crates/ewise-web/pkg
js=crates/ewise-web/js
rm -rf "$pkg"
"$bindgen" --target web --weak-refs --out-dir "$pkg" \
    "$web_target/wasm32-unknown-unknown/release/ewise_web.wasm"
rm -f "$pkg/.gitignore"
cp "$js/ewise.js" "$js/ewise.d.ts" "$js/ewise.cjs" "$js/README.md" crates/ewise-web/LICENSE-MIT \
    crates/ewise-web/LICENSE-APACHE "$pkg/"
cp "$js/ewise.d.ts" "$pkg/ewise.d.cts"
node "$js/commonjs.mjs" "$pkg"
crate_version=$(awk '/^\[workspace.package\]/ { p = 1 } p && /^version = / { gsub(/version = |"/, ""); print; exit }' Cargo.toml)
sed "s/@VERSION@/$crate_version/" "$js/package.json" >"$pkg/package.json"

wasm_bytes=$(wc -c <"$pkg/ewise_web_bg.wasm")
gzip_bytes=$(gzip -9 -c "$pkg/ewise_web_bg.wasm" | wc -c)
echo "web-build: $pkg: ewise $crate_version (wasm-bindgen $version); ewise_web_bg.wasm $wasm_bytes bytes, $gzip_bytes gzipped" >&2
