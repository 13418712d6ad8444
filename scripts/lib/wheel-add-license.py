#!/usr/bin/env python3
"""Adds FILE to WHEEL's .dist-info/licenses/ as NAME (PEP 639), names it in METADATA with a
License-File line, and rewrites RECORD's hashes and sizes; the other entries keep their
order, bytes and dates, so a reproducible wheel stays reproducible.

Usage: wheel-add-license.py WHEEL FILE NAME
"""

import base64
import hashlib
import os
import sys
import zipfile


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: wheel-add-license.py WHEEL FILE NAME")
    wheel, source, name = argv
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
        contents = {i.filename: z.read(i) for i in infos}
    dist_info = {n.split("/")[0] for n in contents if n.split("/")[0].endswith(".dist-info")}
    if len(dist_info) != 1:
        sys.exit(f"wheel-add-license: {wheel} has {len(dist_info)} .dist-info folders")
    dist_info = dist_info.pop()
    target = f"{dist_info}/licenses/{name}"
    if target in contents:
        sys.exit(f"wheel-add-license: {wheel} already holds {target}")
    with open(source, "rb") as f:
        added = f.read()
    metadata = f"{dist_info}/METADATA"
    lines = contents[metadata].decode().split("\n")
    last = max((i for i, l in enumerate(lines) if l.startswith("License-File:")), default=None)
    if last is None:
        last = max((i for i, l in enumerate(lines) if l.startswith(("License-Expression:", "License:"))), default=None)
    if last is None:
        sys.exit(f"wheel-add-license: {metadata} has no License lines")
    lines.insert(last + 1, f"License-File: {name}")
    contents[metadata] = "\n".join(lines).encode()
    record = f"{dist_info}/RECORD"
    template = next(i for i in infos if i.filename == metadata)
    new_info = zipfile.ZipInfo(target, date_time=template.date_time)
    new_info.compress_type = zipfile.ZIP_DEFLATED
    new_info.external_attr = template.external_attr
    new_info.create_system = template.create_system
    order = [i for i in infos if i.filename != record] + [new_info] + [i for i in infos if i.filename == record]
    contents[target] = added
    rec = [record_line(i.filename, contents[i.filename]) for i in order if i.filename != record]
    contents[record] = ("\n".join(rec + [f"{record},,"]) + "\n").encode()
    tmp = wheel + ".tmp"
    with zipfile.ZipFile(tmp, "w") as z:
        for info in order:
            z.writestr(info, contents[info.filename], compress_type=zipfile.ZIP_DEFLATED)
    os.replace(tmp, wheel)


if __name__ == "__main__":
    main(sys.argv[1:])
