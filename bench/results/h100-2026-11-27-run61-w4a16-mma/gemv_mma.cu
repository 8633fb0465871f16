// Experiment (not part of tlc): the W4A16 decode GEMV on the tensor cores, summing in f32.
// mma.sync.m16n8k16 with the activations as A (rows = tokens, M <= 16; row 0 only here) and
// the dequantized weights as B (columns = 8 weight rows). The reduction over K does not care
// about order, so each thread's B slots are filled from 16 contiguous bytes of its weight row
// (32 consecutive k) and its A slots take the activations of the same k: thread t of a quad
// owns k in [32 t, 32 t + 32) of each 128-wide chunk. Pairs of B slots are (nibble j, nibble
// j + 4) of a 32-bit word, which the magic-number conversion yields with one lop3 and one
// packed fma per pair (no shifts: the fma divides the nibble's place value back out).
// Scales: per 128-wide chunk (one group at group size 128) the chunk's sums are scaled and
// added in f32. Warps of a block split K; their sums meet in shared memory.
//   nvcc -O3 -arch=sm_90a gemv_mma.cu -o g && ./g
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cmath>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void ref(const half* A, const uint8_t* B, const half* S, float* C, int N, int K, int G) {
  int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= N) return;
  float acc = 0;
  for (int c = 0; c < K; ++c) {
    int byte = B[(size_t)n * (K / 2) + c / 2];
    int nib = (c & 1) ? (byte >> 4) : (byte & 15);
    int q = nib >= 8 ? nib - 16 : nib;
    acc += float(q) * __half2float(S[(size_t)n * (K / G) + c / G]) * __half2float(A[c]);
  }
  C[n] = acc;
}

template <int Lut>
__device__ __forceinline__ uint32_t lop3(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(Lut));
  return d;
}
__device__ __forceinline__ uint32_t hfma2(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
  return d;
}
__device__ __forceinline__ void mma(float* c, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                    uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Pair j (0..3) of a word already XOR-ed with 0x88888888 (offset binary): halves
// (nibble j - 8, nibble j + 4 - 8), exact. The nibble must land in the 10 mantissa bits of
// 1024.0, so pairs 2 and 3 come from the word shifted right by 8.
__device__ __forceinline__ uint32_t pair(uint32_t wx, uint32_t wx8, int j) {
  const uint32_t src = j < 2 ? wx : wx8;
  const int jj = j & 1;
  uint32_t h = lop3<0xEA>(src, 0x000F000Fu << (4 * jj), 0x64006400u);  // (a & b) | c
  // h = 1024 + n * 16^jj; q = h / 16^jj - (1024 / 16^jj + 8)
  const __half2 mul = __float2half2_rn(jj ? 1.0f / 16.0f : 1.0f);
  const __half2 add = __float2half2_rn(jj ? -(64.0f + 8.0f) : -(1024.0f + 8.0f));
  return hfma2(h, *reinterpret_cast<const uint32_t*>(&mul), *reinterpret_cast<const uint32_t*>(&add));
}

// NT n-tiles (8 weight rows each) per block; WARPS warps split K (chunk kc to warp kc % WARPS).
template <int NT, int WARPS, int U, bool PF>
__global__ void __launch_bounds__(WARPS * 32) gemv_mma(const half* __restrict__ A, const uint8_t* __restrict__ B,
                                                       const half* __restrict__ S, half* __restrict__ C, int N, int K) {
  extern __shared__ __align__(16) unsigned char smem[];
  half* a_s = reinterpret_cast<half*>(smem);
  for (int i = threadIdx.x * 8; i < K; i += blockDim.x * 8)
    *reinterpret_cast<uint4*>(a_s + i) = *reinterpret_cast<const uint4*>(A + i);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int row0 = blockIdx.x * NT * 8;
  const int chunks = K / 128;
  const int groups = K / 128;
  float total[NT][2];
#pragma unroll
  for (int n = 0; n < NT; ++n) total[n][0] = total[n][1] = 0.f;
  const uint4* Bv = reinterpret_cast<const uint4*>(B);
  const size_t row_chunks = K / 32;  // 16-byte chunks per row
  uint4 w[U][NT];
  auto load = [&](uint4 (&dst)[U][NT], int kc0) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        int kc = kc0 + u * WARPS;
        int row = min(row0 + n * 8 + g, N - 1);
        dst[u][n] = kc < chunks ? __ldcs(Bv + row * row_chunks + kc * 4 + t) : make_uint4(0, 0, 0, 0);
      }
  };
  load(w, warp);
  for (int kc0 = warp; kc0 < chunks; kc0 += WARPS * U) {
    // the next iteration's weights in flight while this one's are used (PF: prefetch)
    uint4 wn[U][NT];
    if (PF) load(wn, kc0 + WARPS * U);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int kc = kc0 + u * WARPS;
      if (kc >= chunks) break;
      // activations of k in [128 kc + 32 t, +32): row 0 only (M = 1), zeros for the other rows
      uint4 xv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) xv[i] = *reinterpret_cast<const uint4*>(a_s + kc * 128 + 32 * t + 8 * i);
      float c[NT][4];
