"""The recommender's GPU validation cases (issue 4): which kernels, shapes and candidate spaces.

GEMM runs at the ten (M, N, K) rows of the TileLang paper's appendix G, table 3; flash
attention at two shapes. The candidate space is the one `tlc recommend` searches, narrowed so
that compiling and timing every legal candidate at every shape fits one 10-minute GPU command
(about 200 GEMM and 30 attention configurations):

  GEMM       block_M, block_N in {64, 128, 256}, block_K in {32, 64, 128}, stages in {2, 3, 4},
             threads in {128, 256}, policy in {full_row, square}; panel pinned to 8, f16
  attention  block_M in {64, 128, 256}, block_N in {32, 64, 128}, stages in {1, 2, 3},
             threads in {128, 256}; dim 128, not causal, f16

Within that space the validation is exhaustive: every configuration tlc accepts is timed.
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
    shapes: list            # dicts of shape symbols
    flops: Callable         # FLOPs of one shape (for TFLOP/s)
    tensors: list = field(default_factory=list)  # tensor parameter names, in order


GEMM_SHAPES = [(512, 1024, 8192), (512, 12288, 12288), (512, 28672, 8192), (2048, 12288, 49152),
               (4096, 1024, 7168), (4096, 14336, 14336), (4096, 28672, 8192), (8192, 8192, 28672),
               (8192, 28672, 8192), (16384, 1024, 7168)]

CASES = [
    Case(name="gemm", sample="samples/gemm.tl", kernel="gemm",
         pinned={"panel": "8", "dtype": "f16"},
         values={"block_M": "64,128,256", "block_N": "64,128,256", "block_K": "32,64,128",
                 "stages": "2,3,4", "threads": "128,256", "policy": "full_row,square"},
         shapes=[{"M": m, "N": n, "K": k} for (m, n, k) in GEMM_SHAPES],
         flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"], tensors=["A", "B", "C"]),
    Case(name="attention", sample="samples/flash_attention.tl", kernel="flash_attention",
         pinned={"dim": "128", "causal": "false", "dtype": "f16"},
         values={"block_M": "64,128,256", "block_N": "32,64,128", "stages": "1,2,3",
                 "threads": "128,256"},
         shapes=[{"batch": 64, "heads": 64, "seq_len": 1024},
                 {"batch": 16, "heads": 64, "seq_len": 4096}],
         flops=lambda s: 4.0 * s["batch"] * s["heads"] * s["seq_len"] ** 2 * 128,
         tensors=["Q", "K", "V", "O"]),
]


def shape_key(shape: dict) -> str:
    """'M=512,N=1024,K=8192': a shape as a stable string key."""
    return ",".join(f"{k}={v}" for k, v in shape.items())


def case_named(name: str) -> Case:
    for c in CASES:
        if c.name == name:
            return c
    raise KeyError(name)
