// tl/mma.h - warp-level tensor-core MMA (Ampere/Ada mma.sync): m16n8k16 for f16/bf16, and
// (at the end) m16n8k32 for s8 and fp8 and m16n8k8 for tf32.
//
//   D[16x8] = A[16x16] * B[16x8] + C[16x8] for one warp; A row-major, B column-major
//   ("row.col"). PTX supports A/B f16 with C/D f32 or f16, and A/B bf16 with C/D f32.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type").
// Let g = lane / 4 (the group, 0..7) and t = lane % 4 (the thread in the group). Element e
// of a fragment lives in register e / 2 for 16-bit types (low half = even e) and in register
// e for f32. Lane (g, t) holds, as (row, col) of A and C/D and as (k, n) of B:
//   A   (8 elements)  e = 0,1: (g,     2t + e%2)       e = 4,5: (g,     2t + 8 + e%2)
//                     e = 2,3: (g + 8, 2t + e%2)       e = 6,7: (g + 8, 2t + 8 + e%2)
//   B   (4 elements)  e = 0,1: (2t + e%2,     g)       e = 2,3: (2t + 8 + e%2, g)
//   C/D (4 elements)  e = 0,1: (g,     2t + e%2)       e = 2,3: (g + 8, 2t + e%2)
// So the four lanes of a group share a row of C (xor-1/xor-2 shuffles reduce a row, see
// tl/reduce.h), and A's registers are the four 8x8 quadrants in the order top-left,
// bottom-left, top-right, bottom-right: what ldmatrix.x4 delivers (tl/ldmatrix.h).
//
// Hopper's warpgroup MMA (wgmma) is tl/wgmma.h (TL_ARCH_SM90A).
#pragma once

#include "common.h"

#if TL_CUDA

namespace tl {
namespace m16n8k16 {

inline constexpr int M = 16;
inline constexpr int N = 8;
inline constexpr int K = 16;

// The layouts above as functions of (lane, element), usable on host and device.
struct Layout {
  TL_HOST_DEVICE static constexpr int a_row(int lane, int e) {
    return lane / 4 + 8 * ((e / 2) % 2);
  }
  TL_HOST_DEVICE static constexpr int a_col(int lane, int e) {
    return 2 * (lane % 4) + e % 2 + 8 * (e / 4);
  }
  TL_HOST_DEVICE static constexpr int b_row(int lane, int e) {
    return 2 * (lane % 4) + e % 2 + 8 * (e / 2);
  }
  TL_HOST_DEVICE static constexpr int b_col(int lane, int /*e*/) { return lane / 4; }
  TL_HOST_DEVICE static constexpr int c_row(int lane, int e) { return lane / 4 + 8 * (e / 2); }
  TL_HOST_DEVICE static constexpr int c_col(int lane, int e) { return 2 * (lane % 4) + e % 2; }
};

template <class T>
inline constexpr bool is_input_type_v = is_one_of_v<T, f16, bf16>;

// Operand fragments hold packed 16-bit pairs; T only records the element type so that a
// mismatched mma cannot compile.
template <class T>
struct FragA {
  static_assert(is_input_type_v<T>, "m16n8k16::FragA: element type must be f16 or bf16");
  static constexpr int kElements = 8;
  std::uint32_t reg[4];
};

template <class T>
struct FragB {
  static_assert(is_input_type_v<T>, "m16n8k16::FragB: element type must be f16 or bf16");
  static constexpr int kElements = 4;
  std::uint32_t reg[2];
};

template <class Acc>
struct FragC {
  static_assert(is_one_of_v<Acc, float, f16>, "m16n8k16::FragC: accumulator must be f32 or f16");
};
template <>
struct FragC<float> {
  static constexpr int kElements = 4;
  float reg[4];
  TL_DEVICE void clear() {
    for (float& r : reg) r = 0.0f;
  }
};
template <>
struct FragC<f16> {
  static constexpr int kElements = 4;
  std::uint32_t reg[2];
  TL_DEVICE void clear() {
    for (std::uint32_t& r : reg) r = 0u;
  }
};

// One m16n8 mma.sync accumulating in f32 with 4 A and 2 B registers: the operand list every
// such instruction below shares (f16, bf16, tf32, e4m3, e5m2). A macro, since asm takes its
// instruction as a string literal.
#define TL_MMA_M16N8_F32(INSTR, d, a, b, c)                                                     \
  asm volatile(INSTR " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"     \
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),  \
                 "f"(c[1]), "f"(c[2]), "f"(c[3]))

namespace detail {

template <bool Bf16Inputs>
TL_DEVICE void mma_f32(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                       const float (&c)[4]) {
#if defined(TL_EMULATE)  // the CPU emulator (tl/emu/instructions.h)
  emu::mma_m16n8<Bf16Inputs ? emu::MmaInput::BF16 : emu::MmaInput::F16, float>("mma.sync.m16n8k16.f32", {a, b, c, d});
#elif TL_ARCH_SM80
  if constexpr (Bf16Inputs) {
    TL_MMA_M16N8_F32("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", d, a, b, c);
  } else {
    TL_MMA_M16N8_F32("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", d, a, b, c);
  }
#else
  (void)d, (void)a, (void)b, (void)c;
  tl::trap();
#endif
}

TL_DEVICE void mma_f16(std::uint32_t (&d)[2], const std::uint32_t (&a)[4],
                       const std::uint32_t (&b)[2], const std::uint32_t (&c)[2]) {
#if defined(TL_EMULATE)
  emu::mma_m16n8<emu::MmaInput::F16, __half>("mma.sync.m16n8k16.f16", {a, b, c, d});
#elif TL_ARCH_SM80
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
      "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%8, %9};"
      : "=r"(d[0]), "=r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
#else
  (void)d, (void)a, (void)b, (void)c;
  tl::trap();
#endif
}

}  // namespace detail

// D = A * B + C on raw registers, for code that keeps fragments in flat arrays; T (f16 or
// bf16) names the input type. D may alias C.
template <class T>
TL_DEVICE void mma_raw(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                       const float (&c)[4]) {
  static_assert(is_input_type_v<T>, "m16n8k16::mma: element type must be f16 or bf16");
  detail::mma_f32<std::is_same_v<T, bf16>>(d, a, b, c);
}
template <class T>
TL_DEVICE void mma_raw(std::uint32_t (&d)[2], const std::uint32_t (&a)[4],
                       const std::uint32_t (&b)[2], const std::uint32_t (&c)[2]) {
  static_assert(std::is_same_v<T, f16>, "m16n8k16::mma: bf16 inputs need an f32 accumulator");
  detail::mma_f16(d, a, b, c);
}

// D = A * B + C on typed fragments. D may alias C.
template <class T, class Acc>
TL_DEVICE void mma(FragC<Acc>& d, const FragA<T>& a, const FragB<T>& b, const FragC<Acc>& c) {
  mma_raw<T>(d.reg, a.reg, b.reg, c.reg);
}

// acc += A * B.
template <class T, class Acc>
TL_DEVICE void mma(FragC<Acc>& acc, const FragA<T>& a, const FragB<T>& b) {
  mma(acc, a, b, acc);
}

}  // namespace m16n8k16

