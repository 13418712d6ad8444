#!/usr/bin/env bash
# The npm package in a browser: crates/ewise-web/tests/browser/*.test.mjs run inside
# headless Chromium with WebGPU (on SwiftShader where there is no GPU: Debian's chromium
# brings it), then the example page's check (examples/web/check.mjs: a .npy through the
# page, a screenshot into target/web/browser-out/). crates/ewise-web/browser/run.mjs
# serves the repository root read-only on 127.0.0.1 and drives the browser with
# puppeteer-core.
#
# Installs what is missing: Debian's chromium (apt-get, as root), puppeteer-core
# $puppeteer_version from npm into target/tools (EWISE_WEB_TOOLS), and the package
# (scripts/web-build.sh). What cannot be had is named and the tests skip (exit 0), or
# fail under CI=true.
#
# Environment: EWISE_CHROMIUM (the browser; default: chromium on PATH), and run.mjs's
# EWISE_BROWSER_OUT and EWISE_BROWSER_TIMEOUT_S.
#
# Usage: scripts/browser-test.sh [REGEXP]   (only the test modules whose file name matches)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

who=browser-test what="browser test"
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh
source scripts/lib/wgsl-sources.sh

# The last puppeteer-core that runs on Node 20 (25 needs Node >= 22.12).
puppeteer_version=24.43.1

command -v node >/dev/null || skip "needs Node >= 20 (node)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || skip "needs Node >= 20; this is Node $(node --version)"

chromium=${EWISE_CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "browser-test: apt-get install chromium (about 220 MB)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2 ||
            skip "apt-get could not install chromium"
        chromium=$(command -v chromium || true)
    fi
    [ -n "$chromium" ] || skip "needs Chromium with WebGPU (Debian: apt-get install chromium; or set EWISE_CHROMIUM)"
fi

tools=${EWISE_WEB_TOOLS:-$root/target/tools}
installed=$(node -p "try { require('$tools/node_modules/puppeteer-core/package.json').version } catch { '' }")
if [ "$installed" != "$puppeteer_version" ]; then
    command -v npm >/dev/null || skip "needs npm, to install puppeteer-core"
    echo "browser-test: npm install puppeteer-core@$puppeteer_version into $tools" >&2
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --save-exact "puppeteer-core@$puppeteer_version" >&2 ||
        skip "npm could not install puppeteer-core@$puppeteer_version (it needs the npm registry)"
fi

status=0
EWISE_WEB_SKIP_STATUS=75 scripts/web-build.sh || status=$?
[ "$status" -ne 75 ] || skip "the package was not built (see web-build's message)"
[ "$status" -eq 0 ] || exit "$status"

wgsl_sources browser-test

echo "browser-test: $("$chromium" --version 2>/dev/null | head -n 1), puppeteer-core $puppeteer_version" >&2
EWISE_CHROMIUM=$chromium EWISE_PUPPETEER=$tools node crates/ewise-web/browser/run.mjs "$@"
