#!/usr/bin/env python3
"""Relative links of the Markdown files that ewise's artefacts ship.

  markdown-links.py ship SRC DEST ROOT [REPO_PATH=ARTEFACT_PATH ...]
      copies the checkout's SRC to DEST (a file inside the artefact folder ROOT), with each
      relative link to REPO_PATH (a path in the checkout) pointed at ARTEFACT_PATH (a path
      in ROOT); a relative link to any other file becomes plain text naming its path in
      ewise's source ("SEMANTICS.md (`docs/SEMANTICS.md` in ewise's source)").
  markdown-links.py check ROOT
      exits 1 naming every relative link of a .md file under ROOT that does not resolve to
      a file or folder inside ROOT.

Links are Markdown's inline ones, [text](target); targets with a scheme (https:, mailto:)
and in-page anchors (#...) are left alone.
"""

import os
import re
import sys

LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)\)")
EXTERNAL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#)")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ship(src, dest, root, pairs):
    mapping = {}
    for pair in pairs:
        repo_path, _, artefact_path = pair.partition("=")
        mapping[os.path.normpath(repo_path)] = os.path.join(root, artefact_path)
    src_dir = os.path.dirname(os.path.relpath(os.path.abspath(src), REPO))
    dest_dir = os.path.dirname(os.path.abspath(dest))

    def replace(m):
        text, target = m[1], m[2]
        if EXTERNAL.match(target):
            return m[0]
        path, _, frag = target.partition("#")
        repo_path = os.path.normpath(os.path.join(src_dir, path))
        if repo_path in mapping:
            new = os.path.relpath(mapping[repo_path], dest_dir) + (f"#{frag}" if frag else "")
            return f"[{text}]({new})"
        if text.strip("`") in (os.path.basename(repo_path), repo_path):
            return f"`{repo_path}` (in ewise's source)"
        return f"{text} (`{repo_path}` in ewise's source)"

    with open(src, encoding="utf-8") as f:
        text = f.read()
    with open(dest, "w", encoding="utf-8") as f:
        f.write(LINK.sub(replace, text))


def check(root):
    root = os.path.abspath(root)
    bad = []
    for here, _, names in os.walk(root):
        for name in sorted(names):
            if not name.endswith(".md"):
                continue
            path = os.path.join(here, name)
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    for m in LINK.finditer(line):
                        target = m[2]
                        if EXTERNAL.match(target):
                            continue
                        resolved = os.path.normpath(os.path.join(here, target.partition("#")[0]))
                        inside = resolved == root or resolved.startswith(root + os.sep)
                        if not inside or not os.path.exists(resolved):
                            bad.append(f"{os.path.relpath(path, root)}:{n}: ({target})")
    if bad:
        sys.exit("links that do not resolve inside the artefact:\n  " + "\n  ".join(bad))


def main(argv):
    if len(argv) >= 4 and argv[0] == "ship":
        ship(argv[1], argv[2], argv[3], argv[4:])
    elif len(argv) == 2 and argv[0] == "check":
        check(argv[1])
    else:
        sys.exit("usage: markdown-links.py ship SRC DEST ROOT [REPO=ARTEFACT ...] | check ROOT")


if __name__ == "__main__":
    main(sys.argv[1:])
