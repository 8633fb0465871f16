// tl/common.h - the base of tlc's device library.
//
// Every other tl/*.h header includes this one. It picks the toolchain (CUDA or HIP), pulls
// in the vendor half/bfloat16/fp8 types (AMD's FNUZ fp8: tl/fp8_fnuz.h), defines the function-attribute macros, the
// architecture feature macros that guard inline PTX, the TileLang dtype aliases and a few
// integer helpers that generated code and the other headers share.
//
// Conventions for the whole library:
//   * Device functions are `TL_DEVICE` (`__device__ __forceinline__`); helpers that are also
//     useful in host-side reference code are `TL_HOST_DEVICE`.
//   * Inline PTX only ever appears under `#if TL_CUDA_ARCH >= N` for the architecture that
//     introduced the instruction. The host pass (where TL_CUDA_ARCH is 0) and older device
//     architectures take a portable fallback or, where none exists, `tl::trap()`, so that
//     every header compiles for every architecture nvcc accepts.
//   * Parts that only exist on NVIDIA hardware (mma.sync, ldmatrix, named barriers) are
//     compiled only when TL_CUDA is 1; the rest also compiles under hipcc.
#pragma once

#if defined(__HIPCC__) || defined(__HIP__)
#define TL_HIP 1
#define TL_CUDA 0
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bfloat16.h>
#include "fp8_fnuz.h"
#else
#define TL_HIP 0
#define TL_CUDA 1
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>

// ---- Function attributes ------------------------------------------------------------------
#define TL_DEVICE __device__ __forceinline__
#define TL_HOST_DEVICE __host__ __device__ __forceinline__

#include "intmath.h"

// ---- Architecture feature macros ----------------------------------------------------------
// TL_CUDA_ARCH is __CUDA_ARCH__ in an NVIDIA device pass and 0 everywhere else (host pass,
// HIP), so `#if TL_CUDA_ARCH >= 800` both selects the instruction and keeps PTX away from
// the host compiler.
#if defined(__CUDA_ARCH__)
#define TL_CUDA_ARCH __CUDA_ARCH__
#else
#define TL_CUDA_ARCH 0
#endif

// A fact the device compiler may build on: generated kernels state their thread index's range,
// so that index arithmetic on it folds (with c = tid + 128 * i, c / 128 is i and c % 128 is
// tid, where a signed int otherwise costs a shift-and-fix sequence per division: an element
// copy of a GEMM tile went from about 45 to 13 PTX instructions per element). Nothing on the
// host (the emulator) or in older compilers.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TL_ASSUME(cond) __builtin_assume(cond)
#else
#define TL_ASSUME(cond) ((void)0)
#endif

// ldmatrix.sync.aligned.m8n8 (sm_75), tanh.approx (sm_75).
#define TL_ARCH_SM75 (TL_CUDA_ARCH >= 750)
// mma.sync m16n8k16 (f16/bf16), cp.async, max.NaN (sm_80).
#define TL_ARCH_SM80 (TL_CUDA_ARCH >= 800)
// Hardware fp8 conversions, cvt.*.e4m3x2/e5m2x2 (sm_89).
#define TL_ARCH_SM89 (TL_CUDA_ARCH >= 890)
// Hopper baseline (sm_90): vector f32 atomics, clusters.
#define TL_ARCH_SM90 (TL_CUDA_ARCH >= 900)
// The architecture-specific Hopper set (sm_90a): wgmma, setmaxnreg. The wgmma/TMA/mbarrier
// headers will key on this macro.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TL_ARCH_SM90A 1
#else
#define TL_ARCH_SM90A 0
#endif

#if TL_HIP
#define TL_WARP_SIZE 64
#else
#define TL_WARP_SIZE 32
#endif

