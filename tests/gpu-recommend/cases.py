"""The recommender's GPU validation cases (issue 4): which kernels, shapes and candidate spaces.

Shapes. Each case has calibration shapes (the ones compiler/target/descriptors/h100-sxm.json was
fitted to, tests/gpu-recommend/calibrate.py, on the first run's 199 GEMM + 24 attention
configurations) and held-out shapes that no parameter was fitted to, so that the scores on
them are out-of-sample:

  GEMM       calibration: the ten (M, N, K) rows of the TileLang paper's appendix G, table 3
             held out:    (1024, 4096, 4096) small M, square N = K; (2048, 2048, 8192) deep K;
                          (8192, 4096, 1024) shallow K (8 steps of block_K = 128: the pipeline
                          prologue matters); (3072, 9216, 3072) mid-size, 3x multiples;
                          (8192, 8192, 8192) large and square; (128, 8192, 8192) decode-like:
                          one row of blocks where block_M >= 128, fewer blocks than SMs for
                          most tiles;
                          (3000, 5000, 4000) ragged: no dimension is a multiple of 64, so edge
                          tiles and partial waves count (outputs checked here too)
  attention  calibration: (batch, heads, seq_len) = (64, 64, 1024), (16, 64, 4096)
             held out:    (8, 32, 2048) fewer (batch, head) pairs at a middle seq_len, and
                          (4, 16, 3000) ragged seq_len, 8x fewer pairs (outputs checked here too)

Spaces. Exhaustive over most of what `tlc recommend` searches by default (its --format json
lists the knobs' values), cut to what compiling and timing every legal configuration at every
shape costs in two 10-minute GPU commands (plan.py prints the estimate per part):

  GEMM       block_M, block_N in {32, 64, 128, 256}, block_K in {32, 64, 128}, stages in
             {2, 3, 4}, threads in {128, 256}, policy in {full_col, square}; panel pinned to
             8, f16. 576 candidates. Since sm_90a gemms run on wgmma (2026-11-25), full_row
             splits warpgroups exactly as square does (M first, infer::splitWarpgroups), so
             it is left out; runs before then also searched it (864 candidates, 563 legal). Left out of the default space
             (8640 candidates, 5605 legal): panel in {1, 4, 10, 16} (the L2 swizzle width, a
             secondary knob: x5 the cost for little new information), stages 1 (no pipelining)
             and threads 64 (two warps: rarely competitive on an H100), which together would
             double the timing of the remaining space
  attention  the whole default space: block_M in {32, 64, 128, 256}, block_N in {32, 64, 128},
             stages in {1, 2, 3, 4}, threads in {64, 128, 256}; dim 128, not causal, f16.
             144 candidates, 45 legal

Budget. 563 x 17 + 45 x 4 = 9751 measurements of 608 configurations (the first run: 2038 of
223, 160 s in one command). Split into two parts by configuration (plan.py --parts 2), each
part is estimated at about 280 s (42 s of nvcc on 16 cores, 236 s of timing; budget.py), and
about 7.3 minutes if every configuration ran 3x slower than the model predicts. What bounds the
space is less the GPU time than the bundle: 608 header libraries are 41 MiB of the 64 MiB that
travels to the GPU machine; adding threads 64 (872 configurations) would not fit.

The first run's narrowed space (GEMM block_M, block_N in {64, 128, 256}, policy in {full_row,
square}; attention block_M in {64, 128, 256}, stages in {1, 2, 3}, threads in {128, 256}) is
inside these, so its configurations are timed again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Case:
    name: str               # "gemm", "attention"
    sample: str             # the .tl file, relative to the repository root
    kernel: str
    pinned: dict            # -D for every build (not searched)
    values: dict            # --values: the searched space
    shapes: list            # dicts of shape symbols: the calibration shapes, then the held-out
    flops: Callable         # FLOPs of one shape (for TFLOP/s)
    tensors: list = field(default_factory=list)  # tensor parameter names, in order
    held_out: int = 0       # how many of the last shapes are held out (not calibrated on)
    checked: tuple = (0,)   # shapes (indices) where every configuration's output is checked
    fitted_label: str = "calibration"  # what the shapes that are not held out are, in reports

    def is_held_out(self, s: int) -> bool:
        return s >= len(self.shapes) - self.held_out


# TileLang paper, appendix G, table 3: the shapes the H100 descriptor was calibrated on.
GEMM_SHAPES = [(512, 1024, 8192), (512, 12288, 12288), (512, 28672, 8192), (2048, 12288, 49152),
               (4096, 1024, 7168), (4096, 14336, 14336), (4096, 28672, 8192), (8192, 8192, 28672),
               (8192, 28672, 8192), (16384, 1024, 7168)]
GEMM_HELD_OUT = [(1024, 4096, 4096), (2048, 2048, 8192), (8192, 4096, 1024), (3072, 9216, 3072),
                 (8192, 8192, 8192), (128, 8192, 8192), (3000, 5000, 4000)]

ATTENTION_SHAPES = [(64, 64, 1024), (16, 64, 4096)]
ATTENTION_HELD_OUT = [(8, 32, 2048), (4, 16, 3000)]

CASES = [
    Case(name="gemm", sample="samples/gemm.tl", kernel="gemm",
         pinned={"panel": "8", "dtype": "f16", "hopper_tiles": "false"},
         values={"block_M": "32,64,128,256", "block_N": "32,64,128,256", "block_K": "32,64,128",
                 "stages": "2,3,4", "threads": "128,256", "policy": "full_col,square"},
         shapes=[{"M": m, "N": n, "K": k} for (m, n, k) in GEMM_SHAPES + GEMM_HELD_OUT],
         flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"], tensors=["A", "B", "C"],
         held_out=len(GEMM_HELD_OUT), checked=(0, len(GEMM_SHAPES) + len(GEMM_HELD_OUT) - 1),
         fitted_label="paper table 3 (calibration)"),
    Case(name="attention", sample="samples/flash_attention.tl", kernel="flash_attention",
         pinned={"dim": "128", "causal": "false", "dtype": "f16"},
         values={"block_M": "32,64,128,256", "block_N": "32,64,128", "stages": "1,2,3,4",
                 "threads": "64,128,256"},
         shapes=[{"batch": b, "heads": h, "seq_len": s} for (b, h, s) in ATTENTION_SHAPES + ATTENTION_HELD_OUT],
         flops=lambda s: 4.0 * s["batch"] * s["heads"] * s["seq_len"] ** 2 * 128,
         tensors=["Q", "K", "V", "O"], held_out=len(ATTENTION_HELD_OUT),
         checked=(0, len(ATTENTION_SHAPES) + len(ATTENTION_HELD_OUT) - 1)),
]


def shape_key(shape: dict) -> str:
    """'M=512,N=1024,K=8192': a shape as a stable string key."""
    return ",".join(f"{k}={v}" for k, v in shape.items())


def case_named(name: str) -> Case:
    for c in CASES:
        if c.name == name:
            return c
    raise KeyError(name)
