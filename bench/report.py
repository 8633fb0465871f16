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
    "gemm_fp8": [("cublas", "cuBLASLt (torch._scaled_mm)")],
    "gemm_fp8_decode": [("cublas", "cuBLASLt (torch._scaled_mm)")],
    "attention_overlap": [("sdpa_flash", "SDPA flash"), ("sdpa_cudnn", "SDPA cuDNN"), ("triton", "Triton")],
    "attention": [("sdpa_flash", "SDPA flash"), ("sdpa_cudnn", "SDPA cuDNN"),
                  ("triton", "Triton")],
    "softmax": [("torch", "torch.softmax")],
    "rmsnorm": [("torch", "F.rms_norm")],
    "mla": [("torch", "torch")],
    "block_sparse_attention": [("sdpa_masked", "SDPA, element mask"), ("triton", "Triton block-sparse")],
    "vertical_slash_attention": [("torch", "torch, gathered keys"), ("triton", "Triton (MInference's structure)")],
    "attention_sink": [("torch", "torch (explicit softmax)"), ("sdpa_sink", "SDPA, sink as a key"),
                       ("triton", "Triton attention-sink")],
    "log_softmax": [("torch", "torch.log_softmax")],
    "layernorm": [("torch", "F.layer_norm")],
    "swiglu": [("torch", "F.silu(G) * U")],
    "gemv": [("cublas", "cuBLAS (torch.mv)")],
    "flash_decoding": [("sdpa", "SDPA (enable_gqa)"), ("torch", "torch matmuls")],
    "conv2d": [("cudnn", "cuDNN (F.conv2d, channels_last)")],
    "conv2d_splitk": [("cudnn", "cuDNN (F.conv2d, channels_last)")],
    "dequant_w4a16": [("cublas", "cuBLAS on dequantized W")],
    "dequant_fp4_gemm": [("cublas", "cuBLAS on dequantized W")],
    "w4a16_wreg": [("cublas", "cuBLAS on dequantized W")],
    "dequant_gemv_w4a16": [("cublas", "cuBLAS on dequantized W")],
    "dequant_gemv_w4a16_tc": [("cublas", "cuBLAS on dequantized W")],
    "dequant_gemv_w4a16_tcs": [("cublas", "cuBLAS on dequantized W")],
    "fused_moe": [("torch", "torch loop over experts"), ("triton", "Triton fused_moe")],
    "attention_bwd": [("sdpa_flash", "SDPA flash backward"), ("sdpa_cudnn", "SDPA cuDNN backward")],
    "attention_bwd_split": [("sdpa_flash", "SDPA flash backward"), ("sdpa_cudnn", "SDPA cuDNN backward")],
    "gated_delta": [("torch", "torch, chunked (f32)"), ("triton", "Triton, same algorithm")],
}

# Families timed in GB/s (each input read once, each output written once) against the copy
# bandwidth rather than in TFLOP/s.
MEMORY_FAMILIES = ("softmax", "rmsnorm", "log_softmax", "layernorm", "swiglu", "gemv",
                   "flash_decoding")

# Families whose table gives times against the item's roofline floor (bench.py's roofline_floor)
# rather than rates.
FLOOR_FAMILIES = ("mla", "dequant_w4a16", "dequant_gemv_w4a16", "dequant_gemv_w4a16_tc", "dequant_gemv_w4a16_tcs", "dequant_fp4_gemm", "w4a16_wreg",
                  "fused_moe")

