// Compile test of the device library under hipcc (gfx90a): the portable part of tl/ (the
// NVIDIA-only headers, mma, ldmatrix, barrier, fp8, bf16 pairs, are empty under HIP) and the
// HIP half, tl/hip/ (the MFMA gemm).
#include "tl/hip/tl.h"

static_assert(TL_HIP == 1 && TL_CUDA == 0, "hipcc must select the HIP branch");
static_assert(TL_WARP_SIZE == 64, "CDNA wavefronts have 64 lanes");

namespace {

template <class T>
__device__ T all_math(T x, T y) {
  T r = tl::exp2(x) + tl::exp(y) + tl::log2(x) + tl::log(y) + tl::sqrt(x) + tl::rsqrt(y);
  r = r + tl::tanh(x) + tl::sigmoid(y) + tl::abs(x);
  return tl::max(r, tl::min(x, y)) + tl::max(tl::inf<T>(), tl::neg_inf<T>());
}

template <class Op, class T>
__device__ T all_reductions(T x, T* smem) {
  T r = tl::warp_allreduce<Op>(x);
  r = Op::combine(r, tl::warp_allreduce<Op, 4, 1>(x));
  r = Op::combine(r, tl::group_allreduce<Op, 4, 64, 256>(x, smem));
  r = Op::combine(r, tl::block_allreduce<Op, 256>(x, smem));
  return Op::combine(r, Op::template identity<T>());
}

__global__ void __launch_bounds__(256) k_portable(float* f, double* d, tl::f16* h, tl::bf16* b,
                                                  int* n, std::uint32_t* words, tl::f16x2* h2) {
  __shared__ float sf[256];
  __shared__ int sn[256];
  alignas(16) __shared__ char s[16 * 256];
  const int i = static_cast<int>(threadIdx.x);

  h[i] = tl::convert<tl::f16>(f[i]);
  b[i] = tl::convert<tl::bf16>(h[i]);
  f[i] = tl::convert<float>(b[i]) + tl::convert<float>(h[i + 1]);
  n[i] = tl::convert<int>(h[i + 2]);
  h2[i] = tl::to_f16x2(tl::to_float2(h2[i + 1]));
  tl::f16x2 unpacked[4], reference[4];
  tl::unpack_int4x8<false, tl::f16>(words[i], unpacked);
  tl::unpack_int4x8_ref<true, tl::f16>(words[i], reference);
  h2[i + 2] = __hadd2(unpacked[0], reference[3]);

  f[i] = all_math(f[i], f[i + 1]) + tl::rcp(f[i + 2]);
  d[i] = all_math(d[i], d[i + 1]);
  h[i] = all_math(h[i], h[i + 1]);
  n[i] = tl::max(n[i], tl::min(n[i + 1], tl::abs(n[i + 2])));

  tl::copy_vec<16>(s + 16 * i, f + 4 * i);
  tl::store_vec<8>(f + 2 * i, tl::load_vec_readonly<8>(d + i));
  tl::cp_async_zfill<16>(s + 16 * i, f + 4 * i, i % 2 == 0);
  tl::cp_async_partial<8, tl::CacheLevel::All>(s + 8 * i, f + 2 * i, i % 8);
  tl::cp_async_commit();
  tl::cp_async_wait<0>();
  tl::cp_async_wait_all();
  __syncthreads();

  f[i] += all_reductions<tl::SumOp>(f[i], sf) + all_reductions<tl::AbsMaxOp>(f[i], sf) +
          static_cast<float>(s[i]);
  n[i] += all_reductions<tl::MinOp>(n[i], sn);
  tl::atomic_add(f, 1.0f);
  tl::atomic_add(n, 1);
  tl::atomic_add(h2, h2[i]);
}

// The MFMA gemm (tl/hip/gemm.h): both sizes, both input types, every transpose, A, B and
// both in registers, and operands read through offset functors.
template <class T>
__device__ void all_gemms(const T* s, float* out) {
  float c32[2 * 2 * 16] = {}, c16[1 * 4 * 4] = {};
  tl::gemm_ss<128, 128, 32, 2, 2, false, false, 32>(s, s, c32);
  tl::gemm_ss<128, 128, 32, 2, 2, true, true, 32>(s, s, c32);
  tl::gemm_ss<64, 64, 32, 4, 1, false, true, 16>(s, s, c16);
  tl::gemm_ss<64, 64, 32, 4, 1, true, false, 16>(s, s, c16, [](int r, int c) { return r * 32 + c; });
  T a32[2 * 2 * 16], a16[1 * 2 * 4];
  for (int i = 0; i < 64; ++i) a32[i] = s[i];
  for (int i = 0; i < 8; ++i) a16[i] = s[i];
  tl::gemm_rs<128, 128, 64, 2, 2, false, 32>(a32, s, c32);
  tl::gemm_rs<64, 64, 32, 4, 1, true, 16>(a16, s, c16);
  // B in registers (full_col waves), and A and B in one wave.
  T b32[1 * 1 * 16];
  for (int i = 0; i < 16; ++i) b32[i] = s[i];
  float c_rr[4] = {};
  tl::gemm_sr<128, 128, 32, 1, 4, false, 32>(s, b32, c32);
  tl::gemm_sr<64, 64, 32, 1, 4, true, 16>(s, a16, c16, [](int r, int c) { return r * 64 + c; });
  tl::gemm_rr<16, 16, 32, 1, 1, 16>(a16, a16, c_rr);
  out[threadIdx.x] = c32[5] + c16[3] + c_rr[1];
}

__global__ void __launch_bounds__(256) k_mfma(float* out) {
  extern __shared__ __align__(16) unsigned char smem[];
  all_gemms(reinterpret_cast<const tl::f16*>(smem), out);
  all_gemms(reinterpret_cast<const tl::bf16*>(smem), out);
  int bx = 0, by = 0;
  tl::swizzle_blocks(8, bx, by);
  out[bx + by] = 0.0f;
}

}  // namespace

void tl_stdlib_hip_compile_test_launch() {
  k_portable<<<1, 256>>>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  k_mfma<<<1, 256, 65536>>>(nullptr);
}
