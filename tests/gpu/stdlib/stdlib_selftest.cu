// Run-time self-test of the device library (stdlib/tl/*.h) on a real GPU (sm_80 or newer).
//
//   nvcc -arch=sm_90a -I stdlib tests/gpu/stdlib/stdlib_selftest.cu -o t && ./t
//
// Each check compares device results with an independent host computation (double-precision
// arithmetic, hand-decoded bit patterns, the documented fragment layouts) and prints one
// PASS/FAIL line; the exit status is non-zero if any check fails or a kernel hangs.
#include <cmath>
#include <cstdio>
#include <vector>

#include "selftest_harness.h"
#include "tl/tl.h"
#include "tl/wgmma.h"

namespace {

using namespace selftest;

// ---- mma.sync m16n8k16 with fragments built from the documented layout ----------------------
using L = tl::m16n8k16::Layout;
constexpr int kM = tl::m16n8k16::M, kN = tl::m16n8k16::N, kK = tl::m16n8k16::K;

template <class Acc>
__device__ float acc_get(const tl::m16n8k16::FragC<Acc>& c, int e) {
  if constexpr (std::is_same_v<Acc, float>)
    return c.reg[e];
  else
    return __half2float(half_of<tl::f16>(c.reg[e / 2], e % 2));
}

// A [16][16] and B [16][8] ([k][n]) row-major; C/D [16][8].
template <class T, class Acc>
__global__ void k_mma(const T* A, const T* B, const float* C, float* D) {
  const int lane = static_cast<int>(threadIdx.x);
  tl::m16n8k16::FragA<T> a;
  tl::m16n8k16::FragB<T> b;
  tl::m16n8k16::FragC<Acc> c;
  for (int r = 0; r < 4; ++r) {
    a.reg[r] = pack2(A[L::a_row(lane, 2 * r) * kK + L::a_col(lane, 2 * r)],
                     A[L::a_row(lane, 2 * r + 1) * kK + L::a_col(lane, 2 * r + 1)]);
  }
  for (int r = 0; r < 2; ++r) {
    b.reg[r] = pack2(B[L::b_row(lane, 2 * r) * kN + L::b_col(lane, 2 * r)],
                     B[L::b_row(lane, 2 * r + 1) * kN + L::b_col(lane, 2 * r + 1)]);
  }
  auto c_at = [&](int e) { return C[L::c_row(lane, e) * kN + L::c_col(lane, e)]; };
  if constexpr (std::is_same_v<Acc, float>) {
    for (int e = 0; e < 4; ++e) c.reg[e] = c_at(e);
  } else {
    for (int r = 0; r < 2; ++r)
      c.reg[r] = pack2(__float2half(c_at(2 * r)), __float2half(c_at(2 * r + 1)));
  }
  tl::m16n8k16::mma(c, a, b);
  for (int e = 0; e < 4; ++e) D[L::c_row(lane, e) * kN + L::c_col(lane, e)] = acc_get(c, e);
}

// The code-generator pattern: A from a padded row-major smem tile with ldmatrix.x4, B from a
// [k][n] tile with x2.trans and from an [n][k] tile with plain x2; both products must agree.
constexpr int kAStride = 24;  // 48-byte rows: any 16-byte aligned row address works
__global__ void k_ldmatrix_mma(const tl::f16* A, const tl::f16* B_kn, float* D_kn, float* D_nk) {
  alignas(16) __shared__ tl::f16 sA[kM * kAStride];
  alignas(16) __shared__ tl::f16 sB_kn[kK * kN];
  alignas(16) __shared__ tl::f16 sB_nk[kN * kK];
  const int lane = static_cast<int>(threadIdx.x);
  for (int i = lane; i < kM * kK; i += 32) sA[(i / kK) * kAStride + i % kK] = A[i];
  for (int i = lane; i < kK * kN; i += 32) {
    sB_kn[i] = B_kn[i];
    sB_nk[(i % kN) * kK + i / kN] = B_kn[i];
  }
  __syncthreads();
  tl::m16n8k16::FragA<tl::f16> a;
  tl::m16n8k16::FragB<tl::f16> b_kn, b_nk;
  tl::ldmatrix_x4(a.reg, &sA[(lane % 16) * kAStride + 8 * (lane / 16)]);
  tl::ldmatrix_x2_trans(b_kn.reg, &sB_kn[(lane % 16) * kN]);
  tl::ldmatrix_x2(b_nk.reg, &sB_nk[(lane % 8) * kK + 8 * ((lane / 8) % 2)]);
  tl::m16n8k16::FragC<float> c_kn, c_nk;
  c_kn.clear();
  c_nk.clear();
  tl::m16n8k16::mma(c_kn, a, b_kn);
  tl::m16n8k16::mma(c_nk, a, b_nk);
  for (int e = 0; e < 4; ++e) {
    D_kn[L::c_row(lane, e) * kN + L::c_col(lane, e)] = c_kn.reg[e];
    D_nk[L::c_row(lane, e) * kN + L::c_col(lane, e)] = c_nk.reg[e];
  }
}

// |got - (A*B + C)| <= rel * (sum |a*b| + |c|) + abs_tol for every element.
bool check_gemm(const std::vector<float>& A, const std::vector<float>& B,
                const std::vector<float>& C, const std::vector<float>& D, double rel,
                double abs_tol, char* detail) {
  double worst = 0.0;
  bool ok = true;
  for (int i = 0; i < kM; ++i) {
    for (int j = 0; j < kN; ++j) {
      double ref = C[i * kN + j], mag = std::fabs(ref);
      for (int k = 0; k < kK; ++k) {
        ref += static_cast<double>(A[i * kK + k]) * B[k * kN + j];
        mag += std::fabs(static_cast<double>(A[i * kK + k]) * B[k * kN + j]);
      }
      const double err = std::fabs(D[i * kN + j] - ref);
      worst = std::fmax(worst, err);
      if (!(err <= rel * mag + abs_tol)) {
        if (ok) std::snprintf(detail, 160, "D[%d][%d] = %g, expected %g", i, j, D[i * kN + j], ref);
        ok = false;
      }
    }
  }
  if (ok) std::snprintf(detail, 160, "max abs error %.3g", worst);
  return ok;
}

// Random operands rounded to T, returned as the floats they represent.
template <class T>
std::vector<float> random_rounded(int n, std::vector<T>& as_t) {
  std::vector<float> values(n);
  as_t.resize(n);
  for (int i = 0; i < n; ++i) {
    as_t[i] = tl::convert<T>(uniform(-1.0f, 1.0f));
    values[i] = tl::convert<float>(as_t[i]);
  }
  return values;
}

template <class T, class Acc>
void test_mma(const char* name, double rel, double abs_tol) {
  std::vector<T> a_t, b_t;
  const std::vector<float> A = random_rounded<T>(kM * kK, a_t), B = random_rounded<T>(kK * kN, b_t);
  std::vector<float> C(kM * kN);
  for (float& c : C) c = tl::convert<float>(tl::convert<tl::f16>(uniform(-1.0f, 1.0f)));
  DeviceArray<T> dA(a_t), dB(b_t);
  DeviceArray<float> dC(C), dD(kM * kN);
  k_mma<T, Acc><<<1, 32>>>(dA.get(), dB.get(), dC.get(), dD.get());
  finish(name);
  char detail[160];
  const bool ok = check_gemm(A, B, C, dD.download(), rel, abs_tol, detail);
  report(name, ok, detail);
}

void test_ldmatrix_mma() {
  std::vector<tl::f16> a_t, b_t;
  const std::vector<float> A = random_rounded<tl::f16>(kM * kK, a_t),
                           B = random_rounded<tl::f16>(kK * kN, b_t);
  const std::vector<float> C(kM * kN, 0.0f);
  DeviceArray<tl::f16> dA(a_t), dB(b_t);
  DeviceArray<float> dkn(kM * kN), dnk(kM * kN);
  k_ldmatrix_mma<<<1, 32>>>(dA.get(), dB.get(), dkn.get(), dnk.get());
  finish("ldmatrix -> mma");
  char detail[160];
  bool ok = check_gemm(A, B, C, dkn.download(), 1e-4, 1e-5, detail);
  report("ldmatrix.x4 + x2.trans -> mma f16", ok, detail);
  ok = check_gemm(A, B, C, dnk.download(), 1e-4, 1e-5, detail);
  report("ldmatrix.x4 + x2 -> mma f16", ok, detail);
}

// ---- ldmatrix fragments against LdmatrixLayout ----------------------------------------------
// Matrix m, row r, column c holds the 16-bit value 64m + 8r + c. Row (m, r) starts at element
// (8m + r) * kRowStride: 48-byte rows, so the addresses are not those of a dense 8x8 block.
constexpr int kRowStride = 24;
template <int Num, bool Trans>
__global__ void k_ldmatrix(std::uint32_t* out) {
  alignas(16) __shared__ std::uint16_t tile[4 * 8 * kRowStride];
  const int lane = static_cast<int>(threadIdx.x);
  for (int i = lane; i < 4 * 8 * 8; i += 32)
    tile[(i / 8) * kRowStride + i % 8] = static_cast<std::uint16_t>(i);
  __syncthreads();
  std::uint32_t r[Num];
  const int row = lane % (8 * Num);  // lanes past the used range repeat valid addresses
  tl::ldmatrix<Num, Trans>(r, &tile[row * kRowStride]);
  for (int m = 0; m < Num; ++m) out[lane * Num + m] = r[m];
}

template <int Num, bool Trans>
void test_ldmatrix(const char* name) {
  DeviceArray<std::uint32_t> d(32 * Num);
  k_ldmatrix<Num, Trans><<<1, 32>>>(d.get());
  finish(name);
  const std::vector<std::uint32_t> got = d.download();
  char detail[160] = "all lanes match the documented layout";
  bool ok = true;
  for (int lane = 0; lane < 32 && ok; ++lane) {
    for (int m = 0; m < Num; ++m) {
      for (int h = 0; h < 2; ++h) {
        const int expect = 64 * m + 8 * tl::LdmatrixLayout::row(lane, h, Trans) +
                           tl::LdmatrixLayout::col(lane, h, Trans);
        const int value = static_cast<int>((got[lane * Num + m] >> (16 * h)) & 0xFFFF);
        if (value != expect && ok) {
          std::snprintf(detail, sizeof detail, "lane %d reg %d half %d: %d, expected %d", lane, m,
                        h, value, expect);
          ok = false;
        }
      }
    }
  }
  report(name, ok, detail);
}

// ---- cp.async --------------------------------------------------------------------------------
// Each thread owns 48 bytes: [0,16) zfill 16 (.cg), [16,24) 8 bytes .ca, [24,28) 4 bytes,
// [28,32) zfill 4, [32,48) partial 16 with t % 17 source bytes.
constexpr int kCpThreads = 64, kCpBytes = 48;
__global__ void k_cp_async(const std::uint8_t* src, std::uint8_t* early, std::uint8_t* final_out) {
  alignas(16) __shared__ std::uint8_t s[kCpThreads * kCpBytes];
  const int t = static_cast<int>(threadIdx.x);
  const int base = t * kCpBytes;
  for (int i = 0; i < kCpBytes; ++i) s[base + i] = 0xAB;  // zeros must come from the zero fill
  __syncthreads();
  tl::cp_async_zfill<16>(s + base, src + base, t % 3 != 0);
  tl::cp_async_commit();
  tl::cp_async<8, tl::CacheLevel::All>(s + base + 16, src + base + 16);
  tl::cp_async<4>(s + base + 24, src + base + 24);
  tl::cp_async_zfill<4>(s + base + 28, src + base + 28, t % 2 == 0);
  tl::cp_async_partial<16, tl::CacheLevel::All>(s + base + 32, src + base + 32, t % 17);
  tl::cp_async_commit();
  tl::cp_async_wait<1>();  // the first group has landed, for this thread
  for (int i = 0; i < 16; ++i) early[t * 16 + i] = s[base + i];
  tl::cp_async_wait<0>();
  __syncthreads();
  const int other =
      ((t + 1) % kCpThreads) * kCpBytes;  // visible to other threads after the barrier
  for (int i = 0; i < kCpBytes; ++i) final_out[other + i] = s[other + i];
}

void test_cp_async() {
  std::vector<std::uint8_t> src(kCpThreads * kCpBytes);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(1 + i % 251);
  DeviceArray<std::uint8_t> dsrc(src), dearly(kCpThreads * 16), dfinal(src.size());
  k_cp_async<<<1, kCpThreads>>>(dsrc.get(), dearly.get(), dfinal.get());
  finish("cp.async");
  const std::vector<std::uint8_t> early = dearly.download(), fin = dfinal.download();
  char detail[160] = "copies, zero fill, partial fill and wait_group<1> as expected";
  bool ok = true;
  for (int t = 0; t < kCpThreads && ok; ++t) {
    for (int i = 0; i < kCpBytes; ++i) {
      const int at = t * kCpBytes + i;
      bool copied = true;
      if (i < 16)
        copied = t % 3 != 0;
      else if (i >= 28 && i < 32)
        copied = t % 2 == 0;
      else if (i >= 32)
        copied = i - 32 < t % 17;
      const int expect = copied ? src[at] : 0;
      const int got_early = i < 16 ? early[t * 16 + i] : expect;
      if ((fin[at] != expect || got_early != expect) && ok) {
        std::snprintf(detail, sizeof detail,
                      "thread %d byte %d: %d (after wait<1>: %d), expected %d", t, i, fin[at],
                      got_early, expect);
        ok = false;
      }
    }
  }
  report("cp.async ca/cg, zfill, partial", ok, detail);
}

// ---- Reductions --------------------------------------------------------------------------------
constexpr int kRedThreads = 256;
struct GroupShape {
  int width, stride;
};
constexpr GroupShape kShapes[] = {{32, 1}, {4, 1}, {8, 4}, {4, 64}, {16, 4}, {kRedThreads, 1}};
constexpr int kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);

