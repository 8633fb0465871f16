// Compile test of the device library: includes tl/tl.h and instantiates every function in
// small kernels, so that nvcc (front end and ptxas) checks each inline-PTX form and each
// template for the architecture it is built for. It is built, never run; see
// tests/gpu/stdlib/stdlib_selftest.cu for the run-time checks.
#include "tl/tl.h"
#include "tl/wgmma.h"
#include "tl/mbarrier.h"
#include "tl/tma.h"

namespace {

// ---- common.h ------------------------------------------------------------------------------
static_assert(tl::ceildiv(10, 4) == 3 && tl::ceildiv(8, 4) == 2, "ceildiv");
static_assert(tl::round_up(10, 8) == 16, "round_up");
static_assert(tl::floordiv(-7, 2) == -4 && tl::floordiv(7, 2) == 3, "floordiv");
static_assert(tl::floormod(-7, 2) == 1 && tl::floormod(6, 3) == 0, "floormod");
static_assert(tl::is_pow2(64) && !tl::is_pow2(48) && !tl::is_pow2(0), "is_pow2");
static_assert(tl::log2_pow2(1) == 0 && tl::log2_pow2(128) == 7, "log2_pow2");
static_assert(std::is_same_v<tl::vec2_t<tl::f16>, __half2>, "vec2_t");

// ---- dtypes.h ------------------------------------------------------------------------------
template <class To, class From>
__device__ void convert_into(To* out, const From* in, int i) {
  out[i] = tl::convert<To>(in[i]);
}

__global__ void k_dtypes(float* f, tl::f16* h, tl::bf16* b, tl::f8e4m3* e4, tl::f8e5m2* e5,
                         double* d, int* n, std::uint32_t* words, tl::f16x2* h2, tl::bf16x2* b2) {
  const int i = static_cast<int>(threadIdx.x);
  convert_into(h, f, i);
  convert_into(b, f, i);
  convert_into(e4, f, i);
  convert_into(e5, f, i);
  convert_into(f, h, i);
  convert_into(f, b, i);
  convert_into(f, e4, i);
  convert_into(f, e5, i);
  convert_into(h, b, i);
  convert_into(e4, h, i);
  convert_into(h, d, i);
  convert_into(n, h, i);
  convert_into(h, n, i);
  convert_into(d, f, i);

  float2 p = tl::to_float2(h2[i]);
  p.x += tl::to_float2(b2[i]).y;
  h2[i] = tl::to_f16x2(p);
  b2[i] = tl::to_bf16x2(p);
  tl::f8e4m3x2 q4 = tl::to_f8e4m3x2(p);
  tl::f8e5m2x2 q5 = tl::to_f8e5m2x2(p);
  h2[i + 1] = __hadd2(tl::to_f16x2(q4), tl::to_f16x2(q5));
  f[i + 1] = tl::to_float2(q4).x + tl::to_float2(q5).y;
  h2[i + 2] = tl::make_f16x2(h[0], h[1]);
  b2[i + 2] = tl::make_bf16x2(b[0], b[1]);

  tl::f16x2 hs[4], hu[4], hr[4];
  tl::bf16x2 bs[4], bu[4], br[4];
  tl::unpack_int4x8<true, tl::f16>(words[i], hs);
  tl::unpack_int4x8<false, tl::f16>(words[i], hu);
  tl::unpack_int4x8_ref<true, tl::f16>(words[i], hr);
  tl::unpack_int4x8<true, tl::bf16>(words[i], bs);
  tl::unpack_int4x8<false, tl::bf16>(words[i], bu);
  tl::unpack_int4x8_ref<false, tl::bf16>(words[i], br);
  for (int k = 0; k < 4; ++k) {
    h2[4 * i + k] = __hadd2(__hadd2(hs[k], hu[k]), hr[k]);
    b2[4 * i + k] = __hadd2(__hadd2(bs[k], bu[k]), br[k]);
  }
  const int v[8] = {n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]};
  words[i] = tl::pack_int4x8(v) ^ static_cast<std::uint32_t>(tl::extract_int4<true>(words[i], 3) +
                                                             tl::extract_int4<false>(words[i], 5));
  words[i + 1] =
      tl::lop3<0x96>(words[0], words[1], words[2]) + tl::byte_perm(words[0], words[1], 0x5410);
}

