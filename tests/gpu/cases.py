#!/usr/bin/env python3
"""What the GPU correctness runner and the benchmark run: kernels, builds, cases, bench items.

Pure data plus the manifest that carries it to the GPU machine; no torch, so it runs on the
build machine (which generates the bundle) as well as on the GPU machine.

  KernelSpec  one kernel of a sample .tl file: its run-time parameters in C ABI order, the shape
              symbols a case binds, and the compile-time knobs its reference depends on.
  Build       one generated .cu file: a kernel compiled with a fixed set of -D values. The shapes
              of the samples are dynamic, so one build serves many cases.
  Case        one correctness check: a build, a shape, the precision of the reference.
  BenchItem   one benchmark shape for a build; bench/bench.py adds the peers (cuBLAS, SDPA...).

Command line (run from the repository root; make_bundle.sh uses the first two):
  python3 tests/gpu/cases.py builds [--selftest] [--only REGEX]     one build per line
  python3 tests/gpu/cases.py manifest --out DIR [--target T] [--selftest] [--only REGEX]
  python3 tests/gpu/cases.py list [--selftest]                      human-readable listing
  python3 tests/gpu/cases.py torch-ext [--library]                  tlc's arguments for the
                                                                    PyTorch extension, one a line
                                                                    (--library: its torch library)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import zlib
from dataclasses import asdict, dataclass, field

MANIFEST_VERSION = 1
DEFAULT_TOLERANCE = 1e-2


@dataclass(frozen=True)
class Param:
    """A run-time parameter of a kernel. Tensors are `in` or `out`; scalars carry their C type
    as a tlc dtype name (f32, f64, i32, i64, bool)."""
    name: str
    role: str  # "in" | "out" | "scalar"
    scalar_type: str = ""

    @property
    def is_tensor(self) -> bool:
        return self.role in ("in", "out")


@dataclass(frozen=True)
class Launch:
    """One kernel of a .tl file as the runner calls it: the C entry point tlc_<kernel> and its
    run-time parameters in the kernel's parameter order (the C ABI order)."""
    kernel: str
    params: tuple

    @property
    def tensors(self) -> list:
        return [p for p in self.params if p.is_tensor]

    @property
    def scalars(self) -> list:
        return [p for p in self.params if not p.is_tensor]


@dataclass(frozen=True)
class KernelSpec:
    family: str            # the problem in problems.py that builds inputs and references
    source: str            # .tl file, relative to the repository root
    kernel: str            # kernel name in the .tl file; the C entry point is tlc_<kernel>
    params: tuple          # Params in the kernel's parameter order (the C ABI order)
    shape_keys: tuple      # shape symbols (and compile-time dims) a case must give
    knobs: tuple           # -D values every build must set because the reference reads them
    # Further kernels of the same file that complete the operation, launched after `kernel` on
    # the same stream, in order (split-K convolution's sum pass): Launches whose parameters
    # are named as the operation's tensors. The runner calls them as one operation (one
    # check, one timing); a tensor one launch writes and a later one reads is an output of
    # the operation (scratch, poisoned like the others, compared only if the reference has it).
    then: tuple = ()
    # The tensor that holds the operation's result (what the bench compares with its peers'),
    # where it is not the last launch's first output.
    output: str = ""

    @property
    def launches(self) -> tuple:
        return (Launch(self.kernel, self.params),) + tuple(self.then)

    def _operation_params(self) -> list:
        """The parameters of all launches, each once, in order of first appearance; a tensor
        any launch writes is `out`."""
        seen = {}
        for launch in self.launches:
            for p in launch.params:
                first = seen.setdefault(p.name, p)
                if p.role == "out" and first.role != "out":
                    seen[p.name] = Param(p.name, "out")
        return list(seen.values())

    @property
    def tensors(self) -> list:
        """The operation's tensors: the kernel's, in its C ABI order, then those only later
        launches take."""
        return [p for p in self._operation_params() if p.is_tensor]

    @property
    def scalars(self) -> list:
        return [p for p in self._operation_params() if not p.is_tensor]

    @property
    def result(self) -> str:
        """The tensor that holds the operation's result: `output`, else the last launch's
        first output."""
        return self.output or next(p.name for p in self.launches[-1].params if p.role == "out")


def _tensors(*names_and_roles: str) -> tuple:
    """'A', 'B', 'out:C' -> Params; keeps the spec tables below one line per kernel."""
    params = []
    for entry in names_and_roles:
        role, _, name = entry.rpartition(":")
        params.append(Param(name, role or "in"))
    return tuple(params)


def _attention_bwd_spec(family: str, more: tuple) -> "KernelSpec":
    """samples/flash_attention_bwd.tl as one operation: the preprocess, the key-block kernel,
    then `more` launches."""
    return KernelSpec(family, "samples/flash_attention_bwd.tl", "flash_attention_bwd_preprocess",
                      _tensors("O", "dO", "out:Delta", "out:dQ_accum"),
                      ("batch", "seq_len", "heads", "dim"), ("dtype", "dim", "causal"),
                      then=(Launch("flash_attention_bwd",
                                   _tensors("Q", "K", "V", "dO", "LSE", "Delta", "out:dQ_accum", "out:dK", "out:dV")),)
                      + more)


# The samples' run-time signatures (samples/*.tl). Attention tensors are [batch, seq_len, heads,
# dim]; the head dimension is a compile-time knob, so it appears in both shape_keys and knobs.
KERNELS = {
    "gemm": KernelSpec("gemm", "samples/gemm.tl", "gemm", _tensors("A", "B", "out:C"),
                       ("M", "N", "K"), ("dtype",)),
    "gemm_fp8": KernelSpec("gemm_fp8", "samples/gemm_fp8.tl", "gemm_fp8",
                           _tensors("A", "B", "Scale_a", "Scale_b", "out:C"), ("M", "N", "K"), ("dtype",)),
    "gemm_fp8_decode": KernelSpec("gemm_fp8_decode", "samples/gemm_fp8.tl", "gemm_fp8_decode",
                                  _tensors("A", "B", "Scale_a", "Scale_b", "out:C"), ("M", "N", "K"), ("dtype",)),
    "attention": KernelSpec("attention", "samples/flash_attention.tl", "flash_attention",
                            _tensors("Q", "K", "V", "out:O"),
                            ("batch", "seq_len", "heads", "dim"), ("dtype", "dim", "causal")),
    # The same signature, FlashAttention-3's intra-warpgroup overlap (two wgmma groups in flight).
    "attention_overlap": KernelSpec("attention_overlap", "tests/gpu/ops/attention_overlap.tl",
                                    "flash_attention_overlap", _tensors("Q", "K", "V", "out:O"),
                                    ("batch", "seq_len", "heads", "dim"), ("dtype", "dim", "causal")),
    "block_sparse_attention": KernelSpec("block_sparse_attention", "samples/block_sparse_attention.tl",
                                         "block_sparse_attention",
                                         _tensors("Q", "K", "V", "BlockMask", "out:O"),
                                         ("batch", "seq_len", "heads", "dim"), ("dtype", "dim")),
    # Vertical-slash sparse attention: MInference's index tables, nnz_s slash diagonals and
    # nnz_v verticals wide, per (batch, head, query block of block_M rows).
    "vertical_slash_attention": KernelSpec("vertical_slash_attention", "samples/vertical_slash_attention.tl",
                                           "vertical_slash_attention",
                                           _tensors("Q", "K", "V", "BlockCount", "BlockOffset", "ColumnCount",
                                                    "ColumnIndex", "out:O"),
                                           ("batch", "seq_len", "heads", "dim", "nnz_s", "nnz_v"),
                                           ("dtype", "dim")),
    # Attention sinks with GQA: [batch, heads, seq_len, dim] tensors, kv_heads K/V heads.
    "attention_sink": KernelSpec("attention_sink", "samples/attention_sink.tl", "attention_sink",
                                 _tensors("Q", "K", "V", "Sinks", "out:O"),
                                 ("batch", "heads", "kv_heads", "seq_len", "dim"),
                                 ("dtype", "dim", "causal", "window")),
    # NHWC convolution: X [N, H, W, C], Wt [F, kh, kw, C], Y [N * P * Q, F]; the filter size,
    # stride and padding are knobs the reference reads.
    "conv2d": KernelSpec("conv2d", "samples/conv2d.tl", "conv2d", _tensors("X", "Wt", "out:Y"),
                         ("N", "H", "W", "C", "F"), ("dtype", "kh", "kw", "stride", "pad")),
    # Split-K convolution: the split pass writes one f32 slab of Partial per K range, the sum
    # pass adds them in order and writes Y (the same problem; Partial is scratch).
    "conv2d_splitk": KernelSpec("conv2d_splitk", "samples/conv2d.tl", "conv2d_splitk",
                                _tensors("X", "Wt", "out:Partial"), ("N", "H", "W", "C", "F"),
                                ("dtype", "kh", "kw", "stride", "pad", "splits"),
                                then=(Launch("conv2d_splitk_sum", _tensors("Partial", "out:Y")),)),
    "log_softmax": KernelSpec("log_softmax", "samples/log_softmax.tl", "log_softmax",
                              _tensors("X", "out:Y"), ("M", "N"), ("dtype",)),
    "layernorm": KernelSpec("layernorm", "samples/layernorm.tl", "layernorm",
                            _tensors("X", "W", "B", "out:Y"), ("M", "N"), ("dtype",)),
    "swiglu": KernelSpec("swiglu", "samples/swiglu.tl", "swiglu", _tensors("G", "U", "out:Y"),
                         ("M", "N"), ("dtype",)),
    "gemv": KernelSpec("gemv", "samples/gemv.tl", "gemv", _tensors("A", "x", "out:y"), ("M", "K"),
                       ("dtype",)),
    "softmax": KernelSpec("softmax", "samples/softmax.tl", "softmax", _tensors("X", "out:Y"),
                          ("M", "N"), ("dtype",)),
    "rmsnorm": KernelSpec("rmsnorm", "samples/rmsnorm.tl", "rmsnorm",
                          _tensors("X", "W", "out:Y"), ("M", "N"), ("dtype", "eps")),
    "mla": KernelSpec("mla", "samples/flash_mla_decode.tl", "flash_mla_decode",
                      _tensors("Q", "Q_pe", "KV", "K_pe", "out:O"),
                      ("batch", "heads", "seqlen_kv", "kv_heads", "dim", "pe_dim"),
                      ("dtype", "dim", "pe_dim")),
    "dequant_w4a16": KernelSpec("dequant_w4a16", "samples/dequant_gemm_w4a16.tl",
                                "dequant_gemm_w4a16", _tensors("A", "B", "Scales", "out:C"),
                                ("M", "N", "K"), ("dtype", "group_size")),
    # The same GEMM with the weights unpacked into registers (the gemm's A operand, C^T per tile).
    "w4a16_wreg": KernelSpec("w4a16_wreg", "samples/dequant_gemm_w4a16_regs.tl", "dequant_gemm_w4a16_regs",
                             _tensors("A", "B", "Scales", "out:C"), ("M", "N", "K"), ("dtype", "group_size")),
    # The same GEMM on FP4 E2M1 weights (f4e2m1 B, marked packed; the problem decodes by table).
    "dequant_fp4_gemm": KernelSpec("dequant_fp4_gemm", "samples/dequant_gemm_fp4.tl", "dequant_gemm_fp4",
                                   _tensors("A", "B", "Scales", "out:C"), ("M", "N", "K"), ("dtype", "group_size")),
    # The decode GEMV on the same operands (and the same problem: reference, inputs, floor).
    "dequant_gemv_w4a16": KernelSpec("dequant_gemv_w4a16", "samples/dequant_gemv_w4a16.tl",
                                     "dequant_gemv_w4a16", _tensors("A", "B", "Scales", "out:C"),
                                     ("M", "N", "K"), ("dtype", "group_size")),
    # The same GEMV on the tensor cores (B dequantized in registers, one pass for 16 rows of A).
    "dequant_gemv_w4a16_tc": KernelSpec("dequant_gemv_w4a16_tc", "samples/dequant_gemv_w4a16_tc.tl",
                                        "dequant_gemv_w4a16_tc", _tensors("A", "B", "Scales", "out:C"),
                                        ("M", "N", "K"), ("dtype", "group_size")),
    # The same with the weights staged through shared memory (a cp.async ring of `stages`).
    "dequant_gemv_w4a16_tcs": KernelSpec("dequant_gemv_w4a16_tcs", "samples/dequant_gemv_w4a16_tcs.tl",
                                         "dequant_gemv_w4a16_tcs", _tensors("A", "B", "Scales", "out:C"),
                                         ("M", "N", "K"), ("dtype", "group_size")),
    # Split-KV decoding: each split writes its partials, and the last split of each block of a
    # KV head's query heads to finish (`if last_block(Done[...], splits)`) combines them into O.
    # Done is the counter tensor (problems.Problem.counters), its shape set by block_H.
    "flash_decoding": KernelSpec("flash_decoding", "samples/flash_decoding.tl", "flash_decoding",
                                 _tensors("Q", "K", "V", "out:Partial", "out:LSE", "out:Done", "out:O"),
                                 ("batch", "heads", "kv_heads", "seqlen", "dim"),
                                 ("dtype", "dim", "num_splits", "block_H"), output="O"),
    # Fused MoE over vLLM's routing (moe_align_block_size): block_M is the routing's padding
    # unit and topk the slots per token, so the tensors the problem makes depend on both.
    "fused_moe": KernelSpec("fused_moe", "samples/fused_moe.tl", "fused_moe",
                            _tensors("X", "W", "SortedIds", "ExpertIds", "NumPostPadded",
                                     "TopkWeights", "out:C"),
                            ("T", "K", "E", "N"), ("dtype", "topk", "block_M", "mul_routed_weight")),
    # FlashAttention-2 backward (samples/flash_attention_bwd.tl): the preprocess (Delta, dQ_accum
    # zeroed), then the key-block kernel; O and LSE are inputs a forward left. And that
    # file's forward, which writes LSE beside O.
    "attention_bwd": _attention_bwd_spec("attention_bwd", ()),
    # The same backward without atomics: the key-block kernel with atomic_dq = false computes
    # dK and dV only (dQ_accum passed, not written), and the query-block kernel computes dQ and
    # writes it once (deterministic).
    "attention_bwd_split": _attention_bwd_spec(
        "attention_bwd_split",
        (Launch("flash_attention_bwd_dq", _tensors("Q", "K", "V", "dO", "LSE", "Delta", "out:dQ_accum")),)),
    "attention_fwd_lse": KernelSpec("attention_fwd_lse", "samples/flash_attention_bwd.tl",
                                    "flash_attention_fwd_lse", _tensors("Q", "K", "V", "out:O", "out:LSE"),
                                    ("batch", "seq_len", "heads", "dim"), ("dtype", "dim", "causal")),
    # Chunk gated delta net (samples/chunk_gated_delta.tl): the per-chunk preparation writes
    # the scratch Gc, W and U; the second kernel runs the chunks in order and writes O.
    "gated_delta": KernelSpec("gated_delta", "samples/chunk_gated_delta.tl", "gated_delta_prepare",
                              _tensors("K", "V", "G", "Beta", "out:Gc", "out:W", "out:U"),
                              ("batch", "seq_len", "heads", "dk", "dv"), ("dtype", "dk", "dv"),
                              then=(Launch("gated_delta_output",
                                           _tensors("Q", "K", "Gc", "W", "U", "out:O")),)),
    # `auto` knobs, dynamic M, N, K: variants behind a shape dispatch (docs/recommend.md).
    "gemm_auto": KernelSpec("gemm_auto", "samples/gemm_auto.tl", "gemm_auto",
                            _tensors("A", "B", "out:C"), ("M", "N", "K"), ("dtype",)),
}


def _op_kernel(family: str, params: tuple, shape_keys: tuple, knobs: tuple, output: str = "") -> KernelSpec:
    """A test kernel of tests/gpu/ops/: the file, the kernel and the family share one name."""
    return KernelSpec(family, f"tests/gpu/ops/{family}.tl", family, params, shape_keys, knobs, output=output)


# The test kernels: one tile-operator variant each that the samples do not reach (their header
# comments say which). Knobs the reference reads are required in every build.
KERNELS.update({
    **{f: _op_kernel(f, _tensors("A", "B", "out:C"), ("M", "N", "K"), ("dtype",))
       for f in ("gemm_nt", "gemm_tn", "gemm_tt")},
    "gemm_batched": _op_kernel("gemm_batched", _tensors("A", "B", "out:C"), ("batch", "M", "N", "K"),
                               ("dtype",)),
    "masked_gemm": _op_kernel("masked_gemm", _tensors("A", "B", "Mask", "out:C"), ("M", "N", "K"),
                              ("dtype", "block_K")),
    "gemm_rs": _op_kernel("gemm_rs", _tensors("A", "B", "E", "out:D"),
                          ("M", "N", "dim_k", "dim_p"), ("dtype", "dim_k", "dim_p")),
    "gemm_sr": _op_kernel("gemm_sr", _tensors("A", "W", "out:C", "out:D"), ("M", "N", "K"), ("dtype",)),
    "gemm_rr": _op_kernel("gemm_rr", _tensors("A", "W", "out:C"), ("M", "N", "K"), ("dtype",)),
    "gemm_sr_runs": _op_kernel("gemm_sr_runs", _tensors("A", "B", "Scales", "out:C"), ("M", "N", "K"),
                               ("dtype", "group_size")),
    "gemm_sr_split": _op_kernel("gemm_sr_split", _tensors("A", "B", "Scales", "out:C"), ("M", "N", "K"),
                                ("dtype", "group_size")),
    "reduce_rows": _op_kernel("reduce_rows", _tensors("X", "Init", "out:Tiles", "out:Acc"),
                              ("M", "N"), ("dtype", "op", "block_N")),
    "reduce_gemm": _op_kernel("reduce_gemm",
                              _tensors("A", "B", "Init", "out:Tiles", "out:Acc"),
                              ("M", "N", "dim_k"), ("dtype", "op", "block_N", "dim_k")),
    "atomic_splitk": _op_kernel("atomic_splitk",
                                _tensors("A", "B", "out:C_frag", "out:C_shared", "out:RowSum",
                                         "out:Blocks"),
                                ("M", "N", "K"), ("dtype", "splits", "block_M", "block_N")),
    "atomic_rowsum": _op_kernel("atomic_rowsum", _tensors("X", "out:RowSum"), ("M", "N"),
                                ("dtype",)),
    # `if last_block(Done[by], chunks)`: Done is the counter tensor (problems.Problem.counters).
    "last_block": _op_kernel("last_block",
                             _tensors("X", "out:Partial", "out:Seen", "out:Done", "out:RowSum", "out:Count",
                                      "out:Own"), ("M", "N"), ("dtype", "block_N"), output="RowSum"),
    "atomic_rows": _op_kernel("atomic_rows",
                              _tensors("A", "B", "X", "out:XTile", "out:XPar", "out:GemmTile",
                                       "out:GemmPar"), ("M", "N", "K"), ("dtype",)),
    "cumsum": _op_kernel("cumsum", _tensors("X", "out:Rows", "out:Cols", "out:Frag", "out:FragRows"),
                         ("M", "N"), ("dtype", "block_M", "block_N")),
    "reduce_any": _op_kernel("reduce_any", _tensors("X", "out:ColSum", "out:ColMax", "out:RowMin", "out:Total",
                                                    "out:Depth"), ("M", "N"), ("dtype", "block_M", "block_N")),
    "cummax": _op_kernel("cummax", _tensors("X", "out:Rows", "out:Cols", "out:Frag", "out:FragRows"),
                         ("M", "N"), ("dtype", "block_M", "block_N")),
    "reduce_bits": _op_kernel("reduce_bits", _tensors("X", "W", "out:RowAnd", "out:ColXor", "out:RowOr",
                                                      "out:ColOr", "out:RowXor"), ("M", "N"), ("dtype", "block_M", "block_N")),
    "argmax": _op_kernel("argmax", _tensors("X", "out:ArgRow", "out:MaxRow", "out:ColIdx", "out:ColMin",
                                            "out:RowIdx"), ("M", "N"), ("dtype", "block_M", "block_N")),
    "fragment_convert": _op_kernel("fragment_convert", _tensors("A", "B", "V", "out:O"), ("M", "K"),
                                   ("dtype",)),
    "gemm_thread_subset": _op_kernel("gemm_thread_subset", _tensors("A", "B", "V", "out:O"), ("M", "N"),
                                     ("dtype", "block_N", "score_threads")),
    "gemm_thread_subset_steps": KernelSpec("gemm_thread_subset_steps", "tests/gpu/ops/gemm_thread_subset.tl",
                                           "gemm_thread_subset_steps", _tensors("A", "B", "V", "out:O"), ("M", "N"),
                                           ("dtype", "block_N", "score_threads", "steps")),
    "small_fragments": _op_kernel("small_fragments", _tensors("X", "out:Y", "out:S"), ("M",),
                                  ("dtype", "n")),
    "copy_paths": _op_kernel("copy_paths", _tensors("X", "out:Y", "out:Z"), ("M", "N"),
                             ("dtype",)),
    "gather_table": _op_kernel("gather_table", _tensors("KV", "Table", "Q", "out:O", "out:S"),
                               ("B", "R", "L", "dim"), ("dtype", "page", "npages", "dim")),
    "gather_rows": _op_kernel("gather_rows", _tensors("X", "Rows", "W", "out:C"), ("R", "M", "N", "K"),
                              ("dtype",)),
    # Packed 4-bit tensors (the bytes travel as uint8 [N, K / 2], problems.PackedI4Problem).
    "packed_i4": _op_kernel("packed_i4", _tensors("B", "out:W", "out:W2", "out:E", "out:Bc"), ("N", "K"),
                            ("dtype",)),
    "packed_u4": _op_kernel("packed_u4", _tensors("Q", "out:E", "out:Qc"), ("N", "K"), ("dtype",)),
    "dequant_zp": _op_kernel("dequant_zp", _tensors("B", "Scales", "Zeros", "out:W", "out:W2", "out:W3"), ("N", "K"),
                             ("dtype", "qtype", "group_size", "zero_points")),
    "dequant_fp4": _op_kernel("dequant_fp4", _tensors("B", "Scales", "out:W", "out:W2", "out:E", "out:Bc"),
                              ("N", "K"), ("dtype", "group_size", "scaled")),
    "annotated_copy": _op_kernel("annotated_copy", _tensors("X", "out:Y", "out:Z", "out:W"), ("M", "N"),
                                 ("dtype",)),
    "gemm_annotated": _op_kernel("gemm_annotated", _tensors("A", "B", "out:C"), ("M", "N", "K"),
                                 ("dtype",)),
    "fill_regions": _op_kernel("fill_regions",
                               _tensors("X", "out:Y", "out:Z") + (Param("value", "scalar", "f32"),),
                               ("M", "N"), ("dtype", "block_M", "block_N", "strip")),
})

# The `op` knob of reduce_rows.tl and reduce_gemm.tl: reduce_<name> for op = index.
REDUCE_OPS = ("sum", "max", "min", "abssum", "absmax")


