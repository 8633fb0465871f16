#!/usr/bin/env python3
"""Runs samples on tlc's CPU emulator (tlc run --emulate) at small shapes and compares every
output with a float64 reference (references.py) within the dtype's tolerance.

  run_samples.py --tlc build/bin/tlc --work DIR [--only REGEX] [--target T] [--expect-mismatch]
                 [--env NAME=VALUE] [--random N --seed S]

Each case builds its program once (a kept --build-dir) and runs it at three shapes, tile
multiples and not. --target picks the lowering: sm_80 (CUDA: mma.sync, ldmatrix, cp.async; the
default) or gfx90a/gfx940/gfx942 (HIP: 64-lane waves, MFMA), with the same knobs and shapes. --expect-mismatch inverts the verdict for the fault-injection tests: they
pass only if the emulator gives a wrong answer (a lowering with a deliberate fault, selected by
--env TLC_TEST_...). Exit status 0 pass, 1 fail, 77 skip (no CUDA headers: the emulator needs
cuda_fp16.h).
"""
import argparse
import json
import math
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
import references as ref  # noqa: E402
from abi import PACKED_DTYPES, packed_values  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# |got - want| <= atol + rtol * |want|: the output dtype's rounding plus the kernels' f32
# accumulation and approximate exp2/rsqrt.
# Integer outputs (positions) must match exactly.
TOLERANCE = {"f16": (2e-2, 1e-2), "bf16": (1e-1, 2e-2), "f32": (1e-3, 1e-3), "i32": (0, 0), "i4": (0, 0),
             "u4": (0, 0), "f4e2m1": (0, 0)}
# The attention backward's f32 dQ_accum sums products of dS rounded to f16 (the gemm's
# operand): f16's tolerance. A reference parameter "tolerance" replaces TOLERANCE for a case.
BWD_TOLERANCE = dict(TOLERANCE, f32=TOLERANCE["f16"])

# dequant_zp's outputs are exact: the reference rounds each operation as the kernel does.
EXACT_ZP = {"dtype": "f16", "zero_points": True, "tolerance": dict(TOLERANCE, f16=(0, 0), bf16=(0, 0))}