TITLES = {
    "gemm": "GEMM, C = A @ B (TFLOP/s, 2MNK)",
    "gemm_auto": ("GEMM with `auto` knobs, dynamic shapes: variants behind the shape dispatch "
                  "(samples/gemm_auto.tl; TFLOP/s)"),
    "gemm_nt": "GEMM with B stored [N, K], C = A @ Bᵀ (`transpose_B`, PyTorch Linear's layout; TFLOP/s)",
    "gemm_batched": "Batched GEMM, C[b] = A[b] @ B[b] (TFLOP/s, 2·batch·MNK)",
    "gemm_fp8": ("FP8 GEMM with row-wise scales, C = (A @ Bᵀ) · scale_a · scale_b (samples/gemm_fp8.tl, "
                 "e4m3 in, bf16 out; TFLOP/s, 2MNK)"),
    "gemm_fp8_decode": ("FP8 GEMM with row-wise scales at decoding sizes, C^T per block (samples/gemm_fp8.tl's "
                        "gemm_fp8_decode, e4m3 in, bf16 out; TFLOP/s, 2MNK)"),
    "attention_overlap": "Flash attention forward, FlashAttention-3 overlap (TFLOP/s, 4·B·H·S²·D, halved when causal)",
    "attention": "Flash attention forward (TFLOP/s, 4·B·H·S²·D, halved when causal)",
    "softmax": "Row softmax (GB/s: input read once, output written once)",
    "rmsnorm": "RMSNorm (GB/s: input and weight read once, output written once)",
    "block_sparse_attention": ("Block-sparse attention forward (samples/block_sparse_attention.tl; TFLOP/s "
                               "of the dense 4·B·H·S²·D, so the kept fraction of blocks scales them)"),
    "vertical_slash_attention": ("Vertical-slash sparse attention forward (MInference; "
                                 "samples/vertical_slash_attention.tl; TFLOP/s of the (query, key) pairs the "
                                 "index tables list, 4·D each; shape B×H×S×D, verticals and slash diagonals per head)"),
    "attention_sink": ("Attention with sinks and GQA, forward (samples/attention_sink.tl; TFLOP/s, "
                       "4·B·H·S²·D, halved when causal; shape B×H×S×D, g = H / kv_heads query heads per K/V head)"),
    "log_softmax": "Row log-softmax (GB/s: input read once, output written once)",
    "layernorm": "LayerNorm (GB/s: input, weight and bias read once, output written once)",
    "swiglu": "SwiGLU, Y = silu(G) * U (GB/s: G and U read once, Y written once)",
    "gemv": "GEMV, y = A @ x (GB/s: A and x read once, y written once)",
    "flash_decoding": ("Decode attention with split KV and GQA (samples/flash_decoding.tl, both "
                       "kernels as one operation; GB/s: Q, K and V read once, O written once, "
                       "the split partials not counted)"),
    "conv2d": ("2-d convolution, NHWC, as an implicit GEMM (samples/conv2d.tl; TFLOP/s, "
               "2·N·P·Q·F·kh·kw·C; shape N×H×W×C→F, filter kh×kw/stride)"),
    "conv2d_splitk": ("2-d convolution with split K (samples/conv2d.tl's conv2d_splitk and "
                      "conv2d_splitk_sum as one operation; TFLOP/s as above)"),
    "dequant_w4a16": ("W4A16 GEMM, C = A @ dequant(B)ᵀ, int4 weights with per-group scales, against its "
                      "roofline floor (samples/dequant_gemm_w4a16.tl at group size 128; M×N×K; µs)"),
    "dequant_fp4_gemm": ("FP4-weight GEMM, C = A @ dequant(B)ᵀ, FP4 E2M1 weights with per-group scales, "
                         "against its roofline floor (samples/dequant_gemm_fp4.tl at group size 32; M×N×K; µs)"),
    "dequant_gemv_w4a16": ("W4A16 decode GEMV, C = A @ dequant(B)ᵀ on the same int4 weights, against its "
                           "roofline floor (samples/dequant_gemv_w4a16.tl at group size 128; M×N×K; µs)"),
    "dequant_gemv_w4a16_tc": ("W4A16 GEMV on the tensor cores, C = A @ dequant(B)ᵀ on the same int4 weights, "
                              "against its roofline floor (samples/dequant_gemv_w4a16_tc.tl at group size 128; "
                              "M×N×K; µs)"),
    "dequant_gemv_w4a16_tcs": ("W4A16 GEMV on the tensor cores with the weights staged through shared memory, "
                               "C = A @ dequant(B)ᵀ on the same int4 weights, against its roofline floor "
                               "(samples/dequant_gemv_w4a16_tcs.tl at group size 128; "
                               "M×N×K; µs)"),
    "w4a16_wreg": ("W4A16 GEMM with the weights dequantized into the tensor cores' A operand in registers, "
                   "C = A @ dequant(B)ᵀ, against its roofline floor (samples/"
                   "dequant_gemm_w4a16_regs.tl at group size 128; M×N×K; µs)"),
    "fused_moe": ("Fused MoE, grouped GEMM over routed tokens, against its roofline floor "
                  "(samples/fused_moe.tl at top 2; tokens×K→N, experts; µs)"),
    "attention_bwd": ("Flash attention backward, dQ, dK and dV from dO (samples/flash_attention_bwd.tl: "
                      "the preprocess and the backward as one operation, dQ left in f32; TFLOP/s, "
                      "10·B·H·S²·D = 2.5x the forward's, halved when causal)"),
    "attention_bwd_split": ("Flash attention backward without atomics (samples/flash_attention_bwd.tl: the "
                            "preprocess, the dK/dV kernel and the dQ kernel as one operation; TFLOP/s, "
                            "10·B·H·S²·D as for the atomic form, halved when causal)"),
    "gated_delta": ("Chunk gated delta net forward (samples/chunk_gated_delta.tl, both kernels as one "
                    "operation; TFLOP/s of the chunked algorithm's matrix products at chunk 64, "
                    "problems.gated_delta_flops; shape B×H×T×dk×dv)"),
    "mla": ("MLA decode, one query token per sequence, against its roofline floor "
            "(samples/flash_mla_decode.tl; batch×heads×seqlen_kv×(dim+pe_dim); µs)"),
}