@dataclass(frozen=True)
class Build:
    name: str                      # bundle file stem: <name>.cu, lib<name>.so
    family: str
    defines: dict = field(default_factory=dict, hash=False)
    # tlc --target for this build when not the bundle's (the sm_80 path, run on the same GPU).
    target: str = ""

    @property
    def spec(self) -> KernelSpec:
        return KERNELS[self.family]

    def define_args(self) -> list:
        return [f"{k}={v}" for k, v in self.defines.items()]

    def tlc_args(self) -> list:
        """The arguments of tlc beside the source: --target if the build has its own, -D each."""
        args = ["--target", self.target] if self.target else []
        for d in self.define_args():
            args += ["-D", d]
        return args


@dataclass(frozen=True)
class Case:
    name: str
    build: str
    shape: dict = field(hash=False)
    reference: str = "float64"     # precision of the reference computation
    tolerance: float = DEFAULT_TOLERANCE

    @property
    def seed(self) -> int:
        """Fixed per case (reproducible), different between cases (fresh inputs each check)."""
        return zlib.crc32(self.name.encode())


@dataclass(frozen=True)
class BenchItem:
    name: str
    build: str
    shape: dict = field(hash=False)
    note: str = ""


# ---- The tables of issue 3 --------------------------------------------------------------------

def _gemm_builds() -> list:
    # Square warp tiles (64x64 per warp with 4 warps) balance ldmatrix traffic between A and B.
    # On sm_90a the defaults take the Hopper tiles (hopper_tiles; layout_gemm_generic keeps the
    # 128x128x32 ones).
    return [Build(f"gemm_{dt}", "gemm", {"dtype": dt, "policy": "square"}) for dt in ("f16", "bf16")]


def _attention_build_name(dim: int, causal: bool) -> str:
    return f"fa_d{dim}" + ("_causal" if causal else "")


def _attention_builds() -> list:
    return [Build(_attention_build_name(dim, causal), "attention",
                  {"dtype": "f16", "dim": str(dim), "causal": str(causal).lower()})
            for dim in (64, 128) for causal in (False, True)]


def _rowwise_builds() -> list:
    return [Build("softmax_f16", "softmax", {"dtype": "f16"}),
            Build("rmsnorm_f16", "rmsnorm", {"dtype": "f16", "eps": "1e-6"})]


# (label, M, N, K, reference precision). 8192^3 is checked against a float32 reference: a float64 product of that
# size costs more than every other case together, and float32 is still far below tolerance.
GEMM_CHECK_SHAPES = [("8192", 8192, 8192, 8192, "float32"),
                     ("4096", 4096, 4096, 4096, "float64"),
                     ("1000", 1000, 1000, 1000, "float64"),
                     ("m1", 1, 4096, 4096, "float64"),
                     ("n4095", 4096, 4095, 4096, "float64"),
                     # A's rows unaligned, B's and C's aligned: B keeps its vector copies.
                     ("k1001", 1000, 1024, 1001, "float64"),
                     # The same at a size where the element copies' loads, staged through
                     # registers, decide the rate (lower/pipeline-expansion.tl).
                     ("k4095", 4096, 4096, 4095, "float64")]

# (batch, heads, seq_len, dim): issue 3.
ATTENTION_CHECK_SHAPES = [(2, 8, 1000, 64), (8, 16, 1024, 128), (64, 64, 2048, 128)]

ROWWISE_SHAPES = [(4096, 4096), (1000, 3000)]


def _attention_shape(batch, heads, seq_len, dim) -> dict:
    return {"batch": batch, "seq_len": seq_len, "heads": heads, "dim": dim}


def _check_cases() -> list:
    result = []
    for dt in ("f16", "bf16"):
        for label, m, n, k, ref in GEMM_CHECK_SHAPES:
            result.append(Case(f"gemm_{dt}_{label}", f"gemm_{dt}", {"M": m, "N": n, "K": k}, ref))
    for causal in (False, True):
        for b, h, s, d in ATTENTION_CHECK_SHAPES:
            build = _attention_build_name(d, causal)
            result.append(Case(f"{build}_b{b}h{h}s{s}", build, _attention_shape(b, h, s, d),
                              "float32"))
    for family in ("softmax", "rmsnorm"):
        for m, n in ROWWISE_SHAPES:
            result.append(Case(f"{family}_f16_{m}x{n}", f"{family}_f16", {"M": m, "N": n},
                              "float32"))
    return result


# ---- Tile-operator coverage: tests/gpu/ops/ and the remaining samples ----------------------------
# Small shapes: these check that each lowering computes the right thing, not how fast. Build
# names start with ops_ (test kernels), mla_, w4a16_, auto_, sparse_, mem_, sink_, decode_, conv_, gather_, ovl_, moe_ or vs_ (samples),
# and every case name with its build's name, so `--only '^(ops|mla|w4a16|auto|sparse|mem|sink|decode|conv|gather|ovl|moe|vs)_'` selects them all in
# make_bundle.sh, run.py and gpu_check.sh.

# For f32 outputs that the kernel computes as the reference does up to f32 rounding (~1e-6).
# Tighter than DEFAULT_TOLERANCE because there the poison cannot tell: an atomic destination
# starts at zero, not NaN, so a lost partial shows only in the error, and one wrong row of a
# reduction hides among a thousand right ones.
F32_TOLERANCE = 1e-4

# (label, M, N, K): whole tiles, then partial tiles in every dimension; the odd K (an A or B
# row of 999 elements) also makes the launcher take the unaligned, scalar-copy variant.
OP_GEMM_SHAPES = [("1024", 1024, 1024, 1024), ("257x1000x999", 257, 1000, 999)]
POLICIES = ("full_row", "full_col", "square")

# Blocked layouts of reduce_rows.tl by the threads that share a row, as tlc lays out the tile:
# 8 (a part of a warp), 32 (one warp), 128 (four warps, combined through shared memory).
REDUCE_ROW_LAYOUTS = {"tpr8": {"block_M": "16", "block_N": "128", "threads": "128"},
                      "tpr32": {"block_M": "4", "block_N": "512", "threads": "128"},
                      "tpr128": {"block_M": "2", "block_N": "2048", "threads": "256"}}
REDUCE_TILES = 4        # column tiles per row: N = 4 * block_N
REDUCE_M = 1001         # a partial block of rows in every layout


class _Tables:
    """Builds and their cases, collected together: each case named <build>_<label>, checked
    against a float64 reference (these shapes are small)."""

    def __init__(self):
        self.builds, self.cases = [], []

    def add(self, build: Build, shapes: list, tolerance: float = DEFAULT_TOLERANCE) -> None:
        """`shapes`: (label, shape) pairs."""
        self.builds.append(build)
        self.cases += [Case(f"{build.name}_{label}", build.name, shape, "float64", tolerance)
                       for label, shape in shapes]


def _add_gemm_variants(t: _Tables) -> None:
    shapes = [(label, {"M": m, "N": n, "K": k}) for label, m, n, k in OP_GEMM_SHAPES]
    for layout in ("nt", "tn", "tt"):
        for dt in ("f16", "bf16"):
            for policy in POLICIES:
                t.add(Build(f"ops_gemm_{layout}_{dt}_{policy}", f"gemm_{layout}",
                            {"dtype": dt, "policy": policy}), shapes)
    for dt in ("f16", "bf16"):
        t.add(Build(f"ops_gemm_rs_{dt}", "gemm_rs",
                    {"dtype": dt, "dim_k": "64", "dim_p": "64", "policy": "full_row"}),
              [(f"{m}x{n}", {"M": m, "N": n, "dim_k": 64, "dim_p": 64})
               for m, n in ((1024, 1024), (1000, 999))])
    # On sm_90a the builds above run on wgmma with one warpgroup; two warpgroups split M
    # (full_row) or N (full_col: B's panels shared by the two column halves).
    for layout in ("nt", "tn", "tt"):
        for policy in ("full_row", "full_col"):
            t.add(Build(f"ops_gemm_{layout}_f16_wg2_{policy}", f"gemm_{layout}",
                        {"dtype": "f16", "policy": policy, "threads": "256"}), shapes)
    # 4 stages: on sm_90a each wgmma group stays in flight into the next iteration (the
    # prefetch runs 2 ahead, the accumulator is drained after the loop).
    for layout in ("nt", "tn", "tt"):
        t.add(Build(f"ops_gemm_{layout}_f16_s4", f"gemm_{layout}",
                    {"dtype": "f16", "policy": "square", "stages": "4", "block_K": "64",
                     "threads": "256"}), shapes)
    # B as a [N, K] weight (PyTorch Linear) with the tiles tuned for the H100 (as
    # layout_gemm_s4_n256): benchmarked against the NN sample at the same tiles.
    t.add(Build("ops_gemm_nt_f16_h100tiles", "gemm_nt",
                {"dtype": "f16", "policy": "square", "block_M": "128", "block_N": "256",
                 "block_K": "64", "stages": "4", "threads": "256"}),
          shapes + [("130x70x40", {"M": 130, "N": 70, "K": 40}),
                    # C's rows not 16-byte aligned, A's and B's aligned: on sm_90a the
                    # warp-specialized variant still runs (bulk loads) and stores C itself.
                    ("1000x1001x512", {"M": 1000, "N": 1001, "K": 512}),
                    ("300x4095x256", {"M": 300, "N": 4095, "K": 256})])
    # The same with samples/gemm.tl's Hopper tiles as its defaults take them (3 stages,
    # persistent): the NN defaults' counterpart for the bench.
    hopper = {"dtype": "f16", "policy": "square", "block_M": "128", "block_N": "256", "block_K": "64",
              "stages": "3", "threads": "256", "persist": "true"}
    t.add(Build("ops_gemm_nt_f16_hopper", "gemm_nt", hopper),
          shapes + [("1000x1001x512", {"M": 1000, "N": 1001, "K": 512}), ("300x4095x256", {"M": 300, "N": 4095, "K": 256}),
                    ("4096x4096x512", {"M": 4096, "N": 4096, "K": 512})])
    # Batched GEMM: 2-d tiles of 3-d tensors (one 3-d bulk copy per panel on sm_90a), with the
    # defaults and the H100 tiles.
    batched = [("b3_257x1000x999", {"batch": 3, "M": 257, "N": 1000, "K": 999}),
               ("b2_130x70x40", {"batch": 2, "M": 130, "N": 70, "K": 40}),
               ("b4_512x512x256", {"batch": 4, "M": 512, "N": 512, "K": 256})]
    t.add(Build("ops_gemm_batched_f16", "gemm_batched", {"dtype": "f16"}), batched)
    t.add(Build("ops_gemm_batched_f16_h100tiles", "gemm_batched",
                {"dtype": "f16", "policy": "square", "block_M": "128", "block_N": "256",
                 "block_K": "64", "stages": "4", "threads": "256"}), batched)
    t.add(Build("ops_gemm_batched_f16_hopper", "gemm_batched", hopper),
          batched + [("b3_1024x1024x512", {"batch": 3, "M": 1024, "N": 1024, "K": 512})])
    # A copy under an `if` in a pipelined loop (block-sparse over K): issued in its own
    # iteration; on sm_90a by the consumers of the warp-specialized variant, beside the
    # producer's bulk copies of A. Both paths, and two consumer warpgroups.
    masked = [("257x1000x999", {"M": 257, "N": 1000, "K": 999}), ("130x70x40", {"M": 130, "N": 70, "K": 40}),
              ("mult", {"M": 256, "N": 256, "K": 512})]
    t.add(Build("ops_masked_gemm_f16", "masked_gemm", {"dtype": "f16", "block_K": "32"}), masked)
    t.add(Build("ops_masked_gemm_f16_wg2", "masked_gemm",
                {"dtype": "f16", "block_K": "64", "block_M": "128", "threads": "256", "stages": "4"}), masked)
    t.add(Build("ops_masked_gemm_f16_sm80", "masked_gemm", {"dtype": "f16", "block_K": "32"},
                target="sm_80"), masked)
    # The sm_80 path (mma.sync + ldmatrix), still what --target sm_80/86/89 generate, on the
    # same GPU.
    for layout in ("nt", "tn", "tt"):
        for policy in POLICIES:
            t.add(Build(f"ops_gemm_{layout}_f16_{policy}_sm80", f"gemm_{layout}",
                        {"dtype": "f16", "policy": policy}, target="sm_80"), shapes)
    t.add(Build("ops_gemm_rs_f16_sm80", "gemm_rs",
                {"dtype": "f16", "dim_k": "64", "dim_p": "64", "policy": "full_row"}, target="sm_80"),
          [(f"{m}x{n}", {"M": m, "N": n, "dim_k": 64, "dim_p": 64}) for m, n in ((1024, 1024), (1000, 999))])
    # B in registers (tl::gemm_sr; issue 12): the defaults (48 x 80 tiles, 5 warps of 16
    # columns, K steps of 48) and 128 x 128 tiles over 8 warps, f16 and bf16, on both targets
    # (sm_90a falls back to mma.sync: wgmma reads B only from shared memory); A and B in
    # registers (tl::gemm_rr, one warp). Shapes off every tile size.
    sr_shapes = [("1000x999x1000", {"M": 1000, "N": 999, "K": 1000}), ("130x70x40", {"M": 130, "N": 70, "K": 40}),
                 ("256x256x512", {"M": 256, "N": 256, "K": 512})]
    for target in ("", "sm_80"):
        suffix = "_sm80" if target else ""
        for dt in ("f16", "bf16"):
            t.add(Build(f"ops_gemm_sr_{dt}{suffix}", "gemm_sr", {"dtype": dt}, target=target), sr_shapes)
        t.add(Build(f"ops_gemm_sr_f16_8w{suffix}", "gemm_sr",
                    {"dtype": "f16", "block_M": "128", "block_N": "128", "block_K": "64", "threads": "256"},
                    target=target), sr_shapes)
        t.add(Build(f"ops_gemm_rr_f16{suffix}", "gemm_rr", {"dtype": "f16"}, target=target), sr_shapes[:2])
    # B dequantized in registers (tl::gemm_sr_runs) with A in an annotated layout, two m16 tiles
    # per warp, runs of 16 (and of 8 at block_K = 32, bf16); int4 weights as the W4A16 GEMVs'.
    runs_shapes = [("33x40x96", {"M": 33, "N": 40, "K": 96}), ("1000x1000x1024", {"M": 1000, "N": 1000, "K": 1024}),
                   ("5x4097x640", {"M": 5, "N": 4097, "K": 640})]
    t.add(Build("ops_gemm_sr_runs_f16", "gemm_sr_runs", {"dtype": "f16", "group_size": "32"}), runs_shapes)
    # The warps split K, the partial sums copied straight to global memory (4 one-warp groups)
    # or through a shared tile (transposed over 4 groups, bf16).
    t.add(Build("ops_gemm_sr_split_f16", "gemm_sr_split", {"dtype": "f16", "group_size": "32"}), runs_shapes)
    t.add(Build("ops_gemm_sr_split_t_bf16", "gemm_sr_split",
                {"dtype": "bf16", "group_size": "32", "block_N": "16", "block_M": "8", "block_K": "512",
                 "staged": "true"}), runs_shapes)
    t.add(Build("ops_gemm_sr_runs_bf16_k32", "gemm_sr_runs", {"dtype": "bf16", "group_size": "32", "block_K": "32"},
                target="sm_80"), runs_shapes[:2])


def _add_reductions(t: _Tables) -> None:
    """The op changes only the combining step, the layout only which threads combine: every op
    runs on the two layouts whose rows span warps (the shared-memory path), sum and max on the
    others."""
    every_op, sum_max = range(len(REDUCE_OPS)), (0, 1)
    for layout, knobs in REDUCE_ROW_LAYOUTS.items():
        n = REDUCE_TILES * int(knobs["block_N"])
        for op in every_op if layout == "tpr128" else sum_max:
            t.add(Build(f"ops_reduce_rows_{layout}_{REDUCE_OPS[op]}", "reduce_rows",
                        {"dtype": "f32", "op": str(op), **knobs}),
                  [(f"{REDUCE_M}x{n}", {"M": REDUCE_M, "N": n})], F32_TOLERANCE)
    n = REDUCE_TILES * 128
    for policy in POLICIES:
        for op in every_op if policy == "full_col" else sum_max:
            t.add(Build(f"ops_reduce_gemm_{policy}_{REDUCE_OPS[op]}", "reduce_gemm",
                        {"dtype": "f16", "policy": policy, "op": str(op), "block_N": "128",
                         "dim_k": "64"}),
                  [(f"{REDUCE_M}x{n}", {"M": REDUCE_M, "N": n, "dim_k": 64})], F32_TOLERANCE)
    # Rows split over warps (sm_80: full_col and square stack warps along N) and over
    # warpgroups (sm_90a wgmma, 256 threads, full_col: two warpgroups across N), both combined
    # through shared scratch. MLA decode's rows are split so.
    for name, knobs, target in (("sm80_full_col", {"policy": "full_col"}, "sm_80"),
                                ("sm80_square", {"policy": "square"}, "sm_80"),
                                ("wg2_full_col", {"policy": "full_col", "threads": "256"}, "")):
        for op in sum_max:
            t.add(Build(f"ops_reduce_gemm_{name}_{REDUCE_OPS[op]}", "reduce_gemm",
                        {"dtype": "f16", "op": str(op), "block_N": "128", "dim_k": "64", **knobs},
                        target=target),
                  [(f"{REDUCE_M}x{n}", {"M": REDUCE_M, "N": n, "dim_k": 64})], F32_TOLERANCE)


def _add_annotated_layouts(t: _Tables, plain: list) -> None:
    """annotate_layout: tiles through annotated shared buffers (element and chunk swizzles,
    permutations, a transpose; f32 moves 4-element vectors), and a gemm whose A tile is
    annotated, read element by element (elem, rot) or, when the annotation is the swizzle the
    instruction reads (same), by ldmatrix on sm_80 and wgmma (warp-specialized) on sm_90a;
    partial tiles everywhere, K = 48 tiles."""
    for dt, target in (("f16", ""), ("f32", ""), ("f16", "sm_80")):
        t.add(Build(f"ops_annotated_copy_{dt}" + ("_sm80" if target else ""), "annotated_copy",
                    {"dtype": dt}, target=target), plain + [("77x250", {"M": 77, "N": 250})])
    shapes = [("257x1000x999", {"M": 257, "N": 1000, "K": 999}),
              ("130x70x40", {"M": 130, "N": 70, "K": 40}),
              ("512x256x512", {"M": 512, "N": 256, "K": 512})]
    for variant, target, extra in (("elem", "", {}), ("rot", "", {}), ("same", "", {}),
                                   ("elem", "sm_80", {}), ("same", "sm_80", {}),
                                   ("elem", "", {"block_M": "64", "block_K": "48"}),
                                   ("rot", "sm_80", {"block_M": "64", "block_K": "48"})):
        for dt in ("f16", "bf16") if variant == "elem" and not target and not extra else ("f16",):
            name = f"ops_gemm_annotated_{dt}_{variant}" + ("_k48" if extra else "") + ("_sm80" if target else "")
            t.add(Build(name, "gemm_annotated", {"dtype": dt, variant: "1", **extra}, target=target), shapes)


def _add_memory_ops(t: _Tables) -> None:
    """atomic_add, copy and fill."""
    t.add(Build("ops_atomic_splitk_f16", "atomic_splitk",
                {"dtype": "f16", "splits": "4", "block_M": "64", "block_N": "64"}),
          [(label, {"M": m, "N": n, "K": k}) for label, m, n, k in OP_GEMM_SHAPES],
          F32_TOLERANCE)
    t.add(Build("ops_atomic_rowsum_f32", "atomic_rowsum", {"dtype": "f32"}),
          [("1001x999", {"M": 1001, "N": 999})], F32_TOLERANCE)
    t.add(Build("ops_atomic_rows_f16", "atomic_rows", {"dtype": "f16"}),
          [("1001x999x72", {"M": 1001, "N": 999, "K": 72}),
           ("256x192x64", {"M": 256, "N": 192, "K": 64})], F32_TOLERANCE)
    # last_block: the last of a row's blocks adds up the chunk sums the others wrote. Rows of
    # 1 to 17 chunks (N = 1: one block, the last at once; 257 = a chunk and one column) and of
    # over a thousand (300001 columns: many blocks racing for each counter), block_N
    # off the powers of two (160, 96), and rows of more chunks than the last block's tile of
    # block_C (a serial loop over them); f16 on sm_90a and sm_80, bf16 and f32.
    last = [("1x1", {"M": 1, "N": 1}), ("3x257", {"M": 3, "N": 257}), ("17x1000", {"M": 17, "N": 1000}),
            ("5x4097", {"M": 5, "N": 4097}), ("64x2048", {"M": 64, "N": 2048}),
            ("2x300001", {"M": 2, "N": 300001})]
    for name, defines, target in (
            ("f16", {"dtype": "f16", "block_N": "256"}, ""),
            ("f16_sm80", {"dtype": "f16", "block_N": "256"}, "sm_80"),
            ("bf16_n160_c8", {"dtype": "bf16", "block_N": "160", "block_C": "8"}, ""),
            ("f16_n96_c4_sm80", {"dtype": "f16", "block_N": "96", "block_C": "4"}, "sm_80"),
            ("f32_n512_t256", {"dtype": "f32", "block_N": "512", "threads": "256"}, "")):
        t.add(Build(f"ops_last_block_{name}", "last_block", defines, target=target), last, F32_TOLERANCE)
    # Fragments smaller than the block: copies of the tile on thread groups (FREE level).
    for n in (64, 24, 4):
        t.add(Build(f"ops_small_fragments_n{n}", "small_fragments", {"dtype": "f32", "n": str(n)}),
              [("77", {"M": 77})], F32_TOLERANCE)
    plain = [("1024x1024", {"M": 1024, "N": 1024}), ("1001x999", {"M": 1001, "N": 999})]
    # cumsum: f32 fragments at f32 tolerance; f16 fragments round each sum to f16.
    t.add(Build("ops_cumsum_f32", "cumsum", {"dtype": "f32", "block_M": "64", "block_N": "80"}),
          plain + [("77x250", {"M": 77, "N": 250})], F32_TOLERANCE)
    t.add(Build("ops_cumsum_f16_32x96", "cumsum", {"dtype": "f16", "block_M": "32", "block_N": "96"}),
          plain + [("77x250", {"M": 77, "N": 250})])
    # The reductions' general path: shared and 1-d/2-d fragment sources along any dimension,
    # into shared, fragment and local buffers (f32 tolerance in both: the f16 fragment's
    # maxima are of X rounded to f16, which the reference rounds too).
    t.add(Build("ops_reduce_any_f32", "reduce_any", {"dtype": "f32", "block_M": "64", "block_N": "80"}),
          plain + [("77x250", {"M": 77, "N": 250}), ("5x3", {"M": 5, "N": 3})], F32_TOLERANCE)
    t.add(Build("ops_reduce_any_f16_32x96", "reduce_any", {"dtype": "f16", "block_M": "32", "block_N": "96"}),
          plain + [("77x250", {"M": 77, "N": 250})], F32_TOLERANCE)
    # cummax/cummin (the cumsum scan with max/min), bitwise reductions on every source kind
    # (exact: tolerance 0), argmax/argmin with ties and NaNs (positions and values exact).
    odd = plain + [("77x250", {"M": 77, "N": 250}), ("5x3", {"M": 5, "N": 3})]
    t.add(Build("ops_cummax_f32", "cummax", {"dtype": "f32", "block_M": "64", "block_N": "80"}), odd, 0.0)
    t.add(Build("ops_cummax_f16_32x96", "cummax", {"dtype": "f16", "block_M": "32", "block_N": "96"}), odd, 0.0)
    t.add(Build("ops_reduce_bits_64x80", "reduce_bits", {"dtype": "i32", "block_M": "64", "block_N": "80"}), odd, 0.0)
    t.add(Build("ops_reduce_bits_32x96", "reduce_bits", {"dtype": "i32", "block_M": "32", "block_N": "96"}), odd, 0.0)
    t.add(Build("ops_argmax_f32", "argmax", {"dtype": "f32", "block_M": "64", "block_N": "80"}), odd, 0.0)
    t.add(Build("ops_argmax_f16_32x96", "argmax", {"dtype": "f16", "block_M": "32", "block_N": "96"}), odd, 0.0)
    # A copy between fragments of different layouts (the sm_80 path: an mma accumulator under
    # the square policy into a full_row register operand; on sm_90a the two layouts agree).
    for dt, target in (("f16", "sm_80"), ("bf16", "sm_80"), ("f16", "sm_90a")):
        t.add(Build(f"ops_fragment_convert_{dt}" + ("_sm80" if target == "sm_80" else ""), "fragment_convert",
                    {"dtype": dt}, target=target),
              [("1000x72", {"M": 1000, "K": 72}), ("64x32", {"M": 64, "K": 32}), ("77x200", {"M": 77, "K": 200})])
    # A gemm on the first warpgroup of two (threads = 128) feeding one on both through shared
    # memory in a pipelined loop (FlashMLA's schedule): wgmma on sm_90a, mma.sync on 4 of 8
    # warps on sm_80; 32- and 64-key tiles, partial tiles of keys and rows.
    for name, dt, keys, target in (("f16", "f16", "32", "sm_90a"), ("bf16_n64", "bf16", "64", "sm_90a"),
                                   ("f16_sm80", "f16", "32", "sm_80")):
        t.add(Build(f"ops_gemm_thread_subset_{name}", "gemm_thread_subset",
                    {"dtype": dt, "block_N": keys, "score_threads": "128"}, target=target),
              [("64x64", {"M": 64, "N": 64}), ("70x45", {"M": 70, "N": 45}), ("1000x1000", {"M": 1000, "N": 1000}),
               ("20x1", {"M": 20, "N": 1})])
    # The same handover with no other shared writes in the loop (its barriers split: one side
    # arrives where it has nothing to read, lower/SplitBarriers.cpp).
    for name, target in (("f16", "sm_90a"), ("f16_sm80", "sm_80")):
        t.add(Build(f"ops_gemm_thread_subset_steps_{name}", "gemm_thread_subset_steps",
                    {"dtype": "f16", "block_N": "32", "score_threads": "128", "steps": "3"}, target=target),
              [("64x32", {"M": 64, "N": 32}), ("70x20", {"M": 70, "N": 20}), ("1000x100", {"M": 1000, "N": 100})])
    for dt in ("f16", "bf16"):
        t.add(Build(f"ops_copy_paths_{dt}", "copy_paths", {"dtype": dt}), plain)
    _add_annotated_layouts(t, plain)
    for dt in ("f32", "f16"):
        t.add(Build(f"ops_fill_regions_{dt}", "fill_regions",
                    {"dtype": dt, "block_M": "64", "block_N": "64", "strip": "8"}), plain)


