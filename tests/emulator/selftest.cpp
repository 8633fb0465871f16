// Self-test of the emulation layer's warp collectives and scheduler on hand-written kernels
// (the samples cover mma.sync, ldmatrix, cp.async and xor shuffles; this covers the rest).
//   c++ -std=c++17 -DTL_EMULATE -I stdlib/tl/emu/include -I stdlib -I runtime -isystem CUDA/include
// Argument "deadlock" or "divergent" runs a kernel the emulator must stop with an error.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "selftest_common.h"

static int results[64][8];

__global__ void shuffles() {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int* r = results[threadIdx.x];
  r[0] = __shfl_sync(0xFFFFFFFFu, lane * 10 + warp, 5);            // lane 5's value
  r[1] = __shfl_up_sync(0xFFFFFFFFu, lane, 3);                     // lane - 3, or own below 3
  r[2] = __shfl_down_sync(0xFFFFFFFFu, lane, 4, 16);               // lane + 4 within 16-lane halves
  r[3] = __shfl_xor_sync(0xFFFFFFFFu, lane, 1);
  r[4] = static_cast<int>(__ballot_sync(0xFFFFFFFFu, lane % 3 == 0));
  r[5] = __all_sync(0xFFFFFFFFu, lane < 32) + 2 * __any_sync(0xFFFFFFFFu, lane == 7);
  // A block-wide exchange through shared memory, correct only with the barrier.
  int* s = reinterpret_cast<int*>(smem);
  s[threadIdx.x] = static_cast<int>(threadIdx.x) * 3;
  __syncthreads();
  r[6] = s[(threadIdx.x + 1) % blockDim.x];
  r[7] = static_cast<int>(blockIdx.x);
}

__global__ void deadlock() {
  if (threadIdx.x != 0) __syncthreads();  // thread 0 exits instead: the others go on
  if (threadIdx.x == 33) __shfl_sync(0xFFFFFFFFu, 1, 0);  // alone in its warp: deadlock
}

__global__ void divergent() {
  if (threadIdx.x % 2) __shfl_xor_sync(0xFFFFFFFFu, 1, 1);
  else __ballot_sync(0xFFFFFFFFu, 1);
}

int main(int argc, char** argv) {
  tl::emu::shared_window() = tl::emu::SharedWindow{smem, sizeof smem};
  if (argc > 1 && std::strcmp(argv[1], "deadlock") == 0) {
    tl::emu::launch(deadlock, dim3(1), dim3(64), 0, nullptr);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "divergent") == 0) {
    tl::emu::launch(divergent, dim3(1), dim3(32), 0, nullptr);
    return 0;
  }
  int lastBlocks = 0;  // bit b: block b ran last for some seed (blocks run in a seeded order)
  for (unsigned seed = 1; seed <= 3; ++seed) {
    tl::emu::config().seed = seed;
    tl::emu::launch(shuffles, dim3(2), dim3(64), 0, nullptr);
    for (int t = 0; t < 64; ++t) {
      const int lane = t % 32, warp = t / 32;
      EXPECT(results[t][0] == 50 + warp);
      EXPECT(results[t][1] == (lane >= 3 ? lane - 3 : lane));
      EXPECT(results[t][2] == (lane % 16 + 4 < 16 ? lane + 4 : lane));
      EXPECT(results[t][3] == (lane ^ 1));
      EXPECT(results[t][4] == static_cast<int>(0x49249249u));
      EXPECT(results[t][5] == 3);
      EXPECT(results[t][6] == ((t + 1) % 64) * 3);
      EXPECT(results[t][7] == results[0][7]);  // the last block's
    }
    EXPECT(results[0][7] == 0 || results[0][7] == 1);
    lastBlocks |= 1 << results[0][7];
  }
  EXPECT(lastBlocks == 3);  // seeds 1-3 run the two blocks in both orders
  std::printf("%s\n", failures ? "selftest FAILED" : "selftest passed");
  return failures ? 1 : 0;
}
