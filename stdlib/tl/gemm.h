// tl/gemm.h - block-level tile GEMM on the sm_80+ tensor cores (ldmatrix + mma.sync: m16n8k16
// for f16/bf16, m16n8k32 for i8 and fp8, m16n8k8 for f32 as tf32; tl/mma.h).
//
//   gemm_ss: C[M, N] += A[M, K] * B[K, N] with A and B tiles in swizzled shared memory
//   gemm_rs: the same with A in registers (the accumulator layout of an earlier gemm, as in
//            attention's P @ V)
//   gemm_sr: A from shared memory, B in registers: B^T [N, K] in the accumulator layout of an
//            [N, K] tile (a weight loaded or computed into a fragment)
//   gemm_rr: both in registers
//   gemm_sr_runs: B in registers in K runs (dequant_i4's layout of packed weights): A and B
//            read in the same permuted K order; gemm_sr_runs_t the same computed transposed
//            (the weights as the mma's A operand) for 16 weight rows per warp
//
// The block's warps form a WM x WN grid (warp w owns rows (w / WN) * M/WM.. and columns
// (w % WN) * N/WN..). Each thread's accumulator registers follow tlc's MmaC fragment layout:
// register r = (mi * NT + ni) * 4 + e holds C[wr*WTM + mi*16 + lane/4 + 8*(e/2),
// wc*WTN + ni*8 + 2*(lane%4) + e%2], NT = N / WN / 8 (compiler/ir/TileLayout.h).
// The accumulator is f32, or f16 for f16 inputs (4-byte aligned: tl::detail::accum_registers),
// or i32 for i8 inputs.
// Shared tiles: A is [M][K] ([K][M] when TransA), B is [K][N] ([N][K] when TransB), each
// laid out by tl::SwizzledLayout, or (annotate_layout) by any layout whose offset functor
// the call passes: that operand is then read element by element instead of by ldmatrix.
//
// Addressing is the hot path at mma.sync rates: each operand computes its lane's row base and
// swizzle key once, and a k step then costs one add and one xor per ldmatrix. This works
// because the key depends only on row % 8 and a k step moves by two 16-byte chunks (32 bytes
// of K: 16 f16, 32 i8/fp8 or 8 f32 elements). An operand whose K is not contiguous ([K][M]
// A, [K][N] B) goes through ldmatrix.trans for 16-bit types; 8- and 32-bit elements cannot be
// transposed by ldmatrix, so those registers are gathered with one shared load per element
// (correct, not fast: store such B as [N][K] with transpose_B), by the same element reader
// as operands in annotated layouts (operand_a / operand_b).
#pragma once

#include "common.h"
#include "dtypes.h"  // convert (gemm_sr_runs_t's scales)
#include "ldmatrix.h"
#include "mma.h"
#include "swizzle.h"

#if TL_CUDA
namespace tl {

// A gemm operand in its default layout, tl::SwizzledLayout (read with ldmatrix where it can);
// the other choice is a functor (int row, int col) -> element offset, for annotated layouts.
struct SwizzledOperand {};

namespace detail {

// The mma.sync instruction of input type T (tl/mma.h): m16n8k16 for f16/bf16, m16n8k32 for
// i8 and fp8, m16n8k8 for f32 read as tf32. Each reads 32 bytes of K per step (kStep
// elements: two 16-byte chunks of a K-major row) from a[4] and b[2], and accumulates into 4
// elements of C in the m16n8k16 layout, so the operand addressing below is the same in bytes
// for every type.
template <class T>
struct WarpMma {
  static_assert(is_one_of_v<T, f16, bf16, i8, f8e4m3, f8e5m2, float>,
                "tl::gemm: inputs must be f16, bf16, i8, f8e4m3, f8e5m2 or f32 (as tf32)");
  static constexpr int kStep = 32 / static_cast<int>(sizeof(T));   // K per instruction
  static constexpr int kChunk = 16 / static_cast<int>(sizeof(T));  // elements of 16 bytes
  static constexpr int kPerRegister = 4 / static_cast<int>(sizeof(T));
  static constexpr int kBits = 8 * static_cast<int>(sizeof(T));
  // ldmatrix.trans transposes 16-bit elements only: an MN-major operand of another type is
  // gathered element by element (gather_register).
  static constexpr bool kLdmatrixTrans = sizeof(T) == 2;

  // An operand register as the instruction reads it: f32 bits are rounded to tf32.
  TL_DEVICE static std::uint32_t operand(std::uint32_t r) {
    if constexpr (std::is_same_v<T, float>)
      return m16n8k8::to_tf32(r);
    else
      return r;
  }

