"""Unit tests of the torch side (inputs, references, error reduction, contract mutations) on the
CPU. Skipped where torch is not installed (CI); on the build machine Debian's python3-torch
is enough: /usr/bin/python3 -m unittest discover -s tests/gpu -p 'test_*.py'.
"""
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import torch
except ImportError:
    torch = None

import cases  # noqa: E402
from abi import TLC_ERROR_INVALID_ARGUMENT, Status  # noqa: E402

if torch is not None:
    import contract
    import problems
    from metrics import compare, judge


def cpu_gen(seed=0):
    gen = torch.Generator()
    gen.manual_seed(seed)
    return gen


def build(family, **defines):
    return cases.Build(f"t_{family}", family, defines)


@unittest.skipIf(torch is None, "torch is not installed")
class Problems(unittest.TestCase):
    def test_inputs_outputs_and_order(self):
        p = problems.problem_for(build("rmsnorm", dtype="bf16", eps="1e-5"))
        shape = {"M": 3, "N": 5}
        ins = p.inputs(shape, cpu_gen())
        outs = p.outputs(shape, device="cpu")
        self.assertEqual({k: tuple(v.shape) for k, v in ins.items()}, {"X": (3, 5), "W": (5,)})
        self.assertTrue(all(t.dtype == torch.bfloat16 for t in ins.values()))
        self.assertTrue(bool(outs["Y"].isnan().all()))
        ordered = problems.ordered_tensors(p.spec, ins, outs)
        self.assertEqual([t.shape for t in ordered], [(3, 5), (5,), (3, 5)])
        self.assertIs(ordered[2], outs["Y"])
        self.assertEqual(p.min_bytes(shape), (15 + 5 + 15) * 2)

    def test_inputs_depend_on_the_seed_only(self):
        p = problems.problem_for(build("gemm", dtype="f16"))
        shape = {"M": 4, "N": 4, "K": 4}
        a1, a2 = p.inputs(shape, cpu_gen(1))["A"], p.inputs(shape, cpu_gen(1))["A"]
        self.assertTrue(torch.equal(a1, a2))
        self.assertFalse(torch.equal(a1, p.inputs(shape, cpu_gen(2))["A"]))

    def test_gemm_reference(self):
        p = problems.problem_for(build("gemm", dtype="f16"))
        shape = {"M": 3, "N": 2, "K": 4}
        ins = p.inputs(shape, cpu_gen())
        ref = p.reference(ins, shape, "float64")["C"]
        self.assertEqual(ref.dtype, torch.float64)
        self.assertTrue(torch.allclose(ref, ins["A"].double() @ ins["B"].double()))
        self.assertEqual(p.flops(shape), 2 * 3 * 2 * 4)

    def attention_reference_by_definition(self, q, k, v, causal):
        b, s, h, d = q.shape
        out = torch.empty(b, s, h, d, dtype=torch.float64)
        for bi in range(b):
            for hi in range(h):
                scores = q[bi, :, hi].double() @ k[bi, :, hi].double().T / math.sqrt(d)
                if causal:
                    scores += torch.full((s, s), -math.inf).triu(1).double()
                out[bi, :, hi] = torch.softmax(scores, -1) @ v[bi, :, hi].double()
        return out

    def test_attention_reference_in_chunks_of_heads(self):
        saved = problems._ATTENTION_SCORE_BYTES
        problems._ATTENTION_SCORE_BYTES = 2 * 37 * 37 * 4  # two heads per chunk, 5 heads
        try:
            for causal in ("false", "true"):
                p = problems.problem_for(build("attention", dtype="f16", dim="16", causal=causal))
                shape = {"batch": 2, "seq_len": 37, "heads": 5, "dim": 16}
                ins = p.inputs(shape, cpu_gen())
                ref = p.reference(ins, shape, "float32")["O"]
                want = self.attention_reference_by_definition(ins["Q"], ins["K"], ins["V"],
                                                              causal == "true")
                self.assertLess(compare(ref, want).rel, 1e-6, causal)
                # The first query of a causal row sees only the first key: O[:, 0] = V[:, 0].
                if causal == "true":
                    self.assertTrue(torch.allclose(ref[:, 0], ins["V"][:, 0].float(), atol=1e-6))
        finally:
            problems._ATTENTION_SCORE_BYTES = saved
        self.assertEqual(p.flops(shape), 4 * 2 * 5 * 37 * 37 * 16 * 0.5)

    def test_softmax_and_rmsnorm_references(self):
        shape = {"M": 4, "N": 7}
        p = problems.problem_for(build("softmax", dtype="f16"))
        y = p.reference(p.inputs(shape, cpu_gen()), shape, "float32")["Y"]
        self.assertTrue(torch.allclose(y.sum(-1), torch.ones(4)))
        p = problems.problem_for(build("rmsnorm", dtype="f16", eps="0.5"))
        x = torch.full((4, 7), 2.0, dtype=torch.float16)
        w = torch.full((7,), 3.0, dtype=torch.float16)
        y = p.reference({"X": x, "W": w}, shape, "float64")["Y"]
        # 2 * rsqrt(4 + 0.5) * 3
        self.assertTrue(torch.allclose(y, torch.full((4, 7), 6 / math.sqrt(4.5),
                                                     dtype=torch.float64)))


