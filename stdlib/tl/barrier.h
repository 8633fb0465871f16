// tl/barrier.h - named CTA barriers for warp specialization (bar.sync / bar.arrive).
//
// A CTA has 16 hardware barriers, ids 0-15; __syncthreads() uses id 0, so generated code
// allocates ids from 1. A barrier completes when `num_threads` threads (a multiple of 32,
// counted per warp) have reached it:
//   barrier_sync(id, n)    arrive and wait        (consumer side: `barrier_wait(id)`)
//   barrier_arrive(id, n)  arrive, do not wait    (producer side: `barrier_arrive(id)`)
// Memory accesses a thread made before arriving are visible to the threads that waited on the
// same barrier phase, so a producer warp can fill a buffer, arrive, and a consumer warp that
// synced may read it. NamedBarrier<Id, NumThreads> checks the constants at compile time.
//
// Hopper's transaction barriers (mbarrier, used with TMA) will live in tl/mbarrier.h.
#pragma once

#include "common.h"

#if TL_CUDA

namespace tl {

inline constexpr int kNumHardwareBarriers = 16;

TL_DEVICE void barrier_sync(int id, int num_threads) {
#if defined(TL_EMULATE)  // the CPU emulator (tl/emu/scheduler.h)
  emu::barrier(id, num_threads, /*wait=*/true, "bar.sync");
#elif TL_CUDA_ARCH > 0
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(num_threads) : "memory");
#else
  (void)id, (void)num_threads;
#endif
}

TL_DEVICE void barrier_arrive(int id, int num_threads) {
#if defined(TL_EMULATE)
  emu::barrier(id, num_threads, /*wait=*/false, "bar.arrive");
#elif TL_CUDA_ARCH > 0
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(num_threads) : "memory");
#else
  (void)id, (void)num_threads;
#endif
}

// bar.red.or.pred: barrier_sync that also returns whether any of the `num_threads` threads
// passed a true `predicate` (__syncthreads_or over a named barrier: last_block's vote in a
// warp-specialized kernel, whose consumers synchronize without the producer warps).
TL_DEVICE bool barrier_sync_or(int id, int num_threads, bool predicate) {
#if defined(TL_EMULATE)
  return emu::barrier_or(id, num_threads, predicate, "bar.red.or");
#elif TL_CUDA_ARCH > 0
  int any;
  asm volatile(
      "{\n .reg .pred p, q;\n setp.ne.s32 p, %1, 0;\n bar.red.or.pred q, %2, %3, p;\n selp.s32 %0, 1, 0, q;\n}"
      : "=r"(any)
      : "r"(int(predicate)), "r"(id), "r"(num_threads)
      : "memory");
  return any != 0;
#else
  (void)id, (void)num_threads;
  return predicate;
#endif
}

template <int Id, int NumThreads>
struct NamedBarrier {
  static_assert(Id >= 0 && Id < kNumHardwareBarriers, "named barrier id must be in 0..15");
  static_assert(NumThreads > 0 && NumThreads % 32 == 0 && NumThreads <= 1024,
                "named barrier thread count must be a positive multiple of 32, at most 1024");
  static TL_DEVICE void sync() { barrier_sync(Id, NumThreads); }
  static TL_DEVICE void arrive() { barrier_arrive(Id, NumThreads); }
};

TL_DEVICE void warp_sync() { __syncwarp(); }

}  // namespace tl

#endif  // TL_CUDA
