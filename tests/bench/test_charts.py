"""Unit tests of bench/charts.py: the charts of docs/benchmarks.md from bench/results.

Runs the script on the committed results (every chart written, well-formed SVG naming the
peers) and on small synthetic runs (which measurement represents a problem, the ratios).
"""
import json
import os
import sys
import tempfile
import unittest
import xml.dom.minidom

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import charts  # noqa: E402


def item(name, family, ms_ours, peers, build=None, shape=None, date_note=""):
    impls = {"ours": {"status": "ok", "ms": ms_ours}}
    for key, ms in peers.items():
        impls[key] = {"status": "ok", "ms": ms}
    return {"name": name, "family": family, "build": build or name, "dtype": "f16",
            "shape": shape or {"M": 4096}, "causal": False, "impls": impls, "note": date_note}


def write_run(directory, name, date, items):
    path = os.path.join(directory, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"device": "test", "date": date, "items": items}, f)


class CommittedResults(unittest.TestCase):
    def test_every_chart_from_the_committed_results(self):
        with tempfile.TemporaryDirectory() as out:
            self.assertEqual(charts.main(["--results", os.path.join(ROOT, "bench", "results"), "--out", out]), 0)
            names = sorted(os.listdir(out))
            self.assertEqual(names, ["bench-attention.svg", "bench-gemm.svg", "bench-mla.svg", "bench-rows.svg"])
            for name in names:
                with open(os.path.join(out, name), encoding="utf-8") as f:
                    text = f.read()
                doc = xml.dom.minidom.parseString(text)
                self.assertEqual(doc.documentElement.tagName, "svg")
                self.assertTrue(doc.getElementsByTagName("rect"))
                self.assertIn("tlc vs peers", text)
            with open(os.path.join(out, "bench-gemm.svg"), encoding="utf-8") as f:
                gemm = f.read()
            self.assertIn("cuBLAS", gemm)
            # The f16 8192^3 problem, by whichever build its latest run measured (results
            # committed later may change which).
            self.assertRegex(gemm, r"gemm_f16_\w*8192x8192x8192")


class Selection(unittest.TestCase):
    def test_latest_run_wins_and_default_build_represents_variants(self):
        with tempfile.TemporaryDirectory() as results:
            write_run(results, "old.json", "2026-01-01T00:00:00+00:00",
                      [item("gemm_a", "gemm", 2.0, {"cublas": 1.0})])
            write_run(results, "sub/new.json", "2026-02-01T00:00:00+00:00",
                      [item("gemm_a_tiles", "gemm", 1.0, {"cublas": 1.0}, build="gemm_a_tiles"),
                       item("gemm_a", "gemm", 0.5, {"cublas": 1.0}, build="gemm_a")])
            # Not a benchmark run: ignored.
            with open(os.path.join(results, "correctness.json"), "w") as f:
                json.dump({"date": "2027-01-01", "cases": []}, f)
            chosen = charts.latest_items(charts.load_runs(results))
            self.assertEqual(len(chosen), 1)
            (picked, path, date), = chosen.values()
            self.assertEqual(picked["name"], "gemm_a")
            self.assertEqual(path, os.path.join("sub", "new.json"))
            self.assertEqual(charts.ratios(picked), [("cublas", "cuBLAS", 2.0)])

    def test_a_peer_the_latest_run_skipped_keeps_its_latest_ratio(self):
        # The new run timed ours and cuBLAS only (--skip-triton): Triton's ratio comes from the
        # latest run that timed it beside ours (not from the old run's cuBLAS), and the chart
        # lists both runs; a kernel that failed in the latest run shows no older ratio.
        with tempfile.TemporaryDirectory() as results:
            write_run(results, "a.json", "2026-01-01T00:00:00+00:00",
                      [item("gemm_a", "gemm", 2.0, {"cublas": 1.0, "triton": 3.0})])
            write_run(results, "b.json", "2026-01-15T00:00:00+00:00",
                      [item("gemm_a", "gemm", 2.0, {"cublas": 2.0, "triton": 5.0})])
            write_run(results, "c.json", "2026-02-01T00:00:00+00:00",
                      [item("gemm_a", "gemm", 1.0, {"cublas": 4.0})])
            chosen = charts.latest_items(charts.load_runs(results))
            (picked, path, _), = chosen.values()
            self.assertEqual(path, "c.json")
            self.assertEqual(charts.ratios(picked), [("cublas", "cuBLAS", 4.0), ("triton", "Triton", 2.5)])
            svg = charts.chart("gemm", "GEMM", ["gemm"], chosen)
            self.assertIn("b.json", svg)
            self.assertIn("c.json", svg)
            self.assertNotIn("a.json", svg)
            failed = item("gemm_a", "gemm", 1.0, {"cublas": 4.0})
            failed["impls"]["ours"]["status"] = "error"
            write_run(results, "d.json", "2026-03-01T00:00:00+00:00", [failed])
            (picked, _, _), = charts.latest_items(charts.load_runs(results)).values()
            self.assertEqual(charts.ratios(picked), [])

    def test_failed_kernels_and_missing_peers_are_left_out(self):
        failed = item("x", "gemm", 1.0, {"cublas": 1.0})
        failed["impls"]["ours"]["status"] = "error"
        self.assertEqual(charts.ratios(failed), [])
        self.assertEqual(charts.ratios(item("y", "gemm", 1.0, {})), [])
        self.assertIsNone(charts.chart("gemm", "GEMM", ["gemm"], {}))

    def test_ratios_by_turns_win_over_the_separate_passes(self):
        it = item("g", "gemm", 1.0, {"cublas": 1.5, "triton": 0.5})
        it["interleaved"] = {"rounds": 5, "ms": {"ours": 2.0, "cublas": 2.2, "triton": 2.1}}
        got = {key: round(r, 3) for key, _, r in charts.ratios(it)}
        self.assertEqual(got, {"cublas": 1.1, "triton": 1.05})

    def test_names_are_escaped(self):
        chosen = {("gemm",): (item("a<&>b", "gemm", 1.0, {"cublas": 3.0}), "r&d.json", "2026-01-01")}
        svg = charts.chart("gemm", "GEMM", ["gemm"], chosen)
        xml.dom.minidom.parseString(svg)
        self.assertIn("a&lt;&amp;&gt;b", svg)
        self.assertIn("3.00x", svg)


if __name__ == "__main__":
    unittest.main()