  // One instruction on the 4 accumulator elements at c (tl::detail::accum_registers).
  template <class Acc>
  TL_DEVICE static void run(Acc* c, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
    if constexpr (sizeof(T) == 2) {
      static_assert(is_one_of_v<Acc, float, f16>, "tl::gemm: f16/bf16 inputs accumulate in f32 or f16");
      auto& d = accum_registers(*reinterpret_cast<Acc(*)[4]>(c));
      m16n8k16::mma_raw<T>(d, a, b, d);
    } else if constexpr (std::is_same_v<T, i8>) {
      static_assert(std::is_same_v<Acc, i32>, "tl::gemm: i8 inputs accumulate in i32");
      auto& d = *reinterpret_cast<i32(*)[4]>(c);
      m16n8k32::mma_s8(d, a, b, d);
    } else {
      static_assert(std::is_same_v<Acc, float>, "tl::gemm: fp8 and tf32 inputs accumulate in f32");
      auto& d = *reinterpret_cast<float(*)[4]>(c);
      if constexpr (std::is_same_v<T, float>)
        m16n8k8::mma_tf32(d, a, b, d);
      else
        m16n8k32::mma_f8<std::is_same_v<T, f8e5m2>>(d, a, b, d);
    }
  }
};

// One operand register gathered from a shared tile: its kPerRegister elements at element
// offsets offset(0), offset(1), ..., element i in bits [i * kBits, (i + 1) * kBits) (for
// 16-bit types what tl::detail::pack2 builds).
template <class T, class Offset>
TL_DEVICE std::uint32_t gather_register(const T* tile, Offset offset) {
  using Bits = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                                  std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint32_t>>;
  const Bits* bits = reinterpret_cast<const Bits*>(tile);
  std::uint32_t r = 0;
#pragma unroll
  for (int i = 0; i < WarpMma<T>::kPerRegister; ++i)
    r |= static_cast<std::uint32_t>(bits[offset(i)]) << (WarpMma<T>::kBits * i);
  return r;
}

// The operands of one warp come in two kinds, chosen by operand_a / operand_b below:
//   OperandA / OperandB: ldmatrix from tl::SwizzledLayout, where ldmatrix can read the operand
//     (K contiguous, or 16-bit elements that ldmatrix.trans transposes);
//   OperandAAt / OperandBAt: every element through an offset functor (row, col) -> element
//     offset of the stored tile: the functor of an annotated layout (annotate_layout), or
//     SwizzledOffset for an 8- or 32-bit operand whose K is not contiguous.
// Both fill the same registers of the instruction's fragments (WarpMma).

// The A operand of one warp read by ldmatrix: MT m16 tiles, ldmatrix.x4 per (mi, k step).
template <int M, int K, int MT, bool TransA, class T>
struct OperandA {
  using Mma = WarpMma<T>;
  static constexpr int kChunk = Mma::kChunk;
  static_assert(!TransA || Mma::kLdmatrixTrans, "tl::gemm: ldmatrix transposes 16-bit elements only");
  int base;     // element offset of this lane's row for mi = 0, kk = 0
  int xorKey;   // chunk xor term (see below)
  int colOff[MT];

  TL_DEVICE OperandA(int lane, int row0) {
    int q = lane / 8;
    if constexpr (!TransA) {  // [M][K]: rows fixed, chunk = 2*kk + q/2
      using L = SwizzledLayout<M, K, Mma::kBits>;
      int row = row0 + (q % 2) * 8 + lane % 8;
      base = row * K;
      xorKey = (q / 2) ^ L::key(row);
    } else {  // [K][M]: rows advance with kk, chunk = row0/8 + 2*mi + q%2
      using L = SwizzledLayout<K, M, Mma::kBits>;
      int krow = (q / 2) * 8 + lane % 8;
      base = krow * M;
      xorKey = (q % 2) ^ L::key(krow);
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) colOff[mi] = ((row0 / 8 + 2 * mi) ^ xorKey) * kChunk;
    }
  }

  TL_DEVICE void load(const T* A, int kk, int mi, std::uint32_t (&a)[4]) const {
    if constexpr (!TransA)
      ldmatrix<4, false>(a, A + base + mi * 16 * K + (((2 * kk) ^ xorKey) * kChunk));
    else
      ldmatrix<4, true>(a, A + base + kk * Mma::kStep * M + colOff[mi]);
#pragma unroll
    for (int r = 0; r < 4; ++r) a[r] = Mma::operand(a[r]);
  }
};

// The B operand of one warp read by ldmatrix: NT n8 tiles loaded in pairs by ldmatrix.x4
// (x2 for a lone last tile when NT is odd).
template <int N, int K, int NT, bool TransB, class T>
struct OperandB {
  using Mma = WarpMma<T>;
  static constexpr int kChunk = Mma::kChunk;
  static_assert(TransB || Mma::kLdmatrixTrans, "tl::gemm: ldmatrix transposes 16-bit elements only");
  static constexpr int kPairs = (NT + 1) / 2;
  int base[kPairs];
  int xorKey;
  int colOff[kPairs];