// ---- dequant.h -----------------------------------------------------------------------------
// dequant_i4's steps: shared tiles (16-byte store) and fragments (register arrays, u8 and i8),
// signed and unsigned weights, with zero points (the four-argument forms).
__global__ void k_dequant(const std::uint8_t* packed, const std::int8_t* signed_packed, tl::f16* h, tl::bf16* b) {
  const int i = threadIdx.x;
  tl::dequant_i4x8<tl::f16, true>(packed + 4 * i, h[0], h + 8 * i);
  tl::dequant_i4x8<tl::bf16, false>(packed + 4 * i, b[0], b + 8 * i);
  tl::dequant_u4x8<tl::f16, true>(packed + 4 * i, h[0], h + 512 + 8 * i);
  tl::dequant_u4x8<tl::bf16>(packed + 4 * i, b[0], b[2], b + 512 + 8 * i);
  tl::dequant_i4x8<tl::f16>(packed + 4 * i, h[0], h[2], h + 768 + 8 * i);
  std::uint8_t bytes[4];
  std::int8_t sbytes[4];
  for (int k = 0; k < 4; ++k) {
    bytes[k] = packed[4 * i + k];
    sbytes[k] = signed_packed[4 * i + k];
  }
  tl::f16 hr[8];
  tl::bf16 br[8];
  tl::dequant_i4x8_regs<tl::f16, true>(bytes, h[1], hr);
  tl::dequant_i4x8_regs<tl::bf16, false>(sbytes, b[1], br);
  tl::dequant_u4x8_regs<tl::f16>(bytes, h[1], h[3], hr);
  tl::dequant_i4x8_regs<tl::bf16>(sbytes, b[1], b[3], br);
  tl::dequant_u4x8_regs<tl::bf16, true>(bytes, b[1], br);
  for (int k = 0; k < 8; ++k) {
    h[256 + 8 * i + k] = hr[k];
    b[256 + 8 * i + k] = br[k];
  }
}

// ---- math.h --------------------------------------------------------------------------------
template <class T>
__device__ T all_math(T x, T y) {
  T r = tl::exp2(x) + tl::exp(y) + tl::log2(x) + tl::log(y) + tl::sqrt(x) + tl::rsqrt(y);
  r = r + tl::tanh(x) + tl::sigmoid(y) + tl::abs(x);
  return tl::max(r, tl::min(x, y)) + tl::max(tl::inf<T>(), tl::neg_inf<T>());
}

__global__ void k_math(float* f, double* d, tl::f16* h, tl::bf16* b, int* n, tl::f16x2* h2,
                       tl::bf16x2* b2, tl::f8e4m3* e4, tl::f8e5m2* e5) {
  const int i = static_cast<int>(threadIdx.x);
  f[i] = all_math(f[i], f[i + 1]) + tl::rcp(f[i + 2]);
  d[i] = all_math(d[i], d[i + 1]);
  h[i] = all_math(h[i], h[i + 1]);
  b[i] = all_math(b[i], b[i + 1]);
  n[i] = tl::max(n[i], tl::min(n[i + 1], tl::abs(n[i + 2]))) + tl::inf<int>() + tl::neg_inf<int>();
  h2[i] = tl::max(h2[i], tl::min(h2[i + 1], h2[i + 2]));
  b2[i] = tl::max(b2[i], tl::min(b2[i + 1], b2[i + 2]));
  e4[i] = tl::inf<tl::f8e4m3>();
  e5[i] = tl::neg_inf<tl::f8e5m2>();
  n[i + 1] = static_cast<int>(tl::inf<std::uint8_t>()) + tl::neg_inf<std::int16_t>() +
             static_cast<int>(tl::inf<std::int64_t>() >> 40);
}

// ---- memory.h / cp_async.h -----------------------------------------------------------------
template <int Bytes>
__device__ void vector_moves(char* g, char* s, int i) {
  tl::store_vec<Bytes>(g + Bytes * i, tl::load_vec<Bytes>(s + Bytes * i));
  tl::copy_vec<Bytes>(s + Bytes * (i + 32), g + Bytes * (i + 32));
  if constexpr (Bytes >= 4) {
    const std::uint32_t a = tl::smem_addr(s + Bytes * i);
    tl::st_shared<Bytes>(a, tl::load_vec_readonly<Bytes>(g + Bytes * (i + 64)));
    tl::store_vec<Bytes>(g + Bytes * (i + 96), tl::ld_shared<Bytes>(a));
  }
}

