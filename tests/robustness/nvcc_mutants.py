#!/usr/bin/env python3
"""Accepted input must give CUDA that nvcc accepts (issue 9).

Mutates the samples exactly as mutate.py does (its `mutate`), keeps the mutants tlc accepts
(exit 0) whose CUDA differs from every earlier one (a mutation inside a comment gives the
sample's own code again), and compiles each with nvcc as tests/compile does. Counts the
rejections and prints nvcc's first error of each; also counts the warnings nvcc prints (the
samples compile with every warning an error), "used before its value is set" in particular.

    nvcc_mutants.py --tlc TLC --nvcc NVCC --samples DIR --stdlib DIR --runtime DIR
                    [--count 500] [--seed 20261123] [--jobs 1] [--keep DIR]

In two steps, where the machine with many cores has nvcc but no tlc (the lent GPU machine):
    nvcc_mutants.py --tlc TLC --samples DIR --generate-only --keep DIR [--count --seed]
    nvcc_mutants.py --nvcc NVCC --stdlib DIR --runtime DIR --compile-only DIR [--jobs N]

Exit 0 when nvcc accepted every one, 1 otherwise, 77 (skipped) without nvcc.
"""
import argparse
import concurrent.futures
import hashlib
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutate import mutate  # noqa: E402  (the one mutation function of the robustness tests)

WARNING = re.compile(r"warning[^:]*: (.*)")
ERROR = re.compile(r"error[^:]*: (.*)")


def code_key(cu: str) -> str:
    """The generated code without the banner (it records the command line)."""
    body = "\n".join(line for line in cu.splitlines() if not line.startswith("// "))
    return hashlib.sha256(body.encode()).hexdigest()