# (batch, heads, seqlen_kv, kv_heads): the DeepSeek shape at batch 4; two KV heads with two
# blocks of heads each; fewer heads than block_H (padding rows, read as 0, never written).
MLA_SHAPES = [(4, 64, 1000, 1), (2, 128, 517, 2), (3, 16, 300, 1)]


def _add_samples(t: _Tables) -> None:
    """samples/flash_mla_decode.tl and samples/dequant_gemm_w4a16.tl."""
    for dt, shapes in (("f16", MLA_SHAPES), ("bf16", MLA_SHAPES[:1])):
        t.add(Build(f"mla_{dt}", "mla", {"dtype": dt, "dim": "512", "pe_dim": "64"}),
              [(f"b{b}h{h}s{s}g{g}", {"batch": b, "heads": h, "seqlen_kv": s, "kv_heads": g,
                                      "dim": 512, "pe_dim": 64}) for b, h, s, g in shapes])
    # The sample's tiles for sm_80 (max_shared_bytes(): 32 heads and 32 cache entries per step on
    # 128 threads, where Hopper's 64 and 64 do not fit in 163 KiB), on the mma.sync path.
    t.add(Build("mla_f16_sm80", "mla", {"dtype": "f16", "dim": "512", "pe_dim": "64"}, target="sm_80"),
          [(f"b{b}h{h}s{s}g{g}", {"batch": b, "heads": h, "seqlen_kv": s, "kv_heads": g,
                                  "dim": 512, "pe_dim": 64}) for b, h, s, g in MLA_SHAPES + [(2, 40, 77, 1)]])
    # Deeper pipelines over the latent cache (32 keys per step, 3-4 stages; 64 keys fit only
    # 2), benchmarked beside the defaults: more bytes in flight per SM where one block streams
    # a whole sequence.
    for keys, stages in ((32, 3), (32, 4)):
        t.add(Build(f"mla_f16_n{keys}_s{stages}", "mla", {"dtype": "f16", "dim": "512", "pe_dim": "64",
                                                         "block_N": str(keys), "stages": str(stages)}),
              [(f"b{b}h{h}s{s}g{g}", {"batch": b, "heads": h, "seqlen_kv": s, "kv_heads": g,
                                      "dim": 512, "pe_dim": 64}) for b, h, s, g in MLA_SHAPES[:2]])
    # K must be a multiple of group_size; 1152 = 9 tiles of block_K = 128. The f16 builds also
    # run the sizes of issue 12 (W4A16_SHAPES: M = 1, 16, 77, 4096), group 64 with K off the
    # tiles.
    shapes = [(f"{m}x{n}x{k}", {"M": m, "N": n, "K": k})
              for m, n, k in ((1024, 1024, 1024), (257, 1000, 1152))]
    sizes = {128: _mnk_shapes(W4A16_SHAPES), 64: _mnk_shapes(W4A16_SHAPES_G64[-3:])}
    for dt, group in (("f16", 128), ("bf16", 128), ("f16", 64)):
        t.add(Build(f"w4a16_{dt}_g{group}", "dequant_w4a16",
                    {"dtype": dt, "group_size": str(group)}), shapes + (sizes[group] if dt == "f16" else []))
    # The FP4-weight GEMM: groups of 32 (MXFP4) in f16 and of 16 (NVFP4) in bf16, the sm_80
    # lowering, and the decode tiles, at the W4A16 sizes (K a multiple of 32: 1152, 2048, 4096).
    t.add(Build("w4a16_fp4_f16_g32", "dequant_fp4_gemm", {"dtype": "f16", "group_size": "32"}),
          shapes + _mnk_shapes(W4A16_SHAPES))
    t.add(Build("w4a16_fp4_bf16_g16", "dequant_fp4_gemm", {"dtype": "bf16", "group_size": "16"}), shapes)
    t.add(Build("w4a16_fp4_f16_g32_sm80", "dequant_fp4_gemm", {"dtype": "f16", "group_size": "32"}, target="sm_80"),
          shapes)
    t.add(Build("w4a16_fp4_f16_g32_dec", "dequant_fp4_gemm", {"dtype": "f16", "group_size": "32",
                                                           **W4A16_DECODE["_dec"]}),
          _mnk_shapes(W4A16_DECODE_SHAPES))
    # The memory-bound operator samples (issue 12): 5 shapes each, ragged ones included.
    rows = [(4096, 4096), (1000, 3000), (7, 129), (1, 8192), (333, 1030)]
    t_rows = [(f"{m}x{n}", {"M": m, "N": n}) for m, n in rows]
    t.add(Build("mem_swiglu_f16", "swiglu", {"dtype": "f16"}), t_rows)
    t.add(Build("mem_swiglu_bf16", "swiglu", {"dtype": "bf16"}), t_rows)
    # The row kernels read a row of up to block_N columns once, into registers, and take
    # wider rows in two passes over block_N-column tiles. The samples choose block_N for the
    # widths their tune_for lists (1024 to 16384, a variant each, dispatched on N): the shapes
    # reach every variant (N = 1, 129, 1030 the 1024-wide one; 2000 the 2048; 3000, 4095 and
    # 4096 the 4096; 8192 and 8193, a tile and one column, the 8192; 16384 and 20000, two
    # tiles the last ragged, the 16384). 4095 and 1030 are no multiple of the 8-element vector
    # (the scalar instantiation), 2 rows of one column the smallest.
    one_pass = rows + [(5, 4095), (2, 1), (11, 2000), (3, 16384)]
    two_pass = [(9, 8193), (3, 20000)]
    for family in ("log_softmax", "layernorm", "softmax", "rmsnorm"):
        eps = {"eps": "1e-6"} if family == "rmsnorm" else {}  # the reference reads it
        # log_softmax of one column is exactly 0, a reference of zeros that only an exact
        # answer matches: 1000 rows of random values, where the rounding of x * log2(e) * ln(2)
        # that the sample computed before left some nonzero (GPU run 173: a draw of 3 rows).
        exact = [(1000, 1)] if family == "log_softmax" else []
        for dt in ("f16", "bf16"):
            t.add(Build(f"mem_{family}_{dt}", family, {"dtype": dt, **eps}),
                  [(f"{m}x{n}", {"M": m, "N": n}) for m, n in one_pass + two_pass + exact])
        # A narrow block_N: the two-pass path over many tiles at small shapes; and 512 threads
        # (two 16-byte vectors of an 8192-column row each), benchmarked beside the default.
        t.add(Build(f"mem_{family}_f16_n1024", family,
                    {"dtype": "f16", "block_N": "1024", "threads": "256", **eps}),
              [(f"{m}x{n}", {"M": m, "N": n}) for m, n in ((333, 1030), (7, 4099), (64, 1024), (3, 129))])
        t.add(Build(f"mem_{family}_f16_t512", family,
                    {"dtype": "f16", "block_N": "8192", "threads": "512", **eps}),
              [(f"{m}x{n}", {"M": m, "N": n}) for m, n in ((4096, 4096), (7, 129), (9, 8193), (1, 8192), (333, 1030))])
        # The samples' fixed tiles before tune_for (8192 columns, 256 threads), beside the
        # dispatching defaults in the same run.
        t.add(Build(f"mem_{family}_f16_n8192", family,
                    {"dtype": "f16", "block_N": "8192", "threads": "256", **eps}),
              [(f"{m}x{n}", {"M": m, "N": n}) for m, n in ((4096, 4096), (7, 129), (9, 8193), (333, 1030))])
        # Rows of up to 4096 read once by 128 threads (the same 32 elements a thread, twice the
        # blocks per SM of the default on 4096-column rows, whose upper half it leaves idle).
        t.add(Build(f"mem_{family}_f16_n4096", family, {"dtype": "f16", "block_N": "4096", "threads": "128", **eps}),
              [(f"{m}x{n}", {"M": m, "N": n}) for m, n in ((4096, 4096), (7, 129), (2, 4097), (9, 8193), (333, 1030))])
    for dt in ("f16", "bf16"):
        t.add(Build(f"mem_gemv_{dt}", "gemv", {"dtype": dt}),
              [(f"{m}x{k}", {"M": m, "K": k}) for m, k in ((4096, 4096), (1000, 3000), (7, 129),
                                                            (1, 8192), (14336, 4096))])
    # samples/block_sparse_attention.tl: the defaults (warp-specialized on sm_90a, the K and V
    # copies prefetched under the mask), a 64x64 mask grid at D64, and the sm_80 path.
    for name, defines, target in (("sparse_attn_f16", {}, "sm_90a"),
                                  ("sparse_attn_f16_b64_d64", {"block_M": "64", "block_N": "64",
                                                               "threads": "128", "dim": "64"}, "sm_90a"),
                                  ("sparse_attn_f16_sm80", {}, "sm_80")):
        dim = int(defines.get("dim", "128"))
        t.add(Build(name, "block_sparse_attention", {"dtype": "f16", "dim": str(dim), **defines},
                    target=target),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, dim))
               for b, h, s in ((2, 3, 1000), (1, 2, 256), (1, 1, 77), (2, 4, 1024))])
    _add_attention_sink(t)
    _add_vertical_slash(t)


def _vs_shape(batch, heads, seq_len, dim, slashes, verticals) -> dict:
    return {"batch": batch, "seq_len": seq_len, "heads": heads, "dim": dim, "nnz_s": slashes,
            "nnz_v": verticals}


# samples/vertical_slash_attention.tl: (batch, heads, seq_len, slash diagonals, verticals) per
# head; seq_len mostly no multiple of the 64-row tiles, densities from sparse to nearly full.
VS_SHAPES = [(1, 2, 1000, 40, 60), (2, 3, 777, 20, 100), (1, 4, 2048, 100, 200), (2, 2, 1500, 300, 30),
             (1, 2, 130, 4, 10), (3, 1, 64, 8, 8)]


def _add_vertical_slash(t: _Tables) -> None:
    """samples/vertical_slash_attention.tl, build names vs_<dtype>_d<dim>[_variant]: both head
    dims, f16 and bf16, the sm_80 path, and 128-row query blocks on two warpgroups."""
    for name, defines, target in (("vs_f16_d128", {}, "sm_90a"),
                                  ("vs_bf16_d128", {"dtype": "bf16"}, "sm_90a"),
                                  ("vs_f16_d64", {"dim": "64"}, "sm_90a"),
                                  ("vs_bf16_d64", {"dtype": "bf16", "dim": "64"}, "sm_90a"),
                                  ("vs_f16_d128_m128", {"block_M": "128", "threads": "256"}, "sm_90a"),
                                  # Deeper pipelines and 128-key steps (fewer, longer slash runs).
                                  ("vs_f16_d128_s3", {"stages": "3"}, "sm_90a"),
                                  ("vs_f16_d128_n128", {"block_N": "128"}, "sm_90a"),
                                  ("vs_f16_d128_n128_s3", {"block_N": "128", "stages": "3"}, "sm_90a"),
                                  ("vs_f16_d128_sm80", {}, "sm_80")):
        defines = {"dtype": "f16", "dim": "128", **defines}
        dim = int(defines["dim"])
        t.add(Build(name, "vertical_slash_attention", defines, target=target),
              [(f"b{b}h{h}s{s}_ns{ns}_nv{nv}", _vs_shape(b, h, s, dim, ns, nv))
               for b, h, s, ns, nv in VS_SHAPES])


def _sink_shape(batch, heads, kv_heads, seq_len, dim) -> dict:
    return {"batch": batch, "heads": heads, "kv_heads": kv_heads, "seq_len": seq_len, "dim": dim}


# samples/attention_sink.tl: (batch, heads, kv_heads, seq_len), i.e. groups = heads / kv_heads
# of 4, 8, 1, 8 and 4, at sequence lengths that are no multiple of the 128-row tiles but 256.
SINK_SHAPES = [(2, 8, 2, 1000), (1, 8, 1, 77), (2, 4, 4, 1023), (1, 16, 2, 256), (3, 4, 1, 130)]


def _add_attention_sink(t: _Tables) -> None:
    """samples/attention_sink.tl at both head dims, f16 and bf16, causal and not, the sliding
    window (causal: gpt-oss's 128; not causal: a window of 100 rows, no tile multiple), and the
    sm_80 path; build names sink_<dtype>_d<dim>[_causal][_w<window>][_sm80]."""
    for dt, dim, causal, window, target in (("f16", 128, False, 0, ""), ("f16", 128, True, 0, ""),
                                            ("bf16", 128, False, 0, ""), ("f16", 64, False, 0, ""),
                                            ("f16", 64, True, 0, ""), ("bf16", 64, True, 0, ""),
                                            ("f16", 128, True, 128, ""), ("bf16", 64, False, 100, ""),
                                            ("f16", 128, True, 0, "sm_80")):
        name = (f"sink_{dt}_d{dim}" + ("_causal" if causal else "") + (f"_w{window}" if window else "")
                + ("_sm80" if target else ""))
        t.add(Build(name, "attention_sink", {"dtype": dt, "dim": str(dim), "causal": str(causal).lower(),
                                             "window": str(window)}, target=target),
              [(f"b{b}h{h}g{h // kv}s{s}", _sink_shape(b, h, kv, s, dim)) for b, h, kv, s in SINK_SHAPES])


# ---- samples/flash_decoding.tl: split-KV decoding with GQA (issue 12) --------------------------
# Build, case and bench item names start with decode_, so `--only '^decode_'` selects exactly
# these in make_bundle.sh, run.py, gpu_check.sh and bench.py. One launch: the last split of each
# block of a KV head's query heads to finish combines the splits (last_block; its counters Done
# start at 0 and must end so).

# (batch, kv_heads, groups, seqlen): key counts off the 64-key tiles (77, 1000, 4097, 32768 + 5),
# groups 1, 4 and 8, and splits that get no key at all (more of the 16 splits than tiles: 77 and
# 5 keys, and 4097 = 65 tiles dealt 5 per split leaves the last 3 empty); 80 heads on one KV
# head take two blocks of the 64 rows (the second with 16).
DECODE_SHAPES = [(1, 8, 8, 32768 + 5), (2, 8, 4, 4097), (3, 2, 8, 1000), (4, 4, 1, 77),
                 (2, 2, 8, 5), (1, 1, 80, 300)]
DECODE_SPLITS = "16"   # the sample's default num_splits (a knob the tensor shapes depend on)
DECODE_BLOCK_H = "64"  # the sample's default block_H (Done's second extent depends on it)
# Other split counts the bench items time beside the default, to choose it from measurements:
# half and twice the blocks (at batch 1, 8 x 16 = 128 blocks is one per SM of an H100).
DECODE_SPLIT_SWEEP = (8, 32)
# Keys per step and pipeline depth of the split pass (the defaults: 64 keys, 3 stages, two
# blocks per SM): 128 keys or 4 stages (one block per SM, more bytes in flight per block), 32
# keys with 6 stages and 2 stages (two blocks per SM).
DECODE_TILE_SWEEP = {"_n128": {"block_N": "128", "stages": "2"}, "_st4": {"stages": "4"},
                     "_n32": {"block_N": "32", "stages": "6"}, "_st2": {"stages": "2"},
                     # All num_splits splits at every batch, as before fill_blocks (the sample
                     # used 16 splits whatever the batch).
                     "_all16": {"fill_blocks": "1000000"}}
# fill_blocks small enough that the check shapes use fewer splits than num_splits (the unused
# slots' LSE is -inf): 8 gives 1, 2 or 4 splits at DECODE_SHAPES, 40 gives 2 to 16.
DECODE_FILL_CHECKS = ("8", "40")


def _decode_shape(batch, kv_heads, groups, seqlen, dim) -> dict:
    return {"batch": batch, "heads": kv_heads * groups, "kv_heads": kv_heads, "seqlen": seqlen,
            "dim": dim}


def _decode_label(batch, kv_heads, groups, seqlen) -> str:
    return f"b{batch}h{kv_heads * groups}kv{kv_heads}s{seqlen}"


def _add_flash_decoding(t: _Tables) -> None:
    # The defaults at both head dims and dtypes (warp-specialized on sm_90a), the sm_80 path,
    # 3 splits (not a power of two: the combine's [block_H, 3] weights, LSE rows of 12 bytes),
    # and fewer heads per block (block_H 32 and 16: up to 5 blocks of one KV head's heads, each
    # with a counter of its own) with the combine's rows 3 at a time (a partial last step).
    for name, defines, target, shapes in (
            ("decode_f16_d128", {"dtype": "f16", "dim": "128"}, "", DECODE_SHAPES),
            ("decode_bf16_d128", {"dtype": "bf16", "dim": "128"}, "", DECODE_SHAPES[:4]),
            ("decode_f16_d64", {"dtype": "f16", "dim": "64"}, "", DECODE_SHAPES),
            ("decode_bf16_d64", {"dtype": "bf16", "dim": "64"}, "", DECODE_SHAPES[1:5]),
            ("decode_f16_d128_sm80", {"dtype": "f16", "dim": "128"}, "sm_80", DECODE_SHAPES[:5]),
            ("decode_f16_d128_s3", {"dtype": "f16", "dim": "128", "num_splits": "3"}, "",
             DECODE_SHAPES[1:5]),
            ("decode_f16_d128_h32", {"dtype": "f16", "dim": "128", "block_H": "32", "threads": "64"}, "",
             DECODE_SHAPES[1:]),
            ("decode_bf16_d64_h16_r3_sm80", {"dtype": "bf16", "dim": "64", "block_H": "16", "threads": "32",
                                             "combine_rows": "3"}, "sm_80", DECODE_SHAPES[1:]),
            *((f"decode_f16_d128_fill{n}", {"dtype": "f16", "dim": "128", "fill_blocks": n}, "", DECODE_SHAPES)
              for n in DECODE_FILL_CHECKS),
            ("decode_bf16_d64_fill8_sm80", {"dtype": "bf16", "dim": "64", "fill_blocks": "8"}, "sm_80",
             DECODE_SHAPES[1:]),
            # The split-count sweep of the bench items (checked at two shapes each).
            *((f"decode_f16_d128_s{n}", {"dtype": "f16", "dim": "128", "num_splits": str(n)}, "",
               [DECODE_SHAPES[1], DECODE_SHAPES[3]]) for n in DECODE_SPLIT_SWEEP),
            # The tile sweep of the bench items (keys per step, stages).
            *((f"decode_f16_d128{suffix}", {"dtype": "f16", "dim": "128", **knobs}, "",
               [DECODE_SHAPES[1], DECODE_SHAPES[3]]) for suffix, knobs in DECODE_TILE_SWEEP.items())):
        defines = {"num_splits": DECODE_SPLITS, "block_H": DECODE_BLOCK_H, **defines}
        dim = int(defines["dim"])
        t.add(Build(name, "flash_decoding", defines, target=target),
              [(_decode_label(*shape), _decode_shape(*shape, dim)) for shape in shapes])


def _flash_decoding_bench_items() -> list:
    """Issue 12's decoding shapes: batch 1, 16, 64, 8 KV heads of 8 query heads each, 4096 and
    32768 keys, D128, on the sample's defaults and with the other split counts of the sweep;
    against SDPA (enable_gqa) and torch matmuls, in GB/s on the bytes of Q, K, V and O beside
    the copy bandwidth."""
    shapes = [(b, s) for s in (4096, 32768) for b in (1, 16, 64)]
    items = [BenchItem(f"decode_f16_d128_{_decode_label(b, 8, 8, s)}", "decode_f16_d128",
                       _decode_shape(b, 8, 8, s, 128)) for b, s in shapes]
    for suffix, knobs in DECODE_TILE_SWEEP.items():
        items += [BenchItem(f"decode_f16_d128{suffix}_{_decode_label(b, 8, 8, s)}", f"decode_f16_d128{suffix}",
                            _decode_shape(b, 8, 8, s, 128), " ".join(f"-D {a}={v}" for a, v in knobs.items()))
                  for b, s in shapes]
    for n in DECODE_SPLIT_SWEEP:
        items += [BenchItem(f"decode_f16_d128_s{n}_{_decode_label(b, 8, 8, s)}",
                            f"decode_f16_d128_s{n}", _decode_shape(b, 8, 8, s, 128),
                            f"-D num_splits={n} (the default is {DECODE_SPLITS})")
                  for b, s in shapes]
    return items


