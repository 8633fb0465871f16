#!/usr/bin/env python3
"""Times every candidate of a validation bundle (plan.py) on the GPU and scores the model.

    python3 tests/gpu-recommend/run.py gpu-recommend [--out $OUT] [--budget-s 540]

1. Compiles the bundle's translation units with nvcc, all at once (one per CPU core).
2. For each case and shape, calls every configuration through its C entry point: the first
   shape of each case checks the output against PyTorch (NaN-filled outputs, relative error),
   then every shape is timed with CUDA events (tests/gpu/timing.py: L2 flushed before each
   call, median of 3-20 calls).
3. Writes $OUT/recommend-results.json after every shape, then scores the model
   (analyze.py) into $OUT/recommend-validation.md, which it also prints.

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
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "gpu"))
import analyze  # noqa: E402
import cases as cases_mod  # noqa: E402

NVCC_FLAGS = ["-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "--shared",
              "-Xcompiler", "-fPIC"]


def compile_units(bundle: pathlib.Path, manifest: dict) -> dict:
    """unit index -> path of its shared library, or None (nvcc's output is in build/<unit>.log)."""
    build = bundle / "build"
    build.mkdir(exist_ok=True)

    def one(unit: dict):
        so = build / (pathlib.Path(unit["file"]).stem + ".so")
        p = subprocess.run(["nvcc", *NVCC_FLAGS, str(bundle / unit["file"]), "-o", str(so)],
                           capture_output=True, text=True)
        (build / (so.stem + ".log")).write_text(p.stdout + p.stderr)
        return unit["file"], (str(so) if p.returncode == 0 else None)

    with cf.ThreadPoolExecutor(max_workers=os.cpu_count() or 8) as pool:
        built = dict(pool.map(one, manifest["units"]))
    return {i: built[u["file"]] for i, u in enumerate(manifest["units"])}


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


def worker(bundle: pathlib.Path, case_name: str, skip: set, progress: pathlib.Path,
           deadline: float) -> None:
    import ctypes
    import torch
    import abi
    import timing

    manifest = json.loads((bundle / "manifest.json").read_text())
    libs = json.loads((bundle / "build" / "libs.json").read_text())
    case = cases_mod.case_named(case_name)
    configs = [c for c in manifest["configs"] if c["case"] == case_name]
    timer = timing.Timer(flush_l2=True)
    loaded = {}
    # A configuration that failed its check (at the first shape) is not timed at the others.
    broken = {r["config"] for r in read_progress(progress)
              if r["case"] == case_name and r["status"] in ("error", "wrong", "crashed")}

    def entry(config):
        so = libs[str(config["unit"])]
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

        for s, shape in enumerate(case.shapes):
            tensors, out = make_inputs(case, shape)
            ref = reference(case, tensors) if s == 0 else None
            views = [abi.TensorView.of(t) for t in tensors]
            refs = [ctypes.byref(v) for v in views]
            error = ctypes.create_string_buffer(abi.ERROR_BUFFER_SIZE)
            for config in configs:
                key = {"case": case_name, "shape": s, "config": config["index"]}
                if (s, config["index"]) in skip:
                    continue
                if config["index"] in broken:
                    emit({**key, "status": "skipped", "why": "failed at an earlier shape"})
                    continue
                if time.time() > deadline:
                    emit({**key, "status": "skipped", "why": "time budget spent"})
                    continue
                fn = entry(config)
                if fn is None:
                    emit({**key, "status": "error", "why": "did not compile"})
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
                    rel = ((out.float() - ref).norm() / ref.norm()).item()
                    record["rel_err"] = rel
                    if not rel < 2e-2:
                        emit({**record, "status": "wrong", "why": f"relative error {rel:.3g}"})
                        broken.add(config["index"])
                        continue
                t = timer.measure(call, warmup_ms=5, rep_ms=30, min_reps=3, max_reps=20)
                emit({**record, "status": "ok", "ms": t.median_ms, "min_ms": t.min_ms,
                      "reps": t.reps, "tflops": case.flops(shape) / t.median_ms / 1e9})
            del tensors, out, ref
            torch.cuda.empty_cache()


# ---- the parent -------------------------------------------------------------------------------

def read_progress(path: pathlib.Path) -> list:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def measure_case(bundle: pathlib.Path, case_name: str, progress: pathlib.Path, deadline: float) -> None:
    """Runs workers until the case is done; a configuration that kills one is marked crashed."""
    crashed = set()
    while True:
        done = {(r["shape"], r["config"]) for r in read_progress(progress)
                if r["case"] == case_name and r["status"] != "started"}
        p = subprocess.run([sys.executable, __file__, str(bundle), "--worker", case_name,
                            "--skip", json.dumps(sorted(done | crashed)), "--progress", str(progress),
                            "--deadline", str(deadline)])
        if p.returncode == 0:
            return
        records = [r for r in read_progress(progress) if r["case"] == case_name]
        last = records[-1] if records else None
        if not last or last["status"] != "started" or (last["shape"], last["config"]) in crashed:
            print(f"worker for {case_name} failed (exit {p.returncode}) outside a measurement; giving up")
            return
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-recommend-out"))
    ap.add_argument("--budget-s", type=float, default=float(os.environ.get("TLC_GPU_BUDGET_S", 540)))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--skip", default="[]", help=argparse.SUPPRESS)
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    bundle = pathlib.Path(args.bundle).resolve()
    if args.worker:
        skip = {tuple(x) for x in json.loads(args.skip)}
        worker(bundle, args.worker, skip, pathlib.Path(args.progress), args.deadline)
        return

    start = time.time()
    deadline = start + args.budget_s
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((bundle / "manifest.json").read_text())
    libs = compile_units(bundle, manifest)
    (bundle / "build" / "libs.json").write_text(json.dumps({str(k): v for k, v in libs.items()}))
    compile_s = time.time() - start
    print(f"compiled {sum(1 for v in libs.values() if v)}/{len(libs)} translation units in {compile_s:.0f} s",
          flush=True)

    progress = out / "recommend-progress.jsonl"
    progress.unlink(missing_ok=True)
    results = {**device_info(), "bundle_git": manifest.get("git"), "compile_seconds": compile_s}
    for case in manifest["cases"]:
        measure_case(bundle, case["name"], progress, deadline)
        results["measurements"] = [r for r in read_progress(progress) if r["status"] != "started"]
        results["seconds"] = time.time() - start
        (out / "recommend-results.json").write_text(json.dumps(results, indent=1))
    report = analyze.report(manifest, results)
    (out / "recommend-validation.md").write_text(report.markdown)
    (out / "recommend-validation.json").write_text(json.dumps(report.summary, indent=1))
    print(report.markdown)


if __name__ == "__main__":
    main()
