#!/usr/bin/env python3
"""Scores the recommender against measurements (TileLang paper appendix G's metrics).

    python3 tests/gpu-recommend/analyze.py BUNDLE/manifest.json RESULTS [RESULTS ...]
        [--md FILE] [--json FILE] [--merged FILE]

RESULTS: run.py's recommend-results[-KofN].json, one per part (they are merged: the parts hold
disjoint configurations, each timed at every shape), or a part's recommend-progress[-KofN].jsonl
where a command was cut off before it wrote its results. --merged writes the merged results.

Per case and shape, over the configurations that were measured and correct:
  Spearman rho     rank correlation of predicted and measured times (ties share ranks)
  top-5% quality   the best measured time among the model's top 5% (by predicted time, at
                   least one configuration) as a fraction of the best measured time: the
                   paper's "predicted-top-X / best", which it reports >= 98.4%
  first choice     the model's first choice: its rank among the measured times, and its
                   performance as a fraction of the best
and per case the mean and worst of these over the calibration shapes (the paper's table 3 for
GEMM: what the H100 descriptor was fitted to), over the held-out shapes, and over all.
Nothing here needs a GPU or torch.
"""
from __future__ import annotations

import argparse
import json
import math
import pathlib
import re
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


def load_results(path: pathlib.Path) -> dict:
    """A results file, or a progress log (.jsonl) turned into one."""
    text = pathlib.Path(path).read_text()
    if str(path).endswith(".jsonl"):
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        label = re.search(r"-(\d+)of(\d+)\.jsonl$", str(path))
        return {"source": str(path), "part": [int(label[1]), int(label[2])] if label else None,
                "measurements": [r for r in records if r["status"] != "started"]}
    return {"source": str(path), **json.loads(text)}


def merge(parts: list) -> dict:
    """One results dict from the parts' (run.py --part K/N): their measurements together. A
    (case, shape, configuration) measured in two of them is an error (the parts are meant to be
    disjoint); the first part's device and software are kept, and each part's are listed."""
    if isinstance(parts, dict):
        return parts
    merged = {k: v for k, v in (parts[0] if parts else {}).items()
              if k not in ("measurements", "part", "configs", "seconds", "compile_seconds", "source")}
    merged["parts"] = []
    merged["measurements"] = []
    seen: dict = {}
    for n, r in enumerate(parts):
        # A file merged before (--merged) brings its parts' descriptions along.
        merged["parts"] += r.get("parts") or [{k: r.get(k) for k in (
            "part", "source", "device", "date", "seconds", "compile_seconds", "bundle_created")}]
        for m in r.get("measurements", []):
            key = (m["case"], m["shape"], m["config"])
            if key in seen and seen[key] != n:
                raise ValueError(f"{key} is measured in two results files ({seen[key] + 1} and {n + 1})")
            seen[key] = n
            merged["measurements"].append(m)
    devices = {r.get("device") for r in parts if r.get("device")}
    if len(devices) > 1:
        merged["device"] = " + ".join(sorted(devices))
    return merged


def check_bundle(manifest: dict, results: dict) -> None:
    """Raises where the results were measured on another bundle than this manifest describes
    (plan.py run again between the parts renumbers the configurations)."""
    for r in results.get("parts") or [results]:
        made = r.get("bundle_created")
        if made and manifest.get("created") and made != manifest["created"]:
            raise ValueError(f"{r.get('source', 'results')} was measured on the bundle planned at {made}, "
                             f"not this one ({manifest['created']})")
    case_of = {c["index"]: c["case"] for c in manifest["configs"]}
    wrong = sorted({m["config"] for m in results.get("measurements", []) if case_of.get(m["config"]) != m["case"]})
    if wrong:
        raise ValueError(f"configurations {wrong[:5]} are not in this manifest, or of another case: the results "
                         "were measured on another bundle")


