#!/usr/bin/env python3
"""Target knowledge lives in compiler/target/ (issue 10): fails, naming file and line, when

  - a target name ("sm_..." or "gfx..." as a string literal) appears outside compiler/target/
    (the driver's --target list is built from target::allTargets(), so it needs none);
  - a stage that asks TargetInfo (infer/, lower/, codegen/, recommend/, driver/) divides, takes
    the remainder of or clamps by a literal 32, the warp-size idioms `/ 32`, `% 32` and
    `, 32)` (as in min(x, 32)), in code or in the code it prints. 32-bit register arithmetic
    is named (kRegisterBits) and so is not flagged.

ir/TileLayout.cpp is checked too: its fragment families are built from the target's atoms
(the accumulator Fragment of target/MmaAtoms.cpp), so it needs no warp size of its own.

  check_targets.py COMPILER_DIR
"""
import re
import sys
from pathlib import Path

TARGET_NAME = re.compile(r'"(sm_|gfx)[0-9a-z]*')
WARP_LITERAL = re.compile(r"(?<!/)(/|%)\s*32\b(?!-)|,\s*32\s*\)")
WARP_STAGES = ("infer", "lower", "codegen", "recommend", "driver")
WARP_FILES = ("ir/TileLayout.cpp", "ir/TileLayout.h")


def code_of(line):
    """The line without its // comment (string contents kept: printed code counts)."""
    out, in_string = [], False
    for i, ch in enumerate(line):
        if ch == '"' and (i == 0 or line[i - 1] != "\\"):
            in_string = not in_string
        if not in_string and line.startswith("//", i):
            break
        out.append(ch)
    return "".join(out)


def main():
    root = Path(sys.argv[1])
    bad = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".cpp", ".h") or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        stage = rel.split("/")[0]
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = code_of(line)
            if stage != "target" and TARGET_NAME.search(code):
                bad.append(f"{rel}:{n}: target name outside target/: {line.strip()}")
            if (stage in WARP_STAGES or rel in WARP_FILES) and WARP_LITERAL.search(code):
                bad.append(f"{rel}:{n}: literal warp size (ask TargetInfo::warpSize()): {line.strip()}")
    for b in bad:
        print(b)
    print(f"{len(bad)} violation(s)" if bad else "target names and warp sizes: only in compiler/target/")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
