"""Triton peers for the benchmark: a tuned GEMM, FlashAttention-2 style forward passes (dense,
with attention sinks and GQA, block-sparse, MInference's vertical-slash sparse) and a fused MoE
GEMM in the structure of vLLM's fused_moe_kernel.

Both are what a user would write in Triton today (the structure of Triton's tutorials 03 and
06): no vendor libraries, a small configuration search per shape instead of triton.autotune,
so that tuning stays short and does not depend on the autotuner's API of the installed version.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import triton
import triton.language as tl


# ---- GEMM -------------------------------------------------------------------------------------

@triton.jit
def _matmul_kernel(A, B, C, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                   stride_cn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                   GROUP_M: tl.constexpr):
    # Grouped order: GROUP_M row panels are walked column by column, so a wave of blocks shares
    # its A panels and B panels in L2.
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows

    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    # Rows and columns past the edge wrap around (their results are never stored), so only the
    # K edge needs masked loads.
    a_ptrs = A + (rm % M)[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + (rn % N)[None, :] * stride_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        a = tl.load(a_ptrs, mask=rk[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    c_ptrs = C + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(C.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@dataclass(frozen=True)
class MatmulConfig:
    bm: int
    bn: int
    bk: int
    stages: int
    warps: int
    group_m: int = 8


# The tutorial's Hopper-class configurations plus a narrow one for small and skinny problems.
MATMUL_CONFIGS = [MatmulConfig(128, 256, 64, 3, 8), MatmulConfig(256, 128, 64, 3, 8),
                  MatmulConfig(128, 128, 64, 4, 4), MatmulConfig(64, 128, 64, 4, 4)]


def matmul(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, cfg: MatmulConfig) -> None:
    m, k = a.shape
    n = b.shape[1]
    grid = (triton.cdiv(m, cfg.bm) * triton.cdiv(n, cfg.bn),)
    _matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1), BM=cfg.bm, BN=cfg.bn, BK=cfg.bk,
                         GROUP_M=cfg.group_m, num_stages=cfg.stages, num_warps=cfg.warps)


# ---- Attention --------------------------------------------------------------------------------

@triton.jit
def _attn_step(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, n0, rows, rn, rd, S,
               qk_scale, MASK: tl.constexpr, CAUSAL: tl.constexpr):
    cols = n0 + rn
    if MASK:
        k = tl.load(k_base + cols[None, :] * stride_ks + rd[:, None], mask=cols[None, :] < S,
                    other=0.0)
        v = tl.load(v_base + cols[:, None] * stride_vs + rd[None, :], mask=cols[:, None] < S,
                    other=0.0)
    else:
        k = tl.load(k_base + cols[None, :] * stride_ks + rd[:, None])
        v = tl.load(v_base + cols[:, None] * stride_vs + rd[None, :])
    qk = tl.dot(q, k) * qk_scale
    if MASK:
        keep = cols[None, :] < S
        if CAUSAL:
            keep = keep & (rows[:, None] >= cols[None, :])
        qk = tl.where(keep, qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, 1))
    p = tl.math.exp2(qk - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.jit
def _attn_start(Q, K, V, sm_scale, S, H, stride_qb, stride_qh, stride_qs, stride_kb, stride_kh,
                stride_vb, stride_vh, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """What every attention kernel starts with: this program's query block, batch and head, the
    K and V bases, its query rows and their Q tile, and the online softmax's initial state."""
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    q_base = Q + b * stride_qb + h * stride_qh
    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh
    rows = start_m * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(q_base + rows[:, None] * stride_qs + rd[None, :], mask=rows[:, None] < S,
                other=0.0)
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp(x) = exp2(x * log2(e))
    return start_m, b, h, k_base, v_base, rows, rn, rd, q, m_i, l_i, acc, qk_scale


