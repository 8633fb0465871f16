// tl/emu/builtins.h - CUDA's built-in variables and device functions on the emulator.
//
// threadIdx and friends read the fiber that runs; __syncthreads() and the named barriers are
// scheduler barriers; the __shfl/__ballot/__syncwarp family rendezvous the lanes of the mask
// and compute from every lane's value (PTX ISA "shfl.sync", "vote.sync"). Atomics need no
// atomicity: fibers switch only at barriers and collectives.
#pragma once

#include <cmath>
#include <type_traits>

#include "tl/emu/scheduler.h"

#define threadIdx (::tl::emu::self().index)
#define blockIdx (::tl::emu::current_block().block_index)
#define blockDim (::tl::emu::current_block().block_dim)
#define gridDim (::tl::emu::current_block().grid_dim)
#define warpSize ::tl::emu::kWarpSize

inline void __syncthreads() { ::tl::emu::syncthreads(); }
inline int __syncthreads_or(int predicate) {
  return ::tl::emu::barrier_or(0, ::tl::emu::current_block().live, predicate != 0, "__syncthreads_or()");
}
inline void __threadfence() {}
inline void __threadfence_block() {}
[[noreturn]] inline void __trap() { ::tl::emu::fail("__trap() (tl::trap: an instruction this target lacks?)"); }

inline void __syncwarp(unsigned mask = 0xFFFFFFFFu) {
  ::tl::emu::warp_collective("__syncwarp", mask, nullptr, [](void**) {});
}

namespace tl::emu {

// shfl.sync: lanes are split into segments of `width`; a lane reads `value` of the source lane
// its mode names within its segment, or keeps its own when the source is outside it.
enum class Shfl { Idx, Up, Down, Xor };

// The lanes of the running thread's warp that exist in the block and have not exited.
inline LaneMask live_lanes() {
  Block& b = current_block();
  const int warp = self().warp;
  LaneMask m = 0;
  for (int lane = 0; lane < kWarpSize; ++lane) {
    const std::size_t i = static_cast<std::size_t>(warp * kWarpSize + lane);
    if (i < b.threads.size() && b.threads[i].state != Thread::State::Done) m |= lane_bit(lane);
  }
  return m;
}

template <class T>
T shfl(Shfl mode, LaneMask mask, T value, int arg, int width, const char* name) {
  struct Operands {
    T in, out;
    int arg, width;
  } mine{value, value, arg, width};
  warp_collective(name, mask, &mine, [mode](void** slots) {
    for (int lane = 0; lane < kWarpSize; ++lane) {
      auto* me = static_cast<Operands*>(slots[lane]);
      if (!me) continue;
      const int w = me->width;
      const int seg = lane & ~(w - 1);
      int src = lane;
      switch (mode) {
        case Shfl::Idx: src = seg + (me->arg & (w - 1)); break;
        case Shfl::Up: src = (lane - seg) >= me->arg ? lane - me->arg : lane; break;
        case Shfl::Down: src = (lane - seg) + me->arg < w ? lane + me->arg : lane; break;
        case Shfl::Xor: src = (lane ^ me->arg) < seg + w ? (lane ^ me->arg) : lane; break;
      }
      auto* from = static_cast<Operands*>(slots[src]);
      if (!from) fail("%s: lane %d reads lane %d, which is not in the mask", "shfl.sync", lane, src);
      me->out = from->in;
    }
  });
  return mine.out;
}

inline LaneMask vote(LaneMask mask, bool predicate, const char* name) {
  struct Operands {
    bool in;
    LaneMask out;
  } mine{predicate, 0};
  warp_collective(name, mask, &mine, [](void** slots) {
    LaneMask ballot = 0;
    for (int lane = 0; lane < kWarpSize; ++lane)
      if (slots[lane] && static_cast<Operands*>(slots[lane])->in) ballot |= lane_bit(lane);
    for (int lane = 0; lane < kWarpSize; ++lane)
      if (slots[lane]) static_cast<Operands*>(slots[lane])->out = ballot;
  });
  return mine.out;
}

}  // namespace tl::emu

template <class T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  return ::tl::emu::shfl(::tl::emu::Shfl::Idx, mask, v, src, width, "__shfl_sync");
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return ::tl::emu::shfl(::tl::emu::Shfl::Up, mask, v, static_cast<int>(delta), width, "__shfl_up_sync");
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return ::tl::emu::shfl(::tl::emu::Shfl::Down, mask, v, static_cast<int>(delta), width, "__shfl_down_sync");
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return ::tl::emu::shfl(::tl::emu::Shfl::Xor, mask, v, lane_mask, width, "__shfl_xor_sync");
}
inline unsigned __ballot_sync(unsigned mask, int p) {
  return static_cast<unsigned>(::tl::emu::vote(mask, p != 0, "__ballot_sync"));
}
inline int __any_sync(unsigned mask, int p) { return ::tl::emu::vote(mask, p != 0, "__any_sync") != 0; }
inline int __all_sync(unsigned mask, int p) {
  return ::tl::emu::vote(mask, p != 0, "__all_sync") == mask;
}
inline unsigned __activemask() { return static_cast<unsigned>(::tl::emu::live_lanes()); }

