"""The math behind each kernel family: inputs, poisoned outputs, references, work counts.

One class per family of cases.KERNELS. Tensor layouts follow the samples: GEMM A [M, K],
B [K, N], C [M, N] (row-major); attention Q/K/V/O [batch, seq_len, heads, dim]; softmax and
RMSNorm X/Y [M, N] (RMSNorm's weight W [N]); the test kernels of tests/gpu/ops/ describe theirs
in their header comments. References are computed on the GPU in float32 or float64 from the
very same low-precision inputs, so they measure the kernel's error and not the rounding of the
inputs.
"""
from __future__ import annotations

import math

import torch

from abi import FP4_E2M1_VALUES, mark_packed
from cases import REDUCE_OPS, Build

TORCH_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
                "i8": torch.int8, "i32": torch.int32}
# fp8 tensors came with torch 2.1 (the GPU machine's); older ones (Debian's, for the CPU unit
# tests) lack them, and only the fp8 builds need them.
FP8_DTYPES = {name: getattr(torch, attr) for name, attr in
              (("f8e4m3", "float8_e4m3fn"), ("f8e5m2", "float8_e5m2")) if hasattr(torch, attr)}
TORCH_DTYPES.update(FP8_DTYPES)
REFERENCE_DTYPES = {"float32": torch.float32, "float64": torch.float64}

# Largest float32 score block the attention reference materializes at once.
_ATTENTION_SCORE_BYTES = 512 << 20


def configure_reference_precision() -> None:
    """float32 references must be float32 arithmetic, not tf32 (which is ~1e-3 relative)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def parse_bool(text: str) -> bool:
    if text not in ("true", "false"):
        raise ValueError(f"expected true or false, got {text!r}")
    return text == "true"


def poison(dtype: torch.dtype):
    """The value outputs start with: NaN, or the minimum of an integer type."""
    return math.nan if dtype.is_floating_point else torch.iinfo(dtype).min


def still_poisoned(t: torch.Tensor) -> bool:
    """Whether every element of `t` still holds its poison (nothing wrote it)."""
    if t.dtype.is_floating_point:
        return bool(torch.isnan(t.float()).all())
    return bool((t == poison(t.dtype)).all())


def to_reference(x: torch.Tensor, ref: torch.dtype) -> torch.Tensor:
    """`x` in the reference precision, exactly: fp8 through float32 (not every torch converts
    fp8 to float64 directly), every other type directly."""
    if x.dtype in FP8_DTYPES.values():
        x = x.to(torch.float32)
    return x.to(ref)


class Problem:
    """Base: the knobs of one build and what every family shares."""
    bound = "compute"   # "compute": report TFLOP/s; "memory": report GB/s
    # True for kernels that atomic_add into their outputs: those must start at zero before
    # every launch (see launcher()), so they cannot carry the NaN poison into the call.
    accumulates = False
    # Outputs that carry intermediate results from one launch of an operation to the next
    # (cases.KernelSpec.then): poisoned like the others, but the reference does not give them
    # (they are not compared) and min_bytes does not count them.
    scratch = ()
    # The counters of `if last_block(Counter[...], n)` (docs/language.md): i32 outputs that
    # must hold 0 before the first launch, which every complete launch leaves 0 again. They
    # start zero-filled (not poisoned), are zeroed before every launch (launcher()), are not
    # compared with a reference nor counted by min_bytes, and the runner fails a case whose
    # launch left one non-zero (counters_left): blocks arrived a wrong number of times.
    counters = ()
    # Tensors that hold the bytes of packed i4/u4 tensors (name -> tlc dtype): uint8
    # [..., K / 2], marked by abi.mark_packed so that their views are the logical [..., K].
    packed: dict = {}
    # True for kernels that sum with float atomics (in an order that changes from run to run)
    # into outputs they clear themselves: their error may move by rounding between runs.
    float_atomics = False

    def __init__(self, build: Build):
        self.build = build
        self.spec = build.spec
        self.dtype = TORCH_DTYPES[build.defines["dtype"]]

    def tensor_dtype(self, name: str) -> torch.dtype:
        """The element type of tensor `name`: the build's dtype unless the family says else."""
        return self.dtype

    def tensor_shapes(self, shape: dict) -> dict:
        raise NotImplementedError

    def inputs(self, shape: dict, gen: torch.Generator) -> dict:
        shapes = self.tensor_shapes(shape)
        return {p.name: self._random(p.name, shapes[p.name], gen)
                for p in self.spec.tensors if p.role == "in"}

    def outputs(self, shape: dict, device: str = "cuda") -> dict:
        """Outputs filled with NaN: an element still NaN after the call was never written.
        Integer outputs have no NaN: they start at the type's minimum, which no reference of an
        integer case reaches (|C| of an i8 gemm stays below 2^31 by far), so an unwritten
        element fails the exact comparison those cases make (tolerance 0)."""
        shapes = self.tensor_shapes(shape)
        outputs = {}
        for p in self.spec.tensors:
            if p.role != "out":
                continue
            dtype = self.tensor_dtype(p.name)
            if p.name in self.counters:
                if dtype not in (torch.int32, getattr(torch, "uint32", torch.int32)):
                    raise ValueError(f"counter {p.name} must be i32 or u32, not {dtype}")
                outputs[p.name] = torch.zeros(shapes[p.name], dtype=dtype, device=device)
            else:
                outputs[p.name] = torch.full(shapes[p.name], poison(dtype), dtype=dtype, device=device)
        return outputs

    def poisoned_outputs(self, outputs: dict) -> list:
        """The outputs that start poisoned (all but the counters): a launch the launcher
        refused must leave them so."""
        return [t for name, t in outputs.items() if name not in self.counters]

    def counters_left(self, outputs: dict) -> str:
        """'' when every counter holds 0, else what a launch left in them (the reason a case
        fails: the last_block arrivals were miscounted)."""
        left = []
        for name in self.counters:
            t = outputs[name]
            nonzero = int((t != 0).sum())
            if nonzero:
                values = t[t != 0].reshape(-1)[:3].tolist()
                left.append(f"{name}: {nonzero} of {t.numel()} non-zero (e.g. {values})")
        return ("last_block counter(s) left non-zero after the launch: " + "; ".join(left)
                if left else "")

    def launcher(self, call, outputs: dict):
        """`call` (the bound C entry point, returning its status code) as every launch of a
        case must go through it: accumulating kernels get their outputs zeroed first, since
        the runner calls a kernel several times on the same outputs (the check, the timing,
        the check again), and last_block's counters (`counters`) are zeroed before every
        launch as well: a launch that left one non-zero must not break the next (the runner
        checks them after the check and after the timing). The launcher-contract checks call
        the entry point directly: their outputs must keep the NaN poison that shows a launch."""
        tensors = (list(outputs.values()) if self.accumulates
                   else [outputs[name] for name in self.counters])
        if not tensors:
            return call

        def zero_then_call() -> int:
            for t in tensors:
                t.zero_()
            return call()
        return zero_then_call

    # Inputs are drawn in float32 (every backend has that) on the generator's device (the GPU,
    # or the CPU in unit tests), then rounded to the tensor's dtype.
    def _random(self, name: str, shape: tuple, gen: torch.Generator) -> torch.Tensor:
        return torch.randn(shape, generator=gen, device=gen.device).to(self.tensor_dtype(name))

    def scalars(self, shape: dict) -> list:
        """Values of the kernel's run-time scalar parameters, in parameter order."""
        return []

    def reference(self, inputs: dict, shape: dict, precision: str) -> dict:
        raise NotImplementedError

    def flops(self, shape: dict) -> float:
        raise NotImplementedError

    def min_bytes(self, shape: dict) -> float:
        """Each input read once, each output written once (scratch tensors and counters not
        counted)."""
        shapes = self.tensor_shapes(shape)
        return float(sum(math.prod(s) * torch.empty((), dtype=self.tensor_dtype(name))
                         .element_size() for name, s in shapes.items()
                         if name not in self.scratch and name not in self.counters))


class GemmProblem(Problem):
    """C = op(A) @ op(B); samples/gemm.tl is the NN case, tests/gpu/ops/gemm_{nt,tn,tt}.tl
    store A as [K, M] (transpose_A) and/or B as [N, K] (transpose_B). C is `out_dtype` where
    the build sets it (i8 inputs into i32, fp8 into f16 or f32), else `dtype`."""
    transpose_a = False
    transpose_b = False

    def tensor_dtype(self, name):
        if name == "C" and "out_dtype" in self.build.defines:
            return TORCH_DTYPES[self.build.defines["out_dtype"]]
        return self.dtype

    def tensor_shapes(self, shape):
        m, n, k = shape["M"], shape["N"], shape["K"]
        return {"A": (k, m) if self.transpose_a else (m, k),
                "B": (n, k) if self.transpose_b else (k, n), "C": (m, n)}

    def _random(self, name, shape, gen):
        # i8: the whole range, -128 included (sign extension, the largest products); the
        # float types (fp8 too) from a normal distribution rounded to the type.
        if self.dtype == torch.int8:
            return torch.randint(-128, 128, shape, generator=gen, device=gen.device, dtype=torch.int8)
        return super()._random(name, shape, gen)

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        a, b = to_reference(inputs["A"], ref), to_reference(inputs["B"], ref)
        return {"C": (a.T if self.transpose_a else a) @ (b.T if self.transpose_b else b)}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * shape["K"]


class GemmFp8Problem(GemmProblem):
    """samples/gemm_fp8.tl: C = (A @ B^T) * Scale_a[:, None] * Scale_b[None, :], fp8 A [M, K] and
    B [N, K] drawn as fp8 values (so the reference multiplies exactly what the kernel does), f32
    scales, C in out_dtype (bf16 unless the build says)."""
    transpose_b = True

    def tensor_dtype(self, name):
        if name.startswith("Scale_"):
            return torch.float32
        if name == "C":
            return TORCH_DTYPES[self.build.defines.get("out_dtype", "bf16")]
        return self.dtype

    def tensor_shapes(self, shape):
        shapes = super().tensor_shapes(shape)
        shapes.update({"Scale_a": (shape["M"],), "Scale_b": (shape["N"],)})
        return shapes

    def _random(self, name, shape, gen):
        if name.startswith("Scale_"):
            # Positive, as quantization scales are, spread over a factor of 4.
            return 0.005 + 0.015 * torch.rand(shape, generator=gen, device=gen.device)
        return super()._random(name, shape, gen)

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        c = super().reference(inputs, shape, precision)["C"]
        return {"C": c * to_reference(inputs["Scale_a"], ref)[:, None] * to_reference(inputs["Scale_b"], ref)[None, :]}