@triton.jit
def _attn_loop(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, start_m, rows, rn, rd, S,
               qk_scale, BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr):
    """The dense attention's walk over the key blocks: those that need no mask first, then the
    ones that straddle the diagonal or the end."""
    if CAUSAL:
        unmasked_end = start_m * BM
        end = tl.minimum((start_m + 1) * BM, S)
    else:
        unmasked_end = (S // BN) * BN
        end = S
    for n0 in range(0, unmasked_end, BN):
        acc, l_i, m_i = _attn_step(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, n0,
                                   rows, rn, rd, S, qk_scale, False, CAUSAL)
    for n0 in range(unmasked_end, end, BN):
        acc, l_i, m_i = _attn_step(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, n0,
                                   rows, rn, rd, S, qk_scale, True, CAUSAL)
    return acc, l_i, m_i


@triton.jit
def _attn_fwd_kernel(Q, K, V, O, sm_scale, S, H, stride_qb, stride_qh, stride_qs, stride_kb,
                     stride_kh, stride_ks, stride_vb, stride_vh, stride_vs, stride_ob, stride_oh,
                     stride_os, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                     CAUSAL: tl.constexpr):
    start_m, b, h, k_base, v_base, rows, rn, rd, q, m_i, l_i, acc, qk_scale = _attn_start(
        Q, K, V, sm_scale, S, H, stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_vb,
        stride_vh, D, BM, BN)
    acc, l_i, m_i = _attn_loop(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, start_m,
                               rows, rn, rd, S, qk_scale, BM, BN, CAUSAL)
    acc = acc / l_i[:, None]
    o_base = O + b * stride_ob + h * stride_oh
    tl.store(o_base + rows[:, None] * stride_os + rd[None, :], acc.to(O.dtype.element_ty),
             mask=rows[:, None] < S)


@dataclass(frozen=True)
class AttentionConfig:
    bm: int
    bn: int
    warps: int
    stages: int


def attention_configs(dim: int) -> list:
    # BN must divide BM: the causal split above assumes the diagonal starts a key block.
    if dim <= 64:
        return [AttentionConfig(128, 64, 4, 3), AttentionConfig(128, 128, 8, 3)]
    return [AttentionConfig(128, 64, 8, 3), AttentionConfig(128, 128, 8, 2)]


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, causal: bool,
              cfg: AttentionConfig) -> None:
    """q, k, v, o: [batch, heads, seq, dim], any strides with a unit innermost stride."""
    batch, heads, seq, dim = q.shape
    grid = (triton.cdiv(seq, cfg.bm), batch * heads)
    _attn_fwd_kernel[grid](q, k, v, o, 1.0 / math.sqrt(dim), seq, heads,
                           q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1),
                           k.stride(2), v.stride(0), v.stride(1), v.stride(2), o.stride(0),
                           o.stride(1), o.stride(2), D=dim, BM=cfg.bm, BN=cfg.bn, CAUSAL=causal,
                           num_warps=cfg.warps, num_stages=cfg.stages)


# ---- Attention with sinks and GQA ---------------------------------------------------------------