def generate(tlc, work, name, data, arch):
    """tlc on one mutant, run in `work` under a fixed file name so that the source locations in
    comments are the same for equal code. Returns the .cu text or None."""
    src = os.path.join(work, name + ".tl")
    with open(src, "wb") as f:
        f.write(data)
    try:
        r = subprocess.run([tlc, name + ".tl", "--target", arch, "-o", name + ".cu"], cwd=work,
                           capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return None
    if r.returncode != 0:
        return None
    return pathlib.Path(work, name + ".cu").read_text()


def compile_cu(nvcc, arch, stdlib, runtime, path):
    # The compile tests' nvcc flags for the arch (tests/compile/nvcc_arch.sh: sm_90a as one
    # -gencode, device optimization level 1).
    archflags = subprocess.run(["sh", str(pathlib.Path(__file__).resolve().parents[1] / "compile" / "nvcc_arch.sh"),
                                "--check", arch], capture_output=True, text=True, check=True).stdout.split()
    r = subprocess.run([nvcc, "-std=c++17"] + archflags + ["-I", stdlib, "-I", runtime, "-c",
                        path, "-o", path[:-3] + ".o"], capture_output=True, text=True)
    out = r.stdout + r.stderr
    return r.returncode, ERROR.findall(out), WARNING.findall(out)


def compile_only(a):
    """nvcc over every .cu of a --generate-only directory, --jobs at a time."""
    if not a.nvcc or not a.stdlib or not a.runtime:
        print("--compile-only needs --nvcc, --stdlib and --runtime")
        return 2
    files = sorted(str(p) for p in pathlib.Path(a.compile_only).glob("*.cu"))
    start = time.time()
    rejected, warned = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = pool.map(lambda f: compile_cu(a.nvcc, a.arch, a.stdlib, a.runtime, f), files)
        for path, (rc, errors, warnings) in zip(files, results):
            label = os.path.basename(path)[:-3]
            if rc != 0:
                rejected.append(label)
                print("REJECTED %s: %s" % (label, errors[0] if errors else "nvcc exit %d" % rc))
            if warnings:
                warned.append(label)
                print("warning %s: %s" % (label, warnings[0]))
    print("%d mutants compiled with nvcc (%s): %d rejected, %d with warnings; %.0f s"
          % (len(files), a.arch, len(rejected), len(warned), time.time() - start))
    return 1 if rejected or not files else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tlc")
    ap.add_argument("--nvcc")
    ap.add_argument("--samples")
    ap.add_argument("--stdlib")
    ap.add_argument("--runtime")
    ap.add_argument("--generate-only", action="store_true",
                    help="write the accepted mutants (.tl, .cu) to --keep; compile nothing")
    ap.add_argument("--compile-only", metavar="DIR",
                    help="compile every DIR/*.cu written by --generate-only; generate nothing")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--count", type=int, default=20, help="accepted mutants to compile")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--max-tries", type=int, default=0,
                    help="mutants to generate at most (default: 200 per wanted one)")
    ap.add_argument("--keep", default=os.path.join(tempfile.gettempdir(), "tlc-nvcc-mutants"))
    a = ap.parse_args()
    if a.compile_only:
        return compile_only(a)
    if not a.tlc or not a.samples or not (a.generate_only or (a.nvcc and a.stdlib and a.runtime)):
        ap.error("--tlc and --samples are needed, and --nvcc, --stdlib, --runtime unless "
                 "--generate-only")
    a.tlc = os.path.abspath(a.tlc)  # tlc runs in a scratch directory
    if not a.generate_only and not os.access(a.nvcc, os.X_OK):
        print("SKIP: nvcc not found")
        return 77
    samples = sorted(pathlib.Path(a.samples).glob("*.tl"))
    sources = [(p.stem, p.read_bytes()) for p in samples]
    rng = random.Random(a.seed)
    os.makedirs(a.keep, exist_ok=True)
    start = time.time()

    # The samples' own code counts as seen: a mutant must change the generated CUDA. nvcc
    # compiles each accepted mutant while the next ones are generated.
    seen = set()
    rejected, warned, used_before_set = [], [], []

    def report(label, result):
        rc, errors, warnings = result
        if rc != 0:
            rejected.append(label)
            print("REJECTED %s: %s" % (label, errors[0] if errors else "nvcc exit %d" % rc), flush=True)
        if warnings:
            warned.append(label)
            if any("used before its value is set" in w for w in warnings):
                used_before_set.append(label)
            print("warning %s: %s" % (label, warnings[0]), flush=True)

    accepted, tries = [], 0
    with tempfile.TemporaryDirectory() as work, \
            concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for stem, data in sources:
            cu = generate(a.tlc, work, stem, data, a.arch)
            if cu is not None:
                seen.add(code_key(cu))
        futures = {}
        max_tries = a.max_tries or 200 * a.count
        while len(accepted) < a.count and tries < max_tries:
            tries += 1
            stem, data = sources[rng.randrange(len(sources))]
            kind, mutant = mutate(data, rng)
            cu = generate(a.tlc, work, stem, mutant, a.arch)
            if cu is None:
                continue
            key = code_key(cu)
            if key in seen:
                continue
            seen.add(key)
            label = "%s.%04d.%s" % (stem, tries, kind)
            base = os.path.join(a.keep, label)
            pathlib.Path(base + ".tl").write_bytes(mutant)
            pathlib.Path(base + ".cu").write_text(cu)
            accepted.append(label)
            if a.generate_only:
                continue
            future = pool.submit(compile_cu, a.nvcc, a.arch, a.stdlib, a.runtime, base + ".cu")
            future.add_done_callback(lambda f, label=label: report(label, f.result()))
            futures[future] = label
            # Keep generation at most a few mutants ahead of nvcc.
            while sum(not f.done() for f in futures) > 2 * a.jobs:
                time.sleep(0.2)
        concurrent.futures.wait(futures)
    if a.generate_only:
        print("%d accepted mutants with new CUDA (from %d tries; seed %d) written to %s"
              % (len(accepted), tries, a.seed, a.keep))
        return 0 if len(accepted) == a.count else 1
    print("%d accepted mutants with new CUDA (from %d tries) compiled: %d rejected by nvcc, %d with "
          "warnings (%d 'used before its value is set'); seed %d; mutants in %s; %.0f s"
          % (len(accepted), tries, len(rejected), len(warned), len(used_before_set), a.seed, a.keep,
             time.time() - start))
    if len(accepted) < a.count:
        print("only %d accepted mutants with new code in %d tries" % (len(accepted), tries))
    return 1 if rejected or used_before_set else 0


if __name__ == "__main__":
    sys.exit(main())
