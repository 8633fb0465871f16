"""Hand edit: the softmax's exp2 over a fragment's registers computed partly on the FMA pipe.
usage: exp2mix.py IN.cu OUT.cu PERIOD EVERY DEGREE(3|5)"""
import re, sys
src, dst, period, every, deg = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
s = open(src).read()
poly5 = "1.0000001192092896f, 0.6931469440460205f, 0.24022120237350464f, 0.05550713464617729f, 0.009675538167357445f, 0.001327644451521337f"
poly3 = "0.9999281167984009f, 0.6932609677314758f, 0.24261054396629333f, 0.05517132207751274f"
helper = r'''
namespace tl {
// 2^x on the FMA pipe: round x to j + f (f in [-0.5, 0.5]) with the 1.5 * 2^23 trick, a minimax
// polynomial for 2^f, and j added to the exponent bits.
TL_DEVICE float exp2_fma(float x) {
  const float xc = fminf(fmaxf(x, -126.0f), 127.0f);
  const float t = xc + 12582912.0f;
  const float f = xc - (t - 12582912.0f);
  const int j = __float_as_int(t) - 0x4B400000;
  const float c[] = {COEFFS};
  float p = c[DEG];
#pragma unroll
  for (int i = DEG - 1; i >= 0; --i) p = fmaf(p, f, c[i]);
  float r = __int_as_float(__float_as_int(p) + (j << 23));
  SELECTS
  return r;
}
}
'''.replace("COEFFS", poly5 if deg == 5 else poly3).replace("DEG", str(deg)).replace(
    "SELECTS", "r = x < -126.0f ? 0.0f : r; r = x != x ? x : r;" if deg == 5 else "r = x < -126.0f ? 0.0f : r;")
anchor = "namespace tlc_kernels"
i = s.index(anchor)
s = s[:i] + helper + "\n" + s[i:]
pat = re.compile(r"scores\[(tl_r\d+)\] = tl::exp2\(")
n = 0
while True:
    m = pat.search(s)
    if not m:
        break
    depth, k = 1, m.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(s[k], 0)
        k += 1
    arg = s[m.end():k - 1]
    r = m.group(1)
    s = s[:m.start()] + f"scores[{r}] = (({r} % {period}) < {every} ? tl::exp2_fma({arg}) : tl::exp2({arg}))" + s[k:]
    n += 1
open(dst, "w").write(s)
print(dst, n, "replaced")
