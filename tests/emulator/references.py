"""Float64 references of the samples, in plain Python (no numpy on the CI machine).

Each takes the tensors the emulator ran on (flat lists of floats, with shapes) and returns the
expected outputs as flat lists. Shapes follow the samples' own comments.
"""
import math
import os
import sys

# The vertical-slash index builder is shared with the GPU problems (tests/gpu, torch-free).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
import vertical_slash  # noqa: E402


def _idx(shape, *i):
    o = 0
    for n, k in zip(shape, i):
        o = o * n + k
    return o


def gemm(t, p):
    A, (M, K) = t["A"]
    B, (_, N) = t["B"]
    C = [0.0] * (M * N)
    for i in range(M):
        row = A[i * K:(i + 1) * K]
        for j in range(N):
            C[i * N + j] = math.fsum(row[k] * B[k * N + j] for k in range(K))
    return {"C": C}


def gemv(t, p):
    A, (M, K) = t["A"]
    x, _ = t["x"]
    return {"y": [math.fsum(A[i * K + k] * x[k] for k in range(K)) for i in range(M)]}


def size_defaults(t, p):
    A, (M, N) = t["A"]
    # tests/emulator/size_defaults.tl's `tag`: the variant its defaults name for N and M.
    return {"B": [2 * a for a in A], "T": [1 if N <= 100 else 3 if M == 3 else 2]}


def _rows(X, M, N):
    return [X[i * N:(i + 1) * N] for i in range(M)]


def softmax(t, p):
    X, (M, N) = t["X"]
    Y = []
    for r in _rows(X, M, N):
        m = max(r)
        e = [math.exp(v - m) for v in r]
        s = math.fsum(e)
        Y += [v / s for v in e]
    return {"Y": Y}


def log_softmax(t, p):
    X, (M, N) = t["X"]
    Y = []
    for r in _rows(X, M, N):
        m = max(r)
        lse = m + math.log(math.fsum(math.exp(v - m) for v in r))
        Y += [v - lse for v in r]
    return {"Y": Y}


def rmsnorm(t, p):
    X, (M, N) = t["X"]
    W, _ = t["W"]
    eps = p.get("eps", 1e-6)
    Y = []
    for r in _rows(X, M, N):
        inv = 1.0 / math.sqrt(math.fsum(v * v for v in r) / N + eps)
        Y += [v * inv * w for v, w in zip(r, W)]
    return {"Y": Y}


def layernorm(t, p):
    X, (M, N) = t["X"]
    W, _ = t["W"]
    B, _ = t["B"]
    eps = p.get("eps", 1e-5)
    Y = []
    for r in _rows(X, M, N):
        mean = math.fsum(r) / N
        var = math.fsum((v - mean) ** 2 for v in r) / N
        inv = 1.0 / math.sqrt(var + eps)
        Y += [(v - mean) * inv * w + b for v, w, b in zip(r, W, B)]
    return {"Y": Y}


def swiglu(t, p):
    G, _ = t["G"]
    U, _ = t["U"]
    return {"Y": [g / (1.0 + math.exp(-g)) * u for g, u in zip(G, U)]}


def _attend(q, keys, values, scale):
    s = [scale * math.fsum(a * b for a, b in zip(q, k)) for k in keys]
    m = max(s)
    e = [math.exp(v - m) for v in s]
    tot = math.fsum(e)
    dim = len(values[0])
    return [math.fsum(e[j] * values[j][d] for j in range(len(values))) / tot for d in range(dim)]


def flash_attention(t, p):
    """Q, K, V, O: [batch, seq_len, heads, dim]; optional causal mask (flash_attention_fwd_lse's
    O; its LSE is not an output here)."""
    return {"O": flash_attention_fwd_lse(t, p)["O"]}


def flash_attention_fwd_lse(t, p):
    """samples/flash_attention_bwd.tl's forward: O as flash_attention, and LSE [batch, heads,
    seq_len] = ln(sum_j exp(Q[i] . K[j] / sqrt(dim))) over the visible keys."""
    Q, (Bn, S, H, D) = t["Q"]
    K, _ = t["K"]
    V, _ = t["V"]
    causal = p.get("causal", False)
    scale = 1.0 / math.sqrt(D)
    O = [0.0] * len(Q)
    LSE = [0.0] * (Bn * H * S)
    vec = lambda X, b, s, h: X[_idx((Bn, S, H, D), b, s, h, 0):][:D]
    for b in range(Bn):
        for h in range(H):
            keys = [vec(K, b, j, h) for j in range(S)]
            vals = [vec(V, b, j, h) for j in range(S)]
            for i in range(S):
                n = i + 1 if causal else S
                q = vec(Q, b, i, h)
                base = _idx((Bn, S, H, D), b, i, h, 0)
                O[base:base + D] = _attend(q, keys[:n], vals[:n], scale)
                s = [scale * math.fsum(a * c for a, c in zip(q, k)) for k in keys[:n]]
                m = max(s)
                LSE[_idx((Bn, H, S), b, h, i)] = m + math.log(math.fsum(math.exp(v - m) for v in s))
    return {"O": O, "LSE": LSE}


