// A hand-written stand-in for the file tlc generates from samples/gemm.tl: the same C entry
// point and launcher contract (runtime/tlc/runtime.h), a deliberately simple kernel. It lets
// tests/gpu/run.py and bench/bench.py be validated on the GPU machine independently of tlc's
// code generation (`tests/gpu/make_bundle.sh --selftest` puts it into the bundle as
// gemm_f16.cu and gemm_bf16.cu).
//
//   int tlc_gemm(const tlc_tensor_view *A, const tlc_tensor_view *B, const tlc_tensor_view *C,
//                void *stream, char *error, size_t error_size);      C[M, N] = A[M, K] @ B[K, N]
//
// The element type is fixed at build time, as `-D dtype=...` fixes it for generated code:
// TLC_SELFTEST_DTYPE is TLC_F16 (default) or TLC_BF16.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>

#include "tlc/runtime.h"

#ifndef TLC_SELFTEST_DTYPE
#define TLC_SELFTEST_DTYPE TLC_F16
#endif

// A named namespace: in an anonymous one the specialization not selected would be an unused
// internal function, which -Werror all-warnings rejects.
namespace tlc_selftest {

template <int DType> struct Element;
template <> struct Element<TLC_F16> {
  using type = __half;
  static __device__ float load(type x) { return __half2float(x); }
  static __device__ type store(float x) { return __float2half_rn(x); }
};
template <> struct Element<TLC_BF16> {
  using type = __nv_bfloat16;
  static __device__ float load(type x) { return __bfloat162float(x); }
  static __device__ type store(float x) { return __float2bfloat16_rn(x); }
};
} // namespace tlc_selftest

namespace {

using E = tlc_selftest::Element<TLC_SELFTEST_DTYPE>;
using T = E::type;

constexpr int kTile = 16;

// One thread per element of C, operands staged through shared memory in kTile x kTile tiles,
// accumulation in f32. Every access is bounds-checked, so no dimension has to be a multiple of
// the tile (N = 4095 and M = 1 included).
__global__ void naiveGemm(const T *A, const T *B, T *C, int64_t M, int64_t N, int64_t K,
                          int64_t lda, int64_t ldb, int64_t ldc) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = int64_t(blockIdx.y) * kTile + ty;
  const int64_t col = int64_t(blockIdx.x) * kTile + tx;
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < K; k0 += kTile) {
    As[ty][tx] = row < M && k0 + tx < K ? E::load(A[row * lda + k0 + tx]) : 0.0f;
    Bs[ty][tx] = k0 + ty < K && col < N ? E::load(B[(k0 + ty) * ldb + col]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k)
      acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N)
    C[row * ldc + col] = E::store(acc);
}

tlc::Status launch(const tlc_tensor_view *A, const tlc_tensor_view *B, const tlc_tensor_view *C,
                   cudaStream_t stream) {
  using namespace tlc;
  const char *kernel = "gemm";
  Status s;
  if (!(s = check::tensor(kernel, "A", A, 2, TLC_SELFTEST_DTYPE)) ||
      !(s = check::tensor(kernel, "B", B, 2, TLC_SELFTEST_DTYPE)) ||
      !(s = check::tensor(kernel, "C", C, 2, TLC_SELFTEST_DTYPE)))
    return s;

  int64_t M = 0, N = 0, K = 0;
  bool hasM = false, hasN = false, hasK = false;
  if (!(s = check::bindSymbol(kernel, "M", M, hasM, A->shape[0], "A", 0)) ||
      !(s = check::bindSymbol(kernel, "K", K, hasK, A->shape[1], "A", 1)) ||
      !(s = check::bindSymbol(kernel, "K", K, hasK, B->shape[0], "B", 0)) ||
      !(s = check::bindSymbol(kernel, "N", N, hasN, B->shape[1], "B", 1)) ||
      !(s = check::bindSymbol(kernel, "M", M, hasM, C->shape[0], "C", 0)) ||
      !(s = check::bindSymbol(kernel, "N", N, hasN, C->shape[1], "C", 1)))
    return s;
  if (M == 0 || N == 0)
    return Status::ok();

  const int64_t gridX = (N + kTile - 1) / kTile, gridY = (M + kTile - 1) / kTile;
  if (gridY > 65535 || gridX > 0x7fffffff)
    return Status::error(TLC_ERROR_INVALID_ARGUMENT,
                         std::string(kernel) + ": M = " + std::to_string(M) + " needs " +
                             std::to_string(gridY) + " blocks in y, more than 65535");
  naiveGemm<<<dim3(unsigned(gridX), unsigned(gridY)), dim3(kTile, kTile), 0, stream>>>(
      static_cast<const T *>(A->data), static_cast<const T *>(B->data), static_cast<T *>(C->data),
      M, N, K, A->strides[0], B->strides[0], C->strides[0]);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return Status::error(TLC_ERROR_LAUNCH,
                         std::string(kernel) + ": launch failed: " + cudaGetErrorString(err));
  return Status::ok();
}

} // namespace

extern "C" int tlc_gemm(const tlc_tensor_view *A, const tlc_tensor_view *B,
                        const tlc_tensor_view *C, void *stream, char *error, size_t error_size) {
  return launch(A, B, C, static_cast<cudaStream_t>(stream)).toC(error, error_size);
}
