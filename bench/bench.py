#!/usr/bin/env python3
"""Benchmark: tlc's kernels from a GPU bundle, side by side with what users would pick instead.

    python3 bench/bench.py gpu-bundle --out $OUT [--results $OUT/results.json]   # GPU machine
    python3 bench/bench.py gpu-bundle --dry-run                                  # anywhere

In one process and one run: the device-to-device copy bandwidth (the memory ceiling) and
cuBLAS's f16 GEMM rate (the compute ceiling), then for each bench item of the manifest its
roofline floor, our kernel and the library peers (cuBLAS through torch.matmul; PyTorch SDPA
with the flash and the cuDNN backends; torch.softmax; F.rms_norm; batched torch matmuls for MLA
decode and for attention with sinks, beside SDPA with the sink as an extra key), then, in a
second pass so that their compile time cannot crowd out the rest, the Triton peers (a tuned
GEMM, FlashAttention-2 style forwards: dense, with sinks and GQA, block-sparse), after which
ours, the library peers and the tuned Triton kernel of each such item are timed again by turns
(interleave: ratios from the same seconds). Every implementation is checked against
the first library peer's output before it is timed (bench/measure.py); timing is
tests/gpu/timing.py (CUDA events, warm-up, median, L2 flushed).

Writes OUT/<device>-<date>.json (copy it to bench/results/) and OUT/bench.md (the tables for
docs/benchmarks.md), after every item, so a run cut short still leaves its figures. Exit status
0, or 3 if a kernel broke the CUDA context (the run stops there), 2 on bad usage.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "gpu"))

import cases as case_tables  # noqa: E402
from abi import check_prototype  # noqa: E402
from build import make_job, run_jobs  # noqa: E402
from metrics import json_safe  # noqa: E402
from report import FLOOR_FAMILIES, MEMORY_FAMILIES, PEERS, markdown  # noqa: E402

METHOD = ("CUDA events around each call; median of 3-100 calls (about 100 ms) after about "
          "25 ms of warm-up; 256 MB written before each call to flush L2; every implementation "
          "checked against the first library peer's output (rel. error <= 1e-2) before timing. "
          "Items with a Triton peer are also timed by turns after Triton is tuned: 5 rounds, "
          "each implementation about 20 ms per round in rotating order, the median per "
          "implementation (the 'By turns' tables).")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    ap.add_argument("--build-dir", help="where the .so files are or go (default: BUNDLE/build)")
    ap.add_argument("--results", help="run.py's results.json: builds that crashed there are not "
                                      "run here (a crash would end the whole benchmark)")
    ap.add_argument("--only", help="regex over bench item names")
    ap.add_argument("--budget-s", type=float, default=300,
                    help="stop starting new measurements after this many seconds")
    ap.add_argument("--case-timeout-s", type=float, default=60)
    ap.add_argument("--skip-triton", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--dry-run", action="store_true")
    return ap.parse_args(argv)


def device_slug(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'h100'; names without a model token -> all tokens joined."""
    tokens = [t for t in re.findall(r"[a-z0-9]+", name.lower()) if t != "nvidia"]
    model = next((t for t in tokens if re.fullmatch(r"[a-z]+\d+[a-z]*", t)), None)
    return model or "-".join(tokens) or "unknown"


def roofline_floor(min_bytes: float, flops: float, copy_tbps: float, gemm_tflops: float) -> dict:
    """The least time an item can take on this GPU: its bytes (each input read once, each
    output written once) at the measured copy bandwidth, or its FLOPs at the measured cuBLAS
    rate, whichever is longer; `floor_bound` says which."""
    memory_ms = min_bytes / (copy_tbps * 1e12) * 1e3
    compute_ms = flops / (gemm_tflops * 1e12) * 1e3
    return {"floor_ms": max(memory_ms, compute_ms),
            "floor_bound": "memory" if memory_ms >= compute_ms else "compute"}


def crashed_builds(results_path: str | None) -> set:
    """Builds with an item that crashed or hung in run.py."""
    if not results_path or not os.path.exists(results_path):
        return set()
    with open(results_path) as f:
        data = json.load(f)
    return {r["build"] for r in data.get("cases", []) + data.get("contract", [])
            if r.get("fatal")}


