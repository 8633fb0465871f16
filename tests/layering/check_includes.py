#!/usr/bin/env python3
"""Stage layering (issue 10): the CUDA printer works from the loop IR alone. Follows every
project `#include "..."` from compiler/codegen/ transitively and fails when one reaches a
stage codegen must not see (the AST, the FTG, inference), naming the include chain.

  check_includes.py COMPILER_DIR
"""
import re
import sys
from pathlib import Path

FORBIDDEN = ("frontend/", "ir/", "infer/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    root = Path(sys.argv[1])
    bad = []
    for start in sorted((root / "codegen").glob("*.[ch]*")):
        seen = set()
        stack = [(start.relative_to(root).as_posix(), [])]
        while stack:
            name, chain = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name.startswith(FORBIDDEN):
                bad.append(" -> ".join(chain + [name]))
                continue
            path = root / name
            if not path.exists():  # generated or system-like headers
                continue
            for inc in INCLUDE.findall(path.read_text()):
                stack.append((inc, chain + [name]))
    for b in bad:
        print("codegen reaches a stage it must not include:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
