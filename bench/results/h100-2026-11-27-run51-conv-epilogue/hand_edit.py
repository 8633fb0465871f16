"""How run 51's hand-edited conv2d kernels were made (kept instead of the four edited files).

Generate the sm_90a kernels with tlc at git 0e263ea (branch im2col-tma), as the bundle did:

    tlc samples/conv2d.tl --target sm_90a -D dtype=f16 -D kh=3 -D kw=3 -D stride=1 -D pad=1 \
        -o /tmp/b1/conv_3x3s1_f16.cu
    tlc samples/conv2d.tl --target sm_90a -D dtype=f16 -D kh=1 -D kw=1 -D stride=1 -D pad=0 \
        -o /tmp/b1/conv_1x1s1_f16.cu

then `python3 hand_edit.py /tmp/b1` writes <build>_hoist.cu (the epilogue's divisions computed
once per thread row) and <build>_hoist2.cu (that, and pairs stored as one 4-byte __half2) beside
them. In both instantiations the element-wise store loop of Y's 4-d tensor

    for (int r = 0; r < 64; ++r) { i = ..; j = ..; m = ..; f = ..;
      if (m < M && f < F) Y[floordiv(m, P * Q) * s0 + floordiv(floormod(m, P * Q), Q) * s1
                            + floormod(m, Q) * s2 + f] = C_f[r]; }

is replaced; the rest of each kernel is tlc's output unchanged. The bench items and cases were
those of conv_3x3s1_f16 and conv_1x1s1_f16 under the new build names (bench.md of this run).
"""
import re
import sys

LOOP = re.compile(r"(    #pragma unroll\n#line \d+\n    for \(int (tl_r\d+) = 0; \2 < 64; \+\+\2\) \{\n)(.*?)"
                  r"(\n#line \d+\n    \}\n)", re.S)


def rows_once(r):
    """This thread's two accumulator rows (wgmma m64 layout, 2 warpgroups) and their offsets."""
    return (f"    // hand-edited: this thread's two rows, their offsets computed once\n"
            f"    int64_t tl_rowbase[2]; bool tl_rowok[2];\n"
            f"    for (int tl_h = 0; tl_h < 2; ++tl_h) {{\n"
            f"      const int i = (tl_tid / 32) * 16 + tl_h * 8 + (tl_tid / 4) % 8;\n"
            f"      const int m = (by * 128) + i;\n"
            f"      tl_rowok[tl_h] = m < M;\n"
            f"      const int mm = m < M ? m : 0;\n"
            f"      tl_rowbase[tl_h] = (int64_t)(mm / (P * Q)) * tl_Y_stride0 + (int64_t)((mm % (P * Q)) / Q) * tl_Y_stride1 + (int64_t)(mm % Q) * tl_Y_stride2;\n"
            f"    }}\n")


def elements(r):
    return (f"    #pragma unroll\n    for (int {r} = 0; {r} < 64; ++{r}) {{\n"
            f"      const int j = ({r} / 4) * 8 + (tl_tid % 4) * 2 + {r} % 2;\n"
            f"      const int f = (bx * 128) + j;\n"
            f"      if (tl_rowok[({r} / 2) % 2] && f < F) Y[tl_rowbase[({r} / 2) % 2] + f] = tl::convert<tl::f16>(C_f[{r}]);\n"
            f"    }}\n")


def pairs(r):
    return (f"    #pragma unroll\n    for (int {r} = 0; {r} < 64; {r} += 2) {{\n"
            f"      const int j = ({r} / 4) * 8 + (tl_tid % 4) * 2;\n"
            f"      const int f = (bx * 128) + j;\n"
            f"      const int h = ({r} / 2) % 2;\n"
            f"      if (!tl_rowok[h]) continue;\n"
            f"      const int64_t at = tl_rowbase[h] + f;\n"
            f"      if (f + 1 < F && (at & 1) == 0) {{\n"
            f"        __half2 v = __floats2half2_rn(C_f[{r}], C_f[{r} + 1]);\n"
            f"        *reinterpret_cast<__half2*>(&Y[at]) = v;\n"
            f"      }} else {{\n"
            f"        if (f < F) Y[at] = tl::convert<tl::f16>(C_f[{r}]);\n"
            f"        if (f + 1 < F) Y[at + 1] = tl::convert<tl::f16>(C_f[{r} + 1]);\n"
            f"      }}\n"
            f"    }}\n")


def variant(text, store):
    count = 0

    def replace(mo):
        nonlocal count
        assert "Y[(int64_t)" in mo.group(3), "not the epilogue's store loop"
        count += 1
        return rows_once(mo.group(2)) + store(mo.group(2))
    out = LOOP.sub(replace, text)
    assert count == 2, count  # the bulk and the ordinary instantiation
    return out


if __name__ == "__main__":
    folder = sys.argv[1]
    for build in ("conv_3x3s1_f16", "conv_1x1s1_f16"):
        text = open(f"{folder}/{build}.cu").read()
        for suffix, store in (("_hoist", elements), ("_hoist2", pairs)):
            with open(f"{folder}/{build}{suffix}.cu", "w") as f:
                f.write(variant(text, store))
