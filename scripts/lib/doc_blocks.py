#!/usr/bin/env python3
"""Finds the fenced code blocks of Markdown files and runs each as a user would paste it.

Used by scripts/doc-test.sh, which finds the tools and passes them in; standard library
only. The convention (README.md, docs/*.md, the crates' READMEs):

- A fence's info string names its language; a fence without one is an error.
- ``sh``, ``rust``, ``python``, ``js`` and ``c`` blocks are run; every other language
  (``text``, ``console``, ``toml``, ``json``, ...) is not.
- ``<!-- not run: REASON -->`` on the line right before a fence marks a block of a run
  language that is not run, with its reason (the exception).
- ``rust``: a complete program (``fn main``), built as ``src/bin/blockN.rs`` of one scratch
  crate that depends on ``ewise`` by path (offline, the workspace's Cargo.lock, its
  target directory, the dev profile: that of scripts/dist-check.sh's crate on ``ewise``,
  so the dependencies are built already), then run. Attributes after a comma (``rust,no_run``) are rustdoc's
  and are ignored here: the program is run. A ``toml`` block right before a rust block
  holds extra ``[dependencies]`` lines for it (an ``ewise`` line there is replaced by the
  path dependency).
- ``python``: in a fresh empty folder, twice: as a script (``python block.py``) and pasted
  into the interactive interpreter (``python -i`` reading the block on stdin, as a REPL
  paste is read: a compound statement ends at a blank line); either failing (exit status,
  or a traceback or SyntaxError in the REPL's output) fails the block.
- ``js``: in a scratch npm project (``npm init -y``: CommonJS by default) with the npm
  package installed from its ``npm pack`` tarball; as ESM (``blockN.mjs``, as written) and
  as CommonJS (``blockN.cjs``: ``import ... from "m"`` lines turned into ``require("m")``,
  the body wrapped in an async function for its top-level ``await``). ``js esm`` marks a
  block that is ESM only; a block written with ``require`` runs as CommonJS only.
- ``js deno``: under Deno (``--deno``, the pinned one scripts/lib/deno.sh installs), not
  Node: its run command is the block's first comment line that starts with ``deno run``
  (``// deno run --allow-read=... main.mjs``), permissions and all; the block is saved as
  the file the command names, in the scratch npm project above (so ``node_modules/ewise``
  is there), and the command is run with bash, Deno's folder first on PATH.
- ``c``: its build command is the block's first comment line that starts with
  ``cc``/``c++``/``gcc``/``clang`` (``// cc prog.c $(pkg-config ...) -o prog && ./prog``);
  the block is saved as the ``.c`` file the command names, in a scratch folder, and the
  command is run with bash, ``HOME`` a scratch home whose ``.local`` holds the C library
  tarball unpacked as README's Install section does, and ``PKG_CONFIG_PATH`` its
  ``lib/pkgconfig``.
- ``sh``: ``bash -euo pipefail`` in a fresh scratch folder, with the CLI's folder and the
  Python venv's ``bin`` first on PATH.

Every run has a time limit. Prints one line per block (FILE:LINE, language, ok / failed /
not run and why) and exits 1 when any block failed or a fence has no info string.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUN_LANGUAGES = ("sh", "rust", "python", "js", "c")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
NOT_RUN = re.compile(r"^\s*<!--\s*not run:\s*(?P<reason>.*?)\s*-->\s*$")
DENO_COMMAND = re.compile(r"^\s*//\s*(?P<cmd>deno\s+run\s.*?)\s*$")
C_COMMAND = re.compile(r"^\s*(?://|/\*)\s*(?P<cmd>(?:cc|c\+\+|gcc|g\+\+|clang|clang\+\+)\s.*?)\s*(?:\*/)?\s*$")
ESM_IMPORT = re.compile(
    r"""^[ \t]*import\s+(?P<what>[^;"'()]+?)\s+from\s+(?P<q>["'])(?P<mod>[^"']+)(?P=q)[ \t]*;?""", re.M
)
BARE_IMPORT = re.compile(r"""^[ \t]*import\s+(?P<q>["'])(?P<mod>[^"']+)(?P=q)[ \t]*;?""", re.M)
TRACEBACK = re.compile(r"^(Traceback \(most recent call last\)|\s*(SyntaxError|IndentationError|TabError): )", re.M)


@dataclasses.dataclass
class Block:
    path: Path
    line: int
    info: str
    text: str
    not_run: str | None
    before: Block | None  # the block right before this one in its file, if only prose lies between

    @property
    def lang(self) -> str:
        return re.split(r"[,\s]+", self.info.strip(), maxsplit=1)[0].lower()

    @property
    def attrs(self) -> list[str]:
        return [a for a in re.split(r"[,\s]+", self.info.strip())[1:] if a]

    def where(self, root: Path) -> str:
        try:
            name = self.path.resolve().relative_to(root)
        except ValueError:
            name = self.path
        return f"{name}:{self.line}"


@dataclasses.dataclass
class Result:
    block: Block
    status: str  # "ok", "failed", "not run"
    detail: str = ""
    seconds: float = 0.0


def extract(path: Path) -> tuple[list[Block], list[str]]:
    """The fenced blocks of one Markdown file, and its fences that have no info string."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks: list[Block] = []
    errors: list[str] = []
    i = 0
    last_close = -1
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent, info = m["fence"], m["indent"], m["info"].strip()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            c = FENCE.match(lines[i])
            if c and c["fence"][0] == fence[0] and len(c["fence"]) >= len(fence) and not c["info"].strip():
                break
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        if not info:
            errors.append(f"{path}:{start + 1}: a fence without an info string (say its language: sh, text, ...)")
        prev = lines[start - 1] if start > 0 else ""
        marker = NOT_RUN.match(prev)
        reason = marker["reason"] if marker else None
        if marker and not reason:
            errors.append(f"{path}:{start}: '<!-- not run: -->' without a reason")
        between = lines[last_close + 1 : start - (1 if marker else 0)] if blocks else []
        before = blocks[-1] if blocks and all(not FENCE.match(x) for x in between) and len(between) <= 3 else None
        blocks.append(Block(path, start + 1, info, "\n".join(body) + "\n", reason, before))
        last_close = i
        i += 1
    return blocks, errors


class Runner:
    def __init__(self, args: argparse.Namespace):
        self.root: Path = args.root.resolve()
        self.target: Path = args.target_dir.resolve()
        self.python: str | None = absolute(args.python)
        self.cli_dir: str | None = absolute(args.cli_dir)
        self.npm_pkg: str | None = absolute(args.npm_pkg)
        self.c_tarball: str | None = absolute(args.c_tarball)
        self.deno: str | None = absolute(args.deno)
        self.timeout: int = args.timeout
        self.scratch = Path(tempfile.mkdtemp(prefix="ewise-doc-test."))
        self.keep = args.keep
        self.verbose = args.verbose
        self._npm_project: Path | None = None
        self._c_home: Path | None = None

    def close(self) -> None:
        if self.keep:
            print(f"doc-test: scratch files kept in {self.scratch}")
        else:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def folder(self, name: str) -> Path:
        d = Path(tempfile.mkdtemp(prefix=name + ".", dir=self.scratch))
        return d

    def run(self, cmd: list[str], cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None,
            timeout: int | None = None) -> tuple[int, str]:
        try:
            p = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout or self.timeout)
            return p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            return 124, out + f"\n(timed out after {timeout or self.timeout} s)"

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        path = env.get("PATH", "")
        if self.python:
            path = str(Path(self.python).parent) + os.pathsep + path
        if self.cli_dir:
            path = self.cli_dir + os.pathsep + path
        env["PATH"] = path
        env.update(extra)
        return env

    # --- rust -------------------------------------------------------------------------------
    def rust(self, blocks: list[Block]) -> list[Result]:
        if not blocks:
            return []
        crate = self.scratch / "rust-blocks"
        (crate / "src" / "bin").mkdir(parents=True)
        deps = {"ewise": f'{{ path = "{self.root / "crates" / "ewise"}" }}'}
        for b in blocks:
            if b.before is not None and b.before.lang == "toml":
                deps.update(toml_dependencies(b.before.text))
        manifest = ["[package]", 'name = "doc-blocks"', 'version = "0.0.0"', 'edition = "2021"', "publish = false",
                    "", "[dependencies]"] + [f"{k} = {v}" for k, v in deps.items()]
        (crate / "Cargo.toml").write_text("\n".join(manifest) + "\n")
        shutil.copy(self.root / "Cargo.lock", crate / "Cargo.lock")
        names = {}
        for n, b in enumerate(blocks, 1):
            names[id(b)] = f"block{n}"
            (crate / "src" / "bin" / f"block{n}.rs").write_text(b.text)
        for name in names.values():
            (self.target / "debug" / name).unlink(missing_ok=True)
        env = self.env(CARGO_TARGET_DIR=str(self.target))
        t0 = time.monotonic()
        # The dev profile: scripts/dist-check.sh builds a new crate on `ewise` alone with it,
        # so every dependency, with the features a lone `ewise` dependency gives, is built already.
        rc, out = self.run(["cargo", "build", "--offline", "--bins", "--message-format", "short"], crate, env,
                           timeout=1800)
        build_s = time.monotonic() - t0
        built = "built" if rc == 0 else f"failed to build (cargo's exit status {rc})"
        print(f"doc-test: rust blocks: {len(blocks)}, {built} as one crate in {build_s:.0f} s", flush=True)
        results = []
        bindir = self.target / "debug"
        for b in blocks:
            name = names[id(b)]
            if rc != 0:
                mine = [ln for ln in out.splitlines() if f"src/bin/{name}.rs" in ln]
                if mine or not (bindir / name).exists():
                    results.append(Result(b, "failed", "does not compile:\n" + "\n".join(mine or out.splitlines()[-20:])))
                    continue
            t0 = time.monotonic()
            brc, bout = self.run([str(bindir / name)], self.folder("rust"), self.env())
            results.append(self.outcome(b, brc, bout, time.monotonic() - t0))
        return results

    # --- python -----------------------------------------------------------------------------
    def python_block(self, b: Block) -> Result:
        if not self.python:
            return Result(b, "failed", "no Python venv with ewise installed (make target/wheel-venv with scripts/dist-check.sh)")
        t0 = time.monotonic()
        d = self.folder("python")
        script = self.scratch / f"{d.name}.py"
        script.write_text(b.text)
        rc, out = self.run([self.python, str(script)], d, self.env())
        if rc != 0:
            return Result(b, "failed", "as a script:\n" + out, time.monotonic() - t0)
        d = self.folder("python-repl")
        # A paste ends with a blank line, which closes a compound statement left open.
        rc, repl = self.run([self.python, "-i", "-q"], d, self.env(PYTHONSTARTUP=""), stdin=b.text + "\n")
        if rc != 0 or TRACEBACK.search(repl):
            return Result(b, "failed", "pasted into the interpreter (python -i):\n" + repl, time.monotonic() - t0)
        return Result(b, "ok", out if self.verbose else "", time.monotonic() - t0)

    # --- js ---------------------------------------------------------------------------------
    def npm_project(self) -> Path:
        if self._npm_project is None:
            if not self.npm_pkg or not Path(self.npm_pkg, "package.json").exists():
                raise RuntimeError("no npm package (scripts/web-build.sh builds crates/ewise-web/pkg)")
            proj = self.scratch / "npm-project"
            proj.mkdir()
            env = self.env(npm_config_audit="false", npm_config_fund="false", npm_config_update_notifier="false")
            for cmd in (["npm", "init", "-y"], ["npm", "pack", "--silent", "--pack-destination", str(proj), self.npm_pkg]):
                rc, out = self.run(cmd, proj, env, timeout=120)
                if rc != 0:
                    raise RuntimeError(f"{' '.join(cmd)} failed:\n{out}")
            tarball = sorted(proj.glob("*.tgz"))[-1]
            rc, out = self.run(["npm", "install", "--offline", "--no-save", str(tarball)], proj, env, timeout=120)
            if rc != 0:
                raise RuntimeError(f"npm install {tarball.name} failed:\n{out}")
            self._npm_project = proj
        return self._npm_project

    def js_block(self, b: Block, n: int) -> Result:
        t0 = time.monotonic()
        try:
            proj = self.npm_project()
        except RuntimeError as e:
            return Result(b, "failed", str(e))
        if "deno" in b.attrs:
            return self.deno_block(b, proj)
        uses_require = re.search(r"\brequire\s*\(", b.text) is not None
        uses_import = re.search(r"^\s*import\s", b.text, re.M) is not None
        forms = []
        if not (uses_require and not uses_import):
            forms.append(("ESM", f"block{n}.mjs", b.text))
        if "esm" not in b.attrs and not (uses_import and uses_require):
            forms.append(("CommonJS", f"block{n}.cjs", b.text if uses_require else to_commonjs(b.text)))
        done = []
        for kind, name, text in forms:
            (proj / name).write_text(text)
            rc, out = self.run(["node", name], proj, self.env())
            if rc != 0:
                return Result(b, "failed", f"as {kind} ({name}):\n{out}", time.monotonic() - t0)
            done.append(kind)
        return Result(b, "ok", " and ".join(done), time.monotonic() - t0)

    @staticmethod
    def command_and_file(b: Block, pattern: re.Pattern, extensions: str, example: str) -> tuple[str, str] | Result:
        """The command of the block's first comment line that `pattern` matches, and the
        first word of it that is a file name ending in one of `extensions` (a regular
        expression: the file the block is saved as); a failed Result naming what is
        missing otherwise (`example` shows the comment line expected)."""
        cmd = next((m["cmd"] for m in map(pattern.match, b.text.splitlines()) if m), None)
        if cmd is None:
            return Result(b, "failed", f"a {b.info.strip()} block needs its command as a comment line: {example}")
        name = next((w for w in re.split(r"\s+", cmd) if re.fullmatch(rf"[\w.-]+\.({extensions})", w)), None)
        if name is None:
            return Result(b, "failed", f"its command names no file ending in {extensions}: {cmd}")
        return cmd, name

    def deno_block(self, b: Block, proj: Path) -> Result:
        found = self.command_and_file(b, DENO_COMMAND, "m?js|ts", "// deno run --allow-read=... main.mjs")
        if isinstance(found, Result):
            return found
        cmd, script = found
        if not self.deno:
            return Result(b, "failed", "no Deno (scripts/lib/deno.sh installs the pinned one into target/tools)")
        (proj / script).write_text(b.text)
        t0 = time.monotonic()
        env = self.env()
        env["PATH"] = str(Path(self.deno).parent) + os.pathsep + env["PATH"]
        env["NO_COLOR"] = "1"
        rc, out = self.run(["bash", "-euo", "pipefail", "-c", cmd], proj, env)
        if rc == 0 and not self.verbose:
            return Result(b, "ok", "under Deno", time.monotonic() - t0)
        return self.outcome(b, rc, f"$ {cmd}\n{out}", time.monotonic() - t0)

    # --- c ----------------------------------------------------------------------------------
    def c_home(self) -> Path:
        if self._c_home is None:
            if not self.c_tarball or not Path(self.c_tarball).exists():
                raise RuntimeError("no C library tarball (scripts/dist.sh makes target/dist/ewise-c-*.tar.gz)")
            home = self.scratch / "c-home"
            (home / ".local").mkdir(parents=True)
            rc, out = self.run(["tar", "-xzf", self.c_tarball, "-C", str(home / ".local"), "--strip-components=1"], home)
            if rc != 0:
                raise RuntimeError(f"unpacking {self.c_tarball} failed:\n{out}")
            self._c_home = home
        return self._c_home

    def c_block(self, b: Block) -> Result:
        found = self.command_and_file(b, C_COMMAND, "c|cc|cpp", "// cc prog.c ... -o prog && ./prog")
        if isinstance(found, Result):
            return found
        cmd, source = found
        try:
            home = self.c_home()
        except RuntimeError as e:
            return Result(b, "failed", str(e))
        d = self.folder("c")
        (d / source).write_text(b.text)
        t0 = time.monotonic()
        env = self.env(HOME=str(home), PKG_CONFIG_PATH=str(home / ".local" / "lib" / "pkgconfig"))
        rc, out = self.run(["bash", "-euo", "pipefail", "-c", cmd], d, env)
        return self.outcome(b, rc, f"$ {cmd}\n{out}", time.monotonic() - t0)

    # --- sh ---------------------------------------------------------------------------------
    def sh_block(self, b: Block) -> Result:
        d = self.folder("sh")
        t0 = time.monotonic()
        rc, out = self.run(["bash", "-euo", "pipefail", "-c", b.text], d, self.env())
        return self.outcome(b, rc, out, time.monotonic() - t0)

    def outcome(self, b: Block, rc: int, out: str, seconds: float) -> Result:
        if rc == 0:
            return Result(b, "ok", out if self.verbose else "", seconds)
        return Result(b, "failed", f"exit status {rc}:\n{out}", seconds)


def absolute(path: str | None) -> str | None:
    """An absolute path, links kept (a venv's python is a link that must stay one)."""
    return os.path.abspath(path) if path else None


def toml_dependencies(text: str) -> dict[str, str]:
    deps, section = {}, None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("["):
            section = s
        elif section == "[dependencies]" and "=" in s and not s.startswith("#"):
            k, v = (x.strip() for x in s.split("=", 1))
            if k != "ewise":
                deps[k] = v
    return deps


def to_commonjs(text: str) -> str:
    """An ESM block as a CommonJS user writes it: `require` for each `import` (one line or
    several), the rest in an async function (CommonJS has no top-level await)."""
    requires: list[str] = []

    def one(m: re.Match[str]) -> str:
        what, mod = " ".join(m["what"].split()), m["mod"]
        renamed = re.sub(r"\s+as\s+", ": ", what)
        if what.startswith("* as "):
            requires.append(f'const {what[5:].strip()} = require("{mod}");')
        elif what.startswith("{"):
            requires.append(f'const {renamed} = require("{mod}");')
        elif "," in what:
            default = what.split(",", 1)[0]
            requires.append(f'const {default.strip()} = require("{mod}");')
            requires.append(f'const {renamed.split(",", 1)[1].strip()} = require("{mod}");')
        else:
            requires.append(f'const {what} = require("{mod}");')
        return ""

    def bare(m: re.Match[str]) -> str:
        requires.append(f'require("{m["mod"]}");')
        return ""

    body = ESM_IMPORT.sub(one, text)
    body = BARE_IMPORT.sub(bare, body)
    wrapped = ["(async () => {", body.rstrip("\n"), "})().catch((e) => {", "  console.error(e);", "  process.exit(1);",
               "});", ""]
    return "\n".join(requires + wrapped)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--root", type=Path, default=Path("."))
    ap.add_argument("--target-dir", type=Path, default=Path("target"))
    ap.add_argument("--python", help="the venv's python, with ewise installed")
    ap.add_argument("--cli-dir", help="the folder that holds the ewise binary")
    ap.add_argument("--npm-pkg", help="the npm package's folder (crates/ewise-web/pkg)")
    ap.add_argument("--c-tarball", help="the C library's tarball (target/dist/ewise-c-*.tar.gz)")
    ap.add_argument("--deno", help="the deno binary, for js deno blocks")
    ap.add_argument("--timeout", type=int, default=120, help="seconds each block may run")
    ap.add_argument("--only", action="append", default=[], help="FILE or FILE:LINE; repeatable")
    ap.add_argument("--list", action="store_true", help="list the blocks and what would be done; run nothing")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every block's output")
    args = ap.parse_args()
    root = args.root.resolve()

    blocks: list[Block] = []
    errors: list[str] = []
    seen = set()
    for f in args.files:
        real = f.resolve()
        if real in seen:  # crates/ewise/README.md is a link to README.md
            continue
        seen.add(real)
        bs, es = extract(f)
        blocks += bs
        errors += es
    if args.only:
        blocks = [b for b in blocks if any(o in (b.where(root), b.where(root).rsplit(":", 1)[0]) for o in args.only)]

    plan: list[Block] = []
    results: list[Result] = []
    for b in blocks:
        if b.lang not in RUN_LANGUAGES:
            results.append(Result(b, "not run", f"{b.lang or 'no info string'}: not a language that runs"))
        elif b.not_run is not None:
            results.append(Result(b, "not run", b.not_run))
        else:
            plan.append(b)
    if args.list:
        listed = [(b, f"not run ({r.detail})") for r in results for b in [r.block]] + [(b, "runs") for b in plan]
        order = {id(b): k for k, b in enumerate(blocks)}
        for b, what in sorted(listed, key=lambda x: order[id(x[0])]):
            print(f"{b.where(root)}: {b.lang}: {what}")
        for e in errors:
            print(f"error: {e}")
        return 1 if errors else 0

    runner = Runner(args)
    try:
        results += runner.rust([b for b in plan if b.lang == "rust"])
        for n, b in enumerate(plan, 1):
            if b.lang == "python":
                results.append(runner.python_block(b))
            elif b.lang == "js":
                results.append(runner.js_block(b, n))
            elif b.lang == "c":
                results.append(runner.c_block(b))
            elif b.lang == "sh":
                results.append(runner.sh_block(b))
    finally:
        runner.close()

    order = {id(b): k for k, b in enumerate(blocks)}
    results.sort(key=lambda r: order[id(r.block)])
    for r in results:
        one_line = r.detail and "\n" not in r.detail
        extra = f" ({r.detail})" if r.status == "not run" or (r.status == "ok" and one_line) else ""
        secs = f" [{r.seconds:.1f} s]" if r.status != "not run" else ""
        print(f"{r.block.where(root)}: {r.block.lang}: {r.status}{extra}{secs}")
        if r.status == "failed" or (args.verbose and r.detail and "\n" in r.detail):
            print("    " + r.detail.rstrip().replace("\n", "\n    "))
    for e in errors:
        print(f"error: {e}")
    failed = [r for r in results if r.status == "failed"]
    counts = {s: sum(r.status == s for r in results) for s in ("ok", "failed", "not run")}
    print(f"doc-test: {len(results)} blocks: {counts['ok']} ok, {counts['failed']} failed, {counts['not run']} not run; "
          f"{len(errors)} fence errors")
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
