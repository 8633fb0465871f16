"""Builds the bundle's generated .cu files into shared libraries with nvcc, in parallel.

    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -lineinfo --resource-usage
         -I BUNDLE/stdlib -I BUNDLE/runtime --shared -Xcompiler -fPIC X.cu -o libX.so

The -gencode spelling (not -arch=sm_90a) because HOPPER.md saw the shorthand add a plain sm_90
pass that rejects wgmma. --resource-usage puts registers, shared memory and spills of every
kernel into the build log. A library is rebuilt only when its source is newer or the command
changed (a stamp file beside it), so bench/bench.py reuses what tests/gpu/run.py built.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass


def gencode(target: str) -> str:
    """sm_90a -> -gencode=arch=compute_90a,code=sm_90a."""
    match = re.fullmatch(r"sm_(\d+a?)", target)
    if not match:
        raise ValueError(f"not a CUDA target: {target!r}")
    return f"-gencode=arch=compute_{match.group(1)},code=sm_{match.group(1)}"


@dataclass(frozen=True)
class BuildJob:
    name: str
    cu: str
    so: str
    command: tuple

    @property
    def stamp(self) -> str:
        return self.so + ".cmd"

    def up_to_date(self) -> bool:
        try:
            with open(self.stamp) as f:
                same_command = f.read() == shlex.join(self.command)
            return same_command and os.path.getmtime(self.so) >= os.path.getmtime(self.cu)
        except OSError:
            return False


@dataclass
class BuildResult:
    name: str
    ok: bool
    seconds: float
    reused: bool
    log: str

    def as_dict(self) -> dict:
        return {"name": self.name, "ok": self.ok, "seconds": round(self.seconds, 1),
                "reused": self.reused}


def make_job(name: str, bundle_dir: str, build_dir: str, target: str, nvcc: str = "nvcc",
             extra_flags: tuple = (), headers_dir: str | None = None) -> BuildJob:
    """BUNDLE_DIR/NAME.cu into BUILD_DIR/libNAME.so, with the stdlib/ and runtime/ of
    `headers_dir` (default: the bundle's)."""
    cu = os.path.join(bundle_dir, f"{name}.cu")
    so = os.path.join(build_dir, f"lib{name}.so")
    headers = headers_dir or bundle_dir
    command = (nvcc, "-O3", "-std=c++17", gencode(target), "-lineinfo", "--resource-usage",
               "-I", os.path.join(headers, "stdlib"), "-I", os.path.join(headers, "runtime"),
               "--shared", "-Xcompiler", "-fPIC", *extra_flags, cu, "-o", so)
    return BuildJob(name, cu, so, command)


def run_job(job: BuildJob, timeout_s: float) -> BuildResult:
    start = time.monotonic()
    if not os.path.exists(job.cu):
        return BuildResult(job.name, False, 0.0, False,
                           f"{job.cu} does not exist: tlc did not generate it (its error is in "
                           f"{job.name}.tlc.log in the bundle)")
    if job.up_to_date():
        return BuildResult(job.name, True, 0.0, True, "up to date")
    os.makedirs(os.path.dirname(job.so), exist_ok=True)
    try:
        proc = subprocess.run(job.command, capture_output=True, text=True, timeout=timeout_s)
        ok, log = proc.returncode == 0, proc.stdout + proc.stderr
        if not ok:
            log += f"\nnvcc exited with {proc.returncode}"
    except subprocess.TimeoutExpired:
        ok, log = False, f"nvcc did not finish within {timeout_s:.0f} s"
    except OSError as e:
        ok, log = False, f"could not run nvcc: {e}"
    if ok:
        with open(job.stamp, "w") as f:
            f.write(shlex.join(job.command))
    return BuildResult(job.name, ok, time.monotonic() - start, False, log)


def run_jobs(jobs: list, workers: int, timeout_s: float, log_path: str | None = None) -> dict:
    """Builds all jobs (nvcc itself is single-threaded, so one per core); returns name ->
    BuildResult and writes every command and its output to `log_path`."""
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = list(pool.map(lambda j: run_job(j, timeout_s), jobs))
    if log_path:
        with open(log_path, "a") as f:
            for job, res in zip(jobs, results):
                status = "reused" if res.reused else ("ok" if res.ok else "FAILED")
                f.write(f"==== {job.name}: {status} ({res.seconds:.1f} s)\n")
                f.write(f"$ {shlex.join(job.command)}\n{res.log}\n")
    return {r.name: r for r in results}
