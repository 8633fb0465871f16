// tl/wgmma.h - Hopper warpgroup MMA (wgmma.mma_async, sm_90a).
//
//   D[64 x N] (+)= A[64 x 16] * B[16 x N] for the 128 threads of a warpgroup, A and B read
//   from shared memory through 64-bit matrix descriptors, D in registers; N from 8 to 256.
//
// Operand tiles in shared memory (PTX ISA, "Shared Memory Matrix Layout"): this header takes
// K-major tiles (A as [64 rows][K], B as [N rows][K]: K contiguous, "TN"), each row exactly
// one swizzle span long (32, 64 or 128 bytes: K = 16, 32 or 64 for 16-bit types), its 16-byte
// chunks permuted as tl/swizzle.h lays them out: for 128-byte rows chunk ^= r % 8, for
// 64-byte rows chunk ^= (r / 2) % 4, for 32-byte rows chunk ^= (r / 4) % 2. Those are the hardware's 128B/64B/32B swizzle modes when the tile
// starts at a multiple of 8 rows' bytes (1024, 512, 256), which the swizzle is defined on.
//
// Accumulator layout (PTX ISA, "Register Fragment D for wgmma .m64nNk16"): thread t of the
// warpgroup, warp w = t / 32, lane l = t % 32, holds for each 8-column block j (0 .. N/8-1)
//   d[4j + 0] = D(16w + l/4,     8j + 2(l%4))      d[4j + 1] = D(16w + l/4,     8j + 2(l%4) + 1)
//   d[4j + 2] = D(16w + l/4 + 8, 8j + 2(l%4))      d[4j + 3] = D(16w + l/4 + 8, 8j + 2(l%4) + 1)
// i.e. each warp holds 16 rows as mma.m16n8's C fragment, repeated over N. D is f32, or f16
// for f16 operands: the same elements, in pairs in N/4 32-bit registers
// (tl::detail::accum_registers).
//
// Protocol: registers of D written by ordinary code are published with fence() before the
// first mma; operands written to shared memory by ordinary stores need
// fence_proxy_async_shared() (after the barrier that makes them visible) before wgmma reads
// them; mma() calls issue asynchronously, commit_group() closes a group, wait_group<n>() waits
// until at most n groups are in flight, and D may be read only after that.
#pragma once

#include "common.h"
#include "dtypes.h"
#include "swizzle.h"

#include <cstdint>

#if TL_CUDA

namespace tl {
namespace wgmma {

// The descriptor's layout_type field (bits 62-63).
enum class Swizzle : int { None = 0, B128 = 1, B64 = 2, B32 = 3 };

// Bytes of one swizzled row (the swizzle span).
TL_HOST_DEVICE constexpr int swizzle_bytes(Swizzle s) {
  return s == Swizzle::B128 ? 128 : s == Swizzle::B64 ? 64 : s == Swizzle::B32 ? 32 : 16;
}

// The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
//   bits  0-13  start address >> 4
//   bits 16-29  leading dimension byte offset >> 4
//   bits 32-45  stride dimension byte offset >> 4
//   bits 49-51  matrix base offset (0: the tile starts on its swizzle pattern's boundary)
//   bits 62-63  swizzle mode
TL_HOST_DEVICE constexpr std::uint64_t make_descriptor(std::uint32_t smem_address,
                                                       std::uint32_t leading_bytes,
                                                       std::uint32_t stride_bytes, Swizzle s) {
  return (std::uint64_t((smem_address >> 4) & 0x3FFF)) |
         (std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16) |
         (std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32) |
         (std::uint64_t(static_cast<int>(s)) << 62);
}

// The descriptor of k-block `kb` (16 elements of 16-bit type: 32 bytes) of a K-major tile
// whose rows are one swizzle span: 8-row groups are 8 spans apart (the stride offset); the
// leading offset is not used by swizzled K-major layouts (1 by convention, as CUTLASS sets it).
TL_DEVICE std::uint64_t kmajor_descriptor(const void* tile, int kb, Swizzle s) {
  std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(tile));
  return make_descriptor(base + std::uint32_t(kb) * 32u, 16u, 8u * swizzle_bytes(s), s);
}

// MN-major tiles (B as [K rows][N], N contiguous; or A as [K][64]) in the 128-byte swizzle:
// the tile is stored as 1024-byte atoms of 8 K-rows x 64 elements (128 bytes, chunk ^= row % 8
// inside the atom), atoms of one 64-element MN block consecutive along K, MN blocks
// `mn_block_bytes` apart. The descriptor of k-block `kb` (16 K-rows: two atoms) starts kb * 2
// atoms in; its leading offset is the MN-block stride and its stride offset the 1024 bytes
// between 8-row K groups (CUTLASS's canonical ((8,8,m),(8,k)) MN-major SW128 layout).
TL_DEVICE std::uint64_t mnmajor_descriptor(const void* tile, int kb, std::uint32_t mn_block_bytes) {
  std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(tile));
  return make_descriptor(base + std::uint32_t(kb) * 2048u, mn_block_bytes, 1024u, Swizzle::B128);
}

