"""Unit tests of bench/report.py's tables for bench.md (no GPU): the items timed by turns."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench"))

import report  # noqa: E402


def gemm_item(m, interleaved=None):
    impls = {k: {"status": "ok", "ms": 1.0, "tflops": 100.0} for k in ("ours", "cublas", "triton")}
    item = {"name": f"gemm_f16_{m}", "family": "gemm", "build": "gemm_f16", "dtype": "f16",
            "shape": {"M": m, "N": m, "K": m}, "causal": False, "impls": impls, "note": "x"}
    if interleaved:
        item["interleaved"] = interleaved
    return item


class TurnsTable(unittest.TestCase):
    def test_ratios_are_peer_time_over_ours_from_the_same_rounds(self):
        timed = {"rounds": 5, "ms": {"ours": 2.0, "cublas": 2.2, "triton": 2.1}}
        run = {"device": "test", "date": "d", "items": [gemm_item(4096, timed), gemm_item(8192)]}
        text = report.markdown(run)
        self.assertIn("By turns (5 rounds", text)
        self.assertIn("| ours, ms | ours/cuBLAS | ours/Triton |", text)
        self.assertIn("| 2.000 | 1.10 | 1.05 |", text)
        # Only the items that were timed by turns get a row.
        self.assertEqual(text.count("| 2.000 |"), 1)

    def test_attention_rows_say_whether_causal(self):
        item = gemm_item(1024, {"rounds": 5, "ms": {"ours": 1.0, "sdpa_cudnn": 0.9, "triton": 1.3}})
        item.update(family="attention", causal=True, shape={"batch": 8, "heads": 16, "seq_len": 1024, "dim": 128})
        text = report.markdown({"device": "test", "date": "d", "items": [item]})
        self.assertIn("| shape | dtype | causal | ours, ms |", text)
        self.assertIn("| yes | 1.000 |", text)
        self.assertIn("| 0.90 | 1.30 |", text)

    def test_no_table_without_items_timed_by_turns(self):
        text = report.markdown({"device": "test", "date": "d", "items": [gemm_item(4096)]})
        self.assertNotIn("By turns", text)
        error = gemm_item(4096, {"status": "error: RuntimeError: x"})
        self.assertNotIn("By turns", report.markdown({"device": "test", "date": "d", "items": [error]}))


if __name__ == "__main__":
    unittest.main()