  TL_DEVICE OperandB(int lane, int col0) {
    int q = lane / 8;
    if constexpr (!TransB) {  // [K][N], ldmatrix.trans: rows = k, chunk = col0/8 + 2p + q/2
      using L = SwizzledLayout<K, N, Mma::kBits>;
      int krow = (q % 2) * 8 + lane % 8;
      int key = L::key(krow);
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        base[p] = krow * N;
        int chunk = col0 / 8 + 2 * p + (2 * p + 1 < NT ? q / 2 : 0);
        colOff[p] = (chunk ^ key) * kChunk;
      }
      xorKey = 0;
    } else {  // [N][K]: rows = n, chunk = 2*kk + q%2
      using L = SwizzledLayout<N, K, Mma::kBits>;
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        int nrow = col0 + 16 * p + (2 * p + 1 < NT ? (q / 2) * 8 : 0) + lane % 8;
        base[p] = nrow * K;
        colOff[p] = 0;
      }
      xorKey = (q % 2) ^ L::key(lane % 8);
    }
  }

  // B fragments of n8 tiles 2p and 2p + 1 (b1 untouched when 2p + 1 == NT).
  TL_DEVICE void load(const T* B, int kk, int p, std::uint32_t (&b0)[2], std::uint32_t (&b1)[2]) const {
    const T* addr = !TransB ? B + base[p] + kk * Mma::kStep * N + colOff[p]
                            : B + base[p] + (((2 * kk) ^ xorKey) * kChunk);
    if (2 * p + 1 < NT) {
      std::uint32_t r[4];
      ldmatrix<4, !TransB>(r, addr);
      b0[0] = r[0], b0[1] = r[1], b1[0] = r[2], b1[1] = r[3];
    } else {
      ldmatrix<2, !TransB>(b0, addr);
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      b0[j] = Mma::operand(b0[j]);
      if (2 * p + 1 < NT) b1[j] = Mma::operand(b1[j]);
    }
  }
};

// Operands read element by element through `off(row, col)`, the element offset in the
// operand's stored [rows][cols] tile: no ldmatrix, so no constraint on the layout; slower
// than ldmatrix (one shared load per element). Fragments of lane (g = lane / 4, t = lane % 4),
// PTX ISA "Matrix Fragments for mma.m16n8k*", with E = kPerRegister elements per register and
// kChunk = 16 bytes of K: A register r holds row g + 8 * (r % 2), K columns (r / 2) * kChunk
// + t * E + i; B register j holds K rows j * kChunk + t * E + i, column g (i < E).
template <int MT, bool TransA, class T, class Off>
struct OperandAAt {
  using Mma = WarpMma<T>;
  Off off;
  int row, col;  // this lane's first row and K column of the warp's first tile

  TL_DEVICE OperandAAt(int lane, int row0, Off off)
      : off(off), row(row0 + lane / 4), col((lane % 4) * Mma::kPerRegister) {}

  TL_DEVICE int offset(int m, int k) const { return TransA ? off(k, m) : off(m, k); }

  TL_DEVICE void load(const T* A, int kk, int mi, std::uint32_t (&a)[4]) const {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      int m = row + mi * 16 + 8 * (r % 2), k = col + kk * Mma::kStep + (r / 2) * Mma::kChunk;
      a[r] = Mma::operand(gather_register(A, [&](int i) { return offset(m, k + i); }));
    }
  }
};

template <int NT, bool TransB, class T, class Off>
struct OperandBAt {
  using Mma = WarpMma<T>;
  Off off;
  int row, col;  // this lane's first K row and column of the warp's first tile

  TL_DEVICE OperandBAt(int lane, int col0, Off off)
      : off(off), row((lane % 4) * Mma::kPerRegister), col(col0 + lane / 4) {}

  TL_DEVICE int offset(int k, int n) const { return TransB ? off(n, k) : off(k, n); }

  TL_DEVICE void tile(const T* B, int k, int n, std::uint32_t (&b)[2]) const {
#pragma unroll
    for (int j = 0; j < 2; ++j)
      b[j] = Mma::operand(gather_register(B, [&](int i) { return offset(k + j * Mma::kChunk + i, n); }));
  }

  // B fragments of n8 tiles 2p and 2p + 1 (b1 untouched when 2p + 1 == NT), as OperandB.
  TL_DEVICE void load(const T* B, int kk, int p, std::uint32_t (&b0)[2], std::uint32_t (&b1)[2]) const {
    int k = row + kk * Mma::kStep;
    tile(B, k, col + 16 * p, b0);
    if (2 * p + 1 < NT) tile(B, k, col + 16 * p + 8, b1);
  }
};

// tl::SwizzledLayout<Rows, Cols, Bits> as an offset functor, for the element-by-element
// reads of swizzled operands that ldmatrix cannot transpose.
template <int Rows, int Cols, int Bits>
struct SwizzledOffset {
  TL_DEVICE int operator()(int row, int col) const { return SwizzledLayout<Rows, Cols, Bits>::offset(row, col); }
};

// The reader of an operand: element by element through the functor of an annotated layout;
// for one in tl::SwizzledLayout, ldmatrix where it can (K contiguous, or 16-bit elements),
// else element by element through the swizzle.
template <int M, int K, int MT, bool TransA, class T, class Off>
TL_DEVICE auto operand_a(int lane, int row0, Off off) {
  if constexpr (!std::is_same_v<Off, SwizzledOperand>)
    return OperandAAt<MT, TransA, T, Off>(lane, row0, off);
  else if constexpr (TransA && !WarpMma<T>::kLdmatrixTrans)  // [K][M]
    return OperandAAt<MT, TransA, T, SwizzledOffset<K, M, WarpMma<T>::kBits>>(lane, row0, {});
  else
    return OperandA<M, K, MT, TransA, T>(lane, row0);
}