template <class Op>
__global__ void __launch_bounds__(kRedThreads) k_reduce(const float* x, float* out) {
  __shared__ float smem[kRedThreads];
  const int t = static_cast<int>(threadIdx.x);
  const float v = x[t];
  out[0 * kRedThreads + t] = tl::warp_allreduce<Op>(v);
  out[1 * kRedThreads + t] = tl::warp_allreduce<Op, 4, 1>(v);
  out[2 * kRedThreads + t] = tl::warp_allreduce<Op, 8, 4>(v);
  out[3 * kRedThreads + t] = tl::group_allreduce<Op, 4, 64, kRedThreads>(v, smem);
  out[4 * kRedThreads + t] = tl::group_allreduce<Op, 16, 4, kRedThreads>(v, smem);
  out[5 * kRedThreads + t] = tl::block_allreduce<Op, kRedThreads>(v, smem);
}

enum class RedKind { Sum, Max, Min };
template <class Op>
void test_reduce(const char* name, RedKind kind, bool use_abs, const std::vector<float>& x) {
  DeviceArray<float> dx(x), dout(kNumShapes * kRedThreads);
  k_reduce<Op><<<1, kRedThreads>>>(dx.get(), dout.get());
  finish(name);
  const std::vector<float> out = dout.download();
  char detail[160] = "warp, 4x1, 8x4, 4x64, 16x4 and block groups match";
  bool ok = true;
  for (int s = 0; s < kNumShapes && ok; ++s) {
    const GroupShape g = kShapes[s];
    for (int t = 0; t < kRedThreads && ok; ++t) {
      const int base = t & ~((g.width - 1) * g.stride);
      double ref = kind == RedKind::Sum ? 0.0 : (kind == RedKind::Max ? -INFINITY : INFINITY),
             mag = 0.0;
      for (int k = 0; k < g.width; ++k) {
        const double v = use_abs ? std::fabs(x[base + k * g.stride]) : x[base + k * g.stride];
        ref = kind == RedKind::Sum ? ref + v
                                   : (kind == RedKind::Max ? std::fmax(ref, v) : std::fmin(ref, v));
        mag += std::fabs(v);
      }
      const float got = out[s * kRedThreads + t];
      const double tol = kind == RedKind::Sum ? 1e-5 * mag : 0.0;
      const bool same_in_group = tl::bit_cast<std::uint32_t>(got) ==
                                 tl::bit_cast<std::uint32_t>(out[s * kRedThreads + base]);
      if (!(std::fabs(got - ref) <= tol) || !same_in_group) {
        std::snprintf(detail, sizeof detail, "group %dx%d thread %d: %g, expected %g%s", g.width,
                      g.stride, t, got, ref, same_in_group ? "" : " (differs within its group)");
        ok = false;
      }
    }
  }
  report(name, ok, detail);
}