template <int Bytes, tl::CacheLevel Cache>
__device__ void async_copies(char* s, const char* g, int i, bool valid) {
  tl::cp_async<Bytes, Cache>(s + Bytes * i, g + Bytes * i);
  tl::cp_async_zfill<Bytes, Cache>(s + Bytes * (i + 32), g + Bytes * (i + 32), valid);
  tl::cp_async_partial<Bytes, Cache>(s + Bytes * (i + 64), g + Bytes * (i + 64), i % Bytes);
}

__global__ void k_memory(char* g, int flag) {
  alignas(16) __shared__ char s[16 * 128];
  const int i = static_cast<int>(threadIdx.x);
  vector_moves<1>(g, s, i);
  vector_moves<2>(g, s, i);
  vector_moves<4>(g, s, i);
  vector_moves<8>(g, s, i);
  vector_moves<16>(g, s, i);
  g[i] = static_cast<char>(tl::is_aligned<16>(g + i) + tl::is_aligned<4>(s + i));
  __syncthreads();

  async_copies<4, tl::CacheLevel::All>(s, g, i, flag != 0);
  async_copies<8, tl::CacheLevel::All>(s, g, i, flag != 0);
  async_copies<16, tl::CacheLevel::All>(s, g, i, flag != 0);
  async_copies<16, tl::CacheLevel::Global>(s, g, i, flag != 0);
  tl::cp_async<16>(s, g);  // default cache level
  tl::cp_async_commit();
  tl::cp_async_wait<1>();
  tl::cp_async_wait<0>();
  tl::cp_async_wait_all();
  __syncthreads();
  g[i + 1] = s[i];
}

// Predicated element loads of every size the generated code reads element by element.
__global__ void k_guarded_loads(const tl::f8e4m3* e4, const tl::f16* h, const tl::bf16* b, const float* f,
                                const double* d, const std::int8_t* c, float* out, int n) {
  const int i = static_cast<int>(threadIdx.x);
  const bool valid = i < n;
  out[i] = tl::convert<float>(tl::load_or_zero(e4 + i, valid)) + tl::convert<float>(tl::load_or_zero(h + i, valid)) +
           tl::convert<float>(tl::load_or_zero(b + i, valid)) + tl::load_or_zero(f + i, valid) +
           static_cast<float>(tl::load_or_zero(d + i, valid)) + tl::load_or_zero(c + i, valid);
}

// ---- ldmatrix.h / mma.h --------------------------------------------------------------------
template <int Num, bool Trans>
__device__ std::uint32_t load_matrices(const tl::f16* smem, int lane) {
  std::uint32_t r[Num];
  tl::ldmatrix<Num, Trans>(r, smem + 8 * lane);
  std::uint32_t acc = 0;
  for (std::uint32_t x : r) acc ^= x;
  tl::ldmatrix<Num, Trans>(r, tl::smem_addr(smem + 8 * lane));
  for (std::uint32_t x : r) acc ^= x;
  return acc;
}

template <class T, class Acc>
__device__ void one_mma(tl::m16n8k16::FragC<Acc>& acc, const std::uint32_t* words) {
  tl::m16n8k16::FragA<T> a;
  tl::m16n8k16::FragB<T> b;
  for (int r = 0; r < 4; ++r) a.reg[r] = words[r];
  for (int r = 0; r < 2; ++r) b.reg[r] = words[4 + r];
  tl::m16n8k16::FragC<Acc> d;
  tl::m16n8k16::mma(d, a, b, acc);
  tl::m16n8k16::mma(acc, a, b);
  tl::m16n8k16::mma(acc, a, b, d);
  tl::m16n8k16::mma_raw<T>(acc.reg, a.reg, b.reg, acc.reg);
}

