// tl/wgmma.h - Hopper warpgroup MMA (wgmma.mma_async, sm_90a).
//
//   D[64 x N] (+)= A[64 x 16] * B[16 x N] for the 128 threads of a warpgroup, A and B read
//   from shared memory through 64-bit matrix descriptors, D in registers; N from 8 to 256.
//
// Operand tiles in shared memory (PTX ISA, "Shared Memory Matrix Layout"): this header takes
// K-major tiles (A as [64 rows][K], B as [N rows][K]: K contiguous, "TN"), each row exactly
// one swizzle span long (32, 64 or 128 bytes: K = 16, 32 or 64 for 16-bit types), its 16-byte
// chunks permuted as tl/swizzle.h lays them out: for 128-byte rows chunk ^= r % 8, for
// 64-byte rows chunk ^= (r / 2) % 4, for 32-byte rows chunk ^= (r / 4) % 2. Those are the hardware's 128B/64B/32B swizzle modes when the tile
// starts at a multiple of 8 rows' bytes (1024, 512, 256), which the swizzle is defined on.
//
// Accumulator layout (PTX ISA, "Register Fragment D for wgmma .m64nNk16"): thread t of the
// warpgroup, warp w = t / 32, lane l = t % 32, holds for each 8-column block j (0 .. N/8-1)
//   d[4j + 0] = D(16w + l/4,     8j + 2(l%4))      d[4j + 1] = D(16w + l/4,     8j + 2(l%4) + 1)
//   d[4j + 2] = D(16w + l/4 + 8, 8j + 2(l%4))      d[4j + 3] = D(16w + l/4 + 8, 8j + 2(l%4) + 1)
// i.e. each warp holds 16 rows as mma.m16n8's C fragment, repeated over N.
//
// Protocol: registers of D written by ordinary code are published with fence() before the
// first mma; operands written to shared memory by ordinary stores need
// fence_proxy_async_shared() (after the barrier that makes them visible) before wgmma reads
// them; mma() calls issue asynchronously, commit_group() closes a group, wait_group<n>() waits
// until at most n groups are in flight, and D may be read only after that.
#pragma once

#include "common.h"

#include <cstdint>

#if TL_CUDA

namespace tl {
namespace wgmma {

// The descriptor's layout_type field (bits 62-63).
enum class Swizzle : int { None = 0, B128 = 1, B64 = 2, B32 = 3 };

// Bytes of one swizzled row (the swizzle span).
TL_HOST_DEVICE constexpr int swizzle_bytes(Swizzle s) {
  return s == Swizzle::B128 ? 128 : s == Swizzle::B64 ? 64 : s == Swizzle::B32 ? 32 : 16;
}

// The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
//   bits  0-13  start address >> 4
//   bits 16-29  leading dimension byte offset >> 4
//   bits 32-45  stride dimension byte offset >> 4
//   bits 49-51  matrix base offset (0: the tile starts on its swizzle pattern's boundary)
//   bits 62-63  swizzle mode
TL_HOST_DEVICE constexpr std::uint64_t make_descriptor(std::uint32_t smem_address,
                                                       std::uint32_t leading_bytes,
                                                       std::uint32_t stride_bytes, Swizzle s) {
  return (std::uint64_t((smem_address >> 4) & 0x3FFF)) |
         (std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16) |
         (std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32) |
         (std::uint64_t(static_cast<int>(s)) << 62);
}

// The descriptor of k-block `kb` (16 elements of 16-bit type: 32 bytes) of a K-major tile
// whose rows are one swizzle span: 8-row groups are 8 spans apart (the stride offset); the
// leading offset is not used by swizzled K-major layouts (1 by convention, as CUTLASS sets it).
TL_DEVICE std::uint64_t kmajor_descriptor(const void* tile, int kb, Swizzle s) {
  std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(tile));
  return make_descriptor(base + std::uint32_t(kb) * 32u, 16u, 8u * swizzle_bytes(s), s);
}

// MN-major tiles (B as [K rows][N], N contiguous; or A as [K][64]) in the 128-byte swizzle:
// the tile is stored as 1024-byte atoms of 8 K-rows x 64 elements (128 bytes, chunk ^= row % 8
// inside the atom), atoms of one 64-element MN block consecutive along K, MN blocks
// `mn_block_bytes` apart. The descriptor of k-block `kb` (16 K-rows: two atoms) starts kb * 2
// atoms in; its leading offset is the MN-block stride and its stride offset the 1024 bytes
// between 8-row K groups (CUTLASS's canonical ((8,8,m),(8,k)) MN-major SW128 layout).
TL_DEVICE std::uint64_t mnmajor_descriptor(const void* tile, int kb, std::uint32_t mn_block_bytes) {
  std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(tile));
  return make_descriptor(base + std::uint32_t(kb) * 2048u, mn_block_bytes, 1024u, Swizzle::B128);
}

TL_DEVICE void fence() {
#if TL_ARCH_SM90A
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

TL_DEVICE void commit_group() {
#if TL_ARCH_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

template <int InFlight>
TL_DEVICE void wait_group() {
#if TL_ARCH_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(InFlight) : "memory");
#endif
}

// Orders this thread's earlier ordinary shared-memory writes before later async-proxy reads
// (wgmma operands, bulk copies out of shared memory).
TL_DEVICE void fence_proxy_async_shared() {
#if TL_ARCH_SM90
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

}  // namespace wgmma
}  // namespace tl

#include "wgmma_ops.h"

namespace tl {
namespace wgmma {

// D (+)= A * B for one k-block: d is this thread's N/2 accumulators (layout above);
// accumulate = false overwrites D. TransB: B's descriptor is MN-major (mnmajor_descriptor).
template <int N, class T, bool TransB = false>
TL_DEVICE void mma(float (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b, bool accumulate) {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma: N is a multiple of 8 up to 256");
  MmaSS<N, T, 0, TransB ? 1 : 0>::run(d, desc_a, desc_b, accumulate ? 1 : 0);
}

// The accumulator layout above as functions of (thread, register), for code and tests.
struct Layout {
  TL_HOST_DEVICE static constexpr int row(int thread, int r) {
    return 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((r / 2) % 2);
  }
  TL_HOST_DEVICE static constexpr int col(int thread, int r) {
    return 8 * (r / 4) + 2 * (thread % 4) + r % 2;
  }
};

}  // namespace wgmma
}  // namespace tl

#endif  // TL_CUDA
