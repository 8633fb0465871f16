#!/usr/bin/env python3
"""GEMM configuration sweep: times tlc-generated GEMMs over a grid of tile knobs.

Here:   python3 bench/sweep_gemm.py generate --out gpu-sweep [--configs small|full]
There:  python3 bench/sweep_gemm.py run gpu-sweep --out $OUT

`generate` writes one .cu per configuration with build/bin/tlc (configurations tlc rejects,
e.g. over the shared-memory or register budget, are listed with tlc's message and skipped),
plus stdlib/ and runtime/. `run` builds them in parallel with nvcc, checks each against
torch.matmul on one shape, times it with CUDA events at each shape, and writes sweep.json and a
table. It is the measurement side of the recommender's validation as well as a tuning aid.
"""
import argparse
import concurrent.futures as cf
import itertools
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "gpu"))

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (1000, 1000, 1000)]


def configs(kind):
    grid = dict(block_M=[128, 256], block_N=[128, 256], block_K=[32, 64], stages=[3, 4],
                threads=[128, 256], policy=["square", "full_row"])
    if kind == "small":
        grid = dict(block_M=[128], block_N=[128, 256], block_K=[32, 64], stages=[3, 4],
                    threads=[128, 256], policy=["square"])
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        yield dict(zip(keys, values))


def name_of(cfg):
    return "g_" + "_".join(f"{k[6:] if k.startswith('block_') else k}{v}" for k, v in cfg.items())


def generate(args):
    out = pathlib.Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    shutil.copytree(ROOT / "stdlib", out / "stdlib")
    shutil.copytree(ROOT / "runtime", out / "runtime")
    made, rejected = [], []
    for cfg in configs(args.configs):
        name = name_of(cfg)
        cmd = [str(ROOT / "build/bin/tlc"), str(ROOT / "samples/gemm.tl"), "--target", "sm_90a",
               "-D", "dtype=f16", "-o", str(out / f"{name}.cu")]
        for k, v in cfg.items():
            cmd += ["-D", f"{k}={v}"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 0:
            made.append({"name": name, "config": cfg})
        else:
            rejected.append({"name": name, "config": cfg, "why": p.stderr.strip().splitlines()[0]})
    (out / "sweep.json").write_text(json.dumps({"made": made, "rejected": rejected}, indent=1))
    print(f"{len(made)} configurations generated, {len(rejected)} rejected by tlc")
    for r in rejected:
        print(f"  rejected {r['name']}: {r['why']}")


def run(args):
    import torch
    import abi
    import cases

    bundle = pathlib.Path(args.bundle)
    plan = json.loads((bundle / "sweep.json").read_text())
    build = bundle / "build"
    build.mkdir(exist_ok=True)

    def compile_one(item):
        so = build / f"lib{item['name']}.so"
        cmd = ["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", "-I", str(bundle / "stdlib"), "-I",
               str(bundle / "runtime"), "--shared", "-Xcompiler", "-fPIC",
               str(bundle / f"{item['name']}.cu"), "-o", str(so)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        return item, so if p.returncode == 0 else None, p.stderr[-400:]

    t0 = time.time()
    with cf.ThreadPoolExecutor(os.cpu_count() or 8) as pool:
        built = list(pool.map(compile_one, plan["made"]))
    print(f"built {sum(1 for _, so, _ in built if so)}/{len(built)} in {time.time() - t0:.0f} s")
    spec = cases.KERNELS["gemm"]
    results = []
    torch.manual_seed(0)
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        ref = (a.float() @ b.float())
        cublas = time_it(lambda: a @ b)
        results.append({"shape": [m, n, k], "impl": "cublas", "ms": cublas,
                        "tflops": 2 * m * n * k / cublas / 1e9})
        for item, so, err in built:
            if not so:
                continue
            entry = abi.load_entry(str(so), spec)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
            views = [abi.TensorView.of(t) for t in (a, b, c)]
            st = entry(views)
            torch.cuda.synchronize()
            if not st.ok:
                results.append({"shape": [m, n, k], "impl": item["name"], "error": repr(st)})
                continue
            rel = ((c.float() - ref).norm() / ref.norm()).item()
            call = entry.bind(views)
            ms = time_it(call)
            results.append({"shape": [m, n, k], "impl": item["name"], "config": item["config"],
                            "ms": ms, "tflops": 2 * m * n * k / ms / 1e9, "rel_err": rel})
        best = sorted((r for r in results if r["shape"] == [m, n, k] and "tflops" in r
                       and r["impl"] != "cublas"), key=lambda r: -r["tflops"])[:8]
        print(f"{m}x{n}x{k}: cublas {2 * m * n * k / cublas / 1e9:.1f} TFLOP/s; best of ours:")
        for r in best:
            print(f"  {r['tflops']:7.1f} TFLOP/s  rel {r['rel_err']:.1e}  {r['impl']}")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep-results.json").write_text(json.dumps(results, indent=1))


def time_it(fn, reps=20):
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--out", default="gpu-sweep")
    g.add_argument("--configs", default="small", choices=["small", "full"])
    r = sub.add_parser("run")
    r.add_argument("bundle")
    r.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    args = ap.parse_args()
    generate(args) if args.cmd == "generate" else run(args)


if __name__ == "__main__":
    main()
