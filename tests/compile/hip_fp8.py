#!/usr/bin/env python3
"""CDNA3's fp8 MFMA through tlc and hipcc: the fp8 gemm of tests/lit/codegen/hip-fp8.tl.

    hip_fp8.py TLC HIPCC ROOT OUTDIR

The kernel (all four operand orders into one f32 accumulator) is lowered with `tlc --target
gfx940` (Debian's hipcc 5.2 knows CDNA3, the MI300's gfx942, only as gfx940) on f8e4m3 with
64x64 tiles (32x32 wave tiles: v_mfma_f32_32x32x16_fp8_fp8) and on f8e5m2 with 32x32 tiles
(32x16 wave tiles: v_mfma_f32_16x16x32_bf8_bf8), and on f8e4m3 with 256-byte K-major rows (the
flipped 8-byte swizzle), each into its own namespace, and hipcc compiles
both (host and device, warnings as errors, -save-temps). Each kernel's device assembly must
issue its fp8 MFMA instruction. Exit 77 (skipped) when hipcc is not installed.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hip_samples import mfma_per_function  # noqa: E402

ARCH = "gfx940"
# namespace: (tlc flags, the instruction its kernel must issue)
VARIANTS = {
    "fp8_e4m3": ([], r"v_mfma_f32_32x32x16_fp8_fp8"),
    "fp8_e5m2": (["-D", "ab=f8e5m2", "-D", "bM=32", "-D", "bN=32"], r"v_mfma_f32_16x16x32_bf8_bf8"),
    # K-major rows of 256 bytes: the 8-byte swizzle with the unit flip (XorUnits<256, 8, 0, 15, 4>).
    "fp8_rows256": (["-D", "bM=32", "-D", "bN=32", "-D", "bK=256"], r"v_mfma_f32_16x16x32_fp8_fp8"),
}


def main():
    tlc, hipcc, root, out = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3]), sys.argv[4]
    if not os.access(hipcc, os.X_OK):
        print("SKIP: hipcc not found")
        return 77
    os.makedirs(out, exist_ok=True)
    src = os.path.join(root, "tests", "lit", "codegen", "hip-fp8.tl")
    includes = []
    for ns, (flags, _) in VARIANTS.items():
        hip = os.path.join(out, ns + ".hip")
        r = subprocess.run([tlc, src, "--target", ARCH, "--namespace", ns, "-o", hip] + flags,
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: tlc {ns} (exit {r.returncode}):\n{r.stderr}")
            return 1
        includes.append(f'#include "{ns}.hip"\n')
    with open(os.path.join(out, "fp8.hip"), "w") as f:
        f.write("// The fp8 gemm on CDNA3, e4m3 and e5m2.\n" + "".join(includes))
    cmd = [hipcc, f"--offload-arch={ARCH}", "-std=c++17", "-O3", "-Wall", "-Wextra", "-Werror",
           "-Wno-unused-command-line-argument", "-I", os.path.join(root, "stdlib"), "-I", os.path.join(root, "runtime"),
           "-save-temps", "-c", "fp8.hip", "-o", "fp8.o"]
    r = subprocess.run(cmd, cwd=out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(f"FAIL: hipcc --offload-arch={ARCH}:\n{r.stdout}")
        return 1
    counts = mfma_per_function(open(os.path.join(out, f"fp8-hip-amdgcn-amd-amdhsa-{ARCH}.s")).read())
    failures = 0
    for ns, (_, instr) in VARIANTS.items():
        found = sorted({i for f, c in counts.items() if f"{len(ns)}{ns}" in f for i in c})
        if any(re.fullmatch(instr, i) for i in found):
            print(f"{ARCH}: {ns}: {', '.join(found)}")
        else:
            print(f"FAIL: {ARCH}: {ns}'s kernel has no {instr} in its assembly ({found})")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
