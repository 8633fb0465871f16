"""Experiment: in a generated W4A16 .cu, dequantize without the scale and apply each group's
scale to the f32 sums of its chunk after the mma (gemm_sr_runs_t's chunk = 4V columns = one
group). usage: scalefold_patch.py IN.cu OUT.cu"""
import re, sys
src = open(sys.argv[1]).read()
helper = r'''
namespace tl {
// Experiment: gemm_sr_runs_t with the weights unscaled and scale[p][c] (pass p, chunk c)
// applied to chunk c's f32 sums.
template <int M, int N, int K, int WM, int WN, int V, int KS = 1, class T, class Acc, int RB, int R, int NC>
TL_DEVICE void gemm_sr_runs_t_scaled(const T* A, const T (&B)[RB], Acc (&C)[R], const T (&scale)[2][NC]) {
  constexpr int NT = M / 8, Slice = K / KS, Chunks = Slice / (4 * V), Pass = Chunks * V;
  static_assert(NC == Chunks && RB == 2 * Pass && R == NT * 4, "scaled runs");
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int slice = KS > 1 ? int(threadIdx.x / 32) / WN * Slice : 0;
  (void)g;
#pragma unroll
  for (int c = 0; c < Chunks; ++c) {
    const int col = slice + c * 4 * V + t * V;
    Acc part[2][R];
#pragma unroll
    for (int q = 0; q < 2; ++q)
#pragma unroll
      for (int i = 0; i < R; ++i) part[q][i] = Acc(0);
#pragma unroll
    for (int s = 0; s < V / 4; ++s) {
      std::uint32_t a[4];
      std::memcpy(&a[0], &B[c * V + 4 * s], 4);
      std::memcpy(&a[1], &B[Pass + c * V + 4 * s], 4);
      std::memcpy(&a[2], &B[c * V + 4 * s + 2], 4);
      std::memcpy(&a[3], &B[Pass + c * V + 4 * s + 2], 4);
#pragma unroll
      for (int j = 0; j < NT; ++j) {
        std::uint32_t b[2];
        detail::load_a_run<M, K, 2>(A, 8 * j + (lane / 4), col + 4 * s, SwizzledOperand{}, b);
        detail::WarpMma<T>::run(&part[s % 2][j * 4], a, b);
      }
    }
    const float s0 = convert<float>(scale[0][c]), s1 = convert<float>(scale[1][c]);
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      C[4 * j + 0] += (part[0][4 * j + 0] + part[1][4 * j + 0]) * s0;
      C[4 * j + 1] += (part[0][4 * j + 1] + part[1][4 * j + 1]) * s0;
      C[4 * j + 2] += (part[0][4 * j + 2] + part[1][4 * j + 2]) * s1;
      C[4 * j + 3] += (part[0][4 * j + 3] + part[1][4 * j + 3]) * s1;
    }
  }
}
}  // namespace tl
'''
src = src.replace('#include "tlc/runtime.h"\n', '#include "tlc/runtime.h"\n' + helper, 1)
pat = re.compile(r"tl::dequant_i4x8_regs<([^,]+), true>\(&B_f\[(tl_r\d+)\], (S_s\[.*?\]), &W_f\[2 \* tl_r\d+\]\);\n"
                 r"(.*?)tl::gemm_sr_runs_t<(\d+), (\d+), (\d+), (\d+), (\d+), (\d+)(?:, (\d+))?>\(([^,]+), W_f, acc\);", re.S)
def rep(m):
    T, r, scale, between = m.group(1), m.group(2), m.group(3), m.group(4)
    M, N, K, WM, WN, V = (int(m.group(i)) for i in range(5, 11))
    KS = int(m.group(11) or 1)
    chunks = K // KS // (4 * V); passreg = chunks * V
    decl = f"{T} tl_sc[2][{chunks}] = {{" + ", ".join(
        "{" + ", ".join(scale.replace(r, f"({(p * passreg + c * V) // 2})") for c in range(chunks)) + "}"
        for p in range(2)) + "};\n      "
    ks = f", {KS}" if m.group(11) else ""
    return (f"tl::dequant_i4x8_regs<{T}, false>(&B_f[{r}], {T}(), &W_f[2 * {r}]);\n" + between + decl +
            f"tl::gemm_sr_runs_t_scaled<{M}, {N}, {K}, {WM}, {WN}, {V}{ks}>({m.group(12)}, W_f, acc, tl_sc);")
src, n = pat.subn(rep, src)
open(sys.argv[2], "w").write(src)
print(f"{n} gemm(s) patched", file=sys.stderr)