// ---- Atomics: plain read-modify-write (no fiber switch can interrupt one) ----------------
template <class T>
T __tl_emu_atomic_add(T* p, T v) {
  T old = *p;
  *p = old + v;
  return old;
}
inline float atomicAdd(float* p, float v) { return __tl_emu_atomic_add(p, v); }
inline double atomicAdd(double* p, double v) { return __tl_emu_atomic_add(p, v); }
inline int atomicAdd(int* p, int v) { return __tl_emu_atomic_add(p, v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __tl_emu_atomic_add(p, v); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return __tl_emu_atomic_add(p, v); }
inline __half atomicAdd(__half* p, __half v) {
  __half old = *p;
  *p = __float2half(__half2float(old) + __half2float(v));
  return old;
}
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* p, __nv_bfloat16 v) {
  __nv_bfloat16 old = *p;
  *p = __float2bfloat16(__bfloat162float(old) + __bfloat162float(v));
  return old;
}
inline __half2 atomicAdd(__half2* p, __half2 v) {
  __half2 old = *p;
  *p = __halves2half2(atomicAdd(&reinterpret_cast<__half*>(p)[0], __low2half(v)) + __low2half(v),
                      atomicAdd(&reinterpret_cast<__half*>(p)[1], __high2half(v)) + __high2half(v));
  return old;
}
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* p, __nv_bfloat162 v) {
  __nv_bfloat162 old = *p;
  __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(p);
  atomicAdd(&e[0], __low2bfloat16(v));
  atomicAdd(&e[1], __high2bfloat16(v));
  return old;
}
inline float2 atomicAdd(float2* p, float2 v) {
  float2 old = *p;
  p->x += v.x;
  p->y += v.y;
  return old;
}
inline float4 atomicAdd(float4* p, float4 v) {
  float4 old = *p;
  p->x += v.x, p->y += v.y, p->z += v.z, p->w += v.w;
  return old;
}
template <class T>
T atomicCAS(T* p, T compare, T v) {
  T old = *p;
  if (old == compare) *p = v;
  return old;
}
// atomicInc: old >= limit ? 0 : old + 1 (the count wraps at `limit`).
inline unsigned atomicInc(unsigned* p, unsigned limit) {
  unsigned old = *p;
  *p = old >= limit ? 0u : old + 1u;
  return old;
}
template <class T>
T atomicExch(T* p, T v) {
  T old = *p;
  *p = v;
  return old;
}
template <class T>
T atomicMax(T* p, T v) {
  T old = *p;
  if (v > old) *p = v;
  return old;
}
template <class T>
T atomicMin(T* p, T v) {
  T old = *p;
  if (v < old) *p = v;
  return old;
}

// ---- Memory and math intrinsics -------------------------------------------------------------
template <class T>
T __ldg(const T* p) { return *p; }

namespace tl::emu {
// The shared window of the running launch: generic pointers into it become 32-bit offsets
// (cvta.to.shared), as ldmatrix, cp.async and ld/st.shared take them.
struct SharedWindow {
  unsigned char* base = nullptr;
  std::size_t bytes = 0;
};
inline SharedWindow& shared_window() {
  static SharedWindow w;
  return w;
}
inline unsigned char* shared_pointer(std::uint32_t offset, std::size_t bytes, const char* what) {
  SharedWindow& w = shared_window();
  if (static_cast<std::size_t>(offset) + bytes > w.bytes)
    fail("%s: shared address 0x%x (+%zu bytes) is outside the block's shared memory", what, offset, bytes);
  return w.base + offset;
}
}  // namespace tl::emu

inline std::size_t __cvta_generic_to_shared(const void* p) {
  auto& w = ::tl::emu::shared_window();
  auto* c = static_cast<const unsigned char*>(p);
  if (c < w.base || c >= w.base + w.bytes)
    ::tl::emu::fail("a shared-memory instruction got the address %p, which is not in shared memory", p);
  return static_cast<std::size_t>(c - w.base);
}

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float x) { int i; std::memcpy(&i, &x, 4); return i; }
inline float __uint_as_float(unsigned x) { float f; std::memcpy(&f, &x, 4); return f; }
inline unsigned __float_as_uint(float x) { unsigned i; std::memcpy(&i, &x, 4); return i; }

// __byte_perm(x, y, s): byte n of the result is byte s[4n+2 : 4n] of the 8 bytes {y:x}
// (CUDA Math API; prmt.b32 in its default mode, without the sign-replicate bit).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned r = 0;
  for (int n = 0; n < 4; ++n) r |= static_cast<unsigned>((v >> (8 * ((s >> (4 * n)) & 7))) & 0xFF) << (8 * n);
  return r;
}
