#!/usr/bin/env python3
"""GPU check of the PyTorch extension tlc writes (`tlc --emit=torch`, issue 14 item 4).

    python3 tests/gpu/torch_ext_check.py BUNDLE_OR_DIR [--results results.json] [--target sm_90a]

BUNDLE_OR_DIR is a bundle made with `tests/gpu/make_bundle.sh --torch` (its torch/ directory
holds torch_ext.cu and ctypes_ext.cu, its stdlib/ and runtime/ the headers), or a directory
holding those two files itself (headers from the bundle or this repository). The extension
has the ops of three kernels, gemm (f16), softmax (f16) and causal flash attention (f16,
dim 128), in the torch library `torch_check`.

It builds the extension with torch.utils.cpp_extension.load (or, without ninja, with nvcc
directly into a .so loaded by torch.ops.load_library), builds the same kernels' C entries for
the ctypes path of tests/gpu, and checks on random inputs of odd shapes, for each kernel:

  out       torch.ops.torch_check.KERNEL(inputs..., outputs) on NaN-poisoned outputs,
            against the float64 reference of tests/gpu/problems.py (metrics.judge)
  alloc     KERNEL_alloc(inputs...) returns outputs of the right shape and dtype, equal to
            those of `out`
  ctypes    the C entry point on the same inputs (abi.py) gives the same bits
  strided   inputs that are column slices of wider tensors (row strides not the extent)
  stream    on a side stream, after work queued there that rewrites the inputs: the op must
            run after it, on that stream (the default stream would read the old inputs)
  graph     captured into a CUDA graph (both ops) and replayed on new inputs; the flash
            attention capture comes before any eager call, so its launcher raises the shared
            memory limit during capture
  errors    a wrong dtype, a CPU tensor and mismatched shapes raise RuntimeError with the
            launcher's message, and launch nothing

It prints one line per check and a summary, merges {"torch_ext": ...} into --results, and exits
1 when a check failed (2 when the extension could not be built or loaded).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build as nvcc_build  # noqa: E402
from abi import TensorView, load_entry  # noqa: E402
from cases import DEFAULT_TOLERANCE, TORCH_EXT_BUILDS, TORCH_EXT_LIBRARY, Build  # noqa: E402
from metrics import combine, compare, judge  # noqa: E402
from problems import configure_reference_precision, ordered_tensors, poison, problem_for  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBRARY = TORCH_EXT_LIBRARY


class Checks:
    def __init__(self):
        self.records = []

    def add(self, name: str, passed: bool, detail: str = "") -> bool:
        self.records.append({"name": name, "passed": bool(passed), "detail": detail})
        print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}", flush=True)
        return passed

    def run(self, name: str, fn) -> None:
        """fn() returns (passed, detail); an exception is a failure with its traceback's end."""
        try:
            passed, detail = fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported, none ends the run
            passed, detail = False, f"{type(e).__name__}: {e}"
            traceback.print_exc()
        self.add(name, passed, detail)

    @property
    def failed(self) -> int:
        return sum(not r["passed"] for r in self.records)


# ---- Building -----------------------------------------------------------------------------------

def _paths(kind: str, cuda: bool) -> list:
    """torch.utils.cpp_extension.include_paths/library_paths with CUDA, across the signature
    change (cuda=True up to 2.5, device_type="cuda" after)."""
    import torch.utils.cpp_extension as ext
    fn = getattr(ext, kind)
    try:
        return fn(device_type="cuda" if cuda else "cpu")
    except TypeError:
        return fn(cuda=cuda)


