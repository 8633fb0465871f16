#!/usr/bin/env python3
"""The fuzzer's driver (README.md in this directory).

  fuzz.py replay --tlc TLC DIR...     replay fuzzer inputs (regressions) through `tlc`
  fuzz.py build --source S --build B [--sanitizers LIST]
                                      configure and build tlc-fuzz with clang-14 (in B)
  fuzz.py run --source S --build B --work W --seconds N [--seed N]
                                      build if needed, replay the regressions through
                                      tlc-fuzz, then fuzz for N seconds from the seed corpus

An input is one byte of flags followed by the .tl source (FuzzTarget.cpp says what each bit
means). `replay` runs the same mode with the `tlc` binary: no signal, no hang, exit 0, 1 or
2, and every exit 1 prints a located error (`file:line:col: error:`).
`run` exits 77 (ctest's "skipped") when clang-14 or its libFuzzer runtime is missing.
"""
import argparse
import glob
import math
import os
import pathlib
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

ERROR_LINE = re.compile(r'^[^\n]*:\d+:\d+: error: ', re.M)
EMIT = ["cuda", "cuda", "cuda", "cuda", "header", "inferred", "ast"]


def limit_cpu(seconds):
    def apply():
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
    return apply


def kernel_name(source: bytes, k: int) -> str:
    """The k-th `kernel NAME` of the text, as FuzzTarget.cpp's kernelName picks it."""
    last = ""
    for m in re.finditer(rb'kernel ', source):
        name = re.match(rb'\s*([A-Za-z0-9_]*)', source[m.end():]).group(1)
        if not name:
            continue
        last = name.decode()
        if k == 0:
            break
        k -= 1
    return last


def command(tlc: str, flags: int, source: bytes, path: str):
    """The `tlc` command line of an input's mode (FuzzTarget.cpp)."""
    target = "sm_80" if flags & 8 else "sm_90a"
    if flags & 7 == 7:
        cmd = [tlc, "recommend", path, "--target", target, "--top", "3", "-o", os.devnull]
        name = kernel_name(source, flags >> 5)
        if name:
            cmd += ["--kernel", name]
        if flags & 32:
            cmd += ["--format", "json"]
        for bit, flag in ((64, "--explain"), (128, "--only-auto"), (16, "--show-illegal")):
            if flags & bit:
                cmd.append(flag)
        return cmd
    cmd = [tlc, path, "--target", target, "--emit=" + EMIT[flags & 7], "-o", os.devnull]
    if flags & 16:
        cmd.append("--verbose")
    return cmd


def replay(args):
    files = sorted(f for d in args.dirs for f in glob.glob(os.path.join(d, "*"))
                   if os.path.isfile(f) and not f.endswith(".md"))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            data = pathlib.Path(f).read_bytes()
            if not data:
                continue
            path = os.path.join(tmp, "input.tl")
            pathlib.Path(path).write_bytes(data[1:])
            cmd = command(args.tlc, data[0], data[1:], path)
            try:
                p = subprocess.run(cmd, capture_output=True, timeout=300,
                                   preexec_fn=limit_cpu(args.cpu_seconds))
            except subprocess.TimeoutExpired:
                failures.append(f"{f}: hang (over 300 s wall clock)")
                continue
            err = p.stderr.decode("utf-8", "replace")
            if p.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
                failures.append(f"{f}: hang (over {args.cpu_seconds} s of CPU time)")
            elif p.returncode < 0:
                failures.append(f"{f}: killed by signal {-p.returncode}")
            elif p.returncode not in (0, 1, 2):
                failures.append(f"{f}: exit {p.returncode}: {err[-300:]}")
            elif p.returncode == 1 and not ERROR_LINE.search(err):
                failures.append(f"{f}: exit 1 without a located error: {err[-300:]!r}")
    for line in failures:
        print("FAIL " + line)
    print(f"replayed {len(files)} inputs through {args.tlc}: {len(failures)} failed")
    return 1 if failures else 0


def find_clang():
    clang, clangxx = shutil.which("clang-14"), shutil.which("clang++-14")
    if not clang or not clangxx:
        return None
    # The libFuzzer runtime (Debian: libclang-rt-14-dev).
    out = subprocess.run([clangxx, "-print-file-name=libclang_rt.fuzzer-x86_64.a"],
                         capture_output=True, text=True).stdout.strip()
    lib = glob.glob("/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a")
    if not (os.path.isfile(out) or lib):
        return None
    return clang, clangxx


def build(args):
    tools = find_clang()
    if not tools:
        print("clang-14 with libFuzzer (packages clang-14, libclang-rt-14-dev) not found: skipped")
        return 77
    clang, clangxx = tools
    # -O1 with assertions on: asserts are findings too. Line tables only: enough for the file:line
    # of every frame of a finding's stack, and the build (CI builds it from nothing) is faster
    # than with full debug information. Configured every time (cheap), so that a build
    # directory switches sanitizers when asked to.
    subprocess.run(["cmake", "-S", args.source, "-B", args.build, "-G", "Ninja",
                    "-DTLC_FUZZ=ON", "-DCMAKE_BUILD_TYPE=FuzzCheck",
                    "-DTLC_FUZZ_SANITIZERS=" + args.sanitizers,
                    "-DCMAKE_C_FLAGS_FUZZCHECK=-O1 -gline-tables-only",
                    "-DCMAKE_CXX_FLAGS_FUZZCHECK=-O1 -gline-tables-only",
                    "-DCMAKE_C_COMPILER=" + clang, "-DCMAKE_CXX_COMPILER=" + clangxx],
                   check=True, stdout=subprocess.DEVNULL)
    jobs = str(args.jobs or os.cpu_count() or 2)
    subprocess.run(["cmake", "--build", args.build, "--target", "tlc-fuzz", "-j", jobs], check=True)
    return 0