def print_plan(manifest, items, jobs, skip_triton: bool) -> None:
    for job in jobs:
        print(f"build {job.name}: {' '.join(job.command)}")
    for item in items:
        build = manifest.build(item.build)
        peers = [k for k, _ in PEERS[build.family] if k != "triton" or not skip_triton]
        # A kernel with `then` launches is timed as one operation: every launch in each call.
        ours = ("ours" if not build.spec.then else
                f"ours ({' + '.join(f'tlc_{launch.kernel}' for launch in build.spec.launches)})")
        print(f"bench {item.name}: {item.shape} {ours} vs {', '.join(peers)}"
              + (f"  ({item.note})" if item.note else ""))
    print(f"{len(items)} items, {len(jobs)} builds")


class Recorder:
    """The run's JSON and Markdown, rewritten after every item."""

    def __init__(self, out_dir: str, run: dict):
        self.run = run
        date = run["date"][:10]
        self.json_path = os.path.join(out_dir, f"{device_slug(run['device'])}-{date}.json")
        self.md_path = os.path.join(out_dir, "bench.md")

    def save(self) -> None:
        with open(self.json_path, "w") as f:
            json.dump(json_safe(self.run), f, indent=1)
        with open(self.md_path, "w") as f:
            f.write(markdown(self.run) + "\n")


def _driver() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip()
        return out.splitlines()[0] if out else "?"
    except OSError:
        return "?"


def _summary(record: dict) -> str:
    memory = record["family"] in MEMORY_FAMILIES
    parts = []
    for key, impl in record["impls"].items():
        if impl.get("status") == "ok":
            parts.append(f"{key} {impl['gbps' if memory else 'tflops']:.1f}")
        else:
            parts.append(f"{key} {impl.get('status', '?').split(':')[0]}")
    floor = record["impls"].get("ours", {}).get("floor_pct")
    floor_text = (f"; ours at {floor:.1f}% of the {record['floor_bound']} floor"
                  if floor and record["family"] in FLOOR_FAMILIES else "")
    return (f"{record['name']}: " + ", ".join(parts) + (" GB/s" if memory else " TFLOP/s")
            + floor_text)


def run_benchmark(args, manifest, items, so_paths: dict, unusable: dict) -> int:
    import torch
    import triton

    from measure import FatalError, ItemBench, copy_bandwidth_tbps, gemm_peak_tflops
    from problems import configure_reference_precision
    from timing import Timer

    configure_reference_precision()
    deadline = time.time() + args.budget_s
    props = torch.cuda.get_device_properties(0)
    run = {"device": torch.cuda.get_device_name(0), "sms": props.multi_processor_count,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton.__version__,
           "driver": _driver(), "generator": manifest.generator, "selftest": manifest.selftest,
           "method": METHOD, "items": []}
    recorder = Recorder(args.out, run)
    timer = Timer()
    try:
        run["copy_TBps"] = copy_bandwidth_tbps(timer)
        print(f"copy bandwidth: {run['copy_TBps']:.2f} TB/s", flush=True)
        run["gemm_TFLOPs"] = gemm_peak_tflops(timer)
        print(f"cuBLAS f16 GEMM at 8192^3: {run['gemm_TFLOPs']:.0f} TFLOP/s", flush=True)
        for item in items:
            build = manifest.build(item.build)
            record = {"name": item.name, "family": build.family, "build": build.name,
                      "shape": item.shape, "dtype": build.defines["dtype"],
                      "causal": build.defines.get("causal") == "true", "note": item.note,
                      "impls": {}}
            run["items"].append(record)
            if time.time() > deadline:
                record["impls"]["ours"] = {"status": "skipped: time budget"}
                continue
            try:
                bench_libraries_and_ours(ItemBench(item, build, timer, args.case_timeout_s),
                                         record, run, so_paths[build.name],
                                         unusable.get(build.name))
            except torch.cuda.OutOfMemoryError as e:
                record["error"] = f"out of memory: {str(e).splitlines()[0]}"
            print(_summary(record), flush=True)
            recorder.save()
            torch.cuda.empty_cache()
        if not args.skip_triton:
            run_triton_pass(manifest, items, run, recorder, timer, deadline, args, ItemBench, so_paths)
    except FatalError as e:
        run["fatal"] = str(e)
        recorder.save()
        print(f"bench.py: stopped, the CUDA context is broken: {e}", file=sys.stderr)
        return 3
    recorder.save()
    print("\n" + markdown(run))
    print(f"\nwrote {recorder.json_path} and {recorder.md_path}")
    return 0


