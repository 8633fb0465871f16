#!/usr/bin/env python3
"""The launcher contract of every sample, on a machine without a GPU.

usage: launcher_contract.py --tlc TLC [--nvcc NVCC] [--samples DIR] [--work DIR]

Each sample is compiled by tlc (sm_80, in a namespace of its own) and all of them by one nvcc
call (PTX only, no device optimisation: the device code never runs here) into one shared
library. Their C entry points are then called through
ctypes with a valid argument list and with 30+ kinds of broken ones: null views and data,
wrong or absurd ranks (0x7fffffff), dtypes, extents, shapes that contradict the shape
symbols, non-unit innermost strides, misaligned data, outputs with zero, negative or
overlapping strides, outputs aliasing inputs, sizes that overflow the kernel's 32-bit index
arithmetic or 64-bit byte offsets. Every broken call must return exactly
TLC_ERROR_INVALID_ARGUMENT with the expected message; the valid ones (and the accepted corner
cases: broadcast inputs, extents at the 32-bit limit) must pass every argument check and stop
at the first CUDA call, the device check, which fails because no device is visible
(CUDA_VISIBLE_DEVICES is emptied). The views point at made-up addresses: the launcher must
never dereference them. Exit 77 (skipped) without nvcc.
"""
from __future__ import annotations

import argparse
import ctypes
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from abi import (DTYPE_CODES, ERROR_BUFFER_SIZE, MAX_RANK, PACKED_DTYPES, SCALAR_CTYPES,  # noqa: E402
                 TLC_ERROR_INVALID_ARGUMENT, TLC_ERROR_LAUNCH, TensorView, find_prototypes)

INT32_MAX = 2**31 - 1
# tlc flags per sample for sm_80 (as tests/compile does: MLA's default stages need Hopper).
SAMPLE_FLAGS = {"flash_mla_decode": ["-D", "stages=1"],
                # sm_89's 99 KiB of shared memory per block
                "gemm_fp8": ["-D", "block_N=128", "-D", "threads=128", "-D", "stages=2"]}
# Samples that need a newer target than sm_80 (fp8 gemms: sm_89); their code still compiles for
# compute_80, where the launchers' checks run the same.
SAMPLE_TARGETS = {"gemm_fp8": "sm_89"}
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "f8e4m3": 1, "f8e5m2": 1, "i4": 1,
               "u4": 1, "f4e2m1": 1, "i8": 1, "u8": 1, "i16": 2, "i32": 4, "u32": 4, "i64": 8, "bool": 1}
DTYPE_OF_CODE = {f"TLC_{k.upper()}": k for k in DTYPE_CODES}
# Passing the argument checks means reaching the device check, which fails without a device.
NO_DEVICE = (TLC_ERROR_LAUNCH, r": cannot query the current device: cudaError\w+ \(\d+\): ")


class Param:
    def __init__(self, name, rank, dtype):
        self.name, self.rank, self.dtype = name, rank, dtype
        self.dims = [None] * rank  # per dimension: ("sym", name) or ("expr", host expression)
        self.out = False


class Kernel:
    """The contract of one C entry point, read from the generated launcher(s)."""

    def __init__(self, name, signature):
        self.name, self.signature = name, signature
        self.params: list[Param] = []
        self.headrooms: list[int] = []  # one per launcher (variants of a shape dispatch)
        self.grid = ""                  # the launcher's grid expressions
        # Shape symbol -> its variable in the launcher's C++: the same name, or u_NAME where the
        # name would collide with generated code (compiler/lower/Naming.h: `EM` looks like an
        # errno macro). Host expressions use the variables.
        self.c_names: dict = {}

    def param(self, name):
        return next(p for p in self.params if p.name == name)