void test_reductions() {
  std::vector<float> x(kRedThreads);
  for (float& v : x) v = uniform(-10.0f, 10.0f);
  test_reduce<tl::SumOp>("reduce sum", RedKind::Sum, false, x);
  test_reduce<tl::MaxOp>("reduce max", RedKind::Max, false, x);
  test_reduce<tl::MinOp>("reduce min", RedKind::Min, false, x);
  test_reduce<tl::AbsSumOp>("reduce abssum", RedKind::Sum, true, x);
  test_reduce<tl::AbsMaxOp>("reduce absmax", RedKind::Max, true, x);
}

// ---- Conversions -------------------------------------------------------------------------------
bool same_value(double got, double expect) {
  return (std::isnan(got) && std::isnan(expect)) || got == expect;
}

// Independent fp8 decoder: sign, `e` exponent bits with bias 2^(e-1) - 1, `m` mantissa bits.
double decode_fp8(int code, int e, int m, bool ieee_specials) {
  const int sign = code >> 7, exp = (code >> m) & ((1 << e) - 1), man = code & ((1 << m) - 1);
  const int bias = (1 << (e - 1)) - 1;
  double v;
  if (ieee_specials && exp == (1 << e) - 1)
    v = man ? NAN : INFINITY;  // e5m2
  else if (!ieee_specials && exp == (1 << e) - 1 && man == (1 << m) - 1)
    v = NAN;  // e4m3
  else if (exp == 0)
    v = std::ldexp(man, 1 - bias - m);
  else
    v = std::ldexp((1 << m) + man, exp - bias - m);
  return sign ? -v : v;
}

// out[(format * 3 + path) * 512 + slot * 256 + c], format 0 = e4m3, 1 = e5m2; paths: pair to
// float2, pair to f16x2, scalar to float. Slot 0 holds code c, slot 1 code 255 - c.
template <class Scalar, class Pair>
__device__ void decode_paths(std::uint16_t pair, int c, float* out) {
  const float2 a = tl::to_float2(tl::bit_cast<Pair>(pair));
  const float2 b = tl::to_float2(tl::to_f16x2(tl::bit_cast<Pair>(pair)));
  out[c] = a.x;
  out[256 + c] = a.y;
  out[512 + c] = b.x;
  out[768 + c] = b.y;
  out[1024 + c] = tl::convert<float>(tl::bit_cast<Scalar>(static_cast<std::uint8_t>(pair & 0xFF)));
  out[1280 + c] = tl::convert<float>(tl::bit_cast<Scalar>(static_cast<std::uint8_t>(pair >> 8)));
}

