#!/usr/bin/env python3
"""Every sample compiles with its defaults for every target tlc knows (tlc only, no nvcc).
    samples_every_target.py TLC ROOT
The samples choose tiles that fit each target's shared memory (max_shared_bytes(), docs/
language.md 10.3); a sample that needs an instruction a target lacks must fail with the located
error listed in UNSUPPORTED, and nothing else may fail. Exit 1 with every failure listed.
"""
import os
import re
import subprocess
import sys

TARGETS = ["sm_80", "sm_86", "sm_89", "sm_90a", "gfx90a", "gfx940", "gfx942"]
# (sample, target regex) -> the error tlc must give: instructions the target does not have.
UNSUPPORTED = {
    ("chunk_gated_delta", r"gfx.*"): r"error: gemm on f32 inputs needs sm_80",
    ("dequant_gemv_w4a16_tc", r"gfx.*"): r"error: not supported yet: gemm with B dequantized in registers",
    # Its 8-row tiles do not split over 64-lane waves, which tlc reports first.
    ("dequant_gemv_w4a16_tcs", r"gfx.*"): r"error: (not supported yet: gemm with B dequantized in registers|gemm tile 8x32 cannot be split)",
    ("gemm_fp8", r"sm_8[06]|gfx90a"): r"error: gemm on f8e4m3 inputs needs",
}


def expected_error(sample, target):
    for (s, t), err in UNSUPPORTED.items():
        if s == sample and re.fullmatch(t, target):
            return err
    return None


def main():
    tlc, root = sys.argv[1], os.path.abspath(sys.argv[2])
    samples = sorted(f[:-3] for f in os.listdir(os.path.join(root, "samples")) if f.endswith(".tl"))
    failures = []
    for s in samples:
        for t in TARGETS:
            r = subprocess.run([tlc, os.path.join(root, "samples", s + ".tl"), "--target", t, "-o", os.devnull],
                               capture_output=True, text=True)
            err = expected_error(s, t)
            if err is None and r.returncode != 0:
                failures.append(f"{s} --target {t}: exit {r.returncode}\n{r.stderr}")
            elif err is not None and (r.returncode != 1 or not re.search(err, r.stderr)):
                failures.append(f"{s} --target {t}: expected an error matching {err!r}, got exit {r.returncode}\n{r.stderr}")
    print(f"{len(samples)} samples x {len(TARGETS)} targets, {len(failures)} failures")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
