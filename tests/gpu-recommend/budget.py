"""How run.py times one configuration, and what a bundle's GPU commands should cost (no torch).

The timing policy is here (not in run.py) so that plan.py's estimate follows what run.py does.
The cost constants come from the first run (H100 SXM, 2026-11-22, bench/results/h100-2026-11-22-
recommend-timings.json): 14 translation units of 16 configurations compiled in 34 s on 16 cores,
then 2038 measurements in 118 s, of which 92 s were kernel calls, 2 s L2 flushes and the rest
process starts and per-measurement overhead. Measured times were 1.16x (GEMM) and 1.37x
(attention) the model's predictions in sum; the estimate uses 1.3x and 1.5x.
"""
from __future__ import annotations

import math

# ---- the timing policy (run.py's measure) ----------------------------------------------------
WARMUP_MS = 5.0      # warm-up calls for about this long, after the estimate call
REP_MS = 30.0        # timed calls for about this long in all ...
MIN_REPS = 3         # ... but at least this many
MAX_REPS = 20        # ... and at most this many
MAX_WARMUP = 25


def timing_plan(estimate_ms: float) -> tuple:
    """(warm-up calls, timed calls after the estimate, whether the estimate call is one of the
    timed samples) for a configuration whose one timed call took estimate_ms.

    A call that takes WARMUP_MS or more is its own warm-up: the estimate call (after one untimed
    call, L2 flushed like the others) is kept as the first sample and MIN_REPS - 1 or more follow,
    so a 20 ms configuration costs 4 calls instead of 6."""
    est = max(estimate_ms, 1e-3)
    reps = max(MIN_REPS, min(MAX_REPS, int(REP_MS / est)))
    if est >= WARMUP_MS:
        return 0, reps - 1, True
    return max(1, min(MAX_WARMUP, int(WARMUP_MS / est))), reps, False


def calls(estimate_ms: float) -> tuple:
    """(kernel calls in all, timed samples) for one measurement."""
    warmup, more, reuse = timing_plan(estimate_ms)
    return 2 + warmup + more, more + (1 if reuse else 0)


# ---- costs on the GPU machine ----------------------------------------------------------------
CORES = 16                    # CPU cores of the GPU machine (nvcc runs one unit per core)
COMPILE_S_PER_CONFIG = 2.0    # nvcc -O3 sm_90a, one core, per configuration in a unit
COMPILE_S_PER_UNIT = 2.0      # ... plus per unit (host compile, link)
FLUSH_MS = 0.1                # 256 MB memset before each timed call
MEASUREMENT_OVERHEAD_S = 0.008  # Python, ctypes, events, synchronisation, the log line
CHECK_S = 0.004               # NaN fill, comparison with the reference (checked shapes)
WORKER_START_S = 6.0          # a worker process: Python, torch, CUDA context, flush buffer
SHAPE_SETUP_S = 0.5           # inputs (and the reference) of one shape
SLOWDOWN = {"gemm": 1.3, "attention": 1.5}   # measured / predicted, conservatively


def expected_ms(case: str, predicted_ms: float) -> float:
    return predicted_ms * SLOWDOWN.get(case, 1.5)


def measurement_seconds(ms: float, checked: bool = False) -> float:
    """Seconds the GPU command spends on one configuration at one shape, if a call takes ms."""
    n, timed = calls(ms)
    return (n * ms + timed * FLUSH_MS) / 1e3 + MEASUREMENT_OVERHEAD_S + (CHECK_S + ms / 1e3 if checked else 0)


def compile_seconds(configs_per_unit: list, cores: int = CORES) -> float:
    """Wall time of compiling units of these sizes on `cores` cores, longest first."""
    finish = [0.0] * cores
    for n in sorted(configs_per_unit, reverse=True):
        i = finish.index(min(finish))
        finish[i] += COMPILE_S_PER_UNIT + COMPILE_S_PER_CONFIG * n
    return max(finish) if configs_per_unit else 0.0


def units_for(n_configs: int, max_per_unit: int, cores: int = CORES) -> int:
    """How many translation units to batch n configurations into: a multiple of the cores (so
    that every core compiles the same amount), each holding at most max_per_unit."""
    if n_configs == 0:
        return 0
    units = cores * math.ceil(n_configs / (cores * max_per_unit))
    return min(units, n_configs)


def config_cost(case: str, predicted_ms: list, checked: set) -> float:
    """Estimated seconds of one configuration: its compile share plus its measurements at every
    shape (predicted_ms[s] is the model's prediction at shape s)."""
    t = COMPILE_S_PER_CONFIG / CORES
    for s, p in enumerate(predicted_ms):
        t += measurement_seconds(expected_ms(case, p), s in checked)
    return t


def partition(costs: list, parts: int) -> list:
    """Deals items (their costs) to parts in snake order of decreasing cost (1, 2, .., n, n, ..,
    2, 1, 1, 2, ..): every part gets the same number of items, give or take one, and a like mix
    of cheap and expensive ones, so the parts cost about the same even where the estimate is
    off by a common factor. Returns the part (0-based) of each item."""
    order = sorted(range(len(costs)), key=lambda i: (-costs[i], i))
    part = [0] * len(costs)
    for rank, i in enumerate(order):
        lap, pos = divmod(rank, parts)
        part[i] = pos if lap % 2 == 0 else parts - 1 - pos
    return part


def estimate_part(manifest: dict, part: int | None) -> dict:
    """Estimated seconds of one GPU command (part None: the whole bundle): compile, measure."""
    units = [u for u in manifest["units"] if part is None or u.get("part") == part]
    compile_s = compile_seconds([len(u["configs"]) for u in units])
    measure_s = 0.0
    counts = {}
    for case in manifest["cases"]:
        members = [c for c in manifest["configs"] if c["case"] == case["name"]
                   and (part is None or c.get("part") == part)]
        if not members:
            continue
        counts[case["name"]] = len(members)
        checked = set(case.get("checked", [0]))
        measure_s += WORKER_START_S
        for s, ranking in enumerate(case["rankings"]):
            measure_s += SHAPE_SETUP_S
            for c in members:
                p = ranking["predicted_ms"].get(c["key"])
                if p is not None:
                    measure_s += measurement_seconds(expected_ms(case["name"], p), s in checked)
    return {"units": len(units), "configs": counts, "compile_s": compile_s, "measure_s": measure_s,
            "total_s": compile_s + measure_s}