def aggregate(rows: list) -> dict:
    """Mean and worst of the scores over some shapes' rows (those that were scored)."""
    scored = [r for r in rows if "spearman" in r]
    if not scored:
        return {"shapes": 0}
    spearman = [r["spearman"] for r in scored if not math.isnan(r["spearman"])]
    # The first choice's scores where it was timed (not where it failed, or belongs to a part
    # that is missing: first_untimed counts those shapes).
    first = [r["first_quality"] for r in scored if "first_quality" in r]
    ranks_ = sorted(r["first_rank"] for r in scored if "first_rank" in r)
    return {
        "shapes": len(scored),
        "mean_spearman": sum(spearman) / len(spearman) if spearman else float("nan"),
        "min_spearman": min(spearman) if spearman else float("nan"),
        "mean_top5_quality": sum(r["top5_quality"] for r in scored) / len(scored),
        "min_top5_quality": min(r["top5_quality"] for r in scored),
        "mean_first_quality": sum(first) / len(first) if first else float("nan"),
        "min_first_quality": min(first) if first else float("nan"),
        "first_untimed": len(scored) - len(first),
        "median_first_rank": ranks_[len(ranks_) // 2] if ranks_ else None,
        "max_first_rank": ranks_[-1] if ranks_ else None,
    }


def _summary_row(label: str, a: dict) -> str:
    if not a.get("shapes"):
        return f"| {label} | 0 | - | - | - | - |"
    rank = "-" if a["median_first_rank"] is None else f"{a['median_first_rank']} ({a['max_first_rank']})"
    untimed = f", not timed at {a['first_untimed']}" if a["first_untimed"] else ""
    return (f"| {label} | {a['shapes']} | {a['mean_spearman']:.2f} ({a['min_spearman']:.2f}) | "
            f"{_pct(a['mean_top5_quality'])} ({_pct(a['min_top5_quality'])}) | "
            f"{_pct(a['mean_first_quality'])} ({_pct(a['min_first_quality'])}{untimed}) | {rank} |")


def report(manifest: dict, results) -> Report:
    """Scores per case and shape; results: one results dict, or a list of them (the parts)."""
    results = merge(results)
    check_bundle(manifest, results)
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
    parts = results.get("parts")
    if parts and (len(parts) > 1 or parts[0].get("part")):
        got = sorted(tuple(p["part"]) for p in parts if p.get("part"))
        desc = [f"{p['part'][0]}/{p['part'][1]}" if p.get("part") else "all" for p in parts]
        times = [f"{d}: {p['seconds']:.0f} s, compile {p['compile_seconds']:.0f} s" if p.get("seconds")
                 else f"{d}: cut off" for d, p in zip(desc, parts)]
        lines += [f"Results of {len(parts)} GPU command{'s' if len(parts) > 1 else ''} "
                  f"(parts {', '.join(desc)}): " + "; ".join(times) + ".", ""]
        want = manifest.get("parts", 1)
        missing = [k for k in range(1, want + 1) if (k, want) not in got]
        if got and missing:
            lines += [f"**Parts missing: {', '.join(f'{k}/{want}' for k in missing)}; the scores cover the other "
                      "parts' configurations only.**", ""]
    summary = {"device": results.get("device"), "date": results.get("date"), "cases": {}}
    for case in manifest["cases"]:
        spec = cases_mod.case_named(case["name"])
        counts = status_counts.get(case["name"], {})
        lines += [f"### {case['name']} ({spec.sample})", "",
                  "| shape | set | legal | timed | Spearman ρ | best of top 5% / best | first choice: rank, / best "
                  "| best measured | recommend time |",
                  "|---|---|---|---|---|---|---|---|---|"]
        rows = []
        for s, ranking in enumerate(case["rankings"]):
            sc = score(ranking["predicted_ms"], by_case.get((case["name"], s), {}), ranking["first_choice"])
            shape = ranking["shape"]
            held = bool(ranking.get("held_out"))
            group = "held out" if held else "calibration"
            rows.append({"shape": shape, "held_out": held, "legal": ranking["legal"],
                         "recommend_seconds": ranking["recommend_seconds"], **(sc or {})})
            if sc is None:
                lines.append(f"| {cases_mod.shape_key(shape)} | {group} | {ranking['legal']} | "
                             f"{len(by_case.get((case['name'], s), {}))} | - | - | - | - | "
                             f"{ranking['recommend_seconds'] * 1e3:.0f} ms |")
                continue
            tflops = spec.flops(shape) / sc["best_ms"] / 1e9
            first = (f"{sc['first_rank']} of {sc['measured']}, {_pct(sc['first_quality'])}"
                     if "first_rank" in sc else "not timed")
            lines.append(f"| {cases_mod.shape_key(shape)} | {group} | {ranking['legal']} | {sc['measured']} | "
                         f"{sc['spearman']:.2f} | {_pct(sc['top5_quality'])} (top {sc['top5_count']}) | {first} | "
                         f"{tflops:.0f} TFLOP/s | {ranking['recommend_seconds'] * 1e3:.0f} ms |")
        groups = {"fitted": aggregate([r for r in rows if not r["held_out"]]),
                  "held_out": aggregate([r for r in rows if r["held_out"]]),
                  "all": aggregate(rows)}
        if groups["all"]["shapes"]:
            lines += ["", "| shapes | n | Spearman ρ: mean (worst) | best of top 5% / best: mean (worst) | "
                          "first choice / best: mean (worst) | first choice rank: median (worst) |",
                      "|---|---|---|---|---|---|",
                      _summary_row(spec.fitted_label, groups["fitted"]),
                      _summary_row("held out", groups["held_out"]),
                      _summary_row("all", groups["all"])]
        if any(k != "ok" for k in counts):
            lines += ["", "Not timed: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()) if k != "ok") + "."]
        lines.append("")
        agg = {k: v for k, v in groups["all"].items() if k in
               ("mean_spearman", "mean_top5_quality", "min_top5_quality", "mean_first_quality")}
        summary["cases"][case["name"]] = {"rows": rows, **agg, "groups": groups, "statuses": counts}
    return Report("\n".join(lines), summary)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("manifest")
    ap.add_argument("results", nargs="+")
    ap.add_argument("--md", help="write the markdown here too")
    ap.add_argument("--json", help="write the scores here")
    ap.add_argument("--merged", help="write the merged results here")
    args = ap.parse_args()
    merged = merge([load_results(pathlib.Path(p)) for p in args.results])
    r = report(json.loads(pathlib.Path(args.manifest).read_text()), merged)
    if args.md:
        pathlib.Path(args.md).write_text(r.markdown)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(r.summary, indent=1))
    if args.merged:
        pathlib.Path(args.merged).write_text(json.dumps(merged, indent=1))
    print(r.markdown)


if __name__ == "__main__":
    main()
