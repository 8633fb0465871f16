"""Unit tests of the validation's scoring, bundle wrappers, part split, merge and calibration
(no GPU, no torch)."""
import json
import math
import pathlib
import random
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
ROOT = pathlib.Path(__file__).resolve().parents[2]
import analyze  # noqa: E402
import budget  # noqa: E402
import calibrate  # noqa: E402
import cases  # noqa: E402
import plan  # noqa: E402
import run  # noqa: E402


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
        manifest = {"git": "abc", "configs": [{"index": i, "case": "gemm", "key": f"x={i + 1}"} for i in range(3)],
                    "cases": [{"name": "gemm", "configs": [0, 1, 2], "rankings": [{
                        "shape": {"M": 512, "N": 1024, "K": 8192}, "legal": 3, "recommend_seconds": 0.05,
                        "predicted_ms": {"x=1": 1.0, "x=2": 2.0, "x=3": 3.0}, "first_choice": "x=1"}]}]}
        results = {"device": "GPU", "date": "today", "measurements": [
            {"case": "gemm", "shape": 0, "config": 0, "status": "ok", "ms": 1.0},
            {"case": "gemm", "shape": 0, "config": 1, "status": "ok", "ms": 3.0},
            {"case": "gemm", "shape": 0, "config": 2, "status": "crashed"}]}
        r = analyze.report(manifest, results)
        self.assertIn("| M=512,N=1024,K=8192 | calibration | 3 | 2 | 1.00 | 100.0% (top 1) | 1 of 2, 100.0% | "
                      "9 TFLOP/s | 50 ms |", r.markdown)
        self.assertIn("| paper table 3 (calibration) | 1 | 1.00 (1.00) | 100.0% (100.0%) | 100.0% (100.0%) | 1 (1) |",
                      r.markdown)
        self.assertIn("| held out | 0 | - | - | - | - |", r.markdown)
        self.assertIn("Not timed: 1 crashed.", r.markdown)
        self.assertAlmostEqual(r.summary["cases"]["gemm"]["mean_spearman"], 1.0)


class PlanTest(unittest.TestCase):
    def test_wrapper_exports_the_namespaced_entry(self):
        header = ('namespace v7 {\nextern "C" inline int tlc_v7_gemm(const tlc_tensor_view* A, '
                  'const tlc_tensor_view* B, void* stream, char* error, size_t error_size) {\n}\n}\n')
        w = plan.wrapper(header, 7)
        self.assertIn('extern "C" __attribute__((visibility("default"))) int tlcv_7(', w)
        self.assertIn("return v7::tlc_v7_gemm(A, B, stream, error, error_size);", w)


def synthetic_manifest(parts: int = 2, seed: int = 1) -> dict:
    """A bundle's manifest without the files: 70 GEMM and 9 attention configurations, 4 and 3
    shapes (the last one of each held out), model predictions that loosely follow the sizes."""
    rng = random.Random(seed)
    manifest = {"created": "2026-01-01T00:00:00", "git": "abc", "parts": parts, "cases": [], "configs": []}
    for name, n, shapes in (("gemm", 70, [{"M": 512, "N": 1024, "K": 8192}, {"M": 4096, "N": 4096, "K": 4096},
                                          {"M": 8192, "N": 8192, "K": 8192}, {"M": 1024, "N": 4096, "K": 4096}]),
                            ("attention", 9, [{"batch": 8, "heads": 8, "seq_len": 1024},
                                              {"batch": 8, "heads": 8, "seq_len": 2048},
                                              {"batch": 4, "heads": 8, "seq_len": 3000}])):
        indices = []
        for j in range(n):
            index = len(manifest["configs"])
            manifest["configs"].append({"index": index, "case": name, "key": f"x={j}", "config": {"x": j},
                                        "entry": f"tlcv_{index}"})
            indices.append(index)
        rankings = []
        for s, shape in enumerate(shapes):
            scale = 0.1 * (s + 1) ** 2
            predicted = {f"x={j}": scale * (1 + rng.random() * (1 + j % 5)) for j in range(n)}
            rankings.append({"shape": shape, "held_out": s == len(shapes) - 1, "predicted_ms": predicted,
                             "recommend_seconds": 0.05, "legal": n, "candidates": 2 * n,
                             "first_choice": min(predicted, key=predicted.get)})
        manifest["cases"].append({"name": name, "rankings": rankings, "configs": indices, "checked": [0],
                                  "held_out": 1})
    plan.assign_parts(manifest, parts)
    plan.assign_units(manifest, parts)
    return manifest


