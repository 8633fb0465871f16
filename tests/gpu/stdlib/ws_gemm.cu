// A warp-specialized Hopper GEMM written by hand from the device library's pieces (tl/tma.h,
// tl/mbarrier.h, tl/wgmma.h) and the host's tensor maps (runtime/tlc/tma.h): the reference the
// compiler's sm_90a pipelines are built towards, checked against cuBLAS and timed beside it.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I stdlib -I runtime
//        tests/gpu/stdlib/ws_gemm.cu -lcublas -o ws_gemm && ./ws_gemm
//
// C[M, N] = A[M, K] @ B[K, N], f16 in, f32 accumulation, f16 out, all row-major. A block
// computes a 128x256 tile with three warpgroups: warpgroup 0 is the producer (one thread
// issues the bulk copies of each 64-deep k step into one of 4 stages, announced on full[s]),
// warpgroups 1 and 2 the consumers (64 rows each, one m64n256k16 wgmma per 16-deep step,
// each group left in flight while the next is issued; a stage goes back to the producer
// through empty[s] once the group that read it has completed). The producer gives registers
// to the consumers (setmaxnreg). Prints one line per shape: error against cuBLAS, unwritten
// elements, TFLOP/s of both; exits non-zero on a wrong result.
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tl/tl.h"
#include "tl/mbarrier.h"
#include "tl/tma.h"
#include "tlc/tma.h"

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4;
constexpr int kConsumers = 2, kThreads = 128 * (1 + kConsumers);
constexpr int kPanel = 64;  // B's 128-byte swizzle panels: 64 columns each, one bulk copy each

struct Shared {
  tl::f16 a[kStages][kBM * kBK];  // [128][64] K-major: one 128-byte-swizzled panel
  tl::f16 b[kStages][kBK * kBN];  // [64][256] MN-major: four [64][64] panels
  std::uint64_t full[kStages], empty[kStages];
};

__global__ void __launch_bounds__(kThreads, 1)
    ws_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, __half* C,
            int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem[];
  Shared& sm = *reinterpret_cast<Shared*>(smem);
  const int wg = threadIdx.x / 128, k_tiles = (K + kBK - 1) / kBK;
  const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      tl::mbarrier::init(&sm.full[s], 1);
      tl::mbarrier::init(&sm.empty[s], 128 * kConsumers);
    }
    tl::mbarrier::fence_init();
  }
  __syncthreads();

  if (wg == 0) {  // producer
    tl::tma::release_registers<40>();
    if (threadIdx.x == 0) {
      tl::tma::prefetch(&map_a);
      tl::tma::prefetch(&map_b);
      for (int k = 0; k < k_tiles; ++k) {
        const int s = k % kStages, phase = (k / kStages) & 1;
        tl::mbarrier::wait(&sm.empty[s], phase ^ 1);
        tl::mbarrier::arrive_expect_tx(&sm.full[s], (kBM * kBK + kBK * kBN) * sizeof(tl::f16));
        tl::tma::load_2d(sm.a[s], &map_a, &sm.full[s], k * kBK, m0);
        for (int p = 0; p < kBN / kPanel; ++p)
          tl::tma::load_2d(sm.b[s] + p * kBK * kPanel, &map_b, &sm.full[s], n0 + p * kPanel, k * kBK);
      }
    }
    return;
  }

  tl::tma::claim_registers<232>();
  const int thread = threadIdx.x - 128;  // the consumers' numbering
  const int t = thread % 128, row0 = m0 + (thread / 128) * 64;
  // Registers r and r + 1 (r even) hold adjacent columns: one 4-byte store where both exist
  // and the row is 4-byte aligned.
  auto store = [&](int r, float lo, float hi) {
    const int row = row0 + tl::wgmma::Layout::row(t, r), col = n0 + tl::wgmma::Layout::col(t, r);
    if (row >= M || col >= N) return;
    __half* p = C + static_cast<long>(row) * N + col;
    if (col + 1 < N && N % 2 == 0)
      *reinterpret_cast<__half2*>(p) = __floats2half2_rn(lo, hi);
    else {
      p[0] = __float2half(lo);
      if (col + 1 < N) p[1] = __float2half(hi);
    }
  };
  // The first k step overwrites the accumulator (the instruction's scale-d = 0): any ordinary
  // instruction defining or reading it in the loop's reach, even on a path the loop never
  // takes, makes ptxas serialize the wgmmas (C7514/C7515). So no k step at all is its own path.
  if (k_tiles == 0) {
    for (int r = 0; r < kBN / 2; r += 2) store(r, 0.0f, 0.0f);
    return;
  }
  float acc[kBM * kBN / (128 * kConsumers)];
  for (int k = 0; k < k_tiles; ++k) {
    const int s = k % kStages, phase = (k / kStages) & 1;
    tl::mbarrier::wait(&sm.full[s], phase);
    tl::wgmma::gemm_ss<kBM, kBN, kBK, kConsumers, 1, kBN, false, false, 1>(sm.a[s], sm.b[s], acc, thread,
                                                                             /*overwrite=*/k == 0);
    // The group of k - 1 has completed (at most this one is pending): its stage is free.
    if (k > 0) tl::mbarrier::arrive(&sm.empty[(k - 1) % kStages]);
  }
  tl::wgmma::drain(acc);
  for (int r = 0; r < kBN / 2; r += 2) store(r, acc[r], acc[r + 1]);
}

