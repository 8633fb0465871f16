"""The vertical-slash index builder (vertical_slash.py): every key at most once, the slash
diagonals and verticals all reachable, and the torch version equal to the pure-Python one."""
import random
import unittest

import vertical_slash as vs

try:
    import torch
except ImportError:  # the build machine's default python: the torch comparison is skipped
    torch = None

SHAPES = [(100, 64, 32, 10, 20), (77, 64, 64, 5, 3), (300, 64, 64, 40, 70), (64, 32, 16, 1, 1),
          (1000, 64, 64, 100, 200), (130, 128, 64, 0, 9)]


def patterns(seq, nv, ns, b, h, seed):
    rng = random.Random(seed)
    return [[vs.pattern(seq, nv, ns, rng) for _ in range(h)] for _ in range(b)]


class BuilderTest(unittest.TestCase):
    def test_each_key_once_and_pattern_covered(self):
        for n, (seq, bm, bn, nv, ns) in enumerate(SHAPES):
            pats = patterns(seq, nv, ns, 1, 2, n)
            t = vs.tables(seq, bm, bn, pats)
            counts, (_, _, qb) = t["BlockCount"]
            offsets, (*_, nnz_s) = t["BlockOffset"]
            ccounts, _ = t["ColumnCount"]
            cols, (*_, nnz_v) = t["ColumnIndex"]
            for h, (vert, slash) in enumerate(pats[0]):
                for m in range(qb):
                    r = h * qb + m
                    self.assertEqual(offsets[r * nnz_s + counts[r]], vs.PAD)
                    self.assertEqual(cols[r * nnz_v + ccounts[r]], vs.PAD)
                    offs = offsets[r * nnz_s:r * nnz_s + counts[r]]
                    cs = cols[r * nnz_v:r * nnz_v + ccounts[r]]
                    for row in range(m * bm, min((m + 1) * bm, seq)):
                        keys = vs.visible_keys(offs, cs, row, seq, bn)
                        self.assertEqual(len(keys), len(set(keys)), (seq, h, row))
                        want = {v for v in vert if v <= row} | {row - d for d in slash if d <= row}
                        self.assertTrue(want <= set(keys), (seq, h, row, sorted(want - set(keys))))

    @unittest.skipIf(torch is None, "no torch")
    def test_torch_tables_equal_python_tables(self):
        for n, (seq, bm, bn, nv, ns) in enumerate(SHAPES):
            pats = patterns(seq, nv, ns, 2, 2, 10 + n)
            want = vs.tables(seq, bm, bn, pats)
            got = vs.tables_torch(seq, bm, bn, pats)
            for name, (values, shape) in want.items():
                self.assertEqual(tuple(got[name].shape), shape, name)
                self.assertEqual(got[name].flatten().tolist(), values, (name, seq))


if __name__ == "__main__":
    unittest.main()
