#!/usr/bin/env python3
"""Third-party notices of the crates statically linked into one of ewise's artefacts.

  third-party-notices.py write PACKAGE TARGET TITLE OUT   writes the notices file OUT
  third-party-notices.py check PACKAGE TARGET FILE        exits 1 naming every crate of the
                                                          graph that FILE does not list

PACKAGE is the workspace package the artefact is built from (ewise-cli, ewise-c,
ewise-python), TARGET a Rust target triple (x86_64-unknown-linux-gnu, ...). The graph is
what `cargo tree -p PACKAGE --target TARGET -e normal,no-proc-macro` prints: the crates
compiled into the artefact for that target with the features cargo resolves for it (build
scripts, proc-macros and dev-dependencies are not linked in, so not listed). Each crate's
licence expression and repository come from `cargo metadata --filter-platform TARGET`, and
its licence texts are the files of its source folder named LICENSE*, LICENCE*, COPYING*,
NOTICE* or UNLICENSE* (at the top or in a LICENSES/ or license/ folder; for the
workspace's own crates, the workspace's). Two crates known to publish no text under an
Apache-2.0 licence get its standard text (APACHE_WITHOUT_TEXT); any other crate with no
such file is an error naming it: the notices are complete or not written. Identical texts
are written once and referred to by number.

Needs cargo (offline once the crates are downloaded) and Python 3.8 or later.
"""

import json
import os
import re
import subprocess
import sys

LICENCE_FILE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE|UNLICENSE|COPYRIGHT)([-._].*)?$", re.IGNORECASE)
LICENCE_DIRS = ("LICENSES", "licenses", "license", "LICENSE", "licence")
# Crates whose published package ships no licence file although their licence is Apache-2.0
# (or offers it): the standard text of the Apache License 2.0 (the workspace's
# LICENSE-APACHE, the text the crates' repositories hold) stands in. Only these: any other
# crate without a text is an error.
APACHE_WITHOUT_TEXT = {
    "profiling": "MIT OR Apache-2.0",  # github.com/aclysma/profiling
    "spirv": "Apache-2.0",  # github.com/gfx-rs/rspirv
}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fail(message):
    sys.exit(f"third-party-notices: {message}")


def cargo(*args):
    result = subprocess.run(["cargo", *args], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"cargo {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


def graph(package, target):
    """(name, version) of every crate linked into PACKAGE for TARGET, PACKAGE included."""
    out = cargo("tree", "--locked", "-p", package, "--target", target, "-e", "normal,no-proc-macro",
                "--prefix", "none", "--format", "{p}")
    crates = set()
    for line in out.splitlines():
        m = re.match(r"^(\S+) v(\S+)", line)
        if m:
            crates.add((m[1], m[2]))
    if not crates:
        fail(f"cargo tree printed no crate for {package} on {target}")
    return crates


def licence_files(folder):
    found = []
    for sub in ("",) + LICENCE_DIRS:
        d = os.path.join(folder, sub)
        if not os.path.isdir(d) or (sub and os.path.islink(d)):
            continue
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if os.path.isfile(path) and (sub or LICENCE_FILE.match(name)):
                found.append((os.path.join(sub, name) if sub else name, path))
    return found


def write(package, target, title, out_path):
    crates = graph(package, target)
    meta = json.loads(cargo("metadata", "--locked", "--format-version", "1", "--filter-platform", target))
    by_id = {(p["name"], p["version"]): p for p in meta["packages"]}
    workspace = set(meta["workspace_members"])
    missing = sorted(c for c in crates if c not in by_id)
    if missing:
        fail(f"cargo metadata does not know {missing}")
    rows, texts, text_ids, errors = [], [], {}, []
    for key in sorted(crates):
        p = by_id[key]
        licence = p.get("license")
        if not licence:
            if p.get("license_file"):
                licence = f"see {p['license_file']}"
            else:
                errors.append(f"{key[0]} {key[1]} declares no licence")
                continue
        folder = os.path.dirname(p["manifest_path"])
        files = licence_files(folder)
        if not files and p["id"] in workspace:
            files = licence_files(ROOT)
        if not files and APACHE_WITHOUT_TEXT.get(key[0]) == licence:
            files = [("Apache-2.0 (standard text; the package ships none)", os.path.join(ROOT, "LICENSE-APACHE"))]
        if not files:
            errors.append(f"{key[0]} {key[1]} ({licence}) has no licence file in {folder}")
            continue
        refs = []
        for name, path in files:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read().replace("\r\n", "\n").strip("\n")
            if not text.strip():
                continue
            norm = " ".join(text.split())
            if norm not in text_ids:
                texts.append(text)
                text_ids[norm] = len(texts)
            refs.append(f"{name} [{text_ids[norm]}]")
        if not refs:
            errors.append(f"{key[0]} {key[1]} ({licence}): its licence files in {folder} are empty")
            continue
        repo = p.get("repository") or ("this project" if p["id"] in workspace else "(none given)")
        rows.append((key[0], key[1], licence, repo, refs))
    if errors:
        fail("licence texts missing, so no notices written:\n  " + "\n  ".join(errors))

    lines = [
        f"Third-party notices: {title}",
        "",
        f"This artefact (built for {target}) contains the Rust crates below, compiled from",
        "their sources and linked into it statically, each under the licence named (an SPDX",
        "expression; where it offers a choice, ewise uses it under any of them). The Rust",
        "standard library (MIT OR Apache-2.0, https://github.com/rust-lang/rust) is linked",
        "in as well. The full texts the crates ship follow the list, each once, numbered.",
        "",
        f"{len(rows)} crates:",
        "",
    ]
    for name, version, licence, repo, refs in rows:
        lines.append(f"{name} {version}")
        lines.append(f"    licence: {licence}")
        lines.append(f"    repository: {repo}")
        lines.append(f"    texts: {', '.join(refs)}")
    for i, text in enumerate(texts, 1):
        lines += ["", "=" * 80, f"[{i}]", "=" * 80, "", text]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def check(package, target, path):
    with open(path, encoding="utf-8") as f:
        listed = set()
        for line in f:
            m = re.match(r"^(\S+) (\d\S*)$", line.rstrip("\n"))
            if m:
                listed.add((m[1], m[2]))
    absent = sorted(c for c in graph(package, target) if c not in listed)
    if absent:
        fail(f"{path} does not list {len(absent)} crates of {package} on {target}: "
             + ", ".join(f"{n} {v}" for n, v in absent))


def main(argv):
    if len(argv) == 5 and argv[0] == "write":
        write(*argv[1:])
    elif len(argv) == 4 and argv[0] == "check":
        check(*argv[1:])
    else:
        fail("usage: third-party-notices.py write PACKAGE TARGET TITLE OUT | check PACKAGE TARGET FILE")


if __name__ == "__main__":
    main(sys.argv[1:])