def synthetic_results(manifest: dict, seed: int = 2) -> dict:
    """'Measurements' of every configuration at every shape: the prediction times noise, a few
    failures."""
    rng = random.Random(seed)
    measurements = []
    for case in manifest["cases"]:
        for s, ranking in enumerate(case["rankings"]):
            for i in case["configs"]:
                c = manifest["configs"][i]
                if i % 23 == 5:
                    measurements.append({"case": case["name"], "shape": s, "config": i, "status": "wrong"})
                    continue
                ms = ranking["predicted_ms"][c["key"]] * (0.8 + 0.6 * rng.random())
                measurements.append({"case": case["name"], "shape": s, "config": i, "status": "ok", "ms": ms})
    return {"device": "GPU", "date": "today", "bundle_created": manifest["created"], "measurements": measurements}


def split_results(manifest: dict, full: dict) -> list:
    """full's measurements as the parts would have written them."""
    parts = []
    for k in range(manifest["parts"]):
        members = {c["index"] for c in manifest["configs"] if c["part"] == k}
        parts.append({**full, "part": [k + 1, manifest["parts"]], "seconds": 100.0, "compile_seconds": 20.0,
                      "measurements": [m for m in full["measurements"] if m["config"] in members]})
    return parts


class PartTest(unittest.TestCase):
    def test_partition_deals_in_snake_order(self):
        costs = [10.0, 1.0, 7.0, 3.0, 9.0, 2.0, 8.0]
        part = budget.partition(costs, 2)
        # By cost: 10 (p0), 9 (p1), 8 (p1), 7 (p0), 3 (p0), 2 (p1), 1 (p1).
        self.assertEqual(part, [0, 1, 0, 0, 1, 1, 1])
        for n_parts in (1, 2, 3, 5):
            rng = random.Random(n_parts)
            costs = [rng.expovariate(1.0) for _ in range(101)]
            part = budget.partition(costs, n_parts)
            sizes = [part.count(k) for k in range(n_parts)]
            self.assertEqual(sum(sizes), 101)
            self.assertLessEqual(max(sizes) - min(sizes), 1)
            totals = [sum(c for c, p in zip(costs, part) if p == k) for k in range(n_parts)]
            self.assertLessEqual(max(totals) - min(totals), max(costs))

    def test_parts_and_units_partition_the_configurations(self):
        for n_parts in (1, 2, 3):
            m = synthetic_manifest(n_parts)
            every = {c["index"] for c in m["configs"]}
            in_parts = [{c["index"] for c in m["configs"] if c["part"] == k} for k in range(n_parts)]
            self.assertEqual(set().union(*in_parts), every)
            self.assertEqual(sum(len(p) for p in in_parts), len(every))        # disjoint
            in_units = [i for u in m["units"] for i in u["configs"]]
            self.assertEqual(sorted(in_units), sorted(every))                  # each in one unit
            for unit, u in enumerate(m["units"]):
                self.assertLessEqual(len(u["configs"]), plan.CONFIGS_PER_TU)
                for i in u["configs"]:
                    self.assertEqual(m["configs"][i]["unit"], unit)
                    self.assertEqual(m["configs"][i]["part"], u["part"])    # a unit serves one part
            for k in range(n_parts):
                units = [u for u in m["units"] if u["part"] == k]
                self.assertTrue(len(units) % budget.CORES == 0 or len(units) == len(in_parts[k]))
                for case in m["cases"]:                                         # every case in every part
                    members = [i for i in case["configs"] if m["configs"][i]["part"] == k]
                    self.assertGreaterEqual(len(members), len(case["configs"]) // n_parts)
                    self.assertLessEqual(len(members), -(-len(case["configs"]) // n_parts))

    def test_estimate_of_the_parts_adds_up(self):
        m = synthetic_manifest(2)
        whole = budget.estimate_part(m, None)
        parts = [budget.estimate_part(m, k) for k in range(2)]
        self.assertEqual(sum(p["units"] for p in parts), whole["units"])
        # The parts' measuring adds up to the whole's, plus one more set of worker starts.
        extra = len(m["cases"]) * (budget.WORKER_START_S + sum(
            budget.SHAPE_SETUP_S for _ in m["cases"][0]["rankings"]))
        self.assertLess(abs(sum(p["measure_s"] for p in parts) - whole["measure_s"]), extra + 1e-9)
        # Balanced: the parts' measuring differs by less than a tenth.
        a, b = (p["measure_s"] for p in parts)
        self.assertLess(abs(a - b), 0.1 * max(a, b))
        self.assertLess(max(p["total_s"] for p in parts), whole["total_s"])

    def test_compile_estimate(self):
        # 16 units on 16 cores: one wave.
        self.assertAlmostEqual(budget.compile_seconds([10] * 16),
                               budget.COMPILE_S_PER_UNIT + 10 * budget.COMPILE_S_PER_CONFIG)
        self.assertAlmostEqual(budget.compile_seconds([10] * 17),
                               2 * (budget.COMPILE_S_PER_UNIT + 10 * budget.COMPILE_S_PER_CONFIG))
        self.assertEqual(budget.units_for(281, 12), 32)
        self.assertEqual(budget.units_for(100, 12), 16)
        self.assertEqual(budget.units_for(5, 12), 5)

    def test_timing_plan(self):
        # A slow call is its own warm-up and first sample: 1 untimed + 3 timed calls.
        self.assertEqual(budget.timing_plan(20.0), (0, 2, True))
        self.assertEqual(budget.calls(20.0), (4, 3))
        # 2 ms: 15 samples after 2 warm-up calls.
        self.assertEqual(budget.timing_plan(2.0), (2, 15, False))
        # Fast: at most MAX_WARMUP and MAX_REPS.
        self.assertEqual(budget.timing_plan(0.01), (budget.MAX_WARMUP, budget.MAX_REPS, False))
        for ms in (0.001, 0.05, 1.0, 4.99, 5.0, 12.0, 300.0):
            _, timed = budget.calls(ms)
            self.assertGreaterEqual(timed, budget.MIN_REPS)
            self.assertLessEqual(timed, budget.MAX_REPS)

    def test_run_part_arguments(self):
        m = {"parts": 2}
        self.assertIsNone(run.parse_part(None, m))
        self.assertEqual(run.parse_part("2/2", m), 1)
        self.assertEqual(run.part_label(1, m), "-2of2")
        self.assertEqual(run.part_label(None, m), "")
        for bad in ("3/2", "1/3", "0/2", "x"):
            with self.assertRaises(SystemExit):
                run.parse_part(bad, m)
        self.assertTrue(run.in_part({"part": 1}, 1) and run.in_part({"part": 0}, None))
        self.assertFalse(run.in_part({"part": 0}, 1))

    def test_shape_order(self):
        gemm = cases.case_named("gemm")
        order = run.shape_order(gemm.flops, gemm.shapes, gemm.checked)
        self.assertEqual(sorted(order), list(range(len(gemm.shapes))))
        self.assertEqual(order[:len(gemm.checked)], list(gemm.checked))
        rest = [gemm.flops(gemm.shapes[s]) for s in order[len(gemm.checked):]]
        self.assertEqual(rest, sorted(rest))


class MergeTest(unittest.TestCase):
    def test_merging_the_parts_reproduces_the_scores(self):
        m = synthetic_manifest(2)
        full = synthetic_results(m)
        parts = split_results(m, full)
        self.assertTrue(all(p["measurements"] for p in parts))
        whole = analyze.report(m, full)
        merged = analyze.report(m, parts)
        for case in ("gemm", "attention"):
            self.assertEqual(merged.summary["cases"][case]["rows"], whole.summary["cases"][case]["rows"])
            self.assertEqual(merged.summary["cases"][case]["groups"], whole.summary["cases"][case]["groups"])
        self.assertIn("Results of 2 GPU commands (parts 1/2, 2/2)", merged.markdown)
        self.assertNotIn("Parts missing", merged.markdown)
        # One part alone: scored over its configurations, and said so.
        half = analyze.report(m, parts[:1])
        self.assertIn("Parts missing: 2/2", half.markdown)
        n1 = sum(1 for c in m["configs"] if c["part"] == 0 and c["case"] == "gemm")
        self.assertLessEqual(half.summary["cases"]["gemm"]["rows"][0]["measured"], n1)

    def test_groups_separate_the_held_out_shapes(self):
        m = synthetic_manifest(2)
        r = analyze.report(m, synthetic_results(m))
        for case in m["cases"]:
            rows = r.summary["cases"][case["name"]]["rows"]
            groups = r.summary["cases"][case["name"]]["groups"]
            held = [x for x in rows if x["held_out"]]
            fitted = [x for x in rows if not x["held_out"]]
            self.assertEqual((groups["held_out"]["shapes"], groups["fitted"]["shapes"]), (1, len(rows) - 1))
            self.assertAlmostEqual(groups["held_out"]["mean_spearman"], held[0]["spearman"])
            self.assertAlmostEqual(groups["fitted"]["min_top5_quality"], min(x["top5_quality"] for x in fitted))
            self.assertAlmostEqual(groups["all"]["mean_first_quality"],
                                   sum(x["first_quality"] for x in rows) / len(rows))
        self.assertIn("| held out | 1 |", r.markdown)

    def test_merged_results_merge_again(self):
        m = synthetic_manifest(3)
        parts = split_results(m, synthetic_results(m))
        once = analyze.merge(parts[:2])
        twice = analyze.merge([once, parts[2]])
        self.assertEqual([p["part"] for p in twice["parts"]], [[1, 3], [2, 3], [3, 3]])
        self.assertEqual(analyze.report(m, twice).summary, analyze.report(m, parts).summary)
        self.assertNotIn("Parts missing", analyze.report(m, twice).markdown)

    def test_overlapping_or_foreign_results_are_refused(self):
        m = synthetic_manifest(2)
        full = synthetic_results(m)
        parts = split_results(m, full)
        with self.assertRaises(ValueError):
            analyze.report(m, [parts[0], parts[0], parts[1]])
        with self.assertRaises(ValueError):
            analyze.report(m, [{**parts[0], "bundle_created": "another day"}, parts[1]])
        # Results of an older bundle (no date): a configuration index of another case.
        foreign = {"measurements": [{"case": "attention", "shape": 0, "config": 0, "status": "ok", "ms": 1.0}]}
        with self.assertRaises(ValueError):
            analyze.report(m, foreign)

    def test_a_progress_log_stands_in_for_results(self):
        m = synthetic_manifest(2)
        parts = split_results(m, synthetic_results(m))
        with tempfile.TemporaryDirectory() as tmp:
            log = pathlib.Path(tmp) / "recommend-progress-2of2.jsonl"
            log.write_text("".join(json.dumps(x) + "\n" for x in
                                   [{"case": "gemm", "shape": 0, "config": 1, "status": "started"}]
                                   + parts[1]["measurements"]))
            loaded = analyze.load_results(log)
        self.assertEqual(loaded["measurements"], parts[1]["measurements"])
        self.assertEqual(loaded["part"], [2, 2])
        whole = analyze.report(m, split_results(m, synthetic_results(m)))
        self.assertEqual(analyze.report(m, [parts[0], loaded]).summary["cases"]["gemm"]["rows"],
                         whole.summary["cases"]["gemm"]["rows"])


class CasesTest(unittest.TestCase):
    def test_held_out_shapes_are_new(self):
        for case in cases.CASES:
            fitted = [cases.shape_key(s) for i, s in enumerate(case.shapes) if not case.is_held_out(i)]
            held = [cases.shape_key(s) for i, s in enumerate(case.shapes) if case.is_held_out(i)]
            self.assertGreater(len(held), 0)
            self.assertEqual(len(set(fitted + held)), len(case.shapes))
            self.assertTrue(all(0 <= s < len(case.shapes) for s in case.checked))
        self.assertEqual(len([i for i in range(len(cases.CASES[0].shapes)) if not cases.CASES[0].is_held_out(i)]), 10)


class CalibrateTest(unittest.TestCase):
    def test_held_out_shapes_are_not_fitted(self):
        m = synthetic_manifest(1)
        measured = calibrate.measured_by_shape(m, synthetic_results(m))
        seen = []

        def fake_recommend(tlc, spec, shape, target):
            seen.append((spec.name, shape))
            case = next(c for c in m["cases"] if c["name"] == spec.name)
            ranking = next(r for r in case["rankings"] if r["shape"] == shape)
            order = sorted(ranking["predicted_ms"], key=ranking["predicted_ms"].get)
            return {"ranked": [{"config": {"x": int(k.split("=")[1])}, "predicted_ms": ranking["predicted_ms"][k]}
                               for k in order]}

        original = calibrate.plan.recommend
        calibrate.plan.recommend = fake_recommend
        try:
            fitted = calibrate.evaluate("tlc", "t.json", m, measured)
            self.assertEqual(fitted["shapes"], 3 + 2)
            self.assertFalse(any(shape in ({"M": 1024, "N": 4096, "K": 4096},
                                           {"batch": 4, "heads": 8, "seq_len": 3000}) for _, shape in seen))
            everything = calibrate.evaluate("tlc", "t.json", m, measured, held_out=True)
            self.assertEqual(everything["shapes"], 4 + 3)
        finally:
            calibrate.plan.recommend = original

    def test_variant_overrides_the_free_parameters(self):
        base = json.loads((ROOT / "compiler/target/descriptors/h100-sxm.json").read_text())
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
