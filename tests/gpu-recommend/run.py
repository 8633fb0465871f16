#!/usr/bin/env python3
"""Times every candidate of a validation bundle (plan.py) on the GPU and scores the model.

    python3 tests/gpu-recommend/run.py gpu-recommend [--part K/N] [--out $OUT] [--budget-s 540]

1. Compiles the bundle's translation units with nvcc, all at once (one per CPU core); with
   --part K/N only part K's (plan.py --parts N split the configurations into N parts).
2. For each case and shape, calls every configuration (of the part) through its C entry
   point: at the case's checked shapes (cases.py; measured first) the output is compared with
   PyTorch (NaN-filled outputs, relative error), then every shape is timed with CUDA events
   (L2 flushed before each timed call, median of 3-20 calls; budget.timing_plan). The other
   shapes follow in increasing FLOPs, so a spent budget loses the most expensive ones whole.
3. Writes $OUT/recommend-results[-KofN].json after every case, then scores the model
   (analyze.py) into $OUT/recommend-validation[-KofN].md, which it also prints. A part's
   scores cover its configurations only: merge the parts' results files with analyze.py.

Measurements run in a worker process per case: a configuration that breaks the CUDA context
is recorded as crashed and the worker restarts after it. When the budget is spent, remaining
measurements are skipped and the scores use what was measured (and say so).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "gpu"))
import analyze  # noqa: E402
import budget  # noqa: E402
import cases as cases_mod  # noqa: E402

NVCC_FLAGS = ["-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "--shared",
              "-Xcompiler", "-fPIC"]


def parse_part(text: str | None, manifest: dict) -> int | None:
    """'K/N' -> K - 1 (0-based), checked against the bundle's parts; None -> the whole bundle."""
    if text is None:
        return None
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        sys.exit(f"--part {text}: expected K/N, e.g. 1/2")
    if n != manifest.get("parts", 1) or not 1 <= k <= n:
        sys.exit(f"--part {text}: this bundle has {manifest.get('parts', 1)} parts (plan.py --parts)")
    return k - 1


def part_label(part: int | None, manifest: dict) -> str:
    """'' for the whole bundle, '-1of2' for part 1 of 2: the suffix of the output files."""
    return "" if part is None else f"-{part + 1}of{manifest.get('parts', 1)}"


def in_part(item: dict, part: int | None) -> bool:
    return part is None or item.get("part", 0) == part


def shape_order(flops, shapes: list, checked) -> list:
    """Shape indices in measuring order: the checked shapes first (a configuration that fails
    there is not timed elsewhere), then by increasing FLOPs."""
    checked = [s for s in checked if s < len(shapes)]
    rest = sorted((s for s in range(len(shapes)) if s not in checked), key=lambda s: (flops(shapes[s]), s))
    return checked + rest


def compile_units(bundle: pathlib.Path, manifest: dict, part: int | None = None) -> dict:
    """unit index -> path of its shared library, or None (nvcc's output is in build/<unit>.log);
    only the part's units."""
    build = bundle / "build"
    build.mkdir(exist_ok=True)

    def one(unit: dict):
        so = build / (pathlib.Path(unit["file"]).stem + ".so")
        p = subprocess.run(["nvcc", *NVCC_FLAGS, str(bundle / unit["file"]), "-o", str(so)],
                           capture_output=True, text=True)
        (build / (so.stem + ".log")).write_text(p.stdout + p.stderr)
        return unit["file"], (str(so) if p.returncode == 0 else None)

    units = [u for u in manifest["units"] if in_part(u, part)]
    # Largest first, so that no long unit starts last.
    units.sort(key=lambda u: -len(u["configs"]))
    with cf.ThreadPoolExecutor(max_workers=os.cpu_count() or 8) as pool:
        built = dict(pool.map(one, units))
    return {i: built[u["file"]] for i, u in enumerate(manifest["units"]) if u["file"] in built}


# ---- the worker: one case, in its own process -------------------------------------------------

