// tl/emu/instructions.h - the warp-level tensor-core instructions of sm_80 on the emulator.
//
// Written from the PTX ISA's fragment tables ("Matrix Fragments for mma.m16n8k16 with
// floating point type", "... mma.m16n8k32" (.s8), "... mma.m16n8k8" (.tf32), and
// "ldmatrix"), NOT from compiler/target/MmaAtoms.cpp or tl/mma.h, so that a wrong layout
// table there gives a wrong answer here instead of being copied. Each instruction
// gathers the whole matrices from the 32 lanes' registers, computes, and scatters the result.
//
// Notation of the tables: groupID = laneid >> 2, threadID_in_group = laneid % 4; element i of
// a fragment is a_i / b_i / c_i, packed into registers in order (two 16-bit elements or four
// 8-bit elements per 32-bit register, lowest bits first).
//
// The AMD lowering's MFMA instructions (v_mfma_*) have their own tables, from the CDNA ISA
// documents, in mfma.h.
#pragma once

#include <cstdint>
#include <cstring>

#include "tl/emu/builtins.h"
#include "tl/emu/scheduler.h"

namespace tl::emu {

// ---- Element encodings ----------------------------------------------------------------------
inline double f16_bits_to_double(std::uint16_t h) {
  __half x;
  std::memcpy(&x, &h, 2);
  return static_cast<double>(__half2float(x));
}
inline double bf16_bits_to_double(std::uint16_t h) {
  std::uint32_t f = static_cast<std::uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &f, 4);
  return static_cast<double>(x);
}
inline std::uint16_t float_to_f16_bits(float v) {
  __half h = __float2half_rn(v);
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
// .tf32 operands: the tensor core reads the sign, exponent and top 10 significand bits.
inline double tf32_bits_to_double(std::uint32_t bits) {
  bits &= 0xFFFFE000u;
  float x;
  std::memcpy(&x, &bits, 4);
  return static_cast<double>(x);
}
inline std::uint16_t half_of(std::uint32_t reg, int which) {
  return static_cast<std::uint16_t>(which ? reg >> 16 : reg & 0xFFFFu);
}

// ---- Fragment tables (PTX ISA), as (row, col) of element i for a lane ----------------------
struct Coord {
  int row, col;
};

// mma.m16n8k16, .f16/.bf16 A (a0..a7, four .f16x2 registers):
//   row = groupID for a_i with 0 <= i < 2 || 4 <= i < 6, else groupID + 8
//   col = threadID_in_group * 2 + (i & 1) for i < 4, else that + 8
inline Coord m16n8k16_a(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {(i < 2 || (i >= 4 && i < 6)) ? g : g + 8, t * 2 + (i & 1) + (i < 4 ? 0 : 8)};
}
// B (b0..b3, two .f16x2 registers): row (k) = threadID_in_group * 2 + (i & 1) for i < 2,
// else that + 8; col (n) = groupID.
inline Coord m16n8k16_b(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {t * 2 + (i & 1) + (i < 2 ? 0 : 8), g};
}
// C/D of m16n8k16, m16n8k32 and m16n8k8 (c0..c3): row = groupID for i < 2, else groupID + 8;
// col = threadID_in_group * 2 + (i & 1).
inline Coord m16n8_c(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}
// mma.m16n8k32 .s8 A (a0..a15, four .b32 registers of four .s8):
//   row = groupID for 0 <= i < 4 || 8 <= i < 12, else groupID + 8
//   col = threadID_in_group * 4 + (i & 3) for i < 8, else that + 16
inline Coord m16n8k32_a(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {(i < 4 || (i >= 8 && i < 12)) ? g : g + 8, t * 4 + (i & 3) + (i < 8 ? 0 : 16)};
}
// B (b0..b7): row = threadID_in_group * 4 + (i & 3) for i < 4, else that + 16; col = groupID.
inline Coord m16n8k32_b(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {t * 4 + (i & 3) + (i < 4 ? 0 : 16), g};
}
// mma.m16n8k8 .tf32 A (a0..a3): row = groupID for a0, a2, else groupID + 8;
// col = threadID_in_group for a0, a1, else threadID_in_group + 4.
inline Coord m16n8k8_a(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {(i == 0 || i == 2) ? g : g + 8, i < 2 ? t : t + 4};
}
// B (b0, b1): row = threadID_in_group for b0, threadID_in_group + 4 for b1; col = groupID.
inline Coord m16n8k8_b(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {i == 0 ? t : t + 4, g};
}

// ---- mma.sync.aligned.m16n8kK.row.col ------------------------------------------------------
enum class MmaInput { F16, BF16, S8, TF32 };

struct MmaOperands {
  const std::uint32_t* a;  // 4 registers
  const std::uint32_t* b;  // 2 registers
  const void* c;           // 4 f32/s32 or 2 f16x2 registers
  void* d;
};

// D = A * B + C with products and sums in double, rounded once to the accumulator type
// (the tensor cores' internal order and rounding are not specified; this is the exact sum).
template <MmaInput In, class Acc>
void mma_m16n8(const char* name, MmaOperands mine) {
  static_assert(kWarpSize == 32 && sizeof(Acc) > 0, "mma.sync is an instruction of 32-lane warps");
  warp_collective(name, 0xFFFFFFFFu, &mine, [](void** slots) {
    constexpr int K = In == MmaInput::S8 ? 32 : In == MmaInput::TF32 ? 8 : 16;
    constexpr int kAElems = In == MmaInput::S8 ? 16 : In == MmaInput::TF32 ? 4 : 8;
    constexpr int kBElems = kAElems / 2;
    double A[16][32] = {}, B[32][8] = {}, C[16][8] = {};
    auto element = [](const std::uint32_t* regs, int i) -> double {
      if constexpr (In == MmaInput::F16) return f16_bits_to_double(half_of(regs[i / 2], i % 2));
      if constexpr (In == MmaInput::BF16) return bf16_bits_to_double(half_of(regs[i / 2], i % 2));
      if constexpr (In == MmaInput::S8) return static_cast<double>(static_cast<std::int8_t>((regs[i / 4] >> (8 * (i % 4))) & 0xFF));
      return tf32_bits_to_double(regs[i]);
    };
    auto a_coord = [](int lane, int i) {
      if constexpr (In == MmaInput::S8) return m16n8k32_a(lane, i);
      else if constexpr (In == MmaInput::TF32) return m16n8k8_a(lane, i);
      else return m16n8k16_a(lane, i);
    };
    auto b_coord = [](int lane, int i) {
      if constexpr (In == MmaInput::S8) return m16n8k32_b(lane, i);
      else if constexpr (In == MmaInput::TF32) return m16n8k8_b(lane, i);
      else return m16n8k16_b(lane, i);
    };
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const auto* op = static_cast<const MmaOperands*>(slots[lane]);
      for (int i = 0; i < kAElems; ++i) {
        Coord at = a_coord(lane, i);
        A[at.row][at.col] = element(op->a, i);
      }
      for (int i = 0; i < kBElems; ++i) {
        Coord at = b_coord(lane, i);
        B[at.row][at.col] = element(op->b, i);
      }
      for (int i = 0; i < 4; ++i) {
        Coord at = m16n8_c(lane, i);
        if constexpr (std::is_same_v<Acc, __half>) {
          const auto* c = static_cast<const std::uint32_t*>(op->c);
          C[at.row][at.col] = f16_bits_to_double(half_of(c[i / 2], i % 2));
        } else {
          C[at.row][at.col] = static_cast<double>(static_cast<const Acc*>(op->c)[i]);
        }
      }
    }
    double D[16][8];
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        double s = C[m][n];
        for (int k = 0; k < K; ++k) s += A[m][k] * B[k][n];
        D[m][n] = s;
      }
    for (int lane = 0; lane < kWarpSize; ++lane) {
      const auto* op = static_cast<const MmaOperands*>(slots[lane]);
      std::uint16_t packed[4];
      for (int i = 0; i < 4; ++i) {
        Coord at = m16n8_c(lane, i);
        if constexpr (std::is_same_v<Acc, __half>) packed[i] = float_to_f16_bits(static_cast<float>(D[at.row][at.col]));
        else if constexpr (std::is_same_v<Acc, int>) static_cast<int*>(op->d)[i] = static_cast<int>(static_cast<std::int64_t>(D[at.row][at.col]));
        else static_cast<float*>(op->d)[i] = static_cast<float>(D[at.row][at.col]);
      }
      if constexpr (std::is_same_v<Acc, __half>) {
        auto* d = static_cast<std::uint32_t*>(op->d);
        d[0] = packed[0] | (static_cast<std::uint32_t>(packed[1]) << 16);
        d[1] = packed[2] | (static_cast<std::uint32_t>(packed[3]) << 16);
      }
    }
  });
}

