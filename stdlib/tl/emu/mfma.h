// tl/emu/mfma.h - the CDNA2/CDNA3 matrix-core instructions (MFMA) of the HIP lowering on the
// emulator, as the compiler builtins HIP code calls.
//
// Written from AMD's documents, NOT from compiler/target/MmaAtoms.cpp or tl/hip/gemm.h, so that
// a wrong layout table there gives a wrong answer here instead of being copied: the "AMD
// Instinct MI300 (CDNA3) Instruction Set Architecture" (and the MI200/CDNA2 one), chapter 7
// "Matrix Arithmetic Instructions", and AMD's matrix instruction calculator
// (github.com/ROCm/amd_matrix_instruction_calculator, `--get-register` / `--matrix-entry` for
// CDNA2 and CDNA3), whose tables for the instructions below read, for lane l of the 64-lane
// wave and item i of the lane's operand vector (element i in the low bits first):
//
//   v_mfma_f32_32x32x8f16, v_mfma_f32_32x32x8bf16_1k (M = N = 32, K = 8; 4 A and 4 B items):
//     A[m][k]:  m = l % 32,  k = 4 * (l / 32) + i
//     B[k][n]:  k = 4 * (l / 32) + i,  n = l % 32
//     C/D[m][n] (16 f32 items v):  m = 8 * (v / 4) + 4 * (l / 32) + v % 4,  n = l % 32
//   v_mfma_f32_16x16x16f16, v_mfma_f32_16x16x16bf16_1k (M = N = 16, K = 16; 4 A and 4 B items):
//     A[m][k]:  m = l % 16,  k = 4 * (l / 16) + i
//     B[k][n]:  k = 4 * (l / 16) + i,  n = l % 16
//     C/D[m][n] (4 f32 items v):  m = 4 * (l / 16) + v,  n = l % 16
//
//   CDNA3 (gfx940/gfx942) fp8: v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8} (K = 16) and
//   v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} (K = 32); each operand is one 64-bit register pair
//   of 8 items, item i in byte i (SrcA's format named first, SrcB's second):
//     A[m][k]:  m = l % S,  k = 8 * (l / S) + i
//     B[k][n]:  k = 8 * (l / S) + i,  n = l % S
//     C/D:      as the f16 forms of the same S
//   The items are CDNA3's FNUZ formats (ISA, "FP8 and BF8 data types"): fp8 = E4M3 with
//   exponent bias 8, bf8 = E5M2 with bias 16; exponent field 0 is subnormal, there is no
//   infinity and no negative zero, and 0x80 is NaN. Decoded here from that description, not
//   from tl/fp8_fnuz.h.
//
// D = A * B + C, with the products and sums in double and rounded once to f32 (the matrix
// cores' internal order is not specified; this is the exact sum, as for mma.sync in
// instructions.h). The bf16 "_1k" forms read bf16 items in the f16 forms' layout. The
// broadcast controls (cbsz, abid, blgp) must be 0: tlc never sets them.
//
// The operand types are GCC vectors (g++ and clang++ both have them): the f16 operand as its
// 16-bit patterns, since host compilers have no vector of _Float16; tl/hip/gemm.h uses the
// same types when compiled with TL_EMULATE.
#pragma once

#include <cmath>
#include <cstdint>

#include "tl/emu/builtins.h"
#include "tl/emu/instructions.h"
#include "tl/emu/scheduler.h"

