#!/usr/bin/env python3
"""One launch of each selected case, for compute-sanitizer (gpu_check.sh --sanitize).

    compute-sanitizer --tool memcheck python3 tests/gpu/sanitize.py BUNDLE --only REGEX

Loads the libraries run.py built (BUNDLE/build/lib<build>.so), draws each case's inputs and
calls its C entry once: no reference, no timing, so that memcheck, racecheck and synccheck stay
cheap. Prints one line per case; the sanitizer's summary says how many errors it found.
"""
from __future__ import annotations

import argparse
import os
import re
import sys

import torch

from abi import TensorView, load_entry
from cases import load_manifest
from problems import ordered_tensors, problem_for

# Larger cases add time under the sanitizers and no coverage: the smallest few per build.
CASES_PER_BUILD = 2


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle")
    ap.add_argument("--only", default=r"^layout_")
    ap.add_argument("--build-dir")
    args = ap.parse_args(argv)
    manifest = load_manifest(args.bundle)
    build_dir = args.build_dir or os.path.join(args.bundle, "build")
    stream = torch.cuda.current_stream().cuda_stream
    failures = launched = 0
    for b in manifest.builds:
        if not re.search(args.only, b.name):
            continue
        so = os.path.join(build_dir, f"lib{b.name}.so")
        if not os.path.exists(so):
            print(f"sanitize: {b.name}: {so} not built, skipped")
            continue
        build = b
        entry = load_entry(so, build.spec)
        problem = problem_for(build)
        mine = sorted((c for c in manifest.cases if c.build == b.name),
                      key=lambda c: sum(c.shape.values()))
        for c in mine[:CASES_PER_BUILD]:
            gen = torch.Generator(device="cuda")
            gen.manual_seed(c.seed)
            inputs, outputs = problem.inputs(c.shape, gen), problem.outputs(c.shape)
            tensors = ordered_tensors(build.spec, inputs, outputs)
            call = problem.launcher(entry.bind([TensorView.of(t) for t in tensors],
                                               problem.scalars(c.shape), stream), outputs)
            code = call()
            torch.cuda.synchronize()
            failures += code != 0
            launched += 1
            print(f"sanitize: {c.name} {c.shape}: launcher status {code}")
    if not launched:
        # A regex that names no build (run 225's '^rnd0[0-4]' against rnd0_..rnd79_) must not
        # pass as "0 errors": nothing was sanitized.
        print(f"sanitize: no case of a build matching {args.only!r} was launched")
        return 3
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