# ---- samples/flash_attention_bwd.tl: FlashAttention-2 backward (issue 12) ----------------------
# Build, case and bench item names start with bwd_ (`--only '^bwd_'`). A case runs the
# preprocess and the backward as one operation on Q, K, V, dO and the O and LSE of a float32
# forward, and compares dQ (f32), dK and dV with float64 autograd; bwd_fwd_lse_ builds check
# the file's forward (O and LSE).

# (batch, seq_len, heads): one 64-row tile, ragged lengths (77, 300, 513, 1000, 2053: queries
# and keys past the end of the last tile), several heads and batches.
BWD_SHAPES = [(1, 64, 1), (2, 1000, 4), (1, 77, 2), (4, 513, 8), (1, 2053, 16), (3, 300, 3)]
# sm_80 at D128: 16 query rows per step on 8 warps with 128 keys per block keep ptxas within
# 255 registers (the defaults spill there; they are for wgmma).
BWD_SM80_D128 = {"flash_attention_bwd.block_M": "16", "flash_attention_bwd.block_N": "128",
                 "flash_attention_bwd.threads": "256"}


def _bwd_label(batch, seq, heads) -> str:
    return f"b{batch}h{heads}s{seq}"


def _add_attention_bwd(t: _Tables) -> None:
    for name, defines, target, shapes in (
            ("bwd_f16_d128", {"dtype": "f16", "dim": "128", "causal": "false"}, "", BWD_SHAPES),
            ("bwd_f16_d128_causal", {"dtype": "f16", "dim": "128", "causal": "true"}, "", BWD_SHAPES),
            ("bwd_bf16_d128", {"dtype": "bf16", "dim": "128", "causal": "false"}, "", BWD_SHAPES[:4]),
            ("bwd_bf16_d128_causal", {"dtype": "bf16", "dim": "128", "causal": "true"}, "", BWD_SHAPES[1:5]),
            ("bwd_f16_d64", {"dtype": "f16", "dim": "64", "causal": "false"}, "", BWD_SHAPES),
            ("bwd_f16_d64_causal", {"dtype": "f16", "dim": "64", "causal": "true"}, "", BWD_SHAPES),
            ("bwd_bf16_d64_causal", {"dtype": "bf16", "dim": "64", "causal": "true"}, "", BWD_SHAPES[:4]),
            ("bwd_f16_d128_causal_sm80", {"dtype": "f16", "dim": "128", "causal": "true", **BWD_SM80_D128},
             "sm_80", BWD_SHAPES[:5]),
            ("bwd_f16_d64_sm80", {"dtype": "f16", "dim": "64", "causal": "false"}, "sm_80", BWD_SHAPES[:5])):
        dim = int(defines["dim"])
        t.add(Build(name, "attention_bwd", defines, target=target),
              [(_bwd_label(*shape), _attention_shape(shape[0], shape[2], shape[1], dim)) for shape in shapes])
    # The deterministic form (family attention_bwd_split): the key-block kernel without dQ,
    # then the query-block dQ kernel, which writes every element of dQ_accum once.
    no_atomic = {"flash_attention_bwd.atomic_dq": "false"}
    for name, defines, target, shapes in (
            ("bwd_split_f16_d128", {"dtype": "f16", "dim": "128", "causal": "false", **no_atomic}, "", BWD_SHAPES),
            ("bwd_split_f16_d128_causal", {"dtype": "f16", "dim": "128", "causal": "true", **no_atomic}, "",
             BWD_SHAPES),
            ("bwd_split_bf16_d64_causal", {"dtype": "bf16", "dim": "64", "causal": "true", **no_atomic}, "",
             BWD_SHAPES[:5]),
            ("bwd_split_f16_d64", {"dtype": "f16", "dim": "64", "causal": "false", **no_atomic}, "", BWD_SHAPES),
            ("bwd_split_f16_d64_sm80", {"dtype": "f16", "dim": "64", "causal": "false", **no_atomic}, "sm_80",
             BWD_SHAPES[:5])):
        dim = int(defines["dim"])
        t.add(Build(name, "attention_bwd_split", defines, target=target),
              [(_bwd_label(*shape), _attention_shape(shape[0], shape[2], shape[1], dim)) for shape in shapes])
    for name, defines in (("bwd_fwd_lse_f16_d128", {"dtype": "f16", "dim": "128", "causal": "false"}),
                          ("bwd_fwd_lse_f16_d64_causal", {"dtype": "f16", "dim": "64", "causal": "true"}),
                          ("bwd_fwd_lse_bf16_d128_causal", {"dtype": "bf16", "dim": "128", "causal": "true"})):
        dim = int(defines["dim"])
        t.add(Build(name, "attention_fwd_lse", defines),
              [(_bwd_label(*shape), _attention_shape(shape[0], shape[2], shape[1], dim)) for shape in BWD_SHAPES[:5]])


def _attention_bwd_bench_items() -> list:
    """Issue 12's backward shapes (B, H, S, D) = (8, 16, 1024, 128), (4, 32, 4096, 128),
    (8, 16, 1024, 64), causal and not, against SDPA's backward on its cuDNN and flash
    backends (FLOPs: 2.5x the forward's, as FlashAttention-2 counts)."""
    items = []
    for causal in (False, True):
        for b, h, s, d in ((8, 16, 1024, 128), (4, 32, 4096, 128), (8, 16, 1024, 64)):
            build = f"bwd_f16_d{d}" + ("_causal" if causal else "")
            items.append(BenchItem(f"{build}_b{b}h{h}s{s}", build, _attention_shape(b, h, s, d)))
            if d == 128 or not causal:  # the deterministic form beside it
                split = build.replace("bwd_", "bwd_split_")
                items.append(BenchItem(f"{split}_b{b}h{h}s{s}", split, _attention_shape(b, h, s, d)))
    return items


# Builds that tlc refuses although docs/language.md says their kernel is valid, with the error
# tlc gives. They stay out of the bundle (one known failure would fail every run) until tlc
# accepts them; test_tables checks that tlc still gives this error, so a fix shows up there.
# Kernels tlc is known to reject (build name -> the start of tlc's message); they are left out
# of the bundle so one rejection does not block the run. Empty: every op kernel compiles.
KNOWN_TLC_REJECTIONS: dict = {}


# samples/gemm_auto.tl compiled with M, N and K dynamic: tlc ranks 64 shape buckets (sizes
# 16, 256, 1024 and 4096 each; edges at 64, 512 and 2048) and dispatches every call to the
# variant of its bucket. Every bucket's representative runs, so every variant in the table
# runs, plus sizes on both sides of each edge and ragged ones.
DISPATCH_SIZES = (16, 256, 1024, 4096)
DISPATCH_EDGE_SHAPES = [(63, 64, 511), (64, 511, 63), (511, 512, 2047), (2047, 2048, 512),
                        (1, 1, 1), (17, 3001, 1000), (1000, 17, 4095)]


DISPATCH_BENCH_SHAPES = [(1, 4096, 4096), (16, 4096, 4096), (256, 4096, 4096), (1024, 1024, 1024),
                         (4096, 4096, 4096), (8192, 8192, 8192)]


def _add_dispatch(t: _Tables) -> None:
    shapes = [(m, n, k) for m in DISPATCH_SIZES for n in DISPATCH_SIZES for k in DISPATCH_SIZES]
    t.add(Build("auto_gemm_dispatch_f16", "gemm_auto", {"dtype": "f16"}),
          [(f"{m}x{n}x{k}", {"M": m, "N": n, "K": k}) for m, n, k in shapes + DISPATCH_EDGE_SHAPES])


# ---- Issue 9: shared layouts at every tile width, gathers through a shared table ------------
# Build and case names start with layout_, so `--only '^layout_'` selects them (and the
# optional compute-sanitizer stage of gpu_check.sh runs exactly these). Shapes are small.

# Tile widths whose rows are not 8 16-byte chunks (16, 48, 80, 96, 112, 160) and one that is a
# larger multiple (192): the swizzle must stay a bijection inside each row.
LAYOUT_WIDTHS = (16, 48, 80, 96, 112, 160, 192)
LAYOUT_HEAD_DIMS = (64, 80, 96, 128)


def _add_layout_widths(t: _Tables) -> None:
    for knob in ("block_N", "block_K"):
        for w in LAYOUT_WIDTHS:
            # The generic 128 x 128 x 32 tiles with one knob changed (hopper_tiles would also
            # change the threads, the step and the launch on sm_90a).
            defines = {"dtype": "f16", "policy": "square", "hopper_tiles": "false", "few_tiles": "false", knob: str(w)}
            if knob == "block_K" and w >= 160:
                defines["stages"] = "2"   # 3 stages of 128 x 160 tiles exceed shared memory
            bn = w if knob == "block_N" else 128
            bk = w if knob == "block_K" else 32
            # Partial tiles in every dimension (odd K: the scalar, unaligned copy path), the
            # shape of the issue's fault, and a whole number of tiles (the cp.async path).
            shapes = [("257x1000x999", {"M": 257, "N": 1000, "K": 999}),
                      ("130x70x40", {"M": 130, "N": 70, "K": 40}),
                      ("mult", {"M": 256, "N": 4 * bn, "K": 4 * bk})]
            t.add(Build(f"layout_gemm_{knob[-1].lower()}{w}", "gemm", defines), shapes)
    for dim in LAYOUT_HEAD_DIMS:
        t.add(Build(f"layout_fa_d{dim}", "attention",
                    {"dtype": "f16", "dim": str(dim), "causal": "false"}),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, dim))
               for b, h, s in ((2, 3, 1000), (1, 2, 256), (1, 1, 77))])
    # FlashAttention-3's ping-pong schedule (named barriers over the two consumer warpgroups,
    # ids from warpgroup_id()); the threads=128 build runs the same barriers with one warpgroup.
    for dim, causal, extra in ((128, False, {}), (128, True, {}), (64, False, {}), (64, True, {}),
                               (64, False, {"threads": "128", "block_M": "64"})):
        name = f"layout_fa_pingpong_d{dim}" + ("_causal" if causal else "") + ("_wg1" if extra else "")
        t.add(Build(name, "attention", {"dtype": "f16", "dim": str(dim), "causal": str(causal).lower(),
                                        "ping_pong": "true", **extra}),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, dim))
               for b, h, s in ((2, 3, 1000), (1, 2, 256), (1, 1, 77), (8, 16, 1024))])
    # ... with one stage (no pipeline), sm_90a and sm_80: the barrier for Q @ K^T's read of K_s
    # goes before the turn's barrier_wait (inside the turn it hung, GPU run 170).
    for target, dim, causal in (("", 64, True), ("sm_80", 96, True), ("sm_80", 64, False)):
        name = f"layout_fa_pingpong_s1_d{dim}" + ("_causal" if causal else "") + (f"_{target.replace('_', '')}" if target else "")
        t.add(Build(name, "attention", {"dtype": "f16", "dim": str(dim), "causal": str(causal).lower(),
                                        "ping_pong": "true", "stages": "1", "block_M": "128", "threads": "256",
                                        **({"block_N": "96" if dim == 96 else "64"} if target else {})},
                    target=target),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, dim)) for b, h, s in ((2, 3, 381), (1, 1, 81), (1, 2, 256))])
    # persistent(): one block per resident slot looping over the tiles (lower/PersistentTiles);
    # the warp-specialized variant's rings run on from tile to tile. More tiles than blocks
    # (every block loops), ragged edges (the ordinary instantiation where rows are unaligned),
    # a causal mask (tiles of different trip counts, so blocks' rings drift apart).
    for dim, causal in ((128, False), (128, True), (64, False), (64, True)):
        t.add(Build(f"persist_fa_d{dim}" + ("_causal" if causal else ""), "attention",
                    {"dtype": "f16", "dim": str(dim), "causal": str(causal).lower(), "persist": "true"}),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, dim))
               for b, h, s in ((2, 3, 1000), (1, 1, 77), (8, 16, 1024), (1, 4, 2304))])
    # Ping-pong and persistent together: the named barriers' turns run on from tile to tile.
    for dim, causal in ((128, False), (128, True), (64, False), (64, True)):
        t.add(Build(f"persist_fa_pingpong_d{dim}" + ("_causal" if causal else ""), "attention",
                    {"dtype": "f16", "dim": str(dim), "causal": str(causal).lower(), "persist": "true",
                     "ping_pong": "true"}),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, dim))
               for b, h, s in ((2, 3, 1000), (1, 1, 77), (8, 16, 1024), (1, 4, 2304))])
    # D64 persistent on FlashAttention-3's D64 tiles (192 query rows, three consumer warpgroups).
    for causal in (False, True):
        t.add(Build("persist_fa_d64_m192" + ("_causal" if causal else ""), "attention",
                    {"dtype": "f16", "dim": "64", "causal": str(causal).lower(), "block_M": "192",
                     "threads": "384", "stages": "3", "persist": "true"}),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, 64))
               for b, h, s in ((2, 3, 1000), (1, 1, 77), (8, 16, 1024), (1, 4, 2304))])
    # tests/gpu/ops/attention_overlap.tl (GPU run 41: 0.88-1.01x the sample's schedule, so a
    # test of two wgmma groups in flight, not a sample): S_k = Q K_k^T and O += P_{k-1} V_{k-1} in flight
    # together (wgmma waits of depth 1), the ends clamped and masked: one key tile (129 keys: 2
    # tiles, the last of one key; 77: one tile, so both ends are the same tile), ragged rows,
    # causal masks, bf16, the sm_80 path (synchronous mma.sync: the same arithmetic).
    for dim, causal, dtype, target in ((128, False, "f16", "sm_90a"), (128, True, "f16", "sm_90a"),
                                       (64, False, "f16", "sm_90a"), (64, True, "bf16", "sm_90a"),
                                       (64, True, "f16", "sm_80")):
        name = f"ovl_fa_d{dim}" + ("_causal" if causal else "") + ("_bf16" if dtype == "bf16" else "") + \
            ("_sm80" if target == "sm_80" else "")
        t.add(Build(name, "attention_overlap", {"dtype": dtype, "dim": str(dim), "causal": str(causal).lower()},
                    target=target),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, dim))
               for b, h, s in ((2, 3, 1000), (1, 1, 77), (1, 2, 129), (8, 16, 1024), (1, 4, 2304))])
    # D64 with FlashAttention-3's D64 tiles: 192 query rows on three consumer warpgroups, three
    # stages (GPU run 33 measured them 5-13% faster at long sequences before lead copies).
    for causal in (False, True):
        t.add(Build("layout_fa_d64_m192" + ("_causal" if causal else ""), "attention",
                    {"dtype": "f16", "dim": "64", "causal": str(causal).lower(), "block_M": "192",
                     "threads": "384", "stages": "3"}),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, 64))
               for b, h, s in ((2, 3, 1000), (1, 1, 77), (8, 16, 1024), (1, 4, 2304))])
    # D64's defaults compare seq_len with constants (samples/flash_attention.tl): the launcher
    # runs one variant up to 1536 keys, 1280 causal (persistent; 128 rows when causal) and
    # another beyond (192 rows, ordinary launch). Both sides of the edge and ragged lengths;
    # `fixed_` is the tile the defaults were before, for the A/B in one process (bench items).
    for causal in (False, True):
        suffix = "_causal" if causal else ""
        edge = 1280 if causal else 1536
        t.add(Build("sizes_fa_d64" + suffix, "attention", {"dtype": "f16", "dim": "64", "causal": str(causal).lower()}),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, 64))
               for b, h, s in ((1, 3, edge), (1, 3, edge + 1), (2, 2, 4100), (3, 5, 77), (8, 16, 1024))])
        t.add(Build("fixed_fa_d64" + suffix, "attention",
                    {"dtype": "f16", "dim": "64", "causal": str(causal).lower(), "block_M": "192", "threads": "384",
                     "stages": "3", "persist": "false"}),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, 64)) for b, h, s in ((2, 3, 1000), (1, 4, 2304))])
    t.add(Build("sizes_fa_d64_causal_sm80", "attention", {"dtype": "f16", "dim": "64", "causal": "true"},
                target="sm_80"),
          [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, 64)) for b, h, s in ((1, 3, 1280), (1, 3, 1281), (2, 3, 1000))])
    # Persistent on sm_80: tiles run one after another, so Q and O share bytes (D128 fits in
    # 160 KiB) and SyncInsertion orders one tile's O stores before the next tile's Q copy.
    t.add(Build("persist_fa_d64_sm80", "attention",
                {"dtype": "f16", "dim": "64", "causal": "true", "persist": "true"}, target="sm_80"),
          [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, 64)) for b, h, s in ((2, 3, 1000), (4, 8, 1024))])
    for causal in (False, True):
        t.add(Build("persist_fa_d128_sm80" + ("_causal" if causal else ""), "attention",
                    {"dtype": "f16", "dim": "128", "causal": str(causal).lower(), "persist": "true"},
                    target="sm_80"),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, 128))
               for b, h, s in ((2, 3, 1000), (1, 1, 77), (4, 8, 1024), (1, 4, 2304))])
    # The D128 sample's default is persistent: the ordinary launch, for the A/B in one process.
    for causal in (False, True):
        t.add(Build("nopersist_fa_d128" + ("_causal" if causal else ""), "attention",
                    {"dtype": "f16", "dim": "128", "causal": str(causal).lower(), "persist": "false"}),
              [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, 128))
               for b, h, s in ((2, 3, 1000), (1, 1, 77), (8, 16, 1024))])
    # The sm_80 path's attention (mma.sync, register A through the accumulator layout).
    t.add(Build("layout_fa_d96_sm80", "attention",
                {"dtype": "f16", "dim": "96", "causal": "false"}, target="sm_80"),
          [(f"b{b}h{h}s{s}", _attention_shape(b, h, s, 96)) for b, h, s in ((2, 3, 1000), (1, 1, 77))])
    # The GEMM sample as tuned for the H100: 128x256x64 tiles, 4 stages, two warpgroups, each
    # wgmma group left in flight.
    t.add(Build("layout_gemm_s4_n256", "gemm",
                {"dtype": "f16", "policy": "square", "block_M": "128", "block_N": "256",
                 "block_K": "64", "stages": "4", "threads": "256", "persist": "false", "hopper_tiles": "false", "few_tiles": "false"}),
          [("257x1000x999", {"M": 257, "N": 1000, "K": 999}), ("130x70x40", {"M": 130, "N": 70, "K": 40}),
           ("mult", {"M": 512, "N": 1024, "K": 512}),
           # Ragged M and N with 16-byte aligned rows: the warp-specialized variant, its bulk
           # tensor stores clipped at the edges (infer/StoreStaging).
           ("1000x1000x1000", {"M": 1000, "N": 1000, "K": 1000}), ("77x264x136", {"M": 77, "N": 264, "K": 136}),
           ("m1", {"M": 1, "N": 520, "K": 64})])
    # The tuned GEMM persistent (three stages: the staging tile needs the fourth's bytes), and
    # the same tiles not persistent, for the A/B in one process. 4096x4096x512 has 512 tiles
    # for 132 blocks; K = 1016 and M = 1000 are ragged with 16-byte aligned rows (bulk path).
    persist_shapes = [("257x1000x999", {"M": 257, "N": 1000, "K": 999}), ("130x70x40", {"M": 130, "N": 70, "K": 40}),
                      ("1000x1024x1016", {"M": 1000, "N": 1024, "K": 1016}),
                      ("77x264x136", {"M": 77, "N": 264, "K": 136}), ("m1", {"M": 1, "N": 520, "K": 64}),
                      ("4096x4096x512", {"M": 4096, "N": 4096, "K": 512})]
    for name, extra in (("persist_gemm_s3_n256", {"persist": "true"}), ("layout_gemm_s3_n256", {"persist": "false"})):
        t.add(Build(name, "gemm", {"dtype": "f16", "policy": "square", "block_M": "128", "block_N": "256",
                                   "block_K": "64", "stages": "3", "threads": "256", "hopper_tiles": "false", "few_tiles": "false", **extra}),
              persist_shapes)
    # The generic tiles persistent (the defaults on sm_90a are persistent with the Hopper tiles).
    t.add(Build("persist_gemm_bf16", "gemm", {"dtype": "bf16", "policy": "square", "persist": "true",
                                              "hopper_tiles": "false", "few_tiles": "false"}),
          persist_shapes[:3])
    # Smaller tiles for problems of few 128x256 tiles (M and N up to a few thousand), timed
    # beside the defaults at such sizes: more blocks for the 132 SMs.
    for name, tiles in GEMM_SMALL_TILES.items():
        t.add(Build(name, "gemm", {"dtype": "f16", "policy": "square", "hopper_tiles": "false", "few_tiles": "false", **tiles}),
              persist_shapes[:3])
    # The generic 128x128x32 tiles on sm_90a (`-D hopper_tiles=false`; wgmma on one
    # warpgroup), which the bench times beside the defaults at every size.
    t.add(Build("layout_gemm_generic", "gemm", {"dtype": "f16", "policy": "square", "hopper_tiles": "false", "few_tiles": "false"}),
          persist_shapes)
    t.add(Build("persist_gemm_sm80", "gemm", {"dtype": "f16", "policy": "square", "persist": "true"},
                target="sm_80"), persist_shapes[:3] + persist_shapes[-1:])
    # wgmma with two warpgroups over a 64-wide tile: each owns 32 columns, the second starting
    # inside B's 64-column panel.
    t.add(Build("layout_gemm_n64_wg2", "gemm",
                {"dtype": "f16", "policy": "full_col", "block_M": "64", "block_N": "64",
                 "block_K": "64", "threads": "256", "persist": "false", "hopper_tiles": "false", "few_tiles": "false"}),
          [("257x1000x999", {"M": 257, "N": 1000, "K": 999}), ("mult", {"M": 256, "N": 256, "K": 256})])
    for dim in (64, 96):
        t.add(Build(f"layout_gather_d{dim}", "gather_table",
                    {"dtype": "f16", "page": "64", "npages": "8", "dim": str(dim)}),
              # R a whole number of pages, then a partial last page (its rows past R read 0).
              [(f"b{b}r{r}", {"B": b, "R": r, "L": 512, "dim": dim})
               for b, r in ((3, 64 * 37), (5, 64 * 20 + 17))])


# ---- gemm accumulating in f16 ------------------------------------------------------------------
# Build and case names start with accum_, so `--only '^accum_'` selects them.