# name: (sample, kernel, compile-time -D, reference, reference parameters, [shapes])
CASES = {
    # The last two shapes mix aligned and unaligned rows: B's and C's 37 halves are not 16-byte
    # multiples while A's 64 are (A keeps its vector copies), and A's 36 halves are not while B's
    # and C's 64 are (the launcher decides per tensor).
    "gemm": ("gemm.tl", "gemm", ["block_M=64", "block_N=64"], ref.gemm, {},
             [dict(M=64, N=64, K=32), dict(M=100, N=72, K=40), dict(M=17, N=136, K=88),
              dict(M=45, N=37, K=64), dict(M=33, N=64, K=36)]),
    # `auto` knobs with dynamic shapes: the launcher dispatches on M, N and K to the recommender's
    # variant for each call's bucket (for sm_80 today: 32x16, 32x32 and 64x64 tiles here).
    "gemm_auto": ("gemm_auto.tl", "gemm_auto", [], ref.gemm, {},
                  [dict(M=16, N=20, K=24), dict(M=100, N=300, K=80), dict(M=70, N=600, K=100)]),
    "gemm_bf16": ("gemm.tl", "gemm", ["block_M=64", "block_N=64", "dtype=bf16", "out_dtype=f32"], ref.gemm, {},
                  [dict(M=64, N=64, K=64), dict(M=70, N=40, K=24)]),
    # persistent(): three blocks (the emulator's persistent grid) loop over 6-12 tiles each.
    "gemm_persistent": ("gemm.tl", "gemm", ["block_M=64", "block_N=64", "persist=true"], ref.gemm, {},
                        [dict(M=200, N=136, K=72), dict(M=256, N=192, K=40)]),
    # The reductions' general path (any dimension, shared, local and 1-d fragment buffers), a
    # test kernel of tests/gpu: ragged tiles of 80 columns, f16 fragments.
    "reduce_any": ("../tests/gpu/ops/reduce_any.tl", "reduce_any", ["block_M=32", "block_N=80", "dtype=f16"],
                   ref.reduce_any, {"block_M": 32, "block_N": 80}, [dict(M=45, N=170), dict(M=32, N=80)]),
    # cummax/cummin (the cumsum scan with max/min) and argmax/argmin (clear = false across
    # tiles with an offset; the general path with (value, position) pairs in the scratch), test
    # kernels of tests/gpu: ragged tiles of 80 columns, f16 fragments.
    "cummax": ("../tests/gpu/ops/cummax.tl", "cummax", ["block_M=32", "block_N=80", "dtype=f16"],
               ref.cummax, {"block_M": 32, "block_N": 80}, [dict(M=45, N=170), dict(M=32, N=80)]),
    "argmax": ("../tests/gpu/ops/argmax.tl", "argmax", ["block_M=32", "block_N=80", "dtype=f16"],
               ref.argmax, {"block_M": 32, "block_N": 80}, [dict(M=45, N=170), dict(M=32, N=80)]),
    # `if last_block(Done[m], chunks) { } else { }` (a test kernel of tests/gpu): the last of a
    # row's blocks (in the emulator's order of blocks) sums the partials the others wrote; one
    # chunk per row (N = 50), rows of 8 and 11 chunks, and more chunks than the last block reads
    # at once (block_C = 4: a serial loop of 3 tiles). Done starts at 0 (COUNTERS) and ends so.
    "last_block": ("../tests/gpu/ops/last_block.tl", "last_block", ["block_N=96", "block_C=4"],
                   ref.last_block, {"block_N": 96},
                   [dict(M=3, N=50), dict(M=2, N=768), dict(M=5, N=1000)]),
    "last_block_bf16": ("../tests/gpu/ops/last_block.tl", "last_block", ["block_N=160", "dtype=bf16"],
                        ref.last_block, {"block_N": 160}, [dict(M=4, N=1601), dict(M=1, N=160)]),
    # A gemm on the first 128 of 256 threads (threads = T) feeding one on the whole block
    # through shared memory, in a pipelined loop; partial tiles of keys and rows.
    "gemm_thread_subset": ("../tests/gpu/ops/gemm_thread_subset.tl", "gemm_thread_subset", [],
                           ref.gemm_thread_subset, {"block_N": 32},
                           [dict(M=64, N=64), dict(M=70, N=45), dict(M=20, N=100)]),
    # The same handover in a loop with no other shared writes: its barriers split (the other
    # warpgroup arrives where it has nothing to read, lower/SplitBarriers.cpp).
    "gemm_thread_subset_steps": ("../tests/gpu/ops/gemm_thread_subset.tl", "gemm_thread_subset_steps", [],
                                 ref.gemm_thread_subset, {"block_N": 32, "steps": 3},
                                 [dict(M=64, N=32), dict(M=70, N=20), dict(M=20, N=100)]),
    # A copy between fragments of different layouts (through shared memory).
    "fragment_convert": ("../tests/gpu/ops/fragment_convert.tl", "fragment_convert", [], ref.fragment_convert, {},
                         [dict(M=64, K=32), dict(M=100, K=72)]),
    # gemm with B in registers (tl::gemm_sr): 5 warps of 16 columns over 48 x 80 tiles, B copied
    # into the fragment and computed there by a parallel loop; partial tiles in M, N and K
    # (K = 112: two k steps of 48 and a partial one, pipelined). And A and B in registers
    # (tl::gemm_rr) in a block of one warp (one wave on gfx9).
    "gemm_sr": ("../tests/gpu/ops/gemm_sr.tl", "gemm_sr", [], ref.gemm_sr, {},
                [dict(M=48, N=80, K=48), dict(M=100, N=150, K=112), dict(M=17, N=37, K=40)]),
    "gemm_sr_bf16": ("../tests/gpu/ops/gemm_sr.tl", "gemm_sr", ["dtype=bf16"], ref.gemm_sr, {},
                     [dict(M=61, N=90, K=100)]),
    # B dequantized in registers with A in an annotated layout (the offset functor's path of
    # tl::gemm_sr_runs), two m16 tiles per warp, runs of 16 and (block_K = 32) of 8.
    "gemm_sr_runs": ("../tests/gpu/ops/gemm_sr_runs.tl", "gemm_sr_runs", [], ref.dequant_gemm_w4a16, {},
                     [dict(M=33, N=40, K=96), dict(M=5, N=17, K=64), dict(M=64, N=16, K=160)]),
    "gemm_sr_runs_k32": ("../tests/gpu/ops/gemm_sr_runs.tl", "gemm_sr_runs", ["block_K=32", "dtype=bf16"],
                         ref.dequant_gemm_w4a16, {}, [dict(M=31, N=24, K=96)]),
    # The warps split K (4 one-warp groups; transposed over 4 groups), the accumulator's partial
    # sums copied straight into global memory or through a shared tile.
    "gemm_sr_split": ("../tests/gpu/ops/gemm_sr_split.tl", "gemm_sr_split", [], ref.dequant_gemm_w4a16, {},
                      [dict(M=17, N=13, K=288), dict(M=1, N=40, K=1024)]),
    "gemm_sr_split_t": ("../tests/gpu/ops/gemm_sr_split.tl", "gemm_sr_split",
                        ["block_N=16", "block_M=8", "staged=true", "dtype=bf16", "block_K=512"],
                        ref.dequant_gemm_w4a16, {}, [dict(M=9, N=20, K=576), dict(M=3, N=16, K=128)]),
    "gemm_rr": ("../tests/gpu/ops/gemm_rr.tl", "gemm_rr", [], ref.gemm_sr, {},
                [dict(M=32, N=32, K=32), dict(M=45, N=70, K=72)]),
    # Packed i4/u4 tensors (tests/gpu/ops/packed_i4.tl, packed_u4.tl): copies of their bytes through shared
    # memory (pipelined) and fragments, dequant_i4 of an i4 tile in both, element reads. Rows
    # past N, K off block_K, rows of an odd number of bytes (K = 54) and 16-byte rows (K = 128).
    "packed_i4": ("../tests/gpu/ops/packed_i4.tl", "packed_i4", [], ref.packed_i4, {},
                  [dict(N=45, K=150), dict(N=32, K=128), dict(N=7, K=54)]),
    "packed_i4_bf16": ("../tests/gpu/ops/packed_i4.tl", "packed_i4", ["dtype=bf16", "stages=3"], ref.packed_i4, {},
                       [dict(N=40, K=200)]),
    "packed_u4": ("../tests/gpu/ops/packed_u4.tl", "packed_u4", ["dtype=bf16"], ref.packed_u4, {},
                  [dict(N=45, K=150), dict(N=64, K=64)]),
    # dequant_i4 with zero points and u4 weights (tests/gpu/ops/dequant_zp.tl), exact (the
    # reference rounds as the kernel does): rows past N, K off block_K; u4 with zeros in f16 and
    # bf16, i4 with zeros nibble by nibble in registers (block_K 16), u4 without zeros.
    "dequant_zp": ("../tests/gpu/ops/dequant_zp.tl", "dequant_zp", [], ref.dequant_zp, EXACT_ZP,
                   [dict(N=45, K=160), dict(N=32, K=128), dict(N=7, K=96)]),
    "dequant_zp_bf16": ("../tests/gpu/ops/dequant_zp.tl", "dequant_zp", ["dtype=bf16", "stages=3"], ref.dequant_zp,
                        dict(EXACT_ZP, dtype="bf16"), [dict(N=40, K=192), dict(N=9, K=64)]),
    "dequant_zp_i4": ("../tests/gpu/ops/dequant_zp.tl", "dequant_zp", ["qtype=i4", "block_K=16", "group_size=8"],
                      ref.dequant_zp, EXACT_ZP, [dict(N=45, K=40), dict(N=32, K=16)]),
    "dequant_zp_none": ("../tests/gpu/ops/dequant_zp.tl", "dequant_zp", ["dtype=bf16", "zero_points=false"],
                        ref.dequant_zp, dict(EXACT_ZP, dtype="bf16", zero_points=False),
                        [dict(N=45, K=96), dict(N=64, K=64)]),
    # f4e2m1 (FP4) weights (tests/gpu/ops/dequant_fp4.tl), exact: scaled in f16 (groups of 32)
    # and bf16 (groups of 16), nibble by nibble in registers (block_K 16), element reads, copies.
    "dequant_fp4": ("../tests/gpu/ops/dequant_fp4.tl", "dequant_fp4", [], ref.dequant_fp4, EXACT_ZP,
                    [dict(N=45, K=160), dict(N=32, K=128), dict(N=7, K=96)]),
    "dequant_fp4_bf16": ("../tests/gpu/ops/dequant_fp4.tl", "dequant_fp4", ["dtype=bf16", "group_size=16"],
                         ref.dequant_fp4, dict(EXACT_ZP, dtype="bf16"), [dict(N=40, K=192), dict(N=9, K=64)]),
    "dequant_fp4_k16": ("../tests/gpu/ops/dequant_fp4.tl", "dequant_fp4", ["block_K=16", "group_size=8", "scaled=false"],
                        ref.dequant_fp4, dict(EXACT_ZP, scaled=False), [dict(N=45, K=40), dict(N=32, K=16)]),
    # Zero points packed as u4 (two per byte along the groups, GPTQ/AWQ's storage): the shared
    # path, and the register path nibble by nibble (block_K 16, groups of 8).
    "dequant_zp_u4z": ("../tests/gpu/ops/dequant_zp.tl", "dequant_zp", ["ztype=u4"], ref.dequant_zp, EXACT_ZP,
                       [dict(N=45, K=128), dict(N=7, K=64)]),
    "dequant_zp_u4z_k16": ("../tests/gpu/ops/dequant_zp.tl", "dequant_zp",
                           ["ztype=u4", "qtype=i4", "block_K=16", "group_size=8", "dtype=bf16"], ref.dequant_zp,
                           dict(EXACT_ZP, dtype="bf16"), [dict(N=45, K=48), dict(N=32, K=16)]),
    # Scales and zero points stored [K / group_size, N] (transpose_scales), as GPTQ and AWQ
    # store them: f16 with zero points packed two per byte along N, bf16 with i4 weights nibble
    # by nibble (block_K 16, groups of 8) and unpacked zero points; N even for the packed ones.
    "dequant_zp_t": ("../tests/gpu/ops/dequant_zp.tl", "dequant_zp", ["tscales=true", "ztype=u4"], ref.dequant_zp,
                     dict(EXACT_ZP, tscales=True), [dict(N=46, K=128), dict(N=8, K=64)]),
    "dequant_zp_t_k16": ("../tests/gpu/ops/dequant_zp.tl", "dequant_zp",
                         ["tscales=true", "qtype=i4", "block_K=16", "group_size=8", "dtype=bf16"], ref.dequant_zp,
                         dict(EXACT_ZP, dtype="bf16", tscales=True), [dict(N=45, K=48), dict(N=32, K=16)]),
    # Defaults that compare sizes with constants (tests/emulator/size_defaults.tl): the launcher
    # dispatches on N and M to one of three variants; the kernel writes which one ran.
    "size_defaults": ("../tests/emulator/size_defaults.tl", "size_defaults", [], ref.size_defaults, {},
                      [dict(N=100, M=2), dict(N=101, M=2), dict(N=101, M=3), dict(N=300, M=4),
                       dict(N=1, M=3), dict(N=1000, M=3)]),
    "gemv": ("gemv.tl", "gemv", ["block_K=128"], ref.gemv, {},
             [dict(M=8, K=128), dict(M=21, K=300), dict(M=3, K=77)]),
    # The row kernels with rows of up to 512 columns read once (64 threads: one 8-element
    # vector each): a whole row in 16-byte vectors, a ragged one element by element, and three
    # tiles in two passes (16-byte aligned rows, a 16-column tail).
    "softmax": ("softmax.tl", "softmax", ["block_N=512", "threads=64"], ref.softmax, {},
                [dict(M=4, N=512), dict(M=7, N=300), dict(M=2, N=1040)]),
    "log_softmax": ("log_softmax.tl", "log_softmax", ["block_N=512", "threads=64"], ref.log_softmax, {},
                    [dict(M=4, N=512), dict(M=7, N=300), dict(M=2, N=1040)]),
    "rmsnorm": ("rmsnorm.tl", "rmsnorm", ["block_N=512", "threads=64"], ref.rmsnorm, {"eps": 1e-6},
                [dict(M=4, N=512), dict(M=7, N=300), dict(M=2, N=1040)]),
    "layernorm": ("layernorm.tl", "layernorm", ["block_N=512", "threads=64"], ref.layernorm, {"eps": 1e-5},
                  [dict(M=4, N=512), dict(M=7, N=300), dict(M=2, N=1040)]),
    "swiglu": ("swiglu.tl", "swiglu", [], ref.swiglu, {},
               [dict(M=16, N=256), dict(M=19, N=300), dict(M=5, N=40)]),
    "flash_attention": ("flash_attention.tl", "flash_attention",
                        ["block_M=64", "block_N=64", "threads=128", "dim=64"], ref.flash_attention, {},
                        [dict(batch=1, seq_len=64, heads=1), dict(batch=1, seq_len=100, heads=2),
                         dict(batch=2, seq_len=37, heads=1)]),
    "flash_attention_causal": ("flash_attention.tl", "flash_attention",
                               ["block_M=64", "block_N=64", "threads=128", "dim=64", "causal=true"],
                               ref.flash_attention, {"causal": True},
                               [dict(batch=1, seq_len=64, heads=1), dict(batch=1, seq_len=100, heads=1),
                                dict(batch=1, seq_len=37, heads=2)]),
    "flash_attention_causal_persistent": ("flash_attention.tl", "flash_attention",
                                          ["block_M=64", "block_N=64", "threads=128", "dim=64", "causal=true",
                                           "persist=true"],
                                          ref.flash_attention, {"causal": True},
                                          [dict(batch=2, seq_len=150, heads=2)]),
    # FlashAttention-3's ping-pong (two warpgroups taking turns on barrier_wait/arrive) without
    # a pipeline: the barrier before Q @ K^T's read of K_s goes before the turn's wait (inside
    # it, one warpgroup waited there for the other's hand-over: a deadlock, GPU run 170).
    "flash_attention_ping_pong_one_stage": ("flash_attention.tl", "flash_attention",
                                            ["block_M=128", "block_N=64", "threads=256", "dim=64", "causal=true",
                                             "stages=1", "ping_pong=true"],
                                            ref.flash_attention, {"causal": True},
                                            [dict(batch=1, seq_len=81, heads=2), dict(batch=1, seq_len=200, heads=1)]),
    # samples/flash_attention_bwd.tl, kernel by kernel (-D KERNEL.knob: the file's kernels have
    # different tiles). The backward runs on random LSE and Delta (its reference applies the
    # same formulas to them) into a zeroed dQ_accum, as the preprocess leaves it; keys and
    # queries past a 64-key or 32-query tile must add nothing.
    "flash_attention_fwd_lse": ("flash_attention_bwd.tl", "flash_attention_fwd_lse",
                                ["flash_attention_fwd_lse.block_M=64", "flash_attention_fwd_lse.block_N=64",
                                 "flash_attention_fwd_lse.threads=128", "dim=64", "causal=true"],
                                ref.flash_attention_fwd_lse, {"causal": True},
                                [dict(batch=1, seq_len=100, heads=2), dict(batch=2, seq_len=37, heads=1)]),
    "flash_attention_bwd_preprocess": ("flash_attention_bwd.tl", "flash_attention_bwd_preprocess", ["dim=64"],
                                       ref.flash_attention_bwd_preprocess, {},
                                       [dict(batch=1, seq_len=64, heads=2), dict(batch=2, seq_len=37, heads=3)]),
    "flash_attention_bwd": ("flash_attention_bwd.tl", "flash_attention_bwd",
                            ["flash_attention_bwd.block_N=64", "flash_attention_bwd.threads=128", "dim=64"],
                            ref.flash_attention_bwd, {"tolerance": BWD_TOLERANCE},
                            [dict(batch=1, seq_len=64, heads=1), dict(batch=1, seq_len=100, heads=2),
                             dict(batch=2, seq_len=37, heads=1)]),
    "flash_attention_bwd_causal": ("flash_attention_bwd.tl", "flash_attention_bwd",
                                   ["flash_attention_bwd.block_N=64", "flash_attention_bwd.threads=128", "dim=64",
                                    "causal=true"],
                                   ref.flash_attention_bwd, {"causal": True, "tolerance": BWD_TOLERANCE},
                                   [dict(batch=1, seq_len=100, heads=1), dict(batch=2, seq_len=37, heads=2)]),
    # The deterministic form: the key-block kernel without dQ (dQ_accum stays as it started, 0),
    # and the query-block kernel that writes dQ once (its output starts as NaN: every element
    # must be written, rows past seq_len excepted).
    "flash_attention_bwd_dkdv": ("flash_attention_bwd.tl", "flash_attention_bwd",
                                 ["flash_attention_bwd.block_N=64", "flash_attention_bwd.threads=128", "dim=64",
                                  "flash_attention_bwd.atomic_dq=false"],
                                 ref.flash_attention_bwd_dkdv, {"tolerance": BWD_TOLERANCE},
                                 [dict(batch=1, seq_len=100, heads=2), dict(batch=2, seq_len=37, heads=1)]),
    "flash_attention_bwd_dq": ("flash_attention_bwd.tl", "flash_attention_bwd_dq",
                               ["flash_attention_bwd_dq.block_M=32", "flash_attention_bwd_dq.block_N=32",
                                "flash_attention_bwd_dq.threads=64", "dim=64"],
                               ref.flash_attention_bwd_dq, {"tolerance": BWD_TOLERANCE},
                               [dict(batch=1, seq_len=64, heads=1), dict(batch=1, seq_len=100, heads=2),
                                dict(batch=2, seq_len=37, heads=1)]),
    "flash_attention_bwd_dq_causal": ("flash_attention_bwd.tl", "flash_attention_bwd_dq",
                                      ["flash_attention_bwd_dq.block_M=32", "flash_attention_bwd_dq.block_N=32",
                                       "flash_attention_bwd_dq.threads=64", "dim=64", "causal=true"],
                                      ref.flash_attention_bwd_dq, {"causal": True, "tolerance": BWD_TOLERANCE},
                                      [dict(batch=1, seq_len=100, heads=1), dict(batch=2, seq_len=37, heads=2)]),
    # Split-KV decoding, the last split of each block of a KV head's heads combining the
    # splits (last_block; Done starts at 0, COUNTERS): splits with no key (300 keys are 5
    # tiles for 4 splits, dealt 2 at a time; 50 keys one tile), a query head per KV head,
    # 80 heads in 3 blocks of 32 (3 counters) combined 3 rows at a time, and one split (no
    # combine: the block writes O itself and leaves Done alone).
    "flash_decoding": ("flash_decoding.tl", "flash_decoding", ["dim=64", "num_splits=4"], ref.flash_decoding,
                       {"scratch": ("Partial", "LSE")},
                       [dict(batch=1, heads=8, kv_heads=2, seqlen=300), dict(batch=2, heads=4, kv_heads=4, seqlen=50),
                        dict(batch=1, heads=2, kv_heads=1, seqlen=1)]),
    "flash_decoding_h32": ("flash_decoding.tl", "flash_decoding",
                           ["dim=64", "num_splits=3", "block_H=32", "threads=64", "combine_rows=3"],
                           ref.flash_decoding, {"scratch": ("Partial", "LSE"), "block_H": 32},
                           [dict(batch=1, heads=80, kv_heads=1, seqlen=200), dict(batch=2, heads=6, kv_heads=2, seqlen=130)]),
    "flash_decoding_one_split": ("flash_decoding.tl", "flash_decoding", ["dim=64", "fill_blocks=1"],
                                 ref.flash_decoding, {"scratch": ("Partial", "LSE")},
                                 [dict(batch=1, heads=4, kv_heads=1, seqlen=100)]),
    "flash_mla_decode": ("flash_mla_decode.tl", "flash_mla_decode",
                         ["block_H=16", "block_N=32", "threads=128", "dim=64", "pe_dim=32"], ref.flash_mla_decode, {},
                         [dict(batch=1, heads=16, seqlen_kv=64, kv_heads=1),
                          dict(batch=1, heads=16, seqlen_kv=45, kv_heads=1),
                          dict(batch=2, heads=8, seqlen_kv=33, kv_heads=1)]),
    # The sample's tiles for the target (max_shared_bytes()): on sm_80 32 heads and 32 cache
    # entries per step on 128 threads, on gfx9 16 heads.
    "flash_mla_decode_target_tiles": ("flash_mla_decode.tl", "flash_mla_decode", ["dim=64", "pe_dim=32"],
                                      ref.flash_mla_decode, {},
                                      [dict(batch=1, heads=32, seqlen_kv=64, kv_heads=1),
                                       dict(batch=2, heads=40, seqlen_kv=45, kv_heads=1)]),
    "attention_sink": ("attention_sink.tl", "attention_sink",
                       ["block_M=64", "block_N=64", "threads=128", "dim=64"], ref.attention_sink, {},
                       [dict(batch=1, heads=2, kv_heads=1, seq_len=64), dict(batch=1, heads=2, kv_heads=2, seq_len=50),
                        dict(batch=2, heads=4, kv_heads=2, seq_len=20)]),
    "block_sparse_attention": ("block_sparse_attention.tl", "block_sparse_attention",
                               ["block_M=64", "block_N=32", "threads=128", "dim=64"], ref.block_sparse_attention,
                               {"block_M": 64, "block_N": 32},
                               [dict(batch=1, seq_len=64, heads=1, q_blocks=1, k_blocks=2),
                                dict(batch=1, seq_len=100, heads=2, q_blocks=2, k_blocks=4),
                                dict(batch=1, seq_len=70, heads=1, q_blocks=1, k_blocks=2)]),
    # The index tables are not random data: each shape's come from tests/gpu/vertical_slash.py
    # (INDEXED below), with slash blocks sticking out of both ends of the sequence, verticals
    # the blocks cover dropped, one query block with no key at all and PAD entries past the
    # counts.
    "vertical_slash_attention": ("vertical_slash_attention.tl", "vertical_slash_attention",
                                 ["block_M=32", "block_N=32", "threads=64", "dim=64"],
                                 ref.vertical_slash_attention,
                                 {"block_M": 32, "block_N": 32, "verticals": 12, "slashes": 3},
                                 [dict(batch=1, seq_len=100, heads=2), dict(batch=2, seq_len=64, heads=1)]),
    "conv2d": ("conv2d.tl", "conv2d", ["block_M=64", "block_N=64", "block_K=32", "threads=128"], ref.conv2d, {},
               [dict(N=1, H=8, W=8, C=32, F=64), dict(N=1, H=5, W=7, C=16, F=24), dict(N=2, H=3, W=4, C=8, F=8)]),
    # im2col at stride 2 (3x3, pad 1; and 1x1 without padding): output pixels that skip input
    # columns and rows, odd maps, and C = 20 (rows not 16-byte aligned: the element-by-element
    # instantiation) beside C = 16 (16-byte cp.async).
    "conv2d_s2": ("conv2d.tl", "conv2d", ["block_M=64", "block_N=64", "block_K=32", "threads=128", "stride=2"],
                  ref.conv2d, {"stride": 2, "pad": 1},
                  [dict(N=1, H=9, W=7, C=20, F=16), dict(N=2, H=6, W=5, C=16, F=8)]),
    "conv2d_1x1s2": ("conv2d.tl", "conv2d",
                     ["block_M=64", "block_N=64", "block_K=32", "threads=128", "kh=1", "kw=1", "stride=2", "pad=0"],
                     ref.conv2d, {"stride": 2, "pad": 0},
                     [dict(N=1, H=9, W=7, C=20, F=16), dict(N=3, H=8, W=6, C=16, F=8)]),
    # Taps and channels folded into one K (`fold`, the default where C is not a multiple of 8):
    # im2col's column form for the filters and the images, each thread a run of columns of one
    # row (256 threads: two per 128-row tile; 64 threads: two rows of 64 per thread) stepping a
    # tap cursor, staged through registers in the pipeline. C = 1, 3 and 5 (runs that cross
    # several taps), K = 27 and 45 within one 32-column step or across two, F past the tile; C = 6
    # and 20, whose runs load 2 and 4 columns at a time (C and the strides multiples of them).
    "conv2d_fold": ("conv2d.tl", "conv2d", ["block_M=128", "block_N=64", "block_K=32", "threads=256", "stages=3"],
                    ref.conv2d, {},
                    [dict(N=2, H=7, W=9, C=3, F=10), dict(N=1, H=12, W=11, C=5, F=70), dict(N=3, H=4, W=5, C=1, F=8),
                     dict(N=1, H=6, W=5, C=6, F=12), dict(N=1, H=5, W=4, C=20, F=9)]),
    # An empty channel dimension (C = 0, folded by default: C <= 16): no K step at all, every
    # output 0 (the outputs start as NaN), and the tap cursor never divides by C.
    "conv2d_fold_c0": ("conv2d.tl", "conv2d", ["block_M=128", "block_N=64", "block_K=32", "threads=256", "stages=3"],
                       ref.conv2d, {}, [dict(N=1, H=5, W=4, C=0, F=9), dict(N=2, H=3, W=3, C=0, F=70)]),
    "conv2d_fold_t64": ("conv2d.tl", "conv2d",
                        ["block_M=128", "block_N=32", "block_K=16", "threads=64", "stages=2", "stride=2"],
                        ref.conv2d, {"stride": 2, "pad": 1},
                        [dict(N=2, H=9, W=8, C=3, F=20), dict(N=1, H=11, W=6, C=7, F=33)]),
    # ResNet's stem: 7x7, stride 2, pad 3 over C = 3 (K = 147: five 32-column steps).
    "conv2d_fold_7x7": ("conv2d.tl", "conv2d",
                        ["block_M=64", "block_N=64", "block_K=32", "threads=128", "kh=7", "kw=7", "stride=2",
                         "pad=3"],
                        ref.conv2d, {"stride": 2, "pad": 3},
                        [dict(N=1, H=15, W=13, C=3, F=16), dict(N=2, H=8, W=8, C=2, F=64)]),
    # The folded form where C is a multiple of 8 (`-D fold=true`): 16-byte cp.async of 8 columns
    # in one tap (the aligned instantiation), beside C = 12 (rows not 16-byte aligned).
    "conv2d_fold_aligned": ("conv2d.tl", "conv2d",
                            ["block_M=64", "block_N=64", "block_K=32", "threads=128", "fold=true"],
                            ref.conv2d, {},
                            [dict(N=1, H=6, W=7, C=16, F=24), dict(N=2, H=5, W=5, C=8, F=8),
                             dict(N=1, H=5, W=6, C=12, F=9)]),
    # Split K, pass by pass: 3 splits of a 3x3 filter's 9 x ceil(C / 32) steps (C = 40: the
    # second channel block partial, C = 20: not 16-byte aligned), 4 splits of a 1x1 filter's
    # single step (three slabs of zeros); the sum of 3 slabs with M and F off the tiles.
    "conv2d_splitk": ("conv2d.tl", "conv2d_splitk",
                      ["block_M=64", "block_N=64", "block_K=32", "threads=128", "splits=3"],
                      ref.conv2d_splitk, {"splits": 3, "block_K": 32},
                      [dict(N=1, H=5, W=6, C=40, F=24), dict(N=2, H=3, W=4, C=20, F=8)]),
    "conv2d_splitk_1x1": ("conv2d.tl", "conv2d_splitk",
                          ["block_M=64", "block_N=64", "block_K=32", "threads=128", "splits=4", "kh=1", "kw=1",
                           "pad=0"],
                          ref.conv2d_splitk, {"splits": 4, "block_K": 32, "pad": 0},
                          [dict(N=1, H=5, W=7, C=16, F=24)]),
    "conv2d_splitk_sum": ("conv2d.tl", "conv2d_splitk_sum", ["splits=3"], ref.conv2d_splitk_sum, {},
                          [dict(M=70, F=130), dict(M=5, F=8)]),
    "dequant_gemm_w4a16": ("dequant_gemm_w4a16.tl", "dequant_gemm_w4a16",
                           ["block_M=64", "block_N=64", "block_K=64", "group_size=32", "threads=128"],
                           ref.dequant_gemm_w4a16, {},
                           [dict(M=64, N=64, K=64), dict(M=37, N=72, K=96), dict(M=5, N=20, K=128)]),
    # The GEMV-like tiles of tests/gpu/cases.py's w4a16_*_m16 builds (16 rows, mma.sync): one row,
    # a full tile, and a ragged N.
    # The FP4-weight GEMM (f4e2m1 weights, groups of 32 and 16): prefill and decode tiles.
    # A group of scales spanning two tiles of K (block_K = 32, groups of 64).
    "dequant_gemm_w4a16_k32": ("dequant_gemm_w4a16.tl", "dequant_gemm_w4a16",
                               ["block_M=64", "block_N=64", "block_K=32", "group_size=64", "threads=128"],
                               ref.dequant_gemm_w4a16, {}, [dict(M=37, N=72, K=192)]),
    # The weights dequantized into the gemm's A operand in registers (C^T = W A^T): tiles of
    # two and four warps, groups smaller and larger than block_K, bf16; M, N and K off the tiles.
    "w4a16_wreg": ("dequant_gemm_w4a16_regs.tl", "dequant_gemm_w4a16_regs",
                   ["block_M=32", "block_N=64", "block_K=64", "group_size=32", "threads=128", "tscales=false"],
                   ref.dequant_gemm_w4a16, {},
                   [dict(M=32, N=64, K=64), dict(M=37, N=72, K=96), dict(M=5, N=20, K=128)]),
    # Scales stored [K / group_size, N] (tscales, the default; the two cases above store them
    # [N, K / group_size]): a group per tile and a group spanning two.
    "w4a16_wreg_ts": ("dequant_gemm_w4a16_regs.tl", "dequant_gemm_w4a16_regs",
                      ["block_M=32", "block_N=64", "block_K=64", "group_size=32", "threads=128", "tscales=true"],
                      ref.dequant_gemm_w4a16, {"tscales": True},
                      [dict(M=37, N=72, K=96), dict(M=5, N=20, K=128)]),
    "w4a16_wreg_ts_k32": ("dequant_gemm_w4a16_regs.tl", "dequant_gemm_w4a16_regs",
                          ["block_M=16", "block_N=32", "block_K=32", "group_size=64", "threads=64",
                           "stages=2", "tscales=true"],
                          ref.dequant_gemm_w4a16, {"tscales": True}, [dict(M=17, N=40, K=192)]),
    "w4a16_wreg_bf16": ("dequant_gemm_w4a16_regs.tl", "dequant_gemm_w4a16_regs",
                        ["block_M=16", "block_N=32", "block_K=32", "group_size=64", "threads=64",
                         "stages=2", "dtype=bf16", "tscales=false"],
                        ref.dequant_gemm_w4a16, {},
                        [dict(M=17, N=40, K=192), dict(M=1, N=32, K=64)]),
    "dequant_gemm_fp4": ("dequant_gemm_fp4.tl", "dequant_gemm_fp4",
                         ["block_M=64", "block_N=64", "block_K=64", "threads=128"], ref.dequant_gemm_fp4, {},
                         [dict(M=64, N=64, K=64), dict(M=37, N=72, K=96), dict(M=5, N=20, K=128)]),
    "dequant_gemm_fp4_dec": ("dequant_gemm_fp4.tl", "dequant_gemm_fp4",
                             ["block_M=16", "block_N=32", "block_K=256", "group_size=16", "stages=3",
                              "threads=128", "dtype=bf16"], ref.dequant_gemm_fp4, {},
                             [dict(M=1, N=40, K=288), dict(M=16, N=72, K=544)]),
    "dequant_gemm_w4a16_m16": ("dequant_gemm_w4a16.tl", "dequant_gemm_w4a16",
                               ["block_M=16", "block_N=64", "block_K=128", "group_size=32", "stages=4",
                                "threads=128"],
                               ref.dequant_gemm_w4a16, {},
                               [dict(M=1, N=64, K=256), dict(M=16, N=128, K=128), dict(M=5, N=40, K=96)]),
    # The decode tiles of tests/gpu/cases.py's w4a16_*_dec builds, narrowed (block_K 256, not 512)
    # to keep the emulator fast, in bf16 (dequant_i4's bf16 magic number): K off block_K, M = 1, 3
    # and 16, N off the tiles.
    "dequant_gemm_w4a16_dec": ("dequant_gemm_w4a16.tl", "dequant_gemm_w4a16",
                               ["block_M=16", "block_N=32", "block_K=256", "group_size=32", "stages=3",
                                "threads=128", "dtype=bf16"],
                               ref.dequant_gemm_w4a16, {},
                               [dict(M=1, N=40, K=288), dict(M=3, N=32, K=256), dict(M=16, N=72, K=544)]),
    # The decode GEMV on the same weights and reference: weights unpacked in registers
    # (dequant_i4 on fragments), narrowed tiles (4 x 128 over 64 threads: one 32-bit word per
    # thread); M = 1, 3 and 16, N off the tiles, K off block_K; f16 and bf16.
    "dequant_gemv_w4a16": ("dequant_gemv_w4a16.tl", "dequant_gemv_w4a16",
                           ["block_N=4", "block_K=128", "group_size=32", "threads=64"],
                           ref.dequant_gemm_w4a16, {},
                           [dict(M=1, N=40, K=96), dict(M=3, N=13, K=128), dict(M=16, N=9, K=288)]),
    "dequant_gemv_w4a16_bf16": ("dequant_gemv_w4a16.tl", "dequant_gemv_w4a16",
                                ["block_N=8", "block_K=256", "group_size=64", "threads=64", "dtype=bf16"],
                                ref.dequant_gemm_w4a16, {},
                                [dict(M=1, N=17, K=192), dict(M=16, N=8, K=256)]),
    # The tensor-core GEMV on the same weights and reference: weights unpacked in registers and
    # read by mma.sync in their K runs (gemm_sr_runs), narrowed tiles (16 x 128 over 64 threads:
    # one 32-column run per thread); M = 1, 3, 17 (two row tiles), N off the tiles, K off
    # block_K; f16 and bf16, runs of 32, 16 (block_K = 64) and 8 (block_K = 32, one warp).
    "dequant_gemv_w4a16_tc": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                              ["block_K=128", "group_size=32", "threads=64"],
                              ref.dequant_gemm_w4a16, {},
                              [dict(M=1, N=40, K=96), dict(M=3, N=13, K=128), dict(M=17, N=9, K=288)]),
    "dequant_gemv_w4a16_tc_bf16": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                                   ["block_K=64", "group_size=32", "threads=64", "dtype=bf16"],
                                   ref.dequant_gemm_w4a16, {},
                                   [dict(M=1, N=17, K=192), dict(M=16, N=8, K=256)]),
    # 16 weight rows per warp (block_N = threads / 2): the product computed transposed, the
    # weights as the mma's A operand (gemm_sr_runs_t); 8 and 16 rows of A per block.
    "dequant_gemv_w4a16_tct": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                               ["block_K=128", "group_size=32", "threads=64", "block_N=32", "block_M=8"],
                               ref.dequant_gemm_w4a16, {},
                               [dict(M=1, N=40, K=96), dict(M=9, N=70, K=128), dict(M=3, N=33, K=288)]),
    "dequant_gemv_w4a16_tct_m16": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                                   ["block_K=64", "group_size=32", "threads=32", "block_N=16", "dtype=bf16"],
                                   ref.dequant_gemm_w4a16, {},
                                   [dict(M=17, N=20, K=192), dict(M=16, N=16, K=64)]),
    # Fewer weight rows than 8 (16) per warp: groups of warps split K (runs of 16 and 32 columns
    # in each group's slice), their partial sums added by the copy out of `acc`.
    "dequant_gemv_w4a16_tcs": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                               ["block_K=256", "group_size=32", "threads=128", "block_N=8"],
                               ref.dequant_gemm_w4a16, {},
                               [dict(M=1, N=13, K=288), dict(M=17, N=8, K=512), dict(M=3, N=40, K=96)]),
    "dequant_gemv_w4a16_tcts": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                                ["block_K=512", "group_size=64", "threads=128", "block_N=16", "block_M=8"],
                                ref.dequant_gemm_w4a16, {},
                                [dict(M=1, N=20, K=576), dict(M=9, N=16, K=1024), dict(M=3, N=33, K=128)]),
    "dequant_gemv_w4a16_tcts_w2": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                                   ["block_K=256", "group_size=32", "threads=256", "block_N=32", "dtype=bf16"],
                                   ref.dequant_gemm_w4a16, {},
                                   [dict(M=17, N=40, K=320), dict(M=2, N=64, K=256)]),
    # Thread counts that are no power of two: 3 warp columns of 16 rows over 2 groups (K slices of
    # 480 columns: runs of 8), and one warp column over 5 groups.
    "dequant_gemv_w4a16_tcts_odd": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                                    ["block_K=960", "group_size=32", "threads=192", "block_N=48", "block_M=8"],
                                    ref.dequant_gemm_w4a16, {},
                                    [dict(M=9, N=50, K=1952), dict(M=1, N=48, K=960)]),
    "dequant_gemv_w4a16_tcts_5": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                                  ["block_K=640", "group_size=32", "threads=160", "block_N=16", "block_M=8"],
                                  ref.dequant_gemm_w4a16, {}, [dict(M=3, N=17, K=1280)]),
    # The staged form (samples/dequant_gemv_w4a16_tcs.tl: the weights through a cp.async ring
    # in shared memory): its defaults' two variants, dispatched on N (32 rows on 8 warps in 4
    # K groups below 8192 rows; 64 rows transposed from 8192: too large here, so pinned small:
    # 16 rows per warp on two warps), K off the steps, M over two row tiles.
    "dequant_gemv_w4a16_staged": ("dequant_gemv_w4a16_tcs.tl", "dequant_gemv_w4a16_tcs",
                                  ["group_size=32"], ref.dequant_gemm_w4a16, {},
                                  [dict(M=1, N=40, K=1088), dict(M=9, N=33, K=128)]),
    "dequant_gemv_w4a16_staged_t": ("dequant_gemv_w4a16_tcs.tl", "dequant_gemv_w4a16_tcs",
                                    ["group_size=32", "block_K=128", "threads=64", "block_N=32", "stages=3"],
                                    ref.dequant_gemm_w4a16, {},
                                    [dict(M=1, N=70, K=416), dict(M=3, N=32, K=96)]),
    # Groups of 128 and 256 columns, whole chunks of the transposed K runs (4 x 32 columns): the
    # gemm scales each chunk's sums and the weights convert unscaled (infer/ScaleFolding.cpp);
    # K past the last step's end (640 = 2.5 steps of 256) reads zero weights and zero scales.
    "dequant_gemv_w4a16_staged_g128": ("dequant_gemv_w4a16_tcs.tl", "dequant_gemv_w4a16_tcs",
                                       ["group_size=128", "block_K=256", "threads=64", "block_N=32", "stages=3"],
                                       ref.dequant_gemm_w4a16, {},
                                       [dict(M=1, N=70, K=640), dict(M=9, N=33, K=256)]),
    "dequant_gemv_w4a16_staged_g256_bf16": ("dequant_gemv_w4a16_tcs.tl", "dequant_gemv_w4a16_tcs",
                                            ["group_size=256", "block_K=512", "threads=128", "block_N=64",
                                             "stages=2", "dtype=bf16"],
                                            ref.dequant_gemm_w4a16, {},
                                            [dict(M=2, N=64, K=1536), dict(M=1, N=100, K=512)]),
    "dequant_gemv_w4a16_tc_k32": ("dequant_gemv_w4a16_tc.tl", "dequant_gemv_w4a16_tc",
                                  ["block_K=32", "group_size=32", "threads=32"],
                                  ref.dequant_gemm_w4a16, {},
                                  [dict(M=2, N=9, K=96), dict(M=16, N=8, K=32)]),
    # The routing tables are not random data: each shape's come from references.moe_align
    # (ROUTED below), written as raw i32 files and read with --input.
    "fused_moe": ("fused_moe.tl", "fused_moe",
                  ["block_M=16", "block_N=32", "block_K=32", "threads=128", "topk=2", "mul_routed_weight=true"],
                  ref.fused_moe, {"topk": 2, "block_M": 16, "weighted": True},
                  [dict(T=5, K=40, E=4, N=24), dict(T=3, K=20, E=3, N=40), dict(T=16, K=64, E=2, N=32)]),
    "fused_moe_m64": ("fused_moe.tl", "fused_moe", ["block_M=64", "block_N=64", "block_K=32", "topk=3"],
                      ref.fused_moe, {"topk": 3, "block_M": 64},
                      [dict(T=30, K=48, E=5, N=72), dict(T=2, K=16, E=8, N=8)]),
    # Expert parallelism: experts 1 and 3 are another rank's (their blocks' expert id is -1),
    # so their rows must be written as zeros (the outputs start as NaN).
    "fused_moe_ep": ("fused_moe.tl", "fused_moe", ["block_M=16", "block_N=32", "block_K=32", "topk=2"],
                     ref.fused_moe, {"topk": 2, "block_M": 16, "absent": (1, 3)},
                     [dict(T=9, K=24, E=4, N=40)]),
    # samples/chunk_gated_delta.tl kernel by kernel, on inputs the kernel requires (L2-normalised
    # keys, decays g <= 0, beta in (0, 1): write_gated_delta below, through --input): one chunk,
    # and two or three with the last partial (the third chunk sees a state decayed twice). The
    # second kernel reads the first's Gc, W and U as the float64 reference computes them,
    # rounded, and its own reference is the chunked formula on what it read. sm_80 only
    # (CMakeLists.txt): the f32 (TF32) gemms have no MFMA lowering.
    "gated_delta_prepare": ("chunk_gated_delta.tl", "gated_delta_prepare", ["dk=64", "dv=32"],
                            ref.gated_delta_prepare, {"dk": 64, "dv": 32},
                            [dict(batch=1, seq_len=100, heads=2), dict(batch=2, seq_len=64, heads=1)]),
    "gated_delta_output": ("chunk_gated_delta.tl", "gated_delta_output", ["dk=64", "dv=64", "block_V=32"],
                           ref.gated_delta_output, {"dk": 64, "dv": 64},
                           [dict(batch=1, seq_len=150, heads=2), dict(batch=2, seq_len=64, heads=1)]),
}

