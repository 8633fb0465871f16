// tl/mbarrier.h - Hopper transaction barriers (mbarrier in shared memory, sm_90).
//
// An mbarrier is a 64-bit word in shared memory that completes a phase when `count` threads
// have arrived and every byte announced with expect_tx has landed (bulk copies signal their
// bytes on it: tl/tma.h). Phases alternate parity 0, 1, 0, ...; a thread waits for the phase
// of a given parity to complete. A software pipeline keeps two rings of them:
//   full[s]   the copies into stage s landed (one arrival: the producer's expect_tx)
//   empty[s]  every consumer is done with stage s (one arrival per consumer)
// Iteration k uses stage s = k % S in phase (k / S) % 2. The producer waits for empty[s] with
// the opposite parity, which a fresh barrier reports complete (the stage starts free).
#pragma once

#include "common.h"

#include <cstdint>

#if TL_CUDA

namespace tl {
namespace mbarrier {

TL_DEVICE std::uint32_t address(const std::uint64_t* bar) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(bar));
}

// One thread initializes; the others may use the barrier after fence_init() and a block
// barrier.
TL_DEVICE void init(std::uint64_t* bar, int count) {
#if TL_ARCH_SM90
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(address(bar)), "r"(count) : "memory");
#else
  (void)bar, (void)count;
#endif
}

// Makes initialized barriers visible to the async proxy (bulk copies complete on them).
TL_DEVICE void fence_init() {
#if TL_ARCH_SM90
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

TL_DEVICE void arrive(std::uint64_t* bar) {
#if TL_ARCH_SM90
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(address(bar))
               : "memory");
#else
  (void)bar;
#endif
}

// Arrives and announces `bytes` more bytes the phase waits for.
TL_DEVICE void arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
#if TL_ARCH_SM90
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(
                   address(bar)),
               "r"(bytes)
               : "memory");
#else
  (void)bar, (void)bytes;
#endif
}

// Blocks until the phase of parity `parity` has completed.
TL_DEVICE void wait(std::uint64_t* bar, int parity) {
#if TL_ARCH_SM90
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(address(bar)),
      "r"(parity)
      : "memory");
#else
  (void)bar, (void)parity;
#endif
}

}  // namespace mbarrier
}  // namespace tl

#endif  // TL_CUDA