template <int N, int K, int NT, bool TransB, class T, class Off>
TL_DEVICE auto operand_b(int lane, int col0, Off off) {
  if constexpr (!std::is_same_v<Off, SwizzledOperand>)
    return OperandBAt<NT, TransB, T, Off>(lane, col0, off);
  else if constexpr (!TransB && !WarpMma<T>::kLdmatrixTrans)  // [K][N]
    return OperandBAt<NT, TransB, T, SwizzledOffset<K, N, WarpMma<T>::kBits>>(lane, col0, {});
  else
    return OperandB<N, K, NT, TransB, T>(lane, col0);
}

// Operands in registers (16-bit inputs): an [R, K] tile (A, or B^T) in the MmaC layout of
// the warp's rows (KT8 = K / 8 accumulator columns; register (ri * KT8 + ki) * 4 + e holds
// row ri*16 + lane/4 + 8*(e/2), column ki*8 + 2*(lane%4) + e%2). K step kk (16 columns) of
// m16 tile ri is the accumulator's columns 2kk and 2kk + 1: PTX's m16n8k16 A fragment
// (a0 = rows g, k 2t..; a1 = rows g + 8; a2, a3 the same at k + 8) and the B fragments of
// the n8 tiles 2ri (rows g: b0 = k 2t.., b1 = k 2t + 8..) and 2ri + 1 (rows g + 8).
template <int KT8, class T, int R>
TL_DEVICE void register_a(const T (&A)[R], int kk, int mi, std::uint32_t (&a)[4]) {
  const T *lo = &A[(mi * KT8 + 2 * kk) * 4], *hi = &A[(mi * KT8 + 2 * kk + 1) * 4];
  a[0] = pack2(lo[0], lo[1]);
  a[1] = pack2(lo[2], lo[3]);
  a[2] = pack2(hi[0], hi[1]);
  a[3] = pack2(hi[2], hi[3]);
}

// The B fragments of n8 tiles 2p and 2p + 1 from B^T's m16 tile p (as mma_step's loadB).
template <int KT8, class T, int R>
TL_DEVICE void register_b(const T (&B)[R], int kk, int p, std::uint32_t (&b0)[2], std::uint32_t (&b1)[2]) {
  const T *lo = &B[(p * KT8 + 2 * kk) * 4], *hi = &B[(p * KT8 + 2 * kk + 1) * 4];
  b0[0] = pack2(lo[0], lo[1]);
  b0[1] = pack2(hi[0], hi[1]);
  b1[0] = pack2(lo[2], lo[3]);
  b1[1] = pack2(hi[2], hi[3]);
}

// C tiles of one k step: every (mi, ni) pair.
template <int MT, int NT, class T, class Acc, class LoadB>
TL_DEVICE void mma_step(const std::uint32_t (&a)[MT][4], const LoadB& loadB, Acc* C) {
#pragma unroll
  for (int p = 0; p < (NT + 1) / 2; ++p) {
    std::uint32_t b0[2], b1[2];
    loadB(p, b0, b1);
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) {
      WarpMma<T>::run(&C[(mi * NT + 2 * p) * 4], a[mi], b0);
      if (2 * p + 1 < NT) WarpMma<T>::run(&C[(mi * NT + 2 * p + 1) * 4], a[mi], b1);
    }
  }
}

// The k loop every warp gemm shares: per k step, each of the warp's MT A fragments from
// loadA(kk, mi, a) (ldmatrix or registers), then every C tile with B from loadB(kk, p, b0, b1).
template <int KSteps, int MT, int NT, class T, class Acc, class LoadA, class LoadB>
TL_DEVICE void mma_k_loop(const LoadA& loadA, const LoadB& loadB, Acc* C) {
#pragma unroll
  for (int kk = 0; kk < KSteps; ++kk) {
    std::uint32_t a[MT][4];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) loadA(kk, mi, a[mi]);
    mma_step<MT, NT, T>(a, [&](int p, std::uint32_t(&b0)[2], std::uint32_t(&b1)[2]) { loadB(kk, p, b0, b1); }, C);
  }
}

}  // namespace detail

// offA / offB: SwizzledOperand, or the offset functor of an operand in any other layout.
template <int M, int N, int K, int WM, int WN, bool TransA, bool TransB, class T, class Acc,
          int R, class OffA = SwizzledOperand, class OffB = SwizzledOperand>
