#!/usr/bin/env python3
"""Fits the cost model's free parameters to a validation run (no GPU needed).

    python3 tests/gpu-recommend/calibrate.py gpu-recommend/manifest.json RESULTS [RESULTS ...]
        [--tlc build/bin/tlc] [--target compiler/target/descriptors/h100-sxm.json] [--top 10]
        [--include-held-out] [--score]

--score: no fitting; scores the --target descriptor as it is, separately on the calibration
and the held-out shapes of each case (how a change to the model is checked out-of-sample).

RESULTS: one results file per part, as for analyze.py. Only the calibration shapes are fitted
(cases.py); the held-out ones stay out-of-sample unless --include-held-out.

For every combination of the parameters below, writes a variant of the target descriptor,
re-ranks every case and shape with `tlc recommend --target VARIANT.json` and scores the
rankings against the measurements (analyze.score). Prints the best combinations by mean
top-5% quality, then mean Spearman rho; copy the winner into the descriptor.

  overheads.overlap_norm          how the roofline terms combine (large = the paper's max)
  overheads.barrier_cycles        the bubble of one block-wide barrier
  compute.tensor.<path>.ilp_needed  independent MMAs a scheduler needs in flight
  compute.tensor.<path>.tflops    the emitted path's f16/bf16 ceiling, as a factor

--grid warpgroup fits the warpgroup path instead (compute.warpgroup_path, wgmma on the H100):
  compute.tensor.<path>.step_cycles  clocks a warpgroup loses per k-step
  compute.tensor.<path>.tflops       its f16/bf16 ceiling, as a factor
  overheads.overlap_norm, memory.l2_tbps (as a factor)
"""
from __future__ import annotations

import argparse
import copy
import itertools
import json
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import analyze  # noqa: E402
import cases as cases_mod  # noqa: E402
import plan  # noqa: E402

GRIDS = {
    "per-warp": {
        "overlap_norm": [2, 3, 4, 6, 1000],
        "barrier_cycles": [20, 40, 100, 200],
        "ilp_needed": [4, 8, 16],
        "ceiling": [0.9, 1.0, 1.1],
    },
    "warpgroup": {
        "overlap_norm": [3, 4, 6],
        "step_cycles": [0, 200, 400, 800, 1600],
        "ceiling": [0.9, 1.0, 1.1],
        "l2": [1.0, 1.3],
    },
}


def variant(base: dict, params: dict) -> dict:
    d = copy.deepcopy(base)
    d["name"] = "calibration"
    d["overheads"]["overlap_norm"] = params["overlap_norm"]
    if "barrier_cycles" in params:
        d["overheads"]["barrier_cycles"] = params["barrier_cycles"]
    if "step_cycles" in params:
        path = d["compute"]["tensor"][d["compute"]["warpgroup_path"]]
        path["step_cycles"] = params["step_cycles"]
    else:
        path = d["compute"]["tensor"][d["compute"]["tensor_path"]]
    if "ilp_needed" in params:
        path["ilp_needed"] = params["ilp_needed"]
    if "l2" in params:
        d["memory"]["l2_tbps"] *= params["l2"]
    path["tflops"] = {k: v * params["ceiling"] for k, v in path["tflops"].items()}
    return d


def measured_by_shape(manifest: dict, results: dict) -> dict:
    key_of = {c["index"]: c["key"] for c in manifest["configs"]}
    out: dict = {}
    for m in results.get("measurements", []):
        if m["status"] == "ok":
            out.setdefault((m["case"], m["shape"]), {})[key_of[m["config"]]] = m["ms"]
    return out


def evaluate(tlc: str, target_path: str, manifest: dict, measured: dict, held_out: bool = False) -> dict:
    """Mean scores of the rankings under a descriptor; the held-out shapes only if held_out."""
    scores = []
    for case in manifest["cases"]:
        spec = cases_mod.case_named(case["name"])
        for s, ranking in enumerate(case["rankings"]):
            if ranking.get("held_out") and not held_out:
                continue
            shape = ranking["shape"]
            got = measured.get((case["name"], s), {})
            if len(got) < 2:
                continue
            r = plan.recommend(tlc, spec, shape, target_path)
            predicted = {plan.config_key(c["config"]): c["predicted_ms"] for c in r["ranked"]}
            sc = analyze.score(predicted, got, plan.config_key(r["ranked"][0]["config"]))
            if sc:
                scores.append(sc)
    n = max(1, len(scores))
    return {"top5": sum(s["top5_quality"] for s in scores) / n,
            "spearman": sum(s["spearman"] for s in scores) / n,
            "first": sum(s.get("first_quality", 0) for s in scores) / n, "shapes": len(scores)}


