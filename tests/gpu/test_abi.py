"""Unit tests of the ctypes side of the C ABI (no GPU, no torch).

The layout of tlc_tensor_view and the argument passing are checked against the real header by
compiling a small C probe with the host compiler; the launcher contract is checked against the
naive self-test GEMM compiled with nvcc (its checks run before any CUDA call, so no GPU is
needed). Both are skipped where the compiler is missing.
"""
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import abi  # noqa: E402
import cases  # noqa: E402
from abi import TensorView  # noqa: E402
from cases import KernelSpec, Launch, Param  # noqa: E402

RUNTIME_H = os.path.join(ROOT, "runtime", "tlc", "runtime.h")
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
CC = shutil.which("cc")


class FakeTensor:
    """Duck-typed like a torch tensor, as far as TensorView.of looks."""

    def __init__(self, ptr, dtype, shape, stride):
        self.dtype, self.shape, self._ptr, self._stride = dtype, shape, ptr, stride

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride


class Codes(unittest.TestCase):
    def test_dtype_and_status_codes_match_runtime_h(self):
        with open(RUNTIME_H) as f:
            header = f.read()
        enum = {name.lower(): int(value) for name, value in
                re.findall(r"TLC_([A-Z0-9]+)\s*=\s*(\d+)\s*,", header.split("tlc_dtype;")[0])}
        self.assertEqual(enum, abi.DTYPE_CODES)
        self.assertIn(f"TLC_ERROR_INVALID_ARGUMENT = {abi.TLC_ERROR_INVALID_ARGUMENT}", header)
        self.assertIn(f"TLC_ERROR_LAUNCH = {abi.TLC_ERROR_LAUNCH}", header)
        self.assertIn(f"#define TLC_MAX_RANK {abi.MAX_RANK}", header)


class Views(unittest.TestCase):
    def test_layout(self):
        self.assertEqual(ctypes.sizeof(TensorView), 8 + 4 + 4 + 2 * 8 * 8)
        self.assertEqual(TensorView.shape.offset, 16)
        self.assertEqual(TensorView.strides.offset, 16 + 64)

    def test_view_of_a_tensor(self):
        t = FakeTensor(0xABC0, "torch.bfloat16", (2, 3, 5), (15, 5, 1))
        v = TensorView.of(t)
        self.assertEqual((v.data, v.dtype, v.rank), (0xABC0, abi.DTYPE_CODES["bf16"], 3))
        self.assertEqual(list(v.shape[:3]), [2, 3, 5])
        self.assertEqual(list(v.strides[:3]), [15, 5, 1])
        self.assertEqual(list(v.shape[3:]), [0] * 5)

    def test_view_of_packed_bytes(self):
        # uint8 [4, 3, 8] bytes of an i4 [4, 3, 16] tensor, rows padded to 10 bytes: the view
        # counts 4-bit elements.
        t = abi.mark_packed(FakeTensor(0x100, "torch.uint8", (4, 3, 8), (30, 10, 1)), "i4")
        v = TensorView.of(t)
        self.assertEqual((v.dtype, v.rank), (abi.DTYPE_CODES["i4"], 3))
        self.assertEqual(list(v.shape[:3]), [4, 3, 16])
        self.assertEqual(list(v.strides[:3]), [60, 20, 1])
        # A strided innermost dimension stays visible (doubled) for the launcher to reject.
        u = TensorView.of(abi.mark_packed(FakeTensor(0x100, "torch.uint8", (2, 4), (8, 2)), "u4"))
        self.assertEqual((u.dtype, list(u.shape[:2]), list(u.strides[:2])),
                         (abi.DTYPE_CODES["u4"], [2, 8], [16, 4]))
        with self.assertRaisesRegex(ValueError, "not a packed dtype"):
            abi.mark_packed(FakeTensor(1, "torch.uint8", (2,), (1,)), "u8")

    def test_rejects_what_the_struct_cannot_hold(self):
        with self.assertRaisesRegex(ValueError, "no tlc dtype"):
            TensorView.of(FakeTensor(1, "torch.complex64", (1,), (1,)))
        with self.assertRaisesRegex(ValueError, "TLC_MAX_RANK"):
            TensorView.make(1, "f16", (1,) * 9, (1,) * 9)
        with self.assertRaisesRegex(ValueError, "differ in rank"):
            TensorView.make(1, "f16", (1, 2), (1,))