__global__ void k_tensor_core(std::uint32_t* out, float* outf) {
  alignas(16) __shared__ tl::f16 tile[32 * 8 * 2];
  const int lane = static_cast<int>(threadIdx.x % 32);
  tile[threadIdx.x] = tl::convert<tl::f16>(static_cast<float>(threadIdx.x));
  __syncthreads();
  std::uint32_t words[6];
  words[0] = load_matrices<1, false>(tile, lane) ^ load_matrices<1, true>(tile, lane);
  words[1] = load_matrices<2, false>(tile, lane) ^ load_matrices<2, true>(tile, lane);
  words[2] = load_matrices<4, false>(tile, lane) ^ load_matrices<4, true>(tile, lane);
  std::uint32_t r1[1], r2[2], r4[4];
  tl::ldmatrix_x1(r1, tile + 8 * lane);
  tl::ldmatrix_x2(r2, tile + 8 * lane);
  tl::ldmatrix_x4(r4, tile + 8 * lane);
  words[3] = r1[0] ^ r2[1] ^ r4[3];
  tl::ldmatrix_x1_trans(r1, tl::smem_addr(tile + 8 * lane));
  tl::ldmatrix_x2_trans(r2, tile + 8 * lane);
  tl::ldmatrix_x4_trans(r4, tile + 8 * lane);
  words[4] = r1[0] ^ r2[1] ^ r4[3];
  words[5] = out[lane];

  tl::m16n8k16::FragC<float> acc_f16_in, acc_bf16_in;
  tl::m16n8k16::FragC<tl::f16> acc_h;
  acc_f16_in.clear();
  acc_bf16_in.clear();
  acc_h.clear();
  one_mma<tl::f16, float>(acc_f16_in, words);
  one_mma<tl::bf16, float>(acc_bf16_in, words);
  one_mma<tl::f16, tl::f16>(acc_h, words);
  using L = tl::m16n8k16::Layout;
  for (int e = 0; e < 4; ++e) {
    outf[L::c_row(lane, e) * tl::m16n8k16::N + L::c_col(lane, e)] =
        acc_f16_in.reg[e] + acc_bf16_in.reg[e];
  }
  out[lane] = acc_h.reg[0] ^ acc_h.reg[1] ^
              static_cast<std::uint32_t>(
                  L::a_row(lane, 3) + L::a_col(lane, 5) + L::b_row(lane, 2) + L::b_col(lane, 1) +
                  tl::LdmatrixLayout::row(lane, 1, true) + tl::LdmatrixLayout::col(lane, 0, false) +
                  tl::LdmatrixLayout::address_lane(lane / 8, lane % 8));
}

// ---- reduce.h ------------------------------------------------------------------------------
template <class Op, class T>
__device__ T all_reductions(T x, T* smem) {
  T r = tl::warp_allreduce<Op>(x);
  r = Op::combine(r, tl::warp_allreduce<Op, 4, 1>(x));
  r = Op::combine(r, tl::warp_allreduce<Op, 8, 4>(x));
  r = Op::combine(r, tl::group_allreduce<Op, 4, 1, 256>(x, smem));
  r = Op::combine(r, tl::group_allreduce<Op, 4, 64, 256>(x, smem));
  r = Op::combine(r, tl::group_allreduce<Op, 16, 4, 256>(x, smem));
  r = Op::combine(r, tl::block_allreduce<Op, 256>(x, smem));
  r = Op::combine(r, tl::block_allreduce<Op, 32>(x, smem));
  return Op::combine(r, Op::template identity<T>());
}

template <class T>
__device__ void reductions_of(T* data, T* smem) {
  const int i = static_cast<int>(threadIdx.x);
  T x = data[i];
  T r = all_reductions<tl::SumOp>(x, smem);
  r = r + all_reductions<tl::MaxOp>(x, smem);
  r = r + all_reductions<tl::MinOp>(x, smem);
  r = r + all_reductions<tl::AbsSumOp>(x, smem);
  r = r + all_reductions<tl::AbsMaxOp>(x, smem);
  r = r + tl::warp_sum(x) + tl::warp_max(x) + tl::warp_min(x) + tl::warp_abssum(x) +
      tl::warp_absmax(x);
  data[i] = r;
}

// The bitwise reductions over integers of each width, and argmax/argmin over (value,
// position) pairs of each value type, through every reduction group.
template <class T>
__device__ void bitwise_reductions_of(T* data, T* smem) {
  const int i = static_cast<int>(threadIdx.x);
  T x = data[i];
  data[i] = static_cast<T>(all_reductions<tl::AndOp>(x, smem) ^ all_reductions<tl::OrOp>(x, smem) ^
                           all_reductions<tl::XorOp>(x, smem));
}

