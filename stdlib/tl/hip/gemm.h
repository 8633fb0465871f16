// tl/hip/gemm.h - block-level tile GEMM on the CDNA2/3 matrix cores (MFMA): the HIP half of
// tl/gemm.h, with the same calls and one more template argument, the MFMA's size.
//
//   gemm_ss<M, N, K, WM, WN, TransA, TransB, Size>(A, B, C): C[M, N] += A[M, K] * B[K, N], A and
//       B tiles in shared memory (LDS)
//   gemm_rs<M, N, K, WM, WN, TransB, Size>(A, B, C): the same with A in registers, in the
//       accumulator layout of an earlier gemm (attention's P @ V)
//   gemm_sr<M, N, K, WM, WN, TransA, Size>(A, B, C): B in registers, B^T [N, K] in the
//       accumulator layout of an [N, K] tile; gemm_rr<M, N, K, WM, WN, Size>(A, B, C): both
//
// Size 32 issues v_mfma_f32_32x32x8{f16,bf16_1k}, size 16 v_mfma_f32_16x16x16{f16,bf16_1k}
// (bf16 "_1k" forms: gfx90a and later), f32 accumulators; on fp8 inputs (CDNA3, gfx940+)
// v_mfma_f32_32x32x16_{fp8_fp8,bf8_bf8} and v_mfma_f32_16x16x32_{fp8_fp8,bf8_bf8} (tl::f8e4m3
// and f8e5m2 are the FNUZ formats there: tl/fp8_fnuz.h). AMD CDNA3 ISA, section 7.1: one wave
// computes D[i][j] = sum_k SrcA[i][k] SrcB[k][j] + C[i][j]; lane l holds P items per operand
// (P = 4 16-bit or 8 fp8 items), SrcA[l % S][P (l / S) + v] and SrcB[P (l / S) + v][l % S]
// (v < P), and D[8 (v / 4) + 4 (l / 32) + v % 4][l % 32] (S = 32, v < 16) or
// D[4 (l / 16) + v][l % 16] (S = 16, v < 4), whatever the input type.
// tlc issues it as D = C^T (SrcA = B^T, SrcB = A^T), so that the accumulator's rows lie along
// lanes (compiler/target/MmaAtoms.cpp, the atom's Fragments): for S = 32, register
// r = (mi * NT + ni) * 16 + v of lane l holds C[wr*WTM + mi*32 + l % 32,
// wc*WTN + ni*32 + 8 (v / 4) + 4 (l / 32) + v % 4]; for S = 16, r = (mi * NT + ni) * 4 + v holds
// C[wr*WTM + mi*16 + l % 16, wc*WTN + ni*16 + 4 (l / 16) + v]. Waves form a WM x WN grid (wave w
// owns rows (w / WN) * WTM.. and columns (w % WN) * WTN.., WTM = M / WM, WTN = N / WN).
//
// Operands: each lane reads P consecutive K elements (8 bytes) of one row of A (one column of
// B) per instruction. A is stored [M][K] ([K][M] when TransA), B [K][N] ([N][K] when TransB),
// in tl::SwizzledLayout (16-byte chunks XOR-permuted per row), where a K-contiguous run of P
// elements starting at a multiple of P stays inside one chunk: one 8-byte LDS read
// (ds_read_b64); so is a run of tl::mfma::XorUnits, the swizzle of 8-byte units tlc chooses
// where the 16-byte one has LDS bank conflicts. Operands whose K is not contiguous, and
// operands in an annotated layout (offset functor), are read element by element.
#pragma once

#include "../common.h"
#include "../gemm.h"  // its block rasterization (swizzle_blocks, swizzled_coords) serves HIP too
#include "../swizzle.h"

