"""The GPU side of bench/bench.py: inputs, implementations, checks and timings of bench items.

Every implementation of an item runs on the same inputs. The first library peer that works
(cuBLAS, SDPA flash, torch) gives the reference output; every other implementation, ours
included, must match it within 1e-2 (norm-wise relative error) before it is timed, so no figure
in the tables comes from a wrong result. Ours must also write every element: its output starts
as NaN.
"""
from __future__ import annotations

import contextlib
import math
import os
import statistics
import zlib
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from abi import TensorView, load_entry
from metrics import compare, judge
from problems import gated_delta_chunked, ordered_tensors, problem_for
from timing import HangError, Timer, cuda_healthy, wait

# torch's fp8 dtypes (the gemm_nt peer takes them to cuBLASLt's fp8 GEMM).
FP8_DTYPES = tuple(getattr(torch, n) for n in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, n))

TOLERANCE = 1e-2
TIMING = dict(warmup_ms=25, rep_ms=100, min_reps=3, max_reps=100)
TUNING = dict(warmup_ms=5, rep_ms=20, min_reps=2, max_reps=10)
# Rounds of interleaved() (bench.py's Triton pass: ours, the library peers and the tuned Triton
# kernel of an item timed by turns).
INTERLEAVED_ROUNDS = 5


class FatalError(RuntimeError):
    """The CUDA context is broken (illegal address, hang): nothing more can run here."""


@dataclass
class Impl:
    key: str
    run: Callable[[], torch.Tensor]   # runs once, returns the output in our layout
    context: Callable = contextlib.nullcontext
    config: str = ""


def copy_bandwidth_tbps(timer: Timer) -> float:
    """Device-to-device copy of 2 GiB, counting bytes read plus bytes written (as the anchors)."""
    x = torch.empty(1 << 30, dtype=torch.float16, device="cuda").normal_()
    y = torch.empty_like(x)
    t = timer.measure(lambda: y.copy_(x), **TIMING)
    return 2 * x.numel() * x.element_size() / (t.median_ms * 1e-3) / 1e12


