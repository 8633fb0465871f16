"""Unit tests of the validation's scoring, bundle wrappers and calibration (no GPU, no torch)."""
import json
import math
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
ROOT = pathlib.Path(__file__).resolve().parents[2]
import analyze  # noqa: E402
import calibrate  # noqa: E402
import plan  # noqa: E402


class RankTest(unittest.TestCase):
    def test_ties_share_the_average_rank(self):
        self.assertEqual(analyze.ranks([3.0, 1.0, 3.0, 2.0]), [3.5, 1.0, 3.5, 2.0])

    def test_spearman(self):
        self.assertAlmostEqual(analyze.spearman([1, 2, 3, 4], [10, 20, 30, 40]), 1.0)
        self.assertAlmostEqual(analyze.spearman([1, 2, 3, 4], [4, 3, 2, 1]), -1.0)
        # Monotone but not linear: ranks only.
        self.assertAlmostEqual(analyze.spearman([1, 2, 3, 4], [1, 8, 27, 64]), 1.0)
        # d = (0, 0, 1, -1): 1 - 6 * 2 / (4 * 15) = 0.8
        self.assertAlmostEqual(analyze.spearman([1, 2, 3, 4], [1, 2, 4, 3]), 0.8)
        self.assertTrue(math.isnan(analyze.spearman([1, 1, 1], [1, 2, 3])))


class ScoreTest(unittest.TestCase):
    def test_top5_and_first_choice(self):
        # 40 configurations: the model predicts c0 < c1 < ...; measured, c2 is the fastest.
        predicted = {f"c{i}": 1.0 + i for i in range(40)}
        measured = {f"c{i}": 2.0 + i for i in range(40)}
        measured["c2"] = 1.5
        s = analyze.score(predicted, measured, "c0")
        self.assertEqual(s["measured"], 40)
        self.assertEqual(s["top5_count"], 2)           # ceil(0.05 * 40)
        self.assertAlmostEqual(s["top5_quality"], 1.5 / 2.0)  # best of c0, c1 is c0 (2.0)
        self.assertEqual(s["first_rank"], 2)           # only c2 is faster than c0
        self.assertAlmostEqual(s["first_quality"], 1.5 / 2.0)
        self.assertEqual(s["best_config"], "c2")

    def test_first_choice_not_timed(self):
        s = analyze.score({"a": 1, "b": 2, "c": 3}, {"b": 5.0, "c": 4.0}, "a")
        self.assertEqual(s["measured"], 2)
        self.assertNotIn("first_rank", s)
        self.assertEqual(analyze.score({"a": 1}, {"a": 1.0}, "a"), None)

    def test_report_tables(self):
        manifest = {"git": "abc", "configs": [{"index": 0, "key": "x=1"}, {"index": 1, "key": "x=2"},
                                              {"index": 2, "key": "x=3"}],
                    "cases": [{"name": "gemm", "configs": [0, 1, 2], "rankings": [{
                        "shape": {"M": 512, "N": 1024, "K": 8192}, "legal": 3, "recommend_seconds": 0.05,
                        "predicted_ms": {"x=1": 1.0, "x=2": 2.0, "x=3": 3.0}, "first_choice": "x=1"}]}]}
        results = {"device": "GPU", "date": "today", "measurements": [
            {"case": "gemm", "shape": 0, "config": 0, "status": "ok", "ms": 1.0},
            {"case": "gemm", "shape": 0, "config": 1, "status": "ok", "ms": 3.0},
            {"case": "gemm", "shape": 0, "config": 2, "status": "crashed"}]}
        r = analyze.report(manifest, results)
        self.assertIn("| M=512,N=1024,K=8192 | 3 | 2 | 1.00 | 100.0% (top 1) | 1 of 2, 100.0% | 9 TFLOP/s | 50 ms |",
                      r.markdown)
        self.assertIn("Not timed: 1 crashed.", r.markdown)
        self.assertAlmostEqual(r.summary["cases"]["gemm"]["mean_spearman"], 1.0)


class PlanTest(unittest.TestCase):
    def test_wrapper_exports_the_namespaced_entry(self):
        header = ('namespace v7 {\nextern "C" inline int tlc_v7_gemm(const tlc_tensor_view* A, '
                  'const tlc_tensor_view* B, void* stream, char* error, size_t error_size) {\n}\n}\n')
        w = plan.wrapper(header, 7)
        self.assertIn('extern "C" __attribute__((visibility("default"))) int tlcv_7(', w)
        self.assertIn("return v7::tlc_v7_gemm(A, B, stream, error, error_size);", w)


class CalibrateTest(unittest.TestCase):
    def test_variant_overrides_the_free_parameters(self):
        base = json.loads((ROOT / "compiler/recommend/targets/h100-sxm.json").read_text())
        v = calibrate.variant(base, {"overlap_norm": 6, "barrier_cycles": 100, "ilp_needed": 16,
                                     "ceiling": 1.1})
        self.assertEqual(v["name"], "calibration")
        self.assertEqual(v["overheads"]["overlap_norm"], 6)
        self.assertEqual(v["overheads"]["barrier_cycles"], 100)
        path = v["compute"]["tensor"]["mma_sync"]
        self.assertEqual(path["ilp_needed"], 16)
        ceiling = base["compute"]["tensor"]["mma_sync"]["tflops"]["f16"]
        self.assertAlmostEqual(path["tflops"]["f16"], 1.1 * ceiling)
        # The base descriptor is untouched, and other paths keep their figures.
        self.assertEqual(base["compute"]["tensor"]["mma_sync"]["tflops"]["f16"], ceiling)
        self.assertEqual(v["compute"]["tensor"]["wgmma"], base["compute"]["tensor"]["wgmma"])


if __name__ == "__main__":
    unittest.main()
