"""Unit tests of emu_compare.py's comparison logic and plan (no GPU, no torch, no tlc)."""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import emu_compare as ec  # noqa: E402


def f16_bytes(values):
    return struct.pack("<%de" % len(values), *values)


class DecodeTest(unittest.TestCase):
    def test_f16_f32_and_integers(self):
        self.assertEqual(ec.decode(f16_bytes([1.0, -0.5, 65504.0]), "f16"), [1.0, -0.5, 65504.0])
        self.assertEqual(ec.decode(struct.pack("<2f", 0.25, 3.0), "f32"), [0.25, 3.0])
        self.assertEqual(ec.decode(struct.pack("<2i", -7, 9), "i32"), [-7, 9])

    def test_bf16_is_the_top_half_of_an_f32(self):
        raw = struct.pack("<2H", 0x3F80, 0xC040)  # 1.0, -3.0
        self.assertEqual(ec.decode(raw, "bf16"), [1.0, -3.0])

    def test_nan_bytes_decode_to_nan(self):
        self.assertTrue(math.isnan(ec.decode(b"\xff\xff", "f16")[0]))
        self.assertTrue(math.isnan(ec.decode(b"\xff\xff", "bf16")[0]))

    def test_unknown_dtype(self):
        with self.assertRaises(ValueError):
            ec.decode(b"\x00", "c64")

    def test_packed_nibbles(self):
        # Element 2c in the low nibble of byte c; i4 sign-extended.
        self.assertEqual(ec.decode(b"\x8f\x71", "i4"), [-1, -8, 1, 7])
        self.assertEqual(ec.decode(b"\x8f\x71", "u4"), [15, 8, 1, 7])
        self.assertTrue(ec.compare([1, 2], [1, 2], "i4")["ok"])
        self.assertFalse(ec.compare([1, 2], [1, 3], "u4")["ok"])


class CompareTest(unittest.TestCase):
    def test_last_bit_differences_match(self):
        # One f16 ulp at 1.0 (2^-10) and an f32 sum order difference.
        r = ec.compare([1.0 + 2 ** -10, 0.5], [1.0, 0.5], "f16")
        self.assertTrue(r["ok"])
        self.assertEqual((r["elements"], r["compared"], r["mismatches"]), (2, 2, 0))
        self.assertAlmostEqual(r["max_abs"], 2 ** -10)
        self.assertAlmostEqual(r["max_rel"], 2 ** -10)
        self.assertTrue(ec.compare([1.0 + 1e-6], [1.0], "f32")["ok"])

    def test_a_real_difference_fails_and_is_shown(self):
        r = ec.compare([1.0, 1.1, 2.0], [1.0, 1.0, 2.0], "f16")
        self.assertFalse(r["ok"])
        self.assertEqual(r["mismatches"], 1)
        self.assertEqual(r["first"][0]["index"], 1)
        self.assertFalse(ec.compare([1.001], [1.0], "f32")["ok"])  # f32 is tight

    def test_tolerance_scales_with_the_dtype(self):
        self.assertTrue(ec.compare([1.0 + 2 ** -7], [1.0], "bf16")["ok"])  # 2 bf16 ulps
        self.assertFalse(ec.compare([1.0 + 2 ** -7], [1.0], "f16")["ok"])  # 8 f16 ulps

    def test_unwritten_on_both_sides_matches_but_one_side_does_not(self):
        nan = float("nan")
        r = ec.compare([nan, 1.0], [nan, 1.0], "f16")
        self.assertTrue(r["ok"])
        self.assertEqual((r["unwritten"], r["compared"]), (1, 1))
        self.assertFalse(ec.compare([nan, 1.0], [0.0, 1.0], "f16")["ok"])
        self.assertFalse(ec.compare([0.0], [nan], "f32")["ok"])
        # Nothing written anywhere is no comparison at all.
        self.assertFalse(ec.compare([nan], [nan], "f32")["ok"])

    def test_infinities(self):
        inf = float("inf")
        self.assertTrue(ec.compare([inf, -inf], [inf, -inf], "f32")["ok"])
        self.assertFalse(ec.compare([inf], [-inf], "f32")["ok"])
        self.assertFalse(ec.compare([inf], [1.0], "f32")["ok"])

    def test_integers_are_exact(self):
        self.assertTrue(ec.compare([3, 4], [3, 4], "i32")["ok"])
        self.assertFalse(ec.compare([3, 5], [3, 4], "i32")["ok"])

    def test_length_mismatch(self):
        r = ec.compare([1.0], [1.0, 2.0], "f32")
        self.assertFalse(r["ok"])
        self.assertIn("error", r)


class ShapesTest(unittest.TestCase):
    def test_chosen_shape_is_the_awkward_one(self):
        self.assertEqual(ec.chosen_shape([dict(M=64), dict(M=100), dict(M=17)]), dict(M=100))
        self.assertEqual(ec.chosen_shape([dict(M=150)]), dict(M=150))

    def test_strides_and_bytes(self):
        self.assertEqual(ec.contiguous_strides([2, 3, 4]), [12, 4, 1])
        self.assertEqual(ec.contiguous_strides([5, 0, 4]), [4, 4, 1])
        self.assertEqual(ec.tensor_bytes({"shape": [3, 5], "dtype": "f16"}), 30)
        self.assertEqual(ec.tensor_bytes({"shape": [3, 5], "dtype": "u4"}), 8)

    def test_every_emulator_sample_has_a_shape_and_a_loadable_output_dtype(self):
        sys.path.insert(0, os.path.join(ec.ROOT, "tests", "emulator"))
        import run_samples  # noqa: E402
        self.assertGreaterEqual(len(run_samples.CASES), 10)
        for name, case in run_samples.CASES.items():
            self.assertTrue(ec.chosen_shape(case[5]), name)


class DryRunTest(unittest.TestCase):
    def test_plan_of_a_bundle(self):
        with tempfile.TemporaryDirectory() as bundle:
            d = os.path.join(bundle, "emu", "gemm")
            os.makedirs(d)
            with open(os.path.join(bundle, "emu", "cases.json"), "w") as f:
                json.dump({"target": "sm_80", "cases": [{"name": "gemm", "sample": "gemm.tl", "kernel": "gemm",
                                                         "defines": [], "shape": {"M": 100}, "seed": 11}]}, f)
            with open(os.path.join(d, "manifest.json"), "w") as f:
                json.dump({"tensors": [{"name": "A", "file": "A.bin", "out": False},
                                       {"name": "C", "file": "C.bin", "out": True}]}, f)
            r = subprocess.run([sys.executable, os.path.join(HERE, "emu_compare.py"), "run", bundle, "--dry-run"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("-gencode=arch=compute_90a,code=sm_90a", r.stdout)
            self.assertIn("gemm.cu -o " + os.path.join(d, "libgemm.so"), r.stdout)
            self.assertIn("compare gemm: tlc_gemm on M=100 (seed 11), outputs against C.bin", r.stdout)

    def test_a_bundle_without_the_comparison(self):
        with tempfile.TemporaryDirectory() as bundle:
            r = subprocess.run([sys.executable, os.path.join(HERE, "emu_compare.py"), "run", bundle],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("make_bundle.sh --emu-compare", r.stdout)


if __name__ == "__main__":
    unittest.main()