namespace tl {

// ---- TileLang dtype aliases ---------------------------------------------------------------
// Generated code names element types through these, so that one printer serves CUDA and HIP.
using f16 = __half;
using f16x2 = __half2;
#if TL_CUDA
using bf16 = __nv_bfloat16;
using bf16x2 = __nv_bfloat162;
using f8e4m3 = __nv_fp8_e4m3;
using f8e5m2 = __nv_fp8_e5m2;
using f8e4m3x2 = __nv_fp8x2_e4m3;
using f8e5m2x2 = __nv_fp8x2_e5m2;
#else
using bf16 = hip_bfloat16;
// AMD's fp8 is FNUZ (bias 8 / 16, no -0, 0x80 NaN): the formats of CDNA3's fp8 MFMA, not
// NVIDIA's OCP e4m3/e5m2 (tl/fp8_fnuz.h, docs/language.md).
using f8e4m3 = fp8_fnuz<4>;
using f8e5m2 = fp8_fnuz<5>;
#endif
using f32 = float;
using f64 = double;
using i8 = std::int8_t;
using u8 = std::uint8_t;
using i16 = std::int16_t;
using i32 = std::int32_t;
using u32 = std::uint32_t;
using i64 = std::int64_t;
// i4/u4 have no scalar type: they are stored two per byte (element 2k in the low nibble)
// and handled eight at a time as a u32 by tl/dtypes.h.

// ---- Small type traits --------------------------------------------------------------------
template <class T, class... Ts>
inline constexpr bool is_one_of_v = (std::is_same_v<T, Ts> || ...);

// A `false` that depends on T, for static_asserts in templates that must only fire when
// instantiated.
template <class T>
inline constexpr bool dependent_false_v = false;

// Two-element vector type of a scalar: the unit of packed f16/bf16 arithmetic.
template <class T>
struct Vec2;
template <>
struct Vec2<float> {
  using type = float2;
};
template <>
struct Vec2<f16> {
  using type = f16x2;
};
#if TL_CUDA
template <>
struct Vec2<bf16> {
  using type = bf16x2;
};
#endif
template <class T>
using vec2_t = typename Vec2<T>::type;

// Bit-level reinterpretation (std::bit_cast is C++20). memcpy of a register-sized value
// compiles to a move. Not restricted to trivially copyable types: the vendor pair types
// (__half2, __nv_bfloat162) declare copy operations, yet their value is exactly their bits.
template <class To, class From>
TL_HOST_DEVICE To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "tl::bit_cast: sizes differ");
  static_assert(std::is_trivially_destructible_v<To> && std::is_trivially_destructible_v<From>,
                "tl::bit_cast: only for plain value types");
  To to;
  std::memcpy(static_cast<void*>(&to), static_cast<const void*>(&from), sizeof(To));
  return to;
}

namespace detail {
// Two 16-bit values as one 32-bit register, `lo` in the low half: a tensor-core operand
// fragment register (mma.sync's and wgmma's register A).
template <class T>
TL_HOST_DEVICE std::uint32_t pack2(T lo, T hi) {
  return static_cast<std::uint32_t>(bit_cast<std::uint16_t>(lo)) |
         (static_cast<std::uint32_t>(bit_cast<std::uint16_t>(hi)) << 16);
}

// A tensor-core accumulator's elements as the 32-bit registers the instructions take, in
// place: f32 elements one per register; f16 elements in pairs, element 2i in the low half
// (f16x2: the order of mma.sync's and wgmma's f16 C/D fragments). In place, not packed into a
// copy, because wgmma may still write the registers after the call that issued it returns;
// an f16 accumulator array must therefore be 4-byte aligned (tlc declares it alignas(4)).
template <class Acc>
struct AccumRegister;
template <>
struct AccumRegister<float> {
  using type = float;
  static constexpr int kElements = 1;
};
template <>
struct AccumRegister<f16> {
  using type = std::uint32_t;
  static constexpr int kElements = 2;
};
template <>
struct AccumRegister<int> {  // s32, of s8 gemms
  using type = int;
  static constexpr int kElements = 1;
};
template <class Acc, int R>
using accum_registers_t = typename AccumRegister<Acc>::type[R / AccumRegister<Acc>::kElements];

template <class Acc, int R>
TL_HOST_DEVICE accum_registers_t<Acc, R>& accum_registers(Acc (&c)[R]) {
  static_assert(R % AccumRegister<Acc>::kElements == 0, "tl: an f16 accumulator has an even size");
  return *reinterpret_cast<accum_registers_t<Acc, R>*>(&c);
}
}  // namespace detail

// ---- Integer helpers ----------------------------------------------------------------------
// floordiv, floormod, ceildiv and round_up are in intmath.h (plain C++, unit-tested on the
// host), included above.
TL_HOST_DEVICE constexpr bool is_pow2(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

// log2 of a power of two (compile-time use: shift amounts, loop trip counts).
TL_HOST_DEVICE constexpr int log2_pow2(std::int64_t x) {
  return x <= 1 ? 0 : 1 + log2_pow2(x >> 1);
}

// ---- Unreachable paths ----------------------------------------------------------------------
// Taken by an architecture that lacks an instruction the caller asked for (for example mma.sync
// compiled into a sm_75 fatbin slice). It aborts the kernel rather than computing garbage.
TL_DEVICE void trap() {
#if TL_HIP
  __builtin_trap();
#else
  __trap();
#endif
}

}  // namespace tl