# An f16 accumulator rounds every partial sum to f16 (11-bit significand, unit roundoff
# u = 2^-11 = 4.9e-4). With N(0, 1) inputs a partial sum of k products is ~sqrt(k) in size, and
# the roundings add up like a random walk: ||out - ref|| / ||ref|| ~ u * sqrt(K / 6) if every
# product were rounded (6.3e-3 at K = 1000), u * sqrt(K / 96) with one rounding per k16
# instruction (1.6e-3). A simulation of 600 dot products at K = 1000 gives 5.1e-3 and 1.2e-3,
# and 1.3e-2 if each k16 step truncated instead (the error then grows as K, not sqrt(K)).
# 2e-2 passes all three, while one k16 step left out (relative error sqrt(16 / K) >= 0.125 for
# K <= 1024) or a misplaced element (~1) fails by 6x or more. So the cases keep K <= 1024: the
# rounding error grows with K while a lost k-step's shrinks as 1 / sqrt(K).
F16_ACCUM_TOLERANCE = 2e-2
F16_ACCUM_SHAPES = [("1024", {"M": 1024, "N": 1024, "K": 1024}),
                    ("1000", {"M": 1000, "N": 1000, "K": 1000}),
                    ("257x1000x999", {"M": 257, "N": 1000, "K": 999}),
                    ("130x70x40", {"M": 130, "N": 70, "K": 40}),
                    ("m1", {"M": 1, "N": 4096, "K": 1024})]


def _add_f16_accumulators(t: _Tables) -> None:
    # samples/gemm.tl with accum=f16 on both paths: mma.sync (sm_80) and wgmma (sm_90a, its
    # aligned cases warp-specialized), the default tiles and the H100 ones (layout_gemm_s4_n256),
    # whose ordinary variant (the unaligned K = 999) leaves each wgmma group in flight.
    h100 = {"block_M": "128", "block_N": "256", "block_K": "64", "stages": "4", "threads": "256", "persist": "false",
            "hopper_tiles": "false", "few_tiles": "false"}
    for name, tiles, target in (("accum_gemm_f16_sm80", {}, "sm_80"), ("accum_gemm_f16", {}, ""),
                                ("accum_gemm_f16_h100tiles", h100, "")):
        t.add(Build(name, "gemm", {"dtype": "f16", "accum": "f16", "policy": "square", **tiles},
                    target=target),
              F16_ACCUM_SHAPES, F16_ACCUM_TOLERANCE)


# ---- samples/conv2d.tl: NHWC convolution as an implicit GEMM (issue 12) ------------------------
# Build, case and bench item names start with conv_, so `--only '^conv_'` selects exactly these.

# The filters of ResNet-like networks: (label, kh = kw, stride, pad).
CONV_FILTERS = [("3x3s1", 3, 1, 1), ("3x3s2", 3, 2, 1), ("1x1s1", 1, 1, 0), ("1x1s2", 1, 2, 0)]
# (N, H, W, C, F): a 7x7 map (one partial tile of rows), maps of 17 and 9x13 (output rows that
# straddle tiles, odd sizes for stride 2), C of 3 and 20 (channel blocks past C, rows of the
# filter that are not 16-byte aligned: the scalar copy path), F of 96, 200 and 40 (partial
# tiles of output channels), and the 56x56x64 layer of ResNet-50 at batch 8. The sample's
# defaults compare H with 7 and C and F with 64 (a variant per range): 8x8 maps of C = 72 into
# F = 65 sit just past those edges where the others sit on or below them.
CONV_SHAPES = [(1, 7, 7, 64, 96), (2, 17, 17, 128, 200), (8, 56, 56, 64, 64), (3, 9, 13, 20, 40),
               (2, 15, 15, 3, 64), (2, 8, 8, 72, 65)]


def _conv_shape(n, h, w, c, f) -> dict:
    return {"N": n, "H": h, "W": w, "C": c, "F": f}


def _conv_label(n, h, w, c, f) -> str:
    return f"n{n}h{h}w{w}c{c}f{f}"


def _conv_defines(k: int, stride: int, pad: int) -> dict:
    return {"kh": str(k), "kw": str(k), "stride": str(stride), "pad": str(pad)}


def _add_conv2d(t: _Tables) -> None:
    shapes = [(_conv_label(*s), _conv_shape(*s)) for s in CONV_SHAPES]
    for label, k, stride, pad in CONV_FILTERS:
        t.add(Build(f"conv_{label}_f16", "conv2d", {"dtype": "f16", **_conv_defines(k, stride, pad)}),
              shapes)
    # bf16, and the sm_80 path (mma.sync, cp.async for the filters) on the same GPU.
    t.add(Build("conv_3x3s1_bf16", "conv2d", {"dtype": "bf16", **_conv_defines(3, 1, 1)}), shapes[:3])
    t.add(Build("conv_3x3s1_f16_sm80", "conv2d", {"dtype": "f16", **_conv_defines(3, 1, 1)},
                target="sm_80"), shapes)
    t.add(Build("conv_3x3s2_f16_sm80", "conv2d", {"dtype": "f16", **_conv_defines(3, 2, 1)},
                target="sm_80"), shapes[:2])
    # The defaults before they depended on the layer's sizes (128 x 128 tiles, 3 stages), for
    # the A/B at ResNet-50's layers (bench items).
    for label, k, stride, pad in CONV_FILTERS:
        t.add(Build(f"conv_{label}_f16_fixed", "conv2d",
                    {"dtype": "f16", "block_M": "128", "block_N": "128", "block_K": "64", "stages": "3", "threads": "256",
                     **_conv_defines(k, stride, pad)}), shapes[:2])
    # 64 output channels per block, for the layers with F = 64 (bench items beside the default).
    for label, k, stride, pad in CONV_FILTERS[::2]:
        t.add(Build(f"conv_{label}_f16_n64", "conv2d",
                    {"dtype": "f16", "block_N": "64", **_conv_defines(k, stride, pad)}), shapes[:4])
    # The im2col-mode bulk copies on sm_90a (C of 64 and 128 take them; C of 20 and 3 the
    # gathered fallback of the same build): anchors' boxes of other corners (5x5 with pad 2, a
    # 3x3 without padding: upper corner pad - k + 1 = -2), a 64-byte swizzle (block_K = 32),
    # two panels per tile (block_K = 128: the second copy at channel c0 + 64), and one consumer
    # warpgroup (block_M = 64, 128 threads: a producer warp) at stride 2.
    t.add(Build("conv_5x5s1p2_f16", "conv2d", {"dtype": "f16", **_conv_defines(5, 1, 2)}), shapes)
    t.add(Build("conv_3x3s1p0_f16", "conv2d", {"dtype": "f16", **_conv_defines(3, 1, 0)}), shapes)
    t.add(Build("conv_3x3s1_f16_k32", "conv2d", {"dtype": "f16", "block_K": "32", **_conv_defines(3, 1, 1)}),
          shapes[:4])
    t.add(Build("conv_3x3s1_f16_k128", "conv2d", {"dtype": "f16", "block_K": "128", **_conv_defines(3, 1, 1)}),
          shapes[:4])
    t.add(Build("conv_3x3s2_f16_m64", "conv2d",
                {"dtype": "f16", "block_M": "64", "threads": "128", **_conv_defines(3, 2, 1)}), shapes[:4])
    # Tiles for the layers the defaults leave below 0.8x cuDNN (GPU run 52): 64-row tiles for
    # the 7x7 layer (52 blocks of 128 rows on 132 SMs) and the 1x1 stride-2 one, 256 output
    # channels per block for the 1x1 64 -> 256 layer (one K step: A read once per 256 channels).
    t.add(Build("conv_3x3s1_f16_m64", "conv2d",
                {"dtype": "f16", "block_M": "64", "threads": "128", **_conv_defines(3, 1, 1)}), shapes[:4])
    t.add(Build("conv_1x1s1_f16_n256", "conv2d",
                {"dtype": "f16", "block_N": "256", **_conv_defines(1, 1, 0)}), shapes[:4])
    t.add(Build("conv_1x1s2_f16_m64", "conv2d",
                {"dtype": "f16", "block_M": "64", "threads": "128", **_conv_defines(1, 2, 0)}), shapes[:4])
    # Taps and channels folded into one K (`fold`, the default where C is not a multiple of 8:
    # the C = 3 and 20 shapes of every build above): ResNet's stem (7x7, stride 2, pad 3), and
    # the folded form forced at any C (`-D fold=true`: C of 64, 128 and 72 take its aligned
    # instantiation, 8 columns of one tap per cp.async).
    t.add(Build("conv_7x7s2p3_f16", "conv2d", {"dtype": "f16", **_conv_defines(7, 2, 3)}), shapes)
    t.add(Build("conv_3x3s1_f16_fold", "conv2d", {"dtype": "f16", "fold": "true", **_conv_defines(3, 1, 1)}),
          shapes)
    t.add(Build("conv_3x3s1_f16_fold_sm80", "conv2d", {"dtype": "f16", "fold": "true", **_conv_defines(3, 1, 1)},
                target="sm_80"), shapes[3:5])
    # Split K (conv2d_splitk + conv2d_splitk_sum): 5 splits of 72 steps (3x3, C = 512) and of
    # fewer steps than splits (1x1 at C = 64: one step, four zero slabs; C = 3: one step), 3
    # splits, 64-row tiles, and the sm_80 path.
    for name, filt, knobs, target in CONV_SPLITK_BUILDS:
        k, stride, pad = CONV_FILTER_DEFINES[filt]
        t.add(Build(name, "conv2d_splitk", {"dtype": "f16", **knobs, **_conv_defines(k, stride, pad)},
                    target=target), shapes)
    # More 128-pixel tiles of output rows than a grid's y extent takes (65535): the persistent
    # launcher numbers the tiles in one int (130 x 256 x 256 pixels = 66560 rows of tiles);
    # a float32 reference, the float64 one being slow at 8.5 M pixels.
    t.cases.append(Case("conv_1x1s1_f16_n130h256w256c8f8", "conv_1x1s1_f16", _conv_shape(130, 256, 256, 8, 8),
                        "float32"))
    # The ordinary launch (`persist = false`) of some of these tiles; the persistent default
    # loads the next tile's first stages while the consumers store this one's (GPU run 56).
    for name, knobs in CONV_ORDINARY_BUILDS.items():
        k, stride, pad = CONV_FILTER_DEFINES[name.split("_")[1]]
        t.add(Build(name, "conv2d", {"dtype": "f16", **knobs, "persist": "false", **_conv_defines(k, stride, pad)},
                    target="sm_80" if "_sm80" in name else "sm_90a"), shapes[:4])


# ---- tests/gpu/ops/gather_rows.tl: a GEMM whose A rows come through a row table (issue 12) -----
# The A tile is a gathered copy (cp.async, prefetched by the pipeline); names start with
# gather_rows, so `--only '^gather_rows'` selects exactly these. (R, M, N, K): K a multiple of 64,
# a multiple of 8 only (the last K tile zero-filled past K), and 100 and 20 (rows of X not 16-byte
# aligned: the element-by-element instantiation); M past a tile and a single row.
GATHER_ROWS_SHAPES = [(1000, 1000, 264, 1024), (5000, 513, 256, 72), (300, 77, 130, 100), (64, 1, 128, 64),
                      (40, 200, 64, 20)]


def _add_gather_rows(t: _Tables) -> None:
    shapes = [(f"r{r}m{m}n{n}k{k}", {"R": r, "M": m, "N": n, "K": k}) for r, m, n, k in GATHER_ROWS_SHAPES]
    t.add(Build("gather_rows_f16", "gather_rows", {"dtype": "f16"}), shapes)
    t.add(Build("gather_rows_bf16", "gather_rows", {"dtype": "bf16"}), shapes[:3])
    t.add(Build("gather_rows_f16_sm80", "gather_rows", {"dtype": "f16"}, target="sm_80"), shapes)
    # Four stages: the wgmma group left in flight prefetches one iteration less far.
    t.add(Build("gather_rows_f16_s4", "gather_rows", {"dtype": "f16", "stages": "4"}), shapes[:3])


# ---- tests/gpu/ops/packed_i4.tl, packed_u4.tl: i4/u4 tensors as first-class dtypes (issue 12) ---
# Byte copies (16-byte cp.async into a pipelined shared tile, vectors into fragments and back),
# dequant_i4 of an i4 tile in shared memory and in registers, sign- and zero-extended element
# reads; exact (tolerance 0). Names start with packed_, so `--only '^packed_'` selects these.
# (N, K): rows past a tile; K off block_K with rows of an odd number of bytes (K = 150, 54: the
# element-by-element instantiation); K a multiple of 32 (16-byte rows); a big one.
PACKED_SHAPES = [(45, 150), (32, 128), (7, 54), (1000, 4096), (513, 2050)]


def _add_packed(t: _Tables) -> None:
    shapes = [(f"n{n}k{k}", {"N": n, "K": k}) for n, k in PACKED_SHAPES]
    t.add(Build("packed_i4_f16", "packed_i4", {"dtype": "f16"}), shapes, 0.0)
    t.add(Build("packed_i4_bf16_s3", "packed_i4", {"dtype": "bf16", "stages": "3", "block_K": "128"}), shapes, 0.0)
    t.add(Build("packed_i4_f16_sm80", "packed_i4", {"dtype": "f16"}, target="sm_80"), shapes, 0.0)
    t.add(Build("packed_u4_f16", "packed_u4", {"dtype": "f16"}), shapes, 0.0)
    t.add(Build("packed_u4_bf16", "packed_u4", {"dtype": "bf16"}), shapes[:3], 0.0)
    # dequant_i4 with zero points (GPTQ/AWQ): u4 and i4 weights, shared and register paths, the
    # fragment nibble by nibble with block_K 16; exact (the reference rounds as the kernel does).
    # K a multiple of the group: (45, 150) and (7, 54) become (45, 160) and (7, 64); rows of 20
    # bytes (K = 40) with the group of 8.
    zp_shapes = [(f"n{n}k{k}", {"N": n, "K": k}) for n, k in [(45, 160), (32, 128), (7, 64), (1000, 4096), (513, 2080)]]
    zp = {"group_size": "32", "zero_points": "true"}
    t.add(Build("packed_zp_u4_f16", "dequant_zp", {"dtype": "f16", "qtype": "u4", **zp}), zp_shapes, 0.0)
    t.add(Build("packed_zp_u4_bf16", "dequant_zp", {"dtype": "bf16", "qtype": "u4", "stages": "3", **zp}),
          zp_shapes, 0.0)
    t.add(Build("packed_zp_i4_f16_sm80", "dequant_zp", {"dtype": "f16", "qtype": "i4", **zp}, target="sm_80"),
          zp_shapes, 0.0)
    t.add(Build("packed_zp_i4_f16_k16", "dequant_zp", {"dtype": "f16", "qtype": "i4", "block_K": "16",
                                                       "group_size": "8", "zero_points": "true"}),
          zp_shapes[:3] + [("n45k40", {"N": 45, "K": 40})], 0.0)
    t.add(Build("packed_zp_u4_noz_bf16", "dequant_zp", {"dtype": "bf16", "qtype": "u4", "group_size": "32",
                                                         "zero_points": "false"}), zp_shapes[:3], 0.0)
    # Zero points packed as u4 (GPTQ/AWQ's storage), K / group_size even: shared and register
    # paths, f16 and bf16, and nibble by nibble (block_K 16, groups of 8).
    u4z_shapes = [(f"n{n}k{k}", {"N": n, "K": k}) for n, k in [(45, 128), (32, 128), (7, 64), (1000, 4096), (513, 2048)]]
    t.add(Build("packed_zp_u4z_f16", "dequant_zp", {"dtype": "f16", "qtype": "u4", "ztype": "u4", **zp}),
          u4z_shapes, 0.0)
    t.add(Build("packed_zp_u4z_i4_bf16_k16", "dequant_zp", {"dtype": "bf16", "qtype": "i4", "ztype": "u4",
                                                            "block_K": "16", "group_size": "8", "zero_points": "true"}),
          u4z_shapes[:3] + [("n45k48", {"N": 45, "K": 48})], 0.0)
    # Scales and zero points stored [K / group_size, N] (transpose_scales, GPTQ and AWQ's
    # orientation): zero points packed two per byte along N (N even) in f16, unpacked with i4
    # weights nibble by nibble in bf16 (block_K 16, groups of 8), and on sm_80.
    t_shapes = [(f"n{n}k{k}", {"N": n, "K": k}) for n, k in [(46, 128), (32, 96), (8, 64), (1000, 4096), (514, 2080)]]
    t.add(Build("packed_zp_t_u4z_f16", "dequant_zp", {"dtype": "f16", "qtype": "u4", "ztype": "u4", "tscales": "true",
                                                      **zp}), t_shapes, 0.0)
    t.add(Build("packed_zp_t_i4_bf16_k16", "dequant_zp", {"dtype": "bf16", "qtype": "i4", "block_K": "16",
                                                          "group_size": "8", "zero_points": "true", "tscales": "true"}),
          t_shapes[:3] + [("n45k48", {"N": 45, "K": 48})], 0.0)
    t.add(Build("packed_zp_t_u4z_f16_sm80", "dequant_zp", {"dtype": "f16", "qtype": "u4", "ztype": "u4",
                                                           "tscales": "true", **zp}, target="sm_80"), t_shapes[:3], 0.0)
    # f4e2m1 (FP4) weights: the scaled conversion in f16 and bf16 (groups of 32 as MXFP4, of 16
    # as NVFP4), unscaled, on sm_80, and nibble by nibble (block_K 16); element reads; exact.
    fp4 = {"group_size": "32", "scaled": "true"}
    t.add(Build("packed_fp4_f16", "dequant_fp4", {"dtype": "f16", **fp4}), zp_shapes, 0.0)
    t.add(Build("packed_fp4_bf16_g16", "dequant_fp4", {"dtype": "bf16", "group_size": "16", "scaled": "true",
                                                       "stages": "3"}), zp_shapes, 0.0)
    t.add(Build("packed_fp4_f16_noscale", "dequant_fp4", {"dtype": "f16", "group_size": "32", "scaled": "false"}),
          zp_shapes[:3], 0.0)
    t.add(Build("packed_fp4_bf16_sm80", "dequant_fp4", {"dtype": "bf16", **fp4}, target="sm_80"), zp_shapes, 0.0)
    t.add(Build("packed_fp4_f16_k16", "dequant_fp4", {"dtype": "f16", "block_K": "16", "group_size": "8",
                                                      "scaled": "true"}),
          zp_shapes[:3] + [("n45k40", {"N": 45, "K": 40})], 0.0)


# ResNet-50's convolutions at batch 32: (build, N, H, W, C, F).
CONV_BENCH_SHAPES = [("conv_3x3s1_f16", 32, 56, 56, 64, 64), ("conv_3x3s1_f16", 32, 28, 28, 128, 128),
                     ("conv_3x3s1_f16", 32, 14, 14, 256, 256), ("conv_3x3s1_f16", 32, 7, 7, 512, 512),
                     ("conv_1x1s1_f16", 32, 56, 56, 256, 64), ("conv_1x1s1_f16", 32, 56, 56, 64, 256),
                     ("conv_3x3s2_f16", 32, 56, 56, 128, 128), ("conv_1x1s2_f16", 32, 56, 56, 256, 512)]


CONV_FILTER_DEFINES = {label: (k, stride, pad) for label, k, stride, pad in CONV_FILTERS}
# Split-K conv2d builds: (name, filter, knobs, target). Knobs for one kernel only are qualified.
CONV_SPLITK_BUILDS = [
    ("conv_3x3s1_f16_sk5", "3x3s1", {"splits": "5"}, "sm_90a"),
    ("conv_3x3s1_f16_sk4", "3x3s1", {"splits": "4"}, "sm_90a"),
    ("conv_3x3s1_f16_sk3", "3x3s1", {"splits": "3"}, "sm_90a"),
    ("conv_1x1s1_f16_sk5", "1x1s1", {"splits": "5"}, "sm_90a"),
    ("conv_3x3s1_f16_sk10", "3x3s1", {"splits": "10"}, "sm_90a"),
    ("conv_3x3s1_f16_m64_sk5", "3x3s1", {"splits": "5", "conv2d_splitk.block_M": "64",
                                          "conv2d_splitk.threads": "128"}, "sm_90a"),
    ("conv_3x3s1_f16_sk5_o", "3x3s1", {"splits": "5", "persist": "false"}, "sm_90a"),
    ("conv_3x3s1_f16_sk5_sm80", "3x3s1", {"splits": "5"}, "sm_80"),
]
CONV_SPLITK_BENCH_SHAPES = [(32, 7, 7, 512, 512), (4, 7, 7, 512, 512), (4, 14, 14, 256, 256)]
# conv2d on the ordinary launch (`persist = false`; the sample is persistent by default):
# name -> knobs besides persist = false and the filter's defines.
CONV_ORDINARY_BUILDS = {
    "conv_3x3s1_f16_o": {}, "conv_3x3s1_f16_n64_o": {"block_N": "64"},
    "conv_1x1s1_f16_n64_o": {"block_N": "64"}, "conv_1x1s1_f16_n256_o": {"block_N": "256"},
    "conv_3x3s2_f16_o": {}, "conv_1x1s2_f16_m64_o": {"block_M": "64", "threads": "128"},
    "conv_3x3s1_f16_sm80_o": {},
}


# Channel counts that are not multiples of 8 (the folded K: `fold`): the first layer of an image
# network (C = 3, 3x3 at stride 1 and 2, ResNet's 7x7 stem) and odd widths of 20-100 channels;
# then small multiples of 8 with the folded form forced beside the default.
CONV_ODD_C_BENCH_SHAPES = [("conv_3x3s1_f16", 8, 224, 224, 3, 64), ("conv_3x3s2_f16", 8, 224, 224, 3, 64),
                           ("conv_7x7s2p3_f16", 8, 224, 224, 3, 64), ("conv_7x7s2p3_f16", 32, 224, 224, 3, 64),
                           ("conv_3x3s1_f16", 8, 56, 56, 20, 64), ("conv_3x3s1_f16", 8, 56, 56, 36, 128),
                           ("conv_3x3s1_f16", 8, 28, 28, 100, 128), ("conv_1x1s1_f16", 8, 56, 56, 20, 64),
                           ("conv_1x1s1_f16", 8, 28, 28, 100, 128)]
CONV_FOLD_BENCH_SHAPES = [(8, 112, 112, 8, 64), (8, 112, 112, 16, 64), (8, 56, 56, 32, 64), (8, 56, 56, 64, 64)]


def _conv2d_odd_c_bench_items() -> list:
    items = [BenchItem(f"{build}_{_conv_label(n, h, w, c, f)}", build, _conv_shape(n, h, w, c, f), "fold (C % 8 != 0)")
             for build, n, h, w, c, f in CONV_ODD_C_BENCH_SHAPES]
    for n, h, w, c, f in CONV_FOLD_BENCH_SHAPES:
        items.append(BenchItem(f"conv_3x3s1_f16_{_conv_label(n, h, w, c, f)}", "conv_3x3s1_f16",
                               _conv_shape(n, h, w, c, f)))
        items.append(BenchItem(f"conv_3x3s1_f16_fold_{_conv_label(n, h, w, c, f)}", "conv_3x3s1_f16_fold",
                               _conv_shape(n, h, w, c, f), "-D fold=true"))
    return items


