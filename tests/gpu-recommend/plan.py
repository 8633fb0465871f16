#!/usr/bin/env python3
"""Builds the recommender's validation bundle here (no GPU needed): the model's ranking of every
candidate at every shape, and the CUDA of every legal candidate, batched into a few
translation units so the GPU machine compiles them quickly.

    python3 tests/gpu-recommend/plan.py [--tlc build/bin/tlc] [--out gpu-recommend]
                                        [--only gemm|attention] [--max-configs N]

The bundle (a few MB) holds:
  manifest.json   cases, shapes, configurations, which translation unit and entry point
                  holds each one, and the model's predictions and recommendation times
  v<i>.cuh        one header-only kernel library per configuration (`tlc --emit=header`,
                  namespace v<i>), generic in the shapes: one build serves every shape
  tu<j>.cu        up to 16 of them plus exported, non-inline entry points tlcv_<i>
"""
from __future__ import annotations

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import cases as cases_mod  # noqa: E402

CONFIGS_PER_TU = 16


def run_tlc(tlc: str, args: list) -> subprocess.CompletedProcess:
    return subprocess.run([tlc] + args, capture_output=True, text=True, cwd=ROOT)


def recommend(tlc: str, case, shape: dict, target: str = "h100-sxm") -> dict:
    """The model's full ranking of the case's space at one shape (tlc recommend --format json)."""
    args = ["recommend", case.sample, "--kernel", case.kernel, "--target", target,
            "--format", "json", "--top", "1000000", "--show-illegal"]
    for k, v in list(case.pinned.items()) + list(shape.items()):
        args += ["-D", f"{k}={v}"]
    for k, v in case.values.items():
        args += ["--values", f"{k}={v}"]
    start = time.perf_counter()
    p = run_tlc(tlc, args)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"tlc recommend failed for {case.name} {shape}:\n{p.stderr}")
    out = json.loads(p.stdout)
    out["wall_seconds"] = wall  # the whole command, process start included
    return out


def config_key(config: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(config.items()))


# `extern "C" inline int tlc_v3_gemm(const tlc_tensor_view* A, ..., size_t error_size)`
ENTRY = re.compile(r'extern "C" inline int (tlc_\w+)\(([^)]*)\)\s*\{')


def wrapper(header: str, index: int) -> str:
    """An exported entry point forwarding to the header's inline one (an inline function is
    emitted only where it is used, so the shared library would not have it otherwise). The
    header declares it inside its namespace."""
    m = ENTRY.search(header)
    if not m:
        sys.exit(f"v{index}.cuh: no C entry point found")
    name, params = m.group(1), m.group(2)
    args = ", ".join(p.strip().split()[-1].lstrip("*") for p in params.split(","))
    return (f'extern "C" __attribute__((visibility("default"))) int tlcv_{index}({params}) {{\n'
            f"  return v{index}::{name}({args});\n}}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tlc", default=str(ROOT / "build/bin/tlc"))
    ap.add_argument("--out", default=str(ROOT / "gpu-recommend"))
    ap.add_argument("--only", choices=[c.name for c in cases_mod.CASES])
    ap.add_argument("--max-configs", type=int, default=0,
                    help="keep only the first N legal configurations per case (a smoke test)")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)

    manifest = {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cases": [], "configs": [], "units": []}
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    manifest["git"] = git.stdout.strip()
    for case in cases_mod.CASES:
        if args.only and case.name != args.only:
            continue
        rankings, legal = [], {}
        for shape in case.shapes:
            r = recommend(args.tlc, case, shape)
            predicted = {config_key(c["config"]): c["predicted_ms"] for c in r["ranked"]}
            for c in r["ranked"]:
                legal.setdefault(config_key(c["config"]), c["config"])
            rankings.append({"shape": shape, "predicted_ms": predicted,
                             "recommend_seconds": r["recommend_seconds"],
                             "wall_seconds": r["wall_seconds"],
                             "candidates": r["candidates"], "legal": r["legal"],
                             "first_choice": config_key(r["ranked"][0]["config"])})
            print(f"{case.name} {cases_mod.shape_key(shape)}: {r['legal']} legal of {r['candidates']}, "
                  f"ranked in {r['recommend_seconds'] * 1e3:.1f} ms; first {rankings[-1]['first_choice']}")
        keys = sorted(legal)
        if args.max_configs:
            keys = keys[:args.max_configs]
        indices = []
        for key in keys:
            index = len(manifest["configs"])
            config = legal[key]
            header = out / f"v{index}.cuh"
            cmd = [case.sample, "--emit=header", "--namespace", f"v{index}", "-o", str(header)]
            for k, v in list(case.pinned.items()) + list(config.items()):
                cmd += ["-D", f"{k}={v}"]
            p = run_tlc(args.tlc, cmd)
            if p.returncode != 0:
                sys.exit(f"tlc rejected a configuration it ranked as legal: {key}\n{p.stderr}")
            manifest["configs"].append({"index": index, "case": case.name, "key": key, "config": config,
                                        "entry": f"tlcv_{index}"})
            indices.append(index)
        manifest["cases"].append({"name": case.name, "rankings": rankings, "configs": indices})

    for start in range(0, len(manifest["configs"]), CONFIGS_PER_TU):
        unit = len(manifest["units"])
        members = [c["index"] for c in manifest["configs"][start:start + CONFIGS_PER_TU]]
        text = "// Generated by tests/gpu-recommend/plan.py.\n"
        for i in members:
            text += f'#include "v{i}.cuh"\n'
        for i in members:
            text += wrapper((out / f"v{i}.cuh").read_text(), i)
        (out / f"tu{unit}.cu").write_text(text)
        manifest["units"].append({"file": f"tu{unit}.cu", "configs": members})
        for i in members:
            manifest["configs"][i]["unit"] = unit
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest['configs'])} configurations in {len(manifest['units'])} translation units -> {out}")


if __name__ == "__main__":
    main()