// ---- The other input types -----------------------------------------------------------------
// Every mma.sync below reads, like m16n8k16, 32 bytes of K per row of A and per column of B
// from four A registers and two B registers, and keeps C/D in the m16n8k16 f32 layout above
// (4 elements of 32 bits). Only the number of elements per register differs (E = 4 / size):
// lane (g, t) holds A register r = (row g + 8 * (r % 2), cols (r / 2) * K/2 + t * E + i) and
// B register j = (rows j * K/2 + t * E + i, col g), element i in byte i * size of the register
// (PTX ISA "Matrix Fragments for mma.m16n8k32" and "... mma.m16n8k8" (.tf32)).

// m16n8k32: s8 x s8 -> s32 (sm_80), e4m3/e5m2 x same -> f32 (sm_89, PTX ISA 8.4).
namespace m16n8k32 {

inline constexpr int M = 16;
inline constexpr int N = 8;
inline constexpr int K = 32;

TL_DEVICE void mma_s8(int (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                      const int (&c)[4]) {
#if defined(TL_EMULATE)
  emu::mma_m16n8<emu::MmaInput::S8, int>("mma.sync.m16n8k32.s8", {a, b, c, d});
#elif TL_ARCH_SM80
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
        "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
#else
  (void)d, (void)a, (void)b, (void)c;
  tl::trap();
#endif
}

// E5M2: e5m2 inputs, else e4m3.
template <bool E5M2>
TL_DEVICE void mma_f8(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                      const float (&c)[4]) {
#if TL_ARCH_SM89
  if constexpr (E5M2) {
    TL_MMA_M16N8_F32("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", d, a, b, c);
  } else {
    TL_MMA_M16N8_F32("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", d, a, b, c);
  }
#else
  (void)d, (void)a, (void)b, (void)c;
  tl::trap();  // fp8 mma.sync needs sm_89
#endif
}

}  // namespace m16n8k32

// m16n8k8 on tf32 (sm_80): f32 values whose registers were rounded with to_tf32.
namespace m16n8k8 {

inline constexpr int M = 16;
inline constexpr int N = 8;
inline constexpr int K = 8;

// An f32 rounded to tf32 (10-bit significand, to nearest, ties away from zero), as the
// tf32 mma reads it: the low 13 bits of the result are 0.
TL_DEVICE std::uint32_t to_tf32(std::uint32_t f32_bits) {
#if defined(TL_EMULATE)  // cvt.rna: add half an ulp of tf32 to the magnitude, truncate
  return (f32_bits & 0x7F800000u) == 0x7F800000u ? f32_bits : (f32_bits + 0x1000u) & 0xFFFFE000u;
#elif TL_ARCH_SM80
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(f32_bits)));
  return r;
#else
  return f32_bits;
#endif
}

TL_DEVICE void mma_tf32(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                        const float (&c)[4]) {
#if defined(TL_EMULATE)
  emu::mma_m16n8<emu::MmaInput::TF32, float>("mma.sync.m16n8k8.tf32", {a, b, c, d});
#elif TL_ARCH_SM80
  TL_MMA_M16N8_F32("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", d, a, b, c);
#else
  (void)d, (void)a, (void)b, (void)c;
  tl::trap();
#endif
}

}  // namespace m16n8k8
}  // namespace tl

#endif  // TL_CUDA