#pragma unroll
      for (int n = 0; n < NT; ++n) c[n][0] = c[n][1] = c[n][2] = c[n][3] = 0.f;
#pragma unroll
      for (int s = 0; s < 8; ++s) {
        // step s: B pairs 2s and 2s + 1; pair p is word p / 4, nibbles (p % 4, p % 4 + 4)
        uint32_t a01 = 0, a45 = 0;
        {
          const uint32_t* xw = reinterpret_cast<const uint32_t*>(&xv[(2 * s) / 4]);
          // word w holds x[8w .. 8w+7] as 4 half2: (x0,x1),(x2,x3),(x4,x5),(x6,x7); pair j -> (x_j, x_{j+4})
          int j0 = (2 * s) % 4, j1 = (2 * s + 1) % 4;
          uint32_t lo0 = xw[j0 / 2], hi0 = xw[2 + j0 / 2];
          uint32_t lo1 = xw[j1 / 2], hi1 = xw[2 + j1 / 2];
          uint32_t p0 = prmt(lo0, hi0, (j0 & 1) ? 0x7632 : 0x5410);
          uint32_t p1 = prmt(lo1, hi1, (j1 & 1) ? 0x7632 : 0x5410);
          a01 = g == 0 ? p0 : 0u;
          a45 = g == 0 ? p1 : 0u;
        }
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          const uint32_t word = (&w[u][n].x)[(2 * s) / 4] ^ 0x88888888u;
          const uint32_t word8 = word >> 8;
          uint32_t b0 = pair(word, word8, (2 * s) % 4), b1 = pair(word, word8, (2 * s + 1) % 4);
          mma(c[n], a01, 0u, a45, 0u, b0, b1);
        }
      }
      // scale: c[n][0], c[n][1] = token 0 (g == 0 lanes), weight rows row0 + 8n + 2t, + 1
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        int r = row0 + n * 8 + 2 * t;
        float s0 = __half2float(S[(size_t)min(r, N - 1) * groups + kc]);
        float s1 = __half2float(S[(size_t)min(r + 1, N - 1) * groups + kc]);
        total[n][0] = fmaf(c[n][0], s0, total[n][0]);
        total[n][1] = fmaf(c[n][1], s1, total[n][1]);
      }
    }
    if (PF) {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int n = 0; n < NT; ++n) w[u][n] = wn[u][n];
    } else {
      load(w, kc0 + WARPS * U);
    }
  }
  // the warps' sums meet in shared memory (lanes 0..3 hold token 0)
  __syncthreads();
  float* red = reinterpret_cast<float*>(smem);
  if (g == 0)
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      red[(warp * NT + n) * 8 + 2 * t] = total[n][0];
      red[(warp * NT + n) * 8 + 2 * t + 1] = total[n][1];
    }
  __syncthreads();
  if (threadIdx.x < NT * 8) {
    float v = 0;
    for (int wp = 0; wp < WARPS; ++wp) v += red[wp * NT * 8 + threadIdx.x];
    int r = row0 + threadIdx.x;
    if (r < N) C[r] = __float2half(v);
  }
}

