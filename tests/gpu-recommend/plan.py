#!/usr/bin/env python3
"""Builds the recommender's validation bundle here (no GPU needed): the model's ranking of every
candidate at every shape, and the CUDA of every legal candidate, batched into a few
translation units so the GPU machine compiles them quickly.

    python3 tests/gpu-recommend/plan.py [--tlc build/bin/tlc] [--out gpu-recommend]
                                        [--parts 2] [--only gemm|attention] [--max-configs N]

The bundle (about 45 MB) holds:
  manifest.json   cases, shapes, configurations, which part, translation unit and entry point
                  holds each one, and the model's predictions and recommendation times
  v<i>.cuh        one header-only kernel library per configuration (`tlc --emit=header`,
                  namespace v<i>), generic in the shapes: one build serves every shape
  tu<j>.cu        up to 12 of them plus exported, non-inline entry points tlcv_<i>

Parts. The configurations are split into --parts parts, one GPU command each (`run.py --part
k/N`): each part holds a subset of every case's configurations, compiled in its own
translation units and timed at every shape of its case, so the parts' results merge into the
whole (analyze.py). Configurations are dealt to parts in snake order of their estimated cost
(budget.partition), and each part's units are a multiple of the GPU machine's 16 cores. The
estimated time of each part (budget.py, from the first run's figures) is printed last.
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
import budget  # noqa: E402
import cases as cases_mod  # noqa: E402

CONFIGS_PER_TU = 12   # at most; fewer where that evens out the cores (budget.units_for)
CARRY_LIMIT_MB = 64   # what travels to the GPU machine (the working tree, about 6 MB, included)


def run_tlc(tlc: str, args: list) -> subprocess.CompletedProcess:
    return subprocess.run([tlc] + args, capture_output=True, text=True, cwd=ROOT)


def recommend(tlc: str, case, shape: dict, target: str = "h100-sxm") -> dict:
    """The model's full ranking of the case's space at one shape (tlc recommend --format json)."""
    args = ["recommend", case.sample, "--kernel", case.kernel, "--target", target,
            "--format", "json", "--timing", "--top", "1000000", "--show-illegal"]
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


def assign_units(manifest: dict, parts: int, max_per_unit: int = CONFIGS_PER_TU) -> None:
    """Fills manifest["units"] and each configuration's "unit": per part, a multiple of the
    cores of units, configurations dealt round-robin (so each unit mixes cases and tile sizes
    and they compile in about the same time)."""
    manifest["units"] = []
    for part in range(parts):
        members = [c["index"] for c in manifest["configs"] if c["part"] == part]
        n_units = budget.units_for(len(members), max_per_unit)
        first = len(manifest["units"])
        for j in range(n_units):
            manifest["units"].append({"file": f"tu{first + j}.cu", "part": part,
                                      "configs": members[j::n_units]})
    for unit, u in enumerate(manifest["units"]):
        for i in u["configs"]:
            manifest["configs"][i]["unit"] = unit


def assign_parts(manifest: dict, parts: int) -> None:
    """Each configuration's "part": per case, snake order of estimated cost (budget.partition)."""
    for case in manifest["cases"]:
        members = [manifest["configs"][i] for i in case["configs"]]
        checked = set(case["checked"])
        costs = [budget.config_cost(case["name"], [r["predicted_ms"].get(c["key"], 0.0) for r in case["rankings"]],
                                    checked) for c in members]
        for c, part in zip(members, budget.partition(costs, parts)):
            c["part"] = part


def write_units(out: pathlib.Path, manifest: dict) -> None:
    for u in manifest["units"]:
        text = f"// Generated by tests/gpu-recommend/plan.py (part {u['part'] + 1} of {manifest['parts']}).\n"
        for i in u["configs"]:
            text += f'#include "v{i}.cuh"\n'
        for i in u["configs"]:
            text += wrapper((out / f"v{i}.cuh").read_text(), i)
        (out / u["file"]).write_text(text)


def print_estimate(manifest: dict, out: pathlib.Path) -> None:
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file()) / 2**20
    print(f"bundle: {size:.0f} MiB (the working tree that travels, carried paths included, must stay "
          f"under {CARRY_LIMIT_MB} MiB)")
    if size > CARRY_LIMIT_MB - 8:
        print("the bundle is too large to carry as it is: carry it packed (README, 'There'):\n"
              "  mkdir -p gpu-sweep && tar cJf gpu-sweep/recommend.tar.xz gpu-recommend")
    n = manifest["parts"]
    print(f"estimated GPU command time per part ({budget.CORES} cores; from the first run's figures, "
          "measured/predicted x" + ", x".join(f"{v} {k}" for k, v in budget.SLOWDOWN.items()) + "):")
    for part in range(n):
        e = budget.estimate_part(manifest, part)
        flag = "" if e["total_s"] < 480 else "  WARNING: over 8 minutes; use more parts or a smaller space"
        print(f"  part {part + 1}/{n}: " + ", ".join(f"{v} {k}" for k, v in e["configs"].items())
              + f" configurations in {e['units']} units: compile ~{e['compile_s']:.0f} s, "
              f"measure ~{e['measure_s']:.0f} s, total ~{e['total_s']:.0f} s{flag}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tlc", default=str(ROOT / "build/bin/tlc"))
    ap.add_argument("--out", default=str(ROOT / "gpu-recommend"))
    ap.add_argument("--parts", type=int, default=2, help="GPU commands to split the bundle into")
    ap.add_argument("--only", choices=[c.name for c in cases_mod.CASES])
    ap.add_argument("--max-configs", type=int, default=0,
                    help="keep only the first N legal configurations per case (a smoke test)")
    args = ap.parse_args()
    if args.parts < 1:
        sys.exit("--parts must be at least 1")
    out = pathlib.Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)

    manifest = {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "parts": args.parts, "cases": [],
                "configs": [], "units": []}
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    manifest["git"] = git.stdout.strip()
    for case in cases_mod.CASES:
        if args.only and case.name != args.only:
            continue
        rankings, legal = [], {}
        for s, shape in enumerate(case.shapes):
            r = recommend(args.tlc, case, shape)
            predicted = {config_key(c["config"]): c["predicted_ms"] for c in r["ranked"]}
            for c in r["ranked"]:
                legal.setdefault(config_key(c["config"]), c["config"])
            rankings.append({"shape": shape, "held_out": case.is_held_out(s), "predicted_ms": predicted,
                             "recommend_seconds": r["recommend_seconds"],
                             "wall_seconds": r["wall_seconds"],
                             "candidates": r["candidates"], "legal": r["legal"],
                             "first_choice": config_key(r["ranked"][0]["config"])})
            print(f"{case.name} {cases_mod.shape_key(shape)}{' (held out)' if case.is_held_out(s) else ''}: "
                  f"{r['legal']} legal of {r['candidates']}, ranked in {r['recommend_seconds'] * 1e3:.1f} ms; "
                  f"first {rankings[-1]['first_choice']}")
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
        manifest["cases"].append({"name": case.name, "rankings": rankings, "configs": indices,
                                  "checked": list(case.checked), "held_out": case.held_out})

    assign_parts(manifest, args.parts)
    assign_units(manifest, args.parts)
    write_units(out, manifest)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{len(manifest['configs'])} configurations in {len(manifest['units'])} translation units, "
          f"{args.parts} parts -> {out}")
    print_estimate(manifest, out)


if __name__ == "__main__":
    main()
