#!/usr/bin/env python3
"""Emulator vs GPU: the same outputs on the same inputs, for every emulator sample (issue 13).

The CPU emulator (tlc run --emulate, docs/emulator.md) runs the sm_80 lowering; this compares it
with that very lowering on the GPU, sample by sample, at one small shape that is not a multiple
of the tiles.

  here (build machine, with tlc; make_bundle.sh --emu-compare calls it):
    emu_compare.py prepare --tlc build/bin/tlc --out BUNDLE/emu [--only REGEX]
        per sample of tests/emulator/run_samples.py: `tlc run --emulate --target sm_80` writes
        the inputs it drew and the outputs it computed (NAME.bin, manifest.json) into
        BUNDLE/emu/CASE/, and `tlc --target sm_80` the same kernel's CUDA (CASE.cu) beside them;
        BUNDLE/emu/cases.json lists the cases.
  there (GPU machine, no tlc; gpu_check.sh --emu-compare calls it):
    emu_compare.py run BUNDLE [--out DIR] [--only REGEX] [--dry-run]
        builds each CASE.cu with nvcc (-gencode for --arch, default sm_90a: sm_80 code on the
        H100), loads the emulator's inputs onto the GPU, fills the outputs with NaN bytes (as
        the emulator did; last_block's counters with zeros, as both must start them), calls
        tlc_KERNEL once, and compares every output element with the emulator's within the
        dtype's tolerance (TOLERANCE: the GPU's exp2/rsqrt approximations
        and the order of its f32 sums differ from the emulator's in the last bits). Prints one
        JSON record per case and a summary line; with --out, adds them to DIR/results.json under
        "emu_compare". Exit 0 when every case matches, 1 otherwise.

Each case runs in a child process (a crash or hang fails that case only). The comparison logic
(decode, compare) needs neither a GPU nor torch and is unit-tested in test_emu_compare.py.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from abi import PACKED_DTYPES, packed_values  # noqa: E402

# |gpu - emulator| <= atol + rtol * |emulator|, per output dtype: a few units in the last place
# of the dtype, since both compute the same program and differ only in rounding (f32 sums in
# another order, ex2.approx / rsqrt.approx against the host's exp2f / 1/sqrtf).
TOLERANCE = {"f16": (2e-3, 4e-3), "bf16": (1.6e-2, 1.6e-2), "f32": (1e-4, 1e-4), "f64": (1e-9, 1e-9)}
EXACT_DTYPES = {"i4", "u4", "f4e2m1", "i8", "u8", "i16", "i32", "u32", "i64", "bool"}

_STRUCT = {"f16": "e", "f32": "f", "f64": "d", "i8": "b", "u8": "B", "i16": "h", "i32": "i", "u32": "I",
           "i64": "q", "bool": "?"}
_SIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i16": 2, "i32": 4, "u32": 4, "i64": 8,
         "bool": 1, "f8e4m3": 1, "f8e5m2": 1}


# ---- Comparison (no GPU) ------------------------------------------------------------------------

def decode(raw: bytes, dtype: str) -> list:
    """Raw little-endian elements of a dtype as Python floats (integers as ints)."""
    if dtype == "bf16":
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0]
                for h in struct.unpack("<%dH" % (len(raw) // 2), raw)]
    if dtype in PACKED_DTYPES:  # two per byte (docs/language.md 4.1)
        return packed_values(raw, dtype)
    if dtype not in _STRUCT:
        raise ValueError("emu_compare: no decoder for dtype " + dtype)
    n = len(raw) // _SIZE[dtype]
    return list(struct.unpack("<%d%s" % (n, _STRUCT[dtype]), raw[:n * _SIZE[dtype]]))


def compare(got: list, want: list, dtype: str) -> dict:
    """Elementwise gpu (`got`) against emulator (`want`). An element both left NaN (neither
    wrote it) matches and is counted as unwritten; NaN or inf on one side only is a mismatch."""
    if len(got) != len(want):
        return {"elements": len(got), "mismatches": max(len(got), len(want)), "ok": False,
                "error": "%d elements on the GPU, %d from the emulator" % (len(got), len(want))}
    atol, rtol = (0.0, 0.0) if dtype in EXACT_DTYPES else TOLERANCE[dtype]
    max_abs = max_rel = 0.0
    mismatches = unwritten = 0
    first = []
    for i, (g, w) in enumerate(zip(got, want)):
        g_nan, w_nan = g != g, w != w
        if g_nan and w_nan:
            unwritten += 1
            continue
        if g_nan or w_nan or (math.isinf(g) or math.isinf(w)) and g != w:
            bad, diff = True, math.inf
        else:
            diff = abs(g - w)
            bad = diff > atol + rtol * abs(w)
            max_abs = max(max_abs, diff)
            if w != 0:
                max_rel = max(max_rel, diff / abs(w))
        if bad:
            mismatches += 1
            if len(first) < 3:
                first.append({"index": i, "gpu": repr(g), "emulator": repr(w)})
    record = {"elements": len(got), "compared": len(got) - unwritten, "unwritten": unwritten,
              "mismatches": mismatches, "max_abs": max_abs, "max_rel": max_rel, "atol": atol, "rtol": rtol,
              "ok": mismatches == 0 and unwritten < len(got)}
    if first:
        record["first"] = first
    return record


def contiguous_strides(shape) -> list:
    strides, s = [], 1
    for e in reversed(shape):
        strides.append(s)
        s *= max(int(e), 1)
    return list(reversed(strides))


def tensor_bytes(t: dict) -> int:
    n = 1
    for e in t["shape"]:
        n *= int(e)
    return (n + 1) // 2 if t["dtype"] in PACKED_DTYPES else n * _SIZE[t["dtype"]]


# ---- Here: the emulator's runs into the bundle -------------------------------------------------

def chosen_shape(shapes: list) -> dict:
    """One small awkward shape per sample: the second of run_samples.py's (its first is the
    tile multiple), or the only one."""
    return shapes[1] if len(shapes) > 1 else shapes[0]


def prepare(args) -> int:
    sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
    import run_samples  # noqa: E402  (the samples, knobs and shapes the emulator tests use)
    os.makedirs(args.out, exist_ok=True)
    listed, failed = [], []
    for name, (sample, kernel, defines, _ref, params, shapes) in run_samples.CASES.items():
        if args.only and not re.search(args.only, name):
            continue
        shape, seed = chosen_shape(shapes), 11
        d = os.path.join(args.out, name)
        source = os.path.join(ROOT, "samples", sample)
        dflags = [x for dv in defines for x in ("-D", dv)]
        emulate = [args.tlc, "run", "--emulate", source, "--kernel", kernel, "--target", "sm_80",
                   "--output-dir", d, "--seed", str(seed)] + dflags
        for k, v in shape.items():
            emulate += ["--shape", "%s=%d" % (k, v)]
        if name in run_samples.INDEXED:   # index tables (routings): built, not random
            emulate += run_samples.INDEXED[name](os.path.join(d, "tables"), shape, params, seed)
        # last_block's counters: zeros in (the emulator's files of them), zeros out.
        counters = run_samples.counter_inputs(kernel, os.path.join(d, "counters"), shape, params)
        emulate += counters
        generate = [args.tlc, source, "--target", "sm_80", "-o", os.path.join(d, name + ".cu")] + dflags
        for cmd in (emulate, generate):
            print(shlex.join(os.path.relpath(c, ROOT) if c.startswith(ROOT + "/") else c for c in cmd))
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
            if r.returncode != 0:
                print("  FAILED (exit %d):\n%s" % (r.returncode, r.stdout[-2000:]), file=sys.stderr)
                failed.append(name)
                break
        else:
            listed.append({"name": name, "sample": sample, "kernel": kernel, "defines": defines, "shape": shape,
                           "seed": seed, "counters": [a.split("=", 1)[0] for a in counters[1::2]]})
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump({"target": "sm_80", "cases": listed}, f, indent=1)
    print("emu_compare: %d case(s) in %s%s" % (len(listed), args.out,
                                                "; FAILED: " + " ".join(failed) if failed else ""))
    return 1 if failed else 0


# ---- There: the GPU side -----------------------------------------------------------------------

def nvcc_command(case_dir: str, name: str, headers: str, arch: str, nvcc: str) -> list:
    sys.path.insert(0, HERE)
    from build import gencode  # noqa: E402
    return [nvcc, "-O3", "-std=c++17", gencode(arch), "-lineinfo", "-I", os.path.join(headers, "stdlib"),
            "-I", os.path.join(headers, "runtime"), "--shared", "-Xcompiler", "-fPIC",
            os.path.join(case_dir, name + ".cu"), "-o", os.path.join(case_dir, "lib%s.so" % name)]


def run_one(case_dir: str, name: str, kernel: str, counters: str = "") -> dict:
    """In the child process: the emulator's inputs on the GPU, one call, the comparison.
    `counters` (comma-separated) names the last_block counters: outputs that start at 0, as
    the caller must give them, and that the emulator left 0 (the comparison checks they end so)."""
    import ctypes
    import torch
    sys.path.insert(0, HERE)
    import abi  # noqa: E402
    zeroed = set(filter(None, counters.split(",")))
    manifest = json.load(open(os.path.join(case_dir, "manifest.json")))
    source = open(os.path.join(case_dir, name + ".cu")).read()
    signature = abi.find_prototypes(source)[kernel]
    lib = ctypes.CDLL(os.path.join(case_dir, "lib%s.so" % name))
    fn = getattr(lib, "tlc_" + kernel)
    fn.restype = ctypes.c_int
    fn.argtypes = ([ctypes.POINTER(abi.TensorView)] * signature.tensors
                   + [abi.SCALAR_CTYPES[s] for s in signature.scalars]
                   + [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t])
    buffers, views = [], []
    for t in manifest["tensors"]:
        raw = open(os.path.join(case_dir, t["file"]), "rb").read()
        n = max(tensor_bytes(t), 1)
        if t["name"] in zeroed:
            dev = torch.zeros((n,), dtype=torch.uint8, device="cuda")
        elif t["out"]:
            dev = torch.full((n,), 0xFF, dtype=torch.uint8, device="cuda")  # NaN, as the emulator's
        elif raw:
            dev = torch.frombuffer(bytearray(raw), dtype=torch.uint8).to("cuda")
        else:
            dev = torch.zeros((1,), dtype=torch.uint8, device="cuda")
        buffers.append(dev)
        views.append(abi.TensorView.make(dev.data_ptr(), t["dtype"], t["shape"], contiguous_strides(t["shape"])))
    if len(views) != signature.tensors:
        return {"ok": False, "error": "tlc_%s takes %d tensors, the emulator wrote %d" %
                (kernel, signature.tensors, len(views))}
    scalars = [1 for _ in signature.scalars]  # the emulator's default for scalar parameters
    error = ctypes.create_string_buffer(abi.ERROR_BUFFER_SIZE)
    code = fn(*[ctypes.byref(v) for v in views], *scalars, None, error, abi.ERROR_BUFFER_SIZE)
    torch.cuda.synchronize()
    if code != abi.TLC_OK:
        return {"ok": False, "error": "tlc_%s returned %d: %s" % (kernel, code, error.value.decode(errors="replace"))}
    outputs = {}
    for t, dev in zip(manifest["tensors"], buffers):
        if not t["out"]:
            continue
        got = decode(bytes(dev.cpu().tolist()[:tensor_bytes(t)]), t["dtype"])
        want = decode(open(os.path.join(case_dir, t["file"]), "rb").read(), t["dtype"])
        outputs[t["name"]] = dict(compare(got, want, t["dtype"]), dtype=t["dtype"])
    return {"ok": all(o["ok"] for o in outputs.values()) and bool(outputs), "outputs": outputs}


def run(args) -> int:
    emu_dir = os.path.join(args.bundle, "emu")
    listing = os.path.join(emu_dir, "cases.json")
    if not os.path.exists(listing):
        print("emu_compare: %s is missing: make the bundle with make_bundle.sh --emu-compare" % listing)
        return 1
    cases = [c for c in json.load(open(listing))["cases"] if not args.only or re.search(args.only, c["name"])]
    records = []
    for c in cases:
        d = os.path.join(emu_dir, c["name"])
        cmd = nvcc_command(d, c["name"], args.bundle, args.arch, args.nvcc)
        if args.dry_run:
            print(shlex.join(cmd))
            print("  compare %s: tlc_%s on %s (seed %d), outputs against %s" % (
                c["name"], c["kernel"], " ".join("%s=%d" % kv for kv in c["shape"].items()), c["seed"],
                ", ".join(t["file"] for t in json.load(open(os.path.join(d, "manifest.json")))["tensors"]
                          if t["out"])))
            continue
        start = time.monotonic()
        record = {"case": c["name"], "sample": c["sample"], "kernel": c["kernel"], "shape": c["shape"]}
        b = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if b.returncode != 0:
            record.update(ok=False, error="nvcc exited with %d: %s" % (b.returncode, b.stdout[-1500:]))
        else:
            try:
                r = subprocess.run([sys.executable, os.path.abspath(__file__), "one", d, c["name"], c["kernel"],
                                    ",".join(c.get("counters", []))],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                                   timeout=args.case_timeout_s)
                lines = r.stdout.strip().splitlines()
                record.update(json.loads(lines[-1]) if r.returncode == 0 and lines else
                              {"ok": False, "error": "the case's process exited with %d: %s" %
                               (r.returncode, (r.stderr or r.stdout)[-1500:])})
            except subprocess.TimeoutExpired:
                record.update(ok=False, error="no result within %d s (a hang?)" % args.case_timeout_s)
        record["seconds"] = round(time.monotonic() - start, 1)
        records.append(record)
        print(json.dumps(record, sort_keys=True))
    if args.dry_run:
        print("emu_compare: %d case(s) planned (--dry-run: nothing built or run)" % len(cases))
        return 0
    passed = sum(1 for r in records if r["ok"])
    elements = sum(o.get("compared", 0) for r in records for o in r.get("outputs", {}).values())
    summary = {"cases": len(records), "passed": passed, "failed": len(records) - passed, "elements_compared": elements,
               "arch": args.arch}
    print("emu_compare summary: " + json.dumps(summary, sort_keys=True))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, "results.json")
        try:
            results = json.load(open(path))
        except (OSError, ValueError):
            results = {}
        results["emu_compare"] = {"summary": summary, "cases": records}
        with open(path + ".tmp", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(path + ".tmp", path)
    return 0 if records and passed == len(records) else 1


def main() -> int:
    if len(sys.argv) in (5, 6) and sys.argv[1] == "one":  # the child process of `run`
        print(json.dumps(run_one(*sys.argv[2:])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="here: the emulator's runs and the CUDA into BUNDLE/emu")
    p.add_argument("--tlc", default=os.path.join(ROOT, "build", "bin", "tlc"))
    p.add_argument("--out", required=True, help="BUNDLE/emu")
    p.add_argument("--only", help="regex over the emulator's case names")
    r = sub.add_parser("run", help="there: build, run on the GPU, compare")
    r.add_argument("bundle")
    r.add_argument("--out", default=os.environ.get("OUT"), help="add the records to OUT/results.json")
    r.add_argument("--only", help="regex over case names")
    r.add_argument("--arch", default="sm_90a", help="nvcc's target for the sm_80 code (default sm_90a: the H100)")
    r.add_argument("--nvcc", default="nvcc")
    r.add_argument("--case-timeout-s", type=int, default=120)
    r.add_argument("--dry-run", action="store_true", help="print the plan; build and run nothing")
    args = ap.parse_args()
    return prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    sys.exit(main())