def build_extension(src: str, headers: str, target: str, work: str) -> str:
    """Builds and loads torch_ext.cu; returns how."""
    cu = os.path.join(src, "torch_ext.cu")
    includes = [os.path.join(headers, "stdlib"), os.path.join(headers, "runtime")]
    # An explicit -gencode: cpp_extension then adds no arch flags of its own (a plain sm_90
    # pass would reject wgmma, see build.py).
    flags = ["-O3", "-std=c++17", nvcc_build.gencode(target), "-lineinfo"]
    import torch.utils.cpp_extension as ext
    try:
        ext.verify_ninja_availability()
        have_ninja = True
    except RuntimeError:
        have_ninja = False
    if have_ninja:
        ext.load(name=LIBRARY, sources=[cu], extra_include_paths=includes, extra_cuda_cflags=flags,
                 build_directory=work, is_python_module=False, verbose=True)
        return "torch.utils.cpp_extension.load"
    # No ninja: what load() would run, by hand.
    so = os.path.join(work, f"{LIBRARY}.so")
    command = ["nvcc", *flags, "--shared", "-Xcompiler", "-fPIC", f"-DTORCH_EXTENSION_NAME={LIBRARY}",
               "-DTORCH_API_INCLUDE_EXTENSION_H",
               f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
               "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
               "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__",
               "--expt-relaxed-constexpr"]
    for d in includes:
        command += ["-I", d]
    for d in _paths("include_paths", True):
        command += ["-isystem", d]
    command += [cu, "-o", so]
    for d in _paths("library_paths", True):
        command += ["-L", d, f"-Xlinker=-rpath={d}"]
    command += ["-lc10", "-lc10_cuda", "-ltorch", "-ltorch_cpu", "-ltorch_cuda", "-lcudart"]
    print("$ " + " ".join(command), flush=True)
    proc = subprocess.run(command, capture_output=True, text=True)
    print(proc.stdout + proc.stderr, flush=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc exited with {proc.returncode}")
    torch.ops.load_library(so)
    return "nvcc + torch.ops.load_library (no ninja)"


def build_ctypes(src: str, headers: str, target: str, work: str) -> str:
    """The kernels' C entries (tlc_gemm, tlc_softmax, tlc_flash_attention) in one .so."""
    job = nvcc_build.make_job("ctypes_ext", src, work, target, headers_dir=headers)
    result = nvcc_build.run_job(job, timeout_s=600)
    if not result.ok:
        print(result.log, flush=True)
        raise RuntimeError("the ctypes library did not build")
    return job.so


# ---- Checks -------------------------------------------------------------------------------------

class Kernel:
    """One kernel of the extension: its ops and problem (inputs, outputs, reference)."""

    def __init__(self, build: Build, ctypes_so: str):
        self.build = build
        self.problem = problem_for(build)
        self.spec = self.problem.spec
        self.name = self.spec.kernel
        packet = getattr(torch.ops, LIBRARY)
        self.op = getattr(packet, self.name)
        self.alloc = getattr(packet, self.name + "_alloc")
        self.entry = load_entry(ctypes_so, self.spec)
        self.in_names = [p.name for p in self.spec.tensors if p.role == "in"]
        self.out_names = [p.name for p in self.spec.tensors if p.role == "out"]

    def inputs(self, shape: dict, seed: int) -> dict:
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)
        return self.problem.inputs(shape, gen)

    def call_out(self, inputs: dict, outputs: dict) -> None:
        self.op(*ordered_tensors(self.spec, inputs, outputs))

    def call_alloc(self, inputs: dict) -> dict:
        result = self.alloc(*(inputs[n] for n in self.in_names))
        result = result if isinstance(result, (tuple, list)) else (result,)
        return dict(zip(self.out_names, result))

    def judge(self, outputs: dict, inputs: dict, shape: dict):
        reference = self.problem.reference(inputs, shape, "float64")
        stats = combine(compare(outputs[n], ref) for n, ref in reference.items())
        return judge(stats, DEFAULT_TOLERANCE)


def _shape_text(shape: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in shape.items())


