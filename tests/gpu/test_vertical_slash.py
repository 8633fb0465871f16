"""The vertical-slash index builder (vertical_slash.py): every key at most once, the slash
diagonals and verticals all reachable, and the torch version equal to the pure-Python one."""
import os
import random
import sys
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


    @unittest.skipIf(torch is None, "no torch")
    def test_gpu_problem_reference_equals_the_emulator_reference(self):
        # problems.py (torch, the GPU cases) and tests/emulator/references.py (plain Python)
        # read the same tables the same way; query block 1 of head (0, 0) sees no key.
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "emulator"))
        import cases
        import problems
        import references
        b = cases.Build("t_vs", "vertical_slash_attention",
                        {"dtype": "f16", "dim": "16", "block_M": "32", "block_N": "16"})
        p = problems.problem_for(b)
        shape = {"batch": 1, "seq_len": 77, "heads": 2, "dim": 16, "nnz_s": 3, "nnz_v": 9}
        gen = torch.Generator()
        gen.manual_seed(3)
        x = p.inputs(shape, gen)
        self.assertEqual(int(x["BlockCount"][0, 0, 1]) + int(x["ColumnCount"][0, 0, 1]), 0)
        self.assertGreater(int(x["ColumnCount"].sum()), 0)
        got = p.reference(x, shape, "float64")["O"]
        flat = {n: ([float(v) for v in t.flatten().tolist()], tuple(t.shape)) for n, t in x.items()}
        want = references.vertical_slash_attention(flat, {"block_M": 32, "block_N": 16})["O"]
        self.assertTrue(torch.allclose(got.flatten(), torch.tensor(want, dtype=torch.float64), atol=1e-9))
        self.assertEqual(float(got[0, 32:64, 0].abs().max()), 0.0)
        self.assertGreater(p.flops(shape), 0)


    @unittest.skipIf(torch is None, "no torch")
    def test_bench_torch_peer_equals_the_reference(self):
        # bench/measure.py's torch implementation (the benchmark's reference output), in f32
        # on the CPU, in chunks of one query block.
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
        import cases
        import measure
        import problems
        b = cases.Build("t_vs", "vertical_slash_attention", {"dtype": "f32", "dim": "16", "block_M": "16",
                                                             "block_N": "16"})
        p = problems.problem_for(b)
        shape = {"batch": 2, "seq_len": 70, "heads": 2, "dim": 16, "nnz_s": 3, "nnz_v": 12}
        gen = torch.Generator()
        gen.manual_seed(5)
        x = p.inputs(shape, gen)
        want = p.reference(x, shape, "float64")["O"]
        got = measure.vertical_slash_torch(x, p, chunk_bytes=1)()
        self.assertEqual(tuple(got.shape), tuple(want.shape))
        self.assertTrue(torch.allclose(got.double(), want, atol=1e-4), float((got.double() - want).abs().max()))


if __name__ == "__main__":
    unittest.main()