#if TL_HIP
namespace tl {

// A gemm operand in its default layout, tl::SwizzledLayout; the other choice is a functor
// (int row, int col) -> element offset, for annotated layouts (as in tl/gemm.h).
struct SwizzledOperand {};

namespace mfma {

#if defined(TL_EMULATE)
// The CPU emulator (tl/emu/mfma.h) builds this with a host compiler: GCC vectors, and the f16
// operand as its bits, since host compilers have no vector of _Float16.
using half4 = std::uint16_t __attribute__((vector_size(8)));
using short4 = short __attribute__((vector_size(8)));
using u16x4 = std::uint16_t __attribute__((vector_size(8)));
using u8x8 = std::uint8_t __attribute__((vector_size(8)));
using float4 = float __attribute__((vector_size(16)));
using float16 = float __attribute__((vector_size(64)));
#else
using half4 = _Float16 __attribute__((ext_vector_type(4)));
using short4 = short __attribute__((ext_vector_type(4)));
using u16x4 = std::uint16_t __attribute__((ext_vector_type(4)));
using u8x8 = std::uint8_t __attribute__((ext_vector_type(8)));
using float4 = float __attribute__((ext_vector_type(4)));
using float16 = float __attribute__((ext_vector_type(16)));
#endif

// The instruction of size S on input type T: K per instruction, accumulator registers per
// lane, and one issue on the registers at c (SrcA = b, SrcB = a: D = C^T, see above).
template <int S, class T>
struct Atom {
  static_assert(S == 32 || S == 16, "tl::gemm (HIP): the MFMA size is 32 or 16");
  static_assert(is_one_of_v<T, f16, bf16, f8e4m3, f8e5m2>, "tl::gemm (HIP): inputs must be f16, bf16 or fp8");
  static constexpr bool kFp8 = is_one_of_v<T, f8e4m3, f8e5m2>;
  // Elements per lane and operand: 8 bytes of K (4 16-bit or 8 fp8 elements).
  static constexpr int kPerLane = kFp8 ? 8 : 4;
  static constexpr int kK = 64 * kPerLane / S;  // 64 lanes of kPerLane elements over S rows
  static constexpr int kRegs = S * S / 64;
  // kPerLane operand elements as their bits, element 0 in the low bits.
  using Bits = std::conditional_t<kFp8, std::uint8_t, std::uint16_t>;
  using Operand = std::conditional_t<kFp8, u8x8, u16x4>;

