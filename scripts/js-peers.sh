#!/usr/bin/env bash
# Runs the JavaScript peers bench (bench/js/peers.mjs): the npm package `ewise` against
# TensorFlow.js (wasm and cpu backends), onnxruntime-web and onnxruntime-node, a plain
# JavaScript loop and a TypedArray copy, in one Node process; markdown on stdout. Not part
# of the tests or of CI.
#
# Installs the peers, pinned, with npm into target/tools/js-peers (EWISE_JS_PEERS_DIR)
# when they are missing or their pins changed; onnxruntime-node's install script is told
# to skip its download (ONNXRUNTIME_NODE_INSTALL=skip: its CPU binaries ship in the npm
# package; only the CUDA ones are fetched from elsewhere). Builds crates/ewise-web/pkg
# (scripts/web-build.sh) only when it is missing. Without Node or npm it skips loudly
# (a failure under CI=true); a peer that does not install or load is reported by the
# bench as unavailable, with the reason, and the rest run.
#
# Usage: scripts/js-peers.sh [bench options: --rounds 11 --sizes 4Ki,64Ki,1Mi,16Mi ...;
#        node bench/js/peers.mjs --help lists them]
set -euo pipefail
cd "$(dirname "$0")/.."

who=js-peers what="JavaScript peers bench"
# shellcheck source=scripts/lib/skip.sh
source scripts/lib/skip.sh

command -v node >/dev/null || skip "needs Node >= 20 (node)"
command -v npm >/dev/null || skip "needs npm, to install the peers"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || skip "needs Node >= 20; found $(node --version)"

peers=${EWISE_JS_PEERS_DIR:-target/tools/js-peers}
manifest='{
  "private": true,
  "description": "Peers of bench/js/peers.mjs, installed by scripts/js-peers.sh",
  "dependencies": {
    "@tensorflow/tfjs-core": "4.22.0",
    "@tensorflow/tfjs-backend-cpu": "4.22.0",
    "@tensorflow/tfjs-backend-wasm": "4.22.0",
    "onnxruntime-web": "1.30.0",
    "onnxruntime-node": "1.30.0"
  }
}'
mkdir -p "$peers"
if [ ! -f "$peers/package.json" ] || [ "$(cat "$peers/package.json")" != "$manifest" ] || [ ! -d "$peers/node_modules" ]; then
    printf '%s\n' "$manifest" >"$peers/package.json"
    echo "js-peers: npm install in $peers" >&2
    if ! (cd "$peers" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --loglevel=error >&2); then
        echo "js-peers: npm install failed; the bench runs with what loads" >&2
        rm -f "$peers/package.json"
    fi
fi

if [ ! -f crates/ewise-web/pkg/ewise.js ]; then
    scripts/web-build.sh
    [ -f crates/ewise-web/pkg/ewise.js ] || skip "crates/ewise-web/pkg was not built (scripts/web-build.sh said why)"
fi

exec node bench/js/peers.mjs --peers "$peers" "$@"
