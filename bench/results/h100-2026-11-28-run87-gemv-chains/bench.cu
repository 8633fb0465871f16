// Experiment: the tensor-core W4A16 GEMV's variants (exp/mk.sh), checked against an f32
// reference and timed with the L2 flushed before every launch (median of 30), in one process.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "includes.inc"

__global__ void ref(const __half* A, const uint8_t* B, const __half* S, float* C, int M, int N, int K) {
  int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
  if (n >= N) return;
  float acc = 0;
  for (int k = 0; k < K; ++k) {
    int byte = B[(size_t)n * (K / 2) + k / 2];
    int q = (k % 2 == 0) ? (byte & 15) : (byte >> 4);
    if (q >= 8) q -= 16;
    float w = __half2float(__float2half((float)q * __half2float(S[(size_t)n * (K / 128) + k / 128])));
    acc += w * __half2float(A[(size_t)m * K + k]);
  }
  C[(size_t)m * N + n] = acc;
}

static tlc::TensorView view(void* p, tlc_dtype t, int64_t r, int64_t c) {
  tlc::TensorView v{};
  v.data = p; v.dtype = t; v.rank = 2; v.shape[0] = r; v.shape[1] = c; v.strides[0] = c; v.strides[1] = 1;
  return v;
}

int main() {
  const int shapes[][3] = {{1, 14336, 4096}, {1, 4096, 14336}, {16, 14336, 4096}, {16, 4096, 14336}};
  void* flush; const size_t flushBytes = 256u << 20; cudaMalloc(&flush, flushBytes);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (auto& sh : shapes) {
    const int M = sh[0], N = sh[1], K = sh[2];
    std::mt19937 rng(1234);
    std::vector<__half> hA((size_t)M * K), hS((size_t)N * (K / 128));
    std::vector<uint8_t> hB((size_t)N * K / 2);
    std::normal_distribution<float> nd(0, 1);
    for (auto& x : hA) x = __float2half(nd(rng));
    for (auto& x : hS) x = __float2half(0.01f + 0.01f * std::fabs(nd(rng)));
    for (auto& x : hB) x = rng() & 255;
    __half *A, *S, *C; uint8_t* B; float* R;
    cudaMalloc(&A, hA.size() * 2); cudaMalloc(&S, hS.size() * 2); cudaMalloc(&B, hB.size());
    cudaMalloc(&C, (size_t)M * N * 2); cudaMalloc(&R, (size_t)M * N * 4);
    cudaMemcpy(A, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(S, hS.data(), hS.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(B, hB.data(), hB.size(), cudaMemcpyHostToDevice);
    ref<<<dim3((N + 127) / 128, M), 128>>>(A, B, S, R, M, N, K);
    std::vector<float> hR((size_t)M * N); cudaMemcpy(hR.data(), R, hR.size() * 4, cudaMemcpyDeviceToHost);
    auto vA = view(A, TLC_F16, M, K), vB = view(B, TLC_U8, N, K / 2), vS = view(S, TLC_F16, N, K / 128),
         vC = view(C, TLC_F16, M, N);
    // copy of the same bytes (read N*K/2 / 2, write as many), for the ratio
    void *cx, *cy; size_t cb = (size_t)N * K / 4; cudaMalloc(&cx, cb); cudaMalloc(&cy, cb);
    auto timeit = [&](auto&& launch) {
      std::vector<float> ts;
      for (int i = 0; i < 33; ++i) {
        cudaMemsetAsync(flush, i, flushBytes);
        cudaEventRecord(e0); launch(); cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); if (i >= 3) ts.push_back(ms * 1000);
      }
      std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
    };
    float copyUs = timeit([&] { cudaMemcpyAsync(cy, cx, cb, cudaMemcpyDeviceToDevice); });
    printf("== %dx%dx%d  weights %.1f MB  copy of same bytes %.2f us\n", M, N, K, N * (double)K / 2e6, copyUs);
#define V(name)                                                                                   \
    {                                                                                             \
      cudaMemset(C, 0xff, (size_t)M * N * 2);                                                     \
      auto st = name::dequant_gemv_w4a16_tc(vA, vB, vS, vC, 0);                                   \
      if (!st) { printf("%-14s launch error: %s\n", #name, st.message().c_str()); } else {       \
      cudaDeviceSynchronize();                                                                    \
      std::vector<__half> hC((size_t)M * N); cudaMemcpy(hC.data(), C, hC.size() * 2, cudaMemcpyDeviceToHost); \
      double num = 0, den = 0; int bad = 0;                                                       \
      for (size_t i = 0; i < hC.size(); ++i) { float c = __half2float(hC[i]);                    \
        if (!std::isfinite(c)) ++bad; num += (c - hR[i]) * (double)(c - hR[i]); den += hR[i] * (double)hR[i]; } \
      float us = timeit([&] { (void)name::dequant_gemv_w4a16_tc(vA, vB, vS, vC, 0); });          \
      printf("%-14s %8.2f us  %.2f of copy-same  %.2f TB/s  relerr %.2e  nonfinite %d\n", #name, us,    \
             copyUs / us, N * (double)K / 2 / us / 1e6, std::sqrt(num / den), bad); }        \
    }
#include "variants.inc"
#undef V
    cudaFree(A); cudaFree(S); cudaFree(B); cudaFree(C); cudaFree(R); cudaFree(cx); cudaFree(cy);
  }
  printf("err: %s\n", cudaGetErrorString(cudaGetLastError()));
}