def score_sets(tlc: str, target_path: str, manifest: dict, measured: dict) -> dict:
    """{(case, "calibration" | "held out"): mean scores} under one descriptor."""
    scores: dict = {}
    for case in manifest["cases"]:
        spec = cases_mod.case_named(case["name"])
        for s, ranking in enumerate(case["rankings"]):
            got = measured.get((case["name"], s), {})
            if len(got) < 2:
                continue
            r = plan.recommend(tlc, spec, ranking["shape"], target_path)
            predicted = {plan.config_key(c["config"]): c["predicted_ms"] for c in r["ranked"]}
            sc = analyze.score(predicted, got, plan.config_key(r["ranked"][0]["config"]))
            if sc:
                key = (case["name"], "held out" if ranking.get("held_out") else "calibration")
                scores.setdefault(key, []).append(sc)
    out = {}
    for key, v in scores.items():
        n = len(v)
        out[key] = {"shapes": n,
                    "top5": sum(x["top5_quality"] for x in v) / n,
                    "top5_worst": min(x["top5_quality"] for x in v),
                    "spearman": sum(x["spearman"] for x in v) / n,
                    "first": sum(x.get("first_quality", 0) for x in v) / n,
                    "first_worst": min(x.get("first_quality", 0) for x in v)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("manifest")
    ap.add_argument("results", nargs="+")
    ap.add_argument("--tlc", default=str(ROOT / "build/bin/tlc"))
    ap.add_argument("--target", default=str(ROOT / "compiler/target/descriptors/h100-sxm.json"))
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--include-held-out", action="store_true",
                    help="fit the held-out shapes too (they are then no longer out-of-sample)")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="per-warp",
                    help="which path's parameters to fit (warpgroup: the H100's wgmma kernels)")
    ap.add_argument("--score", action="store_true",
                    help="score --target as it is on the calibration and held-out shapes; no fit")
    args = ap.parse_args()
    manifest = json.loads(pathlib.Path(args.manifest).read_text())
    results = analyze.merge([analyze.load_results(pathlib.Path(p)) for p in args.results])
    analyze.check_bundle(manifest, results)
    measured = measured_by_shape(manifest, results)
    if args.score:
        print("| case | shapes | n | best of top 5% / best: mean (worst) | Spearman ρ | first choice / best: mean (worst) |")
        print("|---|---|---|---|---|---|")
        for (case, which), sc in sorted(score_sets(args.tlc, args.target, manifest, measured).items()):
            print(f"| {case} | {which} | {sc['shapes']} | {100 * sc['top5']:.1f}% ({100 * sc['top5_worst']:.1f}%) | "
                  f"{sc['spearman']:.2f} | {100 * sc['first']:.1f}% ({100 * sc['first_worst']:.1f}%) |")
        return
    base = json.loads(pathlib.Path(args.target).read_text())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        target_path = str(pathlib.Path(tmp) / "calibration.json")
        grid = GRIDS[args.grid]
        for values in itertools.product(*grid.values()):
            params = dict(zip(grid, values))
            pathlib.Path(target_path).write_text(json.dumps(variant(base, params)))
            rows.append((evaluate(args.tlc, target_path, manifest, measured, args.include_held_out), params))
            print(f"{params}: {rows[-1][0]}", file=sys.stderr, flush=True)
    rows.sort(key=lambda r: (-r[0]["top5"], -r[0]["spearman"]))
    print("| top-5% quality | Spearman ρ | first choice / best | parameters |")
    print("|---|---|---|---|")
    for score, params in rows[:args.top]:
        print(f"| {100 * score['top5']:.1f}% | {score['spearman']:.3f} | {100 * score['first']:.1f}% | "
              + ", ".join(f"{k}={v}" for k, v in params.items()) + " |")


if __name__ == "__main__":
    main()
