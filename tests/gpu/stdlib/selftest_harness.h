// Host-side harness of the device-library self-test (stdlib_selftest.cu): error checks, a
// hang-proof wait, device arrays, PASS/FAIL reporting, and bit helpers shared by host and device.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "tl/common.h"

namespace selftest {

inline void cuda_check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::printf("FAIL  %s: %s\n", what, cudaGetErrorString(err));
    std::exit(2);
  }
}

// Waits for the kernels just launched; a hang (a broken barrier, say) fails the run instead of
// blocking it forever.
inline void finish(const char* what) {
  cuda_check(cudaGetLastError(), what);
  const auto start = std::chrono::steady_clock::now();
  while (cudaStreamQuery(nullptr) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(20)) {
      std::printf("FAIL  %s: kernel did not finish within 20 s\n", what);
      std::exit(2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  cuda_check(cudaDeviceSynchronize(), what);
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : n_(n) {
    cuda_check(cudaMalloc(&ptr_, n * sizeof(T)), "cudaMalloc");
  }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
    cuda_check(cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(ptr_); }
  T* get() const { return ptr_; }
  void zero() { cuda_check(cudaMemset(ptr_, 0, n_ * sizeof(T)), "memset"); }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    cuda_check(cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "download");
    return host;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t n_;
};

inline int g_failures = 0;

// Prints one result line. `detail` says what was measured (errors, first mismatch).
inline void report(const char* name, bool ok, const char* detail) {
  std::printf("%s  %-34s %s\n", ok ? "PASS" : "FAIL", name, detail);
  if (!ok) ++g_failures;
}

inline std::mt19937 g_rng(12345);
inline float uniform(float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(g_rng);
}

template <class T>
__host__ __device__ std::uint16_t bits16(T x) {
  return tl::bit_cast<std::uint16_t>(x);
}
template <class T>
__host__ __device__ std::uint32_t pack2(T lo, T hi) {
  return bits16(lo) | (static_cast<std::uint32_t>(bits16(hi)) << 16);
}
template <class T>
__host__ __device__ T half_of(std::uint32_t word, int h) {
  return tl::bit_cast<T>(static_cast<std::uint16_t>(word >> (16 * h)));
}

}  // namespace selftest
