#!/usr/bin/env python3
"""Generated CUDA never collides with user names (issue 9, compiler/lower/Naming.h).

Writes kernels in which every user name -- kernel, tensors, scalar parameter, shape symbols,
block indices, shared/fragment/local buffers, lets, loop variables of pipelined, serial and
parallel loops -- is a C++ keyword, a name of the CUDA/C/tlc headers, or an identifier that
tlc itself writes into its output (harvested from tlc's output for the same kernels with plain
names, so names a later change of the generator introduces are covered too). Runs tlc, then
compiles the result with nvcc as strictly as the samples are compiled (every warning an error,
"used before its value is set" included).

    names.py TLC NVCC STDLIB_DIR RUNTIME_DIR WORK_DIR [--arch sm_90a]

Exit 0 on success, 1 on a failure, 77 (skipped) when nvcc is missing.
"""
import argparse
import os
import re
import subprocess
import sys

# C++20 keywords and alternative tokens, the identifiers with a special meaning, GNU keywords.
CPP_KEYWORDS = """
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
nullptr operator or or_eq private protected public register reinterpret_cast requires return
short signed sizeof static static_assert static_cast struct switch template this thread_local
throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
xor xor_eq final override import module typeof restrict
""".split()

# Names of the headers and of CUDA that generated code uses or that are macros there.
LIBRARY_NAMES = """
tl tlc std main threadIdx blockIdx blockDim gridDim warpSize dim3 half float4 int2 int64_t
size_t uint8_t int8_t int16_t cudaStream_t cudaError_t cudaSuccess cudaGetLastError
cudaFuncSetAttribute cudaGetErrorString tlc_tensor_view tlc_ceildiv INT32_MAX NULL EOF NAN
INFINITY EINVAL TLC_F16 TLC_ERROR_LAUNCH TL_DEVICE CUDART_INF_F M_PI assert errno stdin offsetof
linux unix major minor __syncthreads __global__ _Bool stream error error_size kAligned u_x tl_x
""".split()

# The TileLang spelling of each slot of the templates below.
PLAIN = {
    "kernel": "kern", "A": "A", "B": "B", "C": "C", "D": "D", "scale": "scale", "M": "M",
    "N": "N", "K": "K", "bx": "bx", "by": "by", "A_s": "A_s", "B_s": "B_s", "C_f": "C_f",
    "r_f": "r_f", "L": "L", "k": "k", "kk": "kk", "i": "i", "j": "j", "t": "t", "x": "x",
    "y": "y",
}

# Pipelined copies into shared memory, tensor-core gemm, a fragment row reduction (with the
# cross-warp scratch), a parallel loop over a fragment, a fragment copy out.
TEMPLATE_GEMM = """
kernel {kernel}({A}: f16[{M}, {K}], {B}: f16[{K}, 64], {C}: out f32[{M}, 64], {D}: out f32[{M}],
    {scale}: f32)
  grid(ceildiv({M}, 64)) threads(128) as ({bx})
{{
  {A_s} = shared f16[64, 32];
  {B_s} = shared f16[32, 64];
  {C_f} = fragment f32[64, 64];
  {r_f} = fragment f32[64];
  clear({C_f});
  for {k} in pipelined(ceildiv({K}, 32), stages = 3) {{
    let {kk} = {k} * 32;
    copy({A}[{bx} * 64, {kk}], {A_s});
    copy({B}[{kk}, 0], {B_s});
    gemm({A_s}, {B_s}, {C_f});
  }}
  reduce_sum({C_f}, {r_f}, dim = 1);
  for {i}, {j} in parallel(64, 64) {{
    {C_f}[{i}, {j}] = {C_f}[{i}, {j}] * {scale} + {r_f}[{i}];
  }}
  copy({C_f}, {C}[{bx} * 64, 0]);
  copy({r_f}, {D}[{bx} * 64]);
}}
"""

