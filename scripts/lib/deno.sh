# Sourced by the scripts that run JavaScript under Deno (scripts/deno-test.sh,
# scripts/doc-test.sh), from the repository root.
#
# deno_cli: sets `deno_version` (the pinned version) and `deno_bin` (the deno binary of
# exactly that version): $EWISE_WEB_TOOLS/node_modules/.bin/deno (default target/tools)
# when it is that version, else it installs the npm package deno@$deno_version there
# (`npm install --save-exact`, about 100 MB: the npm package ships the binary for this
# platform as an optional dependency). Returns 1, saying why on stderr, when no such
# Deno can be had (no npm, no registry, no binary for this platform); the caller decides
# whether that skips or fails.

# Deno 2.9.6: WebGPU without a flag (wgpu inside: Vulkan, or OpenGL through EGL), the
# node:test and node:assert modules, and a process.versions.node that ewise's init() reads.
deno_version=2.9.6

deno_cli() {
    local tools=${EWISE_WEB_TOOLS:-$PWD/target/tools}
    deno_bin=$tools/node_modules/.bin/deno
    if [ "$("$deno_bin" --version 2>/dev/null | awk 'NR == 1 { print $2 }')" = "$deno_version" ]; then
        return 0
    fi
    if ! command -v npm >/dev/null; then
        echo "${who:-deno}: needs npm, to install deno@$deno_version" >&2
        return 1
    fi
    echo "${who:-deno}: npm install deno@$deno_version into $tools (about 100 MB)" >&2
    mkdir -p "$tools"
    if ! npm install --prefix "$tools" --no-audit --no-fund --save-exact --silent "deno@$deno_version" >&2; then
        echo "${who:-deno}: npm could not install deno@$deno_version (it needs the npm registry)" >&2
        return 1
    fi
    local got
    got=$("$deno_bin" --version 2>&1 | head -n 1) || true
    if [ "$(awk '{ print $2 }' <<<"$got")" != "$deno_version" ]; then
        echo "${who:-deno}: npm installed deno@$deno_version, but $deno_bin --version says: ${got:-nothing}" >&2
        return 1
    fi
}