namespace tl::emu {

using mfma_f16x4 = std::uint16_t __attribute__((vector_size(8)));
using mfma_bf16x4 = short __attribute__((vector_size(8)));
using mfma_f32x4 = float __attribute__((vector_size(16)));
using mfma_f32x16 = float __attribute__((vector_size(64)));

using mfma_i64 = long;  // clang's "Wi": the 8 fp8 items of an operand

// (row, col) of item i of lane l in the A operand (row m, col k) and B operand (row k, col n)
// of a Size x Size x K MFMA whose lanes hold `items` items each (4: f16/bf16, 8: fp8/bf8), and
// of item v of its accumulator (row m, col n).
inline Coord mfma_a(int size, int lane, int i, int items = 4) { return {lane % size, items * (lane / size) + i}; }
inline Coord mfma_b(int size, int lane, int i, int items = 4) { return {items * (lane / size) + i, lane % size}; }
inline Coord mfma_d(int size, int lane, int v) {
  if (size == 32) return {8 * (v / 4) + 4 * (lane / 32) + v % 4, lane % 32};
  return {4 * (lane / 16) + v, lane % 16};
}

// The item formats of the MFMA inputs.
enum class MfmaFormat { F16, BF16, FP8, BF8 };

// An FNUZ byte (CDNA3 ISA): E4M3 bias 8 (fp8) or E5M2 bias 16 (bf8), 0x80 NaN, no -0 or inf.
inline double fnuz8_to_double(std::uint8_t b, bool bf8) {
  if (b == 0x80) return std::nan("");
  const int mant_bits = bf8 ? 2 : 3, bias = bf8 ? 16 : 8;
  const int e = (b & 0x7F) >> mant_bits, m = b & ((1 << mant_bits) - 1);
  const double v = e == 0 ? std::ldexp(m, 1 - bias - mant_bits) : std::ldexp(m + (1 << mant_bits), e - bias - mant_bits);
  return (b & 0x80) ? -v : v;
}

inline double mfma_item(MfmaFormat f, std::uint16_t bits) {
  switch (f) {
    case MfmaFormat::F16: return f16_bits_to_double(bits);
    case MfmaFormat::BF16: return bf16_bits_to_double(bits);
    case MfmaFormat::FP8: return fnuz8_to_double(static_cast<std::uint8_t>(bits), false);
    case MfmaFormat::BF8: return fnuz8_to_double(static_cast<std::uint8_t>(bits), true);
  }
  return 0;
}

// One MFMA of the wave: every lane's Items A items (format FA) and B items (format FB), and its
// Size * Size / 64 accumulator items; the last lane to arrive computes D for all.
template <int Size, int Items, MfmaFormat FA, MfmaFormat FB>
void mfma(const char* name, const std::uint16_t (&a)[Items], const std::uint16_t (&b)[Items], const float* c,
          float* d, int cbsz, int abid, int blgp) {
  static_assert(kWarpSize == 64 && Size > 0, "MFMA is an instruction of 64-lane waves (TL_EMU_WARP_SIZE=64)");
  if (cbsz != 0 || abid != 0 || blgp != 0)
    fail("%s: the broadcast controls (cbsz %d, abid %d, blgp %d) are not emulated", name, cbsz, abid, blgp);
  // MFMA reads the registers of all 64 lanes whatever EXEC says: a wave with lanes that have
  // exited (or a block that is not whole waves) has no defined result.
  const LaneMask all = ~LaneMask{0};
  if (live_lanes() != all)
    fail("%s: lanes 0x%llx of the wave are live; an MFMA needs all 64", name,
         static_cast<unsigned long long>(live_lanes()));
  struct Operands {
    const std::uint16_t* a;
    const std::uint16_t* b;
    const float* c;
    float* d;
  } mine{a, b, c, d};
  warp_collective(name, all, &mine, [](void** slots) {
    constexpr int K = Items * 64 / Size;
    constexpr int kAccItems = Size * Size / 64;
    double A[Size][K], B[K][Size], D[Size][Size];
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const auto* op = static_cast<const Operands*>(slots[lane]);
      for (int i = 0; i < Items; ++i) {
        const Coord at = mfma_a(Size, lane, i, Items), bt = mfma_b(Size, lane, i, Items);
        A[at.row][at.col] = mfma_item(FA, op->a[i]);
        B[bt.row][bt.col] = mfma_item(FB, op->b[i]);
      }
      for (int v = 0; v < kAccItems; ++v) {
        const Coord dt = mfma_d(Size, lane, v);
        D[dt.row][dt.col] = static_cast<double>(op->c[v]);
      }
    }
    for (int m = 0; m < Size; ++m)
      for (int n = 0; n < Size; ++n)
        for (int k = 0; k < K; ++k) D[m][n] += A[m][k] * B[k][n];
    for (int lane = 0; lane < kWarpSize; ++lane) {
      auto* op = static_cast<Operands*>(slots[lane]);
      for (int v = 0; v < kAccItems; ++v) {
        const Coord dt = mfma_d(Size, lane, v);
        op->d[v] = static_cast<float>(D[dt.row][dt.col]);
      }
    }
  });
}

template <int Size, bool BF16, class In, class Acc>
Acc mfma_builtin(const char* name, In a, In b, Acc c, int cbsz, int abid, int blgp) {
  static_assert(sizeof(Acc) == Size * Size / 64 * sizeof(float), "MFMA accumulator size");
  std::uint16_t av[4], bv[4];
  float cv[Size * Size / 64], dv[Size * Size / 64];
  for (int i = 0; i < 4; ++i) av[i] = static_cast<std::uint16_t>(a[i]), bv[i] = static_cast<std::uint16_t>(b[i]);
  for (int v = 0; v < Size * Size / 64; ++v) cv[v] = c[v];
  constexpr MfmaFormat F = BF16 ? MfmaFormat::BF16 : MfmaFormat::F16;
  mfma<Size, 4, F, F>(name, av, bv, cv, dv, cbsz, abid, blgp);
  Acc d;
  for (int v = 0; v < Size * Size / 64; ++v) d[v] = dv[v];
  return d;
}