# A 2-d grid with swizzled block order, fills, a local buffer, a serial loop with a branch,
# a flat parallel loop over shared memory, scalar and tile atomics.
TEMPLATE_ELEMENTWISE = """
kernel {kernel}({A}: f32[{M}, {N}], {B}: out f32[{M}, {N}], {C}: out f32[{M}], {scale}: f32)
  grid(ceildiv({N}, 32), ceildiv({M}, 32)) threads(128) as ({bx}, {by})
{{
  swizzle_blocks(4);
  {A_s} = shared f32[32, 32];
  {L} = local f32[4];
  fill({L}, 1.0);
  copy({A}[{by} * 32, {bx} * 32], {A_s});
  for {t} in serial(2) {{
    let {x} = {t} + 1;
    if {x} > 1 {{
      for {i}, {j} in parallel(32, 32) {{
        {A_s}[{i}, {j}] = {A_s}[{i}, {j}] * {scale};
      }}
    }}
  }}
  for {y} in parallel(32) {{
    {A_s}[{y}, 0] = {A_s}[{y}, 0] + {L}[0];
  }}
  copy({A_s}, {B}[{by} * 32, {bx} * 32]);
  atomic_add({C}[{by} * 32], {scale});
}}
"""

TEMPLATES = [TEMPLATE_GEMM, TEMPLATE_ELEMENTWISE]

# The collisions issue 9 found, named explicitly: a pipelined loop variable `s` or `next`, a
# let `n_k`, a block index or shape symbol `valid`, and the launcher's locals as tensors.
SPECIAL = [
    dict(PLAIN, kernel="special_s", k="s", kk="n_k", bx="valid", M="next", K="tid", A="e",
         B="st", C="stream", D="error", scale="smem", A_s="gx", B_s="aligned", C_f="kName",
         r_f="r0", i="t0", j="t1"),
    dict(PLAIN, kernel="special_next", k="next", kk="s", bx="tid", M="valid", K="k_count",
         A="A_stride0", B="error_size", C="gy", D="gz", A_s="tmp", B_s="row", C_f="q", r_f="v",
         i="c1", j="it2"),
]

# A kernel with `auto` parameters compiled in several variants behind a shape dispatch (the
# flags below make the recommender pick more than one): its selector, variant launchers and
# bucket tables take the user's names too.
DISPATCH = """
kernel class<bm = auto, bn = auto, bk = auto(32, 64), stages = auto(2, 3), threads = auto(128, 256)>(
    new: f16[this, next], delete: f16[next, int64_t], st: out f16[this, int64_t])
  grid(ceildiv(int64_t, bn), ceildiv(this, bm)) threads(threads) as (tid, valid)
{
  s = shared f16[bm, bk];
  n_k = shared f16[bk, bn];
  stream = fragment f32[bm, bn];
  clear(stream);
  for e in pipelined(ceildiv(next, bk), stages = stages) {
    copy(new[valid * bm, e * bk], s);
    copy(delete[e * bk, tid * bn], n_k);
    gemm(s, n_k, stream);
  }
  copy(stream, st[valid * bm, tid * bn]);
}
"""
# Generated locals the user's code may leave unused compile without warnings: a block index
# and a pipelined loop variable that no prefetched copy reads.
UNUSED = """
kernel unused_names(A: f16[64, 32], C: out f32[64, 32])
  grid(1) threads(128) as (bx)
{
  A_s = shared f16[64, 32];
  C_f = fragment f32[64, 32];
  clear(C_f);
  for k in pipelined(4, stages = 2) {
    copy(A[0, 0], A_s);
    for i, j in parallel(64, 32) {
      C_f[i, j] += f32(A_s[i, j]);
    }
  }
  copy(C_f, C[0, 0]);
}
"""

DISPATCH_FLAGS = ["--assume", "this=16,4096", "--assume", "int64_t=16,256,4096",
                  "--assume", "next=4096", "--namespace", "names_test::inner"]

