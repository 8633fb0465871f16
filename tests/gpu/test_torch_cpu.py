"""Unit tests of the torch side (inputs, references, error reduction, contract mutations) on the
CPU. Skipped where torch is not installed (CI); on the build machine Debian's python3-torch
is enough: /usr/bin/python3 -m unittest discover -s tests/gpu -p 'test_*.py'.
"""
import math
import os
import re
import subprocess
import sys
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench"))

try:
    import torch
except ImportError:
    torch = None

import cases  # noqa: E402
from abi import TLC_ERROR_INVALID_ARGUMENT, TORCH_DTYPES, Status, TensorView  # noqa: E402

if torch is not None:
    import contract
    import measure
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


def tlc_path():
    path = os.path.join(ROOT, "build/bin/tlc")
    return path if os.access(path, os.X_OK) else None


# tlc::check::tensor(tl_name, "X", &X, RANK, TLC_DTYPE) in a generated launcher.
_TENSOR_CHECK = re.compile(r'check::tensor\(tl_name, "(\w+)", &\w+, (\d+), TLC_(\w+)\)')


@unittest.skipIf(torch is None, "torch is not installed")
class EveryFamily(unittest.TestCase):
    """Every build's problem on its smallest case, on the CPU: what the worker will do."""

    def setUp(self):
        self.builds, self.cases, _ = cases.default_tables(known_rejections=True)

    def smallest_cases(self):
        for b in self.builds:
            # fp8 builds need a torch with fp8 tensors (2.1+; the GPU machine's).
            if any(b.defines.get(k, "f16") not in problems.TORCH_DTYPES for k in ("dtype", "out_dtype")):
                continue
            mine = [c for c in self.cases if c.build == b.name]
            yield b, min(mine, key=lambda c: math.prod(c.shape.values()))

    def test_tensors_scalars_and_references_fit_together(self):
        # One build per family, but every op of the reductions; attention's reference (seconds
        # on a CPU) has a test of its own.
        seen = {"attention"}
        for b, case in self.smallest_cases():
            key = (b.family, tuple(sorted(b.defines.items())))
            if b.family in seen and b.family not in ("reduce_rows", "reduce_gemm"):
                continue
            seen.add(b.family)
            with self.subTest(build=b.name):
                p = problems.problem_for(b)
                ins, outs = p.inputs(case.shape, cpu_gen()), p.outputs(case.shape, device="cpu")
                ordered = problems.ordered_tensors(p.spec, ins, outs)
                self.assertEqual(len(ordered), len(p.spec.tensors))
                self.assertEqual(len(p.scalars(case.shape)), len(p.spec.scalars))
                for t in ordered:
                    TensorView.of(t)   # every dtype has a tlc code
                # Every output poisoned but last_block's counters, which start at 0.
                self.assertTrue(all(problems.still_poisoned(outs[n]) for n in outs if n not in p.counters))
                self.assertTrue(all(not bool(outs[n].any()) for n in p.counters))
                self.assertEqual(p.counters_left(outs), "")
                ref = p.reference(ins, case.shape, case.reference)
                self.assertEqual(set(ref), set(outs) - set(p.scratch) - set(p.counters), key)
                for name, r in ref.items():
                    self.assertEqual(tuple(r.shape), tuple(outs[name].shape), name)
                    self.assertTrue(bool(r.isfinite().all()), name)

    @unittest.skipUnless(tlc_path(), "no tlc")
    def test_tensors_match_the_generated_launchers_checks(self):
        # The rank and dtype of every tensor the problem makes are what the launcher tlc
        # generated for the build accepts; a mismatch would fail the case on the GPU only.
        for b, case in self.smallest_cases():
            if b.name in cases.KNOWN_TLC_REJECTIONS:
                continue
            with self.subTest(build=b.name):
                args = [tlc_path(), os.path.join(ROOT, b.spec.source), "-o", "-"]
                for d in b.define_args():
                    args += ["-D", d]
                cu = subprocess.run(args, capture_output=True, text=True, check=True).stdout
                # The launchers of the kernels the operation runs and of their `auto` variants
                # (kernel_v0, ...): a file may hold others (samples/conv2d.tl's split-K pair).
                kernels = {b.spec.kernel, *(launch.kernel for launch in b.spec.then)}
                ours = re.compile("(" + "|".join(map(re.escape, kernels)) + r")(_v\d+)?")
                launchers = [part for part in cu.split("// Launcher of '")[1:]
                             if ours.fullmatch(part.split("'", 1)[0])]
                checks = {n: (int(r), d.lower()) for part in launchers for n, r, d in _TENSOR_CHECK.findall(part)}
                p = problems.problem_for(b)
                shapes = p.tensor_shapes(case.shape)
                want = {n: (len(s), p.packed.get(n) or TORCH_DTYPES[str(p.tensor_dtype(n))])
                        for n, s in shapes.items()}
                self.assertEqual(checks, want)