TL_DEVICE void gemm_ss(const T* A, const T* B, Acc (&C)[R], OffA offA = {}, OffB offB = {}) {
  using Mma = detail::WarpMma<T>;
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / 16, NT = WTN / 8;
  static_assert(WTM % 16 == 0 && WTN % 8 == 0 && K % Mma::kStep == 0, "tl::gemm_ss: tile shape");
  static_assert(R == MT * NT * 4, "tl::gemm_ss: accumulator size does not match the warp grid");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const auto opA = detail::operand_a<M, K, MT, TransA, T>(lane, (warp / WN) * WTM, offA);
  const auto opB = detail::operand_b<N, K, NT, TransB, T>(lane, (warp % WN) * WTN, offB);
  detail::mma_k_loop<K / Mma::kStep, MT, NT, T>(
      [&](int kk, int mi, std::uint32_t(&a)[4]) { opA.load(A, kk, mi, a); },
      [&](int kk, int p, std::uint32_t(&b0)[2], std::uint32_t(&b1)[2]) { opB.load(B, kk, p, b0, b1); }, C);
}

// A in registers: RA = MT * (K / 8) * 4 elements in the MmaC layout of an [M, K] tile with
// every warp owning whole rows (WN == 1 for A). 16-bit inputs only: there the accumulator
// layout of two n8 tiles is m16n8k16's A layout.
template <int M, int N, int K, int WM, int WN, bool TransB, class T, class Acc, int RA, int R,
          class OffB = SwizzledOperand>
TL_DEVICE void gemm_rs(const T (&A)[RA], const T* B, Acc (&C)[R], OffB offB = {}) {
  static_assert(is_one_of_v<T, f16, bf16>, "tl::gemm_rs: inputs must be f16 or bf16");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / 16, NT = WTN / 8, KT8 = K / 8;
  static_assert(WTN % 8 == 0 && K % 16 == 0, "tl::gemm_rs: tile shape");
  static_assert(RA == MT * KT8 * 4, "tl::gemm_rs: A fragment size does not match");
  static_assert(R == MT * NT * 4, "tl::gemm_rs: accumulator size does not match the warp grid");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const auto opB = detail::operand_b<N, K, NT, TransB, T>(lane, (warp % WN) * WTN, offB);
  detail::mma_k_loop<K / 16, MT, NT, T>(
      [&](int kk, int mi, std::uint32_t(&a)[4]) { detail::register_a<KT8>(A, kk, mi, a); },
      [&](int kk, int p, std::uint32_t(&b0)[2], std::uint32_t(&b1)[2]) { opB.load(B, kk, p, b0, b1); }, C);
}

// B in registers: RB = (WTN / 16) * (K / 8) * 4 elements, B^T [N, K] (transpose_B) in the
// MmaC layout of an [N, K] tile over WN x 1 warps: the registers of this warp's WTN columns,
// which tlc's layout gives only where every warp owns whole columns (WM == 1: policy
// full_col). 16-bit inputs only: there the accumulator layout of a 16-row tile is
// m16n8k16's B layout of two n8 tiles (detail::register_b).
template <int M, int N, int K, int WM, int WN, bool TransA, class T, class Acc, int RB, int R,
          class OffA = SwizzledOperand>
TL_DEVICE void gemm_sr(const T* A, const T (&B)[RB], Acc (&C)[R], OffA offA = {}) {
  static_assert(is_one_of_v<T, f16, bf16>, "tl::gemm_sr: inputs must be f16 or bf16");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / 16, NT = WTN / 8, KT8 = K / 8;
  static_assert(WTM % 16 == 0 && WTN % 16 == 0 && K % 16 == 0, "tl::gemm_sr: tile shape");
  static_assert(RB == (WTN / 16) * KT8 * 4, "tl::gemm_sr: B fragment size does not match");
  static_assert(R == MT * NT * 4, "tl::gemm_sr: accumulator size does not match the warp grid");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const auto opA = detail::operand_a<M, K, MT, TransA, T>(lane, (warp / WN) * WTM, offA);
  detail::mma_k_loop<K / 16, MT, NT, T>(
      [&](int kk, int mi, std::uint32_t(&a)[4]) { opA.load(A, kk, mi, a); },
      [&](int kk, int p, std::uint32_t(&b0)[2], std::uint32_t(&b1)[2]) { detail::register_b<KT8>(B, kk, p, b0, b1); },
      C);
}