def parse_kernels(source: str) -> list[Kernel]:
    entries = find_prototypes(source)
    launchers = re.findall(r'(?:inline )?tlc::Status \w+\([^)]*\) \{\n  const char\* tl_name = "(\w+)";\n'
                           r'(.*?)\n\}\n', source, flags=re.S)
    kernels = {}
    for kname, body in launchers:
        c_name = next((n for n in entries if n == kname or n.endswith("_" + kname)), None)
        if c_name is None:
            continue
        k = kernels.get(kname)
        fresh = k is None
        if fresh:
            k = kernels[kname] = Kernel(c_name, entries[c_name])
        k.headrooms += [int(h) for h in re.findall(r"indexRange\(tl_name, \"\w+\", \w+, (\d+)\)", body)][:1]
        if not fresh:
            continue
        k.grid = re.search(r"const int64_t tl_gx = (.*);", body).group(1)
        for name, rank, code in re.findall(r'check::tensor\(tl_name, "(\w+)", &\w+, (\d+), (\w+)\)', body):
            k.params.append(Param(name, int(rank), DTYPE_OF_CODE[code]))
        for sym, c_name, param, dim in re.findall(r'bindSymbol\(tl_name, "(\w+)", (\w+), .*?, "(\w+)", (\d+)\)',
                                                  body):
            k.param(param).dims[int(dim)] = ("sym", sym)
            k.c_names[sym] = c_name
        for param, dim, expr in re.findall(r'fixedDim\(tl_name, "(\w+)", \w+, (\d+), (.*)\)\)\) return (?:\w+ \? tlc::check::zeroDivisor\(tl_name\) : )?tl_status;', body):
            k.param(param).dims[int(dim)] = ("expr", expr)
        for name in re.findall(r'check::writable\(tl_name, "(\w+)"', body):
            k.param(name).out = True
    return list(kernels.values())


def _ternaries(c: str) -> str:
    """C's `cond ? a : b` (hostExpr renders select so, parenthesized) as Python's `a if cond else b`."""
    out, i = [], 0
    while i < len(c):  # parenthesized groups first, inside out
        if c[i] == "(":
            depth, j = 1, i + 1
            while depth:
                depth += {"(": 1, ")": -1}.get(c[j], 0)
                j += 1
            out.append("(" + _ternaries(c[i + 1:j - 1]) + ")")
            i = j
        else:
            out.append(c[i])
            i += 1
    c = "".join(out)
    depth = 0
    for i, ch in enumerate(c):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "?" and depth == 0:
            rest, nested, d = c[i + 1:], 0, 0
            for k, r in enumerate(rest):
                d += {"(": 1, ")": -1}.get(r, 0)
                nested += 1 if (r == "?" and d == 0) else 0
                if r == ":" and d == 0:
                    if nested == 0:
                        return f"(({_ternaries(rest[:k])}) if ({c[:i]}) else ({_ternaries(rest[k + 1:])}))"
                    nested -= 1
    return c


