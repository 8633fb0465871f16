#!/usr/bin/env python3
"""Robustness test: tlc must never crash or hang, whatever the input.

From every sample, generate mutants with a fixed seed (token deletions, duplications, swaps,
replacements, truncation, random bytes, byte flips) and compile each to CUDA with `tlc` (or rank
it with `tlc recommend`, --recommend; a file of several kernels, once per kernel with --kernel).
Every run must end within the CPU-time limit with exit 0
or 1, never by a signal; every exit 1 must print at least one `file:line:col: error:` line;
ANTLR's raw wording must never leak out.
Failing mutants are written to --keep so they can be replayed by hand.
"""
import argparse
import concurrent.futures
import math
import os
import pathlib
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile

TOKEN_RE = re.compile(
    rb'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\d[\w.]*|\w+|<<|>>|<=|>=|==|!=|&&|\|\||'
    rb'\+=|-=|\*=|/=|=>|\S', re.S)
ERROR_LINE = re.compile(r'^[^\n]*:\d+:\d+: error: ', re.M)
FORBIDDEN = ("extraneous input", "mismatched input", "no viable alternative", "expecting {",
             "internal error", "token recognition error")


def tokens(src: bytes):
    return [(m.start(), m.end()) for m in TOKEN_RE.finditer(src)]


def mutate(src: bytes, rng: random.Random) -> tuple[str, bytes]:
    toks = tokens(src)
    kind = rng.choice(["delete", "duplicate", "swap", "replace", "truncate", "random_bytes",
                       "flip", "multi"])
    if kind == "multi":
        out = src
        for _ in range(rng.randint(2, 6)):
            out = mutate(out, rng)[1]
        return kind, out
    if kind == "truncate" or not toks:
        return "truncate", src[:rng.randrange(len(src) + 1)]
    if kind == "random_bytes":
        pos = rng.randrange(len(src) + 1)
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        return kind, src[:pos] + junk + src[pos:]
    if kind == "flip":
        data = bytearray(src)
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        return kind, bytes(data)
    i = rng.randrange(len(toks))
    s, e = toks[i]
    if kind == "delete":
        return kind, src[:s] + src[e:]
    if kind == "duplicate":
        return kind, src[:e] + b" " + src[s:e] + src[e:]
    if kind == "replace":
        rs, re_ = toks[rng.randrange(len(toks))]
        return kind, src[:s] + src[rs:re_] + src[e:]
    # swap with the next token
    if i + 1 >= len(toks):
        return "delete", src[:s] + src[e:]
    s2, e2 = toks[i + 1]
    return kind, src[:s] + src[s2:e2] + src[e:s2] + src[s:e] + src[e2:]


def limit_cpu(seconds: int):
    """A CPU-time limit for the child: a hang is caught whatever else the machine runs
    (`ctest -j` makes wall time meaningless), and SIGXCPU names it."""
    def apply():
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    return apply


# `tlc recommend` on a file of several kernels asks which one (samples/flash_decoding.tl).
CHOOSE_KERNEL = re.compile(r"has \d+ kernels; choose one with --kernel \(([\w, ]+)\)")


def run_limited(cmd, cpu: int):
    """Runs `cmd` under a CPU-time limit: (returncode, stderr, None), or (None, None, failure)
    when it hung or died by a signal (knobs.py uses it too)."""
    wall = max(60.0, 20 * cpu)
    try:
        # The wall-clock limit is only a backstop for a process that sleeps.
        proc = subprocess.run(cmd, capture_output=True, timeout=wall, preexec_fn=limit_cpu(cpu))
    except subprocess.TimeoutExpired:
        return None, None, "hang (over %.0fs wall clock)" % wall
    if proc.returncode == -signal.SIGXCPU or proc.returncode == -signal.SIGKILL:
        return None, None, "hang (over %ds of CPU time)" % cpu
    if proc.returncode < 0:
        return None, None, "killed by signal %d" % -proc.returncode
    return proc.returncode, proc.stderr.decode("utf-8", "replace"), None