#define CHECK_CUDA(x)                                                             \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
      std::exit(2);                                                               \
    }                                                                             \
  } while (0)

struct Run {
  double ms_ours, ms_cublas, rel_error;
  long unwritten;
};

Run run(int M, int N, int K, cublasHandle_t handle) {
  std::vector<__half> ha(size_t(M) * K), hb(size_t(K) * N);
  unsigned seed = 12345u + M + 7u * N + 13u * K;
  auto next = [&] { seed = seed * 1664525u + 1013904223u; return float((seed >> 9) & 0xFFFF) / 65536.0f - 0.5f; };
  for (auto& x : ha) x = __float2half(next());
  for (auto& x : hb) x = __float2half(next());
  __half *a, *b, *c, *ref;
  CHECK_CUDA(cudaMalloc(&a, ha.size() * 2));
  CHECK_CUDA(cudaMalloc(&b, hb.size() * 2));
  CHECK_CUDA(cudaMalloc(&c, size_t(M) * N * 2));
  CHECK_CUDA(cudaMalloc(&ref, size_t(M) * N * 2));
  CHECK_CUDA(cudaMemcpy(a, ha.data(), ha.size() * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(c, 0xFF, size_t(M) * N * 2));  // NaN: unwritten elements show

  CUtensorMap map_a, map_b;
  if (!tlc::tma::encode_2d(&map_a, a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, M, K, size_t(K) * 2, kBM, kBK,
                           CU_TENSOR_MAP_SWIZZLE_128B) ||
      !tlc::tma::encode_2d(&map_b, b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, K, N, size_t(N) * 2, kBK, kPanel,
                           CU_TENSOR_MAP_SWIZZLE_128B)) {
    std::printf("tensor map encoding failed for %dx%dx%d\n", M, N, K);
    std::exit(2);
  }
  const int smem = sizeof(Shared);
  CHECK_CUDA(cudaFuncSetAttribute(ws_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  dim3 grid((N + kBN - 1) / kBN, (M + kBM - 1) / kBM);
  ws_gemm<<<grid, kThreads, smem>>>(map_a, map_b, c, M, N, K);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  const float alpha = 1.0f, beta = 0.0f;
  auto cublas = [&] {  // row-major C = A B is column-major C^T = B^T A^T
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, b, CUDA_R_16F, N, a, CUDA_R_16F, K, &beta, ref,
                 CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  cublas();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<__half> hc(size_t(M) * N), hr(size_t(M) * N);
  CHECK_CUDA(cudaMemcpy(hc.data(), c, hc.size() * 2, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hr.data(), ref, hr.size() * 2, cudaMemcpyDeviceToHost));
  double err = 0, norm = 0;
  long unwritten = 0;
  for (size_t i = 0; i < hc.size(); ++i) {
    double x = __half2float(hc[i]), y = __half2float(hr[i]);
    if (std::isnan(x)) { ++unwritten; continue; }
    err = std::fmax(err, std::fabs(x - y));
    norm = std::fmax(norm, std::fabs(y));
  }

  auto time = [&](auto&& launch) {
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (int i = 0; i < 3; ++i) launch();
    cudaEventRecord(start);
    const int reps = 20;
    for (int i = 0; i < reps; ++i) launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    return double(ms) / reps;
  };
  Run r;
  r.ms_ours = time([&] { ws_gemm<<<grid, kThreads, smem>>>(map_a, map_b, c, M, N, K); });
  r.ms_cublas = time(cublas);
  CHECK_CUDA(cudaDeviceSynchronize());
  r.rel_error = norm > 0 ? err / norm : err;
  r.unwritten = unwritten;
  cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ref);
  return r;
}

}  // namespace

int main() {
  cublasHandle_t handle;
  cublasCreate(&handle);
  const int shapes[][3] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {8192, 1024, 8192},
                           {8192, 28672, 8192}, {8192, 8192, 28672}, {1000, 1000, 1000},
                           {257, 1000, 1024}, {4096, 4096, 1000}, {1000, 1000, 8}};
  bool ok = true;
  for (const auto& s : shapes) {
    Run r = run(s[0], s[1], s[2], handle);
    double flops = 2.0 * s[0] * s[1] * s[2];
    bool pass = r.rel_error <= 1e-2 && r.unwritten == 0;
    ok = ok && pass;
    std::printf("ws_gemm %5dx%5dx%5d  rel.err %.2e  unwritten %ld  ours %6.1f TFLOP/s  cublas %6.1f TFLOP/s  ratio %.2f  %s\n",
                s[0], s[1], s[2], r.rel_error, r.unwritten, flops / r.ms_ours / 1e9, flops / r.ms_cublas / 1e9,
                r.ms_cublas / r.ms_ours, pass ? "PASS" : "FAIL");
  }
  cublasDestroy(handle);
  return ok ? 0 : 1;
}
