#!/usr/bin/env python3
"""GPU correctness runner: builds a bundle of generated kernels and checks them against
higher-precision references (see tests/gpu/README.md).

    python3 tests/gpu/run.py gpu-bundle --out $OUT            # on the GPU machine
    python3 tests/gpu/run.py gpu-bundle --dry-run             # anywhere: print the plan

Steps: (1) nvcc builds every .cu of the bundle into a shared library, in parallel; (2) each
library's tlc_KERNEL prototype is checked against the signature in cases.KERNELS; (3) worker
processes (worker.py) run, per build, the launcher-contract check and then every case: fresh
random inputs, NaN-poisoned outputs, one call through the C ABI, error against the reference,
a short timing. A crash or a broken CUDA context fails only the item that caused it: a fresh
worker carries on with the rest. Writes OUT/results.json and OUT/build.log, prints a table, and
exits 1 if anything failed or was skipped, 2 on bad usage.

This process never imports torch, so --dry-run works on the build machine.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import cases as case_tables
from abi import check_prototype
from build import make_job, run_jobs
from metrics import json_safe

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", help="bundle directory (manifest.json, *.cu, stdlib/, runtime/)")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-out"),
                    help="where results.json and build.log go (default: $OUT)")
    ap.add_argument("--build-dir", help="where the .so files go (default: BUNDLE/build)")
    ap.add_argument("--only", help="regex: run only cases (and contract checks) whose name "
                                   "matches")
    ap.add_argument("--budget-s", type=float, default=300,
                    help="stop starting new items after this many seconds (default 300)")
    ap.add_argument("--case-timeout-s", type=float, default=60,
                    help="a kernel running longer than this is a hang (default 60)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4, help="parallel nvcc")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--no-contract", action="store_true", help="skip the launcher-contract checks")
    ap.add_argument("--dry-run", action="store_true", help="print the plan; build and run nothing")
    return ap.parse_args(argv)


# ---- Planning (no GPU) ------------------------------------------------------------------------

def plan_items(manifest, selected_cases, so_paths: dict, with_contract: bool) -> list:
    """Worker items in run order: per build, its contract check (on the smallest case shape, so
    it costs nothing) and then its cases."""
    items = []
    for build in manifest.builds:
        mine = [c for c in selected_cases if c.build == build.name]
        if not mine:
            continue
        head = {"build": {"name": build.name, "family": build.family,
                          "defines": dict(build.defines)}, "so": so_paths[build.name]}
        smallest = min(mine, key=lambda c: math.prod(c.shape.values()))
        if with_contract:
            items.append({**head, "kind": "contract", "name": f"contract_{build.name}",
                          "shape": smallest.shape, "seed": smallest.seed + 1})
        for c in mine:
            items.append({**head, "kind": "case", "name": c.name, "shape": c.shape,
                          "seed": c.seed, "reference": c.reference, "tolerance": c.tolerance})
    return items


def print_plan(manifest, jobs, items) -> None:
    print(f"bundle: target {manifest.target}, selftest {manifest.selftest}, "
          f"generator {manifest.generator or '?'}")
    for job in jobs:
        print(f"build {job.name}: {' '.join(job.command)}")
    for item in items:
        extra = f" ref={item['reference']}" if item["kind"] == "case" else ""
        print(f"{item['kind']:8s} {item['name']}: {item['build']['name']} {item['shape']}{extra}")
    print(f"{len(jobs)} builds, {sum(i['kind'] == 'case' for i in items)} cases, "
          f"{sum(i['kind'] == 'contract' for i in items)} contract checks")


# ---- Workers ----------------------------------------------------------------------------------

class WorkerPool:
    """Runs items in worker processes, restarting after a crash until every item has a record."""

    def __init__(self, deadline: float, case_timeout_s: float, scratch: str,
                 worker: tuple = (sys.executable, os.path.join(HERE, "worker.py"))):
        self.deadline = deadline
        self.case_timeout_s = case_timeout_s
        self.scratch = scratch
        self.worker = list(worker)   # the command; PLAN and EVENTS are appended
        self.env = None

    def run(self, items: list) -> dict:
        records, pending, round_ = {}, list(items), 0
        while pending:
            round_ += 1
            plan = os.path.join(self.scratch, f"plan{round_}.json")
            events = os.path.join(self.scratch, f"events{round_}.jsonl")
            with open(plan, "w") as f:
                json.dump({"items": pending, "deadline": self.deadline,
                           "case_timeout_s": self.case_timeout_s}, f)
            code, timed_out = self._spawn(plan, events)
            done, started = self._read_events(events, records)
            if started is not None:
                why = ("the worker was killed at the time limit" if timed_out else
                       f"the worker died (exit code {code}) while running it")
                records[started] = {**_failure(_by_name(pending, started), why), "fatal": True}
                done.add(started)
            if not done:  # it failed before any item: torch or the GPU is missing
                for item in pending:
                    records[item["name"]] = _failure(item, f"worker failed to start "
                                                           f"(exit code {code})")
                break
            pending = [i for i in pending if i["name"] not in done]
        return records

    def _spawn(self, plan: str, events: str) -> tuple:
        limit = max(60.0, self.deadline - time.time() + 2 * self.case_timeout_s)
        try:
            return subprocess.run(self.worker + [plan, events], timeout=limit).returncode, False
        except subprocess.TimeoutExpired:
            return None, True

    def _read_events(self, path: str, records: dict) -> tuple:
        done, started = set(), None
        if not os.path.exists(path):
            return done, started
        with open(path) as f:
            for line in f:
                try:
                    event = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash
                if event["event"] == "env":
                    self.env = event["env"]
                elif event["event"] == "start":
                    started = event["name"]
                elif event["event"] == "result":
                    records[event["record"]["name"]] = event["record"]
                    done.add(event["record"]["name"])
                    started = None
        return done, started


def _first_error(log: str) -> str:
    """The line of a compiler log that says what went wrong first."""
    lines = log.strip().splitlines() or ["(no output)"]
    return next((line for line in lines if re.search(r"\berror\b", line)), lines[-1])[:300]


def _by_name(items, name):
    return next(i for i in items if i["name"] == name)


def _failure(item: dict, reason: str) -> dict:
    return {"kind": item["kind"], "name": item["name"], "build": item["build"]["name"],
            "shape": item["shape"], "passed": False, "reason": reason}


# ---- Report -----------------------------------------------------------------------------------

def _shape_text(shape: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in shape.items())


def _rate_text(rec: dict) -> str:
    if "tflops" in rec:
        return f"{rec['tflops']:8.1f} TFLOP/s"
    if "gbps" in rec:
        return f"{rec['gbps']:8.1f} GB/s"
    return ""


def print_table(records: list) -> None:
    print(f"\n{'case':34s} {'shape':34s} {'rel err':>9s} {'max abs':>9s} {'ms':>9s} "
          f"{'rate':>16s}  status")
    for rec in records:
        status = "PASS" if rec["passed"] else ("SKIP" if rec.get("skipped") else "FAIL")
        err = rec.get("error", {})
        # NaN and infinity reach results.json as null (a failed case's rel: NaN poison left,
        # or an error against an all-zero reference).
        rel = f"{err['rel']:9.2e}" if err.get("rel") is not None else f"{'-':>9s}"
        max_abs = f"{err['max_abs']:9.2e}" if err.get("max_abs") is not None else f"{'-':>9s}"
        ms = f"{rec['time_ms']:9.3f}" if "time_ms" in rec else f"{'-':>9s}"
        print(f"{rec['name']:34s} {_shape_text(rec['shape']):34s} {rel} {max_abs} {ms} "
              f"{_rate_text(rec):>16s}  {status}")
        if not rec["passed"]:
            print(f"    {rec['reason']}")


def nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
        return out.strip().splitlines()[-1] if out.strip() else "?"
    except OSError:
        return "not found"


def driver_version() -> str:
    if not shutil.which("nvidia-smi"):
        return "?"
    out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    return out.splitlines()[0] if out else "?"


def write_results(path: str, manifest, env, builds: dict, abi_errors: dict, records: list,
                  nvcc: str) -> dict:
    summary = {"passed": sum(r["passed"] for r in records),
               "failed": sum(not r["passed"] and not r.get("skipped") for r in records),
               "skipped": sum(bool(r.get("skipped")) for r in records)}
    data = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            **(env or {"device": "unknown (no worker started)"}),
            "driver": driver_version(), "nvcc": nvcc_version(nvcc),
            "bundle": {"target": manifest.target, "selftest": manifest.selftest,
                       "generator": manifest.generator},
            "builds": [{**b.as_dict(), "abi_error": abi_errors.get(name)}
                       for name, b in builds.items()],
            "cases": [r for r in records if r["kind"] == "case"],
            "contract": [r for r in records if r["kind"] == "contract"],
            "summary": summary}
    with open(path, "w") as f:
        json.dump(json_safe(data), f, indent=1)
    return summary


# ---- Main -------------------------------------------------------------------------------------

def main(argv) -> int:
    args = parse_args(argv)
    start = time.time()
    try:
        manifest = case_tables.load_manifest(args.bundle)
    except (OSError, ValueError, KeyError) as e:
        print(f"run.py: cannot read {args.bundle}/manifest.json: {e}", file=sys.stderr)
        return 2
    selected = [c for c in manifest.cases if not args.only or re.search(args.only, c.name)]
    build_names = [b.name for b in manifest.builds if any(c.build == b.name for c in selected)]
    build_dir = args.build_dir or os.path.join(args.bundle, "build")
    jobs = [make_job(n, args.bundle, build_dir, manifest.target, args.nvcc) for n in build_names]
    so_paths = {j.name: os.path.abspath(j.so) for j in jobs}
    items = plan_items(manifest, selected, so_paths, not args.no_contract)
    if args.dry_run:
        print_plan(manifest, jobs, items)
        return 0

    os.makedirs(args.out, exist_ok=True)
    log_path = os.path.join(args.out, "build.log")
    open(log_path, "w").close()
    builds = run_jobs(jobs, args.jobs, timeout_s=300, log_path=log_path)
    print(f"built {sum(b.ok for b in builds.values())}/{len(builds)} libraries in "
          f"{time.time() - start:.0f} s (log: {log_path})", flush=True)

    abi_errors, broken = {}, {}
    for name, result in builds.items():
        build = manifest.build(name)
        if not result.ok:
            broken[name] = f"build failed: {_first_error(result.log)} (build.log)"
            continue
        with open(manifest.cu_path(build)) as f:
            error = check_prototype(f.read(), build.spec)
        if error:
            abi_errors[name] = broken[name] = f"ABI mismatch: {error}"

    runnable = [i for i in items if i["build"]["name"] not in broken]
    records = {i["name"]: _failure(i, broken[i["build"]["name"]])
               for i in items if i["build"]["name"] in broken}
    with tempfile.TemporaryDirectory(prefix="tlc-gpu-") as scratch:
        pool = WorkerPool(start + args.budget_s, args.case_timeout_s, scratch)
        records.update(pool.run(runnable) if runnable else {})
    ordered = [records[i["name"]] for i in items]

    print_table(ordered)
    summary = write_results(os.path.join(args.out, "results.json"), manifest, pool.env, builds,
                            abi_errors, ordered, args.nvcc)
    print(f"\n{summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} "
          f"skipped ({time.time() - start:.0f} s); results in {args.out}/results.json")
    return 0 if summary["passed"] == len(ordered) and ordered else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
