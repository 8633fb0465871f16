"""Every case of the emulator's table (tests/emulator/run_samples.py CASES) is a ctest test
(tests/emulator/CMakeLists.txt): a case added to the table but not to the lists would run only
by hand, and CI would not see its lowering break."""
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
import run_samples  # noqa: E402


class EmulatorCasesRegistered(unittest.TestCase):
    def test_every_case_is_a_ctest_test(self):
        with open(os.path.join(ROOT, "tests", "emulator", "CMakeLists.txt")) as f:
            cmake = f.read()
        registered = set()
        for m in re.finditer(r"(?:set\(TLC_EMULATOR_CASES|foreach\(case)([^)]*)\)", cmake, re.S):
            registered.update(w for w in m.group(1).split() if not w.startswith("$"))
        missing = sorted(set(run_samples.CASES) - registered)
        self.assertEqual(missing, [], "emulator cases missing from tests/emulator/CMakeLists.txt")


class Counters(unittest.TestCase):
    def test_last_block_counters_are_given_as_zeros(self):
        # `tlc run --emulate --input Done=FILE`: a file of exactly the counters' i32 zeros.
        with tempfile.TemporaryDirectory() as tmp:
            args = run_samples.counter_inputs("last_block", os.path.join(tmp, "c"), {"M": 3, "N": 5}, {})
            self.assertEqual(args, ["--input", "Done=" + os.path.join(tmp, "c", "Done.zeros.i32")])
            with open(args[1].split("=", 1)[1], "rb") as f:
                self.assertEqual(f.read(), bytes(12))
            self.assertEqual(run_samples.counter_inputs("gemm", os.path.join(tmp, "g"), {"M": 3}, {}), [])
            self.assertFalse(os.path.exists(os.path.join(tmp, "g")))


if __name__ == "__main__":
    unittest.main()
