#!/usr/bin/env python3
"""Zips DIR into ZIP as scripts/dist.sh's reproducible archives: the entries are DIR's
files under DIR's own name (DIR/...), sorted, each dated SOURCE_DATE_EPOCH (the last
commit's time; zip's dates start in 1980), mode 755 for .exe and .dll and 644 otherwise,
deflated. Symbolic links are refused (zip has none that Windows reads).

Usage: reproducible-zip.py DIR ZIP
"""

import os
import sys
import time
import zipfile


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: reproducible-zip.py DIR ZIP")
    folder, out = argv
    top = os.path.basename(os.path.normpath(folder))
    epoch = max(int(os.environ.get("SOURCE_DATE_EPOCH", "0")), 315532800)
    stamp = time.gmtime(epoch)[:6]
    files = []
    for here, dirs, names in os.walk(folder):
        for name in names:
            path = os.path.join(here, name)
            if os.path.islink(path):
                sys.exit(f"reproducible-zip: {path} is a symbolic link")
            files.append(os.path.relpath(path, folder).replace(os.sep, "/"))
    with zipfile.ZipFile(out, "w") as z:
        for rel in sorted(files):
            info = zipfile.ZipInfo(f"{top}/{rel}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            mode = 0o755 if rel.lower().endswith((".exe", ".dll")) else 0o644
            info.external_attr = (0o100000 | mode) << 16
            with open(os.path.join(folder, rel), "rb") as f:
                z.writestr(info, f.read(), compresslevel=9)


if __name__ == "__main__":
    main(sys.argv[1:])