def host_eval(expr: str, symbols: dict) -> int:
    """Evaluates a launcher's host shape expression (HostLauncher.cpp hostExpr)."""
    py = expr.replace("std::max<int64_t>", "max").replace("std::min<int64_t>", "min")
    py = py.replace("int64_t", "").replace("/", "//")
    py = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", py)).replace("&&", " and ").replace("||", " or ")
    py = _ternaries(py)
    # Launch arithmetic (runtime.h): floor division and remainder, as Python's // and %; the
    # zero-divisor flag argument is ignored.
    funcs = {"tlc_ceildiv": lambda a, b, flag=None: -(-a // b), "tlc_floordiv": lambda a, b, flag=None: a // b,
             "tlc_floormod": lambda a, b, flag=None: a % b, "tlc_abs": abs, "max": max, "min": min,
             "tl_zero_divisor": None}
    return int(eval(py, funcs, dict(symbols)))


class Case:
    """A kernel's arguments as plain data, turned into views for each call."""

    def __init__(self, kernel: Kernel, symbols: dict):
        self.kernel = kernel
        self.views = {}
        for i, p in enumerate(kernel.params):
            env = {kernel.c_names.get(sym, sym): v for sym, v in symbols.items()}
            shape = [symbols[d[1]] if d[0] == "sym" else host_eval(d[1], env) for d in p.dims]
            strides, step = [0] * p.rank, 1
            for d in reversed(range(p.rank)):
                strides[d], step = step, step * max(shape[d], 1)
            # Far apart, 4 KiB aligned: no two tensors share memory.
            self.views[p.name] = TensorView.make(0x1000_0000_0000 * (i + 1), p.dtype, shape, strides)

    def view(self, name) -> TensorView:
        return self.views[name]


def default_symbols(kernel: Kernel, value=64) -> dict:
    return {d[1]: value for p in kernel.params for d in p.dims if d and d[0] == "sym"}


def call(lib, kernel: Kernel, views, error_size=ERROR_BUFFER_SIZE, error_buffer=True):
    fn = getattr(lib, "tlc_" + kernel.name)
    scalars = kernel.signature.scalars
    fn.argtypes = ([ctypes.POINTER(TensorView)] * len(views) + [SCALAR_CTYPES[s] for s in scalars]
                   + [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t])
    fn.restype = ctypes.c_int
    error = ctypes.create_string_buffer(ERROR_BUFFER_SIZE) if error_buffer else None
    args = [ctypes.byref(v) if v is not None else None for v in views]
    args += [1.0 if s.startswith("f") else 1 for s in scalars] + [None, error, error_size]
    code = fn(*args)
    return code, (error.value.decode(errors="replace") if error_buffer else "")


def mutations(kernel: Kernel):
    """(kind, views, expected code, message regex) for one kernel."""
    params = kernel.params
    ins = [p for p in params if not p.out]
    outs = [p for p in params if p.out]
    inp, out = (ins or params)[0], (outs or params)[-1]
    wide = next((p for p in params if DTYPE_BYTES[p.dtype] >= 2), None)
    result = []

    def case(symbols=None):
        return Case(kernel, symbols or default_symbols(kernel))

    def add(kind, c_or_views, code, pattern):
        views = c_or_views if isinstance(c_or_views, list) else [c_or_views.view(p.name) for p in params]
        result.append((kind, views, code, pattern))

    def edit(name, **fields):
        c = case()
        v = c.view(name)
        for field, value in fields.items():
            if field in ("shape", "strides"):
                for d, x in value.items():
                    getattr(v, field)[d] = x
            else:
                setattr(v, field, value)
        return c

    add("valid", case(), *NO_DEVICE)
    views = [case().view(p.name) for p in params]
    views[0] = None
    add("null view", views, TLC_ERROR_INVALID_ARGUMENT, r"a tensor argument is null")
    add("null data", edit(inp.name, data=None), TLC_ERROR_INVALID_ARGUMENT,
        rf"'{inp.name}' has a null data pointer")
    add("null output data", edit(out.name, data=None), TLC_ERROR_INVALID_ARGUMENT,
        rf"'{out.name}' has a null data pointer")
    for bad in sorted({inp.rank - 1, inp.rank + 1, 0} - {inp.rank}):
        if 0 <= bad <= MAX_RANK:
            add(f"rank {bad}", edit(inp.name, rank=bad), TLC_ERROR_INVALID_ARGUMENT,
                rf"'{inp.name}' must have rank {inp.rank}, got rank {bad} with shape \[")
    for bad in (0x7FFFFFFF, -1, 9, -0x80000000):
        add(f"rank {bad}", edit(inp.name, rank=bad), TLC_ERROR_INVALID_ARGUMENT,
            rf"'{inp.name}' has rank {bad}, outside 0\.\.8 \(TLC_MAX_RANK\)")
    other = "f32" if inp.dtype != "f32" else "f16"
    add("wrong dtype", edit(inp.name, dtype=DTYPE_CODES[other]), TLC_ERROR_INVALID_ARGUMENT,
        rf"'{inp.name}' must be {inp.dtype}, got {other}")
    add("wrong output dtype", edit(out.name, dtype=DTYPE_CODES["i64"] if out.dtype != "i64" else 0),
        TLC_ERROR_INVALID_ARGUMENT, rf"'{out.name}' must be {out.dtype}, got ")
    for code in (99, -1):
        add(f"dtype code {code}", edit(inp.name, dtype=code), TLC_ERROR_INVALID_ARGUMENT,
            rf"'{inp.name}' must be {inp.dtype}, got unknown dtype")
    add("negative extent", edit(inp.name, shape={0: -5}), TLC_ERROR_INVALID_ARGUMENT,
        rf"'{inp.name}' has a negative extent in shape \[-5")
    add("INT64_MIN extent", edit(out.name, shape={out.rank - 1: -2**63}), TLC_ERROR_INVALID_ARGUMENT,
        rf"'{out.name}' has a negative extent")
    grown = edit(out.name, shape={0: case().view(out.name).shape[0] + 1})
    add("shape contradicts a shape symbol", grown, TLC_ERROR_INVALID_ARGUMENT,
        r"shape symbol '\w+' is \d+ but dimension \d+ of '\w+' is \d+|dimension \d+ of '\w+' must be \d+")
    fixed = next(((p, d) for p in params for d, dim in enumerate(p.dims) if dim[0] == "expr"), None)
    if fixed:
        p, d = fixed
        add("wrong fixed dimension", edit(p.name, shape={d: case().view(p.name).shape[d] + 3}),
            TLC_ERROR_INVALID_ARGUMENT, rf"dimension {d} of '{p.name}' must be \d+, got \d+")
    for stride in (2, 0, -1):
        add(f"innermost stride {stride}", edit(inp.name, strides={inp.rank - 1: stride}),
            TLC_ERROR_INVALID_ARGUMENT,
            rf"'{inp.name}' must be contiguous in its last dimension \(stride {stride}\)")
    add("output innermost stride 3", edit(out.name, strides={out.rank - 1: 3}),
        TLC_ERROR_INVALID_ARGUMENT, rf"'{out.name}' must be contiguous in its last dimension")
    if wide:
        size = DTYPE_BYTES[wide.dtype]
        base = case().view(wide.name).data
        for off in (1, size // 2) if size > 2 else (1,):
            add(f"data misaligned by {off}", edit(wide.name, data=base + off), TLC_ERROR_INVALID_ARGUMENT,
                rf"'{wide.name}' has data at an address not aligned to its {wide.dtype} elements "
                rf"\({size} bytes\)")
        # 16-byte misalignment only costs the vector path: accepted.
        add("data not 16-byte aligned", edit(wide.name, data=base + size), *NO_DEVICE)
    if out.rank >= 2:
        add("output outer stride 0", edit(out.name, strides={0: 0}), TLC_ERROR_INVALID_ARGUMENT,
            rf"'{out.name}' is an output but dimension 0 has stride 0")
        s0 = case().view(out.name).strides[0]
        add("output negative outer stride", edit(out.name, strides={0: -s0}),
            TLC_ERROR_INVALID_ARGUMENT, rf"'{out.name}' is an output but dimension 0 has stride {-s0}")
        add("output overlapping rows", edit(out.name, strides={0: s0 - 1}), TLC_ERROR_INVALID_ARGUMENT,
            rf"'{out.name}' is an output but its dimensions overlap: stride {s0 - 1} of dimension 0")
    if inp.rank >= 2:
        # Inputs may broadcast (stride 0) or run backwards: reads only.
        add("input broadcast along dimension 0", edit(inp.name, strides={0: 0}), *NO_DEVICE)
    add("input stride 2^62", edit(inp.name, strides={0: 2**62}) if inp.rank >= 2 else
        edit(inp.name, shape={0: 2**40}), TLC_ERROR_INVALID_ARGUMENT,
        rf"'{inp.name}' (spans more than 2\^63 bytes|has extent)")
    c = case()
    c.views[out.name].data = c.views[inp.name].data
    add("output aliases an input", c, TLC_ERROR_INVALID_ARGUMENT,
        rf"'{out.name}' is an output that overlaps input '{inp.name}' in memory")
    c = case()
    c.views[out.name].data = c.views[inp.name].data + 2 * DTYPE_BYTES[inp.dtype]
    add("output overlaps the end of an input", c, TLC_ERROR_INVALID_ARGUMENT,
        rf"'{out.name}' is an output that overlaps input '{inp.name}'")
    if len(outs) >= 2:
        c = case()
        c.views[outs[1].name].data = c.views[outs[0].name].data
        add("two outputs alias", c, TLC_ERROR_INVALID_ARGUMENT,
            rf"'{outs[0].name}' is an output that overlaps output '{outs[1].name}'")
    # The 32-bit limit: the largest extent every variant takes is accepted, one more than the
    # smallest limit is not (the first tensor with the symbol is blamed). The accepted size goes
    # to a symbol the grid does not depend on (the grid limits would refuse it first) and that
    # no other extent multiplies past it (fused MoE's C has T * topk rows: T at the limit is
    # rightly refused).
    symbols = [d[1] for p in params for d in p.dims if d[0] == "sym"]
    top = INT32_MAX - max(kernel.headrooms) + 1
    # The innermost extent of a packed (4-bit) tensor must be even, which the launcher checks
    # first: the symbols naming one take even sizes here (2 for the others' 1, the tested
    # value rounded up, the accepted one down).
    packed_inner = {p.dims[-1][1] for p in params if p.dtype in PACKED_DTYPES and p.dims and p.dims[-1][0] == "sym"}

    def base():
        return {**default_symbols(kernel, 1), **{s: 2 for s in packed_inner}}

    def even(sym, value, up=True):
        return value + (value % 2 if up else -(value % 2)) if sym in packed_inner else value

    def stays_below(sym):
        at_top = {**base(), sym: even(sym, top, up=False)}
        env = {kernel.c_names.get(s, s): v for s, v in at_top.items()}
        return all(host_eval(d[1], env) <= top for p in params for d in p.dims if d[0] == "expr")
    free = next((s for s in symbols if not re.search(rf"\b{kernel.c_names.get(s, s)}\b", kernel.grid)
                 and stays_below(s)), None)
    if free:
        add(f"{free} at the 32-bit limit", case({**base(), free: even(free, top, up=False)}), *NO_DEVICE)
    for sym in dict.fromkeys(symbols):
        blamed, dim = next((p, d) for p in params for d, x in enumerate(p.dims) if x == ("sym", sym))
        over = INT32_MAX - min(kernel.headrooms) + 2
        for value in (even(sym, v) for v in (over, INT32_MAX, 2**31, 2**40)):
            add(f"{sym} = {value}", case({**base(), sym: value}),
                TLC_ERROR_INVALID_ARGUMENT,
                rf"'{blamed.name}' has extent {value} in dimension {dim}: the kernel's 32-bit index "
                r"arithmetic reaches extent \+ \d+ \(tiles of up to \d+\), above 2\^31 - 1; "
                r"the largest extent it takes is \d+")
    return result


def generate(tlc, sample, work) -> str:
    """The sample's CUDA for sm_80 (or its SAMPLE_TARGETS entry), in a namespace of its own (its
    C entry points are then tlc_s_<sample>_<kernel>), so that every sample goes into one
    library."""
    stem = os.path.splitext(os.path.basename(sample))[0]
    cu = os.path.join(work, stem + ".cu")
    subprocess.run([tlc, sample, "--target", SAMPLE_TARGETS.get(stem, "sm_80"), "--namespace", "s_" + stem,
                    *SAMPLE_FLAGS.get(stem, []), "-o", cu], check=True)
    return cu


def build(nvcc, sources, work) -> str:
    """One shared library of every sample: one nvcc call (its fixed work per translation unit
    was most of each sample's 2.6 s)."""
    unit, so = os.path.join(work, "samples.cu"), os.path.join(work, "samples.so")
    with open(unit, "w") as f:
        f.writelines(f'#include "{os.path.basename(cu)}"\n' for cu in sources)
    subprocess.run([nvcc, "-std=c++17", "-arch=compute_80", "-code=compute_80", "-Xcicc", "-O0",
                    "-Werror", "all-warnings", "-Xcompiler=-Wall,-Wextra,-Werror,-fPIC", "-shared",
                    "-I", os.path.join(ROOT, "stdlib"), "-I", os.path.join(ROOT, "runtime"), unit,
                    "-o", so], check=True)
    return so


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tlc", required=True)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--samples", default=os.path.join(ROOT, "samples"))
    ap.add_argument("--work")
    args = ap.parse_args()
    if not os.access(args.nvcc, os.X_OK):
        print("SKIP: nvcc not found")
        return 77
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # a valid call must stop at the device check
    work = args.work or tempfile.mkdtemp(prefix="tlc-contract-")
    os.makedirs(work, exist_ok=True)
    samples = sorted(glob.glob(os.path.join(args.samples, "*.tl")))
    sources = [generate(args.tlc, s, work) for s in samples]
    lib = ctypes.CDLL(build(args.nvcc, sources, work))
    failures, calls, kinds = [], 0, set()
    for cu in sources:
        with open(cu) as f:
            kernels = parse_kernels(f.read())
        if not kernels:
            failures.append(f"{cu}: no C entry point found")
        for kernel in kernels:
            for kind, views, code, pattern in mutations(kernel):
                got, message = call(lib, kernel, views)
                calls += 1
                kinds.add(re.sub(r"^\w+ (=|at the)", "symbol \\1", kind).split(" = ")[0])
                if got != code or not re.search(pattern, message):
                    failures.append(f"tlc_{kernel.name}: {kind}: got ({got}, {message!r}), "
                                    f"expected ({code}, /{pattern}/)")
            # No error buffer, or a one-byte one: the code still comes back, nothing is written.
            bad = mutations(kernel)[2][1]
            for size, buffered in ((0, False), (1, True)):
                got, message = call(lib, kernel, bad, error_size=size, error_buffer=buffered)
                calls += 1
                if got != TLC_ERROR_INVALID_ARGUMENT or message:
                    failures.append(f"tlc_{kernel.name}: error buffer of size {size}: ({got}, {message!r})")
    kinds.add("error buffer")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(sources)} samples, {calls} calls, {len(kinds)} kinds of views, {len(failures)} failures")
    if len(kinds) < 30:
        print(f"FAIL: only {len(kinds)} kinds of bad views")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