  TL_DEVICE static void run(float* c, Operand a, Operand b) {
    if constexpr (S == 32) {
      float16 acc;
#pragma unroll
      for (int v = 0; v < 16; ++v) acc[v] = c[v];
      if constexpr (std::is_same_v<T, f16>)
        acc = __builtin_amdgcn_mfma_f32_32x32x8f16(bit_cast<half4>(b), bit_cast<half4>(a), acc, 0, 0, 0);
      else if constexpr (std::is_same_v<T, bf16>)
        acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(bit_cast<short4>(b), bit_cast<short4>(a), acc, 0, 0, 0);
      else if constexpr (std::is_same_v<T, f8e4m3>)
        acc = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(bit_cast<long>(b), bit_cast<long>(a), acc, 0, 0, 0);
      else
        acc = __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(bit_cast<long>(b), bit_cast<long>(a), acc, 0, 0, 0);
#pragma unroll
      for (int v = 0; v < 16; ++v) c[v] = acc[v];
    } else {
      float4 acc;
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[v] = c[v];
      if constexpr (std::is_same_v<T, f16>)
        acc = __builtin_amdgcn_mfma_f32_16x16x16f16(bit_cast<half4>(b), bit_cast<half4>(a), acc, 0, 0, 0);
      else if constexpr (std::is_same_v<T, bf16>)
        acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(bit_cast<short4>(b), bit_cast<short4>(a), acc, 0, 0, 0);
      else if constexpr (std::is_same_v<T, f8e4m3>)
        acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(bit_cast<long>(b), bit_cast<long>(a), acc, 0, 0, 0);
      else
        acc = __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(bit_cast<long>(b), bit_cast<long>(a), acc, 0, 0, 0);
#pragma unroll
      for (int v = 0; v < 4; ++v) c[v] = acc[v];
    }
  }
};

// tl::SwizzledLayout<Rows, Cols, ElemBits> as an offset functor.
template <int Rows, int Cols, int ElemBits>
struct SwizzledOffset {
  TL_DEVICE int operator()(int row, int col) const { return SwizzledLayout<Rows, Cols, ElemBits>::offset(row, col); }
};

// The XOR swizzle of Unit-element units that tlc chooses for an operand when the bank
// analysis finds the 16-byte swizzle conflicting under the lanes' 8-byte reads
// (compiler/ir/LdsBanks.h): unit ^= (row >> Shift) & Mask in rows of Cols elements, and where
// Flip > 0 (rows of 256 bytes or more) also ^= (unit >> Flip) & 1. Runs of kRun columns stay
// contiguous.
template <int Cols, int Unit, int Shift, int Mask, int Flip = 0>
struct XorUnits {
  static constexpr int kRun = Unit;
  TL_DEVICE int operator()(int row, int col) const {
    const int unit = col / Unit;
    const int flip = Flip > 0 ? (unit >> Flip) & 1 : 0;
    return row * Cols + ((unit ^ ((row >> Shift) & Mask) ^ flip) * Unit) + col % Unit;
  }
};

// The columns an offset functor keeps contiguous (its kRun, else 1).
template <class Off, class = void>
struct RunOf {
  static constexpr int value = 1;
};
template <class Off>
struct RunOf<Off, std::void_t<decltype(Off::kRun)>> {
  static constexpr int value = Off::kRun;
};

// The P = A::kPerLane operand elements (mn, k..k + P - 1) of a tile stored [MN][K] (KMajor)
// or [K][MN], whose element (row, col) of the stored tile is at off(row, col). A K-major run in
// a layout that keeps it (the swizzles) is one 8-byte read; everything else is read element by
// element.
template <class A, bool KMajor, bool Swizzled, class T, class Off>
TL_DEVICE typename A::Operand load_run(const T* tile, Off off, int mn, int k) {
  constexpr int P = A::kPerLane;
  const typename A::Bits* bits = reinterpret_cast<const typename A::Bits*>(tile);
  if constexpr (KMajor && (Swizzled || RunOf<Off>::value % P == 0)) {
    return *reinterpret_cast<const typename A::Operand*>(bits + off(mn, k));
  } else {
    typename A::Operand r;
#pragma unroll
    for (int i = 0; i < P; ++i) r[i] = bits[KMajor ? off(mn, k + i) : off(k + i, mn)];
    return r;
  }
}

// An operand in registers, A or B^T ([R, K]) in the accumulator layout of the wave's rows: the
// 4 elements of K step kk of tile ri (see gemm_rs), as their bits. The accumulator's registers
// run along its columns as both SrcA's (B^T) and SrcB's (A^T) K do.
template <int S, int K, class T, int R>
TL_DEVICE typename Atom<S, T>::Operand register_run(const T (&regs)[R], int kk, int ri) {
  using A = Atom<S, T>;
  constexpr int kStepsPerTile = S / A::kK;
  const T* run = &regs[(ri * (K / S) + kk / kStepsPerTile) * A::kRegs + 4 * (kk % kStepsPerTile)];
  typename A::Operand r;
#pragma unroll
  for (int i = 0; i < 4; ++i) r[i] = bit_cast<std::uint16_t>(run[i]);
  return r;
}

// One k step of a wave: every C tile (mi, ni) from the operands of its rows and columns.
template <class A, int MT, int NT>
TL_DEVICE void step(float* C, const typename A::Operand (&a)[MT], const typename A::Operand (&b)[NT]) {
#pragma unroll
  for (int mi = 0; mi < MT; ++mi)
#pragma unroll
    for (int ni = 0; ni < NT; ++ni) A::run(&C[(mi * NT + ni) * A::kRegs], a[mi], b[ni]);
}

// The default functor of an operand of T stored [Rows][Cols], or the caller's.
template <int Rows, int Cols, class T, class Off>
TL_DEVICE auto offset_of(Off off) {
  if constexpr (std::is_same_v<Off, SwizzledOperand>)
    return SwizzledOffset<Rows, Cols, 8 * sizeof(T)>{};
  else
    return off;
}

}  // namespace mfma

template <int M, int N, int K, int WM, int WN, bool TransA, bool TransB, int S, class T, class Acc, int R,
          class OffA = SwizzledOperand, class OffB = SwizzledOperand>
TL_DEVICE void gemm_ss(const T* A, const T* B, Acc (&C)[R], OffA offA = {}, OffB offB = {}) {
  using Atom = mfma::Atom<S, T>;
  static_assert(std::is_same_v<Acc, float>, "tl::gemm (HIP): MFMA accumulates in f32");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / S, NT = WTN / S;
  static_assert(WTM % S == 0 && WTN % S == 0 && K % Atom::kK == 0, "tl::gemm_ss (HIP): tile shape");
  static_assert(R == MT * NT * Atom::kRegs, "tl::gemm_ss (HIP): accumulator size does not match the wave grid");
  const int lane = threadIdx.x % 64, wave = threadIdx.x / 64;
  const int row0 = (wave / WN) * WTM + lane % S, col0 = (wave % WN) * WTN + lane % S,
            k0 = (lane / S) * Atom::kPerLane;
  // Stored [M][K] or [K][M], [K][N] or [N][K].
  const auto oa = mfma::offset_of<TransA ? K : M, TransA ? M : K, T>(offA);
  const auto ob = mfma::offset_of<TransB ? N : K, TransB ? K : N, T>(offB);
  constexpr bool kSwA = std::is_same_v<OffA, SwizzledOperand>, kSwB = std::is_same_v<OffB, SwizzledOperand>;
#pragma unroll
  for (int kk = 0; kk < K / Atom::kK; ++kk) {
    const int k = kk * Atom::kK + k0;
    typename Atom::Operand a[MT], b[NT];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) a[mi] = mfma::load_run<Atom, !TransA, kSwA>(A, oa, row0 + mi * S, k);
#pragma unroll
    for (int ni = 0; ni < NT; ++ni) b[ni] = mfma::load_run<Atom, TransB, kSwB>(B, ob, col0 + ni * S, k);
    mfma::step<Atom>(C, a, b);
  }
}