def flash_attention_bwd_preprocess(t, p):
    """Delta [batch, heads, seq_len] = rowsum(dO * O); dQ_accum zeroed."""
    O, (Bn, S, H, D) = t["O"]
    dO, _ = t["dO"]
    Delta = [0.0] * (Bn * H * S)
    for b in range(Bn):
        for i in range(S):
            for h in range(H):
                base = _idx((Bn, S, H, D), b, i, h, 0)
                Delta[_idx((Bn, H, S), b, h, i)] = math.fsum(
                    O[base + d] * dO[base + d] for d in range(D))
    return {"Delta": Delta, "dQ_accum": [0.0] * len(O)}


def flash_attention_bwd(t, p):
    """The backward's formulas on the given LSE and Delta (whatever they are: the emulator's
    are random): P = exp(Q K^T / sqrt(D) - LSE) on the visible pairs, dV = P^T dO,
    dS = P * (dO V^T - Delta), dQ = dS K / sqrt(D), dK = dS^T Q / sqrt(D)."""
    Q, (Bn, S, H, D) = t["Q"]
    K, _ = t["K"]
    V, _ = t["V"]
    dO, _ = t["dO"]
    LSE, _ = t["LSE"]
    Delta, _ = t["Delta"]
    causal = p.get("causal", False)
    scale = 1.0 / math.sqrt(D)
    dQ, dK, dV = [0.0] * len(Q), [0.0] * len(Q), [0.0] * len(Q)
    vec = lambda X, b, s, h: X[_idx((Bn, S, H, D), b, s, h, 0):][:D]
    for b in range(Bn):
        for h in range(H):
            for i in range(S):
                q, do = vec(Q, b, i, h), vec(dO, b, i, h)
                lse, delta = LSE[_idx((Bn, H, S), b, h, i)], Delta[_idx((Bn, H, S), b, h, i)]
                qi = _idx((Bn, S, H, D), b, i, h, 0)
                for j in range(i + 1 if causal else S):
                    k, v = vec(K, b, j, h), vec(V, b, j, h)
                    kj = _idx((Bn, S, H, D), b, j, h, 0)
                    pr = math.exp(scale * math.fsum(a * c for a, c in zip(q, k)) - lse)
                    ds = pr * (math.fsum(a * c for a, c in zip(do, v)) - delta)
                    for d in range(D):
                        dV[kj + d] += pr * do[d]
                        dK[kj + d] += scale * ds * q[d]
                        dQ[qi + d] += scale * ds * k[d]
    return {"dQ_accum": dQ, "dK": dK, "dV": dV}


def flash_attention_bwd_dkdv(t, p):
    """flash_attention_bwd with atomic_dq = false: dK and dV; dQ_accum left as it started (0)."""
    out = flash_attention_bwd(t, p)
    out["dQ_accum"] = [0.0] * len(out["dQ_accum"])
    return out


def flash_attention_bwd_dq(t, p):
    """flash_attention_bwd_dq: dQ = dS K / sqrt(D), written once."""
    return {"dQ_accum": flash_attention_bwd(t, p)["dQ_accum"]}


def _decode_heads(batch, heads, kv_heads, dim, query, keys, vals, scale):
    """One query token per (sequence, head), head h reading KV head h / (heads / kv_heads):
    O [batch, heads, dim] from query(b, h), keys(b, g) and vals(b, g) (lists of rows)."""
    O = [0.0] * (batch * heads * dim)
    for b in range(batch):
        for h in range(heads):
            g = h // (heads // kv_heads)
            base = _idx((batch, heads, dim), b, h, 0)
            O[base:base + dim] = _attend(query(b, h), keys(b, g), vals(b, g), scale)
    return O


def flash_decoding(t, p):
    """samples/flash_decoding.tl: Q [batch, heads, dim], K/V [batch, kv_heads, seqlen, dim] ->
    O [batch, heads, dim] (query head h reads KV head h / (heads / kv_heads)); the counters Done
    back at 0. Partial and LSE are scratch (run_samples.py's "scratch")."""
    Q, (Bn, H, D) = t["Q"]
    K, (_, G, S, _) = t["K"]
    V, _ = t["V"]
    done, _ = t["Done"]
    rows = lambda T, b, g: [T[_idx((Bn, G, S, D), b, g, j, 0):][:D] for j in range(S)]
    O = _decode_heads(Bn, H, G, D, lambda b, h: Q[_idx((Bn, H, D), b, h, 0):][:D],
                      lambda b, g: rows(K, b, g), lambda b, g: rows(V, b, g), 1.0 / math.sqrt(D))
    return {"O": O, "Done": [0] * len(done)}