GEMM_PROTOTYPE = """
// int tlc_commented(float x) in a comment is not an entry point
extern "C" int tlc_gemm(const tlc_tensor_view *A, const tlc_tensor_view *B,
                        const tlc_tensor_view *C, void *stream, char *error, size_t error_size) {
  return 0;
}
extern "C" int tlc_scaled(const tlc_tensor_view *X, float scale, int64_t n, bool flag,
                          void *stream, char *error, size_t error_size);
"""


class Prototypes(unittest.TestCase):
    def test_finds_entry_points_and_scalar_types(self):
        found = abi.find_prototypes(GEMM_PROTOTYPE)
        self.assertEqual(found, {"gemm": abi.Signature(3, ()),
                                 "scaled": abi.Signature(1, ("f32", "i64", "bool"))})

    def test_check_against_specs(self):
        self.assertIsNone(abi.check_prototype(GEMM_PROTOTYPE, cases.KERNELS["gemm"]))
        self.assertRegex(abi.check_prototype(GEMM_PROTOTYPE, cases.KERNELS["softmax"]),
                         r"no entry point tlc_softmax \(found: tlc_gemm, tlc_scaled\)")
        wrong = GEMM_PROTOTYPE.replace("const tlc_tensor_view *C,", "")
        self.assertRegex(abi.check_prototype(wrong, cases.KERNELS["gemm"]),
                         r"takes 2 tensor\(s\).*expects 3 tensor\(s\)")

    def test_rejects_a_malformed_tail_or_order(self):
        with self.assertRaisesRegex(abi.PrototypeError, "last parameters"):
            abi.find_prototypes("int tlc_k(const tlc_tensor_view *A, void *s, char *e)")
        with self.assertRaisesRegex(abi.PrototypeError, "tensor parameter after a scalar"):
            abi.find_prototypes("int tlc_k(float x, const tlc_tensor_view *A, void *s, "
                                "char *e, size_t n)")
        with self.assertRaisesRegex(abi.PrototypeError, "unrecognized parameter"):
            abi.find_prototypes("int tlc_k(struct foo f, void *s, char *e, size_t n)")

    def test_every_launch_of_an_operation_is_checked(self):
        spec = cases.KERNELS["gated_delta"]
        prepare = ("int tlc_gated_delta_prepare(const tlc_tensor_view *K, const tlc_tensor_view *V, "
                   "const tlc_tensor_view *G, const tlc_tensor_view *Beta, const tlc_tensor_view *Gc, "
                   "const tlc_tensor_view *W, const tlc_tensor_view *U, void *stream, char *error, "
                   "size_t error_size);")
        output = ("int tlc_gated_delta_output(const tlc_tensor_view *Q, const tlc_tensor_view *K, "
                  "const tlc_tensor_view *Gc, const tlc_tensor_view *W, const tlc_tensor_view *U, "
                  "const tlc_tensor_view *O, void *stream, char *error, size_t error_size);")
        self.assertIsNone(abi.check_prototype(prepare + output, spec))
        self.assertRegex(abi.check_prototype(prepare, spec),
                         r"no entry point tlc_gated_delta_output \(found: tlc_gated_delta_prepare\)")
        self.assertRegex(abi.check_prototype(prepare + output.replace(
            "const tlc_tensor_view *Gc, ", ""), spec),
            r"tlc_gated_delta_output takes 5 tensor\(s\).*expects 6 tensor\(s\)")
        # Split-KV decoding: one entry point since last_block, the counters before O.
        decode = ("int tlc_flash_decoding(const tlc_tensor_view *Q, const tlc_tensor_view *K, "
                  "const tlc_tensor_view *V, const tlc_tensor_view *Partial, "
                  "const tlc_tensor_view *LSE, const tlc_tensor_view *Done, const tlc_tensor_view *O, "
                  "void *stream, char *error, size_t error_size);")
        self.assertIsNone(abi.check_prototype(decode, cases.KERNELS["flash_decoding"]))

    def test_the_selftest_gemm_declares_the_gemm_abi(self):
        with open(os.path.join(HERE, "selftest", "naive_gemm.cu")) as f:
            self.assertIsNone(abi.check_prototype(f.read(), cases.KERNELS["gemm"]))


