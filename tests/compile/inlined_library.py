#!/usr/bin/env python3
"""Self-contained output carries every library function it calls.

    inlined_library.py TLC ROOT

`tlc --emit=header` (and `tlc -c`) inline the device library (stdlib/tl) that the generated
code needs, chosen by the names it calls (codegen/HeaderEmitter.cpp). A name the choice
misses compiles in the repository (the tests include tl/tl.h) and fails for users: every
persistent kernel's tl::persistent_tile once did. For every sample and operator kernel of
tests/gpu/ops on sm_80, sm_90a and gfx90a, each `tl::...name(` or `tl::...name<` in the
generated code outside the inlined headers must be defined inside them, and so must each
TL_ macro it uses. Kernels that tlc
rejects for a target (shared memory, dtypes) are skipped. No nvcc: about a second per target.
"""
import glob
import os
import re
import subprocess
import sys

INLINED = re.compile(r"#ifndef TLC_INLINED_\w+\n.*?#endif  // TLC_INLINED_\w+", re.S)
CALL = re.compile(r"\btl::((?:\w+::)*)(\w+)\s*[(<]")
MACRO = re.compile(r"\b(TL_[A-Z0-9_]+)\s*\(")
WORD = re.compile(r"\w+")
DEFINE = re.compile(r"#\s*define\s+(\w+)")


def check(tlc: str, source: str, target: str, extra: list) -> list:
    r = subprocess.run([tlc, source, "--target", target, "--emit=header", "-w", "-o", "-"] + extra,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        if r.returncode == 1 and "error:" in r.stderr:
            return []  # not for this target
        return [f"{source} --target {target}: tlc exited {r.returncode}: {r.stderr[-300:]}"]
    library = "\n".join(INLINED.findall(r.stdout))
    generated = INLINED.sub("", r.stdout)
    # The library's words and defined macros, once: a search of the library per name took 8 of
    # the test's 25 s.
    words = set(WORD.findall(library))
    defined = set(DEFINE.findall(library))
    problems = []
    for macro in sorted(set(MACRO.findall(generated))):
        if macro not in defined:
            problems.append(f"{source} --target {target} {' '.join(extra)}: uses {macro}, "
                            f"which the inlined library does not define")
    for ns, name in sorted(set(CALL.findall(generated))):
        if name not in words:
            problems.append(f"{source} --target {target} {' '.join(extra)}: calls tl::{ns}{name}, "
                            f"which the inlined library does not define")
    return problems


def main() -> int:
    tlc, root = sys.argv[1], sys.argv[2]
    sources = sorted(glob.glob(os.path.join(root, "samples", "*.tl")) +
                     glob.glob(os.path.join(root, "tests", "gpu", "ops", "*.tl")))
    problems, checked = [], 0
    for source in sources:
        for target in ("sm_80", "sm_90a", "gfx90a"):
            problems += check(tlc, source, target, [])
            checked += 1
    # Persistent kernels (their tile order is a library function).
    for sample in ("gemm", "flash_attention", "conv2d"):
        for target in ("sm_80", "sm_90a"):
            problems += check(tlc, os.path.join(root, "samples", sample + ".tl"), target, ["-D", "persist=true"])
            checked += 1
    for p in problems:
        print("error:", p)
    print(f"{checked} outputs checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
