"""The math behind each kernel family: inputs, poisoned outputs, references, work counts.

One class per family of cases.KERNELS. Tensor layouts follow the samples: GEMM A [M, K],
B [K, N], C [M, N] (row-major); attention Q/K/V/O [batch, seq_len, heads, dim]; softmax and
RMSNorm X/Y [M, N] (RMSNorm's weight W [N]). References are computed on the GPU in float32 or
float64 from the very same low-precision inputs, so they measure the kernel's error and not the
rounding of the inputs.
"""
from __future__ import annotations

import math

import torch

from cases import Build

TORCH_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
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


class Problem:
    """Base: the knobs of one build and what every family shares."""
    bound = "compute"   # "compute": report TFLOP/s; "memory": report GB/s

    def __init__(self, build: Build):
        self.build = build
        self.spec = build.spec
        self.dtype = TORCH_DTYPES[build.defines["dtype"]]

    @property
    def element_bytes(self) -> int:
        return torch.empty((), dtype=self.dtype).element_size()

    def tensor_shapes(self, shape: dict) -> dict:
        raise NotImplementedError

    def inputs(self, shape: dict, gen: torch.Generator) -> dict:
        shapes = self.tensor_shapes(shape)
        return {p.name: self._random(p.name, shapes[p.name], gen)
                for p in self.spec.tensors if p.role == "in"}

    def outputs(self, shape: dict, device: str = "cuda") -> dict:
        """Outputs filled with NaN: an element still NaN after the call was never written."""
        shapes = self.tensor_shapes(shape)
        return {p.name: torch.full(shapes[p.name], math.nan, dtype=self.dtype, device=device)
                for p in self.spec.tensors if p.role == "out"}

    # Inputs are drawn in float32 (every backend has that) on the generator's device (the GPU,
    # or the CPU in unit tests), then rounded to the kernel's dtype.
    def _random(self, name: str, shape: tuple, gen: torch.Generator) -> torch.Tensor:
        return torch.randn(shape, generator=gen, device=gen.device).to(self.dtype)

    def scalars(self, shape: dict) -> list:
        """Values of the kernel's run-time scalar parameters (none in the samples)."""
        return []

    def reference(self, inputs: dict, shape: dict, precision: str) -> dict:
        raise NotImplementedError

    def flops(self, shape: dict) -> float:
        raise NotImplementedError

    def min_bytes(self, shape: dict) -> float:
        """Each input read once, each output written once."""
        shapes = self.tensor_shapes(shape)
        return float(sum(math.prod(s) for s in shapes.values()) * self.element_bytes)


class GemmProblem(Problem):
    def tensor_shapes(self, shape):
        m, n, k = shape["M"], shape["N"], shape["K"]
        return {"A": (m, k), "B": (k, n), "C": (m, n)}

    def reference(self, inputs, shape, precision):
        ref = REFERENCE_DTYPES[precision]
        return {"C": inputs["A"].to(ref) @ inputs["B"].to(ref)}

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * shape["K"]


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


PROBLEMS = {"gemm": GemmProblem, "attention": AttentionProblem, "softmax": SoftmaxProblem,
            "rmsnorm": RmsNormProblem}


def problem_for(build: Build) -> Problem:
    return PROBLEMS[build.family](build)


def ordered_tensors(spec, inputs: dict, outputs: dict) -> list:
    """The tensors in the kernel's parameter order (the C ABI order)."""
    return [(inputs if p.role == "in" else outputs)[p.name] for p in spec.tensors]