// A in registers: RA = MT * (K / S) * kRegs elements in the accumulator layout of an [M, K]
// tile over WM x 1 waves (every wave owns whole rows). K step kk of A is registers
// (mi * K/S + kk / (S / kK)) * kRegs + 4 (kk % (S / kK)) + 0..3: the accumulator's registers
// run along its columns exactly as the SrcB operand's K does.
template <int M, int N, int K, int WM, int WN, bool TransB, int S, class T, class Acc, int RA, int R,
          class OffB = SwizzledOperand>
TL_DEVICE void gemm_rs(const T (&A)[RA], const T* B, Acc (&C)[R], OffB offB = {}) {
  using Atom = mfma::Atom<S, T>;
  static_assert(std::is_same_v<Acc, float>, "tl::gemm (HIP): MFMA accumulates f16/bf16 inputs in f32");
  static_assert(!Atom::kFp8, "tl::gemm_rs (HIP): A in registers takes f16 or bf16");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / S, NT = WTN / S, KT = K / S;
  static_assert(WTM % S == 0 && WTN % S == 0 && K % S == 0, "tl::gemm_rs (HIP): tile shape");
  static_assert(RA == MT * KT * Atom::kRegs, "tl::gemm_rs (HIP): A fragment size does not match");
  static_assert(R == MT * NT * Atom::kRegs, "tl::gemm_rs (HIP): accumulator size does not match the wave grid");
  const int lane = threadIdx.x % 64, wave = threadIdx.x / 64;
  const int col0 = (wave % WN) * WTN + lane % S, k0 = (lane / S) * 4;
  const auto ob = mfma::offset_of<TransB ? N : K, TransB ? K : N, T>(offB);
  constexpr bool kSwB = std::is_same_v<OffB, SwizzledOperand>;
#pragma unroll
  for (int kk = 0; kk < K / Atom::kK; ++kk) {
    typename Atom::Operand a[MT], b[NT];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) a[mi] = mfma::register_run<S, K>(A, kk, mi);
#pragma unroll
    for (int ni = 0; ni < NT; ++ni)
      b[ni] = mfma::load_run<Atom, TransB, kSwB>(B, ob, col0 + ni * S, kk * Atom::kK + k0);
    mfma::step<Atom>(C, a, b);
  }
}