@unittest.skipIf(torch is None, "torch is not installed")
class OperatorReferences(unittest.TestCase):
    def test_transposed_gemms(self):
        shape = {"M": 3, "N": 2, "K": 4}
        for family, ta, tb in (("gemm_nt", False, True), ("gemm_tn", True, False),
                               ("gemm_tt", True, True)):
            p = problems.problem_for(build(family, dtype="f16"))
            ins = p.inputs(shape, cpu_gen())
            a, b = ins["A"].double(), ins["B"].double()
            self.assertEqual(tuple(a.shape), (4, 3) if ta else (3, 4), family)
            self.assertEqual(tuple(b.shape), (2, 4) if tb else (4, 2), family)
            want = (a.T if ta else a) @ (b.T if tb else b)
            self.assertTrue(torch.equal(p.reference(ins, shape, "float64")["C"], want), family)

    def test_i8_gemm_is_exact_and_poisons_with_the_minimum(self):
        p = problems.problem_for(build("gemm", dtype="i8", accum="i32", out_dtype="i32"))
        shape = {"M": 5, "N": 3, "K": 64}
        ins = p.inputs(shape, cpu_gen())
        self.assertEqual(ins["A"].dtype, torch.int8)
        self.assertGreater(int(ins["A"].abs().max()), 64)   # the whole i8 range
        out = p.outputs(shape, device="cpu")["C"]
        self.assertEqual(out.dtype, torch.int32)
        self.assertTrue(problems.still_poisoned(out))
        ref = p.reference(ins, shape, "float64")["C"]
        self.assertTrue(torch.equal(ref, (ins["A"].long() @ ins["B"].long()).double()))
        # Exact output: relative error 0, which tolerance 0 accepts; one unwritten element fails.
        exact = ref.to(torch.int32)
        self.assertTrue(judge(compare(exact, ref), 0.0).passed)
        exact[4, 2] = problems.poison(torch.int32)
        self.assertFalse(judge(compare(exact, ref), 0.0).passed)

    def test_tf32_gemm_reads_f32_and_writes_f32(self):
        p = problems.problem_for(build("gemm_nt", dtype="f32", accum="f32"))
        shape = {"M": 2, "N": 3, "K": 8}
        ins = p.inputs(shape, cpu_gen())
        self.assertEqual((ins["A"].dtype, p.tensor_dtype("C")), (torch.float32, torch.float32))
        want = ins["A"].double() @ ins["B"].double().T
        self.assertTrue(torch.equal(p.reference(ins, shape, "float64")["C"], want))

    @unittest.skipUnless(hasattr(torch, "float8_e4m3fn"), "torch without fp8 tensors")
    def test_fp8_gemm_inputs_are_fp8_values(self):
        p = problems.problem_for(build("gemm", dtype="f8e4m3", accum="f32", out_dtype="f16"))
        shape = {"M": 2, "N": 3, "K": 32}
        ins = p.inputs(shape, cpu_gen())
        self.assertEqual(ins["A"].dtype, torch.float8_e4m3fn)
        self.assertEqual(p.tensor_dtype("C"), torch.float16)
        want = ins["A"].float().double() @ ins["B"].float().double()
        self.assertTrue(torch.equal(p.reference(ins, shape, "float64")["C"], want))

    def test_gemm_rs_rounds_the_intermediate(self):
        p = problems.problem_for(build("gemm_rs", dtype="bf16", dim_k="2", dim_p="1"))
        # A @ B = 1 + 2^-10 is not a bf16 value: it rounds to 1 before the second gemm.
        ins = {"A": torch.tensor([[1.0, 2 ** -10]], dtype=torch.bfloat16),
               "B": torch.tensor([[1.0], [1.0]], dtype=torch.bfloat16),
               "E": torch.ones(1, 1, dtype=torch.bfloat16)}
        d = p.reference(ins, {"M": 1, "N": 1, "dim_k": 2, "dim_p": 1}, "float64")["D"]
        self.assertEqual(d.item(), 1.0)

    def reduce_problem(self, op, family="reduce_rows", **defines):
        code = str(cases.REDUCE_OPS.index(op))
        return problems.problem_for(build(family, dtype="f32", op=code, **defines))

    def test_reductions_per_tile_and_accumulated(self):
        x = torch.tensor([[1.0, -5.0, 2.0, 3.0], [-1.0, 4.0, -2.0, 0.5]], dtype=torch.float32)
        init = torch.tensor([10.0, 0.25])
        expect = {  # op: (Tiles [2 tiles, 2 rows], Acc)
            "sum": ([[-4.0, 3.0], [5.0, -1.5]], [11.0, 1.75]),
            "max": ([[1.0, 4.0], [3.0, 0.5]], [10.0, 4.0]),
            "min": ([[-5.0, -1.0], [2.0, -2.0]], [-5.0, -2.0]),
            "abssum": ([[6.0, 5.0], [5.0, 2.5]], [21.0, 7.75]),
            "absmax": ([[5.0, 4.0], [3.0, 2.0]], [10.0, 4.0]),
        }
        for op, (tiles, acc) in expect.items():
            p = self.reduce_problem(op, block_N="2")
            ref = p.reference({"X": x, "Init": init}, {"M": 2, "N": 4}, "float64")
            self.assertTrue(torch.equal(ref["Tiles"], torch.tensor(tiles, dtype=torch.float64)),
                            op)
            self.assertTrue(torch.equal(ref["Acc"], torch.tensor(acc, dtype=torch.float64)), op)

    def test_reduce_gemm_reduces_the_product_and_needs_whole_tiles(self):
        p = self.reduce_problem("sum", "reduce_gemm", block_N="2", dim_k="3")
        shape = {"M": 2, "N": 4, "dim_k": 3}
        ins = p.inputs(shape, cpu_gen())
        product = ins["A"].double() @ ins["B"].double()
        ref = p.reference(ins, shape, "float64")
        self.assertTrue(torch.allclose(ref["Acc"], ins["Init"].double() + product.sum(1)))
        with self.assertRaisesRegex(ValueError, "multiple of block_N"):
            p.tensor_shapes({"M": 2, "N": 5, "dim_k": 3})

    def test_abs_reductions_start_from_non_negative_values(self):
        init = self.reduce_problem("absmax", block_N="4").inputs({"M": 64, "N": 4},
                                                                cpu_gen())["Init"]
        self.assertTrue(bool((init >= 0).all()))
        init = self.reduce_problem("max", block_N="4").inputs({"M": 64, "N": 4}, cpu_gen())["Init"]
        self.assertTrue(bool((init < 0).any()))

    def test_accumulating_outputs_are_zeroed_before_every_launch(self):
        p = problems.problem_for(build("atomic_splitk", dtype="f16", splits="3", block_M="2",
                                       block_N="2"))
        outs = p.outputs({"M": 3, "N": 5, "K": 4}, device="cpu")
        seen = []

        def call():   # what a kernel sees: the outputs, then it adds 1 everywhere
            seen.append([float(t.sum()) for t in outs.values()])
            for t in outs.values():
                t.add_(1)
            return 0
        launch = p.launcher(call, outs)
        self.assertEqual((launch(), launch()), (0, 0))
        self.assertEqual(seen, [[0.0] * len(outs)] * 2)
        self.assertTrue(torch.equal(outs["Blocks"], torch.ones(3)))
        plain = problems.problem_for(build("gemm", dtype="f16"))
        self.assertIs(plain.launcher(call, outs), call)

    # tests/gpu/ops/last_block.tl: 3 rows of 10 columns in chunks of 4 (3 chunks, the last of 2).
    LAST_SMALL = {"M": 3, "N": 10}

    def last_block_problem(self):
        return problems.problem_for(build("last_block", dtype="f16", block_N="4"))

    def test_last_block_tensors_and_reference(self):
        p = self.last_block_problem()
        ins = p.inputs(self.LAST_SMALL, cpu_gen())
        outs = p.outputs(self.LAST_SMALL, device="cpu")
        self.assertEqual({k: (tuple(v.shape), v.dtype) for k, v in outs.items()},
                         {"Partial": ((3, 3), torch.float32), "Seen": ((3, 3), torch.int32),
                          "Done": ((3,), torch.int32), "RowSum": ((3,), torch.float32),
                          "Count": ((3,), torch.int32), "Own": ((3, 3), torch.float32)})
        # The counters start at 0, every other output poisoned (the contract checks look there).
        self.assertTrue(torch.equal(outs["Done"], torch.zeros(3, dtype=torch.int32)))
        self.assertEqual([t is outs["Done"] for t in p.poisoned_outputs(outs)], [False] * 5)
        self.assertTrue(all(problems.still_poisoned(t) for t in p.poisoned_outputs(outs)))
        ref = p.reference(ins, self.LAST_SMALL, "float64")
        self.assertEqual(set(ref), {"Seen", "RowSum", "Count", "Own"})
        x = ins["X"].double()
        for m in range(3):
            self.assertAlmostEqual(float(ref["RowSum"][m]), float(x[m].sum()))
            self.assertEqual(float(ref["Count"][m]), 3.0)
            for c, cols in enumerate((slice(0, 4), slice(4, 8), slice(8, 10))):
                self.assertAlmostEqual(float(ref["Own"][m, c]), float(x[m, cols].sum()))
        self.assertTrue(torch.equal(ref["Seen"], torch.ones(3, 3, dtype=torch.float64)))
        # X 30 f16; Seen, Own 9 and RowSum, Count 3 of 4 bytes; not Partial nor Done.
        self.assertEqual(p.min_bytes(self.LAST_SMALL), 30 * 2 + 4 * (9 + 9 + 3 + 3))

    def test_counters_are_zeroed_before_every_launch_and_checked_after(self):
        p = self.last_block_problem()
        outs = p.outputs(self.LAST_SMALL, device="cpu")
        seen = []

        def call():   # a kernel that miscounts: it leaves each counter one arrival short of 0
            seen.append((outs["Done"].tolist(), bool(outs["RowSum"].isnan().all())))
            outs["Done"].add_(2)
            outs["RowSum"].fill_(1)
            return 0
        launch = p.launcher(call, outs)
        self.assertEqual((launch(), launch()), (0, 0))
        # Done zeroed before each launch, the other outputs not (RowSum kept the first's 1s).
        self.assertEqual(seen, [([0, 0, 0], True), ([0, 0, 0], False)])
        self.assertRegex(p.counters_left(outs), r"^last_block counter\(s\) left non-zero after the launch: "
                                                r"Done: 3 of 3 non-zero \(e\.g\. \[2, 2, 2\]\)$")
        outs["Done"][1] = 0
        self.assertIn("Done: 2 of 3 non-zero", p.counters_left(outs))
        outs["Done"].zero_()
        self.assertEqual(p.counters_left(outs), "")
        # Problems without counters: the call itself, as before.
        plain = problems.problem_for(build("gemm", dtype="f16"))
        self.assertEqual((plain.counters, plain.counters_left({})), ((), ""))
        self.assertIs(plain.launcher(call, outs), call)

    def test_a_counter_left_non_zero_fails_the_case(self):
        # worker.run_case on the CPU with a stand-in kernel that computes the right outputs:
        # the case passes when it leaves Done 0, and fails, naming the counter, when it does
        # not (after the checked call, or only after the timed launches).
        import worker
        p = self.last_block_problem()
        shape = self.LAST_SMALL

        class Ctx:
            timeout_s = 10

            def wait(self):
                pass

            class timer:
                @staticmethod
                def measure(fn, timeout_s, **kw):
                    for _ in range(3):
                        fn()
                    return worker_timing

        from timing import Timing
        worker_timing = Timing(1.0, 1.0, 1.0, 3, False)

        def setup_with(leave):
            class FakeSetup(worker.Setup):
                def __init__(self, item, ctx):
                    self.build, self.problem, self.shape = p.build, p, shape
                    self.inputs = p.inputs(shape, cpu_gen())
                    self.outputs = p.outputs(shape, device="cpu")
                    ref = p.reference(self.inputs, shape, "float64")
                    calls = []

                    def kernel():
                        calls.append(1)
                        for name, r in ref.items():
                            self.outputs[name].copy_(r.to(self.outputs[name].dtype))
                        self.outputs["Done"].fill_(leave(len(calls)))
                        return 0
                    self.call = p.launcher(kernel, self.outputs)
            return FakeSetup

        item = {"name": "t", "reference": "float64", "tolerance": 1e-4}
        for leave, passed, reason in ((lambda n: 0, True, "relative error"),
                                      (lambda n: 1, False, "^last_block counter.*Done: 3 of 3 non-zero"),
                                      (lambda n: int(n > 1), False, "Done.*after the timed launches")):
            with unittest.mock.patch.object(worker, "Setup", setup_with(leave)):
                record = worker.run_case(item, Ctx())
            self.assertEqual(record["passed"], passed, record["reason"])
            self.assertRegex(record["reason"], reason)

    def test_atomic_splitk_reference(self):
        p = problems.problem_for(build("atomic_splitk", dtype="f16", splits="3", block_M="2",
                                       block_N="2"))
        shape = {"M": 3, "N": 5, "K": 4}
        ins = p.inputs(shape, cpu_gen())
        ref = p.reference(ins, shape, "float64")
        c = ins["A"].double() @ ins["B"].double()
        self.assertTrue(torch.equal(ref["C_frag"], c) and torch.equal(ref["C_shared"], c))
        self.assertTrue(torch.allclose(ref["RowSum"], c.sum(1)))
        self.assertEqual(ref["Blocks"].tolist(), [6.0, 6.0, 6.0])   # 2 x 3 blocks per split

    def test_fill_regions_reference(self):
        p = problems.problem_for(build("fill_regions", dtype="f32", block_M="4", block_N="4",
                                       strip="1"))
        self.assertEqual(p.scalars({}), [p.VALUE])
        x = torch.zeros(6, 6)
        ref = p.reference({"X": x}, {"M": 6, "N": 6}, "float64")
        v = p.VALUE
        row_in_top_half = [True, True, False, False, True, True]
        for i in range(6):
            for j in range(6):
                want = -v if j % 4 == 0 else (v if row_in_top_half[i] else 0.0)
                self.assertEqual(ref["Y"][i, j].item(), want, (i, j))
        self.assertTrue(bool((ref["Z"] == 2 * v).all()))

    def test_dequant_unpacks_low_nibble_first_in_twos_complement(self):
        p = problems.problem_for(build("dequant_w4a16", dtype="f16", group_size="2"))
        q = torch.tensor([[-8, 7, -1, 0], [3, -4, 5, -6]])
        nibbles = (q & 0xF).to(torch.uint8)
        packed = nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)
        scales = torch.tensor([[1.0, 0.5], [2.0, 0.25]], dtype=torch.float16)
        w = p.weights(packed, scales, torch.float64)
        want = q.double() * torch.tensor([[1.0, 1.0, 0.5, 0.5], [2.0, 2.0, 0.25, 0.25]])
        self.assertTrue(torch.equal(w, want))
        shapes = p.tensor_shapes({"M": 3, "N": 2, "K": 4})
        self.assertEqual((shapes["B"], shapes["Scales"]), ((2, 2), (2, 2)))
        self.assertEqual(p.inputs({"M": 3, "N": 2, "K": 4}, cpu_gen())["B"].dtype, torch.uint8)
        with self.assertRaisesRegex(ValueError, "group_size"):
            p.tensor_shapes({"M": 3, "N": 2, "K": 5})

    def test_dequant_cublas_peer_is_the_reference(self):
        # The bench's W4A16 peer multiplies by the same dequantized values (in f32 here, so
        # only f32 roundings separate it from the float64 reference).
        p = problems.problem_for(build("dequant_w4a16", dtype="f32", group_size="4"))
        shape = {"M": 3, "N": 5, "K": 8}
        ins = p.inputs(shape, cpu_gen(2))
        want = p.reference(ins, shape, "float64")["C"]
        got = measure.dequantized_cublas(ins, p).run()
        self.assertTrue(torch.allclose(got.double(), want, rtol=1e-5, atol=1e-6))

    # samples/fused_moe.tl: 7 tokens, 4 experts, top 2, routing blocks of 4 slots.
    MOE_SMALL = {"T": 7, "K": 8, "E": 4, "N": 5}

    def moe(self, weighted="false", dtype="f32"):
        return problems.problem_for(build("fused_moe", dtype=dtype, topk="2", block_M="4",
                                          mul_routed_weight=weighted))

    def test_moe_routing_is_vllms_moe_align_block_size(self):
        p = self.moe()
        ins = p.inputs(self.MOE_SMALL, cpu_gen(5))
        ids, experts, used = ins["SortedIds"], ins["ExpertIds"], int(ins["NumPostPadded"][0])
        self.assertEqual(tuple(ids.shape), (14 + 4 * 3,))          # T * topk + E * (block_M - 1)
        self.assertEqual(tuple(experts.shape), (-(-26 // 4),))
        self.assertEqual(used % 4, 0)
        self.assertTrue(bool((ids[used:] == 14).all()))              # unused entries: padding
        slots = ids[:used][ids[:used] < 14]
        self.assertEqual(sorted(slots.tolist()), list(range(14)))   # every slot exactly once
        for block in range(used // 4):
            mine = ids[block * 4:(block + 1) * 4]
            self.assertTrue(bool((mine[mine < 14] >= 0).all()))
            # Blocks of one expert follow each other in expert order, padding only at the end
            # of an expert's last block.
            if block:
                self.assertLessEqual(int(experts[block - 1]), int(experts[block]))
        per_token = p.slot_experts(ins, self.MOE_SMALL).view(7, 2)
        self.assertTrue(bool((per_token[:, 0] != per_token[:, 1]).all()))   # distinct experts

    def test_moe_reference_by_definition(self):
        for weighted in ("false", "true"):
            p = self.moe(weighted)
            ins = p.inputs(self.MOE_SMALL, cpu_gen(6))
            out = p.reference(ins, self.MOE_SMALL, "float64")["C"]
            experts = p.slot_experts(ins, self.MOE_SMALL)
            x, w, tw = ins["X"].double(), ins["W"].double(), ins["TopkWeights"].double()
            for s in range(14):
                want = w[experts[s]] @ x[s // 2] * (tw[s // 2, s % 2] if weighted == "true" else 1.0)
                self.assertTrue(torch.allclose(out[s], want), (weighted, s))

    def test_moe_torch_peer_is_the_reference(self):
        for weighted in ("false", "true"):
            p = self.moe(weighted)
            ins = p.inputs(self.MOE_SMALL, cpu_gen(7))
            want = p.reference(ins, self.MOE_SMALL, "float64")["C"]
            got = measure.fused_moe_torch(ins, p, self.MOE_SMALL)()
            self.assertTrue(torch.allclose(got.double(), want, rtol=1e-5, atol=1e-6), weighted)

    def test_moe_bytes_and_flops(self):
        # 2 of 4 experts for one token (only those weights are read), 4 of 4 for seven.
        p = self.moe(dtype="f16")
        one = {"T": 1, "K": 8, "E": 4, "N": 5}
        em = 2 + 4 * 3
        self.assertEqual(p.min_bytes(one), 2 * (8 + 2 * 5 * 8 + 2 * 5) + 4 * (em + -(-em // 4) + 1 + 2))
        self.assertEqual(p.flops(self.MOE_SMALL), 2 * 14 * 5 * 8)
        self.assertEqual(p.min_bytes(self.MOE_SMALL) - 4 * (26 + 7 + 1 + 14),
                         2 * (7 * 8 + 4 * 5 * 8 + 14 * 5))

    def test_mla_reference_by_definition(self):
        p = problems.problem_for(build("mla", dtype="f16", dim="8", pe_dim="4"))
        shape = {"batch": 2, "heads": 4, "seqlen_kv": 5, "kv_heads": 2, "dim": 8, "pe_dim": 4}
        ins = p.inputs(shape, cpu_gen())
        out = p.reference(ins, shape, "float64")["O"]
        q, q_pe, kv, k_pe = (ins[n].double() for n in ("Q", "Q_pe", "KV", "K_pe"))
        for b in range(2):
            for h in range(4):
                g = h // 2
                s = (kv[b, :, g] @ q[b, h] + k_pe[b, :, g] @ q_pe[b, h]) / math.sqrt(12)
                want = torch.softmax(s, 0) @ kv[b, :, g]
                self.assertTrue(torch.allclose(out[b, h], want), (b, h))

    MLA_SMALL = {"batch": 2, "heads": 4, "seqlen_kv": 8, "kv_heads": 2, "dim": 8, "pe_dim": 4}

    def test_mla_bytes_and_flops_by_hand(self):
        # What the roofline floor counts (test_runner.RooflineFloor takes it from there): each
        # tensor once, Q [2, 4, 8], Q_pe [2, 4, 4], KV [2, 8, 2, 8], K_pe [2, 8, 2, 4] and
        # O [2, 4, 8] in f16; per (sequence, head, cache entry) a 12-long score dot product and
        # an 8-wide update of the output, 2 FLOPs per multiply-add.
        p = problems.problem_for(build("mla", dtype="f16", dim="8", pe_dim="4"))
        self.assertEqual(p.min_bytes(self.MLA_SMALL), 2 * (64 + 32 + 256 + 128 + 64))
        self.assertEqual(p.flops(self.MLA_SMALL), 2 * 2 * 4 * 8 * (8 + 4) + 2 * 2 * 4 * 8 * 8)

    def test_mla_torch_peer_is_the_reference_batched(self):
        # In f32 the peer's only roundings are f32 ones, so it must agree with the float64
        # reference closely; two KV heads make it regroup the cache.
        p = problems.problem_for(build("mla", dtype="f32", dim="8", pe_dim="4"))
        ins = p.inputs(self.MLA_SMALL, cpu_gen(3))
        want = p.reference(ins, self.MLA_SMALL, "float64")["O"]
        got = measure.mla_decode_torch(ins)()
        self.assertEqual(got.shape, want.shape)
        self.assertTrue(torch.allclose(got.double(), want, rtol=1e-4, atol=1e-5))

    # samples/flash_decoding.tl: 3 sequences, 2 KV heads of 3 query heads each, 7 keys, dim 4.
    DECODE_SMALL = {"batch": 3, "heads": 6, "kv_heads": 2, "seqlen": 7, "dim": 4}

    @staticmethod
    def decode_problem(dtype="f16", block_h="64"):
        return problems.problem_for(build("flash_decoding", dtype=dtype, dim="4", num_splits="5",
                                          block_H=block_h))

    def test_decode_reference_by_definition(self):
        p = self.decode_problem()
        ins = p.inputs(self.DECODE_SMALL, cpu_gen())
        self.assertEqual({k: tuple(v.shape) for k, v in ins.items()},
                         {"Q": (3, 6, 4), "K": (3, 2, 7, 4), "V": (3, 2, 7, 4)})
        outs = p.outputs(self.DECODE_SMALL, device="cpu")
        self.assertEqual({k: (tuple(v.shape), v.dtype) for k, v in outs.items()},
                         {"Partial": ((3, 6, 5, 4), torch.float32), "LSE": ((3, 6, 5), torch.float32),
                          "Done": ((3, 2), torch.int32), "O": ((3, 6, 4), torch.float16)})
        # The counters (a block of heads per KV head here) start at 0, not poisoned.
        self.assertEqual(outs["Done"].tolist(), [[0, 0]] * 3)
        self.assertEqual(p.counters_left(outs), "")
        # Fewer heads per block: ceildiv(3, 2) = 2 blocks of each KV head's heads, a counter each.
        self.assertEqual(self.decode_problem(block_h="2").tensor_shapes(self.DECODE_SMALL)["Done"], (3, 4))
        out = p.reference(ins, self.DECODE_SMALL, "float64")["O"]
        q, k, v = (ins[n].double() for n in ("Q", "K", "V"))
        for b in range(3):
            for h in range(6):
                g = h // 3   # query heads 0-2 read KV head 0, 3-5 KV head 1
                want = torch.softmax(k[b, g] @ q[b, h] / 2.0, 0) @ v[b, g]
                self.assertTrue(torch.allclose(out[b, h], want), (b, h))
        with self.assertRaisesRegex(ValueError, "multiple of kv_heads"):
            p.tensor_shapes({**self.DECODE_SMALL, "heads": 5})

    def test_decode_bytes_leave_out_the_scratch(self):
        # Q [3, 6, 4], K and V [3, 2, 7, 4], O [3, 6, 4] in f16; not Partial nor LSE (f32), nor
        # the counters Done.
        p = self.decode_problem()
        self.assertEqual(p.min_bytes(self.DECODE_SMALL), 2 * (72 + 2 * 168 + 72))
        self.assertEqual(p.flops(self.DECODE_SMALL), 4 * 3 * 6 * 7 * 4)

    def test_decode_torch_peer_is_the_reference(self):
        p = self.decode_problem(dtype="f32")
        ins = p.inputs(self.DECODE_SMALL, cpu_gen(3))
        want = p.reference(ins, self.DECODE_SMALL, "float64")["O"]
        peers = {impl.key: impl for impl in measure.decode_peers(ins)}
        self.assertEqual(list(peers), ["sdpa", "torch"])
        got = peers["torch"].run()
        self.assertEqual(got.shape, want.shape)
        self.assertTrue(torch.allclose(got.double(), want, rtol=1e-4, atol=1e-5))
        try:  # SDPA's enable_gqa needs torch 2.5 (the GPU machine has it)
            got = peers["sdpa"].run()
        except (AttributeError, TypeError):
            return
        self.assertTrue(torch.allclose(got.double(), want, rtol=1e-4, atol=1e-5))

    def test_decode_operation_tensors_in_order(self):
        # The kernel's tensors in its C ABI order: the scratch and the counters before O, the
        # result.
        p = self.decode_problem()
        ins = p.inputs(self.DECODE_SMALL, cpu_gen())
        outs = p.outputs(self.DECODE_SMALL, device="cpu")
        ordered = problems.ordered_tensors(p.spec, ins, outs)
        self.assertEqual([tuple(t.shape) for t in ordered],
                         [(3, 6, 4), (3, 2, 7, 4), (3, 2, 7, 4), (3, 6, 5, 4), (3, 6, 5), (3, 2), (3, 6, 4)])
        self.assertIs(ordered[6], outs[p.spec.result])
        self.assertIs(ordered[5], outs["Done"])
        # The contract's mutations break the first input and the first output (poisoned, so a
        # launch would show).
        names = [m.name for m in contract.mutations(p.spec, ordered)]
        self.assertIn("Q with a null data pointer", names)
        self.assertIn("Partial with one more row", names)


@unittest.skipIf(torch is None, "torch is not installed")
class AttentionSink(unittest.TestCase):
    """samples/attention_sink.tl's reference and its bench peers against the definition."""
    SHAPE = {"batch": 2, "heads": 6, "kv_heads": 2, "seq_len": 37, "dim": 8}   # groups = 3
    VARIANTS = (("false", "0"), ("true", "0"), ("true", "5"), ("false", "7"))

    def problem(self, causal, window, dtype="f16"):
        return problems.problem_for(build("attention_sink", dtype=dtype, dim="8", causal=causal,
                                          window=window))

    @staticmethod
    def by_definition(ins, causal, window):
        """O[b, h, i] = sum_j exp(s_j - m) V_j / (exp(sink_h - m) + sum_j exp(s_j - m)) over
        the keys j query i sees, m the largest of the s_j and the sink, one row at a time."""
        q, k, v, sinks = (ins[n].double() for n in ("Q", "K", "V", "Sinks"))
        batch, heads, seq, dim = q.shape
        groups = heads // k.shape[1]
        out = torch.empty(batch, heads, seq, dim, dtype=torch.float64)
        for b in range(batch):
            for h in range(heads):
                g = h // groups
                for i in range(seq):
                    js = [j for j in range(seq) if (not causal or j <= i) and
                          (not window or (i - window < j and (causal or j < i + window)))]
                    s = torch.stack([q[b, h, i] @ k[b, g, j] for j in js]) / math.sqrt(dim)
                    m = max(float(s.max()), float(sinks[h]))
                    e = torch.exp(s - m)
                    out[b, h, i] = (e[:, None] * v[b, g, js]).sum(0) / (math.exp(sinks[h] - m) + e.sum())
        return out

    def test_reference_by_definition_in_chunks_of_heads(self):
        saved = problems._ATTENTION_SCORE_BYTES
        problems._ATTENTION_SCORE_BYTES = 4 * 37 * 37 * 8   # 4 heads per chunk of 6
        try:
            for causal, window in self.VARIANTS:
                with self.subTest(causal=causal, window=window):
                    p = self.problem(causal, window)
                    ins = p.inputs(self.SHAPE, cpu_gen())
                    self.assertEqual(ins["Sinks"].dtype, torch.float32)
                    self.assertEqual(tuple(ins["K"].shape), (2, 2, 37, 8))
                    ref = p.reference(ins, self.SHAPE, "float64")["O"]
                    want = self.by_definition(ins, causal == "true", int(window))
                    self.assertLess(compare(ref, want).rel, 1e-12)
        finally:
            problems._ATTENTION_SCORE_BYTES = saved

    def test_the_sinks_matter(self):
        # The inputs' sinks take a good share of the denominator: leaving them out changes the
        # output by far more than the tolerance (a kernel without them cannot pass).
        p = self.problem("true", "0")
        ins = p.inputs(self.SHAPE, cpu_gen(1))
        with_sinks = p.reference(ins, self.SHAPE, "float64")["O"]
        without = p.reference({**ins, "Sinks": torch.full((6,), -math.inf)}, self.SHAPE,
                              "float64")["O"]
        self.assertGreater(compare(without, with_sinks).rel, 0.2)

    def test_flops_count_the_visible_pairs(self):
        shape = dict(self.SHAPE, seq_len=4)
        # 4 keys: all 16 pairs, 10 causal ones counted as 8 (half of S^2, the convention), and
        # with a window of 2 the 7 pairs j in (i - 2, i].
        for causal, window, pairs in (("false", "0", 16), ("true", "0", 8), ("true", "2", 7)):
            self.assertEqual(self.problem(causal, window).flops(shape), 4 * 2 * 6 * 8 * pairs)

    def test_torch_peer_is_the_reference(self):
        # In f32 the peer's only roundings are f32 ones.
        for causal, window in self.VARIANTS:
            with self.subTest(causal=causal, window=window):
                p = self.problem(causal, window, dtype="f32")
                ins = p.inputs(self.SHAPE, cpu_gen(2))
                want = p.reference(ins, self.SHAPE, "float64")["O"]
                got = measure.attention_sink_torch(ins, p)()
                self.assertEqual(got.shape, want.shape)
                self.assertLess(compare(got, want).rel, 1e-5)

    @staticmethod
    def sdpa_as_documented(q, k, v, attn_mask=None):
        """F.scaled_dot_product_attention's definition with an additive float mask (torch < 2.0
        has no SDPA; the test then checks the peer's extra key and mask against this)."""
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + attn_mask
        return torch.softmax(scores, dim=-1) @ v

    def test_sdpa_peer_is_the_reference(self):
        sdpa = getattr(measure.F, "scaled_dot_product_attention", None)
        for name, fn in (("torch", sdpa), ("definition", self.sdpa_as_documented)):
            if fn is None:
                continue
            for causal, window in self.VARIANTS:
                with self.subTest(sdpa=name, causal=causal, window=window):
                    p = self.problem(causal, window, dtype="f32")
                    ins = p.inputs(self.SHAPE, cpu_gen(3))
                    want = p.reference(ins, self.SHAPE, "float64")["O"]
                    saved, measure.F.scaled_dot_product_attention = sdpa, fn
                    try:
                        got = measure.attention_sink_sdpa(ins, p)()
                    finally:
                        if saved is None:
                            del measure.F.scaled_dot_product_attention
                        else:
                            measure.F.scaled_dot_product_attention = saved
                    self.assertEqual(got.shape, want.shape)
                    self.assertLess(compare(got, want).rel, 1e-5)


@unittest.skipIf(torch is None, "torch is not installed")
class GatedDelta(unittest.TestCase):
    """The float64 recurrence the GPU cases check against, and the chunked algorithm of the
    sample (the benchmark's torch peer and reference), agree: the maths of the sample's header
    is right, and so is each reference."""

    def setUp(self):
        self.p = problems.problem_for(build("gated_delta", dtype="f16", dk="16", dv="8"))

    def test_inputs_are_what_the_kernel_requires(self):
        x = self.p.inputs({"batch": 2, "heads": 3, "seq_len": 70, "dk": 16, "dv": 8}, cpu_gen(3))
        self.assertEqual(tuple(x["Q"].shape), (2, 70, 3, 16))
        self.assertEqual(tuple(x["G"].shape), (2, 70, 3))
        self.assertTrue(torch.allclose(x["K"].float().norm(dim=-1), torch.ones(2, 70, 3), atol=2e-3))
        self.assertTrue(bool((x["G"] <= 0).all()) and bool(((x["Beta"] > 0) & (x["Beta"] < 1)).all()))
        self.assertEqual(x["G"].dtype, torch.float32)
        self.assertEqual(set(self.p.outputs({"batch": 2, "heads": 3, "seq_len": 70, "dk": 16, "dv": 8},
                                            device="cpu")), {"Gc", "W", "U", "O"})

    def test_chunked_equals_the_recurrence(self):
        for seq, chunk in ((64, 64), (150, 64), (37, 16), (5, 1)):
            x = self.p.inputs({"batch": 2, "heads": 2, "seq_len": seq, "dk": 16, "dv": 8}, cpu_gen(seq))
            want = problems.gated_delta_recurrence(x, torch.float64)
            got = problems.gated_delta_chunked(x, torch.float64, chunk=chunk)
            self.assertEqual(tuple(got.shape), (2, seq, 2, 8))
            self.assertLess(float((got - want).abs().max()), 1e-10, (seq, chunk))

    def test_the_state_carries_across_chunks(self):
        # With no decay and beta = 1 the first chunk's keys still shape the second chunk's
        # outputs: dropping the state would change them.
        x = self.p.inputs({"batch": 1, "heads": 1, "seq_len": 128, "dk": 16, "dv": 8}, cpu_gen(7))
        x["G"] = torch.zeros_like(x["G"])
        full = problems.gated_delta_recurrence(x, torch.float64)[:, 64:]
        tail = {n: t[:, 64:] for n, t in x.items()}
        self.assertGreater(float((problems.gated_delta_recurrence(tail, torch.float64) - full).abs().max()), 1e-3)


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

    def test_no_stride_mutation_over_a_single_element(self):
        # K = 1: A's rows hold one element, so an innermost stride of 2 is still contiguous.
        p = problems.problem_for(build("gemm", dtype="f16"))
        shape = {"M": 2, "N": 3, "K": 1}
        ins, outs = p.inputs(shape, cpu_gen()), p.outputs(shape, device="cpu")
        names = [m.name for m in contract.mutations(p.spec, problems.ordered_tensors(p.spec, ins, outs))]
        self.assertEqual(len(names), 4)
        self.assertNotIn("A with innermost stride 2", names)

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
