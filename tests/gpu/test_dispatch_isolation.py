"""Two libraries generated from builds of one kernel, loaded side by side, each dispatch on their
own tables.

The size dispatch (`<kernel>_variant`) of every build of a kernel has the same C++ name. GPU run
183 loaded several conv2d builds into one process (RTLD_LOCAL, as tests/gpu/abi.py does): the
tables were static locals of that inline function, which the toolchain makes one object per
process (STB_GNU_UNIQUE), so a build read the first-loaded build's table and ran the wrong
variant (0.3x its speed, correct results). This test compiles the generated dispatchers of two
builds whose tables differ into two host libraries, loads both RTLD_LOCAL and checks that each
answers from its own table. Host-only: g++ and tlc, no GPU.
"""
import ctypes
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from test_tables import tlc_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A kernel whose block size depends on N: -D edge=... moves the bucket edge, so two builds map
# the same N to different variants.
KERNEL = """
kernel rows<edge: int = 100, block = select(N <= edge, 32, 64)>(X: f16[N], Y: out f16[N])
  grid(ceildiv(N, block)) threads(32) as (bx)
{
  t = fragment f16[block];
  copy(X[bx * block], t);
  copy(t, Y[bx * block]);
}
"""

PRELUDE = """
#include <cstddef>
#include <cstdint>
namespace tlc {
template <size_t N> constexpr int bucketOf(int64_t size, const int64_t (&edges)[N]) {
  int bucket = 0;
  for (size_t i = 0; i < N; ++i)
    bucket += size >= edges[i];
  return bucket;
}
}
namespace tlc_kernels {
"""


def dispatcher(source: str) -> str:
    """The generated `inline int rows_variant(...) { ... }`."""
    m = re.search(r"^inline int rows_variant\(.*?^}\n", source, re.M | re.S)
    if not m:
        raise AssertionError("no rows_variant in the generated code")
    return m.group(0)


@unittest.skipUnless(tlc_path() and shutil.which("g++"), "needs build/bin/tlc and g++")
class DispatchIsolation(unittest.TestCase):
    def test_each_library_reads_its_own_table(self):
        with tempfile.TemporaryDirectory() as work:
            tl = os.path.join(work, "rows.tl")
            with open(tl, "w") as f:
                f.write(KERNEL)
            libs = []
            for i, edge in enumerate((100, 1000)):
                cu = os.path.join(work, f"rows{i}.cu")
                subprocess.run([tlc_path(), tl, "-D", f"edge={edge}", "--target", "sm_80", "-o", cu], check=True)
                with open(cu) as f:
                    fn = dispatcher(f.read())
                cpp = os.path.join(work, f"rows{i}.cpp")
                with open(cpp, "w") as f:
                    f.write(PRELUDE + fn + "}\nextern \"C\" int variant_of(long n) { return tlc_kernels::rows_variant(n); }\n")
                so = os.path.join(work, f"librows{i}.so")
                # -O0 keeps the tables as objects (an optimizer folds tables this small; nvcc's
                # host pass kept conv2d's 64-entry one): with static tables this test fails.
                subprocess.run(["g++", "-std=c++17", "-O0", "-fPIC", "-shared", cpp, "-o", so], check=True)
                libs.append(ctypes.CDLL(so, mode=ctypes.RTLD_LOCAL))
            # N = 500: above the first build's edge (variant of block 64), below the second's
            # (block 32); each library's variant numbering comes from its own dispatcher.
            first, second = (lib.variant_of(500) for lib in libs)
            self.assertNotEqual(first, second, "the second library answered from the first one's table")


if __name__ == "__main__":
    unittest.main()