__global__ void k_fp8_decode(float* out) {
  const int c = static_cast<int>(threadIdx.x);
  const std::uint16_t pair = static_cast<std::uint16_t>(c | ((255 - c) << 8));
  decode_paths<tl::f8e4m3, tl::f8e4m3x2>(pair, c, out);
  decode_paths<tl::f8e5m2, tl::f8e5m2x2>(pair, c, out + 3 * 512);
}

void test_fp8_decode() {
  DeviceArray<float> d(2 * 3 * 512);
  k_fp8_decode<<<1, 256>>>(d.get());
  finish("fp8 decode");
  const std::vector<float> out = d.download();
  char detail[160] = "all 256 codes of e4m3 and e5m2: x2 -> f32, x2 -> f16x2, scalar";
  bool ok = true;
  for (int format = 0; format < 2; ++format) {
    for (int i = 0; i < 3 * 512 && ok; ++i) {
      const int c = i % 256, code = (i / 256) % 2 == 0 ? c : 255 - c;
      const double expect =
          format == 0 ? decode_fp8(code, 4, 3, false) : decode_fp8(code, 5, 2, true);
      const double got = out[format * 3 * 512 + i];
      if (!same_value(got, expect)) {
        std::snprintf(detail, sizeof detail, "%s code 0x%02X (path %d): %g, expected %g",
                      format ? "e5m2" : "e4m3", code, i / 512, got, expect);
        ok = false;
      }
    }
  }
  report("fp8 -> f32 / f16x2 decode", ok, detail);
}

// Scalar and pair encodings of f32 into f8e4m3, f8e5m2, f16 and bf16.
__global__ void k_encode(const float* x, int n, std::uint8_t* e4, std::uint8_t* e5,
                         std::uint16_t* h, std::uint16_t* b, int* pair_mismatch) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  e4[i] = tl::bit_cast<std::uint8_t>(tl::convert<tl::f8e4m3>(x[i]));
  e5[i] = tl::bit_cast<std::uint8_t>(tl::convert<tl::f8e5m2>(x[i]));
  h[i] = bits16(tl::convert<tl::f16>(x[i]));
  b[i] = bits16(tl::convert<tl::bf16>(x[i]));
  if (i % 2 == 0 && i + 1 < n) {  // the packed forms must agree with the scalar ones
    const float2 p = make_float2(x[i], x[i + 1]);
    const std::uint16_t p4 = tl::bit_cast<std::uint16_t>(tl::to_f8e4m3x2(p));
    const std::uint16_t p5 = tl::bit_cast<std::uint16_t>(tl::to_f8e5m2x2(p));
    const std::uint32_t ph = tl::bit_cast<std::uint32_t>(tl::to_f16x2(p));
    const std::uint32_t pb = tl::bit_cast<std::uint32_t>(tl::to_bf16x2(p));
    const tl::f8e4m3 lo4 = tl::convert<tl::f8e4m3>(x[i]), hi4 = tl::convert<tl::f8e4m3>(x[i + 1]);
    const tl::f8e5m2 lo5 = tl::convert<tl::f8e5m2>(x[i]), hi5 = tl::convert<tl::f8e5m2>(x[i + 1]);
    const bool agree =
        p4 == (tl::bit_cast<std::uint8_t>(lo4) | (tl::bit_cast<std::uint8_t>(hi4) << 8)) &&
        p5 == (tl::bit_cast<std::uint8_t>(lo5) | (tl::bit_cast<std::uint8_t>(hi5) << 8)) &&
        ph == pack2(tl::convert<tl::f16>(x[i]), tl::convert<tl::f16>(x[i + 1])) &&
        pb == pack2(tl::convert<tl::bf16>(x[i]), tl::convert<tl::bf16>(x[i + 1]));
    if (!agree) atomicAdd(pair_mismatch, 1);
  }
}

void test_encode() {
  // Hand-checked cases first (value, e4m3, e5m2, f16, bf16 bits): round to nearest even,
  // fp8 saturation to the largest finite value, f16 overflow to infinity.
  struct Case {
    float x;
    int e4, e5, h, b;
  };
  const Case cases[] = {
      {1.0f, 0x38, 0x3C, 0x3C00, 0x3F80},
      {-2.0f, 0xC0, 0xC0, 0xC000, 0xC000},
      {448.0f, 0x7E, 0x5F, 0x5F00, 0x43E0},
      {1.0e6f, 0x7E, 0x7B, 0x7C00, 0x4974},
      {-1.0e6f, 0xFE, 0xFB, 0xFC00, 0xC974},
      {1.0f + 0x1p-8f, 0x38, 0x3C, 0x3C04, 0x3F80},
      {1.0f + 0x3p-8f, 0x38, 0x3C, 0x3C0C, 0x3F82},
      {1.0f + 0x1p-11f, 0x38, 0x3C, 0x3C00, 0x3F80},
      {1.0f + 0x3p-11f, 0x38, 0x3C, 0x3C02, 0x3F80},
      {65520.0f, 0x7E, 0x7B, 0x7C00, 0x4780},
      {0x1p-9f, 0x01, 0x18, 0x1800, 0x3B00},
      {0.0f, 0x00, 0x00, 0x0000, 0x0000},
  };
  const int kCases = sizeof(cases) / sizeof(cases[0]);
  std::vector<float> x;
  for (const Case& c : cases) x.push_back(c.x);
  for (int i = 0; i < 4096; ++i)
    x.push_back(std::ldexp(uniform(-1.0f, 1.0f), static_cast<int>(uniform(-20.0f, 20.0f))));
  const int n = static_cast<int>(x.size());
  DeviceArray<float> dx(x);
  DeviceArray<std::uint8_t> d4(n), d5(n);
  DeviceArray<std::uint16_t> dh(n), db(n);
  DeviceArray<int> dmis(1);
  dmis.zero();
  k_encode<<<(n + 255) / 256, 256>>>(dx.get(), n, d4.get(), d5.get(), dh.get(), db.get(),
                                     dmis.get());
  finish("encode");
  const auto e4 = d4.download(), e5 = d5.download();
  const auto h = dh.download(), b = db.download();
  char detail[160] = "hand-checked cases and 4096 values agree with the host encoders";
  bool ok = dmis.download()[0] == 0;
  if (!ok) std::snprintf(detail, sizeof detail, "packed x2 conversions differ from scalar ones");
  for (int i = 0; i < n && ok; ++i) {
    // Expected bits: the table for the hand cases, cuda_fp8.h/cuda_fp16.h host code otherwise.
    const int x4 = i < kCases ? cases[i].e4 : tl::bit_cast<std::uint8_t>(tl::f8e4m3(x[i]));
    const int x5 = i < kCases ? cases[i].e5 : tl::bit_cast<std::uint8_t>(tl::f8e5m2(x[i]));
    const int xh = i < kCases ? cases[i].h : bits16(__float2half_rn(x[i]));
    const int xb = i < kCases ? cases[i].b : bits16(__float2bfloat16_rn(x[i]));
    if (e4[i] != x4 || e5[i] != x5 || h[i] != xh || b[i] != xb) {
      std::snprintf(detail, sizeof detail,
                    "x = %a: e4m3 %02X/%02X e5m2 %02X/%02X f16 %04X/%04X bf16 %04X/%04X", x[i],
                    e4[i], x4, e5[i], x5, h[i], xh, b[i], xb);
      ok = false;
    }
  }
  report("f32 -> f8e4m3/f8e5m2/f16/bf16", ok, detail);
}

