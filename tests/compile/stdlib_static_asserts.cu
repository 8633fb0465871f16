// Compile-fail cases of the device library: each TL_FAIL_CASE value misuses one API, and the
// test (tests/compile/CMakeLists.txt) requires nvcc to reject it with the library's own
// static_assert message. Without TL_FAIL_CASE the file is valid, which proves that the
// failures come from the misuse and not from an unrelated error.
#include "tl/tl.h"
#include "tl/wgmma.h"

namespace {

__global__ void misuse(std::uint32_t* words, float* f) {
  const int lane = static_cast<int>(threadIdx.x % 32);
#if TL_FAIL_CASE == 1
  // bf16 tensor-core inputs only accumulate in f32.
  tl::m16n8k16::FragA<tl::bf16> a{};
  tl::m16n8k16::FragB<tl::bf16> b{};
  tl::m16n8k16::FragC<tl::f16> c{};
  tl::m16n8k16::mma(c, a, b);
  words[lane] = c.reg[0];
#elif TL_FAIL_CASE == 2
  // mma.sync operands are 16-bit.
  tl::m16n8k16::FragA<float> a{};
  words[lane] = a.reg[0];
#elif TL_FAIL_CASE == 3
  // ldmatrix loads 1, 2 or 4 matrices.
  alignas(16) __shared__ tl::f16 tile[256];
  std::uint32_t r[3];
  tl::ldmatrix<3>(r, tile + 8 * lane);
  words[lane] = r[0];
#elif TL_FAIL_CASE == 4
  // cp.async.cg only moves 16 bytes.
  alignas(16) __shared__ float s[64];
  tl::cp_async<8, tl::CacheLevel::Global>(s + 2 * lane, f + 2 * lane);
#elif TL_FAIL_CASE == 5
  // Barrier 16 does not exist.
  tl::NamedBarrier<16, 64>::sync();
#elif TL_FAIL_CASE == 6
  // A shuffle group cannot span more than a warp.
  f[lane] = tl::warp_allreduce<tl::SumOp, 16, 4>(f[lane]);
#elif TL_FAIL_CASE == 7
  // The magic-number unpacking produces 16-bit floats only.
  float2 out[4];
  tl::unpack_int4x8<true, float>(words[lane], out);
  f[lane] = out[0].x;
#elif TL_FAIL_CASE == 8
  // On wgmma too, bf16 inputs only accumulate in f32.
  __shared__ alignas(1024) tl::bf16 a_s[128 * 64], b_s[64 * 128];
  alignas(4) tl::f16 c[64];
  tl::wgmma::gemm_ss<128, 128, 64, 2, 1, 128, false, false>(a_s, b_s, c);
  f[lane] = tl::convert<float>(c[0]);
#elif TL_FAIL_CASE == 9
  // B in registers: the fragment of this warp's 16 columns of a [64, 32] B^T is 16 elements.
  __shared__ alignas(128) tl::f16 a_s[64 * 32];
  tl::f16 b_r[32] = {};
  float c[32] = {};
  tl::gemm_sr<64, 64, 32, 1, 4, false>(a_s, b_r, c);
  f[lane] = c[0];
#else
  tl::m16n8k16::FragA<tl::f16> a{};
  tl::m16n8k16::FragB<tl::f16> b{};
  tl::m16n8k16::FragC<tl::f16> c{};
  tl::m16n8k16::mma(c, a, b);
  words[lane] = c.reg[0];
  f[lane] = tl::warp_allreduce<tl::SumOp, 8, 4>(f[lane]);
#endif
}

}  // namespace

void tl_stdlib_static_assert_launch() { misuse<<<1, 32>>>(nullptr, nullptr); }