SLOTS = list(PLAIN)
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def tlc_output(tlc, source, path, arch, flags=()):
    with open(path, "w") as f:
        f.write(source)
    out = path[:-3] + ".cu"
    r = run([tlc, path, "--target", arch, "-o", out, *flags])
    return r, out


def accepted(tlc, name, work):
    """Whether TileLang takes `name` as a user name (its own keywords and builtins it does not)."""
    src = "kernel probe(%s: f32[4]) grid(1) threads(32) as (bx) {\n}\n" % name
    path = os.path.join(work, "probe.tl")
    with open(path, "w") as f:
        f.write(src)
    return run([tlc, path, "--emit", "ast", "-o", os.devnull]).returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tlc")
    ap.add_argument("nvcc")
    ap.add_argument("stdlib")
    ap.add_argument("runtime")
    ap.add_argument("work")
    ap.add_argument("--arch", default="sm_90a")
    a = ap.parse_args()
    if not os.access(a.nvcc, os.X_OK):
        print("SKIP: nvcc not found")
        return 77
    os.makedirs(a.work, exist_ok=True)

    # Identifiers tlc writes for the plain kernels: every generated name there is.
    plain = "".join(t.format(**dict(PLAIN, kernel="%s%d" % (PLAIN["kernel"], n)))
                    for n, t in enumerate(TEMPLATES))
    r, out = tlc_output(a.tlc, plain, os.path.join(a.work, "plain.tl"), a.arch)
    if r.returncode != 0:
        print("tlc rejected the plain kernels:\n" + r.stderr)
        return 1
    text = open(out).read()
    # The banner comment lines carry the command line (file paths), not code.
    code = "\n".join(line for line in text.splitlines() if not line.startswith("//"))
    harvested = sorted(set(IDENT.findall(code)) - set(PLAIN.values()))

    candidates = list(dict.fromkeys(CPP_KEYWORDS + LIBRARY_NAMES + harvested))
    names = [n for n in candidates if accepted(a.tlc, n, a.work)]
    refused = [n for n in CPP_KEYWORDS if n not in names]
    print("%d names (%d harvested from tlc's output); TileLang itself reserves %s" %
          (len(names), len(harvested), " ".join(refused)))

    # Every name in some slot of some kernel: consecutive chunks of the list fill the slots of
    # the templates in turn (names within a kernel stay distinct).
    sources = [TEMPLATE_GEMM.format(**slot) for slot in SPECIAL] + [DISPATCH, UNUSED]
    names = [n for n in names if n != "class"]  # the dispatch kernel's name
    for n, start in enumerate(range(0, len(names), len(SLOTS))):
        chunk = [names[(start + s) % len(names)] for s in range(len(SLOTS))]
        sources.append(TEMPLATES[n % len(TEMPLATES)].format(**dict(zip(SLOTS, chunk))))
    kernels = len(sources)
    src = "".join(sources)
    r, out = tlc_output(a.tlc, src, os.path.join(a.work, "names.tl"), a.arch, DISPATCH_FLAGS)
    if r.returncode != 0:
        print("tlc rejected kernels whose names are C++ keywords or generated names:\n" + r.stderr[-4000:])
        return 1
    obj = out[:-3] + ".o"
    # The compile tests' flags for the arch (nvcc_arch.sh: device optimization level 1).
    archflags = run(["sh", os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvcc_arch.sh"), "--check",
                     a.arch]).stdout.split()
    r = run([a.nvcc, "-std=c++17"] + archflags + ["-Werror", "all-warnings",
             "-Xcompiler=-Wall,-Wextra,-Werror", "-I", a.stdlib, "-I", a.runtime, "-c", out, "-o", obj])
    if r.returncode != 0:
        print("nvcc rejected %s:\n%s" % (out, (r.stdout + r.stderr)[-6000:]))
        return 1
    print("compiled %d kernels (%s) with nvcc" % (kernels, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
