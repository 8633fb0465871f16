// tl/gemm.h - block-level tile GEMM on the sm_80+ tensor cores (ldmatrix + mma.m16n8k16).
//
//   gemm_ss: C[M, N] += A[M, K] * B[K, N] with A and B tiles in swizzled shared memory
//   gemm_rs: the same with A in registers (the accumulator layout of an earlier gemm, as in
//            attention's P @ V)
//
// The block's warps form a WM x WN grid (warp w owns rows (w / WN) * M/WM.. and columns
// (w % WN) * N/WN..). Each thread's accumulator registers follow tlc's MmaC fragment layout:
// register r = (mi * NT + ni) * 4 + e holds C[wr*WTM + mi*16 + lane/4 + 8*(e/2),
// wc*WTN + ni*8 + 2*(lane%4) + e%2], NT = N / WN / 8 (compiler/ir/TileLayout.h).
// The accumulator is f32, or f16 for f16 inputs (4-byte aligned: tl::detail::accum_registers).
// Shared tiles: A is [M][K] ([K][M] when TransA), B is [K][N] ([N][K] when TransB), each
// laid out by tl::SwizzledLayout, or (annotate_layout) by any layout whose offset functor
// the call passes: that operand is then read element by element instead of by ldmatrix.
//
// Addressing is the hot path at mma.sync rates: each operand computes its lane's row base and
// swizzle key once, and a k16 step then costs one add and one xor per ldmatrix. This works
// because the key depends only on row % 8 and a k16 step moves by two 16-byte chunks.
#pragma once

#include "common.h"
#include "ldmatrix.h"
#include "mma.h"
#include "swizzle.h"

#if TL_CUDA
namespace tl {

// A gemm operand in its default layout, tl::SwizzledLayout (read with ldmatrix); the other
// choice is a functor (int row, int col) -> element offset, for annotated layouts.
struct SwizzledOperand {};

namespace detail {

// One m16n8k16 on the 4 accumulator elements at c (tl::detail::accum_registers).
template <class T, class Acc>
TL_DEVICE void mma_16816(Acc* c, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  static_assert(is_one_of_v<Acc, float, f16>, "tl::gemm accumulates in f32 or f16");
  auto& d = accum_registers(*reinterpret_cast<Acc (*)[4]>(c));
  m16n8k16::mma_raw<T>(d, a, b, d);
}

// The A operand of one warp: MT m16 tiles, ldmatrix.x4 per (mi, k16 step).
template <int M, int K, int MT, bool TransA, class T>
struct OperandA {
  int base;     // element offset of this lane's row for mi = 0, kk = 0
  int xorKey;   // chunk xor term (see below)
  int colOff[MT];

  TL_DEVICE OperandA(int lane, int row0) {
    int q = lane / 8;
    if constexpr (!TransA) {  // [M][K]: rows fixed, chunk = 2*kk + q/2
      using L = SwizzledLayout<M, K, 16>;
      int row = row0 + (q % 2) * 8 + lane % 8;
      base = row * K;
      xorKey = (q / 2) ^ L::key(row);
    } else {  // [K][M]: rows advance with kk, chunk = row0/8 + 2*mi + q%2
      using L = SwizzledLayout<K, M, 16>;
      int krow = (q / 2) * 8 + lane % 8;
      base = krow * M;
      xorKey = (q % 2) ^ L::key(krow);
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) colOff[mi] = ((row0 / 8 + 2 * mi) ^ xorKey) * 8;
    }
  }

  TL_DEVICE void load(const T* A, int kk, int mi, std::uint32_t (&a)[4]) const {
    if constexpr (!TransA)
      ldmatrix<4, false>(a, A + base + mi * 16 * K + (((2 * kk) ^ xorKey) * 8));
    else
      ldmatrix<4, true>(a, A + base + kk * 16 * M + colOff[mi]);
  }
};

// The B operand of one warp: NT n8 tiles loaded in pairs by ldmatrix.x4 (x2 for a lone last
// tile when NT is odd).
template <int N, int K, int NT, bool TransB, class T>
struct OperandB {
  static constexpr int kPairs = (NT + 1) / 2;
  int base[kPairs];
  int xorKey;
  int colOff[kPairs];