def check_shape(checks: Checks, k: Kernel, shape: dict, seed: int) -> None:
    tag = f"{k.build.name}[{_shape_text(shape)}]"
    inputs = k.inputs(shape, seed)
    outputs = k.problem.outputs(shape)

    def out():
        k.call_out(inputs, outputs)
        torch.cuda.synchronize()
        v = k.judge(outputs, inputs, shape)
        return v.passed, v.reason
    checks.run(f"{tag} out", out)

    def alloc():
        got = k.call_alloc(inputs)
        torch.cuda.synchronize()
        for n in k.out_names:
            if got[n].shape != outputs[n].shape or got[n].dtype != outputs[n].dtype:
                return False, f"{n}: {tuple(got[n].shape)} {got[n].dtype}, expected {tuple(outputs[n].shape)} {outputs[n].dtype}"
            if not torch.equal(got[n], outputs[n]):
                return False, f"{n} differs from the out op's result"
        return True, "same shapes, dtypes and bits as the out op"
    checks.run(f"{tag} alloc", alloc)

    def ctypes_path():
        theirs = k.problem.outputs(shape)
        views = [TensorView.of(t) for t in ordered_tensors(k.spec, inputs, theirs)]
        status = k.entry(views, [], torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        if not status.ok:
            return False, f"the C entry refused: {status.message}"
        same = all(torch.equal(theirs[n], outputs[n]) for n in k.out_names)
        return same, "same bits as the C entry" if same else "differs from the C entry's result"
    checks.run(f"{tag} ctypes", ctypes_path)

    def strided():
        # Each input as the leading columns of a tensor 8 elements wider (the innermost
        # dimension stays contiguous; the row stride is no longer the extent).
        wide = {}
        for n, t in inputs.items():
            padded = torch.zeros(*t.shape[:-1], t.shape[-1] + 8, dtype=t.dtype, device=t.device)
            padded[..., :t.shape[-1]] = t
            wide[n] = padded[..., :t.shape[-1]]
        got = k.call_alloc(wide)
        torch.cuda.synchronize()
        # Against the reference, not the contiguous result's bits: the row alignment may pick
        # the other instantiation of the kernel.
        v = k.judge(got, inputs, shape)
        return v.passed, "row strides of extent + 8: " + v.reason
    checks.run(f"{tag} strided", strided)


def check_stream(checks: Checks, k: Kernel, shape: dict) -> None:
    tag = f"{k.build.name}[{_shape_text(shape)}]"

    def side_stream():
        inputs, fresh = k.inputs(shape, 11), k.inputs(shape, 12)
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda._sleep(100_000_000)  # long enough that a launch elsewhere runs first
            for n in k.in_names:
                inputs[n].copy_(fresh[n])
            got = k.call_alloc(inputs)
        side.synchronize()
        v = k.judge(got, fresh, shape)
        return v.passed, ("ordered after the side stream's work: " if v.passed else "") + v.reason
    checks.run(f"{tag} stream", side_stream)


def check_graph(checks: Checks, k: Kernel, shape: dict, warm_up: bool) -> None:
    tag = f"{k.build.name}[{_shape_text(shape)}]"

    def graph():
        inputs = k.inputs(shape, 21)
        outputs = k.problem.outputs(shape)
        if warm_up:  # as torch.cuda.graphs recommends: a few eager calls on a side stream
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(2):
                    k.call_out(inputs, outputs)
                    k.call_alloc(inputs)
            torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            k.call_out(inputs, outputs)
            allocated = k.call_alloc(inputs)
        fresh = k.inputs(shape, 22)
        for n in k.in_names:
            inputs[n].copy_(fresh[n])
        for t in outputs.values():
            t.fill_(poison(t.dtype))
        g.replay()
        torch.cuda.synchronize()
        v_out, v_alloc = k.judge(outputs, fresh, shape), k.judge(allocated, fresh, shape)
        passed = v_out.passed and v_alloc.passed
        first = "" if warm_up else "captured before any eager call; "
        return passed, f"{first}replayed on new inputs: out {v_out.reason}; alloc {v_alloc.reason}"
    checks.run(f"{tag} graph", graph)


def check_errors(checks: Checks, k: Kernel, shape: dict) -> None:
    tag = f"{k.build.name}[{_shape_text(shape)}]"
    first = k.in_names[0]

    def expect_error(mutate, needle: str):
        def run():
            inputs = k.inputs(shape, 31)
            outputs = k.problem.outputs(shape)
            mutate(inputs)
            try:
                k.call_out(inputs, outputs)
            except RuntimeError as e:
                torch.cuda.synchronize()
                message = str(e).splitlines()[0]
                untouched = all(torch.isnan(t).all() for t in outputs.values())
                ok = needle in str(e) and untouched
                return ok, f"RuntimeError '{message}'" + ("" if untouched else "; but an output was written")
            return False, f"no error (expected one mentioning '{needle}')"
        return run

    checks.run(f"{tag} error dtype", expect_error(
        lambda i: i.__setitem__(first, i[first].float()), "must be f16, got f32"))
    checks.run(f"{tag} error device", expect_error(
        lambda i: i.__setitem__(first, i[first].cpu()), "must be a CUDA tensor"))

    def wrong_shape(i):
        # The first input one row short: an output's (or another input's) extent disagrees.
        i[first] = i[first][:-1].contiguous()
    checks.run(f"{tag} error shapes", expect_error(wrong_shape, "shape symbol"))


def merge_results(path: str, summary: dict) -> None:
    try:
        with open(path) as f:
            results = json.load(f)
    except (OSError, ValueError):
        results = {}
    results["torch_ext"] = summary
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=1)
    os.replace(path + ".tmp", path)


