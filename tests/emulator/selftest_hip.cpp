// Self-test of the emulation layer for HIP (tl/emu/hip.h, tl/emu/mfma.h) on hand-written wave64
// kernels: shuffles across the two 32-lane halves of a wave, a 64-bit ballot, and each MFMA
// builtin tlc emits, its operands loaded and its result stored with the index formulas of AMD's
// own examples (the ROCm matrix-core blog posts: A + 4 * (t / 16) + 16 * (t % 16) and so on),
// written here once more rather than taken from mfma.h, and checked against a plain matmul.
//   c++ -std=c++17 -DTL_EMULATE -D__HIPCC__ -D__HIP_PLATFORM_AMD__ -DTL_EMU_WARP_SIZE=64
//       -I stdlib/tl/emu/include -I stdlib -I runtime -isystem CUDA/include
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>

#include "selftest_common.h"

static long long results[128][6];

__global__ void shuffles() {
  const int lane = static_cast<int>(threadIdx.x) % 64;
  long long* r = results[threadIdx.x];
  r[0] = __shfl_xor(lane, 32);           // the other half of the wave
  r[1] = __shfl(lane * 10, 40);          // lane 40's value, in every lane
  r[2] = __shfl_down(lane, 8);           // lane + 8, or own past lane 55
  r[3] = static_cast<long long>(__ballot(lane >= 60 || lane == 1));
  r[4] = __shfl_up(lane, 2, 16);         // within 16-lane segments
  r[5] = __lane_id() + 100 * __all(lane < 64) + 1000 * __any(lane == 63);
}

using f16x4v = tl::emu::mfma_f16x4;
using bf16x4v = tl::emu::mfma_bf16x4;
using float4v = tl::emu::mfma_f32x4;
using float16v = tl::emu::mfma_f32x16;

static std::uint16_t A16[16 * 16], B16[16 * 16], A32[32 * 8], B32[8 * 32];
static float C16[16 * 16], C32[32 * 32];
static bool bf16_inputs = false;

// 16x16x16: lane t holds A[t % 16][4 (t / 16) + i] and B[4 (t / 16) + i][t % 16]; D item i is
// D[4 (t / 16) + i][t % 16] (row-major arrays).
__global__ void mfma16() {
  const int t = static_cast<int>(threadIdx.x);
  f16x4v a, b;
  for (int i = 0; i < 4; ++i) {
    a[i] = A16[4 * (t / 16) + 16 * (t % 16) + i];
    b[i] = B16[i * 16 + t % 16 + (t / 16) * 64];
  }
  float4v c = {};
  if (bf16_inputs)
    c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(reinterpret_cast<bf16x4v&>(a), reinterpret_cast<bf16x4v&>(b), c, 0,
                                                  0, 0);
  else
    c = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
  for (int i = 0; i < 4; ++i) C16[i * 16 + t % 16 + (t / 16) * 64] = c[i];
}

// 32x32x8: lane t holds A[t % 32][4 (t / 32) + i] and B[4 (t / 32) + i][t % 32]; D item
// 4 j + i is D[8 j + 4 (t / 32) + i][t % 32].
__global__ void mfma32() {
  const int t = static_cast<int>(threadIdx.x);
  f16x4v a, b;
  for (int i = 0; i < 4; ++i) {
    a[i] = A32[(t % 32) * 8 + 4 * (t / 32) + i];
    b[i] = B32[(4 * (t / 32) + i) * 32 + t % 32];
  }
  float16v c = {};
  for (int v = 0; v < 16; ++v) c[v] = 1.0f;  // accumulates onto C = 1
  if (bf16_inputs)
    c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(reinterpret_cast<bf16x4v&>(a), reinterpret_cast<bf16x4v&>(b), c, 0, 0,
                                                 0);
  else
    c = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) C32[t % 32 + (t / 32) * 4 * 32 + 32 * i + j * 32 * 8] = c[4 * j + i];
}

__global__ void partial_wave() {
  f16x4v a = {}, b = {};
  float4v c = {};
  c = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
}

// Small integers: exact in f16 and bf16, and in every sum.
static std::uint16_t encode(int v) {
  if (bf16_inputs) {
    float f = static_cast<float>(v);
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return static_cast<std::uint16_t>(u >> 16);
  }
  return tl::emu::float_to_f16_bits(static_cast<float>(v));
}

int main(int argc, char** argv) {
  tl::emu::shared_window() = tl::emu::SharedWindow{smem, sizeof smem};
  if (argc > 1 && std::strcmp(argv[1], "partial") == 0) {
    tl::emu::launch(partial_wave, dim3(1), dim3(48), 0, nullptr);
    return 0;
  }
  for (unsigned seed = 1; seed <= 2; ++seed) {
    tl::emu::config().seed = seed;
    tl::emu::launch(shuffles, dim3(1), dim3(128), 0, nullptr);
    for (int t = 0; t < 128; ++t) {
      const int lane = t % 64;
      EXPECT(results[t][0] == (lane ^ 32));
      EXPECT(results[t][1] == 400);
      EXPECT(results[t][2] == (lane + 8 < 64 ? lane + 8 : lane));
      EXPECT(results[t][3] == static_cast<long long>(0xF000000000000002ull));
      EXPECT(results[t][4] == (lane % 16 >= 2 ? lane - 2 : lane));
      EXPECT(results[t][5] == lane + 1100);
    }
    for (int bf = 0; bf < 2; ++bf) {
      bf16_inputs = bf;
      for (int i = 0; i < 256; ++i) A16[i] = encode((i * 7 + 3 * static_cast<int>(seed)) % 9 - 4), B16[i] = encode((i * 5) % 7 - 3);
      for (int i = 0; i < 256; ++i) A32[i] = encode((i * 3 + static_cast<int>(seed)) % 11 - 5), B32[i] = encode((i * 13) % 5 - 2);
      tl::emu::launch(mfma16, dim3(1), dim3(64), 0, nullptr);
      tl::emu::launch(mfma32, dim3(1), dim3(64), 0, nullptr);
      auto value = [&](std::uint16_t h) {
        return bf16_inputs ? tl::emu::bf16_bits_to_double(h) : tl::emu::f16_bits_to_double(h);
      };
      for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 16; ++n) {
          double s = 0;
          for (int k = 0; k < 16; ++k) s += value(A16[m * 16 + k]) * value(B16[k * 16 + n]);
          EXPECT(C16[m * 16 + n] == static_cast<float>(s));
        }
      for (int m = 0; m < 32; ++m)
        for (int n = 0; n < 32; ++n) {
          double s = 1.0;
          for (int k = 0; k < 8; ++k) s += value(A32[m * 8 + k]) * value(B32[k * 32 + n]);
          EXPECT(C32[m * 32 + n] == static_cast<float>(s));
        }
    }
  }
  std::printf("%s\n", failures ? "selftest_hip FAILED" : "selftest_hip passed");
  return failures ? 1 : 0;
}