def exit_rules(returncode: int, err: str):
    """Exit 0 or 1, and every exit 1 located: the failure, or None (knobs.py uses it too)."""
    if returncode not in (0, 1):
        return "exit code %d: %s" % (returncode, err[-300:])
    if returncode == 1 and not ERROR_LINE.search(err):
        return "exit 1 without a file:line:col: error: line: %r" % err[-300:]
    return None


def run_one(tlc: str, path: str, timeout: float, recommend: bool = False, kernel: str = ""):
    # The whole pipeline: front end, FTG, inference and CUDA generation; or the recommender
    # (tlc recommend), which compiles every candidate of the kernel up to inference.
    cmd = [tlc, "recommend", path, "--top", "1"] if recommend else [tlc, path, "-o", os.devnull]
    if kernel:
        cmd += ["--kernel", kernel]
    returncode, err, failure = run_limited(cmd, max(1, math.ceil(timeout)))
    if failure:
        return failure
    # A mutant without a kernel leaves `tlc recommend` nothing to rank: a usage error.
    if recommend and returncode == 2 and "has no kernel to tune" in err:
        return None
    # One with several: the recommender runs on each of them in turn.
    choose = CHOOSE_KERNEL.search(err) if recommend and not kernel else None
    if returncode == 2 and choose:
        for name in choose.group(1).split(", "):
            failure = run_one(tlc, path, timeout, recommend, name)
            if failure:
                return "--kernel %s: %s" % (name, failure)
        return None
    if failure := exit_rules(returncode, err):
        return failure
    for phrase in FORBIDDEN:
        if phrase in err:
            return "raw parser wording %r leaked: %s" % (phrase, err[-300:])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tlc", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--count", type=int, default=2400)
    ap.add_argument("--seed", type=int, default=20261122)
    # CPU seconds per run: generous (a mutant compiles in ~50 ms) so that it never flakes.
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--recommend", action="store_true",
                    help="run `tlc recommend` on each mutant instead of compiling it")
    ap.add_argument("--min-count", type=int, default=2000,
                    help="fail when fewer mutants ran (guards against an empty run)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", default=os.path.join(tempfile.gettempdir(), "tlc-mutants-failed"))
    args = ap.parse_args()

    samples = sorted(pathlib.Path(args.samples).glob("*.tl"))
    if not samples:
        print("no samples found in %s" % args.samples)
        return 1
    rng = random.Random(args.seed)
    per_sample = max(1, args.count // len(samples))
    failures = []
    kinds = {}
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = {}
        for sample in samples:
            src = sample.read_bytes()
            for n in range(per_sample):
                kind, mutant = mutate(src, rng)
                kinds[kind] = kinds.get(kind, 0) + 1
                path = os.path.join(tmp, "%s.%04d.tl" % (sample.stem, n))
                with open(path, "wb") as f:
                    f.write(mutant)
                jobs[pool.submit(run_one, args.tlc, path, args.timeout, args.recommend)] = (path, kind)
        for fut in concurrent.futures.as_completed(jobs):
            problem = fut.result()
            if problem:
                path, kind = jobs[fut]
                os.makedirs(args.keep, exist_ok=True)
                kept = os.path.join(args.keep, os.path.basename(path))
                with open(path, "rb") as src, open(kept, "wb") as dst:
                    dst.write(src.read())
                failures.append("%s (%s): %s" % (kept, kind, problem))
    total = per_sample * len(samples)
    print("mutants: %d from %d samples; kinds: %s" % (
        total, len(samples), ", ".join("%s=%d" % kv for kv in sorted(kinds.items()))))
    for f in failures[:50]:
        print("FAIL " + f)
    print("%d passed, %d failed" % (total - len(failures), len(failures)))
    print("seed %d, %s" % (args.seed, "tlc recommend" if args.recommend else "tlc"))
    return 1 if failures or total < args.min_count else 0


if __name__ == "__main__":
    sys.exit(main())