@triton.jit
def _attn_sink_fwd_kernel(Q, K, V, Sinks, O, sm_scale, S, H, G, stride_qb, stride_qh, stride_qs,
                          stride_kb, stride_kh, stride_ks, stride_vb, stride_vh, stride_vs,
                          stride_ob, stride_oh, stride_os, D: tl.constexpr, BM: tl.constexpr,
                          BN: tl.constexpr, CAUSAL: tl.constexpr):
    """The attention kernel above with gpt-oss's sinks (Sinks[h], a logit in the denominator
    with no value row, added once at the end) and GQA: query head h reads K/V head h // G."""
    # _attn_start's head is the query head: K and V get theirs here (strides 0 there).
    start_m, b, h, k_base, v_base, rows, rn, rd, q, m_i, l_i, acc, qk_scale = _attn_start(
        Q, K, V, sm_scale, S, H, stride_qb, stride_qh, stride_qs, stride_kb, 0, stride_vb, 0, D,
        BM, BN)
    k_base += (h // G) * stride_kh
    v_base += (h // G) * stride_vh
    acc, l_i, m_i = _attn_loop(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, start_m,
                               rows, rn, rd, S, qk_scale, BM, BN, CAUSAL)
    sink = tl.load(Sinks + h) * 1.4426950408889634  # in base 2, as m_i
    acc = acc / (l_i + tl.math.exp2(sink - m_i))[:, None]
    o_base = O + b * stride_ob + h * stride_oh
    tl.store(o_base + rows[:, None] * stride_os + rd[None, :], acc.to(O.dtype.element_ty),
             mask=rows[:, None] < S)


def attention_sink(q, k, v, sinks, o, causal: bool, cfg: AttentionConfig) -> None:
    """q, o: [batch, heads, seq, dim]; k, v: [batch, kv_heads, seq, dim] (heads a multiple of
    kv_heads); sinks: f32 [heads]. Unit innermost strides."""
    batch, heads, seq, dim = q.shape
    grid = (triton.cdiv(seq, cfg.bm), batch * heads)
    _attn_sink_fwd_kernel[grid](q, k, v, sinks, o, 1.0 / math.sqrt(dim), seq, heads,
                                heads // k.shape[1], q.stride(0), q.stride(1), q.stride(2),
                                k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1),
                                v.stride(2), o.stride(0), o.stride(1), o.stride(2), D=dim,
                                BM=cfg.bm, BN=cfg.bn, CAUSAL=causal, num_warps=cfg.warps,
                                num_stages=cfg.stages)


# ---- Block-sparse attention -------------------------------------------------------------------

@triton.jit
def _block_sparse_attn_kernel(Q, K, V, Mask, O, sm_scale, S, H, QB, KB, stride_qb, stride_qh,
                              stride_qs, stride_kb, stride_kh, stride_ks, stride_vb, stride_vh,
                              stride_vs, stride_mb, stride_mh, stride_mq, stride_ob, stride_oh,
                              stride_os, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """The attention kernel above over the key blocks Mask[b, h, query block, :] keeps: a
    skipped block is neither loaded nor computed. Rows that see no key are 0."""
    start_m, b, h, k_base, v_base, rows, rn, rd, q, m_i, l_i, acc, qk_scale = _attn_start(
        Q, K, V, sm_scale, S, H, stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_vb,
        stride_vh, D, BM, BN)
    m_base = Mask + b * stride_mb + h * stride_mh + start_m * stride_mq
    blocks = tl.minimum(tl.cdiv(S, BN), KB)
    full = S // BN  # blocks with no key past the end
    for j in range(0, blocks):
        if tl.load(m_base + j) != 0:
            if j < full:
                acc, l_i, m_i = _attn_step(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs,
                                           j * BN, rows, rn, rd, S, qk_scale, False, False)
            else:
                acc, l_i, m_i = _attn_step(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs,
                                           j * BN, rows, rn, rd, S, qk_scale, True, False)
    acc = tl.where(l_i[:, None] > 0, acc / l_i[:, None], 0.0)
    o_base = O + b * stride_ob + h * stride_oh
    tl.store(o_base + rows[:, None] * stride_os + rd[None, :], acc.to(O.dtype.element_ty),
             mask=rows[:, None] < S)


def block_sparse_attention_configs(block_m: int, block_n: int) -> list:
    # The tiles are the mask's blocks (those of the tlc sample being compared): only warps and
    # stages vary.
    return [AttentionConfig(block_m, block_n, w, s) for w, s in ((4, 2), (8, 2), (8, 3))]


def block_sparse_attention(q, k, v, mask, o, cfg: AttentionConfig) -> None:
    """q, k, v, o: [batch, heads, seq, dim]; mask: [batch, heads, q_blocks, k_blocks] of cfg's
    block sizes, nonzero where a (query block, key block) pair is computed."""
    batch, heads, seq, dim = q.shape
    grid = (triton.cdiv(seq, cfg.bm), batch * heads)
    _block_sparse_attn_kernel[grid](q, k, v, mask, o, 1.0 / math.sqrt(dim), seq, heads,
                                    mask.shape[2], mask.shape[3], q.stride(0), q.stride(1),
                                    q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                                    v.stride(0), v.stride(1), v.stride(2), mask.stride(0),
                                    mask.stride(1), mask.stride(2), o.stride(0), o.stride(1),
                                    o.stride(2), D=dim, BM=cfg.bm, BN=cfg.bn,
                                    num_warps=cfg.warps, num_stages=cfg.stages)


# ---- Vertical-slash sparse attention ----------------------------------------------------------

@triton.jit
def _vs_step(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, keys, listed, rows, rd, S,
             qk_scale):
    """One tile of keys (any positions, `listed` marking the real entries): K and V rows loaded
    by key, zeros for the others; scores masked to listed keys in [0, S) at or left of the
    diagonal; the online softmax, whose running maximum starts at a finite floor, so that a
    tile a row cannot see adds 0 instead of NaN."""
    valid = listed & (keys >= 0) & (keys < S)
    k = tl.load(k_base + keys[None, :].to(tl.int64) * stride_ks + rd[:, None], mask=valid[None, :],
                other=0.0)
    v = tl.load(v_base + keys[:, None].to(tl.int64) * stride_vs + rd[None, :], mask=valid[:, None],
                other=0.0)
    qk = tl.dot(q, k) * qk_scale
    qk = tl.where(valid[None, :] & (keys[None, :] <= rows[:, None]), qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, 1))
    p = tl.math.exp2(qk - m_new[:, None])
    alpha = tl.math.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return acc, l_i, m_new


@triton.jit
def _vertical_slash_attn_kernel(Q, K, V, BlockCount, BlockOffset, ColumnCount, ColumnIndex, O,
                                sm_scale, S, H, QB, NNZ_S, NNZ_V, stride_qb, stride_qs, stride_qh,
                                stride_kb, stride_ks, stride_kh, stride_vb, stride_vs, stride_vh,
                                stride_ob, stride_os, stride_oh, D: tl.constexpr, BM: tl.constexpr,
                                BN: tl.constexpr, CN: tl.constexpr):
    """The structure of MInference's _triton_mixed_sparse_attn_fwd_kernel: one program per
    (query block of BM rows, batch * head); first the slash blocks of BN keys starting at
    BlockOffset[b, h, m, :BlockCount], then the verticals ColumnIndex[b, h, m, :ColumnCount], CN
    at a time; both masked causally and to [0, S) (the tlc sample's semantics); rows that see no
    key are 0. Tensors [batch, seq, heads, dim], tables as tests/gpu/vertical_slash.py builds
    them."""
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    rows = start_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(Q + b * stride_qb + h * stride_qh + rows[:, None] * stride_qs + rd[None, :],
                mask=rows[:, None] < S, other=0.0)
    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh
    table_row = (b * H + h) * QB + start_m
    n_blocks = tl.minimum(tl.maximum(tl.load(BlockCount + table_row), 0), NNZ_S)
    n_cols = tl.minimum(tl.maximum(tl.load(ColumnCount + table_row), 0), NNZ_V)
    offsets = BlockOffset + table_row * NNZ_S
    columns = ColumnIndex + table_row * NNZ_V
    m_i = tl.zeros([BM], dtype=tl.float32) - 1e30
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    rn = tl.arange(0, BN)
    for i in range(0, n_blocks):
        keys = tl.load(offsets + i) + rn
        acc, l_i, m_i = _vs_step(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, keys,
                                 rn < BN, rows, rd, S, qk_scale)
    rc = tl.arange(0, CN)
    for c0 in range(0, n_cols, CN):
        listed = c0 + rc < n_cols
        keys = tl.load(columns + c0 + rc, mask=listed, other=0)
        acc, l_i, m_i = _vs_step(acc, l_i, m_i, q, k_base, v_base, stride_ks, stride_vs, keys,
                                 listed, rows, rd, S, qk_scale)
    acc = tl.where(l_i[:, None] > 0, acc / l_i[:, None], 0.0)
    o_base = O + b * stride_ob + h * stride_oh
    tl.store(o_base + rows[:, None] * stride_os + rd[None, :], acc.to(O.dtype.element_ty),
             mask=rows[:, None] < S)


def vertical_slash_attention_configs(block_m: int, block_n: int) -> list:
    # BM and the slash blocks' BN are the tables' (those of the tlc build being compared); the
    # vertical tile is BN too, as in MInference. Warps and stages vary.
    return [AttentionConfig(block_m, block_n, w, s) for w, s in ((4, 2), (4, 3), (8, 2))]


def vertical_slash_attention(q, k, v, block_count, block_offset, column_count, column_index, o,
                             cfg: AttentionConfig) -> None:
    """q, k, v, o: [batch, seq, heads, dim] (unit innermost stride); the int32 index tables
    [batch, heads, q_blocks(, width)] for query blocks of cfg.bm rows, contiguous."""
    batch, seq, heads, dim = q.shape
    q_blocks = block_count.shape[2]
    grid = (triton.cdiv(seq, cfg.bm), batch * heads)
    _vertical_slash_attn_kernel[grid](q, k, v, block_count, block_offset, column_count, column_index,
                                      o, 1.0 / math.sqrt(dim), seq, heads, q_blocks,
                                      block_offset.shape[3], column_index.shape[3], q.stride(0),
                                      q.stride(1), q.stride(2), k.stride(0), k.stride(1),
                                      k.stride(2), v.stride(0), v.stride(1), v.stride(2),
                                      o.stride(0), o.stride(1), o.stride(2), D=dim, BM=cfg.bm,
                                      BN=cfg.bn, CN=cfg.bn, num_warps=cfg.warps,
                                      num_stages=cfg.stages)


# ---- Fused MoE --------------------------------------------------------------------------------

@triton.jit
def _fused_moe_kernel(X, W, C, TopkWeights, SortedIds, ExpertIds, NumPostPadded, N, K, EM, slots,
                      stride_xm, stride_we, stride_wn, stride_cm, topk: tl.constexpr,
                      weighted: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr, GROUP_M: tl.constexpr):
    # The structure of vLLM's fused_moe_kernel: one program per BM routed slots (one expert's,
    # by the moe_align_block_size routing) by BN output columns, grouped order over the
    # programs; token rows gathered through SortedIds, padding slots (>= slots) masked off.
    pid = tl.program_id(0)
    num_m = tl.cdiv(EM, BM)
    num_n = tl.cdiv(N, BN)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    if pid_m * BM >= tl.load(NumPostPadded):
        return
    entries = pid_m * BM + tl.arange(0, BM)
    slot = tl.load(SortedIds + entries, mask=entries < EM, other=slots)
    valid = slot < slots
    expert = tl.load(ExpertIds + pid_m).to(tl.int64)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    x_ptrs = X + (slot // topk)[:, None].to(tl.int64) * stride_xm + rk[None, :]
    w_ptrs = W + expert * stride_we + (rn % N)[None, :].to(tl.int64) * stride_wn + rk[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        k_left = K - k * BK
        x = tl.load(x_ptrs, mask=valid[:, None] & (rk[None, :] < k_left), other=0.0)
        w = tl.load(w_ptrs, mask=rk[:, None] < k_left, other=0.0)
        acc = tl.dot(x, w, acc)
        x_ptrs += BK
        w_ptrs += BK
    if weighted:
        acc = acc * tl.load(TopkWeights + slot, mask=valid, other=0.0)[:, None]
    c_ptrs = C + slot[:, None].to(tl.int64) * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc.to(C.dtype.element_ty), mask=valid[:, None] & (rn[None, :] < N))


@dataclass(frozen=True)
class FusedMoeConfig:
    bm: int
    bn: int
    bk: int
    stages: int
    warps: int
    group_m: int = 8


def fused_moe_configs(block_m: int) -> list:
    """BM is the routing's block size (fixed by the bundle's build); the rest as vLLM's default
    and tuned H100 configurations vary them: narrow for decode, wide for prefill."""
    if block_m <= 32:
        shapes = [(32, 64, 4, 4, 1), (64, 128, 4, 4, 1), (128, 128, 4, 3, 1), (64, 256, 4, 3, 1)]
    else:
        shapes = [(64, 64, 4, 4, 8), (128, 64, 4, 4, 8), (128, 128, 8, 3, 8), (256, 64, 8, 3, 8)]
    return [FusedMoeConfig(block_m, bn, bk, stages, warps, group) for bn, bk, warps, stages, group in shapes]


def fused_moe(x, w, c, topk_weights, sorted_ids, expert_ids, num_post_padded, topk: int,
              weighted: bool, cfg: FusedMoeConfig) -> None:
    """C [T * topk, N] = X [T, K] rows @ W [E, N, K] experts^T, over vLLM's routing tables."""
    n, k = w.shape[1], w.shape[2]
    em = sorted_ids.shape[0]
    grid = (triton.cdiv(em, cfg.bm) * triton.cdiv(n, cfg.bn),)
    _fused_moe_kernel[grid](x, w, c, topk_weights, sorted_ids, expert_ids, num_post_padded, n, k,
                            em, c.shape[0], x.stride(0), w.stride(0), w.stride(1), c.stride(0),
                            topk=topk, weighted=weighted, BM=cfg.bm, BN=cfg.bn, BK=cfg.bk,
                            GROUP_M=cfg.group_m, num_stages=cfg.stages, num_warps=cfg.warps)


# ---- Chunk gated delta net --------------------------------------------------------------------
# The chunked algorithm of samples/chunk_gated_delta.tl (its header has the maths), in the same
# two kernels: the per-chunk preparation, all chunks in parallel, then the chunks in order per
# (block of dv columns, batch, head) with the state in registers. Q, K [B, T, H, DK], V and O
# [B, T, H, DV], G and Beta f32 [B, T, H]; the scratch Gc f32 [B, H, T], W [B, H, T, DK] and
# U [B, H, T, DV] as the sample lays them out.

@triton.jit
def _gdn_prepare_kernel(K, V, G, Beta, Gc, W, U, T, H, DK: tl.constexpr, DV: tl.constexpr,
                        C: tl.constexpr):
    chunk = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    ri = tl.arange(0, C)
    rows = chunk * C + ri
    valid = rows < T
    rk = tl.arange(0, DK)
    rv = tl.arange(0, DV)
    # Rows past T read as k = v = 0, g = beta = 0: they change nothing in the real rows.
    k = tl.load(K + ((b * T + rows) * H + h)[:, None] * DK + rk[None, :], mask=valid[:, None], other=0.0)
    v = tl.load(V + ((b * T + rows) * H + h)[:, None] * DV + rv[None, :], mask=valid[:, None], other=0.0)
    g = tl.load(G + (b * T + rows) * H + h, mask=valid, other=0.0)
    beta = tl.load(Beta + (b * T + rows) * H + h, mask=valid, other=0.0)
    gc = tl.cumsum(g, 0)
    lower = ri[:, None] > ri[None, :]
    decay = tl.exp(tl.where(lower, gc[:, None] - gc[None, :], 0.0))
    a = tl.dot(k, tl.trans(k)) * (beta[:, None] * decay)
    # T = I + X with X strictly lower and X[i] = -A[i] - sum_{j<i} A[i, j] X[j]: row by row in
    # registers (rows j < i of x are final when row i is computed; row i of x holds -A[i]).
    x = tl.where(lower, -a, 0.0)
    for i in range(1, C):
        is_row = ri == i
        row = tl.sum(tl.where(is_row[:, None], x, 0.0), 0)
        row = row + tl.sum(row[:, None] * x, 0)
        x = tl.where(is_row[:, None], row[None, :], x)
    t_inv = x + tl.where(ri[:, None] == ri[None, :], 1.0, 0.0)
    # W and U: f32 products (TF32), as the sample's.
    w = tl.dot(t_inv, k.to(tl.float32) * (beta * tl.exp(gc))[:, None])
    u = tl.dot(t_inv, v.to(tl.float32) * beta[:, None])
    tl.store(Gc + bh * T + rows, gc, mask=valid)
    tl.store(W + (bh * T + rows)[:, None] * DK + rk[None, :], w.to(W.dtype.element_ty), mask=valid[:, None])
    tl.store(U + (bh * T + rows)[:, None] * DV + rv[None, :], u.to(U.dtype.element_ty), mask=valid[:, None])


@triton.jit
def _gdn_output_kernel(Q, K, Gc, W, U, O, T, H, scale, DK: tl.constexpr, DV: tl.constexpr,
                       BV: tl.constexpr, C: tl.constexpr):
    vb = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    ri = tl.arange(0, C)
    rk = tl.arange(0, DK)
    rv = vb * BV + tl.arange(0, BV)
    incl = ri[:, None] >= ri[None, :]
    state = tl.zeros((DK, BV), dtype=tl.float32)
    for chunk in range(0, tl.cdiv(T, C)):
        rows = chunk * C + ri
        valid = rows < T
        q = tl.load(Q + ((b * T + rows) * H + h)[:, None] * DK + rk[None, :], mask=valid[:, None], other=0.0)
        k = tl.load(K + ((b * T + rows) * H + h)[:, None] * DK + rk[None, :], mask=valid[:, None], other=0.0)
        w = tl.load(W + (bh * T + rows)[:, None] * DK + rk[None, :], mask=valid[:, None], other=0.0)
        u = tl.load(U + (bh * T + rows)[:, None] * DV + rv[None, :], mask=valid[:, None], other=0.0)
        gc = tl.load(Gc + bh * T + rows, mask=valid, other=0.0)
        g_last = tl.load(Gc + bh * T + tl.minimum(chunk * C + C, T) - 1)
        s = state.to(q.dtype)
        vn = u.to(tl.float32) - tl.dot(w, s)
        o = tl.dot(q, s) * tl.exp(gc)[:, None]
        p = tl.dot(q, tl.trans(k))
        p = tl.where(incl, p * tl.exp(tl.where(incl, gc[:, None] - gc[None, :], 0.0)), 0.0)
        o = (o + tl.dot(p.to(q.dtype), vn.to(q.dtype))) * scale
        tl.store(O + ((b * T + rows) * H + h)[:, None] * DV + rv[None, :], o.to(O.dtype.element_ty),
                 mask=valid[:, None])
        vd = vn * tl.exp(g_last - gc)[:, None]
        state = state * tl.exp(g_last) + tl.dot(tl.trans(k), vd.to(q.dtype))


@dataclass(frozen=True)
class GatedDeltaConfig:
    bv: int       # dv columns per block of the output kernel
    warps: int
    stages: int   # software pipeline of the output kernel's loop over chunks


def gated_delta_configs(dv: int) -> list:
    return [GatedDeltaConfig(bv, warps, stages)
            for bv, warps, stages in ((64, 4, 2), (64, 4, 3), (32, 4, 2), (64, 8, 2), (128, 8, 2))
            if bv <= dv]


def gated_delta_scratch(q, v) -> tuple:
    """Gc, W, U for gated_delta (allocated once, outside the timing)."""
    b, t, h, dk = q.shape
    return (torch.empty((b, h, t), dtype=torch.float32, device=q.device),
            torch.empty((b, h, t, dk), dtype=q.dtype, device=q.device),
            torch.empty((b, h, t, v.shape[-1]), dtype=q.dtype, device=q.device))


def gated_delta(q, k, v, g, beta, o, scratch: tuple, cfg: GatedDeltaConfig) -> None:
    """O [B, T, H, DV] of the chunk gated delta net (scale DK^-0.5), chunks of 64 steps."""
    b, t, h, dk = q.shape
    dv = v.shape[-1]
    gc, w, u = scratch
    _gdn_prepare_kernel[(triton.cdiv(t, 64), b * h)](k, v, g, beta, gc, w, u, t, h, DK=dk, DV=dv, C=64,
                                                     num_warps=4, num_stages=1)
    _gdn_output_kernel[(triton.cdiv(dv, cfg.bv), b * h)](q, k, gc, w, u, o, t, h, dk ** -0.5, DK=dk, DV=dv,
                                                         BV=cfg.bv, C=64, num_warps=cfg.warps,
                                                         num_stages=cfg.stages)