FLOOR_EXPLANATION = (
    "Floor: the larger of the bytes (every input read once, the output written once) at the "
    "device-to-device copy bandwidth and the FLOPs (MLA: 2·B·H·S·(dim+pe_dim) + 2·B·H·S·dim; "
    "W4A16: 2MNK; fused MoE: 2·tokens·topk·N·K, its bytes counting the weights of min(E, tokens·topk) "
    "experts) at "
    "cuBLAS's f16 GEMM rate, both measured at the start of the run; \"bound by\" says which is "
    "larger. % of floor = floor / our time. ours/torch = torch's time / ours. % of a copy of "
    "the same bytes: a device-to-device copy moving the item's bytes, timed like the kernels, "
    "over our time (memory-bound items; small items pay the launch and ramp a 2 GiB copy hides).")


def _value(impl: dict | None, metric: str) -> float | None:
    """A working implementation's figure: "gbps", "tflops", or "us" (its median time)."""
    if not impl or impl.get("status") != "ok":
        return None
    return impl["ms"] * 1e3 if metric == "us" else impl.get(metric)


def _cell(impl: dict | None, metric: str) -> str:
    if impl is None:
        return "n/a"
    status = impl.get("status", "n/a")
    if status == "ok":
        return f"{_value(impl, metric):.1f}"
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
    if item["family"] in ("gemm", "gemm_auto", "gemm_nt", "gemm_fp8", "gemm_fp8_decode"):
        return f"{s['M']}×{s['N']}×{s['K']}"
    if item["family"] == "gemm_batched":
        return f"{s['batch']} × {s['M']}×{s['N']}×{s['K']}"
    if item["family"] in ("attention", "attention_overlap", "block_sparse_attention", "attention_bwd",
                          "attention_bwd_split"):
        return f"{s['batch']}×{s['heads']}×{s['seq_len']}×{s['dim']}"
    if item["family"] == "attention_sink":
        return f"{s['batch']}×{s['heads']}×{s['seq_len']}×{s['dim']}, g{s['heads'] // s['kv_heads']}"
    if item["family"] == "vertical_slash_attention":
        return f"{s['batch']}×{s['heads']}×{s['seq_len']}×{s['dim']}, {s['nnz_v']} v + {s['nnz_s']} s"
    if item["family"] == "gemv":
        return f"{s['M']}×{s['K']}"
    if item["family"] in ("conv2d", "conv2d_splitk"):
        return f"{s['N']}×{s['H']}×{s['W']}×{s['C']}→{s['F']}, {item['build'].split('_')[1]}"
    if item["family"] == "flash_decoding":
        return f"{s['batch']}×{s['heads']}×{s['seqlen']}×{s['dim']}, {s['kv_heads']} KV heads"
    if item["family"] in ("dequant_w4a16", "dequant_gemv_w4a16", "dequant_gemv_w4a16_tc", "dequant_gemv_w4a16_tcs", "dequant_fp4_gemm",
                          "w4a16_wreg"):
        return f"{s['M']}×{s['N']}×{s['K']}"
    if item["family"] == "fused_moe":
        return f"{s['T']}×{s['K']}→{s['N']}, {s['E']} experts"
    if item["family"] == "gated_delta":
        return f"{s['batch']}×{s['heads']}×{s['seq_len']}×{s['dk']}×{s['dv']}"
    if item["family"] == "mla":
        label = f"{s['batch']}×{s['heads']}×{s['seqlen_kv']}×({s['dim']}+{s['pe_dim']})"
        return label + (f", {s['kv_heads']} KV heads" if s["kv_heads"] != 1 else "")
    return f"{s['M']}×{s['N']}"


def _notes(items: list) -> list:
    """The items' distinct notes: rows with one are marked [n], the notes follow the table."""
    notes = []
    for item in items:
        if item.get("note") and item["note"] not in notes:
            notes.append(item["note"])
    return notes


def _row_label(item: dict, notes: list) -> str:
    return _shape_label(item) + (f" [{notes.index(item['note']) + 1}]" if item.get("note") else "")


def _note_lines(notes: list) -> list:
    return [f"\n[{i + 1}] {n}." for i, n in enumerate(notes)]


