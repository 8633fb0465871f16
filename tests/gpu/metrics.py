"""How an output is judged against its reference (METHOD.md: norm-wise relative error).

    rel = ||out - ref||_2 / ||ref||_2     over all elements, in float64
    max_abs = max |out - ref|

An output passes when every element was written (the runner poisons outputs with NaN, so a NaN
left means an element nobody wrote, or a NaN the kernel computed: both fail), no element is
infinite where the reference is finite, and rel <= tolerance.

ErrorStats and judge() are plain Python; compare() reduces torch tensors to ErrorStats.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ErrorStats:
    numel: int
    nan: int          # NaN in the output: unwritten (poison) or computed NaN
    inf: int          # infinities in the output where the reference is finite
    diff_sq: float    # sum over finite elements of (out - ref)^2
    ref_sq: float     # sum of ref^2
    max_abs: float    # over finite elements

    @property
    def rel(self) -> float:
        if self.nan or self.inf:
            return math.nan
        if self.ref_sq == 0.0:
            # An all-zero reference: only an exact answer has relative error 0.
            return 0.0 if self.diff_sq == 0.0 else math.inf
        return math.sqrt(self.diff_sq / self.ref_sq)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["rel"] = self.rel
        return d


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str


def judge(stats: ErrorStats, tolerance: float) -> Verdict:
    if stats.numel == 0:
        return Verdict(False, "empty output: nothing was checked")
    if stats.nan:
        return Verdict(False, f"{stats.nan} of {stats.numel} elements are NaN "
                              f"(unwritten or computed NaN)")
    if stats.inf:
        return Verdict(False, f"{stats.inf} elements are infinite where the reference is finite")
    rel = stats.rel
    if not rel <= tolerance:  # also catches a NaN rel
        return Verdict(False, f"relative error {rel:.3e} > {tolerance:.0e}")
    return Verdict(True, f"relative error {rel:.3e} <= {tolerance:.0e}")


def combine(parts) -> ErrorStats:
    """Sums the ErrorStats of several chunks (or several outputs) into one."""
    parts = list(parts)
    return ErrorStats(numel=sum(p.numel for p in parts), nan=sum(p.nan for p in parts),
                      inf=sum(p.inf for p in parts), diff_sq=sum(p.diff_sq for p in parts),
                      ref_sq=sum(p.ref_sq for p in parts),
                      max_abs=max((p.max_abs for p in parts), default=0.0))


def compare(out, ref, chunk_elements: int = 1 << 26) -> ErrorStats:
    """ErrorStats of torch tensors `out` against `ref` (same shape), reduced in float64 in
    chunks so that an 8192 x 28672 output needs no 2 GB float64 copy."""
    if tuple(out.shape) != tuple(ref.shape):
        raise ValueError(f"output shape {tuple(out.shape)} != reference {tuple(ref.shape)}")
    flat_out, flat_ref = out.reshape(-1), ref.reshape(-1)
    parts = []
    for start in range(0, flat_out.numel(), chunk_elements):
        o = flat_out[start:start + chunk_elements].double()
        r = flat_ref[start:start + chunk_elements].double()
        nan = o.isnan()
        inf = o.isinf() & r.isfinite()
        good = ~(nan | inf)
        diff = (o - r)[good]
        parts.append(ErrorStats(numel=o.numel(), nan=int(nan.sum()), inf=int(inf.sum()),
                                diff_sq=float((diff * diff).sum()),
                                ref_sq=float((r * r).sum()),
                                max_abs=float(diff.abs().max()) if diff.numel() else 0.0))
    return combine(parts)


def json_safe(value):
    """`value` with every NaN or infinity replaced by None: strict JSON has neither, and the
    result files are read by other tools."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