// B in registers in K runs (gemm_sr_runs): B^T [N, K] in tlc's blocked layout of four threads
// per row and V columns per thread (FragmentLayout::blockedWith(N, K, threads, 4, V), what
// dequant_i4 leaves from packed weights loaded 16 bytes at a time): lane (g = lane / 4,
// t = lane % 4) of warp w holds row 8w + g, columns c * 4V + t * V + i in register c * V + i.
// A sum over K may take K in any order as long as A and B take the same one, so the mma
// slots of lane t (k' = 2t, 2t + 1, 2t + 8, 2t + 9 of a k16 step) take the lane's own run:
// step s of chunk c reads B registers c * V + 4s + {0, 1} (b0) and {2, 3} (b1), and A at the
// same columns c * 4V + t * V + 4s + {0, 1} (a0, a1: rows g, g + 8) and {2, 3} (a2, a3). A's
// run is read from shared memory 16 bytes at a time (tl::SwizzledLayout keeps 8 columns
// whole), or element by element through the offset functor of an annotated layout.
// With KS > 1 (fewer weight rows than 8 per warp) the warps 0..WN-1, WN..2WN-1, ... are KS
// groups, group q holding B's columns q * K / KS .. in the layout above (FragmentLayout's
// colSplit): each group sums its slice into C, which then holds that group's partial sums.
namespace detail {
// Independent accumulator chains of a runs gemm with `tiles` accumulator tiles per warp and
// `steps` k16 steps per call: a warp with one tile would chain every mma on the one before
// (a warp alone on its scheduler, as at N = 4096 where a block per SM is all there is, waits
// each mma's latency), so its steps alternate between the tile and a second set of sums, added
// at the end of the call (GPU run 87: 3-12% faster with one tile; a third and fourth chain
// gained nothing more, and warps with two tiles lost with extra chains).
template <int Tiles, int Steps>
inline constexpr int runs_chains = Tiles == 1 && Steps >= 2 ? 2 : 1;

// The sums of a runs gemm over Chains independent chains: chain 0 is C itself, the others start
// at zero and are added to C when the call ends (finish).
template <int Chains, class Acc, int R>
struct RunsChains {
  Acc (&C)[R];
  Acc part[Chains > 1 ? Chains - 1 : 1][R] = {};
  // The accumulator registers (from `offset`) of k16 step `step`'s mma.
  TL_DEVICE Acc* at(int step, int offset) {
    const int q = step % Chains;
    return q == 0 ? &C[offset] : &part[q - 1][offset];
  }
  TL_DEVICE void finish() {
#pragma unroll
    for (int q = 0; q + 1 < Chains; ++q)
#pragma unroll
      for (int i = 0; i < R; ++i) C[i] += part[q][i];
  }
};

// Regs registers of row `row` of A from column `col` on (2 * Regs consecutive 16-bit
// elements): from tl::SwizzledLayout in 16-byte (or, for two registers, 8-byte) loads, which
// keep within one of its 16-byte chunks (col a multiple of 8, or of 4 for two registers), or
// element by element through the offset functor of an annotated layout.
template <int M, int K, int Regs, class T, class Off>
TL_DEVICE void load_a_run(const T* A, int row, int col, Off off, std::uint32_t (&run)[Regs]) {
  if constexpr (std::is_same_v<Off, SwizzledOperand>) {
    using L = SwizzledLayout<M, K, 16>;
    if constexpr (Regs == 2) {
      const uint2 v = *reinterpret_cast<const uint2*>(A + L::offset(row, col));
      run[0] = v.x, run[1] = v.y;
    } else {
      static_assert(Regs % 4 == 0, "tl::gemm: a run of whole 16-byte chunks");
#pragma unroll
      for (int q = 0; q < Regs / 4; ++q) {
        const uint4 v = *reinterpret_cast<const uint4*>(A + L::offset(row, col + 8 * q));
        run[4 * q] = v.x, run[4 * q + 1] = v.y, run[4 * q + 2] = v.z, run[4 * q + 3] = v.w;
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < Regs; ++i)
      run[i] = gather_register(A, [&](int e) { return off(row, col + 2 * i + e); });
  }
}
}  // namespace detail

template <int M, int N, int K, int WM, int WN, int V, int KS = 1, class T, class Acc, int RB, int R,
          class OffA = SwizzledOperand>
TL_DEVICE void gemm_sr_runs(const T* A, const T (&B)[RB], Acc (&C)[R], OffA offA = {}) {
  static_assert(is_one_of_v<T, f16, bf16>, "tl::gemm_sr_runs: inputs must be f16 or bf16");
  constexpr int MT = M / 16, Slice = K / KS, Chunks = Slice / (4 * V);
  static_assert(WM == 1 && N == 8 * WN && M % 16 == 0, "tl::gemm_sr_runs: one n8 tile per warp, whole m16 tiles");
  static_assert(K % KS == 0 && V % 8 == 0 && Slice % (4 * V) == 0, "tl::gemm_sr_runs: runs of whole 16-byte chunks");
  static_assert(RB == Chunks * V, "tl::gemm_sr_runs: B fragment size does not match");
  static_assert(R == MT * 4, "tl::gemm_sr_runs: accumulator size does not match the warp grid");
  detail::RunsChains<detail::runs_chains<MT, Chunks * (V / 4)>, Acc, R> sums{C};
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int slice = KS > 1 ? int(threadIdx.x / 32) / WN * Slice : 0;  // this warp group's K slice
#pragma unroll
  for (int c = 0; c < Chunks; ++c) {
    const int col = slice + c * 4 * V + t * V;
    std::uint32_t lo[MT][V / 2], hi[MT][V / 2];  // A's run in rows g and g + 8 of each m16 tile
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) {
      detail::load_a_run<M, K, V / 2>(A, mi * 16 + g, col, offA, lo[mi]);
      detail::load_a_run<M, K, V / 2>(A, mi * 16 + g + 8, col, offA, hi[mi]);
    }
#pragma unroll
    for (int s = 0; s < V / 4; ++s) {
      std::uint32_t bb[2];  // B's pairs as dequant_i4 left them: 32-bit words, no repacking
      std::memcpy(bb, &B[c * V + 4 * s], 8);
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) {
        const std::uint32_t a[4] = {lo[mi][2 * s], hi[mi][2 * s], lo[mi][2 * s + 1], hi[mi][2 * s + 1]};
        detail::WarpMma<T>::run(sums.at(c * (V / 4) + s, mi * 4), a, bb);
      }
    }
  }
  sums.finish();
}