PROBE_C = r"""
#include <stdbool.h>
#include <stdio.h>
#include "tlc/runtime.h"
int tlc_probe(const tlc_tensor_view *A, const tlc_tensor_view *B, float scale, int64_t n,
              bool flag, void *stream, char *error, size_t error_size) {
  snprintf(error, error_size, "%lx %d %d %lld,%lld %lld,%lld|%d %lld %lld|%g %lld %d %lx",
           (unsigned long)A->data, A->dtype, A->rank, (long long)A->shape[0],
           (long long)A->shape[1], (long long)A->strides[0], (long long)A->strides[1], B->rank,
           (long long)B->shape[0], (long long)B->strides[0], scale, (long long)n, (int)flag,
           (unsigned long)stream);
  return 7;
}
"""

PROBE_SPEC = KernelSpec("probe", "", "probe", (Param("A", "in"), Param("B", "out"),
                                               Param("scale", "scalar", "f32"),
                                               Param("n", "scalar", "i64"),
                                               Param("flag", "scalar", "bool")), (), ())


def _build_c_library(folder: str, stem: str, source: str) -> str:
    """Compiles C `source` against runtime/ into folder/stem.so; returns its path."""
    src, so = os.path.join(folder, stem + ".c"), os.path.join(folder, stem + ".so")
    with open(src, "w") as f:
        f.write(source)
    subprocess.run([CC, "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-I",
                    os.path.join(ROOT, "runtime"), src, "-o", so], check=True)
    return so


@unittest.skipUnless(CC, "no C compiler")
class CallThroughC(unittest.TestCase):
    """Arguments as the C side of the real header sees them."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.entry = abi.load_entry(_build_c_library(cls.tmp.name, "probe", PROBE_C), PROBE_SPEC)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_views_scalars_and_stream_arrive_intact(self):
        a = TensorView.make(0x1230, "bf16", (4, 8), (16, 1))
        b = TensorView.make(0x4560, "f32", (9,), (1,))
        status = self.entry([a, b], [0.5, 1 << 40, True], stream=0x789)
        self.assertEqual(status.code, 7)
        self.assertEqual(status.message, "1230 1 2 4,8 16,1|1 9 1|0.5 1099511627776 1 789")

    def test_bind_packs_once(self):
        a = TensorView.make(0x10, "f16", (1, 1), (1, 1))
        call = self.entry.bind([a, a], [1.0, 2, False], None)
        self.assertEqual((call(), call()), (7, 7))
        self.assertTrue(self.entry.message().startswith("10 0 2 1,1"))

    def test_wrong_argument_counts_are_caught_in_python(self):
        with self.assertRaisesRegex(ValueError, "expected 2 views and 3 scalars"):
            self.entry.bind([TensorView()], [1.0, 2, False])


# Two entry points that one operation calls in turn (KernelSpec.then): each logs its call and
# returns the code probe_codes() set for it.
CHAIN_C = r"""
#include <stdio.h>
#include <string.h>
#include "tlc/runtime.h"
static char log_[512];
static int codes_[2];
void probe_codes(int first, int second) { codes_[0] = first; codes_[1] = second; log_[0] = 0; }
const char *probe_log(void) { return log_; }
int tlc_first(const tlc_tensor_view *X, const tlc_tensor_view *T, float s, void *stream,
              char *error, size_t error_size) {
  size_t n = strlen(log_);
  snprintf(log_ + n, sizeof log_ - n, "first(%lx,%lx,%g,%lx) ", (unsigned long)X->data,
           (unsigned long)T->data, s, (unsigned long)stream);
  snprintf(error, error_size, "first says %d", codes_[0]);
  return codes_[0];
}
int tlc_second(const tlc_tensor_view *T, const tlc_tensor_view *Y, void *stream, char *error,
               size_t error_size) {
  size_t n = strlen(log_);
  snprintf(log_ + n, sizeof log_ - n, "second(%lx,%lx,%lx)", (unsigned long)T->data,
           (unsigned long)Y->data, (unsigned long)stream);
  snprintf(error, error_size, "second says %d", codes_[1]);
  return codes_[1];
}
"""

CHAIN_SPEC = KernelSpec("chain", "", "first",
                        (Param("X", "in"), Param("T", "out"), Param("s", "scalar", "f32")), (), (),
                        then=(Launch("second", (Param("T", "in"), Param("Y", "out"))),))


@unittest.skipUnless(CC, "no C compiler")
class OperationThroughC(unittest.TestCase):
    """A spec with `then` launches: one call runs the entry points in order, each with its own
    arguments, and stops at the first that fails."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        so = _build_c_library(cls.tmp.name, "chain", CHAIN_C)
        cls.lib = ctypes.CDLL(so)
        cls.lib.probe_log.restype = ctypes.c_char_p
        cls.entry = abi.load_entry(so, CHAIN_SPEC)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_with(self, first, second):
        # load_entry opens the library RTLD_LOCAL; the same file opened here shares its state.
        self.lib.probe_codes(first, second)
        views = [TensorView.make(0x100 * (i + 1), "f32", (2,), (1,)) for i in range(3)]
        status = self.entry(views, [0.5], stream=0x77)
        return status, self.lib.probe_log().decode()

    def test_the_operation_takes_the_union_of_the_launches_tensors(self):
        self.assertIsInstance(self.entry, abi.Operation)
        self.assertEqual([(p.name, p.role) for p in CHAIN_SPEC.tensors],
                         [("X", "in"), ("T", "out"), ("Y", "out")])
        self.assertEqual(CHAIN_SPEC.result, "Y")

    def test_both_run_in_order_with_their_own_arguments(self):
        status, log = self.run_with(0, 0)
        self.assertEqual((status.code, status.message), (0, ""))
        self.assertEqual(log, "first(100,200,0.5,77) second(200,300,77)")

    def test_a_failing_first_launch_stops_the_operation(self):
        status, log = self.run_with(1, 0)
        self.assertEqual((status.code, status.message), (1, "first says 1"))
        self.assertEqual(log, "first(100,200,0.5,77) ")

    def test_the_failing_launch_gives_the_message(self):
        status, log = self.run_with(0, 2)
        self.assertEqual((status.code, status.message), (2, "second says 2"))
        self.assertTrue(log.endswith("second(200,300,77)"))

    def test_wrong_argument_counts_are_caught_in_python(self):
        with self.assertRaisesRegex(ValueError, "tlc_first\\+tlc_second: expected 3 views and 1 scalars"):
            self.entry.bind([TensorView()], [1.0])