def _conv2d_bench_items() -> list:
    """Against cuDNN (torch.nn.functional.conv2d on channels_last f16 tensors), TFLOP/s of
    2 * N * P * Q * F * kh * kw * C."""
    items = [BenchItem(f"{build}_{_conv_label(n, h, w, c, f)}", build, _conv_shape(n, h, w, c, f))
             for build, n, h, w, c, f in CONV_BENCH_SHAPES]
    items += [BenchItem(f"{build}_fixed_{_conv_label(n, h, w, c, f)}", f"{build}_fixed", _conv_shape(n, h, w, c, f),
                        "the defaults before: 128 x 128 x 64 tiles, 3 stages")
              for build, n, h, w, c, f in CONV_BENCH_SHAPES]
    # The size-dependent defaults off batch 32: the 7x7x512 layer at batches 1 to 64 (its
    # 128-channel steps stop at 32), 14x14x256 at 16.
    for n, h, w, c, f in ((1, 7, 7, 512, 512), (8, 7, 7, 512, 512), (64, 7, 7, 512, 512), (16, 14, 14, 256, 256)):
        for build in ("conv_3x3s1_f16", "conv_3x3s1_f16_fixed"):
            items.append(BenchItem(f"{build}_{_conv_label(n, h, w, c, f)}", build, _conv_shape(n, h, w, c, f)))
    items += [BenchItem(f"{build}_n64_{_conv_label(n, h, w, c, f)}", f"{build}_n64", _conv_shape(n, h, w, c, f),
                        "-D block_N=64")
              for build, n, h, w, c, f in CONV_BENCH_SHAPES if f == 64]
    variants = {(32, 7, 7, 512, 512): ("conv_3x3s1_f16_m64", "-D block_M=64 -D threads=128"),
                (32, 14, 14, 256, 256): ("conv_3x3s1_f16_m64", "-D block_M=64 -D threads=128"),
                (32, 56, 56, 64, 256): ("conv_1x1s1_f16_n256", "-D block_N=256"),
                (32, 56, 56, 256, 512): ("conv_1x1s2_f16_m64", "-D block_M=64 -D threads=128")}
    for _, n, h, w, c, f in CONV_BENCH_SHAPES:
        if (n, h, w, c, f) in variants:
            build, note = variants[(n, h, w, c, f)]
            items.append(BenchItem(f"{build}_{_conv_label(n, h, w, c, f)}", build,
                                   _conv_shape(n, h, w, c, f), note))
    # Split K on the 7x7x512 layer (52 tiles of 128 x 128 for 132 SMs at batch 32), and at
    # batch 4 on it and the 14x14x256 layer (8 and 14 tiles), beside the one-launch kernel.
    for n, h, w, c, f in CONV_SPLITK_BENCH_SHAPES:
        label, shape = _conv_label(n, h, w, c, f), _conv_shape(n, h, w, c, f)
        if n != 32:
            items.append(BenchItem(f"conv_3x3s1_f16_{label}", "conv_3x3s1_f16", shape))
            items.append(BenchItem(f"conv_3x3s1_f16_m64_{label}", "conv_3x3s1_f16_m64", shape,
                                   "-D block_M=64 -D threads=128"))
        for name, filt, knobs, target in CONV_SPLITK_BUILDS:
            if filt == "3x3s1" and target == "sm_90a":
                note = " ".join(f"-D {a}={b}" for a, b in knobs.items())
                items.append(BenchItem(f"{name}_{label}", name, shape, note))
    # The ordinary launch beside them, on the layers of their filter.
    for build, n, h, w, c, f in CONV_BENCH_SHAPES:
        for name, knobs in CONV_ORDINARY_BUILDS.items():
            if not name.startswith(build + "_") or "_sm80" in name:
                continue
            if ("block_N" in knobs and knobs["block_N"] == "64") != (f == 64):
                continue
            note = " ".join(f"-D {a}={b}" for a, b in knobs.items()) + " -D persist=false"
            items.append(BenchItem(f"{name}_{_conv_label(n, h, w, c, f)}", name, _conv_shape(n, h, w, c, f), note))
    return items


# gemm on the other tensor-core input types (issue 12): (label, M, N, K), partial tiles in M and
# N, a single row, K a multiple of every instruction's K (32).
DTYPE_GEMM_SHAPES = [("1000x1000x1024", 1000, 1000, 1024), ("77x264x160", 77, 264, 160),
                     ("1x4096x1024", 1, 4096, 1024)]
# dtype label -> (-D values, tolerance, the target of the build on the mma.sync path).
# i8 accumulates exactly in i32 (the reference is exact: tolerance 0); tf32 rounds each input to
# a 10-bit significand (2^-11 relative); fp8 inputs are drawn as fp8 values, so the reference
# multiplies exactly what the kernel does and only the f32 accumulation and the f16 output
# round.
DTYPE_GEMMS = {"i8": ({"dtype": "i8", "accum": "i32", "out_dtype": "i32"}, 0.0, "sm_80"),
               "tf32": ({"dtype": "f32", "accum": "f32"}, 2e-3, "sm_80"),
               "e4m3": ({"dtype": "f8e4m3", "accum": "f32", "out_dtype": "f16"}, 1e-2, "sm_89"),
               "e5m2": ({"dtype": "f8e5m2", "accum": "f32", "out_dtype": "f32"}, 1e-2, "sm_89")}


def _add_gemm_dtypes(t: _Tables) -> None:
    """Build names dtypes_gemm_<dt>[_<target>] (the NN sample: B [K, N], read element-wise
    for these types), dtypes_gemm_nt_<dt>[_<target>] (tests/gpu/ops/gemm_nt.tl, B [N, K]:
    both operands through ldmatrix) and dtypes_gemm_annotated_<dt>_<variant>[_<target>] (an
    annotated A); `--only '^dtypes_'` selects them."""
    shapes = [(label, {"M": m, "N": n, "K": k}) for label, m, n, k in DTYPE_GEMM_SHAPES]
    for dt, (defines, tolerance, warp_target) in DTYPE_GEMMS.items():
        for prefix, family in (("dtypes_gemm", "gemm"), ("dtypes_gemm_nt", "gemm_nt")):
            knobs = {**defines, "policy": "square"}
            if dt != "e5m2":  # e5m2 differs from e4m3 only in the instruction's type: one build
                t.add(Build(f"{prefix}_{dt}", family, knobs), shapes, tolerance)
            t.add(Build(f"{prefix}_{dt}_{warp_target.replace('_', '')}", family, knobs,
                        target=warp_target), shapes, tolerance)
    # On sm_90a the [N, K] builds above run on wgmma.m64nNk32 (8-bit operands K-major, bulk
    # copies of bytes, warp-specialized). dtypes_wgmma8_*: the other swizzles (64- and 128-byte rows of
    # K), two warpgroups, 256-column tiles, e5m2, K off the 64- and 128-deep tiles (the bulk
    # copy zero-fills past K), beside a 4096^3 case whose time the checks report; `_sm89` builds
    # of the same knobs run mma.sync m16n8k32 on the same GPU for comparison.
    wgmma8_shapes = shapes + _mnk_shapes([(1000, 1000, 1000), (4096, 4096, 4096)])
    for name, dt, knobs in (("i8_k64_wg2", "i8", {"block_K": "64", "threads": "256"}),
                            ("e4m3_k128", "e4m3", {"block_K": "128"}),
                            ("e5m2_k64_wg2", "e5m2", {"block_K": "64", "threads": "256"}),
                            ("e4m3_n256", "e4m3", {"block_N": "256", "block_K": "64", "threads": "256",
                                                   "stages": "4"}),
                            ("e4m3_n256k128", "e4m3", {"block_N": "256", "block_K": "128", "threads": "256",
                                                       "stages": "4"}),
                            ("i8_n256k128", "i8", {"block_N": "256", "block_K": "128", "threads": "256",
                                                   "stages": "4"})):
        defines, tolerance, _ = DTYPE_GEMMS[dt]
        for target in ("", "sm_89"):
            if target and (dt == "i8" or "k128" in name and "n256" in name):
                continue
            t.add(Build(f"dtypes_wgmma8_{name}" + ("_sm89" if target else ""), "gemm_nt",
                        {**defines, **knobs, "policy": "full_row"}, target=target), wgmma8_shapes, tolerance)
    # samples/gemm_fp8.tl (row-wise scales, bf16 out): its defaults (128x256x128, two consumer
    # warpgroups, bulk copies), e5m2 into f16 with 64-deep tiles and one warpgroup, the sm_89
    # lowering (mma.sync); K = 1000 leaves rows unaligned (the consumers' copies), K = 160 and
    # 1000 end inside a tile, 77 and 1 rows and 264 columns inside one.
    fp8_shapes = _mnk_shapes([(1000, 1000, 1024), (77, 264, 160), (1, 4096, 1024), (1000, 1000, 1000),
                              (4096, 4096, 4096)])
    t.add(Build("dtypes_gemm_fp8", "gemm_fp8", {"dtype": "f8e4m3"}), fp8_shapes)
    t.add(Build("dtypes_gemm_fp8_e5m2_k64", "gemm_fp8", {"dtype": "f8e5m2", "out_dtype": "f16", "block_M": "64",
                                                         "block_N": "128", "block_K": "64", "threads": "128"}),
          fp8_shapes)
    # Its decode kernel (C^T per block, 64 weight rows by 16 rows of A): rows of A off the 16,
    # N off the 64, K off the 256-deep tiles and off 16 bytes; two warpgroups (128 weight rows).
    decode_shapes = _mnk_shapes([(1, 4096, 1024), (16, 1000, 1024), (37, 264, 160), (5, 1000, 1000),
                                 (64, 8192, 8192)])
    t.add(Build("dtypes_gemm_fp8_decode", "gemm_fp8_decode", {"dtype": "f8e4m3"}), decode_shapes)
    t.add(Build("dtypes_gemm_fp8_decode_n128", "gemm_fp8_decode",
                {"dtype": "f8e4m3", "gemm_fp8_decode.block_N": "128", "gemm_fp8_decode.threads": "256",
                 "gemm_fp8_decode.block_M": "32"}), decode_shapes)
    t.add(Build("dtypes_gemm_fp8_sm89", "gemm_fp8", {"dtype": "f8e4m3", "block_N": "128", "threads": "128",
                                                     "stages": "2"}, target="sm_89"), fp8_shapes[:4])
    # An annotated A (tests/gpu/ops/gemm_annotated.tl: elem, rot) read element by element through
    # its layout, beside a [K, N] B gathered from its swizzle: both element paths of tl::gemm on
    # every input type; partial tiles in M, N and K (the annotated shapes).
    annotated_shapes = [("257x1000x999", {"M": 257, "N": 1000, "K": 999}),
                        ("130x70x40", {"M": 130, "N": 70, "K": 40})]
    for dt, (defines, tolerance, warp_target) in DTYPE_GEMMS.items():
        for variant, target in (("elem", ""), ("rot", ""), ("elem", warp_target)):
            if dt == "e5m2" and not target:
                continue
            name = f"dtypes_gemm_annotated_{dt}_{variant}" + (f"_{target.replace('_', '')}" if target else "")
            t.add(Build(name, "gemm_annotated", {**defines, variant: "1"}, target=target), annotated_shapes,
                  tolerance)


# ---- samples/fused_moe.tl and W4A16 at decode and prefill sizes (issue 12) ----------------------
# Build, case and bench item names start with moe_ (`--only '^moe_'`) and w4a16_ (`--only
# '^w4a16_'`).

# (T, K, E, N): one token (2 of 8 experts, the others get no block), a decode batch, a prefill
# with whole tiles, N and K off the tiles (K a multiple of 8: 16-byte gathers), K = 100 (the
# element-by-element instantiation), topk = E (every token in every expert), many experts with
# few tokens each.
MOE_SHAPES = [(1, 256, 8, 512), (16, 1024, 8, 1000), (512, 512, 8, 384), (333, 520, 8, 264),
              (77, 100, 4, 130), (40, 72, 2, 200), (5, 136, 64, 96)]
# The tiles of the builds: the default (block_M = 64: one warpgroup's wgmma rows), decode tiles
# (block_M = 16: mma.sync, as vLLM's small-batch configurations), prefill tiles (128 x 256,
# two warpgroups).
MOE_TILES = {"": {},
             "_m16": {"block_M": "16", "block_N": "64", "block_K": "128", "threads": "128"},
             "_m128": {"block_M": "128", "block_N": "256", "block_K": "64", "stages": "3",
                       "threads": "256"}}


def _moe_build(name: str, tiles: str, dtype: str = "f16", topk: int = 2, weighted: bool = False,
               target: str = "") -> Build:
    knobs = {"dtype": dtype, "topk": str(topk), "mul_routed_weight": str(weighted).lower(),
             "block_M": "64", **MOE_TILES[tiles]}
    return Build(name, "fused_moe", knobs, target=target)


def _add_fused_moe(t: _Tables) -> None:
    shapes = [(f"t{tk}k{k}e{e}n{n}", {"T": tk, "K": k, "E": e, "N": n}) for tk, k, e, n in MOE_SHAPES]
    for tiles in MOE_TILES:
        t.add(_moe_build(f"moe_f16{tiles}", tiles), shapes)
    t.add(_moe_build("moe_bf16", "", dtype="bf16"), shapes[:4])
    # The down projection's form: each row times its routing weight; top-4 routing (a slot is
    # t * 4 + j); the sm_80 path (mma.sync fed by the same gathers).
    t.add(_moe_build("moe_f16_weighted", "", weighted=True), shapes)
    t.add(_moe_build("moe_f16_m16_weighted", "_m16", weighted=True), shapes[:4])
    t.add(_moe_build("moe_f16_top4", "", topk=4), [s for s in shapes if s[1]["E"] >= 4])
    t.add(_moe_build("moe_f16_sm80", "", target="sm_80"), shapes)


# W4A16 at the issue's sizes: M = 1, 16, 77 and 4096, N off the tiles, K off block_K (group 64,
# so K = 1088 = 17 groups leaves half a 128-wide tile of K).
W4A16_SHAPES = [(1, 4096, 4096), (16, 4096, 4096), (77, 1000, 1152), (4096, 1024, 2048), (1, 1000, 1152)]
W4A16_SHAPES_G64 = W4A16_SHAPES + [(16, 264, 1088), (77, 1000, 1088)]
# A GEMV-like variant for decode sizes: 16 rows (mma.sync), 64 weight rows per block so that a
# [4096, K] weight still spreads over 64 blocks, deeper pipeline over K.
W4A16_SMALL_M = {"block_M": "16", "block_N": "64", "block_K": "128", "stages": "4", "threads": "128"}


# Decode tiles with more weight bytes per step (dequant_i4 unpacks them fast enough to stream):
# 16 rows, 32 weight rows and 512 columns of K per block (a [4096, K] weight gives 128 blocks,
# 8 KiB of packed weights per stage), or 64 x 256 with four stages. The shapes: M = 1, 3, 16 and
# 5, N off the tiles, K a multiple of the group but not of block_K (1152 = 2.25 tiles of 512,
# 640 = 2.5 tiles of 256), and the issue's 1x4096x14336.
W4A16_DECODE = {"_dec": {"block_M": "16", "block_N": "32", "block_K": "512", "stages": "3", "threads": "128"},
                "_dec256": {"block_M": "16", "block_N": "64", "block_K": "256", "stages": "4", "threads": "128"}}
W4A16_DECODE_SHAPES = [(1, 4096, 4096), (3, 1000, 1152), (16, 4096, 4096), (5, 264, 640), (1, 14336, 1152),
                       (16, 1000, 4224)]


def _mnk_shapes(sizes: list) -> list:
    """(M, N, K) triples as (label "MxNxK", shape) pairs."""
    return [(f"{m}x{n}x{k}", {"M": m, "N": n, "K": k}) for m, n, k in sizes]


# Prefill tiles timed beside the defaults at M = 4096 (the dequantization of a weight tile is
# shared by more rows of A with block_M = 256; block_N = 256 shares the A tile; three stages).
W4A16_PREFILL = {"_m256": {"block_M": "256"}, "_n256": {"block_N": "256"}, "_s3": {"stages": "3"}}


def _add_w4a16_prefill(t: _Tables) -> None:
    for tiles, knobs in W4A16_PREFILL.items():
        t.add(Build(f"w4a16_f16_g128{tiles}", "dequant_w4a16", {"dtype": "f16", "group_size": "128", **knobs}),
              _mnk_shapes([(4096, 4096, 4096), (257, 1000, 1152)]))


# The W4A16 GEMM with the weights dequantized into the tensor cores' A operand in registers
# (samples/dequant_gemm_w4a16_regs.tl: wgmma with A in registers on
# sm_90a, C^T per tile): the defaults (256 activation rows x 128 weight rows x 64 columns of K,
# 4 stages) at the sample's shapes and issue 12's, bf16, groups of 64 (K off the tiles) and of
# 32 with two groups per tile, the sm_80 lowering (mma.sync, A in registers), and the tiles
# timed beside them: 128 activation rows, 3 stages, three and four warpgroups (192 and 256
# weight rows), and a decode tile. Build names start with w4a16_wreg_.
# The sample's scales are [K / group_size, N] (tscales, its default), which makes the loop
# warp-specialized on sm_90a (every tile a bulk copy; the packed weights and the scales
# unswizzled); `_sn` builds take them [N, K / group_size] (tscales = false: the loop on cp.async).
W4A16_WREG_TILES = {"_m128": {"block_M": "128"}, "_s3": {"stages": "3"},
                    "_sn": {"tscales": "false"}, "_sn_m128": {"tscales": "false", "block_M": "128"},
                    "_n192": {"block_N": "192", "threads": "384", "block_M": "128"},
                    "_n256": {"block_N": "256", "threads": "512", "block_M": "128"},
                    "_dec32": {"block_M": "32", "block_N": "64", "block_K": "128", "stages": "4", "threads": "128"}}


def _add_w4a16_wreg(t: _Tables) -> None:
    # N = 1003 makes the scales' rows unaligned (2006 bytes): the launcher then takes the
    # consumers' copies (the unaligned instantiation) instead of the bulk ones.
    plain = [(1024, 1024, 1024), (257, 1000, 1152), (3, 1003, 1152)]
    t.add(Build("w4a16_wreg_f16_g128", "w4a16_wreg", {"dtype": "f16", "group_size": "128"}),
          _mnk_shapes(plain + W4A16_SHAPES))
    t.add(Build("w4a16_wreg_bf16_g128", "w4a16_wreg", {"dtype": "bf16", "group_size": "128"}),
          _mnk_shapes(plain))
    t.add(Build("w4a16_wreg_f16_g64", "w4a16_wreg", {"dtype": "f16", "group_size": "64"}),
          _mnk_shapes(W4A16_SHAPES_G64[-3:] + [(77, 264, 1024)]))
    t.add(Build("w4a16_wreg_f16_g32_k128", "w4a16_wreg", {"dtype": "f16", "group_size": "32", "block_K": "128",
                                                          "stages": "2"}),
          _mnk_shapes([(77, 1000, 1152), (16, 264, 1088), (3, 1003, 1152)]))
    t.add(Build("w4a16_wreg_f16_g128_sm80", "w4a16_wreg", {"dtype": "f16", "group_size": "128"}, target="sm_80"),
          _mnk_shapes(plain))
    # Scales [N, K / group_size] (tscales = false): bf16 with groups of 64 (one group per tile),
    # groups of 32 with four per 128-deep tile, f16 on sm_80.
    sn_shapes = _mnk_shapes([(257, 1000, 1152), (3, 1003, 1152), (77, 264, 1024), (1, 4096, 4096)])
    t.add(Build("w4a16_wreg_bf16_g64_sn", "w4a16_wreg", {"dtype": "bf16", "group_size": "64", "tscales": "false"}),
          sn_shapes)
    t.add(Build("w4a16_wreg_f16_g32_k128_sn", "w4a16_wreg", {"dtype": "f16", "group_size": "32", "block_K": "128",
                                                             "stages": "2", "tscales": "false"}), sn_shapes)
    t.add(Build("w4a16_wreg_f16_g128_sn_sm80", "w4a16_wreg", {"dtype": "f16", "group_size": "128", "tscales": "false"},
                target="sm_80"), sn_shapes)
    for tiles, knobs in W4A16_WREG_TILES.items():
        t.add(Build(f"w4a16_wreg_f16_g128{tiles}", "w4a16_wreg", {"dtype": "f16", "group_size": "128", **knobs}),
              _mnk_shapes([(4096, 4096, 4096), (257, 1000, 1152), (3, 1000, 1152)]))


def _add_w4a16_small_m(t: _Tables) -> None:
    """The GEMV-like tiles (W4A16_SMALL_M) at every size; the sample's defaults run them in
    _add_samples."""
    t.add(Build("w4a16_f16_g128_m16", "dequant_w4a16",
                {"dtype": "f16", "group_size": "128", **W4A16_SMALL_M}), _mnk_shapes(W4A16_SHAPES))
    t.add(Build("w4a16_bf16_g128_m16", "dequant_w4a16",
                {"dtype": "bf16", "group_size": "128", **W4A16_SMALL_M}), _mnk_shapes(W4A16_SHAPES[:3]))
    t.add(Build("w4a16_f16_g64_m16", "dequant_w4a16",
                {"dtype": "f16", "group_size": "64", **W4A16_SMALL_M}), _mnk_shapes(W4A16_SHAPES_G64))
    for tiles, knobs in W4A16_DECODE.items():
        t.add(Build(f"w4a16_f16_g128{tiles}", "dequant_w4a16", {"dtype": "f16", "group_size": "128", **knobs}),
              _mnk_shapes(W4A16_DECODE_SHAPES))
    t.add(Build("w4a16_bf16_g128_dec", "dequant_w4a16", {"dtype": "bf16", "group_size": "128",
                                                         **W4A16_DECODE["_dec"]}),
          _mnk_shapes(W4A16_DECODE_SHAPES[:4]))
    t.add(Build("w4a16_f16_g32_dec", "dequant_w4a16", {"dtype": "f16", "group_size": "32",
                                                       **W4A16_DECODE["_dec"]}),
          _mnk_shapes(W4A16_DECODE_SHAPES[:4]))


# The decode GEMV (samples/dequant_gemv_w4a16.tl) on the same weights: M = 1, 3 and 16, N off
# its 8-row blocks (4097, 1000), the issue's 14336 x 4096 and 4096 x 14336, and K a multiple of
# the group but not of block_K = 1024 (1152 = 1.125 steps, 4224 = 4.125; 640 at group 64 and
# 544 at group 32 off block_K = 512). Build and case names start with w4a16_gemv_ (`--only
# '^w4a16_gemv_'`).
W4A16_GEMV_SHAPES = [(1, 4096, 4096), (1, 14336, 4096), (1, 4096, 14336), (3, 4097, 1152), (16, 4096, 4096),
                     (16, 1000, 4224), (1, 4097, 4224)]


W4A16_GEMV_VARIANTS = {"_k512": {"block_K": "512"}, "_s1": {"stages": "1"}}


def _add_gemv_builds(t: _Tables, prefix: str, family: str, shapes: list, groups: list, extras: list,
                     variants: dict, variant_shapes: list) -> None:
    """The builds both W4A16 GEMVs share: f16 and bf16 at groups of 128 (the defaults), the
    `groups` entries (suffix, knobs, shapes) at other groups and steps, the sm_80 lowering, the
    `extras` (name suffix, knobs, shapes) and the `variants` timed beside the defaults."""
    def add(suffix, knobs, build_shapes, target=""):
        t.add(Build(prefix + suffix, family, {"dtype": "f16", "group_size": "128", **knobs}, target=target),
              _mnk_shapes(build_shapes))
    add("_f16_g128", {}, shapes)
    add("_bf16_g128", {"dtype": "bf16"}, shapes[:1] + shapes[3:6])
    for suffix, knobs, build_shapes in groups:
        add(suffix, knobs, build_shapes)
    add("_f16_g128_sm80", {}, shapes[3:6], target="sm_80")
    for suffix, knobs, build_shapes in extras:
        add(suffix, knobs, build_shapes)
    for suffix, knobs in variants.items():
        add("_f16_g128" + suffix, knobs, variant_shapes)