namespace detail {
// gemm_sr_runs_t's shape (both forms, below): n8 tiles of A's rows, the K slice of each warp
// group, its chunks of 4V columns and the registers of one pass of B.
template <int M, int N, int K, int WM, int WN, int V, int KS, int RB, int R>
struct RunsTShape {
  static constexpr int NT = M / 8, Slice = K / KS, Chunks = Slice / (4 * V), Pass = Chunks * V;
  static_assert(WM == 1 && N == 16 * WN && M % 8 == 0, "tl::gemm_sr_runs_t: 16 weight rows per warp, whole n8 tiles");
  static_assert(K % KS == 0 && V % 4 == 0 && Slice % (4 * V) == 0, "tl::gemm_sr_runs_t: runs of whole k16 steps");
  static_assert(RB == 2 * Pass, "tl::gemm_sr_runs_t: B fragment size does not match");
  static_assert(R == NT * 4, "tl::gemm_sr_runs_t: accumulator size does not match");
  // The first column of this warp group's K slice.
  TL_DEVICE static int slice() { return KS > 1 ? int(threadIdx.x / 32) / WN * Slice : 0; }
};

// Step s of chunk c of gemm_sr_runs_t (below): the weights' pairs (rows g, g + 8, g, g + 8, as
// dequant_i4 left them) against A's rows 8j + g at this lane's columns, for each n8 tile j
// of A's rows, into the 4 accumulator registers acc(j).
template <int M, int K, int V, int Pass, int NT, class T, class OffA, class AccAt>
TL_DEVICE void runs_t_step(const T* A, const T* B, int c, int s, int col, int g, OffA offA, AccAt acc) {
  std::uint32_t a[4];
  std::memcpy(&a[0], &B[c * V + 4 * s], 4);
  std::memcpy(&a[1], &B[Pass + c * V + 4 * s], 4);
  std::memcpy(&a[2], &B[c * V + 4 * s + 2], 4);
  std::memcpy(&a[3], &B[Pass + c * V + 4 * s + 2], 4);
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    std::uint32_t b[2];
    load_a_run<M, K, 2>(A, 8 * j + g, col + 4 * s, offA, b);
    WarpMma<T>::run(acc(j), a, b);
  }
}
}  // namespace detail

// B in registers in K runs over 16 weight rows per warp (gemm_sr_runs_t): the product computed
// transposed, C^T = B @ A^T, with the weights as the mma's A operand and A's rows (activations)
// as its B operand. B^T [N, K] is tlc's blocked layout of four threads per row and V columns per
// thread over two passes (N = 16 x WN): lane (g, t) of warp w holds weight rows 8w + g (pass 0,
// registers c * V + i) and 8w + g + N / 2 (pass 1, registers (K / (4V) + c) * V + i), rows g and
// g + 8 of the warp's m16 tile. Step s of chunk c: a0/a2 = pass 0's registers c * V + 4s +
// {0, 1}/{2, 3}, a1/a3 = pass 1's; b0/b1 = A row 8j + g at columns c * 4V + t * V + 4s + {0, 1}
// /{2, 3} for n8 tile j of A's rows (M / 8 tiles). C (FragmentLayout::mmaTransposedRuns): register
// 4j + 2p + e holds C[8j + 2t + e][8w + g + p * N / 2].
template <int M, int N, int K, int WM, int WN, int V, int KS = 1, class T, class Acc, int RB, int R,
          class OffA = SwizzledOperand>
TL_DEVICE void gemm_sr_runs_t(const T* A, const T (&B)[RB], Acc (&C)[R], OffA offA = {}) {
  static_assert(is_one_of_v<T, f16, bf16>, "tl::gemm_sr_runs_t: inputs must be f16 or bf16");
  using Shape = detail::RunsTShape<M, N, K, WM, WN, V, KS, RB, R>;
  detail::RunsChains<detail::runs_chains<Shape::NT, Shape::Chunks * (V / 4)>, Acc, R> sums{C};
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int c = 0; c < Shape::Chunks; ++c) {
    const int col = Shape::slice() + c * 4 * V + t * V;
#pragma unroll
    for (int s = 0; s < V / 4; ++s)
      detail::runs_t_step<M, K, V, Shape::Pass, Shape::NT>(A, B, c, s, col, g, offA,
                                                           [&](int j) { return sums.at(c * (V / 4) + s, j * 4); });
  }
  sums.finish();
}