template <class T>
__device__ void arg_reductions_of(T* data, int* index, tl::ArgPair<T>* smem) {
  const int i = static_cast<int>(threadIdx.x);
  const tl::ArgPair<T> x{data[i], i};
  const tl::ArgPair<T> a = all_reductions<tl::ArgMaxOp>(x, smem), b = all_reductions<tl::ArgMinOp>(x, smem);
  data[i] = a.value;
  index[i] = a.index + b.index;
}

__global__ void __launch_bounds__(256) k_reduce(float* f, tl::f16* h, tl::bf16* b, int* n, std::int8_t* c,
                                                 std::uint8_t* uc, std::int16_t* s, unsigned* u, long long* ll,
                                                 double* d, int* index) {
  __shared__ float sf[256];
  __shared__ tl::f16 sh[256];
  __shared__ tl::bf16 sb[256];
  __shared__ int sn[256];
  reductions_of(f, sf);
  reductions_of(h, sh);
  reductions_of(b, sb);
  reductions_of(n, sn);
  __shared__ std::int8_t sc[256];
  __shared__ std::uint8_t suc[256];
  __shared__ std::int16_t ss[256];
  __shared__ unsigned su[256];
  __shared__ long long sll[256];
  bitwise_reductions_of(c, sc);
  bitwise_reductions_of(uc, suc);
  bitwise_reductions_of(s, ss);
  bitwise_reductions_of(n, sn);
  bitwise_reductions_of(u, su);
  bitwise_reductions_of(ll, sll);
  __shared__ tl::ArgPair<float> pf[256];
  __shared__ tl::ArgPair<tl::f16> ph[256];
  __shared__ tl::ArgPair<tl::bf16> pb[256];
  __shared__ tl::ArgPair<int> pn[256];
  __shared__ tl::ArgPair<long long> pll[256];
  __shared__ tl::ArgPair<double> pd[256];
  arg_reductions_of(f, index, pf);
  arg_reductions_of(h, index, ph);
  arg_reductions_of(b, index, pb);
  arg_reductions_of(n, index, pn);
  arg_reductions_of(ll, index, pll);
  arg_reductions_of(d, index, pd);
}