def floor_table(family: str, items: list) -> list:
    """Times in µs beside the roofline floor: how far each item is from the least it can take."""
    peers = PEERS[family]
    head = ["shape", "dtype", "ours"] + [title for _, title in peers]
    head += [f"ours/{title}" for _, title in peers] + ["floor", "bound by", "% of floor",
                                                       "% of a copy of the same bytes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = _notes(items)
    for item in items:
        ours = item["impls"].get("ours")
        ours_us = _value(ours, "us")
        row = [_row_label(item, notes), item["dtype"], _cell(ours, "us")]
        row += [_cell(item["impls"].get(key), "us") for key, _ in peers]
        # Times, not rates: the peer's over ours, so that above 1 still means ours is faster.
        row += [_ratio(_value(item["impls"].get(key), "us"), ours_us) for key, _ in peers]
        floor = item.get("floor_ms")
        row += [f"{floor * 1e3:.1f}" if floor else "n/a", item.get("floor_bound", "n/a"),
                f"{ours['floor_pct']:.1f}%" if ours_us and "floor_pct" in ours else "—"]
        same = item.get("copy_same_GBps")
        row.append(f"{100 * item['min_bytes'] / (same * 1e3) / ours_us:.1f}%"
                   if same and ours_us and item.get("min_bytes") else "—")
        lines.append("| " + " | ".join(row) + " |")
    return lines + _note_lines(notes) + ["", FLOOR_EXPLANATION]


# Families whose tables say whether each item is causal.
CAUSAL_FAMILIES = ("attention", "attention_overlap", "attention_sink", "attention_bwd", "attention_bwd_split")


def family_table(family: str, items: list, copy_gbps: float | None) -> list:
    if family in FLOOR_FAMILIES:
        return floor_table(family, items)
    memory_bound = family in MEMORY_FAMILIES
    metric = "gbps" if memory_bound else "tflops"
    peers = PEERS[family]
    causal_column = family in CAUSAL_FAMILIES
    head = ["shape", "dtype"] + (["causal"] if causal_column else []) + ["ours"]
    head += [title for _, title in peers] + [f"ours/{title}" for _, title in peers]
    if memory_bound:
        head += ["ours/copy", "ours/copy of the same bytes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = _notes(items)
    for item in items:
        ours = item["impls"].get("ours")
        ours_rate = _value(ours, metric)
        row = [_row_label(item, notes), item["dtype"]]
        if causal_column:
            row.append("yes" if item["causal"] else "no")
        row.append(_cell(ours, metric))
        row += [_cell(item["impls"].get(key), metric) for key, _ in peers]
        row += [_ratio(ours_rate, _value(item["impls"].get(key), metric))
                for key, _ in peers]
        if memory_bound:
            row += [_ratio(ours_rate, copy_gbps), _ratio(ours_rate, item.get("copy_same_GBps"))]
        lines.append("| " + " | ".join(row) + " |")
    return lines + _note_lines(notes)


def turns_table(family: str, items: list) -> list:
    """The items timed again by turns (bench.py's interleave): ours' time and its ratio to
    each peer measured in the same rounds."""
    items = [i for i in items if "ms" in i.get("interleaved", {})]
    if not items:
        return []
    keys = [key for key, _ in PEERS[family] if any(key in i["interleaved"]["ms"] for i in items)]
    titles = dict(PEERS[family])
    causal = family in CAUSAL_FAMILIES
    head = ["shape", "dtype"] + (["causal"] if causal else []) + ["ours, ms"]
    head += [f"ours/{titles[k]}" for k in keys]
    lines = ["", f"By turns ({items[0]['interleaved']['rounds']} rounds, each implementation timed "
             "once per round in rotating order; peer time over ours):", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for item in items:
        ms = item["interleaved"]["ms"]
        row = [_shape_label(item), item["dtype"]] + (["yes" if item["causal"] else "no"] if causal else [])
        row += [f"{ms['ours']:.3f}"] + [f"{ms[k] / ms['ours']:.2f}" if k in ms else "-" for k in keys]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def markdown(run: dict) -> str:
    copy = run.get("copy_TBps")
    out = [f"## {run['device']}, {run['date']}", "",
           f"torch {run.get('torch')}, CUDA {run.get('cuda')}, Triton {run.get('triton')}, "
           f"driver {run.get('driver')}; bundle from {run.get('generator') or '?'}.",
           f"Device-to-device copy: {copy:.2f} TB/s (bytes read + written)." if copy else
           "Device-to-device copy: not measured.",
           *([f"cuBLAS f16 GEMM at 8192³: {run['gemm_TFLOPs']:.0f} TFLOP/s."]
             if run.get("gemm_TFLOPs") else []),
           f"Timing: {run.get('method', '')}", ""]
    for family in PEERS:
        items = [i for i in run["items"] if i["family"] == family]
        if not items:
            continue
        out += [f"### {TITLES[family]}", ""]
        out += family_table(family, items, copy * 1e3 if copy else None)
        out += turns_table(family, items)
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS.json")
    with open(sys.argv[1]) as f:
        print(markdown(json.load(f)))