# Seeds ranked by `tlc recommend` (flags 7) as well as compiled: with `all`, every seed file;
# with `lit`, only tests/lit/recommend's. Ranking a sample under UBSan takes up to 10 s, and
# libFuzzer runs every seed once before it mutates anything: with all of them (over 500
# inputs, ~160 s of recommending on CI's loaded cores) a 60 s run never got past its seeds.
RECOMMEND_SEEDS = {"all": "**/*.tl", "lit": "tests/lit/recommend/*.tl"}


def seed_corpus(source: str, into: str, recommend: str = "all"):
    """Every .tl of samples/, tests/lit and tests/gpu/ops compiled to CUDA (flags 0), those
    RECOMMEND_SEEDS[recommend] names also ranked (flags 7), plus the committed inputs of
    tests/fuzz/corpus."""
    os.makedirs(into, exist_ok=True)
    n = 0
    ranked = {os.path.normpath(f) for f in
              glob.glob(os.path.join(source, RECOMMEND_SEEDS[recommend]), recursive=True)}
    patterns = ["samples/*.tl", "tests/lit/**/*.tl", "tests/gpu/ops/*.tl"]
    for pattern in patterns:
        for f in sorted(glob.glob(os.path.join(source, pattern), recursive=True)):
            text = pathlib.Path(f).read_bytes()
            for flags in (0, 7) if os.path.normpath(f) in ranked else (0,):
                pathlib.Path(into, f"seed{n:04d}").write_bytes(bytes([flags]) + text)
                n += 1
    for f in sorted(glob.glob(os.path.join(source, "tests/fuzz/corpus/*"))):
        shutil.copy(f, os.path.join(into, "committed-" + os.path.basename(f)))
        n += 1
    return n


def run(args):
    status = build(args)
    if status:
        return status
    fuzzer = os.path.join(args.build, "bin", "tlc-fuzz")
    shutil.rmtree(args.work, ignore_errors=True)
    seeds, corpus, artifacts = (os.path.join(args.work, d) for d in ("seeds", "corpus", "artifacts"))
    for d in (corpus, artifacts):
        os.makedirs(d)
    count = seed_corpus(args.source, seeds, args.recommend_seeds)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    # An input is a finding only past the hang timeout: libFuzzer's slow-unit report (10 s by
    # default) fired on `tlc recommend` of a GEMM (1 s here) under UBSan on a loaded CI machine.
    common = [f"-timeout={args.timeout}", f"-report_slow_units={args.timeout}",
              f"-rss_limit_mb={args.rss_mb}", "-close_fd_mask=3",
              "-artifact_prefix=" + artifacts + "/", "-max_len=65536"]
    regressions = sorted(glob.glob(os.path.join(args.source, "tests/fuzz/regressions/*")))
    regressions = [f for f in regressions if not f.endswith(".md")]
    if regressions:
        print(f"replaying {len(regressions)} regression inputs through tlc-fuzz")
        p = subprocess.run([fuzzer] + common + regressions, env=env)
        if p.returncode != 0:
            print("a regression input fails again")
            return 1
    print(f"fuzzing for {args.seconds} s from {count} seed inputs, seed {args.seed}")
    p = subprocess.run([fuzzer, corpus, seeds, f"-max_total_time={args.seconds}",
                        f"-seed={args.seed}", "-print_final_stats=1"] + common, env=env)
    found = sorted(os.listdir(artifacts))
    if p.returncode != 0 or found:
        print("finding(s) in " + artifacts + ": " + ", ".join(found))
        print("replay one with: " + fuzzer + " " + os.path.join(artifacts, found[0] if found else "FILE"))
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay")
    r.add_argument("--tlc", required=True)
    r.add_argument("--cpu-seconds", type=int, default=60)
    r.add_argument("dirs", nargs="+")
    for name in ("build", "run"):
        b = sub.add_parser(name)
        b.add_argument("--source", required=True)
        b.add_argument("--build", required=True)
        b.add_argument("--jobs", type=int, default=0)
        b.add_argument("--sanitizers", default="address,undefined",
                       help="clang -fsanitize= list; 'undefined' alone runs several times faster")
        if name == "run":
            b.add_argument("--work", required=True)
            b.add_argument("--seconds", type=int, default=60)
            b.add_argument("--seed", type=int, default=20261123)
            b.add_argument("--recommend-seeds", choices=sorted(RECOMMEND_SEEDS), default="all",
                           help="which seed files are also ranked by `tlc recommend`")
            b.add_argument("--timeout", type=int, default=30, help="seconds per input: a hang")
            b.add_argument("--rss-mb", type=int, default=4096)
    args = ap.parse_args()
    return {"replay": replay, "build": build, "run": run}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
