"""Markdown tables of a benchmark run (the JSON bench.py writes) for docs/benchmarks.md.

Pure Python: the tables can be regenerated anywhere from a recorded JSON file,
    python3 bench/report.py bench/results/h100-2026-11-23.json
"""
from __future__ import annotations

import json
import math
import sys

# Per kernel family: the peers, as (key in the JSON, column title). The first peer also provides
# the reference output that ours is checked against in the benchmark run.
PEERS = {
    "gemm": [("cublas", "cuBLAS"), ("triton", "Triton")],
    "gemm_auto": [("cublas", "cuBLAS")],
    "gemm_nt": [("cublas", "cuBLAS")],
    "gemm_batched": [("cublas", "cuBLAS")],
    "attention": [("sdpa_flash", "SDPA flash"), ("sdpa_cudnn", "SDPA cuDNN"),
                  ("triton", "Triton")],
    "softmax": [("torch", "torch.softmax")],
    "rmsnorm": [("torch", "F.rms_norm")],
}

TITLES = {
    "gemm": "GEMM, C = A @ B (TFLOP/s, 2MNK)",
    "gemm_auto": ("GEMM with `auto` knobs, dynamic shapes: variants behind the shape dispatch "
                  "(samples/gemm_auto.tl; TFLOP/s)"),
    "gemm_nt": "GEMM with B stored [N, K], C = A @ Bᵀ (`transpose_B`, PyTorch Linear's layout; TFLOP/s)",
    "gemm_batched": "Batched GEMM, C[b] = A[b] @ B[b] (TFLOP/s, 2·batch·MNK)",
    "attention": "Flash attention forward (TFLOP/s, 4·B·H·S²·D, halved when causal)",
    "softmax": "Row softmax (GB/s: input read once, output written once)",
    "rmsnorm": "RMSNorm (GB/s: input and weight read once, output written once)",
}


def _rate(impl: dict | None, memory_bound: bool) -> float | None:
    if not impl or impl.get("status") != "ok":
        return None
    return impl.get("gbps" if memory_bound else "tflops")


def _cell(impl: dict | None, memory_bound: bool) -> str:
    if impl is None:
        return "n/a"
    status = impl.get("status", "n/a")
    if status == "ok":
        return f"{_rate(impl, memory_bound):.1f}"
    if status == "wrong":
        if impl.get("nan"):
            return f"wrong ({impl['nan']} NaN)"
        rel = impl.get("rel_err")  # None in a saved JSON where it was NaN
        return "wrong" if rel is None or math.isnan(rel) else f"wrong (rel {rel:.1e})"
    return status.split(":")[0]  # "error", "skipped", "unavailable"


def _ratio(ours: float | None, peer: float | None) -> str:
    if ours is None or not peer:
        return "—"
    return f"{ours / peer:.2f}"


def _shape_label(item: dict) -> str:
    s = item["shape"]
    if item["family"] in ("gemm", "gemm_auto", "gemm_nt"):
        return f"{s['M']}×{s['N']}×{s['K']}"
    if item["family"] == "gemm_batched":
        return f"{s['batch']} × {s['M']}×{s['N']}×{s['K']}"
    if item["family"] == "attention":
        return f"{s['batch']}×{s['heads']}×{s['seq_len']}×{s['dim']}"
    return f"{s['M']}×{s['N']}"


def family_table(family: str, items: list, copy_gbps: float | None) -> list:
    memory_bound = family in ("softmax", "rmsnorm")
    peers = PEERS[family]
    head = ["shape", "dtype"] + (["causal"] if family == "attention" else []) + ["ours"]
    head += [title for _, title in peers] + [f"ours/{title}" for _, title in peers]
    if memory_bound:
        head += ["ours/copy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    # Rows with a note are marked [n]; the notes follow the table.
    notes = []
    for item in items:
        if item.get("note") and item["note"] not in notes:
            notes.append(item["note"])
    for item in items:
        ours = item["impls"].get("ours")
        ours_rate = _rate(ours, memory_bound)
        mark = f" [{notes.index(item['note']) + 1}]" if item.get("note") else ""
        row = [_shape_label(item) + mark, item["dtype"]]
        if family == "attention":
            row.append("yes" if item["causal"] else "no")
        row.append(_cell(ours, memory_bound))
        row += [_cell(item["impls"].get(key), memory_bound) for key, _ in peers]
        row += [_ratio(ours_rate, _rate(item["impls"].get(key), memory_bound))
                for key, _ in peers]
        if memory_bound:
            row.append(_ratio(ours_rate, copy_gbps))
        lines.append("| " + " | ".join(row) + " |")
    return lines + [f"\n[{i + 1}] {n}." for i, n in enumerate(notes)]


def markdown(run: dict) -> str:
    copy = run.get("copy_TBps")
    out = [f"## {run['device']}, {run['date']}", "",
           f"torch {run.get('torch')}, CUDA {run.get('cuda')}, Triton {run.get('triton')}, "
           f"driver {run.get('driver')}; bundle from {run.get('generator') or '?'}.",
           f"Device-to-device copy: {copy:.2f} TB/s (bytes read + written)." if copy else
           "Device-to-device copy: not measured.",
           f"Timing: {run.get('method', '')}", ""]
    for family in PEERS:
        items = [i for i in run["items"] if i["family"] == family]
        if not items:
            continue
        out += [f"### {TITLES[family]}", ""]
        out += family_table(family, items, copy * 1e3 if copy else None)
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS.json")
    with open(sys.argv[1]) as f:
        print(markdown(json.load(f)))
