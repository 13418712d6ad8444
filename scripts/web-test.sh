#!/usr/bin/env bash
# The npm package's tests: builds crates/ewise-web/pkg/ (scripts/web-build.sh), packs it
# with `npm pack` and installs the tarball into a scratch project under target/ (as a
# user would: `npm install ./crates/ewise-web/pkg` or the tarball), then runs
# crates/ewise-web/tests/*.test.mjs with `node --test` against the installed copy (or
# against pkg/ itself where npm is missing). Where TypeScript's tsc is at hand
# (target/tools/node_modules/.bin/tsc, or EWISE_WEB_TSC), the declarations are also
# type-checked against crates/ewise-web/tests/types.ts (`npm install --prefix
# target/tools typescript` puts one there).
#
# Needs Node >= 20. Without it, or when web-build.sh skips, the tests skip with a
# message (exit 0); under CI=true that is a failure.
#
# crates/ewise-web/tests/fuzz.test.mjs is property-based (fast-check@4.10.2, installed
# from npm into target/tools, or the package directory EWISE_WEB_FAST_CHECK): each
# property runs with a fixed seed and then a random one, which it prints (replay with
# EWISE_FUZZ_SEED=SEED; EWISE_FUZZ_RUNS sets the runs, default 1000).
#
# The package as a user's project takes it: a project made with `npm init -y` (CommonJS)
# installs the tarball and runs require("ewise") and import from "ewise"
# (crates/ewise-web/tests/package/), with Node's require(esm) and without it
# (--no-experimental-require-module: the CommonJS copy, as Node 20 before 20.19 runs it),
# and the blocks of crates/ewise-web/js/README.md; the README's first example is bundled
# with esbuild 0.28.2 (from npm into target/tools) for browsers and for Node,
# and the Node bundles run.
#
# Also runs examples/web/*.test.mjs (the page's .npy reader and writer and its JavaScript
# loops; the .npy files are compared with numpy's where $PYTHON, by default
# target/wheel-venv's python or python3, has numpy, which CI=true requires).
#
# Usage: scripts/web-test.sh [NODE --test ARGS...]   (e.g. --test-name-pattern=dml)
set -euo pipefail
cd "$(dirname "$0")/.."

who=web-test what="web test"
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh

command -v node >/dev/null || skip "needs Node >= 20 (node)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || skip "needs Node >= 20; this is Node $(node --version)"

status=0
EWISE_WEB_SKIP_STATUS=75 scripts/web-build.sh || status=$?
[ "$status" -ne 75 ] || skip "the package was not built (see web-build's message)"
[ "$status" -eq 0 ] || exit "$status"
pkg=crates/ewise-web/pkg

tools=${EWISE_WEB_TOOLS:-$PWD/target/tools}

# esbuild, pinned, into the tools directory: the README's example is bundled with it.
esbuild_version=0.28.2

# The package as users' projects take it, from the tarball $1: a project made with `npm
# init -y` (CommonJS) runs require("ewise") (tests/package/entry.cjs: ewise.js through
# require(esm), and with --no-experimental-require-module the CommonJS copy, as Node 20
# before 20.19 runs it) and import from "ewise" (entry.mjs), then the README's blocks
# (js/README.md: `js cjs` blocks as CommonJS, `js` and `js esm` ones as ES modules), then
# the README's first block bundled by esbuild for browsers and for Node (ES modules) and
# its first `js cjs` block for Node (CommonJS), the .wasm copied beside the bundles as the
# README says, the Node bundles run.
commonjs_and_bundles() {
    local project=${CARGO_TARGET_DIR:-target}/web/npm-init f
    rm -rf "$project"
    mkdir -p "$project"
    project=$(cd "$project" && pwd)
    (cd "$project" && npm init -y >/dev/null &&
        npm install --offline --no-audit --no-fund --silent "$1" >&2)
    cp crates/ewise-web/tests/package/entry.cjs crates/ewise-web/tests/package/entry.mjs "$project/"
    local runs=("entry.cjs" "entry.mjs")
    if node --no-experimental-require-module -e 0 2>/dev/null; then
        runs+=("--no-experimental-require-module entry.cjs")
    fi
    mapfile -t blocks < <(node crates/ewise-web/tests/package/readme-blocks.mjs crates/ewise-web/js/README.md "$project")
    [ "${#blocks[@]}" -gt 0 ] || { echo "web-test: crates/ewise-web/js/README.md has no js blocks" >&2; exit 1; }
    runs+=("${blocks[@]}")
    for f in "${blocks[@]}"; do
        case $f in *.cjs) runs+=("--no-experimental-require-module $f") ;; esac
    done
    for f in "${runs[@]}"; do
        echo "web-test: node $f (in $project, made by npm init -y)" >&2
        # shellcheck disable=SC2086 # $f is node's flags and a file name
        (cd "$project" && node $f >/dev/null) ||
            { echo "web-test: node $f failed in $project" >&2; exit 1; }
    done

    local esbuild=$tools/node_modules/.bin/esbuild
    if [ "$("$esbuild" --version 2>/dev/null)" != "$esbuild_version" ]; then
        echo "web-test: npm install esbuild@$esbuild_version into $tools" >&2
        mkdir -p "$tools"
        npm install --prefix "$tools" --no-audit --no-fund --save-exact --silent "esbuild@$esbuild_version" >&2 ||
            {
                [ "${CI:-}" != "true" ] || { echo "web-test: npm could not install esbuild@$esbuild_version, and CI=true" >&2; exit 1; }
                echo "web-test: npm could not install esbuild@$esbuild_version: the README's example is not bundled (a failure under CI=true)" >&2
                return 0
            }
    fi
    local first=${blocks[0]} cjs
    cjs=$(printf '%s\n' "${blocks[@]}" | grep -m 1 '\.cjs$') ||
        { echo "web-test: crates/ewise-web/js/README.md has no js cjs block" >&2; exit 1; }
    mkdir -p "$project/dist"
    cp "$project/node_modules/ewise/ewise_web_bg.wasm" "$project/dist/"
    echo "web-test: esbuild $first for browsers and for Node, $cjs for Node as CommonJS; the Node bundles run" >&2
    (cd "$project" &&
        "$esbuild" "$first" --bundle --log-level=warning --platform=browser --format=esm --outfile=dist/browser.mjs &&
        "$esbuild" "$first" --bundle --log-level=warning --platform=node --format=esm --outfile=dist/node.mjs &&
        "$esbuild" "$cjs" --bundle --log-level=warning --platform=node --format=cjs --outfile=dist/node.cjs &&
        node dist/node.mjs >/dev/null && node dist/node.cjs >/dev/null) ||
        { echo "web-test: bundling with esbuild $esbuild_version, or running a Node bundle, failed in $project" >&2; exit 1; }
    if grep -q '"ewise"' "$project/dist/browser.mjs" "$project/dist/node.mjs" "$project/dist/node.cjs"; then
        echo "web-test: an esbuild bundle still imports \"ewise\" instead of holding it" >&2
        exit 1
    fi
}

