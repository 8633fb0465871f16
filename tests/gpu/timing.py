"""Kernel timing with CUDA events (METHOD.md), shared by tests/gpu/run.py and bench/bench.py.

Same method as triton.testing.do_bench, with bounded repetition counts so that a 100 ms
attention call and a 5 us GEMV both fit the lease:
  - one untimed call, then one timed call to estimate the cost;
  - warm-up calls for about `warmup_ms`;
  - `reps` timed calls (about `rep_ms` in all, clamped to [min_reps, max_reps]), each preceded
    by a write of 256 MB so that L2 (50 MB on H100, 60 MB on H200) holds none of the inputs;
    the events bracket the call alone, not the flush;
  - the median of the per-call times (min and max kept to show the spread).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass

import torch

L2_FLUSH_BYTES = 256 << 20


def cuda_healthy() -> bool:
    """False once the CUDA context is broken (an illegal address poisons every later call)."""
    try:
        torch.cuda.synchronize()
        return True
    except RuntimeError:
        return False


@dataclass(frozen=True)
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    reps: int
    l2_flushed: bool

    def as_dict(self) -> dict:
        return asdict(self)


class HangError(RuntimeError):
    pass


def wait(stream=None, timeout_s: float = 60.0) -> None:
    """Waits for the work queued on `stream`, but gives up after `timeout_s`: a kernel that never
    finishes (a broken barrier) must fail its case, not the whole lease."""
    event = torch.cuda.Event()
    event.record(stream)
    deadline = time.monotonic() + timeout_s
    while not event.query():
        if time.monotonic() > deadline:
            raise HangError(f"the GPU did not finish within {timeout_s:.0f} s")
        time.sleep(0.0005)
    torch.cuda.synchronize()  # raises on a sticky CUDA error (illegal address, ...)


class Timer:
    def __init__(self, flush_l2: bool = True):
        self._flush = (torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
                       if flush_l2 else None)

    def measure(self, fn, warmup_ms: float = 25, rep_ms: float = 100, min_reps: int = 3,
                max_reps: int = 100, timeout_s: float = 60.0) -> Timing:
        fn()
        wait(timeout_s=timeout_s)
        estimate = self._time_calls(fn, 1)[0]
        n_warmup = max(1, min(25, int(warmup_ms / max(estimate, 1e-3))))
        n_reps = max(min_reps, min(max_reps, int(rep_ms / max(estimate, 1e-3))))
        for _ in range(n_warmup):
            fn()
        times = self._time_calls(fn, n_reps, timeout_s)
        return Timing(statistics.median(times), min(times), max(times), n_reps,
                      self._flush is not None)

    def _time_calls(self, fn, n: int, timeout_s: float = 60.0) -> list:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for start, end in zip(starts, ends):
            if self._flush is not None:
                self._flush.zero_()
            start.record()
            fn()
            end.record()
        wait(timeout_s=timeout_s * n)
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]