template <int NT, int WARPS, int U, bool PF>
void run(const char* name, const half* A, const uint8_t* B, const half* S, half* C, const float* Cref, int N, int K,
         double bytes, double copy_tbps) {
  int blocks = (N + NT * 8 - 1) / (NT * 8);
  size_t smem = std::max<size_t>(K * 2, WARPS * NT * 8 * 4);
  auto k = gemv_mma<NT, WARPS, U, PF>;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CK(cudaMemset(C, 0xff, N * 2));
  k<<<blocks, WARPS * 32, smem>>>(A, B, S, C, N, K);
  CK(cudaDeviceSynchronize());
  std::vector<half> h(N);
  std::vector<float> r(N);
  CK(cudaMemcpy(h.data(), C, N * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(r.data(), Cref, N * 4, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  bool nan = false;
  for (int i = 0; i < N; ++i) {
    double d = __half2float(h[i]) - r[i];
    if (std::isnan(__half2float(h[i]))) nan = true;
    num += d * d; den += double(r[i]) * r[i];
  }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ts;
  for (int it = 0; it < 30; ++it) {
    cudaEventRecord(e0);
    for (int rep = 0; rep < 10; ++rep) k<<<blocks, WARPS * 32, smem>>>(A, B, S, C, N, K);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    ts.push_back(ms * 100.f);
  }
  std::sort(ts.begin(), ts.end());
  float us = ts[ts.size() / 2];
  printf("%-24s N=%5d K=%5d  %7.2f us  %5.1f%% of copy  relerr %.2e%s\n", name, N, K, us,
         100.0 * bytes / (copy_tbps * 1e6) / us, std::sqrt(num / den), nan ? " NaN!" : "");
}

int main() {
  size_t cb = 1ull << 30;
  void *x, *y;
  CK(cudaMalloc(&x, cb)); CK(cudaMalloc(&y, cb));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  float best = 1e9;
  for (int it = 0; it < 10; ++it) {
    cudaEventRecord(e0); CK(cudaMemcpyAsync(y, x, cb, cudaMemcpyDeviceToDevice)); cudaEventRecord(e1);
    cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); best = std::min(best, ms);
  }
  double copy_tbps = 2.0 * cb / (best * 1e-3) / 1e12;
  printf("copy 2x1 GiB: %.3f TB/s\n", copy_tbps);
  cudaFree(x); cudaFree(y);
  int shapes[][2] = {{14336, 4096}, {4096, 14336}, {4096, 4096}, {28672, 8192}};
  for (auto& sh : shapes) {
    int N = sh[0], K = sh[1], G = 128;
    std::vector<uint8_t> hb((size_t)N * K / 2);
    std::vector<half> ha(K), hs((size_t)N * K / G);
    uint32_t st = 12345;
    auto rnd = [&] { st = st * 1664525u + 1013904223u; return st >> 8; };
    for (auto& b : hb) b = rnd() & 255;
    for (auto& a : ha) a = __float2half((rnd() % 2001) / 1000.f - 1.f);
    for (auto& s : hs) s = __float2half(0.01f + (rnd() % 1000) / 50000.f);
    half *A, *S, *C; uint8_t* B; float* Cref;
    CK(cudaMalloc(&A, K * 2)); CK(cudaMalloc(&S, hs.size() * 2)); CK(cudaMalloc(&C, N * 2));
    CK(cudaMalloc(&B, hb.size())); CK(cudaMalloc(&Cref, N * 4));
    CK(cudaMemcpy(A, ha.data(), K * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(S, hs.data(), hs.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hb.data(), hb.size(), cudaMemcpyHostToDevice));
    ref<<<(N + 127) / 128, 128>>>(A, B, S, Cref, N, K, G);
    CK(cudaDeviceSynchronize());
    double bytes = hb.size() + hs.size() * 2.0 + K * 2 + N * 2;
    run<2, 4, 2, false>("mma nt2 w4 u2", A, B, S, C, Cref, N, K, bytes, copy_tbps);
    run<2, 4, 4, false>("mma nt2 w4 u4", A, B, S, C, Cref, N, K, bytes, copy_tbps);
    run<2, 8, 2, false>("mma nt2 w8 u2", A, B, S, C, Cref, N, K, bytes, copy_tbps);
    run<2, 4, 2, true>("mma nt2 w4 u2 pf", A, B, S, C, Cref, N, K, bytes, copy_tbps);
    run<2, 4, 1, true>("mma nt2 w4 u1 pf", A, B, S, C, Cref, N, K, bytes, copy_tbps);
    run<1, 8, 2, true>("mma nt1 w8 u2 pf", A, B, S, C, Cref, N, K, bytes, copy_tbps);
    run<2, 8, 2, true>("mma nt2 w8 u2 pf", A, B, S, C, Cref, N, K, bytes, copy_tbps);
    run<1, 4, 2, true>("mma nt1 w4 u2 pf", A, B, S, C, Cref, N, K, bytes, copy_tbps);
    run<4, 4, 1, true>("mma nt4 w4 u1 pf", A, B, S, C, Cref, N, K, bytes, copy_tbps);
    cudaFree(A); cudaFree(S); cudaFree(C); cudaFree(B); cudaFree(Cref);
  }
  return 0;
}
