# Sourced by the scripts that need the wasm-bindgen CLI (scripts/web-build.sh,
# scripts/web-rust-test.sh), from the repository root, after scripts/lib/skip.sh.
#
# wasm_bindgen_cli: sets `wasm_bindgen_version` to Cargo.lock's wasm-bindgen version and
# `wasm_bindgen_bin` to a directory holding `wasm-bindgen` and `wasm-bindgen-test-runner`
# of exactly that version: the one of `wasm-bindgen` on PATH when its version matches,
# else $EWISE_WEB_TOOLS/bin (default target/tools/bin), else it installs them there
# (`cargo install --debug --no-default-features --force wasm-bindgen-cli` from crates.io:
# unoptimized, since its optimized build took about 6.5 minutes of CPU and the tools' own
# run time is seconds; without its default TLS stack (rustls and ring), since the test
# runner talks plain HTTP to a WebDriver on this machine; without --locked, since its
# locked webpki-roots may not be served), building in
# ${EWISE_WEB_TARGET_DIR:-${CARGO_TARGET_DIR:-target}/web}/tools-build, which is removed
# afterwards (about 440 MB). What cannot be had is named through skip.
wasm_bindgen_cli() {
    wasm_bindgen_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
    [ -n "$wasm_bindgen_version" ] || skip "Cargo.lock names no wasm-bindgen version"
    local tools=${EWISE_WEB_TOOLS:-$PWD/target/tools}
    local candidate dir
    wasm_bindgen_bin=""
    for candidate in "$(command -v wasm-bindgen || true)" "$tools/bin/wasm-bindgen"; do
        [ -n "$candidate" ] && [ -x "$candidate" ] || continue
        dir=$(dirname "$candidate")
        if [ "$("$candidate" --version 2>/dev/null | awk '{ print $2 }')" = "$wasm_bindgen_version" ] &&
            [ "$("$dir/wasm-bindgen-test-runner" --version 2>/dev/null | awk '{ print $2 }')" = "$wasm_bindgen_version" ]; then
            wasm_bindgen_bin=$dir
            return
        fi
    done
    command -v cargo >/dev/null || skip "needs cargo, to install wasm-bindgen-cli $wasm_bindgen_version"
    local build=${EWISE_WEB_TARGET_DIR:-${CARGO_TARGET_DIR:-target}/web}/tools-build
    echo "$who: installing wasm-bindgen-cli $wasm_bindgen_version into $tools (cargo install; minutes)" >&2
    nice cargo install wasm-bindgen-cli --debug --no-default-features --version "$wasm_bindgen_version" --root "$tools" \
        --target-dir "$build" --force >&2 ||
        skip "cargo install wasm-bindgen-cli --version $wasm_bindgen_version failed (it needs crates.io)"
    rm -rf "$build"
    wasm_bindgen_bin=$tools/bin
    [ "$("$wasm_bindgen_bin/wasm-bindgen-test-runner" --version 2>/dev/null | awk '{ print $2 }')" = "$wasm_bindgen_version" ] ||
        skip "cargo install wasm-bindgen-cli --version $wasm_bindgen_version left no wasm-bindgen-test-runner $wasm_bindgen_version in $tools/bin"
}
