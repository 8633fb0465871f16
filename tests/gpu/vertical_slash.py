"""Index tables of vertical-slash sparse attention (samples/vertical_slash_attention.tl), as
MInference's convert_vertical_slash_indexes builds them from a head's chosen verticals and
slashes. Pure Python (the CPU emulator's references use it); `tables_torch` is the same rule
vectorized over query blocks for the GPU problems and the benchmark (S = 32k, 32 heads), and
test_vertical_slash.py checks that the two agree.

A head's pattern is
  verticals: key positions every query may see (sorted, distinct);
  slashes:   diagonal offsets d >= 0 (sorted, distinct): query q may see key q - d.
For the query block of rows [r0, r1) a slash d touches the keys [r0 - d, r0 - d + block_M).
Those ranges, merged, are covered by runs of block_N consecutive keys (the slash blocks, listed
by their first key, which may be any integer, negative included); a block that runs past its
range's end covers the start of the next range, so no key is in two blocks. The same layout,
shifted by r0, serves every query block: `slash_layout` computes it once per head, relative to
r0. A query block lists the blocks with a key in [0, r1) and the verticals below r1 that no
listed block covers, so every key is listed at most once (the kernel does not deduplicate).
The kernel masks keys causally and at the sequence's edges, so blocks may stick out.

Tables (per batch, head, query block m): BlockCount, BlockOffset[.., nnz_s], ColumnCount,
ColumnIndex[.., nnz_v]; entries past a count are PAD, which the kernel must never use.
"""
from __future__ import annotations

import bisect
import random

# Entries past a row's count: a key far outside any sequence, so that a kernel that used one
# would read out of bounds (caught by the sanitizer) or see zeros, not a plausible key.
PAD = 1 << 30


def slash_layout(slashes, block_M: int, block_N: int) -> list:
    """First keys of the slash blocks relative to a query block's first row r0, ascending."""
    starts = []
    covered = None   # relative end of the last block
    for d in sorted(set(slashes), reverse=True):   # ascending keys
        lo, hi = -d, -d + block_M
        if covered is not None:
            lo = max(lo, covered)
        while lo < hi:
            starts.append(lo)
            lo += block_N
            covered = lo
    return starts


def query_block(layout: list, verticals, r0: int, r1: int, block_N: int) -> tuple:
    """(block offsets, columns) of the query block of rows [r0, r1)."""
    first = bisect.bisect_right(layout, -r0 - block_N)   # blocks ending after key 0
    last = bisect.bisect_left(layout, r1 - r0)           # blocks starting before key r1
    offsets = [r0 + s for s in layout[first:last]]
    columns = []
    for v in verticals:
        if v >= r1:
            break
        i = bisect.bisect_right(layout, v - r0) - 1
        if not (i >= 0 and v - r0 < layout[i] + block_N):
            columns.append(v)
    return offsets, columns