// The same with B's weights unscaled and each chunk's sums scaled (tlc's ScaleFolding: a group
// of the dequantized weights' scales covers whole chunks of 4V columns): chunk c's products go
// into two chains of their own, then C[4j + 2p + e] += (sum) * scales[p][c], pass p's row's
// scale. In f32, so a group's products are summed exactly as the unscaled weights give them.
template <int M, int N, int K, int WM, int WN, int V, int KS = 1, class T, class Acc, int RB, int R, class OffA,
          class S>
TL_DEVICE void gemm_sr_runs_t(const T* A, const T (&B)[RB], Acc (&C)[R], OffA offA,
                              const S (&scales)[2][K / KS / (4 * V)]) {
  static_assert(is_one_of_v<T, f16, bf16> && std::is_same_v<Acc, float>,
                "tl::gemm_sr_runs_t with scales: f16 or bf16 inputs, f32 sums");
  using Shape = detail::RunsTShape<M, N, K, WM, WN, V, KS, RB, R>;
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
  for (int c = 0; c < Shape::Chunks; ++c) {
    const int col = Shape::slice() + c * 4 * V + t * V;
    Acc part[2][R] = {};  // two chains: consecutive mmas do not wait for each other
#pragma unroll
    for (int s = 0; s < V / 4; ++s)
      detail::runs_t_step<M, K, V, Shape::Pass, Shape::NT>(A, B, c, s, col, g, offA,
                                                           [&](int j) { return &part[s % 2][j * 4]; });
    const float scale[2] = {convert<float>(scales[0][c]), convert<float>(scales[1][c])};
#pragma unroll
    for (int i = 0; i < R; ++i) C[i] += (part[0][i] + part[1][i]) * scale[i / 2 % 2];
  }
}

// A and B in registers (gemm_rs's A, gemm_sr's B): the registers of this warp's rows and
// columns; tlc gives both layouts only to a block of one warp.
template <int M, int N, int K, int WM, int WN, class T, class Acc, int RA, int RB, int R>
TL_DEVICE void gemm_rr(const T (&A)[RA], const T (&B)[RB], Acc (&C)[R]) {
  static_assert(is_one_of_v<T, f16, bf16>, "tl::gemm_rr: inputs must be f16 or bf16");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / 16, NT = WTN / 8, KT8 = K / 8;
  static_assert(WTM % 16 == 0 && WTN % 16 == 0 && K % 16 == 0, "tl::gemm_rr: tile shape");
  static_assert(RA == MT * KT8 * 4, "tl::gemm_rr: A fragment size does not match");
  static_assert(RB == (WTN / 16) * KT8 * 4, "tl::gemm_rr: B fragment size does not match");
  static_assert(R == MT * NT * 4, "tl::gemm_rr: accumulator size does not match the warp grid");
  detail::mma_k_loop<K / 16, MT, NT, T>(
      [&](int kk, int mi, std::uint32_t(&a)[4]) { detail::register_a<KT8>(A, kk, mi, a); },
      [&](int kk, int p, std::uint32_t(&b0)[2], std::uint32_t(&b1)[2]) { detail::register_b<KT8>(B, kk, p, b0, b1); },
      C);
}

}  // namespace tl
#endif  // TL_CUDA

// Block rasterization serves both vendors (tl/hip/gemm.h has the MFMA gemm).
namespace tl {

// Rasterization of a 2-d grid in panels of `panel` block rows (TileLang's use_swizzle,
// Triton's grouped ordering): consecutive blocks share A rows and sweep B columns, so their
// tiles are reused from L2.
// Block `id` (row-major) of a gx x gy grid in the L2-friendly order: bands of `panel` rows of
// blocks, each walked column by column.
TL_DEVICE void swizzled_coords(int panel, int id, int gx, int gy, int& bx, int& by) {
  int group = panel * gx;
  int first = (id / group) * panel;
  int rows = min(gy - first, panel);
  by = first + (id % group) % rows;
  bx = (id % group) / rows;
}

// The tile a persistent block runs at its `slot`-th step (slot = blockIdx.x + step * gridDim.x,
// of `tiles` in all): each full round of gridDim.x tiles is walked forward in even rounds and
// backward in odd ones. Where the tiles' cost falls or rises along their order (causal
// attention's query blocks), a block that ran a cheap tile runs an expensive one next, so the
// blocks finish together (round-robin gave a block of causal attention at 1024 keys twice the
// work of another). The last, partial round keeps its order, so every tile runs exactly once.
TL_DEVICE int persistent_tile(int slot, int tiles) {
  const int blocks = static_cast<int>(gridDim.x);
  const int first = slot - static_cast<int>(blockIdx.x);
  if (((first / blocks) & 1) && first + blocks <= tiles)
    return first + blocks - 1 - static_cast<int>(blockIdx.x);
  return slot;
}

TL_DEVICE void swizzle_blocks(int panel, int& bx, int& by) {
  swizzled_coords(panel, static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x), static_cast<int>(gridDim.x),
                  static_cast<int>(gridDim.y), bx, by);
}

}  // namespace tl