// int4: fast (lop3/prmt) and reference unpacking, both signednesses and both 16-bit formats.
template <bool Signed, class T, bool Fast>
__device__ void unpack_into(std::uint32_t word, float* out) {
  tl::vec2_t<T> v[4];
  if constexpr (Fast)
    tl::unpack_int4x8<Signed, T>(word, v);
  else
    tl::unpack_int4x8_ref<Signed, T>(word, v);
  for (int k = 0; k < 4; ++k) {
    const float2 f = tl::to_float2(v[k]);
    out[2 * k] = f.x;
    out[2 * k + 1] = f.y;
  }
}

__global__ void k_int4(const std::uint32_t* words, int n, float* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  float* o = out + static_cast<std::size_t>(i) * 64;
  unpack_into<true, tl::f16, true>(words[i], o + 0);
  unpack_into<false, tl::f16, true>(words[i], o + 8);
  unpack_into<true, tl::bf16, true>(words[i], o + 16);
  unpack_into<false, tl::bf16, true>(words[i], o + 24);
  unpack_into<true, tl::f16, false>(words[i], o + 32);
  unpack_into<false, tl::f16, false>(words[i], o + 40);
  unpack_into<true, tl::bf16, false>(words[i], o + 48);
  unpack_into<false, tl::bf16, false>(words[i], o + 56);
}

void test_int4() {
  std::vector<std::uint32_t> words = {0x00000000u, 0xFFFFFFFFu, 0x76543210u,
                                      0xFEDCBA98u, 0x88888888u, 0x7F7F7F7Fu};
  for (int i = 0; i < 4096; ++i) words.push_back(static_cast<std::uint32_t>(g_rng()));
  const int n = static_cast<int>(words.size());
  DeviceArray<std::uint32_t> dw(words);
  DeviceArray<float> dout(static_cast<std::size_t>(n) * 64);
  k_int4<<<(n + 127) / 128, 128>>>(dw.get(), n, dout.get());
  finish("int4 unpack");
  const std::vector<float> out = dout.download();
  char detail[160] = "fast and reference paths, i4/u4 to f16/bf16, 4102 words";
  bool ok = true;
  for (int i = 0; i < n && ok; ++i) {
    for (int v = 0; v < 8; ++v) {
      const bool is_signed = v % 2 == 0;
      for (int e = 0; e < 8; ++e) {
        int nib = static_cast<int>((words[i] >> (4 * e)) & 0xF);
        if (is_signed && nib >= 8) nib -= 16;
        const float got = out[static_cast<std::size_t>(i) * 64 + 8 * v + e];
        if (got != static_cast<float>(nib) && ok) {
          std::snprintf(detail, sizeof detail, "word %08X element %d (%s %s, %s): %g, expected %d",
                        words[i], e, is_signed ? "i4" : "u4", (v / 2) % 2 ? "bf16" : "f16",
                        v < 4 ? "fast" : "ref", got, nib);
          ok = false;
        }
      }
    }
  }
  const int values[8] = {-8, 7, 0, -1, 3, -5, 6, 1};
  const std::uint32_t packed = tl::pack_int4x8(values);
  for (int e = 0; e < 8 && ok; ++e) {
    if (tl::extract_int4<true>(packed, e) != values[e]) {
      std::snprintf(detail, sizeof detail, "pack_int4x8/extract_int4 round trip fails at %d", e);
      ok = false;
    }
  }
  report("int4 unpack (lop3 magic number)", ok, detail);
}

// ---- Math --------------------------------------------------------------------------------------
enum class Fn { Exp2, Exp, Log2, Rsqrt, Tanh, Sigmoid };
__global__ void k_math(Fn fn, const float* x, float* y, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  switch (fn) {
    case Fn::Exp2:
      y[i] = tl::exp2(x[i]);
      break;
    case Fn::Exp:
      y[i] = tl::exp(x[i]);
      break;
    case Fn::Log2:
      y[i] = tl::log2(x[i]);
      break;
    case Fn::Rsqrt:
      y[i] = tl::rsqrt(x[i]);
      break;
    case Fn::Tanh:
      y[i] = tl::tanh(x[i]);
      break;
    case Fn::Sigmoid:
      y[i] = tl::sigmoid(x[i]);
      break;
  }
}