def pattern(seq_len: int, verticals: int, slashes: int, rng: random.Random, local: bool = True) -> tuple:
    """A MInference-like head pattern: the first few keys (attention sinks) and random others as
    verticals; the nearest half of the slashes as a local band (unless `local` is false), the
    rest in bands of 32 neighbouring diagonals at random distances. Sorted, distinct, inside
    [0, seq_len). Without the local band, verticals in a query block's own rows survive (the
    kernel masks them causally) and rows may see no slash key at all."""
    sinks = list(range(min(4, verticals, seq_len)))
    rest = rng.sample(range(len(sinks), seq_len), max(0, min(verticals, seq_len) - len(sinks)))
    vert = sorted(sinks + rest)
    band = max(1, slashes // 2) if local else 0
    diags = set(range(min(band, seq_len)))
    while len(diags) < min(slashes, seq_len):
        d0 = rng.randrange(seq_len)
        diags.update(d for d in range(d0, min(d0 + 32, seq_len)) if len(diags) < slashes)
    return vert, sorted(diags)


def tables(seq_len: int, block_M: int, block_N: int, patterns: list) -> dict:
    """Flat row-major tables for patterns[b][h] = (verticals, slashes): a dict of
    name -> (flat list of ints, shape). nnz_s and nnz_v are the longest lists plus one PAD
    entry, so that every row has padding."""
    q_blocks = -(-seq_len // block_M)
    rows = []
    for per_head in patterns:
        for vert, slash in per_head:
            layout = slash_layout(slash, block_M, block_N)
            rows.append([query_block(layout, vert, m * block_M, min((m + 1) * block_M, seq_len), block_N)
                         for m in range(q_blocks)])
    nnz_s = 1 + max(len(o) for r in rows for o, _ in r)
    nnz_v = 1 + max(len(c) for r in rows for _, c in r)
    out = {"BlockCount": [], "BlockOffset": [], "ColumnCount": [], "ColumnIndex": []}
    for r in rows:
        for offsets, columns in r:
            out["BlockCount"].append(len(offsets))
            out["BlockOffset"] += offsets + [PAD] * (nnz_s - len(offsets))
            out["ColumnCount"].append(len(columns))
            out["ColumnIndex"] += columns + [PAD] * (nnz_v - len(columns))
    b, h = len(patterns), len(patterns[0])
    return {"BlockCount": (out["BlockCount"], (b, h, q_blocks)),
            "BlockOffset": (out["BlockOffset"], (b, h, q_blocks, nnz_s)),
            "ColumnCount": (out["ColumnCount"], (b, h, q_blocks)),
            "ColumnIndex": (out["ColumnIndex"], (b, h, q_blocks, nnz_v))}


def visible_keys(offsets, columns, row: int, seq_len: int, block_N: int) -> list:
    """The keys the kernel lets query `row` see, given its query block's lists: each listed key
    in [0, seq_len) and <= row, as a list (a key listed twice appears twice)."""
    keys = [s + j for s in offsets for j in range(block_N)] + list(columns)
    return [k for k in keys if 0 <= k < seq_len and k <= row]


def tables_torch(seq_len: int, block_M: int, block_N: int, patterns: list, widths=None,
                 device="cpu") -> dict:
    """tables() as int32 torch tensors on `device`, vectorized over query blocks (patterns as in
    tables()). `widths` = (nnz_s, nnz_v) pads the tables to those widths instead (MInference
    sizes them by the numbers of slashes and verticals); a row longer than that is an error."""
    import torch
    q_blocks = -(-seq_len // block_M)
    r0 = torch.arange(q_blocks, dtype=torch.int64, device=device) * block_M
    r1 = torch.clamp(r0 + block_M, max=seq_len)
    heads = []
    for per_head in patterns:
        for vert, slash in per_head:
            # An empty layout gets one block no query block selects.
            layout = torch.tensor(slash_layout(slash, block_M, block_N) or [PAD], dtype=torch.int64,
                                  device=device)
            v = torch.tensor(vert, dtype=torch.int64, device=device)
            first = torch.searchsorted(layout, -r0 - block_N, right=True)
            last = torch.searchsorted(layout, r1 - r0, right=False)
            rel = v[None, :] - r0[:, None]                          # [q_blocks, verticals]
            i = torch.searchsorted(layout, rel.contiguous(), right=True) - 1
            covered = (i >= 0) & (rel < layout[i.clamp(min=0)] + block_N)
            keep = (v[None, :] < r1[:, None]) & ~covered
            heads.append((layout, first, last - first, v, keep))
    longest_s = max(int(c.max()) for _, _, c, _, _ in heads)
    longest_v = max(int(k.sum(1).max()) if k.numel() else 0 for *_, k in heads)
    if widths is None:
        nnz_s, nnz_v = longest_s + 1, longest_v + 1
    else:
        nnz_s, nnz_v = widths
        if longest_s > nnz_s or longest_v > nnz_v:
            raise ValueError(f"a query block lists {longest_s} slash blocks and {longest_v} "
                             f"verticals: more than the widths {nnz_s}, {nnz_v}")
    counts, offsets, col_counts, columns = [], [], [], []
    j_s = torch.arange(nnz_s, dtype=torch.int64, device=device)
    j_v = torch.arange(nnz_v, dtype=torch.int64, device=device)
    for layout, first, count, v, keep in heads:
        idx = (first[:, None] + j_s[None, :]).clamp(max=layout.numel() - 1)
        offs = torch.where(j_s[None, :] < count[:, None], r0[:, None] + layout[idx],
                           torch.full_like(idx, PAD))
        n = keep.sum(1)
        # The kept verticals of each row first, in ascending order (a stable sort).
        order = torch.sort((~keep).to(torch.int8), dim=1, stable=True).indices
        vals = v[order]
        width = min(nnz_v, vals.shape[1])
        cols = torch.full((q_blocks, nnz_v), PAD, dtype=torch.int64, device=device)
        cols[:, :width] = vals[:, :width]
        cols = torch.where(j_v[None, :] < n[:, None], cols, torch.full_like(cols, PAD))
        counts.append(count)
        offsets.append(offs)
        col_counts.append(n)
        columns.append(cols)
    b, h = len(patterns), len(patterns[0])

    def stack(parts, *shape):
        return torch.stack(parts).reshape(b, h, q_blocks, *shape).to(torch.int32)
    return {"BlockCount": stack(counts), "BlockOffset": stack(offsets, nnz_s),
            "ColumnCount": stack(col_counts), "ColumnIndex": stack(columns, nnz_v)}
