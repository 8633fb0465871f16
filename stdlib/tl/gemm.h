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
// laid out by tl::SwizzledLayout.
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

template <int M, int N, int K, int WM, int WN, bool TransA, bool TransB, class T, class Acc,
          int R>
TL_DEVICE void gemm_ss(const T* A, const T* B, Acc (&C)[R]) {
  static_assert(is_one_of_v<T, f16, bf16>, "tl::gemm_ss: inputs must be f16 or bf16");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / 16, NT = WTN / 8;
  static_assert(WTM % 16 == 0 && WTN % 8 == 0 && K % 16 == 0, "tl::gemm_ss: tile shape");
  static_assert(R == MT * NT * 4, "tl::gemm_ss: accumulator size does not match the warp grid");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const detail::OperandA<M, K, MT, TransA, T> opA(lane, (warp / WN) * WTM);
  const detail::OperandB<N, K, NT, TransB, T> opB(lane, (warp % WN) * WTN);
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
template <int M, int N, int K, int WM, int WN, bool TransB, class T, class Acc, int RA, int R>
TL_DEVICE void gemm_rs(const T (&A)[RA], const T* B, Acc (&C)[R]) {
  static_assert(is_one_of_v<T, f16, bf16>, "tl::gemm_rs: inputs must be f16 or bf16");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / 16, NT = WTN / 8, KT8 = K / 8;
  static_assert(WTN % 8 == 0 && K % 16 == 0, "tl::gemm_rs: tile shape");
  static_assert(RA == MT * KT8 * 4, "tl::gemm_rs: A fragment size does not match");
  static_assert(R == MT * NT * 4, "tl::gemm_rs: accumulator size does not match the warp grid");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const detail::OperandB<N, K, NT, TransB, T> opB(lane, (warp % WN) * WTN);
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
