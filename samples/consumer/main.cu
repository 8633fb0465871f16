// Calls tlc-generated kernels from two header-only libraries in one translation unit.
// Each launcher checks its tensors and returns a tlc::Status instead of aborting.
#include "matmul.cuh"
#include "norms.cuh"

#include <cstdio>
#include <vector>

namespace {

tlc::TensorView view2d(void *data, tlc_dtype dtype, int64_t rows, int64_t cols) {
  tlc::TensorView v{};
  v.data = data;
  v.dtype = dtype;
  v.rank = 2;
  v.shape[0] = rows, v.shape[1] = cols;
  v.strides[0] = cols, v.strides[1] = 1;
  return v;
}

}  // namespace

int main() {
  const int64_t M = 512, N = 512, K = 256;
  void *a = nullptr, *b = nullptr, *c = nullptr, *y = nullptr;
  if (cudaMalloc(&a, M * K * 2) != cudaSuccess || cudaMalloc(&b, K * N * 2) != cudaSuccess ||
      cudaMalloc(&c, M * N * 2) != cudaSuccess || cudaMalloc(&y, M * N * 2) != cudaSuccess) {
    std::printf("no CUDA device: built fine, nothing to run\n");
    return 0;
  }
  cudaMemset(a, 0, M * K * 2);
  cudaMemset(b, 0, K * N * 2);

  tlc::TensorView A = view2d(a, TLC_F16, M, K), B = view2d(b, TLC_F16, K, N);
  tlc::TensorView C = view2d(c, TLC_F16, M, N), Y = view2d(y, TLC_F16, M, N);
  tlc::Status st = matmul::gemm(A, B, C);
  std::printf("matmul::gemm: %s\n", st ? "ok" : st.message().c_str());
  st = norms::softmax(C, Y);
  std::printf("norms::softmax: %s\n", st ? "ok" : st.message().c_str());

  // A contract violation is reported, not launched: B has the wrong inner dimension.
  tlc::TensorView bad = view2d(b, TLC_F16, K + 1, N);
  st = matmul::gemm(A, bad, C);
  std::printf("matmul::gemm with B [%lld, %lld]: %s\n", (long long)(K + 1), (long long)N,
              st ? "ok (unexpected)" : st.message().c_str());
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("device: %s\n", cudaGetErrorString(e));
  return st ? 1 : 0;
}
