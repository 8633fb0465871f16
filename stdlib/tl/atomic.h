// tl/atomic.h - atomic accumulation into global or shared memory (TileLang's atomic_add).
//
//   atomic_add(addr, v)   *addr += v atomically; returns the previous value
//
// Element types: f32, f64, i32, u32, u64, f16, bf16 and the packed pairs f16x2/bf16x2, which
// add two adjacent elements with one 32-bit atomic (the address must be 4-byte aligned). On
// sm_90, float2/float4 add 8/16 bytes at once (each element atomically; the vector need not
// be updated as a unit). When the result is unused the compiler emits the cheaper RED form.
// 16-bit adds without hardware support (bf16/bf16x2 before sm_90; f16x2 under HIP) run a
// compare-and-swap loop on the containing word.
#pragma once

#include "common.h"

namespace tl {

TL_DEVICE float atomic_add(float* addr, float v) { return atomicAdd(addr, v); }
TL_DEVICE double atomic_add(double* addr, double v) { return atomicAdd(addr, v); }
TL_DEVICE int atomic_add(int* addr, int v) { return atomicAdd(addr, v); }
TL_DEVICE unsigned atomic_add(unsigned* addr, unsigned v) { return atomicAdd(addr, v); }
TL_DEVICE unsigned long long atomic_add(unsigned long long* addr, unsigned long long v) {
  return atomicAdd(addr, v);
}

#if TL_CUDA
// cuda_fp16.h / cuda_bf16.h: native atom.add.noftz.{f16,f16x2,bf16,bf16x2} where the
// architecture has it, a CAS loop otherwise.
TL_DEVICE f16 atomic_add(f16* addr, f16 v) { return atomicAdd(addr, v); }
TL_DEVICE f16x2 atomic_add(f16x2* addr, f16x2 v) { return atomicAdd(addr, v); }
TL_DEVICE bf16 atomic_add(bf16* addr, bf16 v) { return atomicAdd(addr, v); }
TL_DEVICE bf16x2 atomic_add(bf16x2* addr, bf16x2 v) { return atomicAdd(addr, v); }

TL_DEVICE float2 atomic_add(float2* addr, float2 v) {
#if TL_ARCH_SM90
  return atomicAdd(addr, v);
#else
  return make_float2(atomicAdd(&addr->x, v.x), atomicAdd(&addr->y, v.y));
#endif
}

TL_DEVICE float4 atomic_add(float4* addr, float4 v) {
#if TL_ARCH_SM90
  return atomicAdd(addr, v);
#else
  return make_float4(atomicAdd(&addr->x, v.x), atomicAdd(&addr->y, v.y),
                     atomicAdd(&addr->z, v.z), atomicAdd(&addr->w, v.w));
#endif
}

// Two or four consecutive f32 elements at `addr` (aligned to their 8 or 16 bytes) each += its
// value, atomically per element (the vector is not updated as a unit), the old values unused:
// one red.global.add.v2/v4.f32 on sm_90 (PTX 8.1), scalar reductions before it. `addr` must
// point to global memory (the vector form has no shared-memory variant).
TL_DEVICE void atomic_add_vec(float* addr, float a, float b) {
#if TL_ARCH_SM90
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(addr), "f"(a), "f"(b) : "memory");
#else
  atomicAdd(addr, a);
  atomicAdd(addr + 1, b);
#endif
}

TL_DEVICE void atomic_add_vec(float* addr, float a, float b, float c, float d) {
#if TL_ARCH_SM90
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(addr), "f"(a), "f"(b), "f"(c), "f"(d)
               : "memory");
#else
  atomicAdd(addr, a);
  atomicAdd(addr + 1, b);
  atomicAdd(addr + 2, c);
  atomicAdd(addr + 3, d);
#endif
}
#else
// HIP: add a packed f16 pair through compare-and-swap on the containing 32-bit word.
TL_DEVICE f16x2 atomic_add(f16x2* addr, f16x2 v) {
  unsigned* word = reinterpret_cast<unsigned*>(addr);
  unsigned old = *word;
  unsigned assumed;
  do {
    assumed = old;
    unsigned sum = bit_cast<unsigned>(__hadd2(bit_cast<f16x2>(assumed), v));
    old = atomicCAS(word, assumed, sum);
  } while (old != assumed);
  return bit_cast<f16x2>(old);
}
#endif

// last_block's arrival (lower/LastBlock.cpp), by one thread of the block after a barrier
// over its threads: counts one arrival on `counter` and returns whether it is the last of
// `arrivals` (at least 1), which also sets the counter back to 0 (atomicInc wraps), so that
// the next launch starts from 0. The increment releases what the block wrote before the
// barrier (release is cumulative over the writes the barrier ordered before it) and acquires
// what the other blocks released with theirs: one atom.acq_rel.gpu on sm_70 and later (the
// PTX memory model's release/acquire pattern, as CUTLASS's split-K semaphore); elsewhere a
// fence on each side (the CUDA samples' threadFenceReduction). GPU run 221: the one
// instruction (MEMBAR.ALL.GPU, ATOMG.INC, CCTL.IVALL) is 0.25 us faster per call than the
// two fences (MEMBAR.SC.GPU around it) at one decoding sequence.
TL_DEVICE bool arrive_last(unsigned* counter, int arrivals) {
  const unsigned limit = arrivals > 1 ? static_cast<unsigned>(arrivals) - 1u : 0u;
#if TL_CUDA_ARCH >= 700
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(limit) : "memory");
#else
  __threadfence();
  const unsigned old = atomicInc(counter, limit);
  __threadfence();
#endif
  return old >= limit;
}
TL_DEVICE bool arrive_last(int* counter, int arrivals) {
  return arrive_last(reinterpret_cast<unsigned*>(counter), arrivals);
}

}  // namespace tl