// ---- ldmatrix.sync.aligned.m8n8.xNum{.trans}.shared.b16 -----------------------------------
// Threads 8m..8m+7 give the addresses of rows 0..7 of matrix m (16 contiguous bytes each).
// Register m of lane l receives, from matrix m, row l / 4, columns 2 * (l % 4) and
// 2 * (l % 4) + 1 (lower half first); with .trans the matrix is read column-wise: the
// elements at rows 2 * (l % 4) and 2 * (l % 4) + 1 of column l / 4.
template <int Num, bool Trans>
void ldmatrix(std::uint32_t* regs, std::uint32_t addr) {
  static_assert(kWarpSize == 32 && Num > 0, "ldmatrix is an instruction of 32-lane warps");
  struct Operands {
    std::uint32_t addr;
    std::uint32_t* regs;
  } mine{addr, regs};
  warp_collective(Trans ? "ldmatrix.trans" : "ldmatrix", 0xFFFFFFFFu, &mine, [](void** slots) {
    std::uint16_t M[Num][8][8];
    for (int m = 0; m < Num; ++m)
      for (int r = 0; r < 8; ++r) {
        const std::uint32_t a = static_cast<Operands*>(slots[8 * m + r])->addr;
        if (a % 16 != 0) fail("ldmatrix: row address 0x%x of lane %d is not 16-byte aligned", a, 8 * m + r);
        std::memcpy(M[m][r], shared_pointer(a, 16, "ldmatrix"), 16);
      }
    for (int lane = 0; lane < kWarpSize; ++lane) {
      auto* op = static_cast<Operands*>(slots[lane]);
      for (int m = 0; m < Num; ++m) {
        std::uint16_t lo, hi;
        if (Trans) {
          lo = M[m][2 * (lane % 4)][lane / 4];
          hi = M[m][2 * (lane % 4) + 1][lane / 4];
        } else {
          lo = M[m][lane / 4][2 * (lane % 4)];
          hi = M[m][lane / 4][2 * (lane % 4) + 1];
        }
        op->regs[m] = lo | (static_cast<std::uint32_t>(hi) << 16);
      }
    }
  });
}

}  // namespace tl::emu