// ---- atomic.h / barrier.h ------------------------------------------------------------------
__global__ void k_atomic(float* f, double* d, int* n, unsigned* u, unsigned long long* ull,
                         tl::f16* h, tl::f16x2* h2, tl::bf16* b, tl::bf16x2* b2, float2* f2,
                         float4* f4) {
  const float old = tl::atomic_add(f, 1.0f);
  tl::atomic_add(d, 1.0);
  tl::atomic_add(n, 1);
  tl::atomic_add(u, 1u);
  tl::atomic_add(ull, 1ull);
  tl::atomic_add(h, tl::convert<tl::f16>(old));
  tl::atomic_add(h2, tl::to_f16x2(make_float2(1.0f, 2.0f)));
  tl::atomic_add(b, tl::convert<tl::bf16>(1.0f));
  tl::atomic_add(b2, tl::to_bf16x2(make_float2(1.0f, 2.0f)));
  tl::atomic_add(f2, make_float2(1.0f, 2.0f));
  const float4 prev = tl::atomic_add(f4, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
  f[1] = prev.w;
}

__global__ void k_barrier(int* out) {
  __shared__ int slot;
  const int warp = static_cast<int>(threadIdx.x / 32);
  if (warp == 0) {
    if (threadIdx.x == 0) slot = out[0];
    tl::barrier_arrive(1, 64);
    tl::NamedBarrier<2, 64>::arrive();
  } else {
    tl::barrier_sync(1, 64);
    tl::NamedBarrier<2, 64>::sync();
    out[threadIdx.x] = slot;
  }
  tl::warp_sync();
}

// ---- wgmma.h: every generated shape and dtype (ptxas checks each under -arch=sm_90a; the
// other architectures compile the trap) -----------------------------------------------------
template <int N, class T, class Acc>
__device__ void wgmma_shape(const void* a_s, const void* b_s, float* out) {
  alignas(4) Acc d[N / 2] = {};
  tl::wgmma::fence();
  tl::wgmma::mma<N, T>(d, tl::wgmma::kmajor_descriptor(a_s, 0, tl::wgmma::Swizzle::B128),
                       tl::wgmma::kmajor_descriptor(b_s, 1, tl::wgmma::Swizzle::B64), true);
  tl::wgmma::mma<N, T, /*TransB=*/true>(d, tl::wgmma::kmajor_descriptor(a_s, 1, tl::wgmma::Swizzle::B32),
                                        tl::wgmma::mnmajor_descriptor(b_s, 1, 8192), true);
  tl::wgmma::commit_group();
  tl::wgmma::wait_group<0>();
  out[threadIdx.x] = tl::convert<float>(d[N / 2 - 1]);
}

template <class T, class Acc, int... N>
__device__ void wgmma_shapes(const void* a_s, const void* b_s, float* out) {
  (wgmma_shape<N, T, Acc>(a_s, b_s, out), ...);
}

__global__ void k_wgmma(float* out) {
  __shared__ alignas(1024) unsigned char a_s[8192], b_s[32768];
  tl::wgmma::fence_proxy_async_shared();
  wgmma_shapes<tl::f16, float, 8, 16, 32, 64, 96, 128, 192, 256>(a_s, b_s, out);
  wgmma_shapes<tl::bf16, float, 8, 16, 32, 64, 96, 128, 192, 256>(a_s, b_s, out);
  wgmma_shapes<tl::f16, tl::f16, 8, 16, 32, 64, 96, 128, 192, 256>(a_s, b_s, out);
}
// The block-level GEMMs over warpgroups: every transpose, register A, groups left in
// flight, the consumers' own thread numbering, the drain; f32 and f16 accumulators.
template <class Acc>
__device__ void wgmma_gemms(float* out) {
  __shared__ alignas(1024) tl::f16 a_s[128 * 64], b_s[64 * 128];
  alignas(4) Acc c[64];
  tl::f16 a_r[32];
  for (int i = 0; i < 32; ++i) a_r[i] = tl::f16(out[i]);
  tl::wgmma::gemm_ss<128, 128, 64, 2, 1, 128, false, false>(a_s, b_s, c, static_cast<int>(threadIdx.x), true);
  tl::wgmma::gemm_ss<128, 128, 64, 2, 1, 128, true, true, 1>(a_s, b_s, c);
  tl::wgmma::gemm_ss<128, 128, 64, 1, 2, 64, false, true>(a_s, b_s, c);
  tl::wgmma::gemm_rs<128, 128, 64, 2, 1, 128, false>(a_r, b_s, c);
  tl::wgmma::drain(c);
  for (int i = 0; i < 64; ++i) out[i * 256 + threadIdx.x] = tl::convert<float>(c[i]);
}
__global__ void k_wgmma_gemm(float* out) {
  wgmma_gemms<float>(out);
  wgmma_gemms<tl::f16>(out);
}
// The block-level GEMMs over warps (mma.sync): f32 and f16 accumulators, A and B in shared
// memory or registers.
template <class Acc>
__device__ void mma_gemms(float* out) {
  __shared__ alignas(128) tl::f16 a_s[64 * 32], b_s[32 * 64];
  alignas(4) Acc c[32];
  tl::f16 a_r[16];
  for (int i = 0; i < 32; ++i) c[i] = Acc(out[i]);
  for (int i = 0; i < 16; ++i) a_r[i] = tl::f16(out[i]);
  tl::gemm_ss<64, 64, 32, 2, 2, false, true>(a_s, b_s, c);
  tl::gemm_rs<64, 64, 32, 4, 1, false>(a_r, b_s, c);
  // Operands in annotated layouts: read element by element through their offset functors.
  auto rowMajor32 = [](int row, int col) { return row * 32 + col; };
  auto rowMajor64 = [](int row, int col) { return row * 64 + col; };
  tl::gemm_ss<64, 64, 32, 2, 2, false, false>(a_s, b_s, c, rowMajor32, tl::SwizzledOperand{});
  tl::gemm_ss<64, 64, 32, 2, 2, true, false>(a_s, b_s, c, rowMajor64, rowMajor64);
  tl::gemm_rs<64, 64, 32, 4, 1, true>(a_r, b_s, c, rowMajor32);
  // B in registers (B^T [64, 32] over 4 full_col warps of 16 columns), with A read by
  // ldmatrix, through ldmatrix.trans and through a functor; A and B in registers (one warp).
  tl::gemm_sr<64, 64, 32, 1, 4, false>(a_s, a_r, c);
  tl::gemm_sr<64, 64, 32, 1, 4, true>(a_s, a_r, c);
  tl::gemm_sr<64, 64, 32, 1, 4, false>(a_s, a_r, c, rowMajor32);
  alignas(4) Acc c_rr[8];
  for (int i = 0; i < 8; ++i) c_rr[i] = Acc(out[i]);
  tl::gemm_rr<16, 16, 32, 1, 1>(a_r, a_r, c_rr);
  for (int i = 0; i < 8; ++i) out[i * 128 + threadIdx.x + 64] = tl::convert<float>(c_rr[i]);
  for (int i = 0; i < 32; ++i) out[i * 128 + threadIdx.x] = tl::convert<float>(c[i]);
}
__global__ void k_mma_gemm(float* out) {
  mma_gemms<float>(out);
  mma_gemms<tl::f16>(out);
}
// The other input types (ldmatrix for K-major operands, gathered registers for the others;
// fp8 traps below sm_89), every operand order, and operands in annotated layouts (offset
// functors, element by element) in either order.
template <class T, class Acc>
__device__ void mma_gemms_of(unsigned char* smem, float* out) {
  T* a_s = reinterpret_cast<T*>(smem);
  T* b_s = a_s + 64 * 64;
  Acc c[32];
  for (int i = 0; i < 32; ++i) c[i] = static_cast<Acc>(out[i]);
  tl::gemm_ss<64, 64, 64, 2, 2, false, true>(a_s, b_s, c);
  tl::gemm_ss<64, 64, 64, 2, 2, false, false>(a_s, b_s, c);
  tl::gemm_ss<64, 64, 64, 2, 2, true, true>(a_s, b_s, c);
  tl::gemm_ss<64, 64, 64, 4, 1, true, false>(a_s, b_s, c);
  tl::gemm_ss<64, 24, 64, 4, 1, false, false>(a_s, b_s, *reinterpret_cast<Acc(*)[12]>(c));
  auto transposed = [](int row, int col) { return col * 64 + row; };
  tl::gemm_ss<64, 64, 64, 2, 2, false, false>(a_s, b_s, c, transposed, tl::SwizzledOperand{});
  tl::gemm_ss<64, 64, 64, 2, 2, true, true>(a_s, b_s, c, tl::SwizzledOperand{}, transposed);
  for (int i = 0; i < 32; ++i) out[i * 128 + threadIdx.x] = static_cast<float>(c[i]);
}
__global__ void k_mma_gemm_dtypes(float* out) {
  __shared__ alignas(128) unsigned char smem[2 * 64 * 64 * sizeof(float)];
  mma_gemms_of<tl::i8, tl::i32>(smem, out);
  mma_gemms_of<float, float>(smem, out);
  mma_gemms_of<tl::f8e4m3, float>(smem, out);
  mma_gemms_of<tl::f8e5m2, float>(smem, out);
}

// Transaction barriers and bulk tensor copies.
__global__ void k_tma(const __grid_constant__ CUtensorMap map, int* out) {
  __shared__ alignas(1024) tl::f16 tile[64 * 64];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    tl::mbarrier::init(&bar, 1);
    tl::mbarrier::fence_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    tl::tma::prefetch(&map);
    tl::mbarrier::arrive_expect_tx(&bar, sizeof(tile));
    tl::tma::load_2d(tile, &map, &bar, 0, 0);
    tl::tma::load_3d(tile, &map, &bar, 0, 0, 1);
    tl::tma::load_4d(tile, &map, &bar, 0, 0, 1, 2);
    tl::tma::load_5d(tile, &map, &bar, 0, 0, 1, 2, 3);
  }
  tl::mbarrier::wait(&bar, 0);
  tl::mbarrier::arrive(&bar);
  out[threadIdx.x] = static_cast<int>(static_cast<float>(tile[threadIdx.x]));
}

