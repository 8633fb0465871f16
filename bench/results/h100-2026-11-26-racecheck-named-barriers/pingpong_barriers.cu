// Does racecheck report a hazard for FlashAttention-3-style ping-pong named barriers followed by
// an ordinary bar.sync-protected shared-memory exchange? (tlc's ping-pong attention pattern.)
#include <cstdio>
#include <cstdlib>
__device__ __forceinline__ void bsync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void barrive(int id, int n) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory"); }
template <bool PingPong>
__global__ void k(float* out, int iters) {
  __shared__ float s[256];
  int wg = threadIdx.x / 128;
  if (threadIdx.x < 256) {
    if (PingPong && wg == 1) barrive(1, 256);
    for (int i = 0; i < iters; ++i) {
      if (PingPong) bsync(1 + wg, 256);
      if (PingPong) barrive(2 - wg, 256);
    }
    if (PingPong && wg == 0) bsync(1, 256);
    bsync(3, 256);
    s[threadIdx.x] = float(threadIdx.x);
    bsync(3, 256);
    out[blockIdx.x * 256 + threadIdx.x] = s[255 - threadIdx.x];
  }
}
int main(int argc, char** argv) {
  const int blocks = 4096, launches = argc > 1 ? atoi(argv[1]) : 3;
  float* out; cudaMalloc(&out, blocks * 256 * 4);
  float* host = (float*)malloc(blocks * 256 * 4);
  long wrong = 0;
  for (int l = 0; l < launches; ++l) {
    cudaMemset(out, 0xff, blocks * 256 * 4);
    if (l % 2) k<true><<<blocks, 384>>>(out, 1 + l % 7); else k<false><<<blocks, 384>>>(out, 5);
    cudaMemcpy(host, out, blocks * 256 * 4, cudaMemcpyDeviceToHost);
    for (int i = 0; i < blocks * 256; ++i) wrong += host[i] != float(255 - i % 256);
  }
  printf("%s, %d launches, %ld wrong values\n", cudaGetErrorString(cudaDeviceSynchronize()), launches, wrong);
}