def flash_mla_decode(t, p):
    """Q [batch, heads, dim], Q_pe [batch, heads, pe], KV [batch, seq, kv_heads, dim],
    K_pe [batch, seq, kv_heads, pe] -> O [batch, heads, dim]."""
    Q, (Bn, H, D) = t["Q"]
    Qp, (_, _, P) = t["Q_pe"]
    KV, (_, S, G, _) = t["KV"]
    Kp, _ = t["K_pe"]
    query = lambda b, h: Q[_idx((Bn, H, D), b, h, 0):][:D] + Qp[_idx((Bn, H, P), b, h, 0):][:P]
    keys = lambda b, g: [KV[_idx((Bn, S, G, D), b, j, g, 0):][:D] + Kp[_idx((Bn, S, G, P), b, j, g, 0):][:P]
                         for j in range(S)]
    vals = lambda b, g: [KV[_idx((Bn, S, G, D), b, j, g, 0):][:D] for j in range(S)]
    return {"O": _decode_heads(Bn, H, G, D, query, keys, vals, 1.0 / math.sqrt(D + P))}


def attention_sink(t, p):
    """Q [batch, heads, seq, dim], K/V [batch, kv_heads, seq, dim], Sinks [heads] (GQA, no
    mask): O_i = sum_j exp(s_j - m) V_j / (exp(sink - m) + sum_j exp(s_j - m))."""
    Q, (Bn, H, S, D) = t["Q"]
    K, (_, G, _, _) = t["K"]
    V, _ = t["V"]
    sinks, _ = t["Sinks"]
    scale = 1.0 / math.sqrt(D)
    O = [0.0] * len(Q)
    for b in range(Bn):
        for h in range(H):
            g = h // (H // G)
            keys = [K[_idx((Bn, G, S, D), b, g, j, 0):][:D] for j in range(S)]
            vals = [V[_idx((Bn, G, S, D), b, g, j, 0):][:D] for j in range(S)]
            for i in range(S):
                q = Q[_idx((Bn, H, S, D), b, h, i, 0):][:D]
                s = [scale * math.fsum(x * y for x, y in zip(q, k)) for k in keys]
                m = max(s + [sinks[h]])
                e = [math.exp(v - m) for v in s]
                tot = math.fsum(e) + math.exp(sinks[h] - m)
                base = _idx((Bn, H, S, D), b, h, i, 0)
                O[base:base + D] = [math.fsum(e[j] * vals[j][d] for j in range(S)) / tot for d in range(D)]
    return {"O": O}


def _attend_listed(t, keys_of):
    """Q, K, V, O [batch, seq, heads, dim]: query i of (b, h) attends to the keys keys_of(b, h, i)
    lists; a row that sees no key is 0 (the sparse attention samples' references)."""
    Q, (Bn, S, H, D) = t["Q"]
    K, _ = t["K"]
    V, _ = t["V"]
    scale = 1.0 / math.sqrt(D)
    O = [0.0] * len(Q)
    vec = lambda X, b, s, h: X[_idx((Bn, S, H, D), b, s, h, 0):][:D]
    for b in range(Bn):
        for h in range(H):
            for i in range(S):
                seen = keys_of(b, h, i)
                if not seen:
                    continue
                o = _attend(vec(Q, b, i, h), [vec(K, b, j, h) for j in seen], [vec(V, b, j, h) for j in seen], scale)
                base = _idx((Bn, S, H, D), b, i, h, 0)
                O[base:base + D] = o
    return {"O": O}