__global__ void k_registers() {
  if (threadIdx.x < 128)
    tl::tma::release_registers<40>();
  else
    tl::tma::claim_registers<232>();
}

static_assert(tl::wgmma::make_descriptor(0x400, 16, 1024, tl::wgmma::Swizzle::B128) ==
                  ((1ull << 62) | (64ull << 32) | (1ull << 16) | 0x40ull),
              "descriptor fields");
static_assert(tl::wgmma::Layout::row(37, 6) == 25 && tl::wgmma::Layout::col(37, 6) == 10,
              "accumulator layout");

// gemm_ss/gemm_rs build one descriptor per row or column block at k step 0 and advance it by
// a constant per k step (tl::wgmma::detail::advance): the same descriptor as recomputing the
// address, for every k step, row or column block and base the compiler can emit (K-major and
// MN-major operands in the 32-, 64- and 128-byte swizzles, 16- and 8-bit elements, several
// panels along K, tiles ending at the top of the 228 KiB of shared memory).
template <class Op>
constexpr bool advances_like_recomputing(int blocks, int block_step, int ksteps, std::uint32_t base) {
  for (int b = 0; b < blocks; ++b)
    for (int kb = 0; kb < ksteps; ++kb)
      if (tl::wgmma::detail::advance(Op::desc(base, b * block_step, 0), Op::kstep_bytes(kb)) !=
          Op::desc(base, b * block_step, kb))
        return false;
  return true;
}
namespace wd = tl::wgmma::detail;
static_assert(advances_like_recomputing<wd::KMajor<128, 64, tl::f16>>(2, 64, 4, 0x400), "K-major 128B");
static_assert(advances_like_recomputing<wd::KMajor<64, 576, tl::f16>>(1, 64, 36, 131072), "K-major, 9 panels");
static_assert(advances_like_recomputing<wd::KMajor<64, 32, tl::f16>>(1, 64, 2, 0x800), "K-major 64B");
static_assert(advances_like_recomputing<wd::KMajor<64, 16, tl::f16>>(1, 64, 1, 0x800), "K-major 32B");
static_assert(advances_like_recomputing<wd::KMajor<64, 32, tl::bf16>>(8, 8, 2, 0x1000), "K-major, 8-row blocks");
static_assert(advances_like_recomputing<wd::KMajor<128, 128, std::int8_t>>(2, 64, 4, 0x2000), "K-major 8-bit");
static_assert(advances_like_recomputing<wd::KMajor<128, 256, std::int8_t>>(2, 64, 8, 0x2000), "K-major 8-bit, 2 panels");
static_assert(advances_like_recomputing<wd::MNMajor<64, 512, tl::f16>>(8, 64, 4, 0x10000), "MN-major 128B");
static_assert(advances_like_recomputing<wd::MNMajor<64, 96, tl::f16>>(12, 8, 4, 0x400), "MN-major, columns inside panels");
static_assert(advances_like_recomputing<wd::MNMajor<32, 32, tl::f16>>(4, 8, 2, 0x400), "MN-major 64B");
static_assert(advances_like_recomputing<wd::MNMajor<16, 16, tl::f16>>(2, 8, 1, 0x400), "MN-major 32B");
static_assert(advances_like_recomputing<wd::KMajor<64, 64, tl::f16>>(1, 64, 4, 228 * 1024 - 8192), "top of shared memory");

}  // namespace

// The kernels have internal linkage; reference them so that they are emitted and checked.
void tl_stdlib_compile_test_launch_all() {
  k_dtypes<<<1, 32>>>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                      nullptr, nullptr);
  k_math<<<1, 32>>>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                    nullptr);
  k_memory<<<1, 32>>>(nullptr, 0);
  k_guarded_loads<<<1, 32>>>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0);
  k_dequant<<<1, 32>>>(nullptr, nullptr, nullptr, nullptr);
  k_tensor_core<<<1, 32>>>(nullptr, nullptr);
  k_reduce<<<1, 256>>>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                       nullptr);
  k_atomic<<<1, 32>>>(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                      nullptr, nullptr, nullptr);
  k_barrier<<<1, 64>>>(nullptr);
  k_wgmma<<<1, 128>>>(nullptr);
  k_wgmma_gemm<<<1, 256>>>(nullptr);
  k_mma_gemm<<<1, 128>>>(nullptr);
  k_mma_gemm_dtypes<<<1, 128>>>(nullptr);
  k_tma<<<1, 128>>>(CUtensorMap{}, nullptr);
  k_registers<<<1, 256>>>();
}