class AttentionProblem(Problem):
    def __init__(self, build):
        super().__init__(build)
        self.causal = parse_bool(build.defines["causal"])

    def tensor_shapes(self, shape):
        s = (shape["batch"], shape["seq_len"], shape["heads"], shape["dim"])
        return {"Q": s, "K": s, "V": s, "O": s}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        q, k, v = inputs["Q"], inputs["K"], inputs["V"]
        batch, seq, heads, dim = q.shape
        out = torch.empty(q.shape, dtype=ref, device=q.device)
        scale = 1.0 / math.sqrt(dim)
        mask = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1) \
            if self.causal else None
        # A few heads at a time, so that 64 x 64 x 2048^2 scores never exist at once.
        heads_per_chunk = max(1, min(heads, _ATTENTION_SCORE_BYTES // (seq * seq * 4)))
        for b in range(batch):
            for h0 in range(0, heads, heads_per_chunk):
                h1 = min(heads, h0 + heads_per_chunk)
                qh, kh, vh = (t[b, :, h0:h1, :].to(ref).transpose(0, 1) for t in (q, k, v))
                scores = (qh @ kh.transpose(-1, -2)) * scale
                if mask is not None:
                    scores.masked_fill_(mask, -math.inf)
                out[b, :, h0:h1, :] = (torch.softmax(scores, dim=-1) @ vh).transpose(0, 1)
        return {"O": out}

    def flops(self, shape):
        # Two products of 2 * S * S * D each per (batch, head); causal does half (convention of
        # FlashAttention and of ../shared/anchors).
        full = 4.0 * shape["batch"] * shape["heads"] * shape["seq_len"] ** 2 * shape["dim"]
        return full * (0.5 if self.causal else 1.0)


class BlockSparseAttentionProblem(AttentionProblem):
    """samples/block_sparse_attention.tl: attention restricted to the (block_M query, block_N
    key) blocks a random BlockMask keeps (about half, the diagonal always, one query block row
    never: its rows see no key and must come out 0)."""

    def __init__(self, build):
        Problem.__init__(self, build)
        self.causal = False
        self.block_m = int(build.defines.get("block_M", "128"))
        self.block_n = int(build.defines.get("block_N", "128"))

    def _mask_shape(self, shape):
        s = shape["seq_len"]
        return (shape["batch"], shape["heads"], -(-s // self.block_m), -(-s // self.block_n))

    def tensor_shapes(self, shape):
        shapes = super().tensor_shapes(shape)
        shapes["BlockMask"] = self._mask_shape(shape)
        return shapes

    def tensor_dtype(self, name):
        return torch.int32 if name == "BlockMask" else self.dtype

    def inputs(self, shape, gen):
        x = super().inputs(shape, gen)
        b, h, qb, kb = self._mask_shape(shape)
        mask = torch.randint(0, 2, (b, h, qb, kb), generator=gen, device=gen.device, dtype=torch.int32)
        for i in range(qb):  # every query block keeps the key block holding its first query
            mask[:, :, i, min(kb - 1, i * self.block_m // self.block_n)] = 1
        if qb > 1:
            mask[:, :, qb - 2, :] = 0
        x["BlockMask"] = mask
        return x

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        q, k, v, bm = inputs["Q"], inputs["K"], inputs["V"], inputs["BlockMask"]
        batch, seq, heads, dim = q.shape
        rows = torch.arange(seq, device=q.device) // self.block_m
        cols = torch.arange(seq, device=q.device) // self.block_n
        out = torch.empty(q.shape, dtype=ref, device=q.device)
        for b in range(batch):
            for h in range(heads):
                keep = bm[b, h][rows][:, cols] != 0          # [seq, seq]
                scores = (q[b, :, h].to(ref) @ k[b, :, h].to(ref).T) / math.sqrt(dim)
                scores.masked_fill_(~keep, -math.inf)
                p = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # rows that see no key: 0
                out[b, :, h] = p @ v[b, :, h].to(ref)
        return {"O": out}

    def flops(self, shape):
        # What the kept blocks cost is input-dependent; the dense count, as for attention.
        return 4.0 * shape["batch"] * shape["heads"] * shape["seq_len"] ** 2 * shape["dim"]


class VerticalSlashAttentionProblem(AttentionProblem):
    """samples/vertical_slash_attention.tl: causal attention over the keys that MInference-style
    index tables list per query block of block_M rows: slash blocks of block_N keys from
    BlockOffset (BlockCount of them) and single keys from ColumnIndex (ColumnCount). As in
    MInference the tables are nnz_s = the number of slash diagonals (times ceil(block_M /
    block_N), the most blocks one diagonal can take) and nnz_v = the number of verticals wide
    (entries past a count are vertical_slash.PAD); the patterns come from
    vertical_slash.pattern, one per (batch, head), and the tables from its index builder (each
    key listed at most once). Query block 1 of head (0, 0) lists nothing: its rows see no key and
    must be written 0."""

    def __init__(self, build):
        Problem.__init__(self, build)
        self.causal = True
        self.block_m = int(build.defines.get("block_M", "64"))
        self.block_n = int(build.defines.get("block_N", "64"))
        # Keys (query, key pairs) the tables list, per shape: the work the kernels do.
        self._pairs = {}

    def tensor_shapes(self, shape):
        shapes = super().tensor_shapes(shape)
        qb = -(-shape["seq_len"] // self.block_m)
        rows = (shape["batch"], shape["heads"], qb)
        shapes.update(BlockCount=rows, BlockOffset=rows + (shape["nnz_s"],), ColumnCount=rows,
                      ColumnIndex=rows + (shape["nnz_v"],))
        return shapes

    def tensor_dtype(self, name):
        return torch.int32 if name in ("BlockCount", "BlockOffset", "ColumnCount", "ColumnIndex") \
            else self.dtype

    def slashes(self, shape) -> int:
        """Slash diagonals per head: as many as the table is wide, fewer where one diagonal can
        take more than one block (block_M > block_N)."""
        return max(1, shape["nnz_s"] // -(-self.block_m // self.block_n))

    def inputs(self, shape, gen):
        import random
        import vertical_slash
        x = {n: self._random(n, s, gen) for n, s in AttentionProblem.tensor_shapes(self, shape).items()
             if n != "O"}
        seed = int(torch.randint(0, 1 << 30, (1,), generator=gen, device=gen.device))
        rng = random.Random(seed)
        seq = shape["seq_len"]
        # Head 1 has no local band, so that verticals right of the diagonal reach the kernel.
        patterns = [[vertical_slash.pattern(seq, shape["nnz_v"], self.slashes(shape), rng, local=h != 1)
                     for h in range(shape["heads"])] for _ in range(shape["batch"])]
        tables = vertical_slash.tables_torch(seq, self.block_m, self.block_n, patterns,
                                             (shape["nnz_s"], shape["nnz_v"]), gen.device)
        if tables["BlockCount"].shape[2] > 1:
            tables["BlockCount"][0, 0, 1] = 0
            tables["ColumnCount"][0, 0, 1] = 0
        x.update(tables)
        self._pairs[tuple(sorted(shape.items()))] = self.listed_pairs(x)
        return x

    def listed(self, inputs, b, h):
        """[q_blocks, seq] int: how often the tables of (b, h) list each key in range."""
        bm, bn = self.block_m, self.block_n
        seq = inputs["Q"].shape[1]
        dev = inputs["Q"].device
        counts = torch.zeros(inputs["BlockCount"].shape[2], seq + 1, dtype=torch.int32, device=dev)
        for n_name, t_name, width in (("BlockCount", "BlockOffset", bn), ("ColumnCount", "ColumnIndex", 1)):
            table = inputs[t_name][b, h].long()
            n = inputs[n_name][b, h].long().clamp(0, table.shape[1])
            table = table[:, :max(1, int(n.max()))]   # the entries past every count: unread
            keys = table[:, :, None] + torch.arange(width, device=dev)
            use = (torch.arange(table.shape[1], device=dev)[None, :, None] < n[:, None, None]) \
                & (keys >= 0) & (keys < seq)
            keys = torch.where(use, keys, torch.full_like(keys, seq))   # column seq: discarded
            counts.scatter_add_(1, keys.reshape(keys.shape[0], -1),
                                torch.ones(keys.shape[0], keys[0].numel(), dtype=torch.int32, device=dev))
        return counts[:, :seq]

    def listed_pairs(self, inputs) -> int:
        """(query, key) pairs with key <= query that the tables list: what the kernels compute."""
        batch, seq, heads, _ = inputs["Q"].shape
        dev = inputs["Q"].device
        r0 = torch.arange(inputs["BlockCount"].shape[2], device=dev) * self.block_m
        r1 = torch.clamp(r0 + self.block_m, max=seq)
        key = torch.arange(seq, device=dev)
        # Rows of each query block at or after each key.
        rows = (r1[:, None] - torch.maximum(key[None, :], r0[:, None])).clamp(min=0)
        return sum(int((self.listed(inputs, b, h).long() * rows).sum())
                   for b in range(batch) for h in range(heads))

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        q, k, v = inputs["Q"], inputs["K"], inputs["V"]
        batch, seq, heads, dim = q.shape
        rows = torch.arange(seq, device=q.device)
        causal = rows[None, :] <= rows[:, None]
        out = torch.empty(q.shape, dtype=ref, device=q.device)
        for b in range(batch):
            for h in range(heads):
                counts = self.listed(inputs, b, h)
                # The kernel does not deduplicate: the builder must list each key once.
                assert int(counts.max()) <= 1, "the index tables list a key twice"
                keep = (counts[rows // self.block_m] > 0) & causal        # [seq, seq]
                scores = (q[b, :, h].to(ref) @ k[b, :, h].to(ref).T) / math.sqrt(dim)
                scores.masked_fill_(~keep, -math.inf)
                p = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # rows that see no key: 0
                out[b, :, h] = p @ v[b, :, h].to(ref)
        return {"O": out}

    def flops(self, shape):
        # The listed (query, key) pairs when the inputs were made here, else dense causal.
        pairs = self._pairs.get(tuple(sorted(shape.items())))
        if pairs is None:
            pairs = shape["batch"] * shape["heads"] * shape["seq_len"] ** 2 / 2
        return 4.0 * pairs * shape["dim"]


class AttentionSinkProblem(Problem):
    """samples/attention_sink.tl: Q, O [batch, heads, seq_len, dim], K, V [batch, kv_heads,
    seq_len, dim] (query head h reads K/V head h // (heads / kv_heads)), Sinks f32 [heads]: a
    logit per head in the softmax's denominator with no value row. Optional sliding window."""

    def __init__(self, build):
        super().__init__(build)
        self.causal = parse_bool(build.defines["causal"])
        self.window = int(build.defines["window"])

    def tensor_shapes(self, shape):
        b, h, kv, s, d = (shape[k] for k in ("batch", "heads", "kv_heads", "seq_len", "dim"))
        return {"Q": (b, h, s, d), "K": (b, kv, s, d), "V": (b, kv, s, d), "Sinks": (h,),
                "O": (b, h, s, d)}

    def tensor_dtype(self, name):
        return torch.float32 if name == "Sinks" else self.dtype

    def inputs(self, shape, gen):
        x = super().inputs(shape, gen)
        # Scores of N(0, 1) inputs are about N(0, 1), so a row of n visible keys sums to about
        # 1.6 n: sinks around log(seq_len), give or take 3, take from almost none to almost all
        # of the denominator, and are often above every score (the maximum must cover them).
        x["Sinks"] = x["Sinks"] * 3 + math.log(shape["seq_len"])
        return x

    def visible(self, seq: int, device) -> torch.Tensor | None:
        """[seq, seq] bool, [query i, key j]: key j is visible to query i (None: all are)."""
        if not self.causal and not self.window:
            return None
        i = torch.arange(seq, device=device)[:, None]
        j = torch.arange(seq, device=device)[None, :]
        keep = torch.ones(seq, seq, dtype=torch.bool, device=device)
        if self.causal:
            keep &= j <= i
        if self.window:
            keep &= j > i - self.window
            if not self.causal:
                keep &= j < i + self.window
        return keep

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        q, k, v, sinks = inputs["Q"], inputs["K"], inputs["V"], inputs["Sinks"]
        batch, heads, seq, dim = q.shape
        groups = heads // k.shape[1]
        keep = self.visible(seq, q.device)
        out = torch.empty(q.shape, dtype=ref, device=q.device)
        heads_per_chunk = max(1, min(heads, _ATTENTION_SCORE_BYTES // (seq * seq * 8)))
        for b in range(batch):
            for h0 in range(0, heads, heads_per_chunk):
                h1 = min(heads, h0 + heads_per_chunk)
                kv = torch.arange(h0, h1, device=q.device) // groups   # each query head's K/V head
                scores = (q[b, h0:h1].to(ref) @ k[b, kv].to(ref).transpose(-1, -2)) / math.sqrt(dim)
                if keep is not None:
                    scores.masked_fill_(~keep, -math.inf)
                # The sink as one more logit per row, dropped again after the softmax.
                sink = sinks[h0:h1].to(ref).view(-1, 1, 1).expand(-1, seq, 1)
                p = torch.softmax(torch.cat([scores, sink], dim=-1), dim=-1)[..., :seq]
                out[b, h0:h1] = p @ v[b, kv].to(ref)
        return {"O": out}

    def visible_pairs(self, seq: int) -> float:
        if self.window:
            keep = self.visible(seq, "cpu")
            return float(keep.sum())
        return seq * seq * (0.5 if self.causal else 1.0)

    def flops(self, shape):
        # Two products of 2 * D flops per (query, visible key) pair and head; causal without a
        # window counts half of S^2, as flash attention's convention does.
        return 4.0 * shape["batch"] * shape["heads"] * shape["dim"] * self.visible_pairs(shape["seq_len"])


class SoftmaxProblem(Problem):
    bound = "memory"

    def tensor_shapes(self, shape):
        return {"X": (shape["M"], shape["N"]), "Y": (shape["M"], shape["N"])}

    def _random(self, name, shape, gen):
        # Spread of +-12: the row maximum matters and exp would overflow without subtracting it.
        return (torch.randn(shape, generator=gen, device=gen.device) * 4).to(self.dtype)

    def reference(self, inputs, shape, precision):
        return {"Y": torch.softmax(inputs["X"].to(REFERENCE_DTYPES[precision]), dim=-1)}

    def flops(self, shape):
        return 5.0 * shape["M"] * shape["N"]


class RmsNormProblem(Problem):
    bound = "memory"

    def __init__(self, build):
        super().__init__(build)
        self.eps = float(build.defines["eps"])

    def tensor_shapes(self, shape):
        m, n = shape["M"], shape["N"]
        return {"X": (m, n), "W": (n,), "Y": (m, n)}

    def _random(self, name, shape, gen):
        x = torch.randn(shape, generator=gen, device=gen.device)
        return (1.0 + 0.5 * x if name == "W" else x).to(self.dtype)

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        x, w = inputs["X"].to(ref), inputs["W"].to(ref)
        inv_rms = torch.rsqrt(x.square().mean(dim=-1, keepdim=True) + self.eps)
        return {"Y": x * inv_rms * w}

    def flops(self, shape):
        return 4.0 * shape["M"] * shape["N"]


class LogSoftmaxProblem(SoftmaxProblem):
    def reference(self, inputs, shape, precision):
        return {"Y": torch.log_softmax(inputs["X"].to(REFERENCE_DTYPES[precision]), dim=-1)}


class LayerNormProblem(Problem):
    bound = "memory"

    def __init__(self, build):
        super().__init__(build)
        self.eps = float(build.defines.get("eps", "1e-5"))

    def tensor_shapes(self, shape):
        m, n = shape["M"], shape["N"]
        return {"X": (m, n), "W": (n,), "B": (n,), "Y": (m, n)}

    def _random(self, name, shape, gen):
        x = torch.randn(shape, generator=gen, device=gen.device)
        # Rows with a mean far from 0 (x + 3): E[x^2] - mean^2 must still hold up in f32.
        return (1.0 + 0.5 * x if name == "W" else 0.5 * x if name == "B" else x + 3.0).to(self.dtype)

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        x = inputs["X"].to(ref)
        y = torch.nn.functional.layer_norm(x, (x.shape[-1],), inputs["W"].to(ref), inputs["B"].to(ref), self.eps)
        return {"Y": y}

    def flops(self, shape):
        return 7.0 * shape["M"] * shape["N"]


class SwiGluProblem(Problem):
    bound = "memory"

    def tensor_shapes(self, shape):
        s = (shape["M"], shape["N"])
        return {"G": s, "U": s, "Y": s}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        g, u = inputs["G"].to(ref), inputs["U"].to(ref)
        return {"Y": torch.nn.functional.silu(g) * u}

    def flops(self, shape):
        return 5.0 * shape["M"] * shape["N"]


class GemvProblem(Problem):
    bound = "memory"

    def tensor_shapes(self, shape):
        return {"A": (shape["M"], shape["K"]), "x": (shape["K"],), "y": (shape["M"],)}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        return {"y": inputs["A"].to(ref) @ inputs["x"].to(ref)}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["K"]


class MlaDecodeProblem(Problem):
    """samples/flash_mla_decode.tl: one query token per sequence, a latent KV cache that is its
    own value matrix, query head h reading KV head h / (heads / kv_heads)."""

    def tensor_shapes(self, shape):
        b, h, s, g = shape["batch"], shape["heads"], shape["seqlen_kv"], shape["kv_heads"]
        d, p = shape["dim"], shape["pe_dim"]
        return {"Q": (b, h, d), "Q_pe": (b, h, p), "KV": (b, s, g, d), "K_pe": (b, s, g, p),
                "O": (b, h, d)}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        q, q_pe, kv, k_pe = (inputs[n].to(ref) for n in ("Q", "Q_pe", "KV", "K_pe"))
        batch, heads, dim = q.shape
        kv_heads, pe_dim = kv.shape[2], q_pe.shape[2]
        group = heads // kv_heads
        scale = 1.0 / math.sqrt(dim + pe_dim)
        out = torch.empty(q.shape, dtype=ref, device=q.device)
        for b in range(batch):
            for g in range(kv_heads):
                rows = slice(g * group, (g + 1) * group)
                keys, keys_pe = kv[b, :, g, :], k_pe[b, :, g, :]
                scores = (q[b, rows] @ keys.T + q_pe[b, rows] @ keys_pe.T) * scale
                out[b, rows] = torch.softmax(scores, dim=-1) @ keys
        return {"O": out}

    def flops(self, shape):
        b, h, s = shape["batch"], shape["heads"], shape["seqlen_kv"]
        return 2.0 * b * h * s * (2 * shape["dim"] + shape["pe_dim"])


class FlashDecodingProblem(Problem):
    """samples/flash_decoding.tl: one query token per sequence, query head h reading KV head
    h / (heads / kv_heads); one launch, in which the last split of each block of a KV head's
    query heads to finish combines the splits (last_block). Partial and LSE are its scratch
    (what a split holds depends on the tiling), Done its counters (one per block of block_H
    query heads: [batch, kv_heads * ceildiv(heads / kv_heads, block_H)]): O is compared, and
    the bytes it must move are Q, K and V read once and O written once."""
    bound = "memory"
    scratch = ("Partial", "LSE")
    counters = ("Done",)

    def __init__(self, build):
        super().__init__(build)
        self.num_splits = int(build.defines["num_splits"])
        self.block_h = int(build.defines["block_H"])

    def tensor_shapes(self, shape):
        b, h, g, s, d = (shape[k] for k in ("batch", "heads", "kv_heads", "seqlen", "dim"))
        if h % g:
            raise ValueError(f"heads = {h} must be a multiple of kv_heads = {g}")
        head_blocks = -(-(h // g) // self.block_h)
        return {"Q": (b, h, d), "K": (b, g, s, d), "V": (b, g, s, d),
                "Partial": (b, h, self.num_splits, d), "LSE": (b, h, self.num_splits),
                "Done": (b, g * head_blocks), "O": (b, h, d)}

    def tensor_dtype(self, name):
        if name in self.counters:
            return torch.int32
        return torch.float32 if name in self.scratch else self.dtype

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        q, k, v = (inputs[n].to(ref) for n in ("Q", "K", "V"))
        batch, heads, dim = q.shape
        kv_heads = k.shape[1]
        # [batch, kv_heads, groups, dim] @ [batch, kv_heads, dim, seqlen]: each KV head's group
        # of query heads, heads g * groups ... (g + 1) * groups - 1, against its keys.
        qg = q.view(batch, kv_heads, heads // kv_heads, dim)
        scores = (qg @ k.transpose(-1, -2)) / math.sqrt(dim)
        return {"O": (torch.softmax(scores, dim=-1) @ v).reshape(batch, heads, dim)}

    def flops(self, shape):
        # Q K^T and P V: 2 * seqlen * dim each per query head.
        return 4.0 * shape["batch"] * shape["heads"] * shape["seqlen"] * shape["dim"]


class GatedDeltaProblem(Problem):
    """samples/chunk_gated_delta.tl: the chunk gated delta net forward, two launches (the
    per-chunk preparation, then the state across chunks) as one operation. Q, K [batch, seq_len,
    heads, dk] (K L2-normalised, as the caller must give it), V [.., dv], the log decay G <= 0
    and Beta in (0, 1) f32 [batch, seq_len, heads]; Gc, W and U are its scratch. The reference
    is the recurrence itself in float64 (not the chunked algorithm), one step at a time over
    all (batch, head) pairs at once."""
    scratch = ("Gc", "W", "U")

    def tensor_shapes(self, shape):
        b, t, h, dk, dv = (shape[k] for k in ("batch", "seq_len", "heads", "dk", "dv"))
        return {"Q": (b, t, h, dk), "K": (b, t, h, dk), "V": (b, t, h, dv), "G": (b, t, h),
                "Beta": (b, t, h), "Gc": (b, h, t), "W": (b, h, t, dk), "U": (b, h, t, dv),
                "O": (b, t, h, dv)}

    def tensor_dtype(self, name):
        return torch.float32 if name in ("G", "Beta", "Gc") else self.dtype

    def _random(self, name, shape, gen):
        x = torch.randn(shape, generator=gen, device=gen.device)
        if name == "K":
            x = x / x.norm(dim=-1, keepdim=True)
        elif name == "G":
            # log-sigmoid of N(3, 1): decays of about 0.95 per step (mean g = -0.06), some
            # steps much stronger: a chunk's cumsum reaches about -4.
            x = torch.nn.functional.logsigmoid(x + 3)
        elif name == "Beta":
            x = torch.sigmoid(x)
        return x.to(self.tensor_dtype(name))

    def reference(self, inputs, shape, precision):
        return {"O": gated_delta_recurrence(inputs, REFERENCE_DTYPES[precision])}

    def flops(self, shape):
        return gated_delta_flops(shape)


def gated_delta_recurrence(inputs: dict, ref: torch.dtype) -> torch.Tensor:
    """O of the gated delta rule, step by step: per (batch, head), from S = 0 [dk, dv],
    S = S exp(g_t); u = beta_t (v_t - S^T k_t); S = S + k_t u^T; o_t = S^T (q_t / sqrt(dk))."""
    q, k, v, g, beta = (inputs[n].to(ref) for n in ("Q", "K", "V", "G", "Beta"))
    batch, seq, heads, dk = q.shape
    dv = v.shape[-1]
    q = q * dk ** -0.5
    state = torch.zeros(batch, heads, dk, dv, dtype=ref, device=q.device)
    out = torch.empty(batch, seq, heads, dv, dtype=ref, device=q.device)
    for t in range(seq):
        state = state * torch.exp(g[:, t])[..., None, None]
        kt = k[:, t]                                                   # [batch, heads, dk]
        u = beta[:, t][..., None] * (v[:, t] - torch.einsum("bhkv,bhk->bhv", state, kt))
        state = state + kt[..., :, None] * u[..., None, :]
        out[:, t] = torch.einsum("bhkv,bhk->bhv", state, q[:, t])
    return out


def gated_delta_chunked(inputs: dict, ref: torch.dtype, chunk: int = 64) -> torch.Tensor:
    """O of the gated delta rule by the chunked algorithm of samples/chunk_gated_delta.tl (its
    header has the maths), in torch at precision `ref`: every chunk's A, T = (I + A)^-1
    (a triangular solve), W, U and the intra-chunk scores at once, then the state chunk after
    chunk. The benchmark's torch peer and reference (float32); checked against the recurrence
    by test_torch_cpu.py."""
    q, k, v = (inputs[n].to(ref).transpose(1, 2) for n in ("Q", "K", "V"))   # [B, H, T, D]
    g, beta = (inputs[n].to(ref).transpose(1, 2) for n in ("G", "Beta"))     # [B, H, T]
    batch, heads, seq, dk = q.shape
    dv = v.shape[-1]
    n = -(-seq // chunk)
    pad = n * chunk - seq    # missing steps: q = k = v = 0, g = beta = 0

    def chunks(x, d):
        x = torch.nn.functional.pad(x, (0, 0, 0, pad) if d else (0, pad))
        return x.reshape(batch, heads, n, chunk, *((d,) if d else ()))
    q, k, v, g, beta = chunks(q, dk), chunks(k, dk), chunks(v, dv), chunks(g, 0), chunks(beta, 0)
    gc = g.cumsum(-1)
    rows = torch.arange(chunk, device=q.device)
    incl = rows[:, None] >= rows[None, :]
    decay = torch.exp((gc[..., :, None] - gc[..., None, :]).masked_fill(~incl, -math.inf))
    eye = torch.eye(chunk, dtype=ref, device=q.device)
    below = rows[:, None] > rows[None, :]
    a = (beta[..., :, None] * (k @ k.transpose(-1, -2)) * decay).masked_fill(~below, 0)
    t_inv = torch.linalg.solve_triangular(eye + a, eye.expand_as(a), upper=False, unitriangular=True)
    w = t_inv @ (k * (beta * torch.exp(gc))[..., None])
    u = t_inv @ (v * beta[..., None])
    scores = (q @ k.transpose(-1, -2)) * decay * dk ** -0.5
    q_decayed = q * (torch.exp(gc) * dk ** -0.5)[..., None]
    k_decayed = k * torch.exp(gc[..., -1:] - gc)[..., None]
    state = torch.zeros(batch, heads, dk, dv, dtype=ref, device=q.device)
    out = torch.empty(batch, heads, n, chunk, dv, dtype=ref, device=q.device)
    for c in range(n):
        vn = u[:, :, c] - w[:, :, c] @ state
        out[:, :, c] = q_decayed[:, :, c] @ state + scores[:, :, c] @ vn
        state = torch.exp(gc[:, :, c, -1])[..., None, None] * state + k_decayed[:, :, c].transpose(-1, -2) @ vn
    return out.reshape(batch, heads, n * chunk, dv)[:, :, :seq].transpose(1, 2)


def gated_delta_flops(shape: dict) -> float:
    """The chunked algorithm's matrix products at chunk C = 64, 2 flops per multiply-add, per
    (batch, head) and chunk: K K^T (C^2 dk), T's substitution (C^3 / 3), W and U (C^2 (dk +
    dv)), W S, Q S and S's update (3 C dk dv), Q K^T (C^2 dk) and P Vn (C^2 dv)."""
    c = 64
    chunks = math.ceil(shape["seq_len"] / c)
    dk, dv = shape["dk"], shape["dv"]
    per_chunk = c * c * dk + c ** 3 / 3 + c * c * (dk + dv) + 3 * c * dk * dv + c * c * dk + c * c * dv
    return 2.0 * shape["batch"] * shape["heads"] * chunks * per_chunk


def attention_lse(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, ref: torch.dtype):
    """O [batch, seq, heads, dim] and LSE [batch, heads, seq] = ln(sum_j exp(q . k_j / sqrt(dim)))
    of softmax attention in `ref`, a few heads at a time (as AttentionProblem.reference)."""
    batch, seq, heads, dim = q.shape
    out = torch.empty(q.shape, dtype=ref, device=q.device)
    lse = torch.empty((batch, heads, seq), dtype=ref, device=q.device)
    mask = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1) if causal else None
    heads_per_chunk = max(1, min(heads, _ATTENTION_SCORE_BYTES // (seq * seq * 4)))
    for b in range(batch):
        for h0 in range(0, heads, heads_per_chunk):
            h1 = min(heads, h0 + heads_per_chunk)
            qh, kh, vh = (t[b, :, h0:h1, :].to(ref).transpose(0, 1) for t in (q, k, v))
            scores = (qh @ kh.transpose(-1, -2)) / math.sqrt(dim)
            if mask is not None:
                scores.masked_fill_(mask, -math.inf)
            lse[b, h0:h1] = torch.logsumexp(scores, dim=-1)
            out[b, :, h0:h1, :] = (torch.softmax(scores, dim=-1) @ vh).transpose(0, 1)
    return out, lse


class AttentionFwdLseProblem(AttentionProblem):
    """samples/flash_attention_bwd.tl's forward: O as samples/flash_attention.tl, and the
    log-sum-exp LSE [batch, heads, seq_len] (f32, natural log) the backward reads."""

    def tensor_shapes(self, shape):
        s = (shape["batch"], shape["seq_len"], shape["heads"], shape["dim"])
        return {"Q": s, "K": s, "V": s, "O": s, "LSE": s[:1] + s[2:3] + s[1:2]}

    def tensor_dtype(self, name):
        return torch.float32 if name == "LSE" else self.dtype

    def reference(self, inputs, shape, precision):
        out, lse = attention_lse(inputs["Q"], inputs["K"], inputs["V"], self.causal,
                                 REFERENCE_DTYPES[precision])
        return {"O": out, "LSE": lse}


class AttentionBwdProblem(Problem):
    """samples/flash_attention_bwd.tl's backward: the preprocess (Delta = rowsum(dO * O), dQ_accum
    zeroed), then the key-block kernel, as one operation. Its inputs are Q, K, V and dO drawn
    at random, and the forward's O (rounded to dtype) and LSE computed here from them in
    float32, as a forward would leave them. The reference is float64 autograd through softmax
    attention on the same Q, K, V and dO: dQ (the f32 dQ_accum), dK and dV are all compared.
    dQ is summed with float atomics in an order that changes from run to run."""
    float_atomics = True
    scratch = ("Delta",)

    def __init__(self, build):
        super().__init__(build)
        self.causal = parse_bool(build.defines["causal"])

    def tensor_shapes(self, shape):
        s = (shape["batch"], shape["seq_len"], shape["heads"], shape["dim"])
        rows = (shape["batch"], shape["heads"], shape["seq_len"])
        return {"O": s, "dO": s, "Delta": rows, "dQ_accum": s, "Q": s, "K": s, "V": s,
                "LSE": rows, "dK": s, "dV": s}

    def tensor_dtype(self, name):
        return torch.float32 if name in ("Delta", "dQ_accum", "LSE") else self.dtype

    def inputs(self, shape, gen):
        shapes = self.tensor_shapes(shape)
        x = {n: self._random(n, shapes[n], gen) for n in ("Q", "K", "V", "dO")}
        out, lse = attention_lse(x["Q"], x["K"], x["V"], self.causal, torch.float32)
        x["O"], x["LSE"] = out.to(self.dtype), lse
        return x

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        batch, seq, heads, dim = inputs["Q"].shape
        grads = {n: torch.empty(inputs["Q"].shape, dtype=ref, device=inputs["Q"].device)
                 for n in ("dQ_accum", "dK", "dV")}
        mask = torch.ones(seq, seq, dtype=torch.bool, device=inputs["Q"].device).triu(1) \
            if self.causal else None
        # Autograd keeps the scores and probabilities: a few heads at a time.
        heads_per_chunk = max(1, min(heads, _ATTENTION_SCORE_BYTES // (seq * seq * 8 * 4)))
        for b in range(batch):
            for h0 in range(0, heads, heads_per_chunk):
                h1 = min(heads, h0 + heads_per_chunk)
                q, k, v = (inputs[n][b, :, h0:h1, :].to(ref).transpose(0, 1).clone().requires_grad_()
                           for n in ("Q", "K", "V"))
                do = inputs["dO"][b, :, h0:h1, :].to(ref).transpose(0, 1)
                with torch.enable_grad():
                    scores = (q @ k.transpose(-1, -2)) / math.sqrt(dim)
                    if mask is not None:
                        scores = scores.masked_fill(mask, -math.inf)
                    out = torch.softmax(scores, dim=-1) @ v
                    dq, dk, dv = torch.autograd.grad(out, (q, k, v), do)
                for name, g in (("dQ_accum", dq), ("dK", dk), ("dV", dv)):
                    grads[name][b, :, h0:h1, :] = g.transpose(0, 1)
        return grads

    def flops(self, shape):
        # 2.5x the forward's 4 * S * S * D per (batch, head), as FlashAttention-2 counts (five
        # S x S x D products against the forward's two); causal does half.
        full = 10.0 * shape["batch"] * shape["heads"] * shape["seq_len"] ** 2 * shape["dim"]
        return full * (0.5 if self.causal else 1.0)


class AttentionBwdSplitProblem(AttentionBwdProblem):
    """The deterministic backward (attention_bwd_split): the same problem, dQ written once by
    flash_attention_bwd_dq, so a repeated run must give the same error exactly (no float
    atomics: GPU run 138, 28 of 28 cases repeated bit for bit where the atomic form's 15 of 34
    moved by rounding)."""
    float_atomics = False


class DequantW4A16Problem(Problem):
    """samples/dequant_gemm_w4a16.tl and dequant_gemv_w4a16.tl: C = A @ W^T, W[n, c] = int4 nibble c of row n of B (low
    nibble first, two's complement) times Scales[n, c / group_size]."""

    def __init__(self, build):
        super().__init__(build)
        self.group_size = int(build.defines["group_size"])
        # Scales stored [K / group_size, N] (GPTQ's orientation): samples/dequant_gemm_w4a16_regs.tl's
        # tscales, whose default is true; the other W4A16 kernels store them [N, K / group_size].
        self.transposed = parse_bool(build.defines.get("tscales", "true" if build.family == "w4a16_wreg" else "false"))

    def tensor_shapes(self, shape):
        m, n, k = shape["M"], shape["N"], shape["K"]
        if k % 2 or k % self.group_size:
            raise ValueError(f"K = {k} must be even and a multiple of group_size "
                             f"{self.group_size}")
        groups = k // self.group_size
        return {"A": (m, k), "B": (n, k // 2), "Scales": (groups, n) if self.transposed else (n, groups),
                "C": (m, n)}

    def tensor_dtype(self, name):
        return torch.uint8 if name == "B" else self.dtype

    def _random(self, name, shape, gen):
        if name == "B":
            return torch.randint(0, 256, shape, generator=gen, device=gen.device,
                                 dtype=torch.uint8)
        if name == "Scales":
            # Positive, around 0.05: W = q * s stays O(0.3) and C = A @ W^T O(10) at K = 1024.
            x = torch.randn(shape, generator=gen, device=gen.device)
            return (0.05 * (1.0 + 0.25 * x).abs()).to(self.dtype)
        return super()._random(name, shape, gen)

    def weights(self, packed: torch.Tensor, scales: torch.Tensor, ref) -> torch.Tensor:
        """[N, K] dequantized weights in `ref` from the packed bytes and the scales."""
        nibbles = torch.stack([packed & 0xF, packed >> 4], dim=-1).reshape(packed.shape[0], -1)
        q = (nibbles.to(torch.int32) ^ 8) - 8          # sign extension of a 4-bit value
        if self.transposed:
            scales = scales.t()
        return q.to(ref) * scales.to(ref).repeat_interleave(self.group_size, dim=1)

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        w = self.weights(inputs["B"], inputs["Scales"], ref)
        return {"C": inputs["A"].to(ref) @ w.T}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * shape["K"]


class DequantFp4GemmProblem(DequantW4A16Problem):
    """samples/dequant_gemm_fp4.tl: C = A @ W^T, W[n, c] = the FP4 E2M1 value of nibble c of row n of
    B (low nibble first; decoded by table) times Scales[n, c / group_size]. B travels as its
    bytes, uint8 [N, K / 2], marked as an f4e2m1 tensor."""

    def _random(self, name, shape, gen):
        b = super()._random(name, shape, gen)
        return mark_packed(b, "f4e2m1") if name == "B" else b

    def weights(self, packed: torch.Tensor, scales: torch.Tensor, ref) -> torch.Tensor:
        return (PackedI4Problem.fp4_values(packed).to(ref) *
                scales.to(ref).repeat_interleave(self.group_size, dim=1))


# ---- The test kernels of tests/gpu/ops/ --------------------------------------------------------

class GemmNTProblem(GemmProblem):
    transpose_b = True


class GemmBatchedProblem(Problem):
    """C[b] = A[b] @ B[b] (tests/gpu/ops/gemm_batched.tl)."""

    def tensor_shapes(self, shape):
        b, m, n, k = shape["batch"], shape["M"], shape["N"], shape["K"]
        return {"A": (b, m, k), "B": (b, k, n), "C": (b, m, n)}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        return {"C": inputs["A"].to(ref) @ inputs["B"].to(ref)}

    def flops(self, shape):
        return 2.0 * shape["batch"] * shape["M"] * shape["N"] * shape["K"]


class MaskedGemmProblem(Problem):
    """tests/gpu/ops/masked_gemm.tl: C = the sum over the k-blocks kb with Mask[kb] != 0 of
    A[:, kb] @ B[kb, :] (block_K-wide k-blocks; about half of them kept)."""

    def __init__(self, build):
        super().__init__(build)
        self.block_k = int(build.defines.get("block_K", "32"))

    def _blocks(self, shape):
        return -(-shape["K"] // self.block_k)

    def tensor_shapes(self, shape):
        m, n, k = shape["M"], shape["N"], shape["K"]
        return {"A": (m, k), "B": (k, n), "Mask": (self._blocks(shape),), "C": (m, n)}

    def tensor_dtype(self, name):
        return torch.int32 if name == "Mask" else self.dtype

    def inputs(self, shape, gen):
        x = super().inputs(shape, gen)
        x["Mask"] = torch.randint(0, 2, (self._blocks(shape),), generator=gen, device=gen.device,
                                  dtype=torch.int32)
        return x

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        keep = inputs["Mask"].long().repeat_interleave(self.block_k)[: shape["K"]] != 0
        a = inputs["A"].to(ref) * keep.to(ref)[None, :]
        return {"C": a @ inputs["B"].to(ref)}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * shape["K"]


class GemmTNProblem(GemmProblem):
    transpose_a = True


class GemmTTProblem(GemmProblem):
    transpose_a = True
    transpose_b = True


class GemmRsProblem(Problem):
    """D = dtype(A @ B) @ E: the second gemm takes dtype(A @ B) from registers."""

    def tensor_shapes(self, shape):
        m, n, dk, dp = shape["M"], shape["N"], shape["dim_k"], shape["dim_p"]
        return {"A": (m, dk), "B": (dk, n), "E": (n, dp), "D": (m, dp)}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        # The kernel rounds A @ B to dtype on purpose (the fragment-to-fragment copy), as
        # attention rounds its probabilities; the reference rounds too, so that with bf16 the
        # error left is the kernel's, not that of the rounding it was asked to do.
        p = (inputs["A"].to(ref) @ inputs["B"].to(ref)).to(self.dtype).to(ref)
        return {"D": p @ inputs["E"].to(ref)}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * (shape["dim_k"] + shape["dim_p"])


class GemmSrProblem(Problem):
    """tests/gpu/ops/gemm_sr.tl (B in registers): C = A @ W^T and D = A @ V^T with
    V[n, k] = W[n, k] * ((n + k) % 2 + 1), both f32; gemm_rr.tl's C (A and B in registers)."""

    def tensor_shapes(self, shape):
        m, n, k = shape["M"], shape["N"], shape["K"]
        shapes = {"A": (m, k), "W": (n, k), "C": (m, n)}
        if self.build.family == "gemm_sr":
            shapes["D"] = (m, n)
        return shapes

    def tensor_dtype(self, name):
        return torch.float32 if name in ("C", "D") else self.dtype

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        a, w = inputs["A"].to(ref), inputs["W"].to(ref)
        out = {"C": a @ w.T}
        if self.build.family == "gemm_sr":
            n, k = w.shape
            parity = (torch.arange(n, device=w.device)[:, None] + torch.arange(k, device=w.device)[None, :]) % 2
            out["D"] = a @ (w * (parity + 1).to(ref)).T
        return out

    def flops(self, shape):
        return (4.0 if self.build.family == "gemm_sr" else 2.0) * shape["M"] * shape["N"] * shape["K"]


def reduce_last(x: torch.Tensor, op: str) -> torch.Tensor:
    """The tile operator reduce_<op> over the last dimension."""
    if op in ("abssum", "absmax"):
        x = x.abs()
    if op in ("sum", "abssum"):
        return x.sum(dim=-1)
    return x.amin(dim=-1) if op == "min" else x.amax(dim=-1)


def combine(a: torch.Tensor, b: torch.Tensor, op: str) -> torch.Tensor:
    """What reduce_<op>(..., clear = false) does with the destination's old value `a`."""
    if op in ("sum", "abssum"):
        return a + b
    return torch.minimum(a, b) if op == "min" else torch.maximum(a, b)


class ReduceRowsProblem(Problem):
    """tests/gpu/ops/reduce_rows.tl: Tiles[t, m] = OP over the t-th block_N columns of row m
    (clear = true), Acc[m] = OP(Init[m], OP over row m) (clear = false)."""
    bound = "memory"

    def __init__(self, build):
        super().__init__(build)
        self.op = REDUCE_OPS[int(build.defines["op"])]
        self.block_n = int(build.defines["block_N"])

    def tiles(self, n: int) -> int:
        if n % self.block_n:
            raise ValueError(f"N = {n} must be a multiple of block_N = {self.block_n}")
        return n // self.block_n

    def tensor_shapes(self, shape):
        m, n = shape["M"], shape["N"]
        return {"X": (m, n), "Init": (m,), "Tiles": (self.tiles(n), m), "Acc": (m,)}

    def tensor_dtype(self, name):
        return self.dtype if name in ("X", "A", "B") else torch.float32

    def _random(self, name, shape, gen):
        if name != "Init":
            return super()._random(name, shape, gen)
        # Wide enough to win some maxima and minima, so that Acc shows whether the old value
        # took part; not negative for the abs* reductions, whose combine does not take abs.
        init = 3.0 * torch.randn(shape, generator=gen, device=gen.device)
        return init.abs() if self.op.startswith("abs") else init

    def matrix(self, inputs: dict, ref) -> torch.Tensor:
        """The [M, N] values the kernel reduces."""
        return inputs["X"].to(ref)

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        x = self.matrix(inputs, ref)
        m, n = x.shape
        tiles = reduce_last(x.reshape(m, self.tiles(n), self.block_n), self.op)
        acc = combine(inputs["Init"].to(ref), reduce_last(x, self.op), self.op)
        return {"Tiles": tiles.T, "Acc": acc}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"]


class ReduceGemmProblem(ReduceRowsProblem):
    """tests/gpu/ops/reduce_gemm.tl: the same reductions over the rows of A @ B."""
    bound = "compute"

    def tensor_shapes(self, shape):
        m, n, k = shape["M"], shape["N"], shape["dim_k"]
        return {"A": (m, k), "B": (k, n), "Init": (m,), "Tiles": (self.tiles(n), m),
                "Acc": (m,)}

    def matrix(self, inputs, ref):
        return inputs["A"].to(ref) @ inputs["B"].to(ref)

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * shape["dim_k"]


class AtomicSplitKProblem(Problem):
    """tests/gpu/ops/atomic_splitk.tl: split-K C = A @ B accumulated by atomics from fragments
    (C_frag) and from shared tiles (C_shared), row sums by scalar atomics, a block count."""
    accumulates = True

    def __init__(self, build):
        super().__init__(build)
        self.splits = int(build.defines["splits"])
        self.block_m = int(build.defines["block_M"])
        self.block_n = int(build.defines["block_N"])

    def tensor_shapes(self, shape):
        m, n, k = shape["M"], shape["N"], shape["K"]
        return {"A": (m, k), "B": (k, n), "C_frag": (m, n), "C_shared": (m, n),
                "RowSum": (m,), "Blocks": (self.splits,)}

    def tensor_dtype(self, name):
        return self.dtype if name in ("A", "B") else torch.float32

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        c = inputs["A"].to(ref) @ inputs["B"].to(ref)
        blocks = math.ceil(shape["M"] / self.block_m) * math.ceil(shape["N"] / self.block_n)
        return {"C_frag": c, "C_shared": c, "RowSum": c.sum(dim=1),
                "Blocks": torch.full((self.splits,), float(blocks), dtype=ref, device=c.device)}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * shape["K"]


class AtomicRowSumProblem(Problem):
    """tests/gpu/ops/atomic_rowsum.tl: RowSum = X.sum(1) by one scalar atomic per element."""
    bound = "memory"
    accumulates = True

    def tensor_shapes(self, shape):
        return {"X": (shape["M"], shape["N"]), "RowSum": (shape["M"],)}

    def reference(self, inputs, shape, precision):
        return {"RowSum": inputs["X"].to(REFERENCE_DTYPES[precision]).sum(dim=1)}

    def flops(self, shape):
        return float(shape["M"] * shape["N"])


class LastBlockProblem(Problem):
    """tests/gpu/ops/last_block.tl: a block per (chunk of block_N columns, row); the last block
    of each row to arrive (`if last_block(Done[m], chunks)`) adds up the row's chunk sums that
    the others wrote to Partial. RowSum = X.sum(1); Count = chunks (the Seen markers the last
    block saw, each 1); Own = each chunk's sum, written from the `if` or the `else`. Partial is
    scratch (the same chunk sums, but compared through RowSum), Done the counters."""
    bound = "memory"
    scratch = ("Partial",)
    counters = ("Done",)

    def __init__(self, build):
        super().__init__(build)
        self.block_n = int(build.defines["block_N"])

    def chunks(self, shape) -> int:
        return -(-shape["N"] // self.block_n)

    def tensor_shapes(self, shape):
        m, chunks = shape["M"], self.chunks(shape)
        return {"X": (m, shape["N"]), "Partial": (m, chunks), "Seen": (m, chunks), "Done": (m,),
                "RowSum": (m,), "Count": (m,), "Own": (m, chunks)}

    def tensor_dtype(self, name):
        if name in ("Seen", "Done", "Count"):
            return torch.int32
        return self.dtype if name == "X" else torch.float32

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        x = inputs["X"].to(ref)
        m, chunks = shape["M"], self.chunks(shape)
        padded = torch.nn.functional.pad(x, (0, chunks * self.block_n - shape["N"]))
        return {"Seen": torch.ones((m, chunks), dtype=ref, device=x.device),
                "RowSum": x.sum(dim=1),
                "Count": torch.full((m,), float(chunks), dtype=ref, device=x.device),
                "Own": padded.reshape(m, chunks, self.block_n).sum(dim=2)}

    def flops(self, shape):
        return float(shape["M"] * shape["N"])


class AtomicRowsProblem(Problem):
    """tests/gpu/ops/atomic_rows.tl: row sums of X and of A @ B added from row fragments."""
    bound = "memory"
    accumulates = True

    def tensor_shapes(self, shape):
        m, n, k = shape["M"], shape["N"], shape["K"]
        rows = (m,)
        return {"A": (m, k), "B": (k, n), "X": (m, n), "XTile": rows, "XPar": rows,
                "GemmTile": rows, "GemmPar": rows}

    def tensor_dtype(self, name):
        return self.dtype if name in ("A", "B") else torch.float32

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        x = inputs["X"].to(ref).sum(dim=1)
        g = (inputs["A"].to(ref) @ inputs["B"].to(ref)).sum(dim=1)
        return {"XTile": x, "XPar": x, "GemmTile": g, "GemmPar": g}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * shape["K"]


class BlockTileProblem(Problem):
    """A tests/gpu/ops kernel whose blocks each own a block_M x block_N tile of the output (the
    .tl files' defaults: 64 x 80, an awkward width), overridable per build."""

    def __init__(self, build):
        super().__init__(build)
        self.block_m = int(build.defines.get("block_M", 64))
        self.block_n = int(build.defines.get("block_N", 80))


class CumsumProblem(BlockTileProblem):
    """tests/gpu/ops/cumsum.tl: scans within each block's tile, on shared tiles and fragments."""
    bound = "memory"

    def tensor_shapes(self, shape):
        s = (shape["M"], shape["N"])
        return {"X": s, "Rows": s, "Cols": s, "Frag": s, "FragRows": s}

    def tensor_dtype(self, name):
        return torch.float32

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        m, n, bm, bn = shape["M"], shape["N"], self.block_m, self.block_n
        x = inputs["X"].to(ref)
        pm, pn = -m % bm, -n % bn
        tiles = torch.nn.functional.pad(x, (0, pn, 0, pm)).reshape((m + pm) // bm, bm, (n + pn) // bn, bn)

        def crop(t):
            return t.reshape(m + pm, n + pn)[:m, :n]

        rows = crop(tiles.cumsum(dim=3))
        cols = crop(tiles.flip(1).cumsum(dim=1).flip(1))
        # The fragment scans read X converted to the fragment's type and write it back there.
        xf = inputs["X"].to(self.dtype).to(ref)
        ftiles = torch.nn.functional.pad(xf, (0, pn, 0, pm)).reshape(tiles.shape)
        frag = crop(ftiles.flip(1).cumsum(dim=1).flip(1))
        frag_rows = crop(ftiles.cumsum(dim=3))
        return {"Rows": rows, "Cols": cols, "Frag": frag, "FragRows": frag_rows}

    def flops(self, shape):
        return 4.0 * shape["M"] * shape["N"]
class ReduceAnyProblem(BlockTileProblem):
    """tests/gpu/ops/reduce_any.tl: the reductions' general path on each block's tile, each
    result broadcast back over the tile."""
    bound = "memory"

    def tensor_shapes(self, shape):
        s = (shape["M"], shape["N"])
        return {"X": s, "ColSum": s, "ColMax": s, "RowMin": s, "Total": s, "Depth": s}

    def tensor_dtype(self, name):
        return torch.float32

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        m, n, bm, bn = shape["M"], shape["N"], self.block_m, self.block_n
        pm, pn = -m % bm, -n % bn

        def tiles_of(x):
            return torch.nn.functional.pad(x, (0, pn, 0, pm)).reshape((m + pm) // bm, bm, (n + pn) // bn, bn)

        def spread(t):  # a per-tile result broadcast over its tile, cropped to [M, N]
            return t.expand(-1, bm, -1, bn).reshape(m + pm, n + pn)[:m, :n]
        tiles = tiles_of(inputs["X"].to(ref))
        col_sum = tiles.sum(dim=1, keepdim=True)
        # ColMax reads X through a `dtype` fragment.
        col_max = tiles_of(inputs["X"].to(self.dtype).to(ref)).amax(dim=1, keepdim=True)
        row_min = tiles.amin(dim=3, keepdim=True)
        total = col_sum.abs().sum(dim=3, keepdim=True)
        depth = tiles.reshape(tiles.shape[0], bm // 4, 4, tiles.shape[2], bn).sum(dim=2, keepdim=True)
        depth = depth.expand(-1, -1, 4, -1, -1).reshape(m + pm, n + pn)[:m, :n]
        return {"ColSum": spread(col_sum), "ColMax": spread(col_max), "RowMin": spread(row_min),
                "Total": spread(total), "Depth": depth}

    def flops(self, shape):
        return 5.0 * shape["M"] * shape["N"]


def _tiles(x, bm, bn):
    """x [M, N] zero-padded to whole [bm, bn] tiles, as [M / bm, bm, N / bn, bn]."""
    m, n = x.shape
    pm, pn = -m % bm, -n % bn
    return torch.nn.functional.pad(x, (0, pn, 0, pm)).reshape((m + pm) // bm, bm, (n + pn) // bn, bn)


def _first_position(x, dim, largest):
    """torch.argmax/argmin with the documented rules spelled out: the first position of the
    maximum (minimum) along `dim`, NaN counting as both the maximum and the minimum."""
    pos = torch.arange(x.shape[dim], device=x.device).reshape([-1 if d == dim else 1 for d in range(x.dim())])
    nan = x.isnan()
    filled = torch.where(nan, torch.zeros_like(x), x)
    best = filled.amax(dim=dim, keepdim=True) if largest else filled.amin(dim=dim, keepdim=True)
    any_nan = nan.any(dim=dim, keepdim=True)
    hit = torch.where(any_nan, nan, (filled == best) & ~nan)
    big = torch.full_like(pos.expand(x.shape), x.shape[dim])
    idx = torch.where(hit, pos.expand(x.shape), big).amin(dim=dim, keepdim=True)
    value = torch.where(any_nan, torch.full_like(best, math.nan), best)
    return idx, value


class CummaxProblem(CumsumProblem):
    """tests/gpu/ops/cummax.tl: running maxima and minima within each block's tile, on shared
    tiles and fragments (NaN-free inputs: a NaN would stay NaN down the line, which the runner
    reads as unwritten)."""

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        m, n, bm, bn = shape["M"], shape["N"], self.block_m, self.block_n

        def crop(t):
            return t.reshape(t.shape[0] * bm, -1)[:m, :n]
        tiles = _tiles(inputs["X"].to(ref), bm, bn)
        ftiles = _tiles(inputs["X"].to(self.dtype).to(ref), bm, bn)
        return {"Rows": crop(tiles.cummax(dim=3).values),
                "Cols": crop(tiles.flip(1).cummin(dim=1).values.flip(1)),
                "Frag": crop(ftiles.flip(1).cummax(dim=1).values.flip(1)),
                "FragRows": crop(ftiles.cummin(dim=3).values)}


class ReduceBitsProblem(BlockTileProblem):
    """tests/gpu/ops/reduce_bits.tl: AND, OR and XOR of rows and columns of each block's tile
    of X (i32) and W (i64), broadcast back over the tile. X is all ones but for one cleared bit
    in about one element of eight (so that a row's AND keeps some bits); W holds one set bit
    below 2^52 in about one element of eight (exact in the float64 the runner compares in)."""
    bound = "memory"

    def tensor_shapes(self, shape):
        s = (shape["M"], shape["N"])
        return {"X": s, "W": s, "RowAnd": s, "ColXor": s, "RowOr": s, "ColOr": s, "RowXor": s}

    def tensor_dtype(self, name):
        return torch.int32 if name in ("X", "RowAnd", "ColXor") else torch.int64

    def inputs(self, shape, gen):
        s = (shape["M"], shape["N"])
        r = torch.randint(0, 256, s, generator=gen, device=gen.device, dtype=torch.int64)
        x = torch.where(r < 32, ~(torch.ones_like(r) << r.clamp(max=31)), torch.full_like(r, -1))
        r = torch.randint(0, 416, s, generator=gen, device=gen.device, dtype=torch.int64)
        w = torch.where(r < 52, torch.ones_like(r) << r.clamp(max=51), torch.zeros_like(r))
        return {"X": x.to(torch.int32), "W": w}

    def reference(self, inputs, shape, precision):
        m, n, bm, bn = shape["M"], shape["N"], self.block_m, self.block_n

        def fold(t, dim, f):
            out = t.select(dim, 0).clone()
            for i in range(1, t.shape[dim]):
                out = f(out, t.select(dim, i))
            return out.unsqueeze(dim)

        def spread(t):
            return t.expand(-1, bm, -1, bn).reshape(t.shape[0] * bm, -1)[:m, :n]
        x = _tiles(inputs["X"].long(), bm, bn)
        w = _tiles(inputs["W"], bm, bn)
        return {"RowAnd": spread(fold(x, 3, torch.bitwise_and)).to(torch.int32),
                "ColXor": spread(fold(x, 1, torch.bitwise_xor)).to(torch.int32),
                "RowOr": spread(fold(w, 3, torch.bitwise_or)),
                "ColOr": spread(fold(w, 1, torch.bitwise_or)),
                "RowXor": spread(fold(w, 3, torch.bitwise_xor))}

    def flops(self, shape):
        return 5.0 * shape["M"] * shape["N"]


class ArgmaxProblem(BlockTileProblem):
    """tests/gpu/ops/argmax.tl: argmax over whole rows (tile by tile, clear = false with an
    offset), argmin of each tile's columns and argmax of its rows. X holds small integers (many
    ties) and a NaN in about one element of 300."""
    bound = "memory"
    NAN_VALUE = 1e6  # what the kernel writes for a NaN result value

    def tensor_shapes(self, shape):
        s = (shape["M"], shape["N"])
        return {"X": s, "ArgRow": (shape["M"],), "MaxRow": (shape["M"],), "ColIdx": s, "ColMin": s, "RowIdx": s}

    def tensor_dtype(self, name):
        return torch.int32 if name in ("ArgRow", "ColIdx", "RowIdx") else torch.float32

    def inputs(self, shape, gen):
        s = (shape["M"], shape["N"])
        x = torch.randint(-6, 7, s, generator=gen, device=gen.device).to(torch.float32)
        nan = torch.randint(0, 300, s, generator=gen, device=gen.device) == 0
        return {"X": torch.where(nan, torch.full_like(x, math.nan), x)}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        m, n, bm, bn = shape["M"], shape["N"], self.block_m, self.block_n
        x = inputs["X"].to(self.dtype).to(ref)  # the fragments hold X in `dtype`
        arg_row, max_row = _first_position(x, 1, True)

        def unnan(v):
            return torch.where(v.isnan(), torch.full_like(v, self.NAN_VALUE), v)

        def spread(t):
            return t.expand(-1, bm, -1, bn).reshape(t.shape[0] * bm, -1)[:m, :n]
        tiles = _tiles(x, bm, bn)
        col_idx, col_min = _first_position(tiles, 1, False)
        row_idx, _ = _first_position(_tiles(inputs["X"].to(ref), bm, bn), 3, True)
        return {"ArgRow": arg_row[:, 0].to(torch.int32), "MaxRow": unnan(max_row[:, 0]),
                "ColIdx": spread(col_idx).to(torch.int32), "ColMin": spread(unnan(col_min)),
                "RowIdx": spread(row_idx).to(torch.int32)}

    def flops(self, shape):
        return 3.0 * shape["M"] * shape["N"]


class FragmentConvertProblem(Problem):
    """tests/gpu/ops/fragment_convert.tl: O = (A @ B rounded to dtype) @ V, the rounded product
    copied between fragments of different layouts."""
    bound = "compute"

    def tensor_shapes(self, shape):
        m, k = shape["M"], shape["K"]
        return {"A": (m, k), "B": (k, 64), "V": (64, 64), "O": (m, 64)}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        p = (inputs["A"].to(ref) @ inputs["B"].to(ref)).to(self.dtype).to(ref)
        return {"O": p @ inputs["V"].to(ref)}

    def flops(self, shape):
        return 2.0 * shape["M"] * 64 * (shape["K"] + 64)


class GemmThreadSubsetProblem(Problem):
    """tests/gpu/ops/gemm_thread_subset.tl: per tile of block_N keys (rows past N zero), S = A B_t^T,
    the running row maximum m, P = (S - m) / 8 rounded to dtype, O = sum over tiles of P V_t + m;
    gemm_thread_subset_steps (steps in the build's defines): the first tile that many times."""
    bound = "compute"
    dim = 64

    def tensor_shapes(self, shape):
        m, n = shape["M"], shape["N"]
        return {"A": (m, self.dim), "B": (n, self.dim), "V": (n, self.dim), "O": (m, self.dim)}

    def tensor_dtype(self, name):
        return torch.float32 if name == "O" else self.dtype

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        block_n = int(self.build.defines.get("block_N", 32))
        a, b, v = (inputs[x].to(ref) for x in ("A", "B", "V"))
        m_run = torch.full((shape["M"], 1), -math.inf, dtype=ref, device=a.device)
        out = torch.zeros((shape["M"], self.dim), dtype=ref, device=a.device)
        steps = self.build.defines.get("steps")
        starts = [0] * int(steps) if steps else range(0, shape["N"], block_n)
        for t0 in starts:
            bt = torch.zeros((block_n, self.dim), dtype=ref, device=a.device)
            vt = torch.zeros_like(bt)
            rows = min(block_n, shape["N"] - t0)
            bt[:rows], vt[:rows] = b[t0:t0 + rows], v[t0:t0 + rows]
            s = a @ bt.T
            m_run = torch.maximum(m_run, s.max(dim=1, keepdim=True).values)
            p = ((s - m_run) * 0.125).to(self.dtype).to(ref)
            out = out + p @ vt + m_run
        return {"O": out}

    def flops(self, shape):
        return 4.0 * shape["M"] * shape["N"] * self.dim


class SmallFragmentsProblem(Problem):
    """tests/gpu/ops/small_fragments.tl: Y = 2 X + 1 and S = Y.sum(1) from a replicated fragment."""
    bound = "memory"
    accumulates = True

    def tensor_shapes(self, shape):
        m, n = shape["M"], int(self.build.defines["n"])
        return {"X": (m, n), "Y": (m, n), "S": (m,)}

    def tensor_dtype(self, name):
        return torch.float32 if name == "S" else self.dtype

    def reference(self, inputs, shape, precision):
        y = inputs["X"].to(REFERENCE_DTYPES[precision]) * 2 + 1
        return {"Y": y, "S": y.sum(dim=1)}

    def flops(self, shape):
        return 3.0 * shape["M"] * int(self.build.defines["n"])


class CopyPathsProblem(Problem):
    """tests/gpu/ops/copy_paths.tl: Y = 2 X + 1 in f32, Z = X + 1 in dtype."""
    bound = "memory"

    def tensor_shapes(self, shape):
        s = (shape["M"], shape["N"])
        return {"X": s, "Y": s, "Z": s}

    def tensor_dtype(self, name):
        return torch.float32 if name == "Y" else self.dtype

    def reference(self, inputs, shape, precision):
        x = inputs["X"].to(REFERENCE_DTYPES[precision])
        return {"Y": 2 * x + 1, "Z": x + 1}

    def flops(self, shape):
        return 3.0 * shape["M"] * shape["N"]


class FillRegionsProblem(Problem):
    """tests/gpu/ops/fill_regions.tl: Y = X but `value` in the top half of each tile and
    -value in its first `strip` columns (filled second); Z = 2 value."""
    bound = "memory"
    VALUE = 2.75   # exact in every float type

    def __init__(self, build):
        super().__init__(build)
        self.block_m = int(build.defines["block_M"])
        self.block_n = int(build.defines["block_N"])
        self.strip = int(build.defines["strip"])

    def tensor_shapes(self, shape):
        s = (shape["M"], shape["N"])
        return {"X": s, "Y": s, "Z": s}

    def scalars(self, shape):
        return [self.VALUE]

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        y = inputs["X"].to(ref).clone()
        m, n = y.shape
        rows = torch.arange(m, device=y.device) % self.block_m < self.block_m // 2
        cols = torch.arange(n, device=y.device) % self.block_n < self.strip
        y[rows, :] = self.VALUE
        y[:, cols] = -self.VALUE
        return {"Y": y, "Z": torch.full_like(y, 2 * self.VALUE)}

    def flops(self, shape):
        return 0.0


class AnnotatedCopyProblem(Problem):
    """tests/gpu/ops/annotated_copy.tl: Y = X, Z = 2 X + 1 (computed in f32), W = X^T, each
    through shared buffers in annotated layouts."""
    bound = "memory"

    def tensor_shapes(self, shape):
        m, n = shape["M"], shape["N"]
        return {"X": (m, n), "Y": (m, n), "Z": (m, n), "W": (n, m)}

    def reference(self, inputs, shape, precision):
        x = inputs["X"].to(REFERENCE_DTYPES[precision])
        return {"Y": x, "Z": 2 * x + 1, "W": x.T}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"]


class GatherTableProblem(Problem):
    """tests/gpu/ops/gather_table.tl: O[b] = the pages Table[b, :] of KV, one after another
    (rows past R read as 0); S[b] = Q[b] @ O[b]^T."""

    def __init__(self, build):
        super().__init__(build)
        self.page = int(build.defines["page"])
        self.npages = int(build.defines["npages"])

    def tensor_shapes(self, shape):
        b, r, length, dim = shape["B"], shape["R"], shape["L"], shape["dim"]
        if length != self.npages * self.page:
            raise ValueError(f"L = {length} must be npages * page = {self.npages * self.page}")
        return {"KV": (r, dim), "Table": (b, self.npages), "Q": (b, 64, dim),
                "O": (b, length, dim), "S": (b, 64, length)}

    def tensor_dtype(self, name):
        return {"Table": torch.int32, "S": torch.float32}.get(name, self.dtype)

    def inputs(self, shape, gen):
        x = super().inputs(shape, gen)
        # Page ids anywhere in KV, in no particular order, the last (partial) page included.
        pages = -(-shape["R"] // self.page)
        x["Table"] = torch.randint(0, pages, (shape["B"], self.npages), generator=gen,
                                   device=gen.device, dtype=torch.int32)
        return x

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        kv, table, q = inputs["KV"].to(ref), inputs["Table"].long(), inputs["Q"].to(ref)
        pages = -(-shape["R"] // self.page)
        padded = torch.zeros(pages * self.page, shape["dim"], dtype=ref, device=kv.device)
        padded[: shape["R"]] = kv
        rows = (table[:, :, None] * self.page +
                torch.arange(self.page, device=kv.device)).reshape(shape["B"], -1)
        o = padded[rows]                                  # [B, L, dim]
        return {"O": o, "S": q @ o.transpose(1, 2)}

    def flops(self, shape):
        return 2.0 * shape["B"] * 64 * shape["L"] * shape["dim"]


class GatherRowsProblem(Problem):
    """tests/gpu/ops/gather_rows.tl: C[m, :] = X[Rows[m], :] @ W^T, a zero row where Rows[m] < 0."""

    def tensor_shapes(self, shape):
        r, m, n, k = shape["R"], shape["M"], shape["N"], shape["K"]
        return {"X": (r, k), "Rows": (m,), "W": (n, k), "C": (m, n)}

    def tensor_dtype(self, name):
        return torch.int32 if name == "Rows" else self.dtype

    def inputs(self, shape, gen):
        x = super().inputs(shape, gen)
        # Rows anywhere in X in no particular order, repeats included; every 7th a padded slot.
        rows = torch.randint(0, shape["R"], (shape["M"],), generator=gen, device=gen.device, dtype=torch.int32)
        rows[3::7] = -1
        x["Rows"] = rows
        return x

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        rows = inputs["Rows"].long()
        a = inputs["X"].to(ref)[rows.clamp(min=0)]
        a[rows < 0] = 0
        return {"C": a @ inputs["W"].to(ref).T}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * shape["K"]


class PackedI4Problem(Problem):
    """tests/gpu/ops/packed_i4.tl, kernel packed_i4: B i4 [N, K] (torch has no 4-bit dtype: its
    bytes, uint8 [N, K / 2], element 2c in the low nibble of byte c, marked for the runner's
    views by abi.mark_packed); W and W2 its values in dtype (exact), E = 17 q (a shared and a
    global element read: 16 q + q), Bc the bytes again."""
    bound = "memory"
    packed = {"B": "i4", "Bc": "i4"}

    def tensor_shapes(self, shape):
        n, k = shape["N"], shape["K"]
        if k % 2:
            raise ValueError(f"K = {k}: packed 4-bit rows need an even K")
        return {"B": (n, k // 2), "Bc": (n, k // 2), "W": (n, k), "W2": (n, k), "E": (n, k)}

    def tensor_dtype(self, name):
        return torch.uint8 if name in self.packed else torch.float32 if name == "E" else self.dtype

    def _random(self, name, shape, gen):
        if name in self.packed:
            return mark_packed(torch.randint(0, 256, shape, generator=gen, device=gen.device, dtype=torch.uint8),
                               self.packed[name])
        return super()._random(name, shape, gen)

    def outputs(self, shape, device="cuda"):
        out = super().outputs(shape, device)
        for name, t in out.items():
            if name in self.packed:
                mark_packed(t, self.packed[name])
        return out

    @staticmethod
    def values(packed: torch.Tensor, signed: bool) -> torch.Tensor:
        """The [.., K] int32 values of packed bytes [.., K / 2]."""
        nibbles = torch.stack([packed & 0xF, packed >> 4], dim=-1).reshape(*packed.shape[:-1], -1).to(torch.int32)
        return (nibbles ^ 8) - 8 if signed else nibbles

    @staticmethod
    def fp4_values(packed: torch.Tensor) -> torch.Tensor:
        """The [.., K] float32 values of packed f4e2m1 bytes [.., K / 2] (OCP FP4: 0, 0.5, 1,
        1.5, 2, 3, 4, 6 and their negatives), decoded by table, independently of the kernels'
        bit placement."""
        table = torch.tensor(FP4_E2M1_VALUES, device=packed.device)
        return table[PackedI4Problem.values(packed, False).long()]

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        q = self.values(inputs["B"], True).to(ref)
        return {"W": q, "W2": q, "E": 17 * q, "Bc": inputs["B"].to(ref)}

    def flops(self, shape):
        return 4.0 * shape["N"] * shape["K"]


class PackedU4Problem(PackedI4Problem):
    """tests/gpu/ops/packed_i4.tl, kernel packed_u4: Q u4 [N, K] (its bytes, as packed_i4's B);
    E = 17 q in dtype with q zero-extended, Qc the bytes again."""
    packed = {"Q": "u4", "Qc": "u4"}

    def tensor_dtype(self, name):
        return torch.uint8 if name in self.packed else self.dtype

    def tensor_shapes(self, shape):
        n, k = shape["N"], shape["K"]
        if k % 2:
            raise ValueError(f"K = {k}: packed 4-bit rows need an even K")
        return {"Q": (n, k // 2), "Qc": (n, k // 2), "E": (n, k)}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        return {"E": 17 * self.values(inputs["Q"], False).to(ref), "Qc": inputs["Q"].to(ref)}


class DequantZpProblem(PackedI4Problem):
    """tests/gpu/ops/dequant_zp.tl: B [N, K] of qtype (u4 or i4; its bytes, as packed_i4's B),
    Scales and Zeros [N, K / group_size] ([K / group_size, N] with tscales); W, W2 and W3 =
    dtype(dtype(q - zero) * scale), or
    dtype(q * scale) with zero_points = false. The reference computes in the dtype, each
    operation correctly rounded, as the kernel's packed arithmetic does: exact (tolerance 0).
    Zero points are drawn as GPTQ/AWQ would not store them (fractions around the middle of the
    range), so that the subtraction rounds too."""

    def __init__(self, build):
        super().__init__(build)
        self.packed = {"B": build.defines["qtype"]}
        if build.defines.get("ztype") == "u4":  # zero points packed two per byte (GPTQ/AWQ)
            self.packed["Zeros"] = "u4"
        self.group_size = int(build.defines["group_size"])
        self.zero_points = parse_bool(build.defines["zero_points"])
        # Scales and Zeros [K / group_size, N] (transpose_scales), as GPTQ and AWQ store them.
        self.transposed = parse_bool(build.defines.get("tscales", "false"))

    def tensor_dtype(self, name):
        return torch.uint8 if name in self.packed else self.dtype

    def tensor_shapes(self, shape):
        n, k = shape["N"], shape["K"]
        if k % 2 or k % self.group_size:
            raise ValueError(f"K = {k} must be even and a multiple of group_size {self.group_size}")
        groups = (k // self.group_size, n) if self.transposed else (n, k // self.group_size)
        if "Zeros" in self.packed and groups[1] % 2:
            raise ValueError(f"{groups[1]} zero points per row must be even when packed two per byte")
        zeros = (groups[0], groups[1] // 2) if "Zeros" in self.packed else groups
        return {"B": (n, k // 2), "Scales": groups, "Zeros": zeros, "W": (n, k), "W2": (n, k), "W3": (n, k)}

    def _random(self, name, shape, gen):
        if name == "Zeros" and name not in self.packed:
            middle = 0.0 if self.packed["B"] == "i4" else 7.5
            return (middle + 4.0 * torch.randn(shape, generator=gen, device=gen.device)).to(self.dtype)
        return super()._random(name, shape, gen)

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        q = self.values(inputs["B"], self.packed["B"] == "i4").to(self.dtype)
        group = lambda t: t.repeat_interleave(self.group_size, dim=1)  # noqa: E731
        zeros = self.values(inputs["Zeros"], False).to(self.dtype) if "Zeros" in self.packed else inputs["Zeros"]
        scales = inputs["Scales"]
        if self.transposed:  # [groups, N] -> [N, groups]
            zeros, scales = zeros.t(), scales.t()
        w = q - group(zeros) if self.zero_points else q
        w = (w * group(scales)).to(ref)
        return {"W": w, "W2": w, "W3": w}

    def flops(self, shape):
        return 2.0 * shape["N"] * shape["K"]


class DequantFp4Problem(PackedI4Problem):
    """tests/gpu/ops/dequant_fp4.tl: B f4e2m1 [N, K] (its bytes, as packed_i4's B), Scales
    [N, K / group_size] in dtype; W and W2 = dtype(q * scale) (dtype(q) with scaled = false),
    E = 17 q (a shared and a global element read), Bc the bytes again. The values are decoded
    by table (fp4_values); every one is exact in f16 and bf16, so the single rounding of the
    product is the reference's too: exact (tolerance 0)."""
    packed = {"B": "f4e2m1", "Bc": "f4e2m1"}

    def __init__(self, build):
        super().__init__(build)
        self.group_size = int(build.defines["group_size"])
        self.scaled = parse_bool(build.defines["scaled"])

    def tensor_dtype(self, name):
        return torch.uint8 if name in self.packed else torch.float32 if name == "E" else self.dtype

    def tensor_shapes(self, shape):
        n, k = shape["N"], shape["K"]
        if k % 2 or k % self.group_size:
            raise ValueError(f"K = {k} must be even and a multiple of group_size {self.group_size}")
        return {"B": (n, k // 2), "Scales": (n, k // self.group_size), "W": (n, k), "W2": (n, k),
                "E": (n, k), "Bc": (n, k // 2)}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        q = self.fp4_values(inputs["B"])
        w = q.to(self.dtype)
        if self.scaled:
            w = w * inputs["Scales"].repeat_interleave(self.group_size, dim=1)
        return {"W": w.to(ref), "W2": w.to(ref), "E": (17 * q).to(ref), "Bc": inputs["B"].to(ref)}


class FusedMoeProblem(Problem):
    """samples/fused_moe.tl: slot s = t * topk + j (token t's j-th expert e) gets
    C[s, :] = X[t, :] @ W[e]^T, times TopkWeights[t, j] when mul_routed_weight, through the
    routing of vLLM's moe_align_block_size (moe_align below): SortedIds lists each expert's slots
    padded with T * topk to a multiple of block_M, ExpertIds the expert of each block of
    block_M entries, NumPostPadded[0] how many entries are used. EM, the length of SortedIds, is
    vLLM's worst case T * topk + E * (block_M - 1)."""

    def __init__(self, build):
        super().__init__(build)
        self.topk = int(build.defines["topk"])
        self.block_m = int(build.defines["block_M"])
        self.weighted = parse_bool(build.defines["mul_routed_weight"])

    def em(self, shape) -> int:
        return shape["T"] * self.topk + shape["E"] * (self.block_m - 1)

    def tensor_shapes(self, shape):
        t, k, e, n = shape["T"], shape["K"], shape["E"], shape["N"]
        if self.topk > e:
            raise ValueError(f"topk = {self.topk} needs at least as many experts, E = {e}")
        em = self.em(shape)
        return {"X": (t, k), "W": (e, n, k), "SortedIds": (em,), "ExpertIds": (-(-em // self.block_m),),
                "NumPostPadded": (1,), "TopkWeights": (t, self.topk), "C": (t * self.topk, n)}

    def tensor_dtype(self, name):
        return {"SortedIds": torch.int32, "ExpertIds": torch.int32, "NumPostPadded": torch.int32,
                "TopkWeights": torch.float32}.get(name, self.dtype)

    def moe_align(self, topk_ids: torch.Tensor, experts: int, em: int) -> tuple:
        """vLLM's moe_align_block_size in torch: (SortedIds [em], ExpertIds [ceil(em / block_M)],
        NumPostPadded [1]). Slots of one expert keep their order; each expert's list is padded
        to a multiple of block_M with T * topk (an expert with no slot gets no block); blocks
        past the used ones get expert 0, whose rows are all padding (the kernel skips them)."""
        bm, dev = self.block_m, topk_ids.device
        flat = topk_ids.flatten().long()
        numel = flat.numel()
        order = torch.sort(flat, stable=True).indices         # slots grouped by expert
        counts = torch.bincount(flat, minlength=experts)
        padded = (counts + bm - 1) // bm * bm
        starts = torch.cumsum(padded, 0) - padded              # first entry of each expert
        firsts = torch.cumsum(counts, 0) - counts              # first slot of each in `order`
        expert_of = flat[order]
        position = starts[expert_of] + torch.arange(numel, device=dev) - firsts[expert_of]
        sorted_ids = torch.full((em,), numel, dtype=torch.int32, device=dev)
        sorted_ids[position] = order.to(torch.int32)
        blocks = -(-em // bm)
        expert_ids = torch.zeros(blocks, dtype=torch.int32, device=dev)
        used = int(padded.sum())
        expert_ids[: used // bm] = torch.repeat_interleave(torch.arange(experts, device=dev),
                                                          padded // bm).to(torch.int32)
        return sorted_ids, expert_ids, torch.tensor([used], dtype=torch.int32, device=dev)

    def inputs(self, shape, gen):
        t, e = shape["T"], shape["E"]
        x = {"X": self._random("X", (t, shape["K"]), gen),
             # Scaled so that C stays O(1) whatever K: the f16 output keeps its precision.
             "W": (torch.randn((e, shape["N"], shape["K"]), generator=gen, device=gen.device)
                   / math.sqrt(shape["K"])).to(self.dtype)}
        # topk distinct experts per token, uniformly: some experts get no token at small T.
        topk_ids = torch.rand((t, e), generator=gen, device=gen.device).argsort(dim=1)[:, : self.topk]
        weights = torch.rand((t, self.topk), generator=gen, device=gen.device) + 0.1
        x["TopkWeights"] = (weights / weights.sum(dim=1, keepdim=True)).float()
        x["SortedIds"], x["ExpertIds"], x["NumPostPadded"] = self.moe_align(topk_ids, e, self.em(shape))
        return x

    def slot_experts(self, inputs: dict, shape: dict) -> torch.Tensor:
        """The expert of each slot, [T * topk], recovered from the routing tables."""
        sorted_ids = inputs["SortedIds"].long()
        block_experts = inputs["ExpertIds"].long().repeat_interleave(self.block_m)[: sorted_ids.numel()]
        used = int(inputs["NumPostPadded"][0])
        slots = shape["T"] * self.topk
        keep = (torch.arange(sorted_ids.numel(), device=sorted_ids.device) < used) & (sorted_ids < slots)
        experts = torch.full((slots,), -1, dtype=torch.long, device=sorted_ids.device)
        experts[sorted_ids[keep]] = block_experts[keep]
        return experts

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        experts = self.slot_experts(inputs, shape)
        x, w = inputs["X"].to(ref), inputs["W"]
        out = torch.zeros((shape["T"] * self.topk, shape["N"]), dtype=ref, device=x.device)
        for e in range(shape["E"]):          # the loop over experts of a torch user
            slots = torch.nonzero(experts == e).flatten()
            if slots.numel():
                out[slots] = x[slots // self.topk] @ w[e].to(ref).T
        if self.weighted:
            out *= inputs["TopkWeights"].to(ref).reshape(-1, 1)
        return {"C": out}

    def flops(self, shape):
        return 2.0 * shape["T"] * self.topk * shape["N"] * shape["K"]

    def min_bytes(self, shape):
        """X, the weights of the experts in use (at most T * topk of them: only those are read;
        with random routing that many are in use unless it exceeds E), the output, the
        routing tables."""
        size = torch.empty((), dtype=self.dtype).element_size()
        t, k, e, n = shape["T"], shape["K"], shape["E"], shape["N"]
        experts = min(e, t * self.topk)
        em = self.em(shape)
        routing = 4 * (em + -(-em // self.block_m) + 1 + t * self.topk)
        return float(size * (t * k + experts * n * k + t * self.topk * n) + routing)


class Conv2dProblem(Problem):
    """samples/conv2d.tl: Y = conv2d(X, Wt) in NHWC, X [N, H, W, C], Wt [F, kh, kw, C] (a
    PyTorch weight [F, C, kh, kw] in channels_last memory), Y [N * P * Q, F] (the NHWC output
    [N, P, Q, F] as a matrix of pixels by channels), zero padding `pad` on every side, stride
    `stride` in both directions, no bias."""

    def __init__(self, build):
        super().__init__(build)
        self.kh, self.kw = int(build.defines["kh"]), int(build.defines["kw"])
        self.stride, self.pad = int(build.defines["stride"]), int(build.defines["pad"])

    def output_hw(self, shape) -> tuple:
        return ((shape["H"] + 2 * self.pad - self.kh) // self.stride + 1,
                (shape["W"] + 2 * self.pad - self.kw) // self.stride + 1)

    def tensor_shapes(self, shape):
        n, h, w, c, f = (shape[k] for k in ("N", "H", "W", "C", "F"))
        p, q = self.output_hw(shape)
        return {"X": (n, h, w, c), "Wt": (f, self.kh, self.kw, c), "Y": (n * p * q, f)}

    def nchw(self, inputs: dict, dtype) -> tuple:
        """X and Wt as torch's conv2d takes them (NCHW views of the NHWC memory)."""
        return (inputs["X"].to(dtype).permute(0, 3, 1, 2), inputs["Wt"].to(dtype).permute(0, 3, 1, 2))

    def conv(self, x, w):
        """torch's conv2d with this build's stride and padding, NHWC out as [N * P * Q, F]
        (free for channels_last inputs, whose output is NHWC in memory)."""
        y = torch.nn.functional.conv2d(x, w, stride=self.stride, padding=self.pad)
        return y.permute(0, 2, 3, 1).reshape(-1, y.shape[1])

    def reference(self, inputs, shape, precision):
        return {"Y": self.conv(*self.nchw(inputs, REFERENCE_DTYPES[precision]))}

    def flops(self, shape):
        n, c, f = shape["N"], shape["C"], shape["F"]
        p, q = self.output_hw(shape)
        return 2.0 * n * p * q * f * self.kh * self.kw * c


class Conv2dSplitKProblem(Conv2dProblem):
    """samples/conv2d.tl's split-K pair: conv2d_splitk writes one f32 slab of Partial
    [splits, N * P * Q, F] per range of the K loop, conv2d_splitk_sum adds them and writes Y.
    Partial is scratch: Y is compared, and the bytes counted are X, Wt and Y's."""
    scratch = ("Partial",)

    def __init__(self, build):
        super().__init__(build)
        self.splits = int(build.defines["splits"])

    def tensor_shapes(self, shape):
        shapes = super().tensor_shapes(shape)
        return {**shapes, "Partial": (self.splits, *shapes["Y"])}

    def tensor_dtype(self, name):
        return torch.float32 if name in self.scratch else self.dtype


PROBLEMS = {"gemm": GemmProblem, "conv2d": Conv2dProblem, "conv2d_splitk": Conv2dSplitKProblem, "attention": AttentionProblem,
            "attention_overlap": AttentionProblem, "softmax": SoftmaxProblem,
            "block_sparse_attention": BlockSparseAttentionProblem,
            "vertical_slash_attention": VerticalSlashAttentionProblem,
            "attention_sink": AttentionSinkProblem,
            "log_softmax": LogSoftmaxProblem, "layernorm": LayerNormProblem, "swiglu": SwiGluProblem,
            "gemv": GemvProblem,
            "rmsnorm": RmsNormProblem, "mla": MlaDecodeProblem,
            "dequant_w4a16": DequantW4A16Problem, "dequant_fp4_gemm": DequantFp4GemmProblem,
            "dequant_gemv_w4a16": DequantW4A16Problem, "dequant_gemv_w4a16_tc": DequantW4A16Problem, "dequant_gemv_w4a16_tcs": DequantW4A16Problem, "gemm_sr_runs": DequantW4A16Problem, "gemm_sr_split": DequantW4A16Problem, "w4a16_wreg": DequantW4A16Problem, "gemm_nt": GemmNTProblem, "gemm_fp8": GemmFp8Problem, "gemm_fp8_decode": GemmFp8Problem,
            "gemm_batched": GemmBatchedProblem, "masked_gemm": MaskedGemmProblem,
            "gemm_tn": GemmTNProblem, "gemm_tt": GemmTTProblem, "gemm_rs": GemmRsProblem,
            "gemm_sr": GemmSrProblem, "gemm_rr": GemmSrProblem,
            "reduce_rows": ReduceRowsProblem, "reduce_gemm": ReduceGemmProblem,
            "atomic_splitk": AtomicSplitKProblem, "atomic_rowsum": AtomicRowSumProblem,
            "last_block": LastBlockProblem,
            "atomic_rows": AtomicRowsProblem, "cumsum": CumsumProblem, "reduce_any": ReduceAnyProblem, "fragment_convert": FragmentConvertProblem, "gemm_thread_subset": GemmThreadSubsetProblem,
            "gemm_thread_subset_steps": GemmThreadSubsetProblem,
            "cummax": CummaxProblem, "reduce_bits": ReduceBitsProblem, "argmax": ArgmaxProblem,
            "small_fragments": SmallFragmentsProblem,
            "copy_paths": CopyPathsProblem, "fill_regions": FillRegionsProblem,
            "annotated_copy": AnnotatedCopyProblem, "gemm_annotated": GemmProblem,
            "gemm_auto": GemmProblem, "gather_table": GatherTableProblem, "gather_rows": GatherRowsProblem,
            "packed_i4": PackedI4Problem, "packed_u4": PackedU4Problem,
            "dequant_zp": DequantZpProblem, "dequant_fp4": DequantFp4Problem,
            "flash_decoding": FlashDecodingProblem, "fused_moe": FusedMoeProblem,
            "attention_fwd_lse": AttentionFwdLseProblem, "gated_delta": GatedDeltaProblem, "attention_bwd": AttentionBwdProblem,
            "attention_bwd_split": AttentionBwdSplitProblem}


def problem_for(build: Build) -> Problem:
    return PROBLEMS[build.family](build)


def ordered_tensors(spec, inputs: dict, outputs: dict) -> list:
    """The tensors in the kernel's parameter order (the C ABI order)."""
    return [(inputs if p.role == "in" else outputs)[p.name] for p in spec.tensors]