# Cases whose kernels read a routing (samples/fused_moe.tl): the tables of each shape, and the
# shape symbol EM (their length).
ROUTED = {"fused_moe", "fused_moe_m64", "fused_moe_ep"}

# Cases whose kernel accumulates into its outputs (atomic_add into dQ_accum): they start at 0.
ZERO_OUTPUTS = {"flash_attention_bwd", "flash_attention_bwd_causal", "flash_attention_bwd_dkdv"}

# The counters of `if last_block(Counter[...], n)` by kernel: a function of the shape and the
# case's reference parameters giving each counter tensor's element count. The caller must give
# them zero-filled (docs/language.md), so they are read from a file of zeros (--input) rather
# than left to the driver's initial outputs; the reference expects them 0 again afterwards.
COUNTERS = {"last_block": lambda shape, params: {"Done": shape["M"]},
            # One counter per block of block_H query heads of each KV head, per sequence.
            "flash_decoding": lambda s, p: {"Done": s["batch"] * s["kv_heads"] * -(-(s["heads"] // s["kv_heads"])
                                                                                   // p.get("block_H", 64))}}


def counter_inputs(kernel, directory, shape, params):
    """The --input arguments that give `kernel`'s counters (COUNTERS) as zeros (i32)."""
    args = []
    for name, elements in sorted(COUNTERS.get(kernel, lambda s, p: {})(shape, params).items()):
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, name + ".zeros.i32")
        with open(path, "wb") as f:
            f.write(bytes(4 * elements))
        args += ["--input", "%s=%s" % (name, path)]
    return args


def write_routing(directory, shape, params, seed):
    """The --input and --shape arguments of a routed case's shape."""
    sorted_ids, expert_ids, used = ref.moe_align(shape["T"], shape["E"], params["topk"], params["block_M"], seed,
                                                 params.get("absent", ()))
    os.makedirs(directory, exist_ok=True)
    args = ["--shape", "EM=%d" % len(sorted_ids)]
    for name, values in (("SortedIds", sorted_ids), ("ExpertIds", expert_ids), ("NumPostPadded", used)):
        path = os.path.join(directory, name + ".i32")
        with open(path, "wb") as f:
            f.write(struct.pack("<%di" % len(values), *values))
        args += ["--input", "%s=%s" % (name, path)]
    return args


def write_vs_tables(directory, shape, params, seed):
    """The --input and --shape arguments of a vertical-slash case's shape: random head patterns
    (vertical_slash.pattern; head 1 without the local band), the last query block of the first
    head emptied (its rows see no key and must be written 0)."""
    import random
    import vertical_slash
    rng = random.Random(seed)
    S = shape["seq_len"]
    # Head 1 has no local band, so that verticals right of the diagonal reach the kernel.
    patterns = [[vertical_slash.pattern(S, params["verticals"], params["slashes"], rng, local=h != 1)
                 for h in range(shape["heads"])] for _ in range(shape["batch"])]
    tables = vertical_slash.tables(S, params["block_M"], params["block_N"], patterns)
    q_blocks = tables["BlockCount"][1][2]
    if q_blocks > 1:
        tables["BlockCount"][0][q_blocks - 1] = 0
        tables["ColumnCount"][0][q_blocks - 1] = 0
    os.makedirs(directory, exist_ok=True)
    args = ["--shape", "nnz_s=%d" % tables["BlockOffset"][1][3], "--shape", "nnz_v=%d" % tables["ColumnIndex"][1][3]]
    for name, (values, _) in tables.items():
        path = os.path.join(directory, name + ".i32")
        with open(path, "wb") as f:
            f.write(struct.pack("<%di" % len(values), *values))
        args += ["--input", "%s=%s" % (name, path)]
    return args


def write_gated_delta(directory, shape, params, seed, output_kernel):
    """The gated delta net's inputs as the kernels require them: K rows of unit length, g =
    ln(u) for u uniform in [0.8, 1), beta uniform in (0, 1), as f16 and f32 files; for the second
    kernel Q, K and the first kernel's Gc, W and U (the float64 reference, W and U rounded to
    f16)."""
    import random
    rng = random.Random(seed)
    B, S, H, DK, DV = shape["batch"], shape["seq_len"], shape["heads"], params["dk"], params["dv"]
    unit = []
    for _ in range(B * S * H):
        row = [rng.uniform(-1, 1) for _ in range(DK)]
        norm = math.sqrt(math.fsum(x * x for x in row))
        unit += [x / norm for x in row]
    t = {"K": (unit, (B, S, H, DK)), "V": ([rng.uniform(-1, 1) for _ in range(B * S * H * DV)], (B, S, H, DV)),
         "G": ([math.log(rng.uniform(0.8, 1.0)) for _ in range(B * S * H)], (B, S, H)),
         "Beta": ([rng.uniform(0.01, 0.99) for _ in range(B * S * H)], (B, S, H))}
    files = {"K": "e", "G": "f", "Beta": "f"}
    if output_kernel:
        t["K"] = ([ref._round_f16(x) for x in unit], t["K"][1])
        t["V"] = ([ref._round_f16(x) for x in t["V"][0]], t["V"][1])
        prepared = ref.gated_delta_prepare(t, params)
        t = {"Q": ([rng.uniform(-1, 1) for _ in range(B * S * H * DK)], (B, S, H, DK)), "K": t["K"],
             "Gc": (prepared["Gc"], None), "W": (prepared["W"], None), "U": (prepared["U"], None)}
        files = {"Q": "e", "K": "e", "Gc": "f", "W": "e", "U": "e"}
    os.makedirs(directory, exist_ok=True)
    args = []
    for name, fmt in files.items():
        path = os.path.join(directory, name + ".bin")
        values = t[name][0]
        with open(path, "wb") as f:
            f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
        args += ["--input", "%s=%s" % (name, path)]
    return args


# Cases whose integer inputs are index tables written by a function of the shape (--input), and
# the gated delta net's, whose float inputs must satisfy its contract.
INDEXED = dict({name: write_routing for name in ROUTED}, vertical_slash_attention=write_vs_tables,
               gated_delta_prepare=lambda d, s, p, seed: write_gated_delta(d, s, p, seed, False),
               gated_delta_output=lambda d, s, p, seed: write_gated_delta(d, s, p, seed, True))


# Cases for the gfx9 (HIP) lowering only: what the samples above do not reach there. The 16x16
# MFMA on bf16 (v_mfma_f32_16x16x16bf16_1k): a 32x32 tile over two waves, 32x16 each.
CASES_GFX9 = {
    # B in registers on MFMA (64-lane waves: 160 threads are not whole waves): 2 waves of 32
    # columns on the 32x32x8 MFMA, and 4 waves of 16 columns on the 16x16x16 one (K = 16 per
    # tile, not a multiple of 32); A and B in registers in a block of one wave.
    "gemm_sr_mfma": ("../tests/gpu/ops/gemm_sr.tl", "gemm_sr",
                     ["block_M=32", "block_N=64", "block_K=32", "threads=128"], ref.gemm_sr, {},
                     [dict(M=32, N=64, K=32), dict(M=45, N=100, K=72)]),
    "gemm_sr_mfma16": ("../tests/gpu/ops/gemm_sr.tl", "gemm_sr",
                       ["block_M=16", "block_N=64", "block_K=16", "threads=256", "dtype=bf16"], ref.gemm_sr, {},
                       [dict(M=30, N=70, K=40)]),
    "gemm_rr_wave": ("../tests/gpu/ops/gemm_rr.tl", "gemm_rr", ["threads=64"], ref.gemm_sr, {},
                     [dict(M=45, N=70, K=72)]),
    "gemm_bf16_mfma16": ("gemm.tl", "gemm", ["block_M=32", "block_N=32", "threads=128", "dtype=bf16",
                                             "out_dtype=f32"], ref.gemm, {},
                         [dict(M=32, N=32, K=32), dict(M=45, N=50, K=24), dict(M=7, N=70, K=72)]),
    # K-major A rows of 256 bytes (block_K = 128 f16): the 8-byte swizzle with the unit flip
    # (compiler/ir/LdsBanks.cpp), stored in 8-byte halves, read by the 16x16x16 MFMA.
    "gemm_rows256": ("gemm.tl", "gemm", ["block_M=32", "block_N=32", "block_K=128", "threads=128",
                                         "out_dtype=f32"], ref.gemm, {},
                     [dict(M=32, N=32, K=128), dict(M=45, N=50, K=200), dict(M=7, N=70, K=72)]),
}

# CDNA3 only (gfx940/gfx942): gemm on fp8 through v_mfma_f32_32x32x16_fp8_fp8 (64x64 tiles) and
# v_mfma_f32_16x16x32_bf8_bf8 (32x32 tiles over 2 waves), A K-major and B [K, N] (MN-major, read
# element by element). The inputs are FNUZ bytes (the driver rounds its random floats to the
# grid); the reference decodes them (load) and sums in float64.
CASES_GFX942 = {
    "gemm_fp8": ("gemm.tl", "gemm", ["block_M=64", "block_N=64", "dtype=f8e4m3", "out_dtype=f32"], ref.gemm, {},
                 [dict(M=64, N=64, K=64), dict(M=45, N=100, K=40), dict(M=7, N=70, K=72)]),
    "gemm_bf8_mfma16": ("gemm.tl", "gemm", ["block_M=32", "block_N=32", "threads=128", "dtype=f8e5m2",
                                            "out_dtype=f32"], ref.gemm, {},
                        [dict(M=32, N=32, K=32), dict(M=45, N=50, K=24), dict(M=7, N=70, K=100)]),
    # fp8 rows of 256 bytes (block_K = 256): the flipped 8-byte swizzle under the 32x32x16 MFMA.
    "gemm_fp8_rows256": ("gemm.tl", "gemm", ["block_M=64", "block_N=64", "block_K=256", "dtype=f8e4m3",
                                             "out_dtype=f32"], ref.gemm, {},
                         [dict(M=64, N=64, K=256), dict(M=45, N=100, K=300), dict(M=7, N=70, K=40)]),
}


def fp8_value(b, exp_bits, fnuz):
    """One fp8 byte: AMD's FNUZ format (bias 8 / 16, 0x80 NaN, no -0 or infinity) or OCP's
    (bias 7 / 15, e4m3: 0x7F/0xFF NaN; e5m2: IEEE-style infinities and NaNs)."""
    mant_bits = 7 - exp_bits
    bias = (1 << (exp_bits - 1)) - (0 if fnuz else 1)
    if fnuz and b == 0x80:
        return float("nan")
    e, m = (b >> mant_bits) & ((1 << exp_bits) - 1), b & ((1 << mant_bits) - 1)
    if not fnuz and ((exp_bits == 4 and e == 15 and m == 7) or (exp_bits == 5 and e == 31)):
        return float("nan") if (exp_bits == 4 or m) else math.copysign(float("inf"), 0x80 - b)
    v = m * 2.0 ** (1 - bias - mant_bits) if e == 0 else (1 + m / 2.0 ** mant_bits) * 2.0 ** (e - bias)
    return -v if b & 0x80 else v


def load(directory, t, target="sm_80"):
    raw = open(os.path.join(directory, t["file"]), "rb").read()
    dtype = t["dtype"]
    if dtype in ("f8e4m3", "f8e5m2"):
        # tlc's fp8 is FNUZ on the AMD targets, OCP on NVIDIA's (docs/language.md).
        fnuz = target.startswith("gfx")
        return [fp8_value(b, 4 if dtype == "f8e4m3" else 5, fnuz) for b in raw], tuple(t["shape"])
    if dtype == "f16":
        values = struct.unpack("<%de" % (len(raw) // 2), raw)
    elif dtype == "bf16":
        values = [struct.unpack("<f", struct.pack("<I", h << 16))[0]
                  for h in struct.unpack("<%dH" % (len(raw) // 2), raw)]
    elif dtype == "f32":
        values = struct.unpack("<%df" % (len(raw) // 4), raw)
    elif dtype == "i32":
        values = struct.unpack("<%di" % (len(raw) // 4), raw)
    elif dtype in ("u8", "i8"):
        values = struct.unpack("<%d%s" % (len(raw), "B" if dtype == "u8" else "b"), raw)
    elif dtype in PACKED_DTYPES:
        # Two per byte along the innermost dimension, element 2c in the low nibble of byte c.
        values = packed_values(raw, dtype)
    else:
        raise SystemExit("run_samples.py: no loader for dtype " + dtype)
    return [float(v) for v in values], tuple(t["shape"])


def compare(name, got, want, dtype, tolerance=None):
    atol, rtol = (tolerance or TOLERANCE)[dtype]
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want))
           if not (math.isfinite(g) and abs(g - w) <= atol + rtol * abs(w))]
    if len(got) != len(want):
        return ["%s: %d elements, the reference has %d" % (name, len(got), len(want))]
    return ["%s[%d] = %r, reference %r" % (name, i, g, w) for i, g, w in bad[:5]] + (
        ["%s: %d of %d elements differ" % (name, len(bad), len(got))] if bad else [])


def run_case(args, name, case, env):
    sample, kernel, defines, reference, params, shapes = case
    build = os.path.join(args.work, name, "build")
    problems = []
    for n, shape in enumerate(shapes):
        out = os.path.join(args.work, name, "shape%d" % n)
        cmd = [args.tlc, "run", "--emulate", os.path.join(ROOT, "samples", sample), "--kernel", kernel,
               "--target", args.target, "--build-dir", build, "--output-dir", out, "--seed", str(args.seed + n),
               # No debug information: a third of each build's time, and CI builds about 40.
               # -O0: a third less again over CI's cases (compile time is most of a case's; the
               # emulated runs at these shapes are short either way).
               "--cxx-arg=-g0", "--cxx-arg=-O0", "--cache-dir", args.cache_dir]
        for d in defines:
            cmd += ["-D", d]
        for k, v in shape.items():
            cmd += ["--shape", "%s=%d" % (k, v)]
        if name in ZERO_OUTPUTS:
            cmd += ["--init-outputs", "zero"]
        if name in INDEXED:
            cmd += INDEXED[name](os.path.join(args.work, name, "tables%d" % n), shape, params, args.seed + n)
        cmd += counter_inputs(kernel, os.path.join(args.work, name, "counters%d" % n), shape, params)
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        label = "%s [%s] %s" % (name, args.target, " ".join("%s=%d" % kv for kv in shape.items()))
        if r.returncode != 0:
            print("FAIL %s: tlc run exited with %d\n%s" % (label, r.returncode, r.stdout[-4000:]))
            return False
        manifest = json.load(open(os.path.join(out, "manifest.json")))
        tensors = {t["name"]: load(out, t, args.target) for t in manifest["tensors"]}
        want = reference(tensors, params)
        shape_problems = []
        for t in manifest["tensors"]:
            # Outputs a case names "scratch" hold intermediate results its reference does not
            # give (what a split holds depends on the tiling).
            if t["out"] and t["name"] not in params.get("scratch", ()):
                shape_problems += compare(t["name"], tensors[t["name"]][0], want[t["name"]], t["dtype"],
                                          params.get("tolerance"))
        print("%s %s" % ("ok  " if not shape_problems else "DIFF", label))
        for p in shape_problems:
            print("     " + p)
        problems += shape_problems
    return not problems


# --random N: N cases drawn from these templates with a seeded generator, each with random
# knobs and two random shapes (tile multiples or not): configurations the fixed cases never
# name. A configuration tlc rejects with a located error (a tile that cannot be split, too
# many registers) is skipped and counted; any other failure fails the run.
def _draw(rng, choices):
    """`name=value` for each (name, options) of `choices`, drawn in order."""
    return ["%s=%s" % (name, rng.choice(options)) for name, options in choices]


def _random_gemm(rng):
    knobs = _draw(rng, [("block_M", [16, 32, 64, 128]), ("block_N", [16, 32, 48, 64, 96, 128]),
                        ("block_K", [16, 32, 64]), ("threads", [32, 64, 128, 256]), ("stages", [1, 2, 3, 4]),
                        ("policy", ["square", "full_row", "full_col"]), ("dtype", ["f16", "bf16"]),
                        ("persist", ["false", "true"])])
    shapes = [dict(M=rng.randint(1, 300), N=rng.randint(1, 300), K=rng.randint(1, 300)) for _ in range(2)]
    return "gemm.tl", "gemm", knobs, ref.gemm, {}, shapes


def _random_attention(rng):
    causal = rng.choice([False, True])
    knobs = _draw(rng, [("dim", [32, 64, 80, 96, 128])]) + ["causal=" + str(causal).lower()] + _draw(
        rng, [("block_M", [32, 64, 128]), ("block_N", [32, 64]), ("stages", [1, 2, 3]), ("threads", [64, 128, 256]),
              ("dtype", ["f16", "bf16"]), ("persist", ["false", "true"]), ("ping_pong", ["false", "false", "true"])])
    shapes = [dict(batch=rng.randint(1, 2), seq_len=rng.randint(1, 160), heads=rng.randint(1, 3)) for _ in range(2)]
    return "flash_attention.tl", "flash_attention", knobs, ref.flash_attention, {"causal": causal}, shapes


def _random_mla(rng):
    knobs = _draw(rng, [("block_H", [16, 32]), ("block_N", [16, 32, 64]), ("stages", [1, 2, 3]), ("threads", [64, 128]),
                        ("dim", [32, 64, 128]), ("pe_dim", [16, 32, 64])])
    shapes = [dict(batch=rng.randint(1, 2), heads=rng.choice([8, 16, 24, 32]), seqlen_kv=rng.randint(1, 150), kv_heads=1)
              for _ in range(2)]
    return "flash_mla_decode.tl", "flash_mla_decode", knobs, ref.flash_mla_decode, {}, shapes


def _random_conv2d(rng):
    k, stride, pad = rng.choice([(3, 1, 1), (3, 2, 1), (1, 1, 0), (1, 2, 0), (3, 1, 0), (7, 2, 3)])
    knobs = ["kh=%d" % k, "kw=%d" % k, "stride=%d" % stride, "pad=%d" % pad] + _draw(
        rng, [("block_M", [64, 128]), ("block_N", [32, 64]), ("block_K", [16, 32, 64]), ("stages", [1, 2, 3]),
              ("threads", [64, 128, 256]), ("persist", ["false", "true"]), ("fold", ["false", "true"])])
    shapes = [dict(N=rng.randint(1, 2), H=rng.randint(3, 10), W=rng.randint(3, 10), C=rng.randint(1, 40),
                   F=rng.randint(1, 40)) for _ in range(2)]
    return "conv2d.tl", "conv2d", knobs, ref.conv2d, {"stride": stride, "pad": pad}, shapes


def _random_rows(rng):
    kind, eps = rng.choice([("softmax", None), ("log_softmax", None), ("rmsnorm", 1e-6), ("layernorm", 1e-5)])
    knobs = _draw(rng, [("block_N", [256, 512, 1024]), ("threads", [32, 64, 128]), ("dtype", ["f16", "bf16"])])
    shapes = [dict(M=rng.randint(1, 9), N=rng.randint(1, 2100)) for _ in range(2)]
    return "%s.tl" % kind, kind, knobs, getattr(ref, kind), {"eps": eps} if eps else {}, shapes


def _random_sink(rng):
    knobs = _draw(rng, [("block_M", [32, 64, 128]), ("block_N", [32, 64]), ("stages", [1, 2]),
                        ("threads", [64, 128, 256]), ("dim", [32, 64, 128]), ("dtype", ["f16", "bf16"])])
    shapes = []
    for _ in range(2):
        kv = rng.choice([1, 2])
        shapes.append(dict(batch=rng.randint(1, 2), heads=kv * rng.choice([1, 2, 4]), kv_heads=kv,
                           seq_len=rng.randint(1, 150)))
    return "attention_sink.tl", "attention_sink", knobs, ref.attention_sink, {}, shapes


def _random_block_sparse(rng):
    bm, bn = rng.choice([32, 64, 128]), rng.choice([32, 64])
    knobs = ["block_M=%d" % bm, "block_N=%d" % bn] + _draw(
        rng, [("stages", [1, 2, 3]), ("threads", [64, 128, 256]), ("dim", [32, 64]), ("dtype", ["f16", "bf16"])])
    shapes = []
    for _ in range(2):
        s = rng.randint(1, 200)
        shapes.append(dict(batch=rng.randint(1, 2), seq_len=s, heads=rng.randint(1, 2), q_blocks=-(-s // bm),
                           k_blocks=-(-s // bn)))
    return ("block_sparse_attention.tl", "block_sparse_attention", knobs, ref.block_sparse_attention,
            {"block_M": bm, "block_N": bn}, shapes)


def _random_w4a16(rng):
    group = rng.choice([32, 64, 128])
    sample = rng.choice(["dequant_gemm_w4a16", "dequant_gemv_w4a16_tc", "dequant_gemv_w4a16_tcs"])
    if sample == "dequant_gemm_w4a16":
        knobs = _draw(rng, [("block_M", [16, 32, 64]), ("block_N", [32, 64, 128]), ("block_K", [64, 128]),
                            ("threads", [64, 128, 256]), ("stages", [1, 2, 3])])
        rows = [rng.randint(1, 80) for _ in range(2)]
    else:
        knobs = _draw(rng, [("block_M", [8, 16]), ("block_N", [16, 32]), ("block_K", [128, 256]),
                            ("threads", [64, 128])])
        if sample.endswith("tcs"):
            knobs += _draw(rng, [("stages", [1, 2, 3])])
        rows = [rng.choice([1, 3, 17]) for _ in range(2)]
    knobs += ["group_size=%d" % group] + _draw(rng, [("dtype", ["f16", "bf16"])])
    shapes = [dict(M=m, N=rng.randint(1, 150), K=group * rng.randint(1, 6)) for m in rows]
    # Sums of up to 768 products of int4 weights reach an RMS of about 45 (TOLERANCE's absolute
    # terms are for outputs near 1): bf16 weights and outputs round each element by up to about
    # 0.5 there (relative L2 error 2e-3, eight times f16's), so the absolute terms scale with it.
    return (sample + ".tl", sample, knobs, ref.dequant_gemm_w4a16,
            {"tolerance": dict(TOLERANCE, f16=(0.25, 1e-2), bf16=(1.0, 2e-2))}, shapes)


RANDOM_TEMPLATES = {"gemm": _random_gemm, "flash_attention": _random_attention, "flash_mla_decode": _random_mla,
                    "conv2d": _random_conv2d, "rows": _random_rows, "attention_sink": _random_sink,
                    "block_sparse_attention": _random_block_sparse, "w4a16": _random_w4a16}


def random_cases(args, count, seed):
    """`count` cases from RANDOM_TEMPLATES that tlc accepts for args.target (the rejected ones
    are drawn again, at most 8 times as many draws in all)."""
    import random
    rng = random.Random(seed)
    cases, rejected = {}, 0
    for draw in range(8 * count):
        if len(cases) == count:
            break
        template = rng.choice(sorted(RANDOM_TEMPLATES))
        case = RANDOM_TEMPLATES[template](rng)
        cmd = [args.tlc, os.path.join(ROOT, "samples", case[0]), "--target", args.target, "-o", os.devnull]
        for d in case[2]:
            cmd += ["-D", d]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if r.returncode == 1 and re.search(r"^\S+:\d+:\d+: error: ", r.stdout, re.M):
            rejected += 1
            continue
        if r.returncode != 0:
            raise SystemExit("FAIL tlc exited with %d on %s\n%s" % (r.returncode, " ".join(cmd), r.stdout[-2000:]))
        cases["random%d_%s %s" % (draw, case[1], " ".join(case[2]))] = case
    print("random cases: %d drawn, %d rejected by tlc with a located error" % (len(cases) + rejected, rejected))
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tlc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default=".*", help="regex over case names")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", default="sm_80", help="the lowering: sm_80, or gfx90a/gfx940/gfx942 (HIP)")
    ap.add_argument("--expect-mismatch", action="store_true")
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for tlc (test hooks)")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="N cases with random knobs and shapes (RANDOM_TEMPLATES) instead of the fixed ones")
    ap.add_argument("--cache-dir", help="tlc run --emulate's --cache-dir (default: driver-cache next to --work, "
                    "shared by the cases of one ctest run, which compile the emulator's driver once)")
    args = ap.parse_args()
    if not args.cache_dir:
        args.cache_dir = os.path.join(os.path.dirname(os.path.abspath(args.work)), "driver-cache")
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    if not os.path.exists(os.path.join(cuda, "include", "cuda_fp16.h")):
        print("SKIP: no CUDA headers (cuda_fp16.h) under %s/include" % cuda)
        return 77
    env = dict(os.environ)
    for e in args.env:
        k, _, v = e.partition("=")
        env[k] = v
    cases = dict(CASES, **(CASES_GFX9 if args.target.startswith("gfx") else {}))
    if args.target in ("gfx940", "gfx942"):
        cases.update(CASES_GFX942)
    if args.random:
        cases = random_cases(args, args.random, args.seed)
    names = [n for n in cases if re.fullmatch(args.only, n)]
    if not names:
        print("no case matches " + args.only)
        return 1
    results = {n: run_case(args, n, cases[n], env) for n in names}
    if args.expect_mismatch:
        caught = [n for n, ok in results.items() if not ok]
        missed = [n for n, ok in results.items() if ok]
        for n in missed:
            print("FAIL %s: the deliberately faulty lowering gave the right answer: the emulator missed it" % n)
        for n in caught:
            print("ok   %s: the emulator caught the fault (a wrong answer, as it must be)" % n)
        return 0 if not missed else 1
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
