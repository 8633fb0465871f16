"""Unit tests of the runner and benchmark plumbing that needs no GPU: the error verdict, the
build commands, crash recovery of the worker pool, the plan, the report, the scripts' dry runs.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import build  # noqa: E402
import cases  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402
from metrics import ErrorStats, combine, judge  # noqa: E402


def stats(**kw):
    base = dict(numel=100, nan=0, inf=0, diff_sq=1e-6, ref_sq=1.0, max_abs=1e-3)
    base.update(kw)
    return ErrorStats(**base)


class Verdicts(unittest.TestCase):
    def test_relative_error_is_norm_wise(self):
        self.assertAlmostEqual(stats(diff_sq=4e-4, ref_sq=4.0).rel, 1e-2)

    def test_within_tolerance_passes(self):
        self.assertTrue(judge(stats(), 1e-2).passed)

    def test_over_tolerance_fails(self):
        v = judge(stats(diff_sq=1.0, ref_sq=1.0), 1e-2)
        self.assertFalse(v.passed)
        self.assertIn("1.000e+00 > 1e-02", v.reason)

    def test_an_unwritten_element_fails_however_small_the_error(self):
        v = judge(stats(nan=1, diff_sq=0.0), 1e-2)
        self.assertFalse(v.passed)
        self.assertIn("1 of 100 elements are NaN", v.reason)
        self.assertTrue(math.isnan(stats(nan=1).rel))

    def test_infinities_fail(self):
        self.assertFalse(judge(stats(inf=2), 1e-2).passed)

    def test_zero_reference(self):
        self.assertTrue(judge(stats(diff_sq=0.0, ref_sq=0.0), 1e-2).passed)
        self.assertFalse(judge(stats(diff_sq=1e-30, ref_sq=0.0), 1e-2).passed)

    def test_empty_output_is_not_a_pass(self):
        self.assertFalse(judge(stats(numel=0), 1e-2).passed)

    def test_combine_sums_chunks(self):
        c = combine([stats(diff_sq=1.0, ref_sq=2.0, max_abs=0.5),
                     stats(nan=3, diff_sq=3.0, ref_sq=2.0, max_abs=0.25)])
        self.assertEqual((c.numel, c.nan, c.diff_sq, c.ref_sq, c.max_abs),
                         (200, 3, 4.0, 4.0, 0.5))


class JsonSafety(unittest.TestCase):
    def test_non_finite_floats_become_null(self):
        from metrics import json_safe
        value = {"rel": math.nan, "list": [1.0, math.inf, {"x": -math.inf}], "ok": 2, "s": "n"}
        self.assertEqual(json.dumps(json_safe(value), allow_nan=False),
                         '{"rel": null, "list": [1.0, null, {"x": null}], "ok": 2, "s": "n"}')

    def test_a_saved_run_renders(self):
        run = json.loads(json.dumps(json_safe_run()))
        self.assertIn("| wrong |", report.markdown(run))

    def test_the_table_prints_a_failure_whose_error_is_null(self):
        # GPU run 173: an output against an all-zero reference (rel = inf, null in JSON) stopped
        # the table and the totals after it.
        import contextlib
        import io
        from metrics import json_safe
        rec = json_safe({"name": "log_softmax_2", "shape": {"M": 3, "N": 1}, "passed": False,
                         "reason": "relative error inf > 1e-02",
                         "error": stats(diff_sq=1e-14, ref_sq=0.0).as_dict()})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            run.print_table([json.loads(json.dumps(rec))])
        self.assertIn("log_softmax_2", out.getvalue())
        self.assertIn("FAIL", out.getvalue())


def json_safe_run():
    from metrics import json_safe
    return json_safe({"device": "d", "date": "2026-01-01", "items": [
        {"family": "softmax", "shape": {"M": 1, "N": 2}, "dtype": "f16", "causal": False,
         "impls": {"ours": {"status": "wrong", "rel_err": math.nan}, "torch": {"status": "ok",
                                                                              "gbps": 1.0}}}]})


class BuildCommands(unittest.TestCase):
    def test_gencode(self):
        self.assertEqual(build.gencode("sm_90a"), "-gencode=arch=compute_90a,code=sm_90a")
        self.assertEqual(build.gencode("sm_80"), "-gencode=arch=compute_80,code=sm_80")
        with self.assertRaises(ValueError):
            build.gencode("gfx90a")

    def test_command(self):
        job = build.make_job("gemm_f16", "b", "b/build", "sm_90a")
        self.assertEqual(job.so, "b/build/libgemm_f16.so")
        cmd = " ".join(job.command)
        for part in ("-O3", "-std=c++17", "-I b/stdlib", "-I b/runtime", "--shared",
                     "-Xcompiler -fPIC", "b/gemm_f16.cu -o b/build/libgemm_f16.so"):
            self.assertIn(part, cmd)

    def test_missing_source_is_a_failed_build(self):
        with tempfile.TemporaryDirectory() as d:
            results = build.run_jobs([build.make_job("x", d, d, "sm_90a")], 2, 10,
                                     os.path.join(d, "log"))
            self.assertFalse(results["x"].ok)
            self.assertIn("tlc did not generate it", results["x"].log)
            with open(os.path.join(d, "log")) as f:
                self.assertIn("==== x: FAILED", f.read())

    def test_up_to_date_needs_same_command_and_newer_library(self):
        with tempfile.TemporaryDirectory() as d:
            job = build.make_job("k", d, d, "sm_90a")
            for path in (job.cu, job.so):
                open(path, "w").close()
            self.assertFalse(job.up_to_date())           # no stamp
            with open(job.stamp, "w") as f:
                f.write("nvcc something else")
            self.assertFalse(job.up_to_date())           # other command
            with open(job.stamp, "w") as f:
                f.write(__import__("shlex").join(job.command))
            os.utime(job.cu, (time.time() + 10, time.time() + 10))
            self.assertFalse(job.up_to_date())           # source newer
            os.utime(job.so, (time.time() + 20, time.time() + 20))
            self.assertTrue(job.up_to_date())


FAKE_WORKER = textwrap.dedent("""
    import json, sys
    plan, events = json.load(open(sys.argv[1])), open(sys.argv[2], "a")
    def emit(**e):
        events.write(json.dumps(e) + "\\n"); events.flush()
    if plan["items"][0]["name"] == "no_start":
        sys.exit(1)
    emit(event="env", env={"device": "fake"})
    for item in plan["items"]:
        emit(event="start", name=item["name"])
        if item["name"].startswith("crash"):
            sys.exit(139)
        emit(event="result", record={"kind": "case", "name": item["name"], "build": "b",
                                     "shape": {}, "passed": True, "reason": "ok"})
