#!/usr/bin/env python3
"""Every sample through tlc's HIP back end and hipcc, for each AMD architecture hipcc knows.

    hip_samples.py TLC HIPCC ROOT OUTDIR ARCH...

For each ARCH (gfx90a: CDNA2, MI200; gfx940: CDNA3 as Debian's hipcc 5.2 names it, MI300's
gfx942 in later ROCm) every sample of ROOT/samples is compiled with `tlc --target ARCH`, each
into its own namespace, and all of them are included into one translation unit that hipcc
compiles (host and device, warnings as errors) in one call per architecture, the calls in
parallel. The device assembly (-save-temps) of the GEMM and attention kernels must contain
MFMA instructions. Samples that cannot be lowered to HIP yet are listed in NOT_SUPPORTED with
the located error tlc must give. Exit 77 (skipped) when hipcc is not installed.
"""
import os
import re
import subprocess
import sys

# Samples that do not lower to HIP yet: the error tlc must report for them. The gated delta
# net computes T = (I + A)^-1's products in f32 (TF32 tensor cores, NVIDIA only); the decode
# GEMV's B dequantized in registers and read in K runs has no MFMA lowering (the CUDA-core
# GEMV, samples/dequant_gemv_w4a16.tl, lowers to HIP).
NOT_SUPPORTED = {"chunk_gated_delta": r"error: gemm on f32 inputs needs sm_80",
                 "dequant_gemv_w4a16_tc": r"error: not supported yet: gemm with B dequantized in registers",
                 "dequant_gemv_w4a16_tcs": r"error: (not supported yet: gemm with B dequantized in registers|gemm tile 8x32 cannot be split)"}

# Kernels whose assembly must issue MFMA: (sample, kernel) -> the instruction, a regular
# expression (CDNA3's assembler spells v_mfma_f32_32x32x8f16 as v_mfma_f32_32x32x8_f16).
MFMA_KERNELS = {
    ("gemm", "gemm"): r"v_mfma_f32_32x32x8_?f16",
    ("flash_attention", "flash_attention"): r"v_mfma_f32_32x32x8_?f16",
}

# Per-sample tlc flags. The samples' defaults fit a CDNA block's 64 KiB of LDS by themselves
# (max_shared_bytes(); tests/compile/samples_every_target.py); gfx90a has no fp8 MFMA (tlc says
# so), so the fp8 sample runs its structure on f16 inputs for both archs.
TLC_FLAGS = {
    "gemm_fp8": ["-D", "dtype=f16", "-D", "block_N=128", "-D", "block_K=64", "-D", "stages=2"],
}
# `auto` knobs are tuned for a GPU's descriptor: gfx940 (hipcc 5.2's CDNA3) has none of its own
# (tlc would take mi300x's as the nearest; named here so that the test does not rest on that).
TLC_ARCH_FLAGS = {"gfx940": ["--device", "mi300x"]}


def main():
    tlc, hipcc, root, out, archs = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3]), sys.argv[4], sys.argv[5:]
    if not os.access(hipcc, os.X_OK):
        print("SKIP: hipcc not found")
        return 77
    samples = sorted(f[:-3] for f in os.listdir(os.path.join(root, "samples")) if f.endswith(".tl"))
    failures = []
    jobs = []
    for arch in archs:
        d = os.path.join(out, arch)
        os.makedirs(d, exist_ok=True)
        includes = []
        for s in samples:
            src = os.path.join(root, "samples", s + ".tl")
            hip = os.path.join(d, s + ".hip")
            r = subprocess.run([tlc, src, "--target", arch, "--namespace", "s_" + s, "-o", hip] + TLC_FLAGS.get(s, []) +
                               (TLC_ARCH_FLAGS.get(arch, []) if s == "gemm_auto" else []),
                               capture_output=True, text=True)
            if s in NOT_SUPPORTED:
                if r.returncode != 1 or not re.search(NOT_SUPPORTED[s], r.stderr):
                    failures.append(f"{s} ({arch}): expected an error matching {NOT_SUPPORTED[s]!r}, got "
                                    f"exit {r.returncode}:\n{r.stderr}")
                continue
            if r.returncode != 0:
                failures.append(f"{s} ({arch}): tlc failed (exit {r.returncode}):\n{r.stderr}")
                continue
            includes.append(f'#include "{s}.hip"\n')
        with open(os.path.join(d, "samples.hip"), "w") as f:
            f.write(f"// Every sample tlc lowers to HIP for {arch}, one namespace each.\n" + "".join(includes))
        # -O0: whether the code compiles (front end, warnings, instruction selection, the MFMA
        # builtins) does not depend on the level, and the device pass of every sample takes 15 s
        # instead of 74 s at -O3 per architecture. compile.hip_fp8 and compile.tlc_c_hip (tlc -c)
        # keep -O3.
        cmd = [hipcc, f"--offload-arch={arch}", "-std=c++17", "-O0", "-Wall", "-Wextra", "-Werror",
               "-Wno-unused-command-line-argument", "-I", os.path.join(root, "stdlib"),
               "-I", os.path.join(root, "runtime"), "-save-temps", "-c", "samples.hip", "-o", "samples.o"]
        jobs.append((arch, d, subprocess.Popen(cmd, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    for arch, d, p in jobs:
        log = p.communicate()[0]
        if p.returncode != 0:
            failures.append(f"hipcc --offload-arch={arch} failed:\n{log}")
            continue
        asm = os.path.join(d, f"samples-hip-amdgcn-amd-amdhsa-{arch}.s")
        counts = mfma_per_function(open(asm).read())
        for (sample, kernel), instr in MFMA_KERNELS.items():
            # The kernel's symbol: namespace s_<sample>, a function named after the kernel.
            ns = f"{len('s_' + sample)}s_{sample}"
            found = [(f, c) for f, c in counts.items() if ns in f and kernel in f]
            if not found:
                failures.append(f"{arch}: no kernel of {sample} in {asm}")
            elif not any(re.fullmatch(instr, i) for _, c in found for i in c):
                failures.append(f"{arch}: {sample}'s kernel has no {instr} in its assembly "
                                f"({sorted(set(i for _, c in found for i in c))})")
            else:
                print(f"{arch}: {sample}: " + ", ".join(sorted(set(i for _, c in found for i in c))))
        print(f"{arch}: {len(open(os.path.join(d, 'samples.hip')).read().splitlines()) - 1} samples compiled")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


def mfma_per_function(asm):
    """The MFMA mnemonics in the body of every function of an AMDGPU assembly file."""
    counts, current = {}, None
    for line in asm.splitlines():
        m = re.match(r"^([A-Za-z_.$][\w.$]*):", line)
        if m and not m.group(1).startswith("."):
            current = m.group(1)
            counts.setdefault(current, [])
            continue
        m = re.match(r"^\s+(v_mfma\w*)", line)
        if m and current:
            counts[current].append(m.group(1))
    return counts


if __name__ == "__main__":
    sys.exit(main())
