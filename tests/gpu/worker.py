"""The GPU side of tests/gpu/run.py: runs a list of checks in one process, one event per line.

    python3 tests/gpu/worker.py PLAN.json EVENTS.jsonl     (started by run.py, never by hand)

PLAN holds the items (cases and contract checks) and a deadline. For each item the worker
appends {"event": "start"} and then {"event": "result"} to EVENTS, flushed at once, so that
when a kernel kills the process (a crash) or the CUDA context (an illegal address), run.py
knows which item did it and starts a fresh worker for the rest. After a hang or a CUDA error
the context is unusable, so the worker records the item and exits with FATAL_EXIT.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback

import torch

import contract
from abi import TensorView, load_entry
from cases import Build
from metrics import combine, compare, json_safe, judge
from problems import configure_reference_precision, ordered_tensors, problem_for
from timing import HangError, Timer, cuda_healthy, wait

FATAL_EXIT = 3

# Timing here is a sanity figure next to the check; bench/bench.py does the careful timing.
_TIMING = dict(warmup_ms=10, rep_ms=50, min_reps=3, max_reps=20)


class Events:
    def __init__(self, path: str):
        self._file = open(path, "a")

    def emit(self, event: str, **fields) -> None:
        self._file.write(json.dumps({"event": event, **fields}) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())


def environment() -> dict:
    props = torch.cuda.get_device_properties(0)
    return {"device": torch.cuda.get_device_name(0), "capability": [props.major, props.minor],
            "sms": props.multi_processor_count, "torch": torch.__version__,
            "cuda": torch.version.cuda}


class Context:
    """What the items of one worker share: loaded libraries, the timer, the case timeout."""

    def __init__(self, case_timeout_s: float):
        self.timeout_s = case_timeout_s
        self.timer = Timer()
        self._entries = {}

    def entry(self, build: Build, so_path: str):
        if build.name not in self._entries:
            self._entries[build.name] = load_entry(so_path, build.spec)
        return self._entries[build.name]

    def wait(self) -> None:
        wait(timeout_s=self.timeout_s)


class Setup:
    """Fresh inputs and poisoned outputs of one item, and the bound C call over them."""

    def __init__(self, item: dict, ctx: Context):
        self.build = Build(item["build"]["name"], item["build"]["family"],
                           item["build"]["defines"])
        self.problem = problem_for(self.build)
        self.entry = ctx.entry(self.build, item["so"])
        self.shape = item["shape"]
        gen = torch.Generator(device="cuda")
        gen.manual_seed(item["seed"])
        self.inputs = self.problem.inputs(self.shape, gen)
        self.outputs = self.problem.outputs(self.shape)
        self.tensors = ordered_tensors(self.build.spec, self.inputs, self.outputs)
        self.scalars = self.problem.scalars(self.shape)
        self.stream = torch.cuda.current_stream().cuda_stream
        # Through the problem's launcher: kernels that atomic_add into their outputs get them
        # zeroed before every launch (the check, the timing and the check after it).
        self.call = self.problem.launcher(
            self.entry.bind([TensorView.of(t) for t in self.tensors], self.scalars, self.stream),
            self.outputs)

    def error_stats(self, reference: dict):
        return combine(compare(self.outputs[name], ref) for name, ref in reference.items())


def run_case(item: dict, ctx: Context) -> dict:
    s = Setup(item, ctx)
    record = {"kind": "case", "name": item["name"], "build": s.build.name, "shape": s.shape,
              "dtype": s.build.defines["dtype"], "reference": item["reference"],
              "tolerance": item["tolerance"]}
    code = s.call()
    if code != 0:
        return {**record, "passed": False,
                "reason": f"launcher refused valid inputs: code {code}: {s.entry.message()}"}
    ctx.wait()
    reference = s.problem.reference(s.inputs, s.shape, item["reference"])
    stats = s.error_stats(reference)
    verdict = judge(stats, item["tolerance"])
    record.update(passed=verdict.passed, reason=verdict.reason, error=stats.as_dict())
    # last_block's counters must be 0 again after a complete launch (problems.Problem.counters).
    left = s.problem.counters_left(s.outputs)
    if left:
        record.update(passed=False, reason=left + "; " + verdict.reason)
    if not record["passed"]:
        return record

    def checked_call():
        if s.call() != 0:
            raise RuntimeError(f"launch failed during timing: {s.entry.message()}")
    timing = ctx.timer.measure(checked_call, timeout_s=ctx.timeout_s, **_TIMING)
    record["timing"] = timing.as_dict()
    record["time_ms"] = timing.median_ms
    seconds = timing.median_ms * 1e-3
    if s.problem.bound == "compute":
        record["tflops"] = s.problem.flops(s.shape) / seconds / 1e12
    else:
        record["gbps"] = s.problem.min_bytes(s.shape) / seconds / 1e9

    # The outputs now hold the last timed run on the same inputs: a different error means the
    # result depends on timing (a race), which one clean run can hide. A deterministic kernel
    # repeats its error exactly (1% slack). Kernels that accumulate with float atomics add in a
    # different order on every run, so their error legitimately moves by rounding: for them the
    # repeat must only stay within a tenth of the tolerance of the first result (so must
    # that of kernels clearing their own float-atomic outputs, problems.Problem.float_atomics).
    again = s.error_stats(reference)
    record["rel_after_timing"] = again.rel
    slack = item["tolerance"] / 10 if s.problem.accumulates or s.problem.float_atomics else 1e-7
    if not judge(again, item["tolerance"]).passed or not math.isclose(
            again.rel, stats.rel, rel_tol=1e-2, abs_tol=slack):
        record.update(passed=False, reason=f"result changed between runs on the same inputs: "
                                           f"rel {stats.rel:.3e} then {again.rel:.3e} (race?)")
    left = s.problem.counters_left(s.outputs)
    if left:
        record.update(passed=False, reason=left + " (after the timed launches)")
    return record


def run_contract(item: dict, ctx: Context) -> dict:
    s = Setup(item, ctx)
    # The counters start at 0, not poisoned: a refused launch must leave the others' poison.
    poisoned = s.problem.poisoned_outputs(s.outputs)
    checks = [contract.check(s.entry, m, s.scalars, poisoned, s.stream, ctx.wait)
              for m in contract.mutations(s.build.spec, s.tensors)]
    failed = [c for c in checks if not c.passed]
    reason = (f"{len(checks)} wrong argument lists rejected" if not failed
              else "; ".join(f"{c.mutation}: {c.reason}" for c in failed))
    return {"kind": "contract", "name": item["name"], "build": s.build.name, "shape": s.shape,
            "passed": not failed, "reason": reason, "checks": [c.as_dict() for c in checks]}


def run_item(item: dict, ctx: Context) -> tuple:
    """(record, fatal): fatal when the CUDA context can no longer be trusted."""
    runner = run_case if item["kind"] == "case" else run_contract
    try:
        return runner(item, ctx), False
    except HangError as e:
        return {**_error_record(item, f"hang: {e}"), "fatal": True}, True
    except Exception as e:  # noqa: BLE001 - any failure of one item is that item's result
        traceback.print_exc()
        if cuda_healthy():
            return _error_record(item, f"{type(e).__name__}: {e}".strip()), False
        return {**_error_record(item, f"CUDA error: {e}".strip()), "fatal": True}, True


def _error_record(item: dict, reason: str) -> dict:
    return {"kind": item["kind"], "name": item["name"], "build": item["build"]["name"],
            "shape": item["shape"], "passed": False, "reason": reason}


def main(plan_path: str, events_path: str) -> int:
    with open(plan_path) as f:
        plan = json.load(f)
    events = Events(events_path)
    events.emit("env", env=environment())
    configure_reference_precision()
    ctx = Context(plan["case_timeout_s"])
    for item in plan["items"]:
        events.emit("start", name=item["name"])
        if time.time() > plan["deadline"]:
            record, fatal = _error_record(item, "skipped: out of time budget"), False
            record["skipped"] = True
        else:
            record, fatal = run_item(item, ctx)
        events.emit("result", record=json_safe(record))
        status = "PASS" if record["passed"] else "FAIL"
        print(f"[worker] {status} {item['name']}: {record['reason']}", flush=True)
        if fatal:
            os._exit(FATAL_EXIT)  # no clean-up: the context is broken and may hang on exit
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