@unittest.skipUnless(NVCC, "no nvcc")
class NaiveGemmContract(unittest.TestCase):
    """The self-test GEMM rejects wrong tensors before touching the GPU, so its launcher
    contract can be checked here (valid calls would launch and are left to the GPU machine)."""

    @classmethod
    def setUpClass(cls):
        from build import make_job, run_job
        cls.tmp = tempfile.TemporaryDirectory()
        bundle = cls.tmp.name
        shutil.copytree(os.path.join(ROOT, "runtime"), os.path.join(bundle, "runtime"))
        os.makedirs(os.path.join(bundle, "stdlib"))
        shutil.copy(os.path.join(HERE, "selftest", "naive_gemm.cu"),
                    os.path.join(bundle, "gemm_f16.cu"))
        job = make_job("gemm_f16", bundle, os.path.join(bundle, "build"), "sm_90a", NVCC,
                       ("-Werror", "all-warnings"))
        result = run_job(job, timeout_s=300)
        if not result.ok:
            raise AssertionError(result.log)
        cls.job = job
        cls.entry = abi.load_entry(job.so, cases.KERNELS["gemm"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def views(self, **changes):
        base = {"A": ("f16", (4, 8), (8, 1)), "B": ("f16", (8, 3), (3, 1)),
                "C": ("f16", (4, 3), (3, 1))}
        base.update(changes)
        return [TensorView.make(0x1000 * (i + 1), *base[n]) for i, n in enumerate("ABC")]

    def expect_rejected(self, views, pattern):
        status = self.entry(views)
        self.assertEqual(status.code, abi.TLC_ERROR_INVALID_ARGUMENT, status.message)
        self.assertRegex(status.message, pattern)

    def test_rejections(self):
        self.expect_rejected(self.views(B=("f32", (8, 3), (3, 1))),
                             r"gemm: parameter 'B' must be f16, got f32")
        self.expect_rejected(self.views(A=("f16", (1, 4, 8), (32, 8, 1))),
                             r"parameter 'A' must have rank 2, got rank 3")
        self.expect_rejected(self.views(C=("f16", (5, 3), (3, 1))),
                             r"shape symbol 'M' is 4 but dimension 0 of 'C' is 5")
        self.expect_rejected(self.views(A=("f16", (4, 8), (16, 2))),
                             r"'A' must be contiguous in its last dimension \(stride 2\)")
        null = self.views()
        null[0].data = None
        self.expect_rejected(null, r"'A' has a null data pointer")

    def test_second_build_is_reused(self):
        from build import run_job
        self.assertTrue(self.job.up_to_date())
        self.assertTrue(run_job(self.job, timeout_s=300).reused)


TLC = os.path.join(ROOT, "build", "bin", "tlc")


@unittest.skipUnless(NVCC and os.access(TLC, os.X_OK), "no nvcc or no build/bin/tlc")
class PackedContract(unittest.TestCase):
    """tlc's launcher of a u4 kernel (tests/gpu/ops/packed_u4.tl) takes the logical view of the
    packed bytes (strides in 4-bit elements) and rejects an odd innermost extent or an odd row
    stride before touching the GPU; abi.mark_packed makes that view of a byte tensor."""

    @classmethod
    def setUpClass(cls):
        from build import make_job, run_job
        cls.tmp = tempfile.TemporaryDirectory()
        bundle = cls.tmp.name
        shutil.copytree(os.path.join(ROOT, "runtime"), os.path.join(bundle, "runtime"))
        shutil.copytree(os.path.join(ROOT, "stdlib"), os.path.join(bundle, "stdlib"))
        subprocess.run([TLC, os.path.join(ROOT, "tests", "gpu", "ops", "packed_u4.tl"), "--target", "sm_90a",
                        "-o", os.path.join(bundle, "packed_u4.cu")], check=True)
        job = make_job("packed_u4", bundle, os.path.join(bundle, "build"), "sm_90a", NVCC, ())
        result = run_job(job, timeout_s=300)
        if not result.ok:
            raise AssertionError(result.log)
        cls.entry = abi.load_entry(job.so, cases.KERNELS["packed_u4"])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def expect_rejected(self, views, pattern):
        status = self.entry(views)
        self.assertEqual(status.code, abi.TLC_ERROR_INVALID_ARGUMENT, status.message)
        self.assertRegex(status.message, pattern)

    def test_rejections(self):
        def views(q, qc=("u4", (4, 8), (8, 1))):
            return [TensorView.make(0x1000, *q), TensorView.make(0x2000, "f16", (4, 8), (8, 1)),
                    TensorView.make(0x3000, *qc)]
        self.expect_rejected(views(("u4", (4, 7), (8, 1)), ("u4", (4, 7), (8, 1))),
                             r"packed_u4: parameter 'Q' is u4 \(packed two per byte\) but its innermost "
                             r"extent 7 is odd \(shape \[4, 7\]\)")
        self.expect_rejected(views(("u4", (4, 8), (9, 1))),
                             r"parameter 'Q' is u4 \(packed two per byte\) but dimension 0 has the odd "
                             r"stride 9 \(rows must start on a byte\)")
        self.expect_rejected(views(("u8", (4, 8), (8, 1))), r"parameter 'Q' must be u4, got u8")

    def test_marked_bytes_give_the_logical_view(self):
        class Bytes:   # a uint8 [4, 4] tensor as far as TensorView.of looks
            dtype, shape = "torch.uint8", (4, 4)

            def data_ptr(self):
                return 0x1000

            def stride(self):
                return (4, 1)
        v = TensorView.of(abi.mark_packed(Bytes(), "u4"))
        self.assertEqual((v.dtype, list(v.shape[:2]), list(v.strides[:2])), (abi.DTYPE_CODES["u4"], [4, 8], [8, 1]))
        # The view passes the launcher's checks: what fails is the output E's shape, checked later.
        self.expect_rejected([v, TensorView.make(0x2000, "f16", (5, 8), (8, 1)),
                              TensorView.make(0x3000, "u4", (4, 8), (8, 1))],
                             r"shape symbol 'N' is 4 but dimension 0 of 'E' is 5")


if __name__ == "__main__":
    unittest.main()