// Error bound: |got - ref| <= rel * |ref| + abs.
void test_math(const char* name, Fn fn, float lo, float hi, double (*ref)(double), double rel,
               double abs_tol) {
  const int n = 1 << 16;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n - 1);
  DeviceArray<float> dx(x), dy(n);
  k_math<<<n / 256, 256>>>(fn, dx.get(), dy.get(), n);
  finish(name);
  const std::vector<float> y = dy.download();
  double worst_rel = 0.0, worst_abs = 0.0;
  int bad = -1;
  for (int i = 0; i < n; ++i) {
    const double r = ref(x[i]), err = std::fabs(y[i] - r);
    worst_abs = std::fmax(worst_abs, err);
    if (r != 0.0) worst_rel = std::fmax(worst_rel, err / std::fabs(r));
    if (!(err <= rel * std::fabs(r) + abs_tol) && bad < 0) bad = i;
  }
  char detail[160];
  if (bad < 0)
    std::snprintf(detail, sizeof detail, "[%g, %g]: max rel %.3g, max abs %.3g", lo, hi, worst_rel,
                  worst_abs);
  else
    std::snprintf(detail, sizeof detail, "x = %.9g: %.9g, expected %.9g", x[bad], y[bad],
                  ref(x[bad]));
  report(name, bad < 0, detail);
}

double ref_exp2(double x) { return std::exp2(x); }
double ref_exp(double x) { return std::exp(x); }
double ref_log2(double x) { return std::log2(x); }
double ref_rsqrt(double x) { return 1.0 / std::sqrt(x); }
double ref_tanh(double x) { return std::tanh(x); }
double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// inf/neg_inf bit patterns and NaN-propagating max/min (also through a warp reduction).
__global__ void k_specials(std::uint32_t* out) {
  const int lane = static_cast<int>(threadIdx.x);
  const float nan = __int_as_float(0x7FC00000);
  const tl::f16 hnan = tl::convert<tl::f16>(nan), one = tl::convert<tl::f16>(1.0f);
  const float reduced = tl::warp_max(lane == 7 ? nan : static_cast<float>(lane));
  const bool all = __all_sync(0xFFFFFFFFu, reduced != reduced);
  if (lane != 0) return;
  out[0] = tl::bit_cast<std::uint32_t>(tl::inf<float>());
  out[1] = tl::bit_cast<std::uint32_t>(tl::neg_inf<float>());
  out[2] = bits16(tl::inf<tl::f16>()) |
           (static_cast<std::uint32_t>(bits16(tl::neg_inf<tl::bf16>())) << 16);
  out[3] = tl::bit_cast<std::uint8_t>(tl::inf<tl::f8e4m3>()) |
           (tl::bit_cast<std::uint8_t>(tl::neg_inf<tl::f8e5m2>()) << 8);
  out[4] = static_cast<std::uint32_t>(tl::inf<int>() == 0x7FFFFFFF &&
                                      tl::neg_inf<int>() == -0x7FFFFFFF - 1);
  const float m[4] = {tl::max(nan, 1.0f), tl::max(1.0f, nan), tl::min(nan, 1.0f),
                      tl::min(1.0f, nan)};
  const tl::f16 hm[2] = {tl::max(hnan, one), tl::min(one, hnan)};
  bool nan_ok = all && __hisnan(hm[0]) && __hisnan(hm[1]);
  for (float v : m) nan_ok = nan_ok && v != v;
  out[5] = static_cast<std::uint32_t>(nan_ok && tl::max(2.0f, -3.0f) == 2.0f &&
                                      tl::min(2.0f, -3.0f) == -3.0f);
}

void test_specials() {
  DeviceArray<std::uint32_t> d(6);
  k_specials<<<1, 32>>>(d.get());
  finish("specials");
  const std::vector<std::uint32_t> o = d.download();
  const bool inf_ok = o[0] == 0x7F800000u && o[1] == 0xFF800000u && o[2] == 0xFF807C00u &&
                      o[3] == 0xFC7Eu && o[4] == 1;
  char detail[160];
  std::snprintf(detail, sizeof detail, "f32 %08X/%08X f16|bf16 %08X f8 %04X int %u", o[0], o[1],
                o[2], o[3], o[4]);
  report("inf / neg_inf per dtype", inf_ok, detail);
  report("max/min propagate NaN", o[5] == 1,
         o[5] == 1 ? "scalar f32/f16 and warp_max" : "a NaN was dropped");
}

// ---- Atomics and named barriers ----------------------------------------------------------------
__global__ void k_atomics(float* f, tl::f16x2* h2, tl::bf16x2* b2, float2* f2, float4* f4) {
  tl::atomic_add(f, 1.0f);
  tl::atomic_add(h2, tl::to_f16x2(make_float2(1.0f, 2.0f)));
  // bf16 holds integers exactly up to 256: 128 adds of (1, 0.5) stay exact in any order.
  if (blockIdx.x == 0 && threadIdx.x < 128)
    tl::atomic_add(b2, tl::to_bf16x2(make_float2(1.0f, 0.5f)));
  tl::atomic_add(f2, make_float2(1.0f, 2.0f));
  tl::atomic_add(f4, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
}

void test_atomics() {
  DeviceArray<float> f(1), f2(2), f4(4);
  DeviceArray<tl::f16x2> h2(1);
  DeviceArray<tl::bf16x2> b2(1);
  f.zero();
  f2.zero();
  f4.zero();
  h2.zero();
  b2.zero();
  k_atomics<<<2, 256>>>(f.get(), h2.get(), b2.get(), reinterpret_cast<float2*>(f2.get()),
                        reinterpret_cast<float4*>(f4.get()));
  finish("atomics");
  const float2 h = tl::to_float2(h2.download()[0]), b = tl::to_float2(b2.download()[0]);
  const auto v2 = f2.download(), v4 = f4.download();
  const float fv = f.download()[0];
  const bool ok = fv == 512.0f && h.x == 512.0f && h.y == 1024.0f && b.x == 128.0f &&
                  b.y == 64.0f && v2[0] == 512.0f && v2[1] == 1024.0f && v4[0] == 512.0f &&
                  v4[3] == 2048.0f;
  char detail[160];
  std::snprintf(detail, sizeof detail,
                "f32 %g, f16x2 (%g, %g), bf16x2 (%g, %g), float2 (%g, %g), float4.w %g", fv, h.x,
                h.y, b.x, b.y, v2[0], v2[1], v4[3]);
  report("atomic_add f32/f16x2/bf16x2/vec", ok, detail);
}

// Warp 0 produces, warp 1 consumes through barriers 1 (full) and 2 (empty); warp 2 syncs
// alone on barrier 3, which shows the thread counts are per barrier.
constexpr int kRounds = 8;
__global__ void k_named_barrier(int* out) {
  __shared__ int buf[32];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  for (int r = 0; r < kRounds; ++r) {
    if (warp == 0) {
      if (r > 0) tl::barrier_sync(2, 64);
      buf[lane] = 100 * r + lane;
      tl::barrier_arrive(1, 64);
    } else if (warp == 1) {
      tl::NamedBarrier<1, 64>::sync();
      out[r * 32 + lane] = buf[(lane + 1) % 32];
      if (r + 1 < kRounds) tl::NamedBarrier<2, 64>::arrive();
    }
  }
  if (warp == 2) {
    tl::NamedBarrier<3, 32>::sync();
    out[kRounds * 32 + lane] = -lane;
  }
}

void test_named_barrier() {
  DeviceArray<int> d((kRounds + 1) * 32);
  k_named_barrier<<<1, 96>>>(d.get());
  finish("named barriers");
  const std::vector<int> o = d.download();
  bool ok = true;
  for (int r = 0; r < kRounds; ++r) {
    for (int l = 0; l < 32; ++l) ok = ok && o[r * 32 + l] == 100 * r + (l + 1) % 32;
  }
  for (int l = 0; l < 32; ++l) ok = ok && o[kRounds * 32 + l] == -l;
  report("bar.sync/bar.arrive producer-consumer", ok,
         ok ? "8 rounds, every value seen once" : "stale or missing data");
}

}  // namespace