TL_DEVICE void fence() {
#if TL_ARCH_SM90A
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

TL_DEVICE void commit_group() {
#if TL_ARCH_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

template <int InFlight>
TL_DEVICE void wait_group() {
#if TL_ARCH_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(InFlight) : "memory");
#endif
}

// Orders this thread's earlier ordinary shared-memory writes before later async-proxy reads
// (wgmma operands, bulk copies out of shared memory).
TL_DEVICE void fence_proxy_async_shared() {
#if TL_ARCH_SM90
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

}  // namespace wgmma
}  // namespace tl

#include "wgmma_ops.h"

namespace tl {
namespace wgmma {

// D (+)= A * B for one k-block: d is this thread's N/2 accumulators (layout above), f32 or
// f16; accumulate = false overwrites D. TransB: B's descriptor is MN-major (mnmajor_descriptor).
template <int N, class T, bool TransB = false, class Acc>
TL_DEVICE void mma(Acc (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b, bool accumulate) {
  static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma: N is a multiple of 8 up to 256");
  MmaSS<N, T, 0, TransB ? 1 : 0>::run(tl::detail::accum_registers(d), desc_a, desc_b, accumulate ? 1 : 0);
}

// ---- block-level GEMM over the warpgroups of a block (what tlc generates on sm_90a) ----------
//
//   gemm_ss: C[M, N] += A[M, K] * B[K, N], A and B in shared memory laid out by GmmaLayout
//   gemm_rs: the same with A in registers (the accumulator layout of an earlier gemm)
//
// The block's warpgroups form a WGM x WGN grid (warpgroup g owns rows (g / WGN) * M/WGM.. and
// columns (g % WGN) * N/WGN..); each issues, per k step of 32 bytes of each operand row, one
// m64nNIk16 (m64nNIk32 on 8-bit inputs) instruction per 64-row block and NI-column block of its
// tile. A is [M][K] (K-major) or, TransA, [K][M]
// (MN-major); B is [K][N] (MN-major) or, TransB, [N][K] (K-major): the tlc transposes name the
// storage, the instruction's imm-trans-a/b bits the major-ness. Accumulator register
// r = (mi * NT + ni) * 4 + e (NT = N / WGN / 8) holds C[row0 + 64 mi + Layout::row(t, e),
// col0 + 8 ni + Layout::col(t, e)] for thread t of its warpgroup: tlc's MmaC fragment over the
// wgmma atom (compiler/target/MmaAtoms.cpp).
//
// One call is one wgmma group: fence (registers written by ordinary code, the accumulator or a
// register A, are published to the tensor core), issue, commit, wait for it. Shared operands
// written by other threads must have been published to the async proxy
// (fence_proxy_async_shared before the barrier that orders them; tlc's SyncInsertion does it).
namespace detail {

// Keeps the compiler from moving accesses of an accumulator register across the asynchronous
// instructions that own it (CUTLASS's warpgroup_fence_operand); r: the accumulator's
// registers (tl::detail::accum_registers).
template <int R>
TL_DEVICE void fence_operands(float (&r)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
// 32-bit integer registers: f16x2 pairs (std::uint32_t) and s32 accumulators (int).
template <class I, int R, std::enable_if_t<is_one_of_v<I, std::uint32_t, int>, int> = 0>
TL_DEVICE void fence_operands(I (&r)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

template <int Span>
TL_HOST_DEVICE constexpr Swizzle swizzle_of() {
  return Span == 128 ? Swizzle::B128 : Span == 64 ? Swizzle::B64 : Swizzle::B32;
}

// A K-major operand tile [Rows][K] (A, or B when TransB): the descriptor of the 8-aligned
// rows from `row` on, at k step kb (32 bytes: 16 elements of 16 bits, 32 of 8; inside one panel).
template <int Rows, int K, class T>
struct KMajor {
  using L = GmmaLayout<Rows, K, 8 * sizeof(T)>;
  static_assert(L::kValid, "wgmma operand: rows a multiple of 32 bytes, 8-row multiples");
  static constexpr int kSpan = L::kSpanBytes;
  // Bytes from k step 0 to k step kb (a multiple of 16): a constant once kb is unrolled.
  TL_HOST_DEVICE static constexpr int kstep_bytes(int kb) {
    return (kb * 32 / kSpan) * L::kPanelElems * int(sizeof(T)) + (kb * 32) % kSpan;
  }
  TL_HOST_DEVICE static constexpr std::uint64_t desc(std::uint32_t base, int row, int kb) {
    return make_descriptor(base + std::uint32_t(row * kSpan + kstep_bytes(kb)), 16u, 8u * kSpan,
                           swizzle_of<kSpan>());
  }
};

// An MN-major operand tile [K][MN] (B, or A when TransA): the descriptor of the columns from
// `col` (8-aligned) on at k step kb (16 rows). The leading offset is the stride between
// panels (span-wide MN blocks), the stride offset the 8 * span bytes between 8-row k groups.
template <int K, int MN, class T>
struct MNMajor {
  using L = GmmaLayout<K, MN, 8 * sizeof(T)>;
  static_assert(L::kValid && K % 16 == 0, "wgmma operand: rows a multiple of 32 bytes, 16-row multiples");
  static constexpr int kSpan = L::kSpanBytes;
  TL_HOST_DEVICE static constexpr int kstep_bytes(int kb) { return kb * 16 * kSpan; }
  TL_HOST_DEVICE static constexpr std::uint64_t desc(std::uint32_t base, int col, int kb) {
    std::uint32_t addr = base + std::uint32_t((col / L::kPanelCols) * L::kPanelElems * int(sizeof(T)) +
                                              (col % L::kPanelCols) * int(sizeof(T)) + kstep_bytes(kb));
    return make_descriptor(addr, std::uint32_t(L::kPanelElems * sizeof(T)), 8u * kSpan, swizzle_of<kSpan>());
  }
};

// A descriptor moved `bytes` (a multiple of 16) further into its tile. The start address is
// the low 14 bits of the first word and every tile ends inside the 228 KiB of shared memory
// (start < 2^14 in 16-byte units), so the add stays inside the field; only the low word
// changes. gemm_ss and gemm_rs build one descriptor per 64-row or NI-column block and advance
// it by a constant per k step: one add per instruction instead of the address arithmetic and
// masking of make_descriptor (ALU work that competed with the softmax around the gemms).
TL_HOST_DEVICE constexpr std::uint64_t advance(std::uint64_t desc, int bytes) {
  return (desc & 0xFFFFFFFF00000000ull) | std::uint32_t(std::uint32_t(desc) + std::uint32_t(bytes >> 4));
}

// One wgmma group: registers written by ordinary code (the accumulator, a register A) are
// published before its first instruction; after its last, the group is committed and at most
// `Pending` groups are left running.
template <class Acc, int R>
TL_DEVICE void open_group(Acc (&c)[R]) {
  fence_operands(tl::detail::accum_registers(c));
  fence();
}

template <int Pending, class Acc, int R>
TL_DEVICE void close_group(Acc (&c)[R]) {
  commit_group();
  wait_group<Pending>();
  fence_operands(tl::detail::accum_registers(c));
}

// The registers of one m64nNIk16 instruction's D: NI / 2 accumulator elements from `first`.
template <int NI, class Acc, int R>
TL_DEVICE tl::detail::accum_registers_t<Acc, NI / 2>& slice(Acc (&c)[R], int first) {
  return tl::detail::accum_registers(*reinterpret_cast<Acc (*)[NI / 2]>(&c[first]));
}

TL_DEVICE std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace detail

namespace detail {

// What gemm_ss and gemm_rs share: the split of the block's tile over warpgroups, the checks
// of the shapes the compiler chose, and B's descriptors.
template <int M, int N, int K, int WGM, int WGN, int NI, bool TransB, class T, class Acc, int R>
struct BlockTiling {
  static constexpr bool kEightBit = is_one_of_v<T, f8e4m3, f8e5m2, std::int8_t>;
  static_assert(is_one_of_v<T, f16, bf16> || kEightBit, "tl::wgmma: inputs must be f16, bf16, f8e4m3, f8e5m2 or i8");
  static_assert(kEightBit ? (std::is_same_v<T, std::int8_t> ? std::is_same_v<Acc, int> : std::is_same_v<Acc, float>)
                          : std::is_same_v<Acc, float> || (std::is_same_v<Acc, f16> && std::is_same_v<T, f16>),
                "tl::wgmma: the accumulator must be f32 (f16 also for f16 inputs; i32 for i8 inputs)");
  static_assert(!kEightBit || TransB, "tl::wgmma: 8-bit B is read K-major only ([N, K], transpose_B)");
  // Elements of one instruction's K: 32 bytes of each operand row (k16 for 16-bit inputs, k32 for 8-bit).
  static constexpr int KI = 32 / int(sizeof(T));
  static constexpr int WTM = M / WGM, WTN = N / WGN, MT = WTM / 64, NT = WTN / 8;
  static_assert(WTM % 64 == 0 && WTN % NI == 0 && NI % 8 == 0 && NI <= 256 && K % KI == 0,
                "tl::wgmma: tile shape");
  static_assert(R == MT * NT * 4, "tl::wgmma: accumulator size does not match the warpgroup grid");

  // The first accumulator register of the instruction (mi, nb): NI / 2 consecutive ones.
  TL_HOST_DEVICE static constexpr int first_register(int mi, int nb) { return (mi * NT + nb * (NI / 8)) * 4; }

  // `if constexpr`: only the operand's own major-ness is instantiated (an MN-major 8-bit tile
  // of 16 columns has no wgmma layout, and its static_assert would fire).
  TL_DEVICE static std::uint64_t b_desc(std::uint32_t base, int col, int kb) {
    if constexpr (TransB)
      return KMajor<N, K, T>::desc(base, col, kb);
    else
      return MNMajor<K, N, T>::desc(base, col, kb);
  }
  TL_HOST_DEVICE static constexpr int b_kstep_bytes(int kb) {
    if constexpr (TransB)
      return KMajor<N, K, T>::kstep_bytes(kb);
    else
      return MNMajor<K, N, T>::kstep_bytes(kb);
  }
};

}  // namespace detail

// NI: the N of one instruction (a multiple of 8 up to 256 dividing N / WGN); an MN-major B
// instruction stays inside one panel or starts at a panel boundary (the compiler chooses NI so).
// Pending: wgmma groups left in flight on return (0: this call's group has completed; 1: it
// may still run, the previous call's has completed). A caller that leaves groups in flight
// keeps the operand tiles they read intact and calls drain(C) before C is read.
// `thread` numbers the threads that share the tile from 0 (threadIdx.x, or the consumers'
// own numbering in a warp-specialized kernel).
template <int M, int N, int K, int WGM, int WGN, int NI, bool TransA, bool TransB, int Pending = 0,
          class T, class Acc, int R>
TL_DEVICE void gemm_ss(const T* A, const T* B, Acc (&C)[R], int thread, bool overwrite = false) {
  using Tiling = detail::BlockTiling<M, N, K, WGM, WGN, NI, TransB, T, Acc, R>;
  const int wg = thread / 128;
  const int row0 = (wg / WGN) * Tiling::WTM, col0 = (wg % WGN) * Tiling::WTN;
  const std::uint32_t a_base = detail::smem_address(A), b_base = detail::smem_address(B);
  static_assert(!Tiling::kEightBit || !TransA, "tl::wgmma: 8-bit A is read K-major only ([M, K])");
  using AMajor = std::conditional_t<TransA, detail::MNMajor<K, M, T>, detail::KMajor<M, K, T>>;
  constexpr int NB = Tiling::WTN / NI;
  // k step 0's descriptor of each 64-row block of A and NI-column block of B; each k step adds
  // a constant (detail::advance).
  std::uint64_t da0[Tiling::MT], db0[NB];
#pragma unroll
  for (int mi = 0; mi < Tiling::MT; ++mi) da0[mi] = AMajor::desc(a_base, row0 + 64 * mi, 0);
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) db0[nb] = Tiling::b_desc(b_base, col0 + NI * nb, 0);
  detail::open_group(C);
#pragma unroll
  for (int kb = 0; kb < K / Tiling::KI; ++kb) {
#pragma unroll
    for (int mi = 0; mi < Tiling::MT; ++mi) {
      const std::uint64_t da = detail::advance(da0[mi], AMajor::kstep_bytes(kb));
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
        MmaSS<NI, T, TransA ? 1 : 0, TransB ? 0 : 1>::run(
            detail::slice<NI>(C, Tiling::first_register(mi, nb)), da,
            detail::advance(db0[nb], Tiling::b_kstep_bytes(kb)), (overwrite && kb == 0) ? 0 : 1);
    }
  }
  detail::close_group<Pending>(C);
}

template <int M, int N, int K, int WGM, int WGN, int NI, bool TransA, bool TransB, int Pending = 0,
          class T, class Acc, int R>
TL_DEVICE void gemm_ss(const T* A, const T* B, Acc (&C)[R]) {
  gemm_ss<M, N, K, WGM, WGN, NI, TransA, TransB, Pending>(A, B, C, static_cast<int>(threadIdx.x));
}

// C = A @ B where `value` (the first k step's instructions ignore C's registers: no loop of
// ordinary code writes them, which is what clear_accum and a mask that is 0 on the whole tile
// become), C += A @ B otherwise. A run-time value: one predicate per instruction.
struct Overwrite {
  bool value;
};

// The accumulator's values are dead from here on (a gemm that overwrites it comes next): no
// instruction, but the registers' earlier values need not be kept alive until that gemm (they
// would be, since its asm reads them), which leaves the register allocator free in between.
template <class Acc, int R>
TL_DEVICE void discard(Acc (&C)[R]) {
  auto& regs = tl::detail::accum_registers(C);
#pragma unroll
  for (int i = 0; i < int(sizeof(regs) / sizeof(regs[0])); ++i) {
    if constexpr (std::is_same_v<std::remove_reference_t<decltype(regs[0])>, float>)
      asm volatile("" : "=f"(regs[i]));
    else
      asm volatile("" : "=r"(regs[i]));
  }
}

template <int M, int N, int K, int WGM, int WGN, int NI, bool TransA, bool TransB, int Pending = 0,
          class T, class Acc, int R>
TL_DEVICE void gemm_ss(const T* A, const T* B, Acc (&C)[R], Overwrite overwrite) {
  gemm_ss<M, N, K, WGM, WGN, NI, TransA, TransB, Pending>(A, B, C, static_cast<int>(threadIdx.x),
                                                          overwrite.value);
}

// Waits for the wgmma groups of this thread but the `Depth` most recent ones (those issued
// after C's group, which may run on); C may then be read and written.
template <int Depth = 0, class Acc, int R>
TL_DEVICE void drain(Acc (&C)[R]) {
  wait_group<Depth>();
  detail::fence_operands(tl::detail::accum_registers(C));
}

// A in registers: RA = MT * (K / 8) * 4 elements in the MmaC layout of an [M, K] tile over
// the same warpgroup rows (WGN == 1): the 8 elements of k step kb of row block mi are
// registers (mi * K/8 + 2 kb) * 4 .. + 7, in the order of the instruction's A fragment.
// Pending as for gemm_ss; the caller leaves A's registers alone until C is drained.
template <int M, int N, int K, int WGM, int WGN, int NI, bool TransB, int Pending = 0, class T, int RA, class Acc,
          int R>
TL_DEVICE void gemm_rs(const T (&A)[RA], const T* B, Acc (&C)[R], Overwrite overwrite = Overwrite{false}) {
  using Tiling = detail::BlockTiling<M, N, K, WGM, WGN, NI, TransB, T, Acc, R>;
  static_assert(!Tiling::kEightBit, "tl::wgmma::gemm_rs: A in registers is for 16-bit inputs");
  constexpr int KT8 = K / 8;
  static_assert(WGN == 1, "tl::wgmma::gemm_rs: every warpgroup owns whole rows of A");
  static_assert(RA == Tiling::MT * KT8 * 4, "tl::wgmma::gemm_rs: A fragment size does not match");
  const std::uint32_t b_base = detail::smem_address(B);
  // Every A fragment packed before the first wgmma: registers the asynchronous instructions
  // read are not written between them (ptxas would otherwise wait for the earlier ones).
  std::uint32_t a[K / 16][Tiling::MT][4];
#pragma unroll
  for (int kb = 0; kb < K / 16; ++kb)
#pragma unroll
    for (int mi = 0; mi < Tiling::MT; ++mi)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const T* pair = &A[(mi * KT8 + 2 * kb) * 4 + 2 * j];
        a[kb][mi][j] = tl::detail::pack2(pair[0], pair[1]);
      }
  constexpr int NB = Tiling::WTN / NI;
  std::uint64_t db0[NB];
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) db0[nb] = Tiling::b_desc(b_base, NI * nb, 0);
  detail::open_group(C);
#pragma unroll
  for (int kb = 0; kb < K / 16; ++kb) {
#pragma unroll
    for (int mi = 0; mi < Tiling::MT; ++mi) {
#pragma unroll
      for (int nb = 0; nb < NB; ++nb)
        MmaRS<NI, T, TransB ? 0 : 1>::run(detail::slice<NI>(C, Tiling::first_register(mi, nb)),
                                         a[kb][mi], detail::advance(db0[nb], Tiling::b_kstep_bytes(kb)),
                                         (overwrite.value && kb == 0) ? 0 : 1);
    }
  }
  detail::close_group<Pending>(C);
}

// The accumulator layout above as functions of (thread, register), for code and tests.
struct Layout {
  TL_HOST_DEVICE static constexpr int row(int thread, int r) {
    return 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((r / 2) % 2);
  }
  TL_HOST_DEVICE static constexpr int col(int thread, int r) {
    return 8 * (r / 4) + 2 * (thread % 4) + r % 2;
  }
};

}  // namespace wgmma
}  // namespace tl

#endif  // TL_CUDA