def locate(path: str):
    """(directory of torch_ext.cu and ctypes_ext.cu, directory with stdlib/ and runtime/)."""
    src = os.path.join(path, "torch") if os.path.exists(os.path.join(path, "torch", "torch_ext.cu")) else path
    for headers in (path, os.path.dirname(os.path.abspath(src)), ROOT):
        if os.path.isdir(os.path.join(headers, "runtime", "tlc")):
            return src, headers
    return src, ROOT


def bundle_target(path: str, default: str) -> str:
    try:
        with open(os.path.join(path, "manifest.json")) as f:
            return json.load(f).get("target", default)
    except (OSError, ValueError):
        return default


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", help="a bundle made with make_bundle.sh --torch, or a directory with torch_ext.cu")
    ap.add_argument("--results", help="results.json to add the summary to (as \"torch_ext\")")
    ap.add_argument("--target", help="nvcc target (default: the bundle's, else sm_90a)")
    ap.add_argument("--work", help="build directory (default: a temporary one)")
    args = ap.parse_args(argv)

    src, headers = locate(args.bundle)
    target = args.target or bundle_target(args.bundle, "sm_90a")
    work = args.work or tempfile.mkdtemp(prefix="tlc-torch-ext-")
    os.makedirs(work, exist_ok=True)
    summary = {"device": torch.cuda.get_device_name() if torch.cuda.is_available() else "none",
               "torch": torch.__version__, "cuda": torch.version.cuda, "target": target,
               "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "ninja": shutil.which("ninja") is not None}
    print(f"torch_ext_check: {summary['device']}, torch {summary['torch']} (CUDA {summary['cuda']}), "
          f"{target}, sources {src}", flush=True)
    start = time.monotonic()
    try:
        summary["built_with"] = build_extension(src, headers, target, work)
        ctypes_so = build_ctypes(src, headers, target, work)
        kernels = [(Kernel(build, ctypes_so), shapes) for build, shapes in TORCH_EXT_BUILDS]
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        summary.update(error=f"build or load failed: {type(e).__name__}: {e}", checks=0, failed=0)
        print(f"torch_ext_check: {summary['error']}", flush=True)
        if args.results:
            merge_results(args.results, summary)
        return 2
    summary["build_s"] = round(time.monotonic() - start, 1)
    configure_reference_precision()

    checks = Checks()
    # Flash attention is captured before its first eager call (see the module's docstring).
    for k, shapes in kernels:
        if k.build.family == "attention":
            check_graph(checks, k, shapes[1], warm_up=False)
    for k, shapes in kernels:
        for i, shape in enumerate(shapes):
            check_shape(checks, k, shape, seed=100 + i)
        check_stream(checks, k, shapes[0])
        check_graph(checks, k, shapes[-1], warm_up=True)
        check_errors(checks, k, shapes[1])

    summary.update(checks=len(checks.records), failed=checks.failed, records=checks.records,
                   seconds=round(time.monotonic() - start, 1))
    print(f"torch_ext_check: {len(checks.records)} checks, {len(checks.records) - checks.failed} passed, "
          f"{checks.failed} failed ({summary['device']}, {summary['built_with']}, {summary['seconds']} s)", flush=True)
    if args.results:
        merge_results(args.results, summary)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