// ---- wgmma.mma_async m64nNk16 (sm_90a) from swizzled K-major shared tiles -----------------
// A [64][K] and B [N][K] row-major in global memory ("TN": D = A * B^T), K = 64 (128-byte
// rows, 128B swizzle), 32 (64B) or 16 (32B); the kernel stores them swizzled as tl/wgmma.h
// documents, issues K/16 wgmmas in one group, and writes D [64][N] from the documented
// accumulator layout. The host reference is double precision.
constexpr int kWgM = 64;

__host__ __device__ int wg_chunk_xor(int row, int row_bytes) {
  return row_bytes == 128 ? row % 8 : row_bytes == 64 ? (row / 2) % 4 : (row / 4) % 2;
}

// Byte offset of element (row, k) of a K-major tile with `row_bytes`-byte rows of 2-byte elements.
__host__ __device__ int wg_offset(int row, int k, int row_bytes) {
  int byte = k * 2;
  return row * row_bytes + (((byte / 16) ^ wg_chunk_xor(row, row_bytes)) * 16) + byte % 16;
}

// The swizzle of a K-major tile whose rows are K 16-bit elements.
__host__ __device__ constexpr tl::wgmma::Swizzle wg_swizzle(int K) {
  return K == 64 ? tl::wgmma::Swizzle::B128 : K == 32 ? tl::wgmma::Swizzle::B64 : tl::wgmma::Swizzle::B32;
}

template <class T, int N, int K>
__global__ void __launch_bounds__(128) k_wgmma(const T* A, const T* B, float* D) {
#if TL_ARCH_SM90A
  constexpr tl::wgmma::Swizzle S = wg_swizzle(K);
  __shared__ alignas(1024) unsigned char a_s[kWgM * K * 2];
  __shared__ alignas(1024) unsigned char b_s[N * K * 2];
  const int t = threadIdx.x;
  for (int i = t; i < kWgM * K; i += 128)
    *reinterpret_cast<T*>(a_s + wg_offset(i / K, i % K, K * 2)) = A[i];
  for (int i = t; i < N * K; i += 128)
    *reinterpret_cast<T*>(b_s + wg_offset(i / K, i % K, K * 2)) = B[i];
  tl::wgmma::fence_proxy_async_shared();
  __syncthreads();
  float d[N / 2];
  for (float& x : d) x = 0.0f;
  tl::wgmma::fence();
  for (int kb = 0; kb < K / 16; ++kb)
    tl::wgmma::mma<N, T>(d, tl::wgmma::kmajor_descriptor(a_s, kb, S),
                         tl::wgmma::kmajor_descriptor(b_s, kb, S), kb > 0);
  tl::wgmma::commit_group();
  tl::wgmma::wait_group<0>();
  for (int r = 0; r < N / 2; ++r)
    D[tl::wgmma::Layout::row(t, r) * N + tl::wgmma::Layout::col(t, r)] = d[r];
#endif
}

// B as [K][N] with N contiguous (MN-major, transposed in the instruction): 1024-byte atoms of
// 8 K-rows x 64 N-elements, atoms of one 64-wide N block consecutive along K.
__host__ __device__ int wg_mn_offset(int k, int n, int K) {
  int atom = (n / 64) * (K / 8) + k / 8;
  return atom * 1024 + wg_offset(k % 8, n % 64, 128);
}

template <class T, int N, int K>
__global__ void __launch_bounds__(128) k_wgmma_mn(const T* A, const T* B_kn, float* D) {
#if TL_ARCH_SM90A
  constexpr tl::wgmma::Swizzle S = wg_swizzle(K);
  __shared__ alignas(1024) unsigned char a_s[kWgM * K * 2];
  __shared__ alignas(1024) unsigned char b_s[N * K * 2];
  const int t = threadIdx.x;
  for (int i = t; i < kWgM * K; i += 128)
    *reinterpret_cast<T*>(a_s + wg_offset(i / K, i % K, K * 2)) = A[i];
  for (int i = t; i < K * N; i += 128)
    *reinterpret_cast<T*>(b_s + wg_mn_offset(i / N, i % N, K)) = B_kn[i];
  tl::wgmma::fence_proxy_async_shared();
  __syncthreads();
  float d[N / 2];
  for (float& x : d) x = 0.0f;
  tl::wgmma::fence();
  for (int kb = 0; kb < K / 16; ++kb)
    tl::wgmma::mma<N, T, /*TransB=*/true>(
        d, tl::wgmma::kmajor_descriptor(a_s, kb, S),
        tl::wgmma::mnmajor_descriptor(b_s, kb, (K / 8) * 1024), kb > 0);
  tl::wgmma::commit_group();
  tl::wgmma::wait_group<0>();
  for (int r = 0; r < N / 2; ++r)
    D[tl::wgmma::Layout::row(t, r) * N + tl::wgmma::Layout::col(t, r)] = d[r];
#endif
}

// Whether the device code running here was compiled with the sm_90a feature set.
__global__ void k_is_sm90a(int* out) { *out = TL_ARCH_SM90A; }