  TL_DEVICE OperandB(int lane, int col0) {
    int q = lane / 8;
    if constexpr (!TransB) {  // [K][N], ldmatrix.trans: rows = k, chunk = col0/8 + 2p + q/2
      using L = SwizzledLayout<K, N, 16>;
      int krow = (q % 2) * 8 + lane % 8;
      int key = L::key(krow);
#pragma unroll
      for (int p = 0; p < kPairs; ++p) {
        base[p] = krow * N;
        int chunk = col0 / 8 + 2 * p + (2 * p + 1 < NT ? q / 2 : 0);
        colOff[p] = (chunk ^ key) * 8;
      }
      xorKey = 0;
    } else {  // [N][K]: rows = n, chunk = 2*kk + q%2
      using L = SwizzledLayout<N, K, 16>;
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
    const T* addr = !TransB ? B + base[p] + kk * 16 * N + colOff[p]
                            : B + base[p] + (((2 * kk) ^ xorKey) * 8);
    if (2 * p + 1 < NT) {
      std::uint32_t r[4];
      ldmatrix<4, !TransB>(r, addr);
      b0[0] = r[0], b0[1] = r[1], b1[0] = r[2], b1[1] = r[3];
    } else {
      ldmatrix<2, !TransB>(b0, addr);
    }
  }
};

// Operands in any shared layout (annotate_layout): each thread reads the elements of its
// mma.m16n8k16 fragments one by one through `off(row, col)`, the element offset of the
// operand's stored [rows][cols] tile. No ldmatrix, so no constraint on the layout; slower
// than the swizzled path. Fragment of lane (g = lane / 4, t = lane % 4), PTX ISA "Matrix
// Fragments for mma.m16n8k16": A regs {(g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8)},
// each with the next column; B regs {(2t, g), (2t + 8, g)}, each with the next row.
template <int MT, bool TransA, class T, class Off>
struct OperandAAt {
  Off off;
  int row, col;  // this lane's first element of the warp's first tile

  TL_DEVICE OperandAAt(int lane, int row0, Off off) : off(off), row(row0 + lane / 4), col(2 * (lane % 4)) {}

  TL_DEVICE T at(const T* A, int m, int k) const { return TransA ? A[off(k, m)] : A[off(m, k)]; }

  TL_DEVICE void load(const T* A, int kk, int mi, std::uint32_t (&a)[4]) const {
    int m = row + mi * 16, k = col + kk * 16;
    a[0] = pack2(at(A, m, k), at(A, m, k + 1));
    a[1] = pack2(at(A, m + 8, k), at(A, m + 8, k + 1));
    a[2] = pack2(at(A, m, k + 8), at(A, m, k + 9));
    a[3] = pack2(at(A, m + 8, k + 8), at(A, m + 8, k + 9));
  }
};

template <int NT, bool TransB, class T, class Off>
struct OperandBAt {
  Off off;
  int row, col;  // this lane's first k and n of the warp's first tile

  TL_DEVICE OperandBAt(int lane, int col0, Off off) : off(off), row(2 * (lane % 4)), col(col0 + lane / 4) {}

  TL_DEVICE T at(const T* B, int k, int n) const { return TransB ? B[off(n, k)] : B[off(k, n)]; }

  TL_DEVICE void tile(const T* B, int k, int n, std::uint32_t (&b)[2]) const {
    b[0] = pack2(at(B, k, n), at(B, k + 1, n));
    b[1] = pack2(at(B, k + 8, n), at(B, k + 9, n));
  }