def copy_same_bytes_gbps(timer: Timer, min_bytes: float) -> float:
    """A device-to-device copy moving the item's own bytes (min_bytes / 2 read, as many
    written), timed like the kernels (L2 flushed): what a copy reaches at this size, launch
    and ramp included. The ratio to it says how much of a small item's gap to the 2 GiB copy
    bandwidth any kernel would have."""
    n = max(int(min_bytes // 2) // 16 * 16, 16)
    x = torch.empty(n, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    t = timer.measure(lambda: y.copy_(x), **TIMING)
    return 2 * n / (t.median_ms * 1e-3) / 1e9


GEMM_PEAK_N = 8192


def gemm_peak_tflops(timer: Timer) -> float:
    """cuBLAS's f16 rate (torch.matmul at 8192^3, f32 accumulation): the compute ceiling."""
    a, b = (torch.randn(GEMM_PEAK_N, GEMM_PEAK_N, device="cuda").half() for _ in range(2))
    c = torch.empty_like(a)
    t = timer.measure(lambda: torch.matmul(a, b, out=c), **TIMING)
    return 2 * GEMM_PEAK_N ** 3 / (t.median_ms * 1e-3) / 1e12


class ItemBench:
    """One bench item: its inputs, its implementations, their records."""

    def __init__(self, item, build, timer: Timer, timeout_s: float):
        self.item, self.build, self.timer, self.timeout_s = item, build, timer, timeout_s
        # The item's roofline floor (bench.py's roofline_floor), set by bench.py once the
        # ceilings are measured: each timing then says what fraction of it it reaches.
        self.floor_ms = 0.0
        self.problem = problem_for(build)
        gen = torch.Generator(device="cuda")
        gen.manual_seed(zlib.crc32(item.name.encode()))
        self.inputs = self.problem.inputs(item.shape, gen)
        self.reference = None
        self.tuned = None  # the fastest correct candidate of tune()

    # ---- measurement --------------------------------------------------------------------------

    def measure(self, impl: Impl, timing=None, may_be_reference: bool = False) -> dict:
        """Checks impl against the reference, then times it. A library peer measured while there
        is no reference yet (may_be_reference) provides it instead."""
        if self.reference is None and not may_be_reference:
            return {"status": "error: no library peer produced a reference output"}
        try:
            with impl.context():
                out = impl.run()
                wait(timeout_s=self.timeout_s)
                record = {"status": "ok", **({"config": impl.config} if impl.config else {})}
                if self.reference is None:
                    if not bool(torch.isfinite(out).all()):
                        return {"status": "wrong", "rel_err": math.nan}
                    self.reference = out.clone()
                else:
                    stats = compare(out, self.reference)
                    record["rel_err"] = stats.rel
                    if not judge(stats, TOLERANCE).passed:
                        return {**record, "status": "wrong", "nan": stats.nan}
                del out
                t = self.timer.measure(impl.run, timeout_s=self.timeout_s, **(timing or TIMING))
        except HangError as e:
            raise FatalError(f"{self.item.name} {impl.key}: {e}") from e
        except Exception as e:  # noqa: BLE001 - a peer that cannot run is a table entry
            if not cuda_healthy():
                raise FatalError(f"{self.item.name} {impl.key}: {e}") from e
            first_line = (str(e).splitlines() or [""])[0][:200]
            return {"status": f"error: {type(e).__name__}: {first_line}"}
        seconds = t.median_ms * 1e-3
        return {**record, **t.as_dict(), "ms": t.median_ms,
                "tflops": self.problem.flops(self.item.shape) / seconds / 1e12,
                "gbps": self.problem.min_bytes(self.item.shape) / seconds / 1e9,
                **({"floor_pct": 100 * self.floor_ms / t.median_ms} if self.floor_ms else {})}

    def ensure_reference(self) -> None:
        """Computes the reference output without timing (for the Triton pass)."""
        for impl in self.library_peers():
            if self.reference is not None:
                return
            try:
                with impl.context():
                    out = impl.run()
                    wait(timeout_s=self.timeout_s)
            except HangError as e:
                raise FatalError(f"{self.item.name} {impl.key}: {e}") from e
            except RuntimeError as e:
                if not cuda_healthy():
                    raise FatalError(f"{self.item.name} {impl.key}: {e}") from e
                continue
            if bool(torch.isfinite(out).all()):
                self.reference = out.clone()

    def interleaved(self, impls: list, rounds: int = INTERLEAVED_ROUNDS) -> dict:
        """Each implementation (already checked by measure) timed again in `rounds` rounds, one
        short timing of each per round, the order rotated from round to round: ratios between
        implementations taken the same seconds apart, not minutes apart as the separate passes
        are (cuBLAS alone moved 604-731 TFLOP/s at 4096³ between items of one process, run
        224). The median over rounds per implementation, in ms."""
        times = {impl.key: [] for impl in impls}
        for r in range(rounds):
            for impl in impls[r % len(impls):] + impls[:r % len(impls)]:
                with impl.context():
                    t = self.timer.measure(impl.run, timeout_s=self.timeout_s, **TUNING)
                times[impl.key].append(t.median_ms)
        return {"rounds": rounds, "ms": {k: statistics.median(v) for k, v in times.items()}}

    def tune(self, candidates: list) -> dict:
        """Times every candidate briefly, then the fastest correct one properly (kept as
        self.tuned for interleaved())."""
        best, best_ms, tried = None, math.inf, []
        for impl in candidates:
            rec = self.measure(impl, TUNING)
            tried.append(f"{impl.config}: {rec.get('ms', rec['status'])}")
            if rec["status"] == "ok" and rec["ms"] < best_ms:
                best, best_ms = impl, rec["ms"]
        if best is None:
            return {"status": "error: no configuration ran correctly", "tried": tried}
        self.tuned = best
        return {**self.measure(best), "tried": tried}

    def measure_ours(self, so_path: str) -> dict:
        try:
            impl = self.ours(so_path)
        except (OSError, AttributeError) as e:  # dlopen failed, or no tlc_<kernel> in it
            return {"status": f"error: cannot load {os.path.basename(so_path)}: {e}"}
        return self.measure(impl)

    # ---- implementations ----------------------------------------------------------------------

    def ours(self, so_path: str) -> Impl:
        spec = self.build.spec
        entry = load_entry(so_path, spec)
        outputs = self.problem.outputs(self.item.shape)
        tensors = ordered_tensors(spec, self.inputs, outputs)
        stream = torch.cuda.current_stream().cuda_stream
        call = entry.bind([TensorView.of(t) for t in tensors],
                          self.problem.scalars(self.item.shape), stream)
        # With `then` launches (split-KV decoding) the call runs them all: one operation.
        result = outputs[spec.result]

        def run():
            code = call()
            if code != 0:
                raise RuntimeError(f"tlc_{spec.kernel} returned {code}: {entry.message()}")
            return result
        run.keepalive = tensors
        return Impl("ours", run)

    def library_peers(self) -> list:
        family, x = self.build.family, self.inputs
        if family in ("gemm", "gemm_auto"):
            return [Impl("cublas", lambda: torch.matmul(x["A"], x["B"]))]
        if family == "gemm_nt":
            a, b = x["A"], x["B"]
            if a.dtype in FP8_DTYPES:
                one = torch.ones((), device=a.device, dtype=torch.float32)
                return [scaled_mm_cublaslt(a, b, one, one, self.problem.tensor_dtype("C"))]
            if a.dtype == torch.int8:
                return [Impl("cublas", lambda: torch._int_mm(a, b.t()))]  # cuBLASLt's s8 GEMM into s32
            return [Impl("cublas", lambda: F.linear(a, b))]
        if family in ("gemm_fp8", "gemm_fp8_decode"):
            # Row-wise scales: [M, 1] and [1, N], f32.
            return [scaled_mm_cublaslt(x["A"], x["B"], x["Scale_a"][:, None], x["Scale_b"][None, :],
                                       self.problem.tensor_dtype("C"))]
        if family == "gemm_batched":
            return [Impl("cublas", lambda: torch.bmm(x["A"], x["B"]))]
        if family in ("attention", "attention_overlap"):
            return self._sdpa_peers()
        if family in ("attention_bwd", "attention_bwd_split"):
            return self._sdpa_backward_peers()
        if family == "softmax":
            return [Impl("torch", lambda: torch.softmax(x["X"], dim=-1))]
        if family == "log_softmax":
            return [Impl("torch", lambda: torch.log_softmax(x["X"], dim=-1))]
        if family == "layernorm":
            n = x["X"].shape[-1]
            return [Impl("torch", lambda: F.layer_norm(x["X"], (n,), x["W"], x["B"], self.problem.eps))]
        if family == "swiglu":
            return [Impl("torch", lambda: F.silu(x["G"]) * x["U"])]
        if family == "gemv":
            return [Impl("cublas", lambda: torch.mv(x["A"], x["x"]))]
        if family == "rmsnorm":
            n = x["X"].shape[-1]
            return [Impl("torch", lambda: F.rms_norm(x["X"], (n,), x["W"], self.problem.eps))]
        if family == "mla":
            return [Impl("torch", mla_decode_torch(x))]
        if family == "block_sparse_attention":
            return [Impl("sdpa_masked", block_sparse_sdpa(x, self.problem))]
        if family == "vertical_slash_attention":
            return [Impl("torch", vertical_slash_torch(x, self.problem))]
        if family == "attention_sink":
            return [Impl("torch", attention_sink_torch(x, self.problem)),
                    Impl("sdpa_sink", attention_sink_sdpa(x, self.problem))]
        if family == "flash_decoding":
            return decode_peers(x)
        if family in ("conv2d", "conv2d_splitk"):
            return [conv2d_cudnn(x, self.problem)]
        if family in ("dequant_w4a16", "dequant_gemv_w4a16", "dequant_gemv_w4a16_tc", "dequant_gemv_w4a16_tcs", "dequant_fp4_gemm",
                      "w4a16_wreg"):
            return [dequantized_cublas(x, self.problem)]
        if family == "fused_moe":
            return [Impl("torch", fused_moe_torch(x, self.problem, self.item.shape))]
        if family == "gated_delta":
            # The chunked algorithm in float32 torch (batched triangular solves and matmuls):
            # the reference the others are checked against, and timed as a peer.
            return [Impl("torch", lambda: gated_delta_chunked(x, torch.float32))]
        raise KeyError(family)

    def _sdpa_peers(self) -> list:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        # SDPA wants [batch, heads, seq, dim]; contiguous copies made once, outside the timing,
        # so each backend reads its preferred layout. Outputs go back to [batch, seq, heads, dim]
        # as a view.
        q, k, v = (self.inputs[n].transpose(1, 2).contiguous() for n in ("Q", "K", "V"))
        causal = self.problem.causal

        def sdpa():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal).transpose(1, 2)
        return [Impl(key, sdpa, lambda b=backend: sdpa_kernel(b))
                for key, backend in (("sdpa_flash", SDPBackend.FLASH_ATTENTION),
                                     ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION))]

    def _sdpa_backward_peers(self) -> list:
        """SDPA's backward on its flash and cuDNN backends: the forward runs once per backend,
        under it, on the first call (outside the timing, which measures the repeats: the
        backward alone, as ours). Ours gives dQ (in f32) as its result, so the peers give dQ,
        back in [batch, seq, heads, dim]."""
        from torch.nn.attention import SDPBackend, sdpa_kernel
        causal = self.problem.causal
        do = self.inputs["dO"].transpose(1, 2).contiguous()

        def peer(key, backend):
            q, k, v = (self.inputs[n].transpose(1, 2).contiguous().requires_grad_()
                       for n in ("Q", "K", "V"))
            forward = {}

            def run():
                with torch.enable_grad():
                    if "out" not in forward:
                        forward["out"] = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    dq, _, _ = torch.autograd.grad(forward["out"], (q, k, v), do, retain_graph=True)
                return dq.transpose(1, 2)
            run.keepalive = (q, k, v, forward)
            return Impl(key, run, lambda: sdpa_kernel(backend))
        return [peer("sdpa_flash", SDPBackend.FLASH_ATTENTION),
                peer("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)]

    def triton_candidates(self) -> list:
        """One Impl per configuration, each with its own NaN-poisoned output, so that a
        configuration that skips elements cannot pass on what another one wrote."""
        import triton_kernels as tk
        family, x = self.build.family, self.inputs
        if family in ("gemm", "gemm_auto"):
            a, b = x["A"], x["B"]

            def gemm(cfg):
                c = torch.full((a.shape[0], b.shape[1]), math.nan, dtype=a.dtype, device=a.device)

                def run():
                    tk.matmul(a, b, c, cfg)
                    return c
                return Impl("triton", run, config=_config_text(cfg))
            return [gemm(cfg) for cfg in tk.MATMUL_CONFIGS]
        if family in ("attention", "attention_overlap"):
            q, k, v = (x[n].transpose(1, 2).contiguous() for n in ("Q", "K", "V"))
            causal = self.problem.causal

            def attention(cfg):
                o = torch.full_like(q, math.nan)

                def run():
                    tk.attention(q, k, v, o, causal, cfg)
                    return o.transpose(1, 2)  # back to [batch, seq, heads, dim]
                return Impl("triton", run, config=_config_text(cfg))
            return [attention(cfg) for cfg in tk.attention_configs(q.shape[-1])]
        if family == "block_sparse_attention":
            q, k, v = (x[n].transpose(1, 2).contiguous() for n in ("Q", "K", "V"))
            mask = x["BlockMask"]

            def sparse(cfg):
                o = torch.full_like(q, math.nan)

                def run():
                    tk.block_sparse_attention(q, k, v, mask, o, cfg)
                    return o.transpose(1, 2)
                return Impl("triton", run, config=_config_text(cfg))
            return [sparse(cfg) for cfg in tk.block_sparse_attention_configs(self.problem.block_m,
                                                                              self.problem.block_n)]
        if family == "vertical_slash_attention":
            q = x["Q"]
            tables = [x[n] for n in ("BlockCount", "BlockOffset", "ColumnCount", "ColumnIndex")]

            def vertical_slash(cfg):
                o = torch.full_like(q, math.nan)

                def run():
                    tk.vertical_slash_attention(q, x["K"], x["V"], *tables, o, cfg)
                    return o
                return Impl("triton", run, config=_config_text(cfg))
            return [vertical_slash(cfg) for cfg in
                    tk.vertical_slash_attention_configs(self.problem.block_m, self.problem.block_n)]
        if family == "attention_sink":
            if self.problem.window:
                return []  # the Triton kernel has no sliding window
            q, k, v, sinks = x["Q"], x["K"], x["V"], x["Sinks"]
            causal = self.problem.causal

            def sink(cfg):
                o = torch.full_like(q, math.nan)

                def run():
                    tk.attention_sink(q, k, v, sinks, o, causal, cfg)
                    return o
                return Impl("triton", run, config=_config_text(cfg))
            return [sink(cfg) for cfg in tk.attention_configs(q.shape[-1])]
        if family == "fused_moe":
            p = self.problem

            def moe(cfg):
                c = torch.full((self.item.shape["T"] * p.topk, x["W"].shape[1]), math.nan,
                               dtype=x["X"].dtype, device=x["X"].device)

                def run():
                    tk.fused_moe(x["X"], x["W"], c, x["TopkWeights"], x["SortedIds"], x["ExpertIds"],
                                 x["NumPostPadded"], p.topk, p.weighted, cfg)
                    return c
                return Impl("triton", run, config=_config_text(cfg))
            return [moe(cfg) for cfg in tk.fused_moe_configs(p.block_m)]
        if family == "gated_delta":
            q, v = x["Q"], x["V"]
            scratch = tk.gated_delta_scratch(q, v)

            def gdn(cfg):
                o = torch.full((*q.shape[:3], v.shape[-1]), math.nan, dtype=q.dtype, device=q.device)

                def run():
                    tk.gated_delta(q, x["K"], v, x["G"], x["Beta"], o, scratch, cfg)
                    return o
                return Impl("triton", run, config=_config_text(cfg))
            return [gdn(cfg) for cfg in tk.gated_delta_configs(v.shape[-1])]
        return []


def mla_decode_torch(inputs: dict) -> Callable[[], torch.Tensor]:
    """MLA decode as plain torch would do it (problems.py's reference, batched): per (sequence,
    KV head), scores = Q @ KV^T + Q_pe @ K_pe^T as dtype GEMMs (cuBLAS accumulates in f32, the
    sum is fused into the second one), the scaled softmax in f32, probabilities in dtype @ KV.
    Batches are [batch * kv_heads, ...]: views with one KV head (DeepSeek); with more, the cache
    is regrouped here, once, outside the timing (as SDPA's inputs are)."""
    batch, heads, dim = inputs["Q"].shape
    kv_heads, pe_dim = inputs["KV"].shape[2], inputs["Q_pe"].shape[2]
    q, q_pe = (inputs[n].reshape(batch * kv_heads, heads // kv_heads, -1) for n in ("Q", "Q_pe"))
    kv, k_pe = (inputs[n].transpose(1, 2).reshape(batch * kv_heads, -1, inputs[n].shape[-1])
                for n in ("KV", "K_pe"))
    scale = 1.0 / math.sqrt(dim + pe_dim)

    def run():
        scores = torch.baddbmm(torch.bmm(q, kv.transpose(1, 2)), q_pe, k_pe.transpose(1, 2))
        p = torch.softmax(scores.float() * scale, dim=-1).to(kv.dtype)
        return torch.bmm(p, kv).view(batch, heads, dim)
    return run


def decode_peers(inputs: dict) -> list:
    """Decoding with GQA as a PyTorch user writes it, for samples/flash_decoding.tl's layout
    (Q [batch, heads, dim], K and V [batch, kv_heads, seqlen, dim]): SDPA on the query as a
    one-token sequence with enable_gqa (no copy of K and V; the backend is SDPA's choice), and
    plain torch: per KV head, its group of query heads as the rows of batched matmuls in dtype
    (f32 accumulation), the scaled softmax in f32 (as problems.py's reference, in dtype)."""
    q, k, v = inputs["Q"], inputs["K"], inputs["V"]
    batch, heads, dim = q.shape
    kv_heads = k.shape[1]
    q4 = q.view(batch, heads, 1, dim)
    qg = q.view(batch, kv_heads, heads // kv_heads, dim)
    scale = 1.0 / math.sqrt(dim)

    def sdpa():
        return F.scaled_dot_product_attention(q4, k, v, enable_gqa=True).reshape(batch, heads, dim)

    def matmuls():
        p = torch.softmax((qg @ k.transpose(-1, -2)).float() * scale, dim=-1).to(v.dtype)
        return (p @ v).view(batch, heads, dim)
    return [Impl("sdpa", sdpa), Impl("torch", matmuls)]


def conv2d_cudnn(inputs: dict, problem) -> Impl:
    """cuDNN through torch.nn.functional.conv2d on channels_last tensors: X and Wt permuted to
    NCHW are exactly channels_last tensors over the same memory (no copy), and the NHWC output
    comes back as a view. cudnn.benchmark lets cuDNN time its algorithms and keep the fastest
    (during the warm-up); TF32 off, as for every reference."""
    x, w = problem.nchw(inputs, inputs["X"].dtype)

    def run():
        return problem.conv(x, w)
    return Impl("cudnn", run, lambda: torch.backends.cudnn.flags(enabled=True, benchmark=True,
                                                                 deterministic=False, allow_tf32=False))


def block_sparse_sdpa(inputs: dict, problem) -> Callable[[], torch.Tensor]:
    """What a PyTorch user writes for block-sparse attention: SDPA with the block mask expanded
    to a boolean [batch, heads, seq, seq] mask (expanded once, outside the timing), and rows
    that see no key set to 0 (what SDPA gives there depends on its backend)."""
    q, k, v = (inputs[n].transpose(1, 2).contiguous() for n in ("Q", "K", "V"))
    seq = q.shape[2]
    rows = torch.arange(seq, device=q.device) // problem.block_m
    cols = torch.arange(seq, device=q.device) // problem.block_n
    keep = inputs["BlockMask"][:, :, rows][:, :, :, cols] != 0
    # Rows that see no key: NaN from the math backend, an average of V from others; zeroed.
    blind = ~keep.any(dim=-1, keepdim=True)

    def run():
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        return out.masked_fill_(blind, 0.0).transpose(1, 2)
    run.keepalive = (keep, blind)
    return run


def vertical_slash_torch(inputs: dict, problem, chunk_bytes: int = 1 << 30) -> Callable[[], torch.Tensor]:
    """Vertical-slash attention as a PyTorch user writes it without a custom kernel, over the
    same index tables: per (batch, head) and chunk of query blocks, the listed keys' K and V
    rows gathered, the scores as a dtype GEMM (cuBLAS accumulates in f32), masked to the listed
    keys in [0, seq_len) at or left of each row, the softmax in f32 (rows that see no key: 0),
    probabilities in dtype @ V. The key lists (slash blocks expanded, then the verticals) are
    built once, outside the timing, trimmed to the longest row."""
    q, k, v = inputs["Q"], inputs["K"], inputs["V"]
    batch, seq, heads, dim = q.shape
    bm, bn, dev = problem.block_m, problem.block_n, q.device
    counts, ccounts = inputs["BlockCount"].long(), inputs["ColumnCount"].long()
    ns, nv = max(1, int(counts.max())), max(1, int(ccounts.max()))
    offs = inputs["BlockOffset"][..., :ns].long()
    cols = inputs["ColumnIndex"][..., :nv].long()
    qb = offs.shape[2]
    keys = torch.cat([(offs[..., None] + torch.arange(bn, device=dev)).flatten(-2), cols], dim=-1)
    listed = torch.cat([(torch.arange(ns, device=dev) < counts[..., None]).repeat_interleave(bn, dim=-1),
                        torch.arange(nv, device=dev) < ccounts[..., None]], dim=-1)
    valid = listed & (keys >= 0) & (keys < seq)
    keys = torch.where(valid, keys, torch.zeros_like(keys))        # [batch, heads, qb, L]
    length = keys.shape[-1]
    rows = torch.arange(qb * bm, device=dev).view(qb, bm)
    qp = F.pad(q, (0, 0, 0, 0, 0, qb * bm - seq))                   # whole query blocks
    # About chunk_bytes of gathered rows and scores per chunk of query blocks.
    chunk = max(1, chunk_bytes // (length * (4 * dim + 12 * bm)))
    scale = 1.0 / math.sqrt(dim)

    def run():
        out = torch.empty((batch, qb * bm, heads, dim), dtype=q.dtype, device=dev)
        for b in range(batch):
            for h in range(heads):
                kh, vh = k[b, :, h], v[b, :, h]
                for m0 in range(0, qb, chunk):
                    m1 = min(qb, m0 + chunk)
                    kk = keys[b, h, m0:m1]
                    s = torch.matmul(qp[b, m0 * bm:m1 * bm, h].view(m1 - m0, bm, dim),
                                     kh[kk].transpose(1, 2)).float().mul_(scale)
                    visible = valid[b, h, m0:m1, None, :] & (kk[:, None, :] <= rows[m0:m1, :, None])
                    s.masked_fill_(~visible, -math.inf)
                    p = torch.softmax(s, dim=-1).nan_to_num_(0.0).to(q.dtype)
                    out[b, m0 * bm:m1 * bm, h] = torch.matmul(p, vh[kk]).view(-1, dim)
        return out[:, :seq]
    run.keepalive = (keys, valid, qp)
    return run


def attention_sink_torch(inputs: dict, problem) -> Callable[[], torch.Tensor]:
    """Attention with sinks as gpt-oss's torch reference computes it, batched: per (batch, K/V
    head), the scores of its `groups` query heads as one dtype GEMM (cuBLAS accumulates in f32),
    masked, the softmax in f32 with the sink in the maximum and the denominator, probabilities
    in dtype @ V. No copy of K or V per query head: Q [B, H, S, D] is viewed as
    [B, kv_heads, groups * S, D]."""
    q, k, v, sinks = inputs["Q"], inputs["K"], inputs["V"], inputs["Sinks"]
    batch, heads, seq, dim = q.shape
    kv_heads = k.shape[1]
    groups = heads // kv_heads
    qg = q.reshape(batch, kv_heads, groups * seq, dim)
    sink = sinks.float().view(1, kv_heads, groups, 1, 1)
    keep = problem.visible(seq, q.device)
    scale = 1.0 / math.sqrt(dim)

    def run():
        s = torch.matmul(qg, k.transpose(-1, -2)).view(batch, kv_heads, groups, seq, seq).float()
        s.mul_(scale)
        if keep is not None:
            s.masked_fill_(~keep, -math.inf)
        m = torch.maximum(s.amax(dim=-1, keepdim=True), sink)
        s.sub_(m).exp_()
        s.div_(s.sum(dim=-1, keepdim=True) + torch.exp(sink - m))
        p = s.to(q.dtype).view(batch, kv_heads, groups * seq, seq)
        return torch.matmul(p, v).view(batch, heads, seq, dim)
    run.keepalive = keep
    return run


def attention_sink_sdpa(inputs: dict, problem) -> Callable[[], torch.Tensor]:
    """SDPA with the sink folded in as one more key: K and V get a zero row (K/V expanded to
    every query head, once, outside the timing), and an additive [heads, S, S + 1] mask gives
    that key the logit Sinks[h] (its score is 0) and -inf where the causal mask or the window
    hides a key. The mask's rows are padded to 16 elements, as the memory-efficient backend
    wants them aligned."""
    q, k, v, sinks = inputs["Q"], inputs["K"], inputs["V"], inputs["Sinks"]
    batch, heads, seq, dim = q.shape
    groups = heads // k.shape[1]
    zero = q.new_zeros(batch, heads, 1, dim)
    kx, vx = (torch.cat([t.repeat_interleave(groups, dim=1), zero], dim=2) for t in (k, v))
    bias = q.new_zeros(heads, seq, (seq + 1 + 15) // 16 * 16)[:, :, :seq + 1]
    keep = problem.visible(seq, q.device)
    if keep is not None:
        bias[:, :, :seq].masked_fill_(~keep, -math.inf)
    bias[:, :, seq] = sinks.to(q.dtype).view(heads, 1)
    mask = bias.unsqueeze(0)

    def run():
        return F.scaled_dot_product_attention(q, kx, vx, attn_mask=mask)
    run.keepalive = (kx, vx, bias)
    return run


def scaled_mm_cublaslt(a: torch.Tensor, b: torch.Tensor, scale_a, scale_b, out_dtype) -> Impl:
    """cuBLASLt's fp8 GEMM (torch._scaled_mm), C = (A @ B^T) * scale_a * scale_b in out_dtype: B
    [N, K] row-major is the column-major [K, N] operand it takes; one operand must be e4m3."""
    return Impl("cublas", lambda: torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype))


def dequantized_cublas(inputs: dict, problem) -> Impl:
    """W4A16's usual fallback: the weight dequantized to dtype once, outside the timing (the
    problem's unpacking, exactly the kernel's values), then cuBLAS through F.linear (A @ W^T)."""
    w = problem.weights(inputs["B"], inputs["Scales"], inputs["A"].dtype)

    def run():
        return F.linear(inputs["A"], w)
    run.keepalive = w
    return Impl("cublas", run)


def fused_moe_torch(inputs: dict, problem, shape: dict) -> Callable[[], torch.Tensor]:
    """Fused MoE as a PyTorch user writes it: a loop over the experts, each one's routed token
    rows gathered (index_select), one cuBLAS GEMM (F.linear) against its weight, the rows
    scattered back (times their routing weights, in f32, when the build multiplies them). Which
    slots go to which expert is worked out once, outside the timing, from the same routing."""
    experts = problem.slot_experts(inputs, shape)
    work = []
    for e in range(shape["E"]):
        slots = torch.nonzero(experts == e).flatten()
        if slots.numel():
            work.append((e, slots, slots // problem.topk))
    x, w = inputs["X"], inputs["W"]
    weights = inputs["TopkWeights"].reshape(-1, 1)
    out = torch.empty((shape["T"] * problem.topk, w.shape[1]), dtype=x.dtype, device=x.device)

    def run():
        for e, slots, tokens in work:
            y = F.linear(x.index_select(0, tokens), w[e])
            if problem.weighted:
                y = (y.float() * weights.index_select(0, slots)).to(x.dtype)
            out.index_copy_(0, slots, y)
        return out
    run.keepalive = (work, weights)
    return run


def _config_text(cfg) -> str:
    return " ".join(f"{k}={v}" for k, v in cfg.__dict__.items())
