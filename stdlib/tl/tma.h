// tl/tma.h - Hopper bulk tensor copies (the Tensor Memory Accelerator, sm_90).
//
// A tensor map (CUtensorMap, 128 bytes, built on the host: runtime/tlc/tma.h) describes a
// global tensor and the box one copy moves; the kernel takes it as a `const __grid_constant__
// CUtensorMap` parameter. load_2d copies the box at element coordinates (x: innermost, y) into
// shared memory, laid out with the map's swizzle (128B: tl::GmmaLayout's panels, which wgmma
// reads), zero-filling what lies outside the tensor, and signals its bytes on an mbarrier
// (tl/mbarrier.h). One thread issues it; the consumers wait on the barrier.
#pragma once

#include "common.h"

#include <cstdint>

#if TL_CUDA
#include <cuda.h>  // CUtensorMap (a type only: nothing links against the driver library)

namespace tl {
namespace tma {

// Fetches the descriptor into the cache ahead of the first copy.
TL_DEVICE void prefetch(const CUtensorMap* map) {
#if TL_ARCH_SM90
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
#else
  (void)map;
#endif
}

TL_DEVICE void load_2d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int x, int y) {
#if TL_ARCH_SM90
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          static_cast<std::uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(bar))),
      "r"(x), "r"(y)
      : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)x, (void)y;
#endif
}

// The same for tensors of 3, 4 and 5 dimensions (coordinates innermost first).
TL_DEVICE void load_3d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int x, int y, int z) {
#if TL_ARCH_SM90
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
          static_cast<std::uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(bar))),
      "r"(x), "r"(y), "r"(z)
      : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)x, (void)y, (void)z;
#endif
}

TL_DEVICE void load_4d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int x, int y, int z, int w) {
#if TL_ARCH_SM90
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(
          static_cast<std::uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(bar))),
      "r"(x), "r"(y), "r"(z), "r"(w)
      : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)x, (void)y, (void)z, (void)w;
#endif
}

TL_DEVICE void load_5d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int x, int y, int z, int w, int v) {
#if TL_ARCH_SM90
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n" ::"r"(
          static_cast<std::uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(bar))),
      "r"(x), "r"(y), "r"(z), "r"(w), "r"(v)
      : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)x, (void)y, (void)z, (void)w, (void)v;
#endif
}

// Im2col mode (a map from cuTensorMapEncodeIm2col): the pixels the map's box holds, from the
// anchor at (c, w, h, n) (channel, column, row, image) onwards through the map's anchors (rows,
// then images), each shifted by the filter tap (off_w, off_h), its channels c.. in one row of the
// tile; pixels in the padding or past the tensor read as zeros.
TL_DEVICE void load_im2col_4d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int c, int w, int h, int n,
                              std::uint16_t off_w, std::uint16_t off_h) {
#if TL_ARCH_SM90
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2], {%7, %8};\n" ::"r"(
          static_cast<std::uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(bar))),
      "r"(c), "r"(w), "r"(h), "r"(n), "h"(off_w), "h"(off_h)
      : "memory");
#else
  (void)dst, (void)map, (void)bar, (void)c, (void)w, (void)h, (void)n, (void)off_w, (void)off_h;
#endif
}

// Bulk tensor stores (epilogues): the box at element coordinates (x: innermost, ...) written
// from shared memory laid out with the map's swizzle; the parts of the box outside the tensor
// are not written, so a tile at a ragged edge needs no predicate. One thread issues the
// stores of a tile, after the block's writes to it were published to the async proxy
// (fence.proxy.async before the barrier), then commits them as one group (store_commit) and
// waits until they have read the tile (store_wait_read) before anything may overwrite it or
// the block exits.
TL_DEVICE void store_2d(const CUtensorMap* map, const void* src, int x, int y) {
#if TL_ARCH_SM90
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(src))), "r"(x), "r"(y)
               : "memory");
#else
  (void)map, (void)src, (void)x, (void)y;
#endif
}

TL_DEVICE void store_3d(const CUtensorMap* map, const void* src, int x, int y, int z) {
#if TL_ARCH_SM90
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(src))), "r"(x), "r"(y), "r"(z)
               : "memory");
#else
  (void)map, (void)src, (void)x, (void)y, (void)z;
#endif
}

TL_DEVICE void store_4d(const CUtensorMap* map, const void* src, int x, int y, int z, int w) {
#if TL_ARCH_SM90
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(src))), "r"(x), "r"(y), "r"(z), "r"(w)
               : "memory");
#else
  (void)map, (void)src, (void)x, (void)y, (void)z, (void)w;
#endif
}

TL_DEVICE void store_5d(const CUtensorMap* map, const void* src, int x, int y, int z, int w, int v) {
#if TL_ARCH_SM90
  asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(src))), "r"(x), "r"(y), "r"(z), "r"(w), "r"(v)
               : "memory");
#else
  (void)map, (void)src, (void)x, (void)y, (void)z, (void)w, (void)v;
#endif
}

// Bulk tensor reductions: the box at element coordinates (x: innermost, ...) added element by
// element into the tensor (cp.reduce.async.bulk.tensor .add: each element atomically, in L2),
// from shared memory laid out with the map's swizzle; the parts of the box outside the tensor
// are not touched. Issued, committed and waited for as the stores above (store_commit,
// store_wait_read).
template <int Rank>
TL_DEVICE void reduce_add(const CUtensorMap* map, const void* src, const int (&c)[Rank]) {
  static_assert(Rank >= 2 && Rank <= 5, "bulk tensor reductions take 2-d to 5-d boxes");
#if TL_ARCH_SM90
  const std::uint64_t m = reinterpret_cast<std::uint64_t>(map);
  const std::uint32_t s = static_cast<std::uint32_t>(__cvta_generic_to_shared(src));
  if constexpr (Rank == 2)
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];\n"
                 ::"l"(m), "r"(s), "r"(c[0]), "r"(c[1]) : "memory");
  else if constexpr (Rank == 3)
    asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 ::"l"(m), "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
  else if constexpr (Rank == 4)
    asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                 ::"l"(m), "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
  else
    asm volatile("cp.reduce.async.bulk.tensor.5d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n"
                 ::"l"(m), "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
#else
  (void)map, (void)src, (void)c;
#endif
}

// Closes the bulk stores issued so far into one group. The issuing thread must wait for the
// group's reads (store_wait_read) before anything overwrites the tile or the block exits; it
// need not wait at once (a persistent kernel's next tile runs its main loop meanwhile).
TL_DEVICE void store_commit() {
#if TL_ARCH_SM90
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

// Waits until every bulk store group this thread committed has finished reading shared
// memory (their global writes may still be in flight: a kernel's end or a grid dependency
// orders those).
TL_DEVICE void store_wait_read() {
#if TL_ARCH_SM90
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
#endif
}

// Register budgets of warp-specialized kernels: a producer warpgroup gives registers back, the
// consumers take them (every warp of the warpgroup executes it; counts are multiples of 8 in
// 24..256).
template <int Registers>
TL_DEVICE void release_registers() {
#if TL_ARCH_SM90A
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}

template <int Registers>
TL_DEVICE void claim_registers() {
#if TL_ARCH_SM90A
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}

}  // namespace tma
}  // namespace tl

#endif  // TL_CUDA
