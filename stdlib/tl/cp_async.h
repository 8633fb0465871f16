// tl/cp_async.h - asynchronous global -> shared copies (Ampere cp.async).
//
// A thread issues copies, closes them into a group with cp_async_commit(), and later waits
// until at most N of its most recent groups are still in flight with cp_async_wait<N>(). This
// is the mechanism behind `pipelined(n, stages = s)`: stage k's copies form one group, and the
// consumer of stage k waits with N = s - 2 (or whatever pipeline inference computed). The
// data is visible to the issuing thread after the wait; other threads still need a barrier.
//
//   cp_async<Bytes, Cache>(smem, gmem)                     copy Bytes = 4, 8 or 16 bytes
//   cp_async_zfill<Bytes, Cache>(smem, gmem, valid)        copy, or write Bytes zeros if !valid
//   cp_async_partial<Bytes, Cache>(smem, gmem, n)          copy n (0..Bytes) bytes, zero the rest
//   cp_async_commit(), cp_async_wait<N>(), cp_async_wait_all()
//
// Both addresses must be aligned to Bytes. For an out-of-bounds tile element pass
// valid = false together with any in-bounds address (the tensor base, say): the hardware
// reads nothing (src-size 0) but the operand must still be a global address.
//
// Below sm_80 the copies are performed synchronously and the group operations are no-ops,
// which preserves the semantics. Hopper's bulk tensor copies (TMA) will live in tl/tma.h.
#pragma once

#include "common.h"
#include "memory.h"

namespace tl {

// .ca caches in L1 and L2 (sizes 4, 8, 16); .cg caches in L2 only (size 16) and is the right
// choice for tiles streamed once into shared memory.
enum class CacheLevel { All, Global };

template <int Bytes>
inline constexpr CacheLevel kDefaultCacheLevel = Bytes == 16 ? CacheLevel::Global : CacheLevel::All;

template <int Bytes, CacheLevel Cache = kDefaultCacheLevel<Bytes>>
TL_DEVICE void cp_async_partial(void* smem_dst, const void* gmem_src, int src_bytes) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
  static_assert(Cache == CacheLevel::All || Bytes == 16, "cp.async.cg only copies 16 bytes");
#if defined(TL_EMULATE)  // the CPU emulator (tl/emu/cp_async.h)
  emu::cp_async(smem_dst, gmem_src, Bytes, src_bytes);
#elif TL_ARCH_SM80
  const std::uint32_t dst = smem_addr(smem_dst);
  if constexpr (Cache == CacheLevel::All) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(dst), "l"(gmem_src),
                 "n"(Bytes), "r"(src_bytes)
                 : "memory");
  } else {
    asm volatile("cp.async.cg.shared.global [%0], [%1], %2, %3;" ::"r"(dst), "l"(gmem_src),
                 "n"(Bytes), "r"(src_bytes)
                 : "memory");
  }
#else
  vec_bytes_t<Bytes> v{};
  if (src_bytes >= Bytes) {
    v = load_vec<Bytes>(gmem_src);
  } else if (src_bytes > 0) {
    std::memcpy(&v, gmem_src, static_cast<std::size_t>(src_bytes));
  }
  store_vec<Bytes>(smem_dst, v);
#endif
}

template <int Bytes, CacheLevel Cache = kDefaultCacheLevel<Bytes>>
TL_DEVICE void cp_async(void* smem_dst, const void* gmem_src) {
  cp_async_partial<Bytes, Cache>(smem_dst, gmem_src, Bytes);
}

template <int Bytes, CacheLevel Cache = kDefaultCacheLevel<Bytes>>
TL_DEVICE void cp_async_zfill(void* smem_dst, const void* gmem_src, bool valid) {
  cp_async_partial<Bytes, Cache>(smem_dst, gmem_src, valid ? Bytes : 0);
}

TL_DEVICE void cp_async_commit() {
#if defined(TL_EMULATE)
  emu::cp_async_commit();
#elif TL_ARCH_SM80
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most N of this thread's committed groups are pending.
template <int N>
TL_DEVICE void cp_async_wait() {
  static_assert(N >= 0, "cp.async.wait_group: N counts pending groups, N >= 0");
#if defined(TL_EMULATE)
  emu::cp_async_wait(N);
#elif TL_ARCH_SM80
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// Waits for every copy this thread issued, committed or not.
TL_DEVICE void cp_async_wait_all() {
#if defined(TL_EMULATE)
  emu::cp_async_wait(0, /*all=*/true);
#elif TL_ARCH_SM80
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

}  // namespace tl
