// tl/memory.h - vectorized loads and stores, shared-memory addressing, alignment checks.
//
// A vectorized access moves Bytes = 4, 8 or 16 bytes in one instruction and requires the
// address to be a multiple of Bytes. Layout inference proves alignment for shared buffers and
// the host launcher checks tensor base pointers, so the plain helpers do not test it at run
// time; defining TL_CHECK_ALIGNMENT (debug builds) makes every one of them trap on a
// misaligned address instead of raising a hard-to-trace misaligned-address fault.
//
//   VecBytes<N>                   the register type of an N-byte access (u32, uint2, uint4)
//   load_vec<N>(p) / store_vec<N>(p, v) / copy_vec<N>(dst, src)     generic address space
//   load_vec_readonly<N>(p)       through the read-only (non-coherent) cache, for inputs
//   smem_addr(p)                  32-bit shared-state-space address of a generic pointer
//   ld_shared<N>(a) / st_shared<N>(a, v)                             explicit shared space
//   is_aligned<N>(p)              run-time test for code with a scalar fallback
#pragma once

#include <cstdio>

#include "common.h"

namespace tl {

template <int Bytes>
struct VecBytes;
template <>
struct VecBytes<1> {
  using type = std::uint8_t;
};
template <>
struct VecBytes<2> {
  using type = std::uint16_t;
};
template <>
struct VecBytes<4> {
  using type = std::uint32_t;
};
template <>
struct VecBytes<8> {
  using type = uint2;
};
template <>
struct VecBytes<16> {
  using type = uint4;
};
template <int Bytes>
using vec_bytes_t = typename VecBytes<Bytes>::type;

template <int Bytes>
TL_HOST_DEVICE bool is_aligned(const void* p) {
  static_assert(is_pow2(Bytes), "alignment must be a power of two");
  return (reinterpret_cast<std::uintptr_t>(p) & (Bytes - 1)) == 0;
}

namespace detail {
template <int Bytes>
TL_DEVICE void check_aligned(const void* p) {
#if defined(TL_CHECK_ALIGNMENT)
  if (!is_aligned<Bytes>(p)) {
    printf("tl: %d-byte vector access at %p is misaligned\n", Bytes, p);
    tl::trap();
  }
#else
  (void)p;
#endif
}
}  // namespace detail

template <int Bytes>
TL_DEVICE vec_bytes_t<Bytes> load_vec(const void* p) {
  detail::check_aligned<Bytes>(p);
  return *static_cast<const vec_bytes_t<Bytes>*>(p);
}

template <int Bytes>
TL_DEVICE void store_vec(void* p, vec_bytes_t<Bytes> v) {
  detail::check_aligned<Bytes>(p);
  *static_cast<vec_bytes_t<Bytes>*>(p) = v;
}

template <int Bytes>
TL_DEVICE void copy_vec(void* dst, const void* src) {
  store_vec<Bytes>(dst, load_vec<Bytes>(src));
}

// Registers of a fragment copied as 32-bit words (both arrays 4-byte aligned, Bytes a multiple
// of 4): an 8-bit fragment moved byte by byte would take one register per byte, and packing the
// bytes again costs a PRMT each.
template <int Bytes>
TL_DEVICE void copy_regs(void* dst, const void* src) {
  static_assert(Bytes % 4 == 0, "copy_regs: whole 32-bit words");
#pragma unroll
  for (int i = 0; i < Bytes / 4; ++i)
    static_cast<std::uint32_t*>(dst)[i] = static_cast<const std::uint32_t*>(src)[i];
}

// ld.global.nc: only for memory that no thread of the grid writes during the kernel (TileLang
// tensor parameters not marked `out`).
template <int Bytes>
TL_DEVICE vec_bytes_t<Bytes> load_vec_readonly(const void* p) {
  static_assert(Bytes >= 4, "load_vec_readonly: 4, 8 or 16 bytes");
  detail::check_aligned<Bytes>(p);
  return __ldg(static_cast<const vec_bytes_t<Bytes>*>(p));
}

// The element at `p` where `valid`, else `fallback`; `p` is dereferenced only where valid. On
// the GPU a predicated ld.global, no branch: `valid ? *p : 0` became a branch around each
// load, so a thread had one element load in flight at a time (a GEMM tile of a tensor with
// unaligned rows, copied element by element, waited for every load in turn: 7 us per k step).
// Generated code also reads `select(valid, T[...], fallback)` so (lower/ScalarExpr.cpp).
template <typename T>
TL_DEVICE T load_or(const T* p, bool valid, T fallback) {
#if TL_CUDA_ARCH >= 800
  if constexpr (sizeof(T) == 1) {
    unsigned int r = bit_cast<unsigned char>(fallback);
    asm("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p ld.global.u8 %0, [%1];\n}" : "+r"(r) : "l"(p), "r"(int(valid)));
    return bit_cast<T>(static_cast<unsigned char>(r));
  } else if constexpr (sizeof(T) == 2) {
    unsigned short r = bit_cast<unsigned short>(fallback);
    asm("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p ld.global.u16 %0, [%1];\n}" : "+h"(r) : "l"(p), "r"(int(valid)));
    return bit_cast<T>(r);
  } else if constexpr (sizeof(T) == 4) {
    unsigned int r = bit_cast<unsigned int>(fallback);
    asm("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p ld.global.u32 %0, [%1];\n}" : "+r"(r) : "l"(p), "r"(int(valid)));
    return bit_cast<T>(r);
  } else if constexpr (sizeof(T) == 8) {
    unsigned long long r = bit_cast<unsigned long long>(fallback);
    asm("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p ld.global.u64 %0, [%1];\n}" : "+l"(r) : "l"(p), "r"(int(valid)));
    return bit_cast<T>(r);
  }
#endif
  if (valid)
    return *p;
  return fallback;
}

// load_or with zero bits as the fallback.
template <typename T>
TL_DEVICE T load_or_zero(const T* p, bool valid) {
  unsigned char zero[sizeof(T)] = {};
  return load_or(p, valid, bit_cast<T>(zero));
}

#if TL_CUDA
// Shared-window offset of a generic pointer into shared memory: the operand form of
// ldmatrix, cp.async and ld/st.shared. 32 bits suffice (shared memory is < 4 GiB), which
// keeps swizzled address arithmetic in single registers. The asm below carries a "memory"
// clobber so that it is ordered with the thread's own C++ accesses to the same buffer.
TL_DEVICE std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

template <int Bytes>
TL_DEVICE vec_bytes_t<Bytes> ld_shared(std::uint32_t addr) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "ld_shared: 4, 8 or 16 bytes");
  vec_bytes_t<Bytes> v;
#if defined(TL_EMULATE)  // the CPU emulator (tl/emu/builtins.h)
  std::memcpy(&v, emu::shared_pointer(addr, Bytes, "ld.shared"), Bytes);
#elif TL_CUDA_ARCH > 0
  if constexpr (Bytes == 4) {
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  } else if constexpr (Bytes == 8) {
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(addr) : "memory");
  } else {
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
  }
#else
  (void)addr;
  v = {};
#endif
  return v;
}

template <int Bytes>
TL_DEVICE void st_shared(std::uint32_t addr, vec_bytes_t<Bytes> v) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "st_shared: 4, 8 or 16 bytes");
#if defined(TL_EMULATE)
  std::memcpy(emu::shared_pointer(addr, Bytes, "st.shared"), &v, Bytes);
#elif TL_CUDA_ARCH > 0
  if constexpr (Bytes == 4) {
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
  } else if constexpr (Bytes == 8) {
    asm volatile("st.shared.v2.b32 [%0], {%1, %2};" ::"r"(addr), "r"(v.x), "r"(v.y) : "memory");
  } else {
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
  }
#else
  (void)addr;
  (void)v;
#endif
}
#endif  // TL_CUDA

}  // namespace tl
