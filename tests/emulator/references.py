"""Float64 references of the samples, in plain Python (no numpy on the CI machine).

Each takes the tensors the emulator ran on (flat lists of floats, with shapes) and returns the
expected outputs as flat lists. Shapes follow the samples' own comments.
"""
import math


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
    """Q, K, V, O: [batch, seq_len, heads, dim]; optional causal mask."""
    Q, (Bn, S, H, D) = t["Q"]
    K, _ = t["K"]
    V, _ = t["V"]
    causal = p.get("causal", False)
    scale = 1.0 / math.sqrt(D)
    O = [0.0] * len(Q)
    vec = lambda X, b, s, h: X[_idx((Bn, S, H, D), b, s, h, 0):][:D]
    for b in range(Bn):
        for h in range(H):
            keys = [vec(K, b, j, h) for j in range(S)]
            vals = [vec(V, b, j, h) for j in range(S)]
            for i in range(S):
                n = i + 1 if causal else S
                o = _attend(vec(Q, b, i, h), keys[:n], vals[:n], scale)
                base = _idx((Bn, S, H, D), b, i, h, 0)
                O[base:base + D] = o
    return {"O": O}


def flash_mla_decode(t, p):
    """Q [batch, heads, dim], Q_pe [batch, heads, pe], KV [batch, seq, kv_heads, dim],
    K_pe [batch, seq, kv_heads, pe] -> O [batch, heads, dim]."""
    Q, (Bn, H, D) = t["Q"]
    Qp, (_, _, P) = t["Q_pe"]
    KV, (_, S, G, _) = t["KV"]
    Kp, _ = t["K_pe"]
    scale = 1.0 / math.sqrt(D + P)
    O = [0.0] * len(Q)
    for b in range(Bn):
        for h in range(H):
            g = h // (H // G)
            q = Q[_idx((Bn, H, D), b, h, 0):][:D] + Qp[_idx((Bn, H, P), b, h, 0):][:P]
            keys = [KV[_idx((Bn, S, G, D), b, j, g, 0):][:D] + Kp[_idx((Bn, S, G, P), b, j, g, 0):][:P]
                    for j in range(S)]
            vals = [KV[_idx((Bn, S, G, D), b, j, g, 0):][:D] for j in range(S)]
            base = _idx((Bn, H, D), b, h, 0)
            O[base:base + D] = _attend(q, keys, vals, scale)
    return {"O": O}