def make_inputs(case, shape: dict):
    import torch
    torch.manual_seed(0)
    dev = "cuda"
    if case.name == "gemm":
        a = torch.randn(shape["M"], shape["K"], device=dev, dtype=torch.float16)
        b = torch.randn(shape["K"], shape["N"], device=dev, dtype=torch.float16)
        c = torch.empty(shape["M"], shape["N"], device=dev, dtype=torch.float16)
        return [a, b, c], c
    B, S, H = shape["batch"], shape["seq_len"], shape["heads"]
    q, k, v = (torch.randn(B, S, H, 128, device=dev, dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    return [q, k, v, o], o


def reference(case, tensors):
    import torch
    import torch.nn.functional as F
    if case.name == "gemm":
        return tensors[0].float() @ tensors[1].float()
    q, k, v = (t.permute(0, 2, 1, 3) for t in tensors[:3])  # [B, H, S, D]
    return F.scaled_dot_product_attention(q, k, v).permute(0, 2, 1, 3).float()


class Timer:
    """CUDA-event timing of one configuration, after the caller's untimed (checking) call:
    one timed call to estimate the cost, warm-up calls for a fast configuration, then timed
    calls (budget.timing_plan says how many), each after a 256 MB write that leaves none of the
    inputs in L2 (tests/gpu/timing.py's method); the events bracket the call alone. The median
    of the timed calls."""

    def __init__(self):
        import timing
        import torch
        self.torch, self.timing = torch, timing
        self.flush = torch.empty(timing.L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")

    def time_calls(self, fn, n: int) -> list:
        torch = self.torch
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        for start, end in zip(starts, ends):
            self.flush.zero_()
            start.record()
            fn()
            end.record()
        self.timing.wait(timeout_s=60.0 * n)
        return [a.elapsed_time(b) for a, b in zip(starts, ends)]

    def measure(self, fn) -> dict:
        first = self.time_calls(fn, 1)
        warmup, more, reuse = budget.timing_plan(first[0])
        for _ in range(warmup):
            fn()
        times = (first if reuse else []) + (self.time_calls(fn, more) if more else [])
        return {"ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
                "reps": len(times)}


def worker(bundle: pathlib.Path, case_name: str, part: int | None, progress: pathlib.Path,
           deadline: float) -> None:
    """Measures the case's configurations of the part at every shape, skipping what the
    progress log already holds (measured, failed, or crashed the last worker)."""
    import ctypes
    import torch
    import abi
    import timing

    manifest = json.loads((bundle / "manifest.json").read_text())
    libs = json.loads((bundle / "build" / "libs.json").read_text())
    case = cases_mod.case_named(case_name)
    entry_case = next(c for c in manifest["cases"] if c["name"] == case_name)
    checked = set(entry_case.get("checked", [0]))
    configs = [c for c in manifest["configs"] if c["case"] == case_name and in_part(c, part)]
    timer = Timer()
    loaded = {}
    records = [r for r in read_progress(progress) if r["case"] == case_name]
    done = {(r["shape"], r["config"]) for r in records if r["status"] != "started"}
    # A configuration that failed (a check, a call, or crashed the worker) is not timed again.
    broken = {r["config"] for r in records if r["status"] in ("error", "wrong", "crashed")}

    def entry(config):
        so = libs.get(str(config["unit"]))
        if so is None:
            return None
        if so not in loaded:
            loaded[so] = ctypes.CDLL(so, mode=ctypes.RTLD_LOCAL)
        fn = getattr(loaded[so], config["entry"])
        fn.restype = ctypes.c_int
        fn.argtypes = ([ctypes.POINTER(abi.TensorView)] * len(case.tensors)
                       + [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t])
        return fn

    with progress.open("a") as log:
        def emit(record):
            log.write(json.dumps(record) + "\n")
            log.flush()

        shapes = [r["shape"] for r in entry_case["rankings"]]   # as planned
        for s in shape_order(case.flops, shapes, sorted(checked)):
            todo = [c for c in configs if (s, c["index"]) not in done]
            if not todo:
                continue
            shape = shapes[s]
            tensors, out = make_inputs(case, shape)
            ref = reference(case, tensors) if s in checked else None
            views = [abi.TensorView.of(t) for t in tensors]
            refs = [ctypes.byref(v) for v in views]
            error = ctypes.create_string_buffer(abi.ERROR_BUFFER_SIZE)
            for config in todo:
                key = {"case": case_name, "shape": s, "config": config["index"]}
                if config["index"] in broken:
                    emit({**key, "status": "skipped", "why": "failed at an earlier shape"})
                    continue
                if time.time() > deadline:
                    emit({**key, "status": "skipped", "why": "time budget spent"})
                    continue
                fn = entry(config)
                if fn is None:
                    emit({**key, "status": "error", "why": "did not compile"})
                    broken.add(config["index"])
                    continue
                emit({**key, "status": "started"})
                call = lambda: fn(*refs, None, error, abi.ERROR_BUFFER_SIZE)  # noqa: E731
                record = dict(key)
                if ref is not None:
                    out.fill_(float("nan"))
                code = call()
                timing.wait(timeout_s=60)
                if code != abi.TLC_OK:
                    emit({**key, "status": "error", "why": error.value.decode()})
                    broken.add(config["index"])
                    continue
                if ref is not None:
                    rel = ((out.float() - ref).norm() / ref.norm()).item()
                    record["rel_err"] = rel
                    if not rel < 2e-2:
                        emit({**record, "status": "wrong", "why": f"relative error {rel:.3g}"})
                        broken.add(config["index"])
                        continue
                t = timer.measure(call)
                emit({**record, "status": "ok", **t, "tflops": case.flops(shape) / t["ms"] / 1e9})
            del tensors, out, ref, views, refs
            torch.cuda.empty_cache()


# ---- the parent -------------------------------------------------------------------------------

def read_progress(path: pathlib.Path) -> list:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def measure_case(bundle: pathlib.Path, case_name: str, part: int | None, progress: pathlib.Path,
                 deadline: float) -> None:
    """Runs workers until the case is done; a configuration that kills one is marked crashed
    (the next worker reads the log and skips it, and what was measured)."""
    crashed = set()
    retried = False
    while True:
        cmd = [sys.executable, __file__, str(bundle), "--worker", case_name, "--progress", str(progress),
               "--deadline", str(deadline)]
        if part is not None:
            cmd += ["--worker-part", str(part)]
        p = subprocess.run(cmd)
        if p.returncode == 0:
            return
        records = [r for r in read_progress(progress) if r["case"] == case_name]
        last = records[-1] if records else None
        if not last or last["status"] != "started" or (last["shape"], last["config"]) in crashed:
            if retried or time.time() > deadline:
                print(f"worker for {case_name} failed (exit {p.returncode}) outside a measurement; giving up")
                return
            print(f"worker for {case_name} failed (exit {p.returncode}) outside a measurement; once more")
            retried = True
            continue
        crashed.add((last["shape"], last["config"]))
        with progress.open("a") as log:
            log.write(json.dumps({**last, "status": "crashed",
                                  "why": f"the worker died (exit {p.returncode})"}) + "\n")


def device_info() -> dict:
    import torch
    info = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip()
    info["nvcc"] = nvcc.splitlines()[-1] if nvcc else "unknown"
    return info


def compile_errors(bundle: pathlib.Path, manifest: dict, libs: dict, limit: int = 200_000) -> str:
    """nvcc's output for the units that failed, for $OUT (the bundle's build/ does not come back)."""
    text = ""
    for i, so in sorted(libs.items()):
        if so is None:
            log = bundle / "build" / (pathlib.Path(manifest["units"][i]["file"]).stem + ".log")
            text += f"==== {manifest['units'][i]['file']}\n" + (log.read_text() if log.exists() else "(no log)\n")
    return text[:limit]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle")
    ap.add_argument("--part", help="K/N: compile and time only part K of the bundle's N (plan.py --parts)")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-recommend-out"))
    ap.add_argument("--budget-s", type=float, default=float(os.environ.get("TLC_GPU_BUDGET_S", 540)))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-part", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    bundle = pathlib.Path(args.bundle).resolve()
    if args.worker:
        worker(bundle, args.worker, args.worker_part, pathlib.Path(args.progress), args.deadline)
        return

    start = time.time()
    deadline = start + args.budget_s
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((bundle / "manifest.json").read_text())
    part = parse_part(args.part, manifest)
    label = part_label(part, manifest)
    if part is not None:
        e = budget.estimate_part(manifest, part)
        print(f"part {args.part}: " + ", ".join(f"{v} {k}" for k, v in e["configs"].items())
              + f" configurations in {e['units']} units; plan.py estimated ~{e['total_s']:.0f} s", flush=True)
    libs = compile_units(bundle, manifest, part)
    (bundle / "build" / "libs.json").write_text(json.dumps({str(k): v for k, v in libs.items()}))
    compile_s = time.time() - start
    print(f"compiled {sum(1 for v in libs.values() if v)}/{len(libs)} translation units in {compile_s:.0f} s",
          flush=True)
    errors = compile_errors(bundle, manifest, libs)
    if errors:
        (out / f"compile-errors{label}.log").write_text(errors)

    progress = out / f"recommend-progress{label}.jsonl"
    progress.unlink(missing_ok=True)
    results = {**device_info(), "bundle_git": manifest.get("git"), "bundle_created": manifest.get("created"),
               "compile_seconds": compile_s,
               "part": None if part is None else [part + 1, manifest.get("parts", 1)],
               "configs": [c["index"] for c in manifest["configs"] if in_part(c, part)]}
    # The smaller cases first: a spent budget then costs the largest one's last shapes only.
    def size(case):
        return len(case["rankings"]) * sum(1 for i in case["configs"] if in_part(manifest["configs"][i], part))
    order = sorted(manifest["cases"], key=size)
    for case in order:
        case_start = time.time()
        measure_case(bundle, case["name"], part, progress, deadline)
        print(f"{case['name']}: measured in {time.time() - case_start:.0f} s", flush=True)
        results["measurements"] = [r for r in read_progress(progress) if r["status"] != "started"]
        results["seconds"] = time.time() - start
        (out / f"recommend-results{label}.json").write_text(json.dumps(results, indent=1))
    report = analyze.report(manifest, [results])
    (out / f"recommend-validation{label}.md").write_text(report.markdown)
    (out / f"recommend-validation{label}.json").write_text(json.dumps(report.summary, indent=1))
    print(report.markdown)
    print(f"done in {time.time() - start:.0f} s (compile {compile_s:.0f} s)")


if __name__ == "__main__":
    main()