def bench_libraries_and_ours(item_bench, record: dict, run: dict, so_path: str,
                             unusable: str | None):
    shape = item_bench.item.shape
    record["flops"] = item_bench.problem.flops(shape)
    record["min_bytes"] = item_bench.problem.min_bytes(shape)
    record.update(roofline_floor(record["min_bytes"], record["flops"], run["copy_TBps"],
                                 run["gemm_TFLOPs"]))
    item_bench.floor_ms = record["floor_ms"]
    if record["floor_bound"] == "memory":
        from measure import copy_same_bytes_gbps  # torch: imported on the GPU machine only
        record["copy_same_GBps"] = copy_same_bytes_gbps(item_bench.timer, record["min_bytes"])
    for peer in item_bench.library_peers():
        record["impls"][peer.key] = item_bench.measure(peer, may_be_reference=True)
    record["impls"]["ours"] = ({"status": f"skipped: {unusable}"} if unusable
                               else item_bench.measure_ours(so_path))


def run_triton_pass(manifest, items, run, recorder, timer, deadline, args, item_bench,
                    so_paths: dict) -> None:
    import torch
    for item, record in zip(items, run["items"]):
        if "triton" not in dict(PEERS[record["family"]]):
            continue
        if time.time() > deadline:
            record["impls"]["triton"] = {"status": "skipped: time budget"}
            continue
        try:
            ib = item_bench(item, manifest.build(item.build), timer, args.case_timeout_s)
            ib.floor_ms = record.get("floor_ms", 0.0)
            ib.ensure_reference()
            record["impls"]["triton"] = ib.tune(ib.triton_candidates())
            interleave(ib, record, so_paths.get(item.build))
            del ib
        except torch.cuda.OutOfMemoryError as e:
            record["impls"]["triton"] = {"status": f"error: out of memory: {e}"[:200]}
        print(_summary(record), flush=True)
        recorder.save()
        torch.cuda.empty_cache()


def interleave(ib, record: dict, so_path: str | None) -> None:
    """Where ours, the library peers and Triton all ran correctly: the three timed again by
    turns (ItemBench.interleaved), as record["interleaved"] (report.py and charts.py take the
    ratios from its times)."""
    impls = record["impls"]
    ok = lambda key: impls.get(key, {}).get("status") == "ok"  # noqa: E731
    peers = [p for p in ib.library_peers() if ok(p.key)]
    if ib.tuned is None or not so_path or not ok("ours") or not ok("triton") or not peers:
        return
    try:
        timed = ib.interleaved([ib.ours(so_path), *peers, ib.tuned])
    except Exception as e:  # noqa: BLE001 - the separate passes' figures stand without it
        timed = {"status": f"error: {type(e).__name__}: {str(e)[:200]}"}
    record["interleaved"] = timed


def main(argv) -> int:
    args = parse_args(argv)
    try:
        manifest = case_tables.load_manifest(args.bundle)
    except (OSError, ValueError, KeyError) as e:
        print(f"bench.py: cannot read {args.bundle}/manifest.json: {e}", file=sys.stderr)
        return 2
    items = [i for i in manifest.bench if not args.only or re.search(args.only, i.name)]
    names = [b.name for b in manifest.builds if any(i.build == b.name for i in items)]
    build_dir = args.build_dir or os.path.join(args.bundle, "build")
    jobs = [make_job(n, args.bundle, build_dir, manifest.target, args.nvcc) for n in names]
    if args.dry_run:
        print_plan(manifest, items, jobs, args.skip_triton)
        return 0

    os.makedirs(args.out, exist_ok=True)
    built = run_jobs(jobs, args.jobs, timeout_s=300, log_path=os.path.join(args.out, "build.log"))
    unusable = {name: "build failed (build.log)" for name, r in built.items() if not r.ok}
    for name in set(names) - set(unusable):
        build = manifest.build(name)
        with open(manifest.cu_path(build)) as f:
            error = check_prototype(f.read(), build.spec)
        if error:  # calling through a wrong signature would crash the whole run
            unusable[name] = f"ABI mismatch: {error}"
    unusable.update({name: "crashed or hung in run.py" for name in crashed_builds(args.results)})
    so_paths = {j.name: os.path.abspath(j.so) for j in jobs}
    return run_benchmark(args, manifest, items, so_paths, unusable)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