def block_sparse_attention(t, p):
    """Q, K, V, O [batch, seq, heads, dim]; BlockMask [batch, heads, q_blocks, k_blocks] over
    blocks of p["block_M"] queries and p["block_N"] keys; a row that sees no key is 0."""
    Bn, S, H, _ = t["Q"][1]
    mask, (_, _, QB, KB) = t["BlockMask"]
    bm, bn = p["block_M"], p["block_N"]
    return _attend_listed(t, lambda b, h, i: [
        j for j in range(S) if i // bm < QB and j // bn < KB
        and mask[_idx((Bn, H, QB, KB), b, h, i // bm, j // bn)] != 0])


def vertical_slash_attention(t, p):
    """Q, K, V, O [batch, seq, heads, dim]; the index tables of tests/gpu/vertical_slash.py over
    query blocks of p["block_M"] rows and slash blocks of p["block_N"] keys: query i sees the
    listed keys of its block that are in [0, seq) and <= i; a row that sees no key is 0."""
    Bn, S, H, _ = t["Q"][1]
    counts, (_, _, QB) = t["BlockCount"]
    offsets, (_, _, _, NS) = t["BlockOffset"]
    col_counts, _ = t["ColumnCount"]
    columns, (_, _, _, NV) = t["ColumnIndex"]
    bm, bn = p["block_M"], p["block_N"]

    def keys(b, h, i):
        r = _idx((Bn, H, QB), b, h, i // bm)
        offs = [int(x) for x in offsets[r * NS:r * NS + int(counts[r])]]
        cols = [int(x) for x in columns[r * NV:r * NV + int(col_counts[r])]]
        return vertical_slash.visible_keys(offs, cols, i, S, bn)
    return _attend_listed(t, keys)


def conv2d(t, p):
    """X [N, H, W, C] (NHWC), Wt [F, kh, kw, C] -> Y [N, P, Q, F], zero padding."""
    X, (N, H, W, C) = t["X"]
    Wt, (F, kh, kw, _) = t["Wt"]
    stride, pad = p.get("stride", 1), p.get("pad", 1)
    P = (H + 2 * pad - kh) // stride + 1
    Qn = (W + 2 * pad - kw) // stride + 1
    Y = [0.0] * (N * P * Qn * F)
    for n in range(N):
        for y in range(P):
            for x in range(Qn):
                patch = []
                for r in range(kh):
                    for s in range(kw):
                        h, w = y * stride - pad + r, x * stride - pad + s
                        ok = 0 <= h < H and 0 <= w < W
                        patch.append(X[_idx((N, H, W, C), n, h, w, 0):][:C] if ok else [0.0] * C)
                for f in range(F):
                    acc = []
                    for r in range(kh):
                        for s in range(kw):
                            wv = Wt[_idx((F, kh, kw, C), f, r, s, 0):][:C]
                            acc += [a * b for a, b in zip(patch[r * kw + s], wv)]
                    Y[_idx((N, P, Qn, F), n, y, x, f)] = math.fsum(acc)
    return {"Y": Y}


def conv2d_splitk(t, p):
    """samples/conv2d.tl's split pass: Partial [splits, N * P * Q, F], slab z the sum over
    the K steps z * per .. (z + 1) * per - 1 (per = ceil(steps / splits)), step k being tap
    k // c_blocks and channels (k % c_blocks) * block_K onwards; slabs past the steps are 0."""
    X, (N, H, W, C) = t["X"]
    Wt, (F, kh, kw, _) = t["Wt"]
    stride, pad, splits, block_K = p.get("stride", 1), p.get("pad", 1), p["splits"], p["block_K"]
    P = (H + 2 * pad - kh) // stride + 1
    Qn = (W + 2 * pad - kw) // stride + 1
    M = N * P * Qn
    c_blocks = -(-C // block_K)
    steps = kh * kw * c_blocks
    per = -(-steps // splits)
    Partial = [0.0] * (splits * M * F)
    for z in range(splits):
        for k in range(z * per, min(steps, (z + 1) * per)):
            tap, c0 = k // c_blocks, (k % c_blocks) * block_K
            r, s = tap // kw, tap % kw
            for m in range(M):
                n, y, x = m // (P * Qn), m % (P * Qn) // Qn, m % Qn
                h, w = y * stride - pad + r, x * stride - pad + s
                if not (0 <= h < H and 0 <= w < W):
                    continue
                xs = X[_idx((N, H, W, C), n, h, w, c0):][:min(block_K, C - c0)]
                for f in range(F):
                    ws = Wt[_idx((F, kh, kw, C), f, r, s, c0):][:len(xs)]
                    Partial[(z * M + m) * F + f] += math.fsum(a * b for a, b in zip(xs, ws))
    return {"Partial": Partial}


def conv2d_splitk_sum(t, p):
    """samples/conv2d.tl's sum pass: Y [M, F] = the sum of Partial's slabs."""
    Partial, (splits, M, F) = t["Partial"]
    return {"Y": [math.fsum(Partial[z * M * F + i] for z in range(splits)) for i in range(M * F)]}


def dequant_gemm_fp4(t, p):
    """C = A @ dequant(B)^T: B f4e2m1 [N, K] (loaded as its values), Scales [N, K / group_size]."""
    A, (M, K) = t["A"]
    B, (N, _) = t["B"]
    scales, (_, groups) = t["Scales"]
    gs = K // groups
    W = [[B[n * K + k] * scales[n * groups + k // gs] for k in range(K)] for n in range(N)]
    return {"C": [math.fsum(A[i * K + k] * W[j][k] for k in range(K)) for i in range(M) for j in range(N)]}


def dequant_gemm_w4a16(t, p):
    """C = A @ dequant(B)^T: B u8 [N, K/2], two signed 4-bit weights per byte (low nibble =
    even k), Scales [N, K / group_size]."""
    A, (M, K) = t["A"]
    B, (N, _) = t["B"]
    scales, sshape = t["Scales"]
    # Scales [N, groups], or [groups, N] with tscales (the register form's GPTQ orientation).
    transposed = p.get("tscales", False)
    groups = sshape[0] if transposed else sshape[1]
    gs = K // groups
    W = []
    for n in range(N):
        row = []
        for k in range(K):
            byte = int(B[n * (K // 2) + k // 2])
            q = (byte >> (4 * (k % 2))) & 0xF
            q = q - 16 if q >= 8 else q
            g = k // gs
            row.append(q * scales[g * N + n if transposed else n * groups + g])
        W.append(row)
    C = [math.fsum(A[i * K + k] * W[j][k] for k in range(K)) for i in range(M) for j in range(N)]
    return {"C": C}


def packed_i4(t, p):
    """tests/gpu/ops/packed_i4.tl: B i4 [N, K] (loaded as its values); W and W2 its values in
    f16/bf16 (exact), E = 16 * q + q (a shared and a global read), Bc the tensor again."""
    B, _ = t["B"]
    return {"W": list(B), "W2": list(B), "E": [17.0 * q for q in B], "Bc": list(B)}


def packed_u4(t, p):
    Q, _ = t["Q"]
    return {"E": [17.0 * q for q in Q], "Qc": list(Q)}


def dequant_zp(t, p):
    """tests/gpu/ops/dequant_zp.tl: B [N, K] of u4/i4 (loaded as its values), Scales and Zeros
    [N, K / group_size] ([K / group_size, N] with tscales); W, W2 and W3 = dtype(dtype(q - zero) *
    scale), or dtype(q * scale) without
    zero points: each operation rounded once to the dtype, as the kernel's packed f16x2/bf16x2
    arithmetic does (the float64 difference and product are exact, so rounding them to the
    dtype is the dtype's own correctly rounded operation)."""
    B, (N, K) = t["B"]
    S, shape = t["Scales"]
    Z, _ = t["Zeros"]
    rnd = _round_f16 if p["dtype"] == "f16" else _round_bf16
    transposed = p.get("tscales", False)  # Scales and Zeros [K / group_size, N]
    G = shape[0] if transposed else shape[1]
    gs = K // G
    W = []
    for n in range(N):
        for c in range(K):
            g = (c // gs) * N + n if transposed else n * G + c // gs
            q = B[n * K + c]
            W.append(rnd((rnd(q - Z[g]) if p["zero_points"] else q) * S[g]))
    return {"W": W, "W2": list(W), "W3": list(W)}


def dequant_fp4(t, p):
    """tests/gpu/ops/dequant_fp4.tl: B f4e2m1 [N, K] (loaded as its values), Scales [N, K /
    group_size]; W and W2 = dtype(q * scale) (q exact in the dtype, so one rounding), or q
    without scaling; E = 16 * q + q (a shared and a global read); Bc the tensor again."""
    B, (N, K) = t["B"]
    S, (_, G) = t["Scales"]
    rnd = _round_f16 if p["dtype"] == "f16" else _round_bf16
    gs = K // G
    scaled = p.get("scaled", True)
    W = [rnd(B[n * K + c] * S[n * G + c // gs]) if scaled else B[n * K + c] for n in range(N) for c in range(K)]
    return {"W": W, "W2": list(W), "E": [17.0 * q for q in B], "Bc": list(B)}


def moe_align(T, E, topk, block_M, seed, absent=()):
    """vLLM's moe_align_block_size for a seeded random routing (topk distinct experts per
    token): (SortedIds, ExpertIds, NumPostPadded) as lists, SortedIds of vLLM's worst-case
    length T * topk + E * (block_M - 1), each expert's slots padded with T * topk to a multiple
    of block_M; blocks past the used ones get expert 0 (the kernel must skip them). The blocks
    of the experts in `absent` (held by another rank in expert parallelism) get expert -1."""
    import random
    rng = random.Random(seed)
    experts = [rng.sample(range(E), topk) for _ in range(T)]
    slots = T * topk
    em = slots + E * (block_M - 1)
    sorted_ids, expert_ids = [], []
    for e in range(E):
        mine = [t * topk + j for t in range(T) for j in range(topk) if experts[t][j] == e]
        if not mine:
            continue
        blocks = -(-len(mine) // block_M)
        sorted_ids += mine + [slots] * (blocks * block_M - len(mine))
        expert_ids += [-1 if e in absent else e] * blocks
    used = len(sorted_ids)
    sorted_ids += [slots] * (em - used)
    expert_ids += [0] * (-(-em // block_M) - len(expert_ids))
    return sorted_ids, expert_ids, [used]


def fused_moe(t, p):
    """C[s] = X[s / topk] @ W[e]^T (times TopkWeights[s] when weighted) for every slot s the
    routing lists in its first NumPostPadded entries, e the expert of its block; zero rows for
    experts < 0 (another rank's, in expert parallelism: vLLM writes zeros there)."""
    X, (T, K) = t["X"]
    Wt, (E, N, _) = t["W"]
    sorted_ids, _ = t["SortedIds"]
    expert_ids, _ = t["ExpertIds"]
    used = int(t["NumPostPadded"][0][0])
    weights, _ = t["TopkWeights"]
    topk, bm = p["topk"], p["block_M"]
    C = [math.nan] * (T * topk * N)
    for m in range(used):
        s = int(sorted_ids[m])
        e = int(expert_ids[m // bm])
        if s >= T * topk:
            continue
        if e < 0:
            C[s * N:(s + 1) * N] = [0.0] * N
            continue
        x = X[(s // topk) * K:(s // topk + 1) * K]
        w = weights[s] if p.get("weighted") else 1.0
        for n in range(N):
            C[s * N + n] = w * math.fsum(a * b for a, b in zip(x, Wt[(e * N + n) * K:(e * N + n + 1) * K]))
    return {"C": C}


def reduce_any(t, p):
    """tests/gpu/ops/reduce_any.tl: reductions of each [block_M, block_N] tile of zero-padded X,
    broadcast back over the tile."""
    X, (M, N) = t["X"]
    bm, bn = p["block_M"], p["block_N"]

    def x(i, j):
        return X[i * N + j] if i < M and j < N else 0.0
    out = {k: [0.0] * (M * N) for k in ("ColSum", "ColMax", "RowMin", "Total", "Depth")}
    for ti in range(0, M, bm):
        for tj in range(0, N, bn):
            cols = [[x(ti + a, tj + b) for a in range(bm)] for b in range(bn)]
            col_sum = [math.fsum(c) for c in cols]
            col_max = [max(c) for c in cols]
            row_min = [min(x(ti + a, tj + b) for b in range(bn)) for a in range(bm)]
            total = math.fsum(abs(v) for v in col_sum)
            for a in range(min(bm, M - ti)):
                for b in range(min(bn, N - tj)):
                    o = (ti + a) * N + tj + b
                    out["ColSum"][o] = col_sum[b]
                    out["ColMax"][o] = col_max[b]
                    out["RowMin"][o] = row_min[a]
                    out["Total"][o] = total
                    out["Depth"][o] = math.fsum(x(ti + a // 4 * 4 + c, tj + b) for c in range(4))
    return out


def last_block(t, p):
    """tests/gpu/ops/last_block.tl: the chunk sums of each row (Partial, and Own from the `if` or
    the `else`), their total from the last block (RowSum), the Seen markers it counted (Count:
    every chunk's), and the counters Done back at 0."""
    X, (M, N) = t["X"]
    bn = p["block_N"]
    chunks = -(-N // bn)
    part = [math.fsum(X[i * N + c * bn:i * N + min(N, (c + 1) * bn)]) for i in range(M) for c in range(chunks)]
    return {"Partial": part, "Own": part, "Seen": [1] * (M * chunks), "Done": [0] * M,
            "RowSum": [math.fsum(X[i * N:(i + 1) * N]) for i in range(M)], "Count": [chunks] * M}


def _round_f16(v):
    import struct as _s
    return _s.unpack("<e", _s.pack("<e", v))[0]


def _round_bf16(v):
    """v rounded to bfloat16 (to nearest, ties to even) through float32: exact for values that
    float32 holds, and for any other innocuous (float32 has more than 2 * 8 + 2 bits)."""
    import struct as _s
    bits = _s.unpack("<I", _s.pack("<f", v))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return _s.unpack("<f", _s.pack("<I", bits))[0]


def _first_position(values, largest):
    """The first position of the maximum (minimum) of `values`, NaN counting as both."""
    best = None
    for i, v in enumerate(values):
        if v != v:
            return i, v
        if best is None or (v > values[best] if largest else v < values[best]):
            best = i
    return best, values[best]


def cummax(t, p):
    """tests/gpu/ops/cummax.tl: running maxima and minima within each [block_M, block_N] tile of
    zero-padded X; the fragment scans read X rounded to f16 (the emulator case's dtype)."""
    X, (M, N) = t["X"]
    bm, bn = p["block_M"], p["block_N"]
    out = {k: [0.0] * (M * N) for k in ("Rows", "Cols", "Frag", "FragRows")}

    def scan(line, f):
        acc, res = line[0], []
        for v in line:
            acc = f(acc, v)
            res.append(acc)
        return res
    for ti in range(0, M, bm):
        for tj in range(0, N, bn):
            tile = [[X[(ti + a) * N + tj + b] if ti + a < M and tj + b < N else 0.0 for b in range(bn)]
                    for a in range(bm)]
            half = [[_round_f16(v) for v in row] for row in tile]
            for a in range(bm):
                for k, f, src in (("Rows", max, tile), ("FragRows", min, half)):
                    for b, v in enumerate(scan(src[a], f)):
                        if ti + a < M and tj + b < N:
                            out[k][(ti + a) * N + tj + b] = v
            for b in range(bn):
                for k, f, src in (("Cols", min, tile), ("Frag", max, half)):
                    col = scan([src[a][b] for a in reversed(range(bm))], f)[::-1]
                    for a, v in enumerate(col):
                        if ti + a < M and tj + b < N:
                            out[k][(ti + a) * N + tj + b] = v
    return out


def argmax(t, p):
    """tests/gpu/ops/argmax.tl: each row's argmax over all of X (read as f16), and within each
    [block_M, block_N] tile of zero-padded X each column's argmin (f16) and each row's argmax
    (f32), broadcast over the tile."""
    X, (M, N) = t["X"]
    bm, bn = p["block_M"], p["block_N"]
    out = {"ArgRow": [0.0] * M, "MaxRow": [0.0] * M}
    out.update({k: [0.0] * (M * N) for k in ("ColIdx", "ColMin", "RowIdx")})
    for i in range(M):
        out["ArgRow"][i], out["MaxRow"][i] = _first_position([_round_f16(v) for v in X[i * N:(i + 1) * N]], True)
    for ti in range(0, M, bm):
        for tj in range(0, N, bn):
            tile = [[X[(ti + a) * N + tj + b] if ti + a < M and tj + b < N else 0.0 for b in range(bn)]
                    for a in range(bm)]
            cols = [_first_position([_round_f16(tile[a][b]) for a in range(bm)], False) for b in range(bn)]
            rows = [_first_position(tile[a], True)[0] for a in range(bm)]
            for a in range(min(bm, M - ti)):
                for b in range(min(bn, N - tj)):
                    o = (ti + a) * N + tj + b
                    out["ColIdx"][o], out["ColMin"][o] = cols[b]
                    out["RowIdx"][o] = rows[a]
    return out


def _subset_handover(A, M, D, tiles, rnd):
    """O = sum over tiles (B_t, V_t: block_N rows each, as lists of rows) of P_t @ V_t + m_t,
    S_t = A @ B_t^T, m_t the running row maximum, P_t = (S_t - m_t) / 8 rounded by `rnd`."""
    O = [0.0] * (M * D)
    for i in range(M):
        m = -math.inf
        terms = [[] for _ in range(D)]
        for bt, vt in tiles:
            S = [math.fsum(A[i * D + k] * row[k] for k in range(D)) for row in bt]
            m = max(m, max(S))
            P = [rnd((x - m) * 0.125) for x in S]
            for d in range(D):
                terms[d].append(m)
                terms[d].extend(P[c] * vt[c][d] for c in range(len(vt)))
        for d in range(D):
            O[i * D + d] = math.fsum(terms[d])
    return O


def _key_tile(X, N, D, t0, block_n):
    return [[X[j * D + k] for k in range(D)] if j < N else [0.0] * D for j in range(t0, t0 + block_n)]


def gemm_thread_subset(t, p):
    """tests/gpu/ops/gemm_thread_subset.tl: per tile of block_N keys (rows past N zero),
    S = A @ B_t^T, the running row maximum m, P = (S - m) / 8 rounded to the inputs' dtype, and
    O = sum over tiles of P @ V_t + m; gemm_thread_subset_steps: the first tile `steps` times."""
    A, (M, D) = t["A"]
    B, (N, _) = t["B"]
    V, _ = t["V"]
    block_n = p.get("block_N", 32)
    rnd = _round_bf16 if p.get("dtype") == "bf16" else _round_f16
    starts = [0] * p["steps"] if "steps" in p else range(0, N, block_n)
    tiles = [(_key_tile(B, N, D, t0, block_n), _key_tile(V, N, D, t0, block_n)) for t0 in starts]
    return {"O": _subset_handover(A, M, D, tiles, rnd)}


def fragment_convert(t, p):
    """tests/gpu/ops/fragment_convert.tl: O = (A @ B rounded to f16) @ V."""
    A, (M, K) = t["A"]
    B, _ = t["B"]
    V, _ = t["V"]
    O = [0.0] * (M * 64)
    for i in range(M):
        P = [_round_f16(math.fsum(A[i * K + k] * B[k * 64 + j] for k in range(K))) for j in range(64)]
        for j in range(64):
            O[i * 64 + j] = math.fsum(P[c] * V[c * 64 + j] for c in range(64))
    return {"O": O}


def gemm_sr(t, p):
    """tests/gpu/ops/gemm_sr.tl (B in registers): C = A @ W^T, D = A @ V^T with
    V[n, k] = W[n, k] * ((n + k) % 2 + 1) (exact in f16 and bf16); gemm_rr.tl's C too."""
    A, (M, K) = t["A"]
    W, (N, _) = t["W"]
    out = {"C": [math.fsum(A[i * K + k] * W[j * K + k] for k in range(K)) for i in range(M) for j in range(N)]}
    if "D" in t:
        out["D"] = [math.fsum(A[i * K + k] * W[j * K + k] * ((j + k) % 2 + 1) for k in range(K))
                    for i in range(M) for j in range(N)]
    return out


# ---- samples/chunk_gated_delta.tl, kernel by kernel ----------------------------------------------
# Q, K [batch, seq, heads, dk], V and O [.., dv], G and Beta [batch, seq, heads]; the scratch
# Gc [batch, heads, seq], W [batch, heads, seq, dk], U [.., dv]. Chunks of 64 steps; steps past
# seq read as zeros (bounds-checked copies), which the references model by padding.
GDN_CHUNK = 64


def gated_delta_chunk(k, v, g, beta):
    """One chunk (lists of rows, zero-padded): Gc = cumsum(g), A (strictly lower), T = (I + A)^-1
    by forward substitution, W = T diag(beta exp(Gc)) K, U = T diag(beta) V."""
    C = len(g)
    gc = [math.fsum(g[:i + 1]) for i in range(C)]
    A = [[beta[i] * math.fsum(a * b for a, b in zip(k[i], k[j])) * math.exp(gc[i] - gc[j]) if j < i else 0.0
          for j in range(C)] for i in range(C)]
    T = []
    for i in range(C):   # T[i] = e_i - sum_{j<i} A[i, j] T[j]
        T.append([(1.0 if c == i else 0.0) - math.fsum(A[i][j] * T[j][c] for j in range(i)) for c in range(C)])
    kb = [[x * beta[i] * math.exp(gc[i]) for x in k[i]] for i in range(C)]
    vb = [[x * beta[i] for x in v[i]] for i in range(C)]
    W = [[math.fsum(T[i][j] * kb[j][d] for j in range(i + 1)) for d in range(len(k[0]))] for i in range(C)]
    U = [[math.fsum(T[i][j] * vb[j][d] for j in range(i + 1)) for d in range(len(v[0]))] for i in range(C)]
    return gc, W, U


def _gdn_rows(X, shape, b, h, t0, C):
    """Rows t0 .. t0 + C of head h of X [batch, seq, heads, d], zeros past seq."""
    Bn, S, H, D = shape
    return [X[_idx(shape, b, t, h, 0):][:D] if t < S else [0.0] * D for t in range(t0, t0 + C)]


def gated_delta_prepare(t, p):
    K, (Bn, S, H, DK) = t["K"]
    V, (_, _, _, DV) = t["V"]
    G, _ = t["G"]
    Beta, _ = t["Beta"]
    C = GDN_CHUNK
    out = {"Gc": [0.0] * (Bn * H * S), "W": [0.0] * (Bn * H * S * DK), "U": [0.0] * (Bn * H * S * DV)}
    for b in range(Bn):
        for h in range(H):
            for t0 in range(0, S, C):
                steps = [G[_idx((Bn, S, H), b, t, h)] if t < S else 0.0 for t in range(t0, t0 + C)]
                betas = [Beta[_idx((Bn, S, H), b, t, h)] if t < S else 0.0 for t in range(t0, t0 + C)]
                gc, W, U = gated_delta_chunk(_gdn_rows(K, (Bn, S, H, DK), b, h, t0, C),
                                             _gdn_rows(V, (Bn, S, H, DV), b, h, t0, C), steps, betas)
                for i in range(min(C, S - t0)):
                    out["Gc"][_idx((Bn, H, S), b, h, t0 + i)] = gc[i]
                    o = _idx((Bn, H, S, DK), b, h, t0 + i, 0)
                    out["W"][o:o + DK] = W[i]
                    o = _idx((Bn, H, S, DV), b, h, t0 + i, 0)
                    out["U"][o:o + DV] = U[i]
    return out


def gated_delta_output(t, p):
    """O = scale (diag(exp(Gc)) Q S + (tril(Q K^T) * exp(Gc_i - Gc_j)) (U - W S)) chunk after
    chunk, S = exp(Gc_last) S + K^T diag(exp(Gc_last - Gc)) (U - W S), from the Gc, W and U the
    kernel reads (zeros past seq)."""
    Q, (Bn, S, H, DK) = t["Q"]
    K, _ = t["K"]
    Gc, _ = t["Gc"]
    W, _ = t["W"]
    U, (_, _, _, DV) = t["U"]
    C, scale = GDN_CHUNK, 1.0 / math.sqrt(DK)
    O = [0.0] * (Bn * S * H * DV)
    for b in range(Bn):
        for h in range(H):
            state = [[0.0] * DV for _ in range(DK)]
            for t0 in range(0, S, C):
                q = _gdn_rows(Q, (Bn, S, H, DK), b, h, t0, C)
                k = _gdn_rows(K, (Bn, S, H, DK), b, h, t0, C)
                rows = [t for t in range(t0, t0 + C)]
                gc = [Gc[_idx((Bn, H, S), b, h, t)] if t < S else 0.0 for t in rows]
                w = [W[_idx((Bn, H, S, DK), b, h, t, 0):][:DK] if t < S else [0.0] * DK for t in rows]
                u = [U[_idx((Bn, H, S, DV), b, h, t, 0):][:DV] if t < S else [0.0] * DV for t in rows]
                vn = [[u[i][j] - math.fsum(w[i][d] * state[d][j] for d in range(DK)) for j in range(DV)]
                      for i in range(C)]
                for i in range(min(C, S - t0)):
                    qk = [math.fsum(a * c for a, c in zip(q[i], k[j])) * math.exp(gc[i] - gc[j]) for j in range(i + 1)]
                    o = _idx((Bn, S, H, DV), b, t0 + i, h, 0)
                    O[o:o + DV] = [scale * (math.exp(gc[i]) * math.fsum(q[i][d] * state[d][j] for d in range(DK))
                                            + math.fsum(qk[m] * vn[m][j] for m in range(i + 1))) for j in range(DV)]
                last = gc[C - 1]
                state = [[math.exp(last) * state[d][j]
                          + math.fsum(k[i][d] * math.exp(last - gc[i]) * vn[i][j] for i in range(C))
                          for j in range(DV)] for d in range(DK)]
    return {"O": O}
