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
// Shared tiles: A is [M][K] ([K][M] when TransA), B is [K][N] ([N][K] when TransB), each
// laid out by tl::SwizzledLayout.
#pragma once

#include "common.h"
#include "ldmatrix.h"
#include "mma.h"
#include "swizzle.h"

#if TL_CUDA
namespace tl {

namespace detail {

template <class T>
TL_DEVICE std::uint32_t pack2(T lo, T hi) {
  return static_cast<std::uint32_t>(bit_cast<std::uint16_t>(lo)) |
         (static_cast<std::uint32_t>(bit_cast<std::uint16_t>(hi)) << 16);
}

template <class T, class Acc>
TL_DEVICE void mma_16816(Acc* c, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  static_assert(std::is_same_v<Acc, float>, "tl::gemm accumulates in f32");
  float (&d)[4] = *reinterpret_cast<float (*)[4]>(c);
  m16n8k16::mma_raw<T>(d, a, b, d);
}

// B fragments of two adjacent n8 tiles (columns n0..n0+15) for k16 step kk.
template <int K, int N, bool TransB, class T>
TL_DEVICE void load_b_pair(const T* B, int kk, int n0, int lane, std::uint32_t (&b0)[2],
                           std::uint32_t (&b1)[2]) {
  std::uint32_t r[4];
  int q = lane / 8;
  if constexpr (!TransB) {
    using L = SwizzledLayout<K, N, 16>;
    int k = kk * 16 + (q % 2) * 8 + lane % 8, n = n0 + (q / 2) * 8;
    ldmatrix<4, true>(r, B + L::offset(k, n));
  } else {
    using L = SwizzledLayout<N, K, 16>;
    int n = n0 + (q / 2) * 8 + lane % 8, k = kk * 16 + (q % 2) * 8;
    ldmatrix<4, false>(r, B + L::offset(n, k));
  }
  b0[0] = r[0], b0[1] = r[1], b1[0] = r[2], b1[1] = r[3];
}

// The B fragment of one n8 tile (a warp tile only 8 columns wide).
template <int K, int N, bool TransB, class T>
TL_DEVICE void load_b_single(const T* B, int kk, int n0, int lane, std::uint32_t (&b)[2]) {
  int q = (lane / 8) % 2;  // lanes 16..31 repeat 0..15: ldmatrix.x2 ignores their addresses
  if constexpr (!TransB) {
    using L = SwizzledLayout<K, N, 16>;
    ldmatrix<2, true>(b, B + L::offset(kk * 16 + q * 8 + lane % 8, n0));
  } else {
    using L = SwizzledLayout<N, K, 16>;
    ldmatrix<2, false>(b, B + L::offset(n0 + lane % 8, kk * 16 + q * 8));
  }
}

// C tiles (mi, ni..ni+1) += A[mi] * B for one k16 step; a lone last n8 tile when NT is odd.
template <int K, int N, bool TransB, int MT, int NT, class T, class Acc>
TL_DEVICE void mma_row_of_tiles(const T* B, int kk, int col0, int lane,
                                const std::uint32_t (&a)[MT][4], Acc* C) {
#pragma unroll
  for (int ni = 0; ni < NT; ni += 2) {
    if (ni + 1 < NT) {
      std::uint32_t b0[2], b1[2];
      load_b_pair<K, N, TransB>(B, kk, col0 + ni * 8, lane, b0, b1);
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) {
        mma_16816<T>(&C[(mi * NT + ni) * 4], a[mi], b0);
        mma_16816<T>(&C[(mi * NT + ni + 1) * 4], a[mi], b1);
      }
    } else {
      std::uint32_t b0[2];
      load_b_single<K, N, TransB>(B, kk, col0 + ni * 8, lane, b0);
#pragma unroll
      for (int mi = 0; mi < MT; ++mi) mma_16816<T>(&C[(mi * NT + ni) * 4], a[mi], b0);
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
  const int row0 = (warp / WN) * WTM, col0 = (warp % WN) * WTN;
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    std::uint32_t a[MT][4];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) {
      int q = lane / 8;
      if constexpr (!TransA) {
        using L = SwizzledLayout<M, K, 16>;
        int m = row0 + mi * 16 + (q % 2) * 8 + lane % 8, k = kk * 16 + (q / 2) * 8;
        ldmatrix<4, false>(a[mi], A + L::offset(m, k));
      } else {
        using L = SwizzledLayout<K, M, 16>;
        int k = kk * 16 + (q / 2) * 8 + lane % 8, m = row0 + mi * 16 + (q % 2) * 8;
        ldmatrix<4, true>(a[mi], A + L::offset(k, m));
      }
    }
    detail::mma_row_of_tiles<K, N, TransB, MT, NT, T>(B, kk, col0, lane, a, C);
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
  const int col0 = (warp % WN) * WTN;
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
    detail::mma_row_of_tiles<K, N, TransB, MT, NT, T>(B, kk, col0, lane, a, C);
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