// The fp8/bf8 forms: item i of an operand is byte i of its 64-bit value (little-endian).
template <int Size, MfmaFormat FA, MfmaFormat FB, class Acc>
Acc mfma_fp8_builtin(const char* name, mfma_i64 a, mfma_i64 b, Acc c, int cbsz, int abid, int blgp) {
  static_assert(sizeof(Acc) == Size * Size / 64 * sizeof(float), "MFMA accumulator size");
  std::uint16_t av[8], bv[8];
  float cv[Size * Size / 64], dv[Size * Size / 64];
  const auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
  for (int i = 0; i < 8; ++i)
    av[i] = static_cast<std::uint16_t>((ua >> (8 * i)) & 0xFF), bv[i] = static_cast<std::uint16_t>((ub >> (8 * i)) & 0xFF);
  for (int v = 0; v < Size * Size / 64; ++v) cv[v] = c[v];
  mfma<Size, 8, FA, FB>(name, av, bv, cv, dv, cbsz, abid, blgp);
  Acc d;
  for (int v = 0; v < Size * Size / 64; ++v) d[v] = dv[v];
  return d;
}

}  // namespace tl::emu

// The builtins by the names clang's AMDGPU target gives them (BuiltinsAMDGPU.def).
inline tl::emu::mfma_f32x16 __builtin_amdgcn_mfma_f32_32x32x8f16(tl::emu::mfma_f16x4 a, tl::emu::mfma_f16x4 b,
                                                                 tl::emu::mfma_f32x16 c, int cbsz, int abid, int blgp) {
  return tl::emu::mfma_builtin<32, false>("v_mfma_f32_32x32x8f16", a, b, c, cbsz, abid, blgp);
}
inline tl::emu::mfma_f32x16 __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(tl::emu::mfma_bf16x4 a, tl::emu::mfma_bf16x4 b,
                                                                     tl::emu::mfma_f32x16 c, int cbsz, int abid,
                                                                     int blgp) {
  return tl::emu::mfma_builtin<32, true>("v_mfma_f32_32x32x8bf16_1k", a, b, c, cbsz, abid, blgp);
}
inline tl::emu::mfma_f32x4 __builtin_amdgcn_mfma_f32_16x16x16f16(tl::emu::mfma_f16x4 a, tl::emu::mfma_f16x4 b,
                                                                tl::emu::mfma_f32x4 c, int cbsz, int abid, int blgp) {
  return tl::emu::mfma_builtin<16, false>("v_mfma_f32_16x16x16f16", a, b, c, cbsz, abid, blgp);
}
inline tl::emu::mfma_f32x4 __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(tl::emu::mfma_bf16x4 a, tl::emu::mfma_bf16x4 b,
                                                                    tl::emu::mfma_f32x4 c, int cbsz, int abid,
                                                                    int blgp) {
  return tl::emu::mfma_builtin<16, true>("v_mfma_f32_16x16x16bf16_1k", a, b, c, cbsz, abid, blgp);
}

// CDNA3's fp8/bf8 forms (gfx940+).
#define TL_EMU_MFMA_FP8(S, K, ACC, A, B, FA, FB)                                                                     \
  inline tl::emu::ACC __builtin_amdgcn_mfma_f32_##S##x##S##x##K##_##A##_##B(                                       \
      tl::emu::mfma_i64 a, tl::emu::mfma_i64 b, tl::emu::ACC c, int cbsz, int abid, int blgp) {                     \
    return tl::emu::mfma_fp8_builtin<S, tl::emu::MfmaFormat::FA, tl::emu::MfmaFormat::FB>(                          \
        "v_mfma_f32_" #S "x" #S "x" #K "_" #A "_" #B, a, b, c, cbsz, abid, blgp);                                  \
  }
TL_EMU_MFMA_FP8(32, 16, mfma_f32x16, fp8, fp8, FP8, FP8)
TL_EMU_MFMA_FP8(32, 16, mfma_f32x16, fp8, bf8, FP8, BF8)
TL_EMU_MFMA_FP8(32, 16, mfma_f32x16, bf8, fp8, BF8, FP8)
TL_EMU_MFMA_FP8(32, 16, mfma_f32x16, bf8, bf8, BF8, BF8)
TL_EMU_MFMA_FP8(16, 32, mfma_f32x4, fp8, fp8, FP8, FP8)
TL_EMU_MFMA_FP8(16, 32, mfma_f32x4, fp8, bf8, FP8, BF8)
TL_EMU_MFMA_FP8(16, 32, mfma_f32x4, bf8, fp8, BF8, FP8)
TL_EMU_MFMA_FP8(16, 32, mfma_f32x4, bf8, bf8, BF8, BF8)
#undef TL_EMU_MFMA_FP8