scratch=${CARGO_TARGET_DIR:-target}/web/npm-test
if command -v npm >/dev/null; then
    rm -rf "$scratch"
    mkdir -p "$scratch"
    scratch=$(cd "$scratch" && pwd)
    tarball=$(npm pack --silent --pack-destination "$scratch" "./$pkg" | tail -n 1)
    (cd "$scratch" && echo '{ "private": true, "type": "module" }' >package.json &&
        npm install --offline --no-audit --no-fund --silent "./$tarball" >&2)
    export EWISE_WEB_PKG=$scratch/node_modules/ewise
    (cd "$scratch" && node --input-type=module -e "
        import { init, sign } from 'ewise';
        await init();
        if (sign(new Int8Array([-5]))[0] !== -1) throw new Error('sign gave the wrong value');
    ") || { echo "web-test: import { init, sign } from \"ewise\" failed in $scratch" >&2; exit 1; }
    cd_note="the npm-installed $tarball"
    commonjs_and_bundles "$scratch/$tarball"
else
    echo "web-test: no npm: testing $pkg directly, without packing it" >&2
    export EWISE_WEB_PKG=$PWD/$pkg
    cd_note=$pkg
fi

tsc=${EWISE_WEB_TSC:-target/tools/node_modules/.bin/tsc}
if [ -x "$tsc" ]; then
    echo "web-test: $tsc --noEmit crates/ewise-web/tests/types.ts" >&2
    "$tsc" --noEmit --strict --target es2022 --lib es2022,dom --module nodenext \
        --moduleResolution nodenext crates/ewise-web/tests/types.ts
else
    echo "web-test: no tsc ($tsc): the declarations are not type-checked" >&2
fi

# crates/ewise-web/tests/fuzz.test.mjs needs fast-check (pinned), from npm into the tools
# directory unless EWISE_WEB_FAST_CHECK names one; without it that test skips, saying
# so, and under CI=true fails.
fast_check_version=4.10.2
if [ -z "${EWISE_WEB_FAST_CHECK:-}" ]; then
    installed=$(node -p "try { require('$tools/node_modules/fast-check/package.json').version } catch { '' }")
    if [ "$installed" != "$fast_check_version" ] && command -v npm >/dev/null; then
        echo "web-test: npm install fast-check@$fast_check_version into $tools" >&2
        mkdir -p "$tools"
        npm install --prefix "$tools" --no-audit --no-fund --save-exact --silent "fast-check@$fast_check_version" >&2 ||
            echo "web-test: npm could not install fast-check@$fast_check_version: fuzz.test.mjs skips (fails under CI=true)" >&2
    fi
    [ ! -f "$tools/node_modules/fast-check/package.json" ] || export EWISE_WEB_FAST_CHECK=$tools/node_modules/fast-check
fi

# The example page's .npy module is checked against numpy: the wheel's venv has it.
if [ -z "${PYTHON:-}" ] && [ -x target/wheel-venv/bin/python ]; then
    export PYTHON=$PWD/target/wheel-venv/bin/python
fi
echo "web-test: node --test against $cd_note, and examples/web's modules (Node $(node --version))" >&2
node --test "$@" crates/ewise-web/tests/*.test.mjs examples/web/*.test.mjs
