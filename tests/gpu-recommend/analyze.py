#!/usr/bin/env python3
"""Scores the recommender against measurements (TileLang paper appendix G's metrics).

    python3 tests/gpu-recommend/analyze.py BUNDLE/manifest.json OUT/recommend-results.json

Per case and shape, over the configurations that were measured and correct:
  Spearman rho     rank correlation of predicted and measured times (ties share ranks)
  top-5% quality   the best measured time among the model's top 5% (by predicted time, at
                   least one configuration) as a fraction of the best measured time: the
                   paper's "predicted-top-X / best", which it reports >= 98.4%
  first choice     the model's first choice: its rank among the measured times, and its
                   performance as a fraction of the best
Nothing here needs a GPU or torch.
"""
from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
from dataclasses import dataclass

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cases as cases_mod  # noqa: E402


def ranks(values: list) -> list:
    """1-based ranks, ties sharing the average of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return result


def spearman(x: list, y: list) -> float:
    """Pearson correlation of the ranks; nan when either side is constant."""
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return cov / math.sqrt(vx * vy) if vx > 0 and vy > 0 else float("nan")


def score(predicted: dict, measured: dict, first_choice: str) -> dict | None:
    """predicted, measured: configuration key -> ms. None with fewer than two measurements."""
    keys = sorted(k for k in measured if k in predicted)
    n = len(keys)
    if n < 2:
        return None
    by_model = sorted(keys, key=lambda k: (predicted[k], k))
    best = min(measured[k] for k in keys)
    top = max(1, math.ceil(0.05 * n))
    out = {
        "measured": n,
        "spearman": spearman([predicted[k] for k in keys], [measured[k] for k in keys]),
        "top5_count": top,
        "top5_quality": best / min(measured[k] for k in by_model[:top]),
        "best_config": min(keys, key=lambda k: measured[k]),
        "best_ms": best,
        "first_choice": first_choice,
    }
    if first_choice in measured:
        out["first_rank"] = 1 + sum(1 for k in keys if measured[k] < measured[first_choice])
        out["first_quality"] = best / measured[first_choice]
    return out


@dataclass
class Report:
    markdown: str
    summary: dict


def _pct(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def report(manifest: dict, results: dict) -> Report:
    key_of = {c["index"]: c["key"] for c in manifest["configs"]}
    by_case: dict = {}
    status_counts: dict = {}
    for m in results.get("measurements", []):
        status_counts.setdefault(m["case"], {}).setdefault(m["status"], 0)
        status_counts[m["case"]][m["status"]] += 1
        if m["status"] == "ok":
            by_case.setdefault((m["case"], m["shape"]), {})[key_of[m["config"]]] = m["ms"]

    lines = [f"Device: {results.get('device', '?')}, {results.get('date', '?')}; torch "
             f"{results.get('torch', '?')}, {results.get('nvcc', '?')}; bundle from git "
             f"{manifest.get('git', '?')}. Every legal configuration of the space in "
             "tests/gpu-recommend/cases.py timed with CUDA events (median, L2 flushed).", ""]
    summary = {"device": results.get("device"), "date": results.get("date"), "cases": {}}
    for case in manifest["cases"]:
        spec = cases_mod.case_named(case["name"])
        counts = status_counts.get(case["name"], {})
        lines += [f"### {case['name']} ({spec.sample})", "",
                  "| shape | legal | timed | Spearman ρ | best of top 5% / best | first choice: rank, / best "
                  "| best measured | recommend time |",
                  "|---|---|---|---|---|---|---|---|"]
        rows = []
        for s, ranking in enumerate(case["rankings"]):
            sc = score(ranking["predicted_ms"], by_case.get((case["name"], s), {}), ranking["first_choice"])
            shape = ranking["shape"]
            rows.append({"shape": shape, "legal": ranking["legal"], "recommend_seconds": ranking["recommend_seconds"],
                         **(sc or {})})
            if sc is None:
                lines.append(f"| {cases_mod.shape_key(shape)} | {ranking['legal']} | "
                             f"{len(by_case.get((case['name'], s), {}))} | - | - | - | - | "
                             f"{ranking['recommend_seconds'] * 1e3:.0f} ms |")
                continue
            tflops = spec.flops(shape) / sc["best_ms"] / 1e9
            first = (f"{sc['first_rank']} of {sc['measured']}, {_pct(sc['first_quality'])}"
                     if "first_rank" in sc else "not timed")
            lines.append(f"| {cases_mod.shape_key(shape)} | {ranking['legal']} | {sc['measured']} | "
                         f"{sc['spearman']:.2f} | {_pct(sc['top5_quality'])} (top {sc['top5_count']}) | {first} | "
                         f"{tflops:.0f} TFLOP/s | {ranking['recommend_seconds'] * 1e3:.0f} ms |")
        scored = [r for r in rows if "spearman" in r]
        agg = {}
        if scored:
            agg = {
                "mean_spearman": sum(r["spearman"] for r in scored) / len(scored),
                "mean_top5_quality": sum(r["top5_quality"] for r in scored) / len(scored),
                "min_top5_quality": min(r["top5_quality"] for r in scored),
                "mean_first_quality": sum(r.get("first_quality", 0) for r in scored) / len(scored),
            }
            lines += ["", f"Mean Spearman ρ {agg['mean_spearman']:.2f}; best of the model's top 5% "
                          f"{_pct(agg['mean_top5_quality'])} of the best on average (worst "
                          f"{_pct(agg['min_top5_quality'])}); first choice {_pct(agg['mean_first_quality'])} "
                          "of the best on average."]
        if any(k != "ok" for k in counts):
            lines += ["", "Not timed: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()) if k != "ok") + "."]
        lines.append("")
        summary["cases"][case["name"]] = {"rows": rows, **agg, "statuses": counts}
    return Report("\n".join(lines), summary)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("manifest")
    ap.add_argument("results")
    args = ap.parse_args()
    r = report(json.loads(pathlib.Path(args.manifest).read_text()),
               json.loads(pathlib.Path(args.results).read_text()))
    print(r.markdown)


if __name__ == "__main__":
    main()
