#!/usr/bin/env python3
"""Robustness test: tlc must never crash or hang, whatever the input.

From every sample, generate mutants with a fixed seed (token deletions, duplications, swaps,
replacements, truncation, random bytes, byte flips) and compile each to CUDA with `tlc`. Every run
must end within the time limit with exit 0 or 1, never by a signal; every exit 1 must print at
least one `file:line:col: error:` line; ANTLR's raw wording must never leak out.
Failing mutants are written to --keep so they can be replayed by hand.
"""
import argparse
import concurrent.futures
import os
import pathlib
import random
import re
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


def run_one(tlc: str, path: str, timeout: float):
    try:
        # The whole pipeline: front end, FTG, inference and CUDA generation.
        proc = subprocess.run([tlc, path, "-o", os.devnull],
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang (over %.1fs)" % timeout
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode < 0:
        return "killed by signal %d" % -proc.returncode
    if proc.returncode not in (0, 1):
        return "exit code %d: %s" % (proc.returncode, err[-300:])
    if proc.returncode == 1 and not ERROR_LINE.search(err):
        return "exit 1 without a file:line:col: error: line: %r" % err[-300:]
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
    ap.add_argument("--timeout", type=float, default=2.0)
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
                jobs[pool.submit(run_one, args.tlc, path, args.timeout)] = (path, kind)
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
    return 1 if failures or total < 2000 else 0


if __name__ == "__main__":
    sys.exit(main())