def _add_w4a16_gemv(t: _Tables) -> None:
    # Four weight rows per block (_n4): twice the blocks (1024 at N = 4096, where the defaults
    # give 512, under 4 per SM), half the bytes per thread and step. The A/B of the prefetching
    # loop's knobs: 512 columns per step (half the registers of the weights and of the
    # per-register sums), and stages = 1 (the scales and A copied in their own step, without the
    # cp.async prefetch; B_next still in flight).
    _add_gemv_builds(t, "w4a16_gemv", "dequant_gemv_w4a16", W4A16_GEMV_SHAPES,
                     [("_f16_g64_k512", {"group_size": "64", "block_K": "512"},
                       [(1, 4097, 640), (16, 264, 1088), (3, 4096, 4096)]),
                      ("_f16_g32_k512", {"group_size": "32", "block_K": "512"}, [(1, 1000, 544), (16, 4097, 1152)])],
                     [("_f16_g128_n4", {"block_N": "4"},
                       [W4A16_GEMV_SHAPES[2], W4A16_GEMV_SHAPES[3], W4A16_GEMV_SHAPES[5]])],
                     W4A16_GEMV_VARIANTS, [(1, 4096, 4096), (3, 4097, 1152), (16, 1000, 4224), (1, 4097, 640)])


# The tensor-core GEMV (samples/dequant_gemv_w4a16_tc.tl) on the same weights: M = 1, 3, 16 and
# 17 (two row tiles), N off its 32-row blocks (4097, 1000), the issue's 14336 x 4096 and 4096 x
# 14336, K a multiple of the group but not of block_K = 1024 (1152, 4224; 640 at group 64 and
# 544 at group 32), and 33 rows of A over three row tiles. Build and case names start with
# w4a16_tc_.
W4A16_TC_SHAPES = [(1, 4096, 4096), (1, 14336, 4096), (1, 4096, 14336), (3, 4097, 1152), (16, 4096, 4096),
                   (17, 1000, 4224), (1, 4097, 4224)]


# Other tiles, timed beside the defaults: 512 columns per step (fewer registers, more blocks
# per SM), 8 warps (64 weight rows per block).
W4A16_TC_VARIANTS = {"_k512": {"block_K": "512"}, "_t256": {"threads": "256"},
                     "_tn64k256": {"block_N": "64", "block_K": "256"},
                     "_tn64k256m8": {"block_N": "64", "block_K": "256", "block_M": "8"},
                     "_tn32t64k256": {"threads": "64", "block_N": "32", "block_K": "256"},
                     "_tn64k512": {"block_N": "64", "block_K": "512"},
                     "_tn32t64k512m8": {"threads": "64", "block_N": "32", "block_K": "512", "block_M": "8"},
                     # Fewer weight rows than 16 per warp: the warps split K (2, 4, 8 groups).
                     "_s2n16t64k512m8": {"threads": "64", "block_N": "16", "block_K": "512", "block_M": "8"},
                     "_s4n16m8": {"block_N": "16", "block_M": "8"},
                     "_s8n16t256k2048m8": {"threads": "256", "block_N": "16", "block_K": "2048", "block_M": "8"}}


def _add_w4a16_tc(t: _Tables) -> None:
    _add_gemv_builds(t, "w4a16_tc", "dequant_gemv_w4a16_tc", W4A16_TC_SHAPES,
                     [("_f16_g64_k256", {"group_size": "64", "block_K": "256"},
                       [(1, 4097, 640), (16, 264, 1088), (3, 4096, 4096)]),
                      ("_f16_g32_k128", {"group_size": "32", "block_K": "128"},
                       [(1, 1000, 544), (16, 4097, 1152), (33, 72, 96)])],
                     # The warps split K: untransposed over 4 groups of one warp (8 weight rows),
                     # transposed over 4 groups of two warps in bf16 at groups of 32.
                     [("_f16_g128_s4n8", {"block_N": "8"}, [(1, 4097, 4224), (17, 1000, 4224), (3, 72, 1152)]),
                      ("_bf16_g32_s4n32t256k256", {"dtype": "bf16", "group_size": "32", "threads": "256",
                                                   "block_N": "32", "block_K": "256"},
                       [(16, 4097, 1152), (33, 72, 96), (1, 1000, 544)])],
                     W4A16_TC_VARIANTS, [(1, 4096, 4096), (3, 4097, 1152), (17, 1000, 4224), (1, 4097, 640)])


# The staged tensor-core GEMV (dequant_gemv_w4a16_tcs: the weights through a cp.async ring in
# shared memory) on the same shapes; its defaults depend on N (dispatched at launch). Variants:
# persistent, and each default tile at every N (GPU runs 155-157 swept the others).
W4A16_TCS_VARIANTS = {"_p": {"persist": "true"},
                      "_n16t128k1024s3": {"threads": "128", "block_N": "16", "block_K": "1024", "stages": "3"},
                      "_n64t128k512s3": {"threads": "128", "block_N": "64", "block_K": "512", "stages": "3"},
                      "_n32t256k1024s4": {"threads": "256", "block_N": "32", "block_K": "1024", "stages": "4"}}


def _add_w4a16_tcs(t: _Tables) -> None:
    _add_gemv_builds(t, "w4a16_tcs", "dequant_gemv_w4a16_tcs", W4A16_TC_SHAPES,
                     [("_f16_g64", {"group_size": "64"}, [(1, 4097, 640), (16, 264, 1088), (3, 4096, 4096)]),
                      ("_f16_g32_k128", {"group_size": "32", "block_K": "128"},
                       [(1, 1000, 544), (16, 4097, 1152), (33, 72, 96)])],
                     [("_bf16_g32_m16n32t128k256", {"dtype": "bf16", "group_size": "32", "threads": "128",
                                                    "block_M": "16", "block_N": "32", "block_K": "256"},
                       [(16, 4097, 1152), (33, 72, 96), (1, 1000, 544)])],
                     W4A16_TCS_VARIANTS, [(1, 4096, 4096), (3, 4097, 1152), (17, 1000, 4224), (1, 4097, 640)])


# ---- samples/chunk_gated_delta.tl: chunk gated delta net forward (issue 12) --------------------
# Build, case and bench item names start with gdn_ (`--only '^gdn_'`). A case runs both kernels
# as one operation and compares O with the float64 recurrence (not the chunked algorithm).

# (batch, heads, seq_len): one chunk, ragged lengths (1000, 2047, 130: a partial last chunk),
# a long sequence (4096: 64 chunks of state carried), a few (batch, head) pairs.
GDN_SHAPES = [(1, 2, 64), (2, 3, 1000), (1, 4, 2047), (2, 2, 4096), (3, 1, 130)]


def _gdn_shape(batch, heads, seq, d) -> dict:
    return {"batch": batch, "heads": heads, "seq_len": seq, "dk": d, "dv": d}


# Other tiles of the second kernel the bench items time beside the defaults (block_V = 64: two
# blocks per (batch, head) at dv = 128; 2 stages, one stage). The sequential chunk loop is
# latency-bound, so more blocks beat wider ones: block_V = 32 (the default since run 92) has
# four blocks per (batch, head) at dv = 128 and half the state's registers of block_V = 64
# (B = 1, H = 32 gives only 64 blocks of those); one stage fits more blocks per SM.
GDN_VARIANTS = {"_v64": {"gated_delta_output.block_V": "64"}, "_s1": {"gated_delta_output.stages": "1"},
                "_v64_s1": {"gated_delta_output.block_V": "64", "gated_delta_output.stages": "1"}}


def _add_gated_delta(t: _Tables) -> None:
    """f16 and bf16 at dk = dv = 128 and 64 (sm_90a), the sm_80 path at 128, and the variants'
    tiles (checked at two shapes); build names gdn_<dtype>_d<dim>[_sm80], gdn_f16_d128_<variant>."""
    for dt, d, target in (("f16", 128, ""), ("bf16", 128, ""), ("f16", 64, ""), ("bf16", 64, ""),
                          ("f16", 128, "sm_80")):
        name = f"gdn_{dt}_d{d}" + ("_sm80" if target else "")
        t.add(Build(name, "gated_delta", {"dtype": dt, "dk": str(d), "dv": str(d)}, target=target),
              [(f"b{b}h{h}s{s}", _gdn_shape(b, h, s, d)) for b, h, s in GDN_SHAPES])
    for suffix, knobs in GDN_VARIANTS.items():
        t.add(Build(f"gdn_f16_d128{suffix}", "gated_delta", {"dtype": "f16", "dk": "128", "dv": "128", **knobs}),
              [(f"b{b}h{h}s{s}", _gdn_shape(b, h, s, 128)) for b, h, s in GDN_SHAPES[1:4:2]])


def _gated_delta_bench_items() -> list:
    """Issue 12's gated delta net sizes at dk = dv = 128: (batch, heads, seq_len) = (8, 16, 4096)
    and (1, 32, 8192), against a chunked torch implementation (float32) and a Triton kernel of
    the same chunked algorithm (bench/triton_kernels.py); f16 also with the variants' tiles."""
    shapes = ((8, 16, 4096), (1, 32, 8192))
    items = [BenchItem(f"gdn_{dt}_d128_b{b}h{h}s{s}", f"gdn_{dt}_d128", _gdn_shape(b, h, s, 128))
             for dt in ("f16", "bf16") for b, h, s in shapes]
    for suffix, knobs in GDN_VARIANTS.items():
        items += [BenchItem(f"gdn_f16_d128{suffix}_b{b}h{h}s{s}", f"gdn_f16_d128{suffix}", _gdn_shape(b, h, s, 128),
                            " ".join(f"-D {k}={v}" for k, v in knobs.items()))
                  for b, h, s in shapes]
    return items


def _op_tables() -> tuple:
    t = _Tables()
    for add in (_add_gemm_variants, _add_gemm_dtypes, _add_reductions, _add_memory_ops, _add_samples,
                _add_dispatch, _add_layout_widths, _add_f16_accumulators, _add_flash_decoding, _add_conv2d,
                _add_gather_rows, _add_packed, _add_fused_moe, _add_w4a16_small_m, _add_w4a16_prefill, _add_w4a16_wreg, _add_w4a16_gemv, _add_w4a16_tc, _add_w4a16_tcs,
                _add_attention_bwd, _add_gated_delta):
        add(t)
    return t.builds, t.cases


# TileLang paper, appendix N: table 12 (FP16 matmul) and table 14 (FlashAttention).
PAPER_GEMM_SHAPES = [(8192, 1024, 8192), (8192, 8192, 8192), (8192, 28672, 8192),
                     (8192, 8192, 28672)]
# Tiles for GEMMs of few 128x256 tiles (names: layout_gemm_small_MxNxK_sS_tT[_p]).
GEMM_SMALL_TILES = {
    f"layout_gemm_small_{m}x{n}x{k}_s{st}_t{th}" + ("_p" if p else ""):
        {"block_M": str(m), "block_N": str(n), "block_K": str(k), "stages": str(st), "threads": str(th),
         "persist": "true" if p else "false"}
    for m, n, k, st, th, p in [(64, 128, 64, 4, 128, False), (64, 128, 64, 4, 128, True), (64, 64, 64, 4, 128, False),
                               (64, 256, 64, 3, 128, False), (128, 128, 64, 4, 256, False), (128, 64, 64, 4, 128, False),
                               (64, 128, 128, 3, 128, False), (64, 32, 64, 4, 128, False), (64, 32, 128, 4, 128, False),
                               (64, 64, 128, 4, 128, False)]}
GEMM_SMALL_SHAPES = [(1000, 1000, 1000), (1024, 1024, 1024), (512, 1024, 1024), (256, 4096, 4096), (512, 2048, 4096),
                     (2048, 1024, 1024), (1024, 2048, 2048), (128, 8192, 8192),
                     # a few rows of A (decoding): the weight's bytes bound them
                     (1, 4096, 4096), (16, 4096, 4096), (64, 4096, 4096), (16, 14336, 4096), (32, 4096, 14336)]
# Sizes from a few tiles to a few waves of them, for the sample's defaults against its generic tiles.
GEMM_SIZE_SHAPES = [(16, 4096, 4096), (256, 4096, 4096), (1024, 1024, 1024), (2048, 2048, 2048),
                    (1024, 4096, 4096), (2048, 4096, 4096), (512, 8192, 8192)]
PAPER_ATTENTION_SEQ = [1024, 2048, 4096, 8192]
# Issue 11's flash attention bar: (batch, heads, seq_len).
ISSUE11_ATTENTION_SHAPES = [(8, 16, 1024), (4, 32, 4096), (1, 32, 8192)]

# MLA decode at DeepSeek-V3's shape (issue 11): 128 query heads over one latent KV head, dim 512
# + pe_dim 64, at these cache lengths; timed against the roofline floor (bench/bench.py).
MLA_BENCH_BATCH, MLA_BENCH_HEADS = 64, 128
MLA_BENCH_SEQ = [1024, 2048, 4096, 8192]


def _bench_items() -> list:
    items = []
    gemm_shapes = [(m, n, k) for _, m, n, k, _ in GEMM_CHECK_SHAPES]
    gemm_shapes += [s for s in PAPER_GEMM_SHAPES if s not in gemm_shapes]
    for dt in ("f16", "bf16"):
        for m, n, k in gemm_shapes:
            items.append(BenchItem(f"gemm_{dt}_{m}x{n}x{k}", f"gemm_{dt}", {"M": m, "N": n, "K": k}))
    # The sample's defaults (on sm_90a the Hopper tiles) against its generic 128x128x32 tiles
    # at every size, small ones included, where the larger tiles leave SMs idle.
    for m, n, k in gemm_shapes + [s for s in GEMM_SIZE_SHAPES if s not in gemm_shapes]:
        if (m, n, k) not in gemm_shapes:
            items.append(BenchItem(f"gemm_f16_{m}x{n}x{k}", "gemm_f16", {"M": m, "N": n, "K": k}))
        items.append(BenchItem(f"gemm_f16_generic_{m}x{n}x{k}", "layout_gemm_generic", {"M": m, "N": n, "K": k},
                               "-D hopper_tiles=false"))
    for m, n, k in GEMM_SMALL_SHAPES:
        if not any(i.name == f"gemm_f16_{m}x{n}x{k}" for i in items):
            items.append(BenchItem(f"gemm_f16_{m}x{n}x{k}", "gemm_f16", {"M": m, "N": n, "K": k}))
        for name, tiles in GEMM_SMALL_TILES.items():
            items.append(BenchItem(f"gemm_f16_{name[len('layout_gemm_'):]}_{m}x{n}x{k}", name, {"M": m, "N": n, "K": k},
                                   " ".join(f"-D {a}={b}" for a, b in tiles.items())))
    att = [(b, h, s, d, "") for b, h, s, d in ATTENTION_CHECK_SHAPES]
    for s in PAPER_ATTENTION_SEQ:
        if (64, 64, s, 128) in ATTENTION_CHECK_SHAPES:
            continue
        # The paper runs batch 64 throughout; at 8192 that is 140 TFLOP per call and 34 GB of
        # tensors per implementation, so batch 16 keeps the run in budget (as the anchors did).
        batch, note = (16, "batch 16 instead of the paper's 64") if s == 8192 else (64, "")
        att.append((batch, 64, s, 128, note))
    for causal in (False, True):
        for b, h, s, d, note in att:
            build = _attention_build_name(d, causal)
            items.append(BenchItem(f"{build}_b{b}h{h}s{s}", build, _attention_shape(b, h, s, d),
                                   note))
    for family in ("softmax", "rmsnorm"):
        for m, n in ROWWISE_SHAPES + [(16384, 8192)]:
            items.append(BenchItem(f"{family}_f16_{m}x{n}", f"{family}_f16", {"M": m, "N": n}))
    # Issue 11's attention shapes (B, H, S) at D128, the samples' default schedule and the
    # ping-pong one in the same run, and at D64 (the default schedule).
    for causal in (False, True):
        for b, h, s in ISSUE11_ATTENTION_SHAPES:
            for build, dim in ((_attention_build_name(128, causal), 128),
                               ("layout_fa_pingpong_d128" + ("_causal" if causal else ""), 128),
                               (_attention_build_name(64, causal), 64)):
                name = f"{build}_b{b}h{h}s{s}"
                if any(i.name == name for i in items):
                    continue
                items.append(BenchItem(name, build, _attention_shape(b, h, s, dim)))
    # D64 with 192-row tiles and with the ping-pong schedule at issue 11's shapes, beside the
    # default rows above (at D64 the exponentials take as long as the two gemms, which is what
    # ping-pong overlaps).
    for causal in (False, True):
        for b, h, s in ISSUE11_ATTENTION_SHAPES:
            for build in ("layout_fa_d64_m192", "layout_fa_pingpong_d64"):
                build += "_causal" if causal else ""
                items.append(BenchItem(f"{build}_b{b}h{h}s{s}", build, _attention_shape(b, h, s, 64)))
    # persistent() attention at issue 11's shapes, beside the default rows above (D128's default
    # is persistent: there the ordinary launch is the variant).
    for causal in (False, True):
        for dim, rows in ((128, ""), (64, ""), (64, "_m192"), (128, "_pingpong"), (64, "_pingpong")):
            for b, h, s in ISSUE11_ATTENTION_SHAPES:
                build = ("nopersist_fa_d128" if (dim, rows) == (128, "") else
                         f"persist_fa_pingpong_d{dim}" if rows == "_pingpong" else f"persist_fa_d{dim}{rows}") + \
                    ("_causal" if causal else "")
                items.append(BenchItem(f"{build}_b{b}h{h}s{s}", build, _attention_shape(b, h, s, dim)))
    # D64's size-dependent defaults against the fixed tile they replaced, at issue 11's shapes
    # and at the edges' short sides (1280 and 1536 keys).
    for causal in (False, True):
        suffix = "_causal" if causal else ""
        for b, h, s in ISSUE11_ATTENTION_SHAPES + [(8, 16, 1280), (8, 16, 1536)]:
            for build in ("sizes_fa_d64" + suffix, "fixed_fa_d64" + suffix):
                items.append(BenchItem(f"{build}_b{b}h{h}s{s}", build, _attention_shape(b, h, s, 64)))
    # Block-sparse attention (issue 12): the problem's random masks keep about half the
    # 128x128 blocks; against SDPA with the element mask and a Triton block-sparse kernel.
    for b, h, s in ((4, 16, 4096), (8, 16, 2048), (1, 32, 8192)):
        items.append(BenchItem(f"sparse_attn_f16_b{b}h{h}s{s}", "sparse_attn_f16",
                               _attention_shape(b, h, s, 128), "about half of the 128x128 blocks kept"))
    # Vertical-slash sparse attention (issue 12) at MInference's default budget, 1000
    # verticals and 6096 slash diagonals per head, H = 32, D = 128; against a torch
    # implementation over the same index tables and a Triton kernel in the structure of
    # MInference's _triton_mixed_sparse_attn_fwd_kernel.
    # The 128-row build's tables are twice as wide (a diagonal may take two 64-key blocks of a
    # 128-row query block), for the same 6096 diagonals.
    for s in (8192, 16384, 32768):
        for build, width in (("vs_f16_d128", 6096), ("vs_f16_d128_m128", 2 * 6096), ("vs_f16_d128_s3", 6096),
                             ("vs_f16_d128_n128", 6096), ("vs_f16_d128_n128_s3", 6096)):
            items.append(BenchItem(f"{build}_b1h32s{s}", build, _vs_shape(1, 32, s, 128, width, 1000),
                                   "1000 verticals, 6096 slash diagonals per head"))
    # Attention sinks with GQA (issue 12) at issue 11's attention shapes: groups = 8 (kv_heads =
    # heads / 8), causal, both head dims; against torch (explicit softmax with the sink), SDPA
    # with the sink as an extra key, and a Triton attention-sink kernel.
    for dim in (64, 128):
        for b, h, s in ISSUE11_ATTENTION_SHAPES:
            items.append(BenchItem(f"sink_f16_d{dim}_causal_b{b}h{h}g8s{s}", f"sink_f16_d{dim}_causal",
                                   _sink_shape(b, h, h // 8, s, dim)))
    # Memory-bound operator samples (issue 12: >= 80% of the copy bandwidth on their bytes).
    for family, shape in (("log_softmax", {"M": 16384, "N": 8192}), ("layernorm", {"M": 16384, "N": 8192}),
                          ("swiglu", {"M": 16384, "N": 14336}), ("gemv", {"M": 28672, "K": 8192})):
        label = "x".join(str(v) for v in shape.values())
        items.append(BenchItem(f"mem_{family}_f16_{label}", f"mem_{family}_f16", shape))
        items.append(BenchItem(f"mem_{family}_f16_4096x4096", f"mem_{family}_f16",
                               dict(zip(shape, (4096, 4096)))))
    # The row kernels' one-pass form (rows of up to 8192 columns read once, in registers) with
    # 512 threads, beside the default 256 (softmax and RMSNorm: softmax_f16 and rmsnorm_f16
    # above), at the same problems; and rows of up to 4096 on 128 threads at 4096x4096.
    for family in ("log_softmax", "layernorm", "softmax", "rmsnorm"):
        for m, n in ((16384, 8192), (4096, 4096)):
            items.append(BenchItem(f"mem_{family}_f16_t512_{m}x{n}", f"mem_{family}_f16_t512",
                                   {"M": m, "N": n}))
        items.append(BenchItem(f"mem_{family}_f16_n4096_4096x4096", f"mem_{family}_f16_n4096",
                               {"M": 4096, "N": 4096}))
    # LayerNorm's widest bucket, on 4096- and 8192-column tiles (two or four passes).
    items.append(BenchItem("mem_layernorm_f16_n4096_4096x16384", "mem_layernorm_f16_n4096", {"M": 4096, "N": 16384}))
    # The dispatching defaults (tune_for) against the fixed 8192-column tiles they replaced,
    # at the widths of their buckets (4096 rows) and at 16384x8192.
    for family in ("log_softmax", "layernorm", "softmax", "rmsnorm"):
        for m, n in ((4096, 1024), (4096, 2048), (4096, 4096), (4096, 8192), (4096, 16384), (16384, 8192)):
            for build in (f"mem_{family}_f16", f"mem_{family}_f16_n8192"):
                name = f"{build}_{m}x{n}"
                if not any(i.name == name for i in items):
                    items.append(BenchItem(name, build, {"M": m, "N": n}))
    # The GEMM sample with the tiles the wgmma sweep found best on the H100
    # (bench/results/h100-2026-11-24-sweep-wgmma.json) at the paper's shapes.
    for m, n, k in PAPER_GEMM_SHAPES + [(4096, 4096, 4096), (4096, 4095, 4096)]:
        items.append(BenchItem(f"gemm_f16_h100tiles_{m}x{n}x{k}", "layout_gemm_s4_n256",
                               {"M": m, "N": n, "K": k},
                               "samples/gemm.tl with -D block_N=256 -D block_K=64 -D stages=4 "
                               "-D threads=256 (the sweep's best tiles on the H100)"))
    # persistent() with 128x256x64 tiles and three stages, against the same tiles launched
    # one block per tile (layout_gemm_s3_n256) and the four-stage rows above, same process.
    for m, n, k in PAPER_GEMM_SHAPES + [(4096, 4096, 4096)]:
        for build in ("persist_gemm_s3_n256", "layout_gemm_s3_n256"):
            items.append(BenchItem(f"gemm_f16_{build}_{m}x{n}x{k}", build, {"M": m, "N": n, "K": k},
                                   "samples/gemm.tl with -D block_N=256 -D block_K=64 -D stages=3 -D threads=256" +
                                   (" -D persist=true" if build.startswith("persist") else "")))
    # transpose_B (B stored [N, K]) with the same tiles: within 5% of the NN rows above is
    # the bar (issue 11).
    # Odd N (a vocabulary's logits: 4095, 50257): C's rows are not 16-byte aligned, so C is
    # stored by the consumers while A and B keep their bulk copies; and NN at 4095, where B's
    # rows are not aligned either.
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 4095, 4096), (4096, 50257, 4096)]:
        items.append(BenchItem(f"gemm_nt_f16_h100tiles_{m}x{n}x{k}", "ops_gemm_nt_f16_h100tiles",
                               {"M": m, "N": n, "K": k},
                               "tests/gpu/ops/gemm_nt.tl with the h100tiles of samples/gemm.tl"))
        items.append(BenchItem(f"gemm_nt_f16_hopper_{m}x{n}x{k}", "ops_gemm_nt_f16_hopper",
                               {"M": m, "N": n, "K": k},
                               "tests/gpu/ops/gemm_nt.tl with samples/gemm.tl's Hopper tiles (persistent)"))
    # samples/gemm_fp8.tl against torch._scaled_mm with the same row-wise scales.
    for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 1024, 8192)]:
        items.append(BenchItem(f"gemm_fp8_{m}x{n}x{k}", "dtypes_gemm_fp8", {"M": m, "N": n, "K": k}))
    # Decoding sizes: the decode kernel beside the GEMM's tiles and cuBLASLt.
    for m, n, k in [(1, 8192, 8192), (16, 8192, 8192), (16, 14336, 4096), (16, 4096, 14336), (64, 8192, 8192)]:
        for build in ("dtypes_gemm_fp8_decode", "dtypes_gemm_fp8_decode_n128", "dtypes_gemm_fp8"):
            items.append(BenchItem(f"{build[7:]}_{m}x{n}x{k}", build, {"M": m, "N": n, "K": k}))
    # 8-bit gemms on wgmma.m64nNk32 (issue 12) against cuBLASLt's (torch._scaled_mm with unit
    # scales, torch._int_mm), B stored [N, K] as both take it.
    for build in ("dtypes_wgmma8_e4m3_n256", "dtypes_wgmma8_e4m3_n256k128", "dtypes_wgmma8_e4m3_k128",
                  "dtypes_wgmma8_i8_n256k128", "dtypes_wgmma8_i8_k64_wg2"):
        for m, n, k in [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 1024, 8192)]:
            items.append(BenchItem(f"{build[7:]}_{m}x{n}x{k}", build, {"M": m, "N": n, "K": k},
                                   "tests/gpu/ops/gemm_nt.tl on 8-bit inputs"))
    # Batched GEMM with the same tiles against torch.bmm: 4 x 4096^3 (its rate comparable to
    # the NN row at 4096^3) and 16 x 1024x1024x4096 (16 blocks' worth of tiles per matrix).
    for b, m, n, k in [(4, 4096, 4096, 4096), (16, 1024, 1024, 4096)]:
        items.append(BenchItem(f"gemm_batched_f16_h100tiles_b{b}_{m}x{n}x{k}",
                               "ops_gemm_batched_f16_h100tiles", {"batch": b, "M": m, "N": n, "K": k},
                               "tests/gpu/ops/gemm_batched.tl with the h100tiles of samples/gemm.tl"))
        items.append(BenchItem(f"gemm_batched_f16_hopper_b{b}_{m}x{n}x{k}",
                               "ops_gemm_batched_f16_hopper", {"batch": b, "M": m, "N": n, "K": k},
                               "tests/gpu/ops/gemm_batched.tl with samples/gemm.tl's Hopper tiles (persistent)"))
    # The NN GEMM of the batched one's work as one matrix (four 4096-row blocks of A on one B):
    # a launch as long as the batched one's, so that both run at the clock a GPU holds under
    # that load (4096^3 runs a quarter as long, between L2 flushes).
    items.append(BenchItem("gemm_f16_16384x4096x4096", "gemm_f16", {"M": 16384, "N": 4096, "K": 4096},
                           "the FLOPs of 4 x 4096^3 in one product"))
    # The sample's defaults (block_H = 64, block_N = 64, 2 stages), as the checks build it.
    b, h = MLA_BENCH_BATCH, MLA_BENCH_HEADS
    for build in ("mla_f16", "mla_f16_n32_s3", "mla_f16_n32_s4"):
        for s in MLA_BENCH_SEQ:
            items.append(BenchItem(f"{build}_b{b}h{h}s{s}g1", build,
                                   {"batch": b, "heads": h, "seqlen_kv": s, "kv_heads": 1,
                                    "dim": 512, "pe_dim": 64},
                                   "" if build == "mla_f16" else "-D " + " -D ".join(
                                       ("block_N=" + build.split("_n")[1].split("_s")[0],
                                        "stages=" + build.split("_s")[-1]))))
    # The shape dispatch against the sample's fixed 128x128 tiles, across its buckets.
    for m, n, k in DISPATCH_BENCH_SHAPES:
        shape = {"M": m, "N": n, "K": k}
        items.append(BenchItem(f"auto_gemm_dispatch_f16_{m}x{n}x{k}", "auto_gemm_dispatch_f16",
                               shape))
        if not any(i.name == f"gemm_f16_{m}x{n}x{k}" for i in items):
            items.append(BenchItem(f"gemm_f16_{m}x{n}x{k}", "gemm_f16", shape))
    items += _flash_decoding_bench_items()
    items += _conv2d_bench_items()
    items += _conv2d_odd_c_bench_items()
    items += _moe_and_w4a16_bench_items()
    items += _attention_bwd_bench_items()
    items += _gated_delta_bench_items()
    return items


