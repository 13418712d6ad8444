#!/usr/bin/env python3
"""Reads `x86_64-w64-mingw32-objdump -p DLL` on stdin and prints a module-definition
(.def) file for the DLL named NAME with every name its export table holds, from which
dlltool writes import libraries. Fails when the table is missing or empty.

Usage: x86_64-w64-mingw32-objdump -p ewise.dll | dll-def.py ewise.dll
"""

import re
import sys


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: objdump -p DLL | dll-def.py NAME")
    names, inside = [], False
    for line in sys.stdin:
        if "[Ordinal/Name Pointer] Table" in line:
            inside = True
            continue
        if inside:
            m = re.match(r"^\s+\[\s*\d+\]\s+(\S+)\s*$", line)
            if m:
                names.append(m[1])
            elif line.strip():
                inside = False
    if not names:
        sys.exit("dll-def: no export table in objdump's output")
    print(f"LIBRARY {argv[0]}")
    print("EXPORTS")
    for name in sorted(set(names)):
        print(f"    {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