""")


class WorkerPoolRecovery(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.worker = os.path.join(self.tmp.name, "fake_worker.py")
        with open(self.worker, "w") as f:
            f.write(FAKE_WORKER)

    def tearDown(self):
        self.tmp.cleanup()

    def pool(self):
        return run.WorkerPool(time.time() + 60, 10, self.tmp.name, (sys.executable, self.worker))

    @staticmethod
    def items(*names):
        return [{"kind": "case", "name": n, "build": {"name": "b"}, "shape": {}} for n in names]

    def test_a_crash_fails_one_item_and_a_fresh_worker_runs_the_rest(self):
        pool = self.pool()
        records = pool.run(self.items("a", "crash1", "b", "crash2", "c"))
        self.assertEqual({n for n, r in records.items() if r["passed"]}, {"a", "b", "c"})
        for n in ("crash1", "crash2"):
            self.assertFalse(records[n]["passed"])
            self.assertTrue(records[n]["fatal"])
            self.assertIn("exit code 139", records[n]["reason"])
        self.assertEqual(pool.env, {"device": "fake"})

    def test_a_worker_that_cannot_start_fails_everything_once(self):
        records = self.pool().run(self.items("no_start", "x"))
        self.assertEqual(len(records), 2)
        self.assertTrue(all("worker failed to start" in r["reason"] for r in records.values()))


class Plan(unittest.TestCase):
    def test_contract_check_first_on_the_smallest_shape(self):
        manifest = cases.parse_manifest(cases.make_manifest(
            *cases.default_tables(selftest=True), "sm_90a", True, ""))
        so = {b.name: f"/x/lib{b.name}.so" for b in manifest.builds}
        items = run.plan_items(manifest, manifest.cases, so, True)
        self.assertEqual(items[0]["kind"], "contract")
        self.assertEqual(items[0]["shape"], {"M": 1, "N": 4096, "K": 4096})
        self.assertEqual([i["kind"] for i in items].count("contract"), 2)
        self.assertEqual(len(items), len(manifest.cases) + 2)
        self.assertTrue(all(i["so"] == so[i["build"]["name"]] for i in items))
        no_contract = run.plan_items(manifest, manifest.cases, so, False)
        self.assertEqual({i["kind"] for i in no_contract}, {"case"})


def _impl(rate=None, status="ok", key="tflops"):
    return {"status": status, key: rate} if status == "ok" else {"status": status, "rel_err": 0.3}


class Report(unittest.TestCase):
    RUN = {"device": "NVIDIA H100 80GB HBM3", "date": "2026-11-23T10:00:00+00:00",
           "copy_TBps": 3.0, "method": "m", "items": [
               {"family": "gemm", "shape": {"M": 8192, "N": 8192, "K": 8192}, "dtype": "f16",
                "causal": False, "note": "", "impls": {"ours": _impl(520.0),
                                                       "cublas": _impl(650.0),
                                                       "triton": _impl(status="wrong")}},
               {"family": "attention", "dtype": "f16", "causal": True, "note": "batch 16",
                "shape": {"batch": 16, "heads": 64, "seq_len": 8192, "dim": 128},
                "impls": {"ours": _impl(status="skipped: time budget"),
                          "sdpa_flash": _impl(300.0)}},
               {"family": "softmax", "shape": {"M": 4096, "N": 4096}, "dtype": "f16",
                "causal": False, "note": "", "impls": {"ours": _impl(2400.0, key="gbps"),
                                                       "torch": _impl(2000.0, key="gbps")}}]}

    def test_tables(self):
        md = report.markdown(self.RUN)
        self.assertIn("## NVIDIA H100 80GB HBM3, 2026-11-23", md)
        self.assertIn("3.00 TB/s", md)
        self.assertIn("| 8192×8192×8192 | f16 | 520.0 | 650.0 | wrong (rel 3.0e-01) | 0.80 | — |",
                      md)
        # A row with a note is marked; the note follows the table under its mark.
        self.assertIn("| 16×64×8192×128 [1] | f16 | yes | skipped | 300.0 | n/a | n/a | — | — | — |",
                      md)
        self.assertIn("[1] batch 16.", md)
        # 2400 GB/s against torch's 2000 and the 3000 GB/s copy.
        self.assertIn("| 4096×4096 | f16 | 2400.0 | 2000.0 | 1.20 | 0.80 |", md)
        self.assertIn("batch 16.", md)
        self.assertNotIn("RMSNorm", md)
        self.assertNotIn("GEMM at 8192³", md)   # a run from before the GEMM ceiling

    def test_floor_table(self):
        mla = {"family": "mla", "dtype": "f16", "causal": False, "note": "",
               "shape": {"batch": 64, "heads": 128, "seqlen_kv": 1024, "kv_heads": 1, "dim": 512,
                         "pe_dim": 64},
               "floor_ms": 0.0311, "floor_bound": "memory",
               "impls": {"ours": {"status": "ok", "ms": 0.05, "floor_pct": 62.2},
                         "torch": {"status": "ok", "ms": 0.125, "floor_pct": 24.88}}}
        grouped = {**mla, "shape": {**mla["shape"], "kv_heads": 2},
                   "impls": {"ours": {"status": "wrong", "rel_err": 0.5},
                             "torch": {"status": "ok", "ms": 0.125, "floor_pct": 24.88}}}
        md = report.markdown({**self.RUN, "gemm_TFLOPs": 700.0, "items": [mla, grouped]})
        self.assertIn("cuBLAS f16 GEMM at 8192³: 700 TFLOP/s.", md)
        self.assertIn("### MLA decode", md)
        self.assertIn("| shape | dtype | ours | torch | ours/torch | floor | bound by | % of floor |",
                      md)
        # Times in µs; ours/torch = torch's time over ours (2.50: ours is faster).
        self.assertIn("| 64×128×1024×(512+64) | f16 | 50.0 | 125.0 | 2.50 | 31.1 | memory | 62.2% |",
                      md)
        self.assertIn("| 64×128×1024×(512+64), 2 KV heads | f16 | wrong (rel 5.0e-01) | 125.0 | — "
                      "| 31.1 | memory | — |", md)
        self.assertIn("% of floor = floor / our time", md)
        # Beside the floor, a copy of the item's own bytes: 24 µs of copying (min_bytes 72e6 B at 3000 GB/s) over our 50 µs.
        timed = {**mla, "min_bytes": 72e6, "copy_same_GBps": 3000.0}
        md = report.markdown({**self.RUN, "gemm_TFLOPs": 700.0, "items": [timed]})
        self.assertIn("| % of floor | % of a copy of the same bytes |", md)
        self.assertIn("| 31.1 | memory | 62.2% | 48.0% |", md)

    def test_copy_of_the_same_bytes(self):
        # A memory-bound row kernel: 2400 GB/s against the 3000 GB/s 2 GiB copy (0.80) and a
        # copy of its own bytes at 2000 GB/s (1.20); without that measurement a dash.
        softmax = {**self.RUN["items"][2], "copy_same_GBps": 2000.0}
        md = report.markdown({**self.RUN, "items": [softmax]})
        self.assertIn("| ours/copy | ours/copy of the same bytes |", md)
        self.assertIn("| 4096×4096 | f16 | 2400.0 | 2000.0 | 1.20 | 0.80 | 1.20 |", md)
        md = report.markdown(self.RUN)
        self.assertIn("| 4096×4096 | f16 | 2400.0 | 2000.0 | 1.20 | 0.80 | — |", md)


    def test_decode_table(self):
        # Split-KV decoding (both kernels as one operation) in GB/s beside the copy bandwidth.
        item = {"family": "flash_decoding", "dtype": "f16", "causal": False, "note": "",
                "shape": {"batch": 64, "heads": 64, "kv_heads": 8, "seqlen": 32768, "dim": 128},
                "impls": {"ours": _impl(2550.0, key="gbps"), "sdpa": _impl(1700.0, key="gbps"),
                          "torch": _impl(status="error: out of memory")}}
        md = report.markdown({**self.RUN, "items": [item]})
        self.assertIn("### Decode attention with split KV and GQA", md)
        self.assertIn("| shape | dtype | ours | SDPA (enable_gqa) | torch matmuls | "
                      "ours/SDPA (enable_gqa) | ours/torch matmuls | ours/copy |", md)
        self.assertIn("| 64×64×32768×128, 8 KV heads | f16 | 2550.0 | 1700.0 | error | 1.50 | — "
                      "| 0.85 |", md)


class RooflineFloor(unittest.TestCase):
    # MLA decode at batch 2, heads 4, seqlen_kv 8, kv_heads 2, dim 8, pe_dim 4, f16 (as
    # test_torch_cpu checks problems.py's counts): Q 64 + Q_pe 32 + KV 256 + K_pe 128 + O 64
    # elements of 2 bytes; 2·2·4·8·(8+4) + 2·2·4·8·8 FLOPs.
    BYTES, FLOPS = 2 * (64 + 32 + 256 + 128 + 64), 2 * 2 * 4 * 8 * 12 + 2 * 2 * 4 * 8 * 8

    def test_the_larger_of_bytes_over_bandwidth_and_flops_over_gemm_rate(self):
        import bench
        self.assertEqual((self.BYTES, self.FLOPS), (1088, 2560))
        # 1000 B/s and 2000 FLOP/s: 1.088 s of traffic, 1.28 s of arithmetic.
        floor = bench.roofline_floor(self.BYTES, self.FLOPS, copy_tbps=1e-9, gemm_tflops=2e-9)
        self.assertAlmostEqual(floor["floor_ms"], 1280.0)
        self.assertEqual(floor["floor_bound"], "compute")
        floor = bench.roofline_floor(self.BYTES, self.FLOPS, copy_tbps=1e-9, gemm_tflops=4e-9)
        self.assertAlmostEqual(floor["floor_ms"], 1088.0)
        self.assertEqual(floor["floor_bound"], "memory")


class BenchHelpers(unittest.TestCase):
    def test_device_slug(self):
        import bench
        self.assertEqual(bench.device_slug("NVIDIA H100 80GB HBM3"), "h100")
        self.assertEqual(bench.device_slug("NVIDIA H200"), "h200")
        self.assertEqual(bench.device_slug("Some GPU"), "some-gpu")

    def test_crashed_builds(self):
        import bench
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "results.json")
            with open(path, "w") as f:
                json.dump({"cases": [{"build": "a", "fatal": True}, {"build": "b"}],
                           "contract": [{"build": "c", "fatal": True}]}, f)
            self.assertEqual(bench.crashed_builds(path), {"a", "c"})
            self.assertEqual(bench.crashed_builds(os.path.join(d, "missing.json")), set())


class Scripts(unittest.TestCase):
    """make_bundle.sh --selftest, then the dry runs of run.py and bench.py on that bundle."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.bundle = os.path.join(cls.tmp.name, "bundle")
        subprocess.run(["bash", os.path.join(HERE, "make_bundle.sh"), "--selftest", "--out",
                        cls.bundle], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_bundle_is_self_contained(self):
        for path in ("manifest.json", "gemm_f16.cu", "gemm_bf16.cu", "runtime/tlc/runtime.h",
                     "stdlib/tl/tl.h"):
            self.assertTrue(os.path.exists(os.path.join(self.bundle, path)), path)
        with open(os.path.join(self.bundle, "gemm_bf16.cu")) as f:
            self.assertEqual(f.readline(), "#define TLC_SELFTEST_DTYPE TLC_BF16\n")
        self.assertTrue(cases.load_manifest(self.bundle).selftest)

    def dry_run(self, script, *extra):
        proc = subprocess.run([sys.executable, script, self.bundle, "--dry-run", *extra],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def test_run_dry_run(self):
        out = self.dry_run(os.path.join(HERE, "run.py"))
        self.assertIn("2 builds, 14 cases, 2 contract checks", out)
        out = self.dry_run(os.path.join(HERE, "run.py"), "--only", "n4095")
        self.assertIn("2 builds, 2 cases, 2 contract checks", out)

    def test_bench_dry_run(self):
        out = self.dry_run(os.path.join(ROOT, "bench", "bench.py"), "--skip-triton")
        self.assertIn("bench gemm_f16_8192x28672x8192: {'M': 8192, 'N': 28672, 'K': 8192} "
                      "ours vs cublas\n", out)

    def test_bench_dry_run_times_every_launch_of_an_operation(self):
        # The manifest alone is enough for the plan: the gated delta net's items run both
        # kernels; split-KV decoding's its one (the combine is in it since last_block).
        for name, line, count in (
                ("gdn_f16_d128", "bench gdn_f16_d128_b8h16s4096: {'batch': 8, 'heads': 16, 'seq_len': 4096, "
                 "'dk': 128, 'dv': 128} ours (tlc_gated_delta_prepare + tlc_gated_delta_output) vs torch, triton", 2),
                ("decode_f16_d128", "bench decode_f16_d128_b64h64kv8s32768: {'batch': 64, 'heads': 64, "
                 "'kv_heads': 8, 'seqlen': 32768, 'dim': 128} ours vs sdpa, torch", 6)):
            bundle = os.path.join(self.tmp.name, name)
            os.makedirs(bundle)
            subprocess.run([sys.executable, os.path.join(HERE, "cases.py"), "manifest", "--out", bundle,
                            "--only", f"^{name}$"], check=True)
            proc = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench.py"), bundle,
                                   "--dry-run"], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn(line + "\n", proc.stdout)
            self.assertIn(f"{count} items, 1 builds", proc.stdout)

    @unittest.skipUnless(shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"),
                         "no nvcc")
    def test_a_build_that_fails_fails_its_cases_with_the_compiler_error(self):
        bundle = os.path.join(self.tmp.name, "broken")
        shutil.copytree(self.bundle, bundle)
        with open(os.path.join(bundle, "gemm_bf16.cu"), "a") as f:
            f.write("\nthis is not C++;\n")
        out = os.path.join(self.tmp.name, "out")
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        proc = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), bundle, "--out", out,
                               "--only", "bf16", "--nvcc", nvcc], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
        self.assertEqual(len(results["cases"]), 7)
        for rec in results["cases"] + results["contract"]:
            self.assertFalse(rec["passed"])
            self.assertRegex(rec["reason"], r"^build failed: .*error.*\(build\.log\)$")
        self.assertEqual(results["summary"], {"passed": 0, "failed": 8, "skipped": 0})
        with open(os.path.join(out, "build.log")) as f:
            self.assertIn("==== gemm_bf16: FAILED", f.read())

    def test_bad_bundle_is_a_usage_error(self):
        proc = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), self.tmp.name],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("cannot read", proc.stderr)


if __name__ == "__main__":
    unittest.main()