@unittest.skipIf(torch is None, "torch is not installed")
class Compare(unittest.TestCase):
    def test_counts_nan_and_inf_and_ignores_them_in_the_norms(self):
        ref = torch.ones(10)
        out = torch.ones(10, dtype=torch.float16)
        out[2] = math.nan
        out[3] = math.inf
        out[4] = 1.5
        s = compare(out, ref)
        self.assertEqual((s.numel, s.nan, s.inf), (10, 1, 1))
        self.assertEqual((s.diff_sq, s.ref_sq, s.max_abs), (0.25, 10.0, 0.5))
        self.assertFalse(judge(s, 1e-2).passed)

    def test_chunked_equals_whole(self):
        gen = cpu_gen()
        ref = torch.randn(1000, generator=gen)
        out = ref + 1e-3 * torch.randn(1000, generator=gen)
        whole, chunked = compare(out, ref), compare(out, ref, chunk_elements=64)
        self.assertAlmostEqual(whole.rel, chunked.rel, places=12)
        self.assertEqual(whole.max_abs, chunked.max_abs)

    def test_shape_mismatch_is_an_error(self):
        with self.assertRaises(ValueError):
            compare(torch.ones(2, 3), torch.ones(3, 2))


class FakeEntry:
    """Stands in for a KernelEntry: returns a fixed status, optionally 'writes' an output."""

    def __init__(self, status, writes=None):
        self.status, self.writes, self.calls = status, writes, 0

    def __call__(self, views, scalars, stream):
        self.calls += 1
        if self.writes is not None:
            self.writes.zero_()
        return self.status


@unittest.skipIf(torch is None, "torch is not installed")
class Contract(unittest.TestCase):
    def setUp(self):
        p = problems.problem_for(build("gemm", dtype="f16"))
        shape = {"M": 2, "N": 3, "K": 4}
        self.ins, self.outs = p.inputs(shape, cpu_gen()), p.outputs(shape, device="cpu")
        self.tensors = problems.ordered_tensors(p.spec, self.ins, self.outs)
        self.mutations = contract.mutations(p.spec, self.tensors)

    def test_each_mutation_breaks_one_thing(self):
        by_name = {m.name: m for m in self.mutations}
        self.assertEqual(len(by_name), 5)
        a = by_name["A as torch.float32"].views[0]
        self.assertEqual((a.dtype, a.rank), (2, 2))
        self.assertEqual(by_name["A with an extra dimension"].views[0].rank, 3)
        strided = by_name["A with innermost stride 2"].views[0]
        self.assertEqual((list(strided.shape[:2]), strided.strides[1]), ([2, 4], 2))
        self.assertIsNone(by_name["A with a null data pointer"].views[0].data)
        rows = by_name["C with one more row"]
        self.assertEqual((rows.views[2].shape[0], rows.blamed), (3, None))
        self.assertTrue(bool(rows.poisoned[0].isnan().all()))
        for m in self.mutations:  # the other views are the valid ones
            broken = [i for i, v in enumerate(m.views)
                      if bytes(v) != bytes(contract.TensorView.of(self.tensors[i]))]
            self.assertEqual(len(broken), 1, m.name)

    def verdict(self, status, writes=None, mutation=0):
        m = self.mutations[mutation]
        return contract.check(FakeEntry(status, writes), m, [], list(self.outs.values()), 0,
                              lambda: None)

    def test_a_proper_rejection_passes(self):
        r = self.verdict(Status(TLC_ERROR_INVALID_ARGUMENT, "gemm: parameter 'A' must be f16"))
        self.assertTrue(r.passed, r.reason)

    def test_acceptance_wrong_code_silence_and_launches_fail(self):
        self.assertIn("code 0", self.verdict(Status(0, "")).reason)
        self.assertIn("code 2", self.verdict(Status(2, "launch failed A")).reason)
        self.assertIn("empty message", self.verdict(Status(1, " ")).reason)
        self.assertIn("does not name 'A'",
                      self.verdict(Status(1, "gemm: parameter 'B' is wrong")).reason)
        r = self.verdict(Status(1, "A is wrong"), writes=self.outs["C"])
        self.assertIn("the kernel ran", r.reason)


if __name__ == "__main__":
    unittest.main()