# Mixtral 8x7B's expert GEMM (hidden 4096 -> 14336, 8 experts, top 2) at decode (1, 16 tokens)
# and prefill (512, 4096 tokens) sizes; W4A16 at M = 1, 16, 4096 on the up (4096 -> 14336) and
# down (14336 -> 4096) projections of the same model.
MOE_BENCH_TOKENS = [1, 16, 512, 4096]
MOE_BENCH_SHAPE = {"K": 4096, "E": 8, "N": 14336}
W4A16_BENCH_M = [1, 16, 4096]
W4A16_BENCH_NK = [(14336, 4096), (4096, 14336)]


def _moe_and_w4a16_bench_items() -> list:
    """Fused MoE against a torch loop over experts and a Triton kernel of vLLM's structure (each
    build's routing block is its block_M, which the Triton kernel uses too); W4A16 against
    cuBLAS on the dequantized weight; both against their roofline floor. The decode tiles
    (_m16) run at the small sizes, the defaults everywhere, the prefill tiles at the large."""
    items = []
    for tokens in MOE_BENCH_TOKENS:
        shape = {"T": tokens, **MOE_BENCH_SHAPE}
        for tiles in ("_m16", "", "_m128"):
            if (tiles == "_m16" and tokens > 512) or (tiles == "_m128" and tokens < 512):
                continue
            build = f"moe_f16{tiles}"
            items.append(BenchItem(f"{build}_t{tokens}k4096e8n14336", build, shape,
                                   f"-D {' -D '.join(_moe_build(build, tiles).define_args())}"))
    for m in W4A16_BENCH_M:
        for n, k in W4A16_BENCH_NK:
            shape = {"M": m, "N": n, "K": k}
            items.append(BenchItem(f"w4a16_f16_g128_{m}x{n}x{k}", "w4a16_f16_g128", shape))
            # FP4 weights (groups of 32, as MXFP4) through the same structure, beside it.
            items.append(BenchItem(f"w4a16_fp4_f16_g32_{m}x{n}x{k}", "w4a16_fp4_f16_g32", shape, "FP4 weights, groups of 32"))
            # The weights dequantized into registers (dequant_gemm_w4a16_regs), beside them.
            items.append(BenchItem(f"w4a16_wreg_f16_g128_{m}x{n}x{k}", "w4a16_wreg_f16_g128", shape))
            for tiles, knobs in W4A16_WREG_TILES.items():
                if (m == 4096) != tiles.startswith("_dec"):
                    items.append(BenchItem(f"w4a16_wreg_f16_g128{tiles}_{m}x{n}x{k}", f"w4a16_wreg_f16_g128{tiles}",
                                           shape, " ".join(f"-D {a}={b}" for a, b in knobs.items())))
            if m == 4096:
                for tiles, knobs in W4A16_PREFILL.items():
                    items.append(BenchItem(f"w4a16_f16_g128{tiles}_{m}x{n}x{k}", f"w4a16_f16_g128{tiles}", shape,
                                           " ".join(f"-D {a}={b}" for a, b in knobs.items())))
            if m <= 16:
                items.append(BenchItem(f"w4a16_f16_g128_m16_{m}x{n}x{k}", "w4a16_f16_g128_m16", shape,
                                       "-D block_M=16 -D block_N=64 -D block_K=128 -D stages=4 -D threads=128"))
                for tiles, knobs in W4A16_DECODE.items():
                    items.append(BenchItem(f"w4a16_f16_g128{tiles}_{m}x{n}x{k}", f"w4a16_f16_g128{tiles}", shape,
                                           " ".join(f"-D {a}={b}" for a, b in knobs.items())))
                items.append(BenchItem(f"w4a16_fp4_f16_g32_dec_{m}x{n}x{k}", "w4a16_fp4_f16_g32_dec", shape,
                                       "FP4 weights, groups of 32; " +
                                       " ".join(f"-D {a}={b}" for a, b in W4A16_DECODE["_dec"].items())))
                # The decode GEMV on the same weights, beside them.
                items.append(BenchItem(f"w4a16_gemv_f16_g128_{m}x{n}x{k}", "w4a16_gemv_f16_g128", shape))
                items.append(BenchItem(f"w4a16_gemv_f16_g128_n4_{m}x{n}x{k}", "w4a16_gemv_f16_g128_n4", shape,
                                       "-D block_N=4"))
                for suffix, knobs in W4A16_GEMV_VARIANTS.items():
                    items.append(BenchItem(f"w4a16_gemv_f16_g128{suffix}_{m}x{n}x{k}", f"w4a16_gemv_f16_g128{suffix}",
                                           shape, " ".join(f"-D {a}={b}" for a, b in knobs.items())))
                # The tensor-core GEMVs on the same weights (registers, staged), beside them.
                for build, variants in (("w4a16_tc_f16_g128", W4A16_TC_VARIANTS),
                                        ("w4a16_tcs_f16_g128", W4A16_TCS_VARIANTS)):
                    items.append(BenchItem(f"{build}_{m}x{n}x{k}", build, shape))
                    for suffix, knobs in variants.items():
                        items.append(BenchItem(f"{build}{suffix}_{m}x{n}x{k}", f"{build}{suffix}",
                                               shape, " ".join(f"-D {a}={b}" for a, b in knobs.items())))
    return items


def default_tables(selftest: bool = False, known_rejections: bool = False) -> tuple:
    """(builds, cases, bench items). The self-test bundle replaces the generated GEMMs with the
    hand-written naive one (selftest/naive_gemm.cu) and carries only what uses them. The builds
    of KNOWN_TLC_REJECTIONS (and their cases) are left out unless `known_rejections`."""
    op_builds, op_cases = _op_tables()
    builds = _gemm_builds() + _attention_builds() + _rowwise_builds() + op_builds
    cases, bench = _check_cases() + op_cases, _bench_items()
    if selftest:
        # The issue-3 GEMMs only: the naive GEMM ignores the knobs layout_, accum_ and persist_ builds vary,
        # and takes f16/bf16 only (not the i8, tf32 and fp8 builds of issue 12).
        builds = [b for b in builds if b.family == "gemm" and not b.name.startswith(("layout_", "accum_", "persist_"))
                  and b.defines["dtype"] in ("f16", "bf16")]
    if not known_rejections:
        builds = [b for b in builds if b.name not in KNOWN_TLC_REJECTIONS]
    return select(builds, cases, bench, None)


def random_tables(count: int, seed: int, tlc: str, target: str, targets: list, templates=None) -> dict:
    """`count` random configurations (random_tables.py), each for one of `targets` (a build for
    another target than the bundle's `target` says so), as the JSON that --tables reads: builds
    named rnd<i>_<stem> (rnd<i>_<stem>_<target> off the bundle's target), three cases each, no
    bench items. f16 accumulation takes the tolerance of the fixed accum_ builds; `templates`
    limits the draws to those of random_tables.TEMPLATES."""
    import random_tables as rt  # beside this file: only the `random` command needs it
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    drawn, rejected = rt.draw(count, seed, tlc, root, targets, lambda family: KERNELS[family].source, templates)
    builds, cases = [], []
    for i, (family, stem, defines, shapes, build_target) in enumerate(drawn):
        tolerance = F16_ACCUM_TOLERANCE if defines.get("accum") == "f16" else None
        own = build_target != target
        name = f"rnd{i}_{stem}" + (f"_{build_target}" if own else "")
        builds.append({"name": name, "family": family, "defines": defines, **({"target": build_target} if own else {})})
        cases += [{"name": f"{name}_{j}", "build": name, "shape": shape, **({"tolerance": tolerance} if tolerance else {})}
                  for j, shape in enumerate(shapes)]
    return {"seed": seed, "drawn": len(drawn) + rejected, "rejected": rejected, "builds": builds, "cases": cases}


def tables_from_json(path: str) -> tuple:
    """(builds, cases, bench items) of a random_tables() file."""
    with open(path) as f:
        data = json.load(f)
    return ([Build(b["name"], b["family"], b["defines"], b.get("target", "")) for b in data["builds"]],
            [Case(c["name"], c["build"], c["shape"], tolerance=c.get("tolerance", DEFAULT_TOLERANCE))
             for c in data["cases"]], [])


def select(builds, cases, bench, only) -> tuple:
    """Keeps the builds whose name matches `only` (a regex; None keeps all), and what uses them."""
    if only:
        builds = [b for b in builds if re.search(only, b.name)]
    names = {b.name for b in builds}
    return (builds, [c for c in cases if c.build in names], [i for i in bench if i.build in names])


# ---- The PyTorch extension (tlc --emit=torch; tests/gpu/torch_ext_check.py) --------------------

# One extension of these kernels, in the torch library TORCH_EXT_LIBRARY, each compiled with its
# build's -D values (as KERNEL.name=value: they share one tlc run), with the shapes its ops are
# checked at (partial tiles, unaligned rows).
TORCH_EXT_LIBRARY = "torch_check"
TORCH_EXT_BUILDS = [
    (Build("torch_gemm_f16", "gemm", {"dtype": "f16", "policy": "square"}),
     [{"M": 1024, "N": 1024, "K": 1024}, {"M": 257, "N": 1000, "K": 999}, {"M": 130, "N": 70, "K": 40}]),
    (Build("torch_softmax_f16", "softmax", {"dtype": "f16"}),
     [{"M": 1000, "N": 3000}, {"M": 77, "N": 250}, {"M": 4096, "N": 1024}]),
    (Build("torch_fa_d128_causal", "attention", {"dtype": "f16", "dim": "128", "causal": "true"}),
     [{"batch": 2, "seq_len": 1000, "heads": 8, "dim": 128}, {"batch": 1, "seq_len": 77, "heads": 4, "dim": 128},
      {"batch": 2, "seq_len": 512, "heads": 2, "dim": 128}]),
]


def torch_ext_tlc_args() -> list:
    """tlc's arguments for the extension's kernels, beside --emit, --namespace and --target:
    the sources (relative to the repository root), then -D KERNEL.name=value for each define."""
    sources = [b.spec.source for b, _ in TORCH_EXT_BUILDS]
    defines = []
    for b, _ in TORCH_EXT_BUILDS:
        for d in b.define_args():
            defines += ["-D", f"{b.spec.kernel}.{d}"]
    return sources + defines


# ---- Validation -------------------------------------------------------------------------------

class TableError(ValueError):
    pass


def validate(builds, cases, bench) -> None:
    """Raises TableError on the first inconsistency; the runner relies on all of these."""
    by_name = {}
    for b in builds:
        if b.name in by_name:
            raise TableError(f"duplicate build '{b.name}'")
        if b.family not in KERNELS:
            raise TableError(f"build '{b.name}': unknown kernel family '{b.family}'")
        if not re.fullmatch(r"[A-Za-z0-9_]+", b.name):
            raise TableError(f"build '{b.name}': names must be [A-Za-z0-9_]+ (file names)")
        missing = [k for k in b.spec.knobs if k not in b.defines]
        if missing:
            raise TableError(f"build '{b.name}' must set {missing}: the reference depends on them")
        by_name[b.name] = b
    for kind, entries in (("case", cases), ("bench item", bench)):
        seen = set()
        for e in entries:
            if e.name in seen:
                raise TableError(f"duplicate {kind} '{e.name}'")
            seen.add(e.name)
            build = by_name.get(e.build)
            if build is None:
                raise TableError(f"{kind} '{e.name}': unknown build '{e.build}'")
            _validate_shape(kind, e, build)
    for c in cases:
        if c.reference not in ("float32", "float64"):
            raise TableError(f"case '{c.name}': reference must be float32 or float64")
        # 0: the output must equal the reference (integer gemms, whose references are exact).
        if not 0 <= c.tolerance < 1:
            raise TableError(f"case '{c.name}': tolerance {c.tolerance} out of [0, 1)")


def _validate_shape(kind, entry, build) -> None:
    keys = build.spec.shape_keys
    if sorted(entry.shape) != sorted(keys):
        raise TableError(f"{kind} '{entry.name}': shape keys {sorted(entry.shape)}, "
                         f"expected {sorted(keys)}")
    for k, v in entry.shape.items():
        if not isinstance(v, int) or v <= 0:
            raise TableError(f"{kind} '{entry.name}': {k} = {v!r} is not a positive int")
        # A shape key that is also a knob (attention's dim) is fixed by the build.
        if k in build.defines and int(build.defines[k]) != v:
            raise TableError(f"{kind} '{entry.name}': {k} = {v} but build '{build.name}' "
                             f"was generated with {k} = {build.defines[k]}")


# ---- Manifest ---------------------------------------------------------------------------------

def make_manifest(builds, cases, bench, target: str, selftest: bool, generator: str) -> dict:
    validate(builds, cases, bench)
    return {
        "version": MANIFEST_VERSION,
        "target": target,
        "selftest": selftest,
        "generator": generator,
        "builds": [{"name": b.name, "family": b.family, "source": b.spec.source,
                    "kernel": b.spec.kernel, "defines": dict(b.defines), "cu": f"{b.name}.cu",
                    **({"target": b.target} if b.target else {})}
                   for b in builds],
        "cases": [asdict(c) for c in cases],
        "bench": [asdict(i) for i in bench],
    }


@dataclass
class Manifest:
    target: str
    selftest: bool
    generator: str
    builds: list
    cases: list
    bench: list
    root: str = ""                 # the bundle directory

    def build(self, name: str) -> Build:
        return next(b for b in self.builds if b.name == name)

    def cu_path(self, build: Build) -> str:
        return os.path.join(self.root, f"{build.name}.cu")


def parse_manifest(data: dict, root: str = "") -> Manifest:
    if data.get("version") != MANIFEST_VERSION:
        raise TableError(f"manifest version {data.get('version')!r}, expected {MANIFEST_VERSION}")
    builds = [Build(b["name"], b["family"], dict(b["defines"]), b.get("target", ""))
              for b in data["builds"]]
    cases = [Case(**c) for c in data["cases"]]
    bench = [BenchItem(**i) for i in data["bench"]]
    validate(builds, cases, bench)
    return Manifest(data["target"], data["selftest"], data.get("generator", ""), builds, cases,
                    bench, root)


def load_manifest(bundle_dir: str) -> Manifest:
    with open(os.path.join(bundle_dir, "manifest.json")) as f:
        return parse_manifest(json.load(f), bundle_dir)


# ---- Command line -----------------------------------------------------------------------------

def _main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("builds", "manifest", "list"):
        p = sub.add_parser(name)
        p.add_argument("--selftest", action="store_true")
        p.add_argument("--only", help="regex over build names")
        p.add_argument("--known-rejections", action="store_true",
                       help="include the builds of KNOWN_TLC_REJECTIONS (to retry them)")
        p.add_argument("--tables", help="the builds and cases of a `random` file instead of the fixed tables")
        if name == "manifest":
            p.add_argument("--out", required=True)
            p.add_argument("--target", default="sm_90a")
            p.add_argument("--generator", default="", help="tlc version / git revision")
    sub.add_parser("torch-ext").add_argument("--library", action="store_true",
                                             help="print the torch library's name instead")
    p = sub.add_parser("random", help="draw random configurations (random_tables.py) into a --tables file")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--tlc", required=True, help="the compiler that filters the draws")
    p.add_argument("--target", default="sm_90a", help="the bundle's target")
    p.add_argument("--targets", help="comma-separated targets the draws choose from (default: --target)")
    p.add_argument("--templates", help="comma-separated names of random_tables.TEMPLATES to draw from (default: all)")
    p.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if args.cmd == "random":
        data = random_tables(args.count, args.seed, args.tlc, args.target,
                             args.targets.split(",") if args.targets else [args.target],
                             args.templates.split(",") if args.templates else None)
        with open(args.out, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        print(f"random tables: {len(data['builds'])} configurations, {data['rejected']} of {data['drawn']} draws "
              f"rejected by tlc with a located error")
        return 0
    if args.cmd == "torch-ext":
        print(TORCH_EXT_LIBRARY if args.library else "\n".join(torch_ext_tlc_args()))
        return 0
    tables = tables_from_json(args.tables) if args.tables else default_tables(args.selftest, args.known_rejections)
    builds, cases, bench = select(*tables, args.only)
    validate(builds, cases, bench)
    if args.cmd == "builds":
        # One line per build: name, source, kernel, then the -D values (no spaces inside) and,
        # for a build with its own target, target=T.
        for b in builds:
            print(" ".join([b.name, b.spec.source, b.spec.kernel] + b.define_args() +
                           ([f"target={b.target}"] if b.target else [])))
    elif args.cmd == "manifest":
        data = make_manifest(builds, cases, bench, args.target, args.selftest, args.generator)
        with open(os.path.join(args.out, "manifest.json"), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
    else:
        for b in builds:
            print(f"build {b.name}: {b.spec.source} {' '.join(b.tlc_args())}")
        for c in cases:
            print(f"case  {c.name}: {c.build} {c.shape} ref={c.reference}")
        for i in bench:
            print(f"bench {i.name}: {i.build} {i.shape} {i.note}")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