// B in registers: RB = NT * (K / S) * kRegs elements, B^T [N, K] (transpose_B) in the
// accumulator layout of an [N, K] tile over WN x 1 waves: this wave's WTN columns, which tlc's
// layout gives only where every wave owns whole columns (WM == 1: policy full_col).
template <int M, int N, int K, int WM, int WN, bool TransA, int S, class T, class Acc, int RB, int R,
          class OffA = SwizzledOperand>
TL_DEVICE void gemm_sr(const T* A, const T (&B)[RB], Acc (&C)[R], OffA offA = {}) {
  using Atom = mfma::Atom<S, T>;
  static_assert(std::is_same_v<Acc, float>, "tl::gemm (HIP): MFMA accumulates f16/bf16 inputs in f32");
  static_assert(!Atom::kFp8, "tl::gemm_sr (HIP): B in registers takes f16 or bf16");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / S, NT = WTN / S, KT = K / S;
  static_assert(WTM % S == 0 && WTN % S == 0 && K % S == 0, "tl::gemm_sr (HIP): tile shape");
  static_assert(RB == NT * KT * Atom::kRegs, "tl::gemm_sr (HIP): B fragment size does not match");
  static_assert(R == MT * NT * Atom::kRegs, "tl::gemm_sr (HIP): accumulator size does not match the wave grid");
  const int lane = threadIdx.x % 64, wave = threadIdx.x / 64;
  const int row0 = (wave / WN) * WTM + lane % S, k0 = (lane / S) * 4;
  const auto oa = mfma::offset_of<TransA ? K : M, TransA ? M : K, T>(offA);
  constexpr bool kSwA = std::is_same_v<OffA, SwizzledOperand>;
#pragma unroll
  for (int kk = 0; kk < K / Atom::kK; ++kk) {
    typename Atom::Operand a[MT], b[NT];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi)
      a[mi] = mfma::load_run<Atom, !TransA, kSwA>(A, oa, row0 + mi * S, kk * Atom::kK + k0);
#pragma unroll
    for (int ni = 0; ni < NT; ++ni) b[ni] = mfma::register_run<S, K>(B, kk, ni);
    mfma::step<Atom>(C, a, b);
  }
}

// A and B in registers (gemm_rs's A, gemm_sr's B); tlc gives both layouts only to one wave.
template <int M, int N, int K, int WM, int WN, int S, class T, class Acc, int RA, int RB, int R>
TL_DEVICE void gemm_rr(const T (&A)[RA], const T (&B)[RB], Acc (&C)[R]) {
  using Atom = mfma::Atom<S, T>;
  static_assert(std::is_same_v<Acc, float>, "tl::gemm (HIP): MFMA accumulates f16/bf16 inputs in f32");
  static_assert(!Atom::kFp8, "tl::gemm_rr (HIP): operands in registers take f16 or bf16");
  constexpr int WTM = M / WM, WTN = N / WN, MT = WTM / S, NT = WTN / S, KT = K / S;
  static_assert(WTM % S == 0 && WTN % S == 0 && K % S == 0, "tl::gemm_rr (HIP): tile shape");
  static_assert(RA == MT * KT * Atom::kRegs, "tl::gemm_rr (HIP): A fragment size does not match");
  static_assert(RB == NT * KT * Atom::kRegs, "tl::gemm_rr (HIP): B fragment size does not match");
  static_assert(R == MT * NT * Atom::kRegs, "tl::gemm_rr (HIP): accumulator size does not match the wave grid");
#pragma unroll
  for (int kk = 0; kk < K / Atom::kK; ++kk) {
    typename Atom::Operand a[MT], b[NT];
#pragma unroll
    for (int mi = 0; mi < MT; ++mi) a[mi] = mfma::register_run<S, K>(A, kk, mi);
#pragma unroll
    for (int ni = 0; ni < NT; ++ni) b[ni] = mfma::register_run<S, K>(B, kk, ni);
    mfma::step<Atom>(C, a, b);
  }
}

}  // namespace tl
#endif