  // B fragments of n8 tiles 2p and 2p + 1 (b1 untouched when 2p + 1 == NT), as OperandB.
  TL_DEVICE void load(const T* B, int kk, int p, std::uint32_t (&b0)[2], std::uint32_t (&b1)[2]) const {
    int k = row + kk * 16;
    tile(B, k, col + 16 * p, b0);
    if (2 * p + 1 < NT) tile(B, k, col + 16 * p + 8, b1);
  }
};

// The loaders of an operand: ldmatrix when it is in tl::SwizzledLayout, else through the
// offset functor.
template <int M, int K, int MT, bool TransA, class T, class Off>
TL_DEVICE auto operand_a(int lane, int row0, Off off) {
  if constexpr (std::is_same_v<Off, SwizzledOperand>)
    return OperandA<M, K, MT, TransA, T>(lane, row0);
  else
    return OperandAAt<MT, TransA, T, Off>(lane, row0, off);
}

template <int N, int K, int NT, bool TransB, class T, class Off>
TL_DEVICE auto operand_b(int lane, int col0, Off off) {
  if constexpr (std::is_same_v<Off, SwizzledOperand>)
    return OperandB<N, K, NT, TransB, T>(lane, col0);
  else
    return OperandBAt<NT, TransB, T, Off>(lane, col0, off);
}

// C tiles of one k16 step: every (mi, ni) pair.
template <int MT, int NT, class T, class Acc, class LoadB>
TL_DEVICE void mma_step(const std::uint32_t (&a)[MT][4], const LoadB& loadB, Acc* C) {
#pragma unroll
  for (int p = 0; p < (NT + 1) / 2; ++p) {
    std::uint32_t b0[2], b1[2];
    loadB(p, b0, b1);
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) {
      mma_16816<T>(&C[(mi * NT + 2 * p) * 4], a[mi], b0);
      if (2 * p + 1 < NT) mma_16816<T>(&C[(mi * NT + 2 * p + 1) * 4], a[mi], b1);
    }
  }
}

}  // namespace detail

// offA / offB: SwizzledOperand, or the offset functor of an operand in any other layout.
template <int M, int N, int K, int WM, int WN, bool TransA, bool TransB, class T, class Acc,
          int R, class OffA = SwizzledOperand, class OffB = SwizzledOperand>
TL_DEVICE void gemm_ss(const T* A, const T* B, Acc (&C)[R], OffA offA = {}, OffB offB = {}) {
  static_assert(is_one_of_v<T, f16, bf16>, "tl::gemm_ss: inputs must be f16 or bf16");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / 16, NT = WTN / 8;
  static_assert(WTM % 16 == 0 && WTN % 8 == 0 && K % 16 == 0, "tl::gemm_ss: tile shape");
  static_assert(R == MT * NT * 4, "tl::gemm_ss: accumulator size does not match the warp grid");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const auto opA = detail::operand_a<M, K, MT, TransA, T>(lane, (warp / WN) * WTM, offA);
  const auto opB = detail::operand_b<N, K, NT, TransB, T>(lane, (warp % WN) * WTN, offB);
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    std::uint32_t a[MT][4];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) opA.load(A, kk, mi, a[mi]);
    detail::mma_step<MT, NT, T>(a, [&](int p, std::uint32_t(&b0)[2], std::uint32_t(&b1)[2]) {
      opB.load(B, kk, p, b0, b1);
    }, C);
  }
}

// A in registers: RA = MT * (K / 8) * 4 elements in the MmaC layout of an [M, K] tile with
// every warp owning whole rows (WN == 1 for A).
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
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    std::uint32_t a[MT][4];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) {
      const T *lo = &A[(mi * KT8 + 2 * kk) * 4], *hi = &A[(mi * KT8 + 2 * kk + 1) * 4];
      a[mi][0] = detail::pack2(lo[0], lo[1]);
      a[mi][1] = detail::pack2(lo[2], lo[3]);
      a[mi][2] = detail::pack2(hi[0], hi[1]);
      a[mi][3] = detail::pack2(hi[2], hi[3]);
    }
    detail::mma_step<MT, NT, T>(a, [&](int p, std::uint32_t(&b0)[2], std::uint32_t(&b1)[2]) {
      opB.load(B, kk, p, b0, b1);
    }, C);
  }
}

// Rasterization of a 2-d grid in panels of `panel` block rows (TileLang's use_swizzle,
// Triton's grouped ordering): consecutive blocks share A rows and sweep B columns, so their
// tiles are reused from L2.
TL_DEVICE void swizzle_blocks(int panel, int& bx, int& by) {
  int id = blockIdx.y * gridDim.x + blockIdx.x;
  int group = panel * gridDim.x;
  int first = (id / group) * panel;
  int rows = min(static_cast<int>(gridDim.y) - first, panel);
  by = first + (id % group) % rows;
  bx = (id % group) / rows;
}

}  // namespace tl
#endif