bool device_code_is_sm90a() {
  DeviceArray<int> flag(std::vector<int>{0});
  k_is_sm90a<<<1, 1>>>(flag.get());
  if (cudaDeviceSynchronize() != cudaSuccess) {
    cudaGetLastError();  // no kernel image for this device: not an sm_90a build
    return false;
  }
  return flag.download()[0] == 1;
}

template <class T, int N, int K, bool MnMajorB = false>
void test_wgmma(const char* name, bool sm90a) {
  if (!sm90a) {
    report(name, true, "skipped: not an sm_90a build and device");
    return;
  }
  std::vector<T> a_t, b_t;
  const std::vector<float> A = random_rounded<T>(kWgM * K, a_t), B = random_rounded<T>(N * K, b_t);
  DeviceArray<T> dA(a_t), dB(b_t);
  std::vector<float> poison(kWgM * N, std::nanf(""));
  DeviceArray<float> dD(poison);
  if constexpr (MnMajorB) {
    std::vector<T> b_kn(N * K);  // the same B, stored [K][N]
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) b_kn[k * N + n] = b_t[n * K + k];
    DeviceArray<T> dBkn(b_kn);
    k_wgmma_mn<T, N, K><<<1, 128>>>(dA.get(), dBkn.get(), dD.get());
    finish(name);
  } else {
    k_wgmma<T, N, K><<<1, 128>>>(dA.get(), dB.get(), dD.get());
  }
  finish(name);
  const std::vector<float> D = dD.download();
  bool ok = true;
  double worst = 0;
  char detail[160] = "";
  for (int i = 0; i < kWgM && ok; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      for (int k = 0; k < K; ++k) {
        ref += double(A[i * K + k]) * double(B[j * K + k]);
        mag += std::fabs(double(A[i * K + k]) * double(B[j * K + k]));
      }
      const double err = std::fabs(D[i * N + j] - ref);
      worst = std::fmax(worst, err);
      if (!(err <= 1e-5 * mag + 1e-5)) {  // also fails on NaN: an element never written
        std::snprintf(detail, 160, "D[%d][%d] = %g, expected %g", i, j, D[i * N + j], ref);
        ok = false;
        break;
      }
    }
  if (ok) std::snprintf(detail, 160, "max abs error %.3g", worst);
  report(name, ok, detail);
}

int main() {
  cudaDeviceProp prop;
  cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  if (prop.major < 8) {
    std::printf("FAIL  the self-test needs sm_80 or newer\n");
    return 2;
  }
  test_mma<tl::f16, float>("mma m16n8k16 f16 -> f32", 1e-4, 1e-5);
  test_mma<tl::bf16, float>("mma m16n8k16 bf16 -> f32", 1e-4, 1e-5);
  test_mma<tl::f16, tl::f16>("mma m16n8k16 f16 -> f16", 1e-2, 2e-3);
  test_ldmatrix<1, false>("ldmatrix x1");
  test_ldmatrix<2, false>("ldmatrix x2");
  test_ldmatrix<4, false>("ldmatrix x4");
  test_ldmatrix<1, true>("ldmatrix x1.trans");
  test_ldmatrix<2, true>("ldmatrix x2.trans");
  test_ldmatrix<4, true>("ldmatrix x4.trans");
  test_ldmatrix_mma();
  test_cp_async();
  test_reductions();
  test_fp8_decode();
  test_encode();
  test_int4();
  test_math("exp2 (ex2.approx.ftz)", Fn::Exp2, -125.0f, 127.0f, ref_exp2, 2.4e-7, 0.0);
  test_math("exp", Fn::Exp, -80.0f, 80.0f, ref_exp, 2e-5, 0.0);
  test_math("log2 (lg2.approx.ftz)", Fn::Log2, 1e-3f, 1e3f, ref_log2, 0.0, 2e-6);
  test_math("rsqrt", Fn::Rsqrt, 1e-3f, 1e3f, ref_rsqrt, 4e-7, 0.0);
  test_math("tanh (tanh.approx)", Fn::Tanh, -10.0f, 10.0f, ref_tanh, 1e-3, 1e-6);
  test_math("sigmoid", Fn::Sigmoid, -30.0f, 30.0f, ref_sigmoid, 1e-6, 1e-7);
  test_specials();
  test_atomics();
  test_named_barrier();
  // wgmma needs an sm_90a build (the macro) and an sm_90 device.
  const bool sm90a = prop.major == 9 && device_code_is_sm90a();
  test_wgmma<tl::f16, 64, 64>("wgmma m64n64k16 f16, 128B swizzle, K 64", sm90a);
  test_wgmma<tl::bf16, 128, 64>("wgmma m64n128k16 bf16, 128B swizzle, K 64", sm90a);
  test_wgmma<tl::f16, 256, 32>("wgmma m64n256k16 f16, 64B swizzle, K 32", sm90a);
  test_wgmma<tl::f16, 8, 16>("wgmma m64n8k16 f16, 32B swizzle, K 16", sm90a);
  test_wgmma<tl::bf16, 96, 64>("wgmma m64n96k16 bf16, 128B swizzle, K 64", sm90a);
  test_wgmma<tl::f16, 64, 64, true>("wgmma m64n64k16 f16, B MN-major, K 64", sm90a);
  test_wgmma<tl::f16, 128, 64, true>("wgmma m64n128k16 f16, B MN-major, K 64", sm90a);
  test_wgmma<tl::bf16, 256, 32, true>("wgmma m64n256k16 bf16, B MN-major, K 32", sm90a);
  test_wgmma<tl::f16, 256, 32, true>("wgmma m64n256k16 f16, B MN-major, K 32", sm90a);
  test_wgmma<tl::f16, 256, 64, true>("wgmma m64n256k16 f16, B MN-major, K 64", sm90a);
  test_wgmma<tl::f16, 64, 32, true>("wgmma m64n64k16 f16, B MN-major, K 32", sm90a);
  test_wgmma<tl::f16, 128, 32, true>("wgmma m64n128k16 f16, B MN-major, K 32", sm90a);
  test_wgmma<tl::f16, 192, 64, true>("wgmma m64n192k16 f16, B MN-major, K 64", sm90a);
  test_wgmma<tl::f16, 64, 16, true>("wgmma m64n64k16 f16, B MN-major, K 16", sm90a);
  std::printf("%s: %d check(s) failed\n", g_failures ? "FAILED" : "PASSED", g_failures);
  return g_failures ? 1 : 0;
}
