#!/usr/bin/env python3
"""Robustness test: tlc must never crash or hang, whatever the compile-time parameters.

For a fixed seed, pick a sample, a target and random values for some of its kernels'
compile-time parameters (`-D name=value`: powers of two and odd sizes, 0, negatives, huge
values, every dtype and policy, both bools) and compile it. Each run must end within the
CPU-time limit with exit 0 or 1 (2, with `tlc: error:`, for a command-line error: a -D
value of the wrong kind, `auto` parameters on a target without a descriptor), never by a signal, and
every exit 1 must print a `file:line:col: error:` line. mutate.py varies the source on the
default target; this varies the knobs on every target (`threads = 32` on gfx9's 64-thread waves
crashed tlc before: tests/lit/diagnostics/threads-not-wave-multiple.tl).

  knobs.py --tlc TLC --samples DIR [--count N] [--seed S] [--cpu-seconds T]
"""
import argparse
import os
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutate import exit_rules, run_limited  # noqa: E402

TARGETS = ["sm_80", "sm_86", "sm_89", "sm_90a", "gfx90a", "gfx940", "gfx942"]
HEADER = re.compile(r"\bkernel\s+(\w+)\s*<(.*?)>\s*\(", re.S)
INTS = [0, -1, 1, 2, 3, 7, 8, 16, 24, 32, 48, 64, 96, 100, 128, 160, 192, 256, 384, 512, 1024, 4096,
        65536, 2**31, 2**62]
DTYPES = ["f16", "bf16", "f32", "f8e4m3", "f8e5m2", "i8", "i32", "f64"]
POLICIES = ["full_row", "full_col", "square"]


def knobs(source: str):
    """(kernel, name, kind) of every compile-time parameter with a default (kind: int, bool,
    dtype, policy, other)."""
    out = []
    for m in HEADER.finditer(source):
        depth, part, parts = 0, "", []
        for ch in m.group(2):  # split on top-level commas (defaults may call auto(...))
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                parts.append(part)
                part = ""
            else:
                part += ch
        parts.append(part)
        for p in parts:
            if "=" not in p:
                continue
            head, default = (x.strip() for x in p.split("=", 1))
            name, _, declared = (x.strip() for x in head.partition(":"))
            if declared == "dtype":
                kind = "dtype"
            elif declared == "bool" or default in ("true", "false"):
                kind = "bool"
            elif default in POLICIES:
                kind = "policy"
            elif re.fullmatch(r"-?\d+", default) or declared == "int":
                kind = "int"
            else:
                kind = "other"
            out.append((m.group(1), name, kind))
    return out


def value(kind: str, rng: random.Random) -> str:
    if kind == "int":
        return str(rng.choice(INTS))
    if kind == "bool":
        return rng.choice(["true", "false"])
    if kind == "dtype":
        return rng.choice(DTYPES)
    if kind == "policy":
        return rng.choice(POLICIES)
    return str(rng.choice(INTS[:12]))


def check(cmd, cpu: int):
    returncode, err, failure = run_limited(cmd, cpu)
    if failure:
        return failure
    if returncode == 2 and re.search(r"^tlc: error: ", err, re.M):
        return None  # a command-line error: a -D value of the wrong kind, `auto` with no descriptor
    return exit_rules(returncode, err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tlc", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cpu-seconds", type=int, default=20)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    table = {s: knobs(s.read_text()) for s in sorted(Path(a.samples).glob("*.tl"))}
    samples = [s for s, params in table.items() if params]
    failures = []
    for _ in range(a.count):
        sample = rng.choice(samples)
        chosen = rng.sample(table[sample], rng.randint(1, min(4, len(table[sample]))))
        cmd = [a.tlc, str(sample), "--target", rng.choice(TARGETS), "-o", os.devnull]
        for kernel, name, kind in chosen:
            cmd += ["-D", f"{kernel}.{name}={value(kind, rng)}"]
        failure = check(cmd, a.cpu_seconds)
        if failure:
            failures.append((" ".join(cmd), failure))
            print("FAIL", " ".join(cmd), "\n    ", failure)
    print(f"{a.count} runs, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
