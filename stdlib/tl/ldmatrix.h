// tl/ldmatrix.h - warp-collective loads of 8x8 b16 matrices from shared memory (sm_75+).
//
// ldmatrix.sync.aligned.m8n8.x{1,2,4}{,.trans}.shared.b16 loads Num 8x8 matrices of 16-bit
// elements. All 32 lanes execute it together:
//   * addresses: lane 8 * m + r supplies the address of row r of matrix m (lanes 0-7 for x1,
//     0-15 for x2, all for x4; other lanes' addresses are ignored). A row is 16 contiguous,
//     16-byte aligned bytes; rows may lie anywhere in shared memory, which is what lets a
//     swizzled layout feed the tensor cores without bank conflicts.
//   * results: register m of lane l holds two elements of matrix m, packed low half first:
//       plain:  (row l / 4, col 2 * (l % 4)) and (row l / 4, col 2 * (l % 4) + 1)
//       .trans: (row 2 * (l % 4), col l / 4) and (row 2 * (l % 4) + 1, col l / 4)
//     The plain form is exactly the per-lane layout of mma.sync operands (tl/mma.h), so an
//     x4 load of a 16x16 row-major tile, where lane l points at row l % 16, column 8 * (l / 16),
//     yields the A fragment of m16n8k16 as is; .trans gives the B fragment from a [K][N] tile.
#pragma once

#include "common.h"
#include "memory.h"

#if TL_CUDA

namespace tl {

// The lane/element correspondence above as constexpr functions, for code generators and tests.
struct LdmatrixLayout {
  // Lane whose address is used for row `row` of matrix `matrix`.
  TL_HOST_DEVICE static constexpr int address_lane(int matrix, int row) { return 8 * matrix + row; }
  // Row and column (within its 8x8 matrix) of half `half` (0 = low 16 bits) of a lane's
  // register.
  TL_HOST_DEVICE static constexpr int row(int lane, int half, bool trans) {
    return trans ? 2 * (lane % 4) + half : lane / 4;
  }
  TL_HOST_DEVICE static constexpr int col(int lane, int half, bool trans) {
    return trans ? lane / 4 : 2 * (lane % 4) + half;
  }
};

namespace detail {

// Instruction selection; `addr` is a shared-window address (tl::smem_addr).
template <bool Trans>
TL_DEVICE void ldmatrix_x1(std::uint32_t (&r)[1], std::uint32_t addr) {
#if defined(TL_EMULATE)  // the CPU emulator (tl/emu/instructions.h)
  emu::ldmatrix<1, Trans>(r, addr);
#elif TL_ARCH_SM75
  if constexpr (Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
                 : "=r"(r[0]) : "r"(addr) : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
                 : "=r"(r[0]) : "r"(addr) : "memory");
  }
#else
  (void)r, (void)addr;
  tl::trap();
#endif
}

template <bool Trans>
TL_DEVICE void ldmatrix_x2(std::uint32_t (&r)[2], std::uint32_t addr) {
#if defined(TL_EMULATE)  // the CPU emulator (tl/emu/instructions.h)
  emu::ldmatrix<2, Trans>(r, addr);
#elif TL_ARCH_SM75
  if constexpr (Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
  }
#else
  (void)r, (void)addr;
  tl::trap();
#endif
}

template <bool Trans>
TL_DEVICE void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
#if defined(TL_EMULATE)  // the CPU emulator (tl/emu/instructions.h)
  emu::ldmatrix<4, Trans>(r, addr);
#elif TL_ARCH_SM75
  if constexpr (Trans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
  }
#else
  (void)r, (void)addr;
  tl::trap();
#endif
}

}  // namespace detail

// Loads Num (1, 2 or 4) matrices; `addr` is this lane's row address in the shared window.
template <int Num, bool Trans = false>
TL_DEVICE void ldmatrix(std::uint32_t (&r)[Num], std::uint32_t addr) {
  static_assert(Num == 1 || Num == 2 || Num == 4, "ldmatrix loads 1, 2 or 4 8x8 matrices");
  if constexpr (Num == 1) {
    detail::ldmatrix_x1<Trans>(r, addr);
  } else if constexpr (Num == 2) {
    detail::ldmatrix_x2<Trans>(r, addr);
  } else if constexpr (Num == 4) {
    detail::ldmatrix_x4<Trans>(r, addr);
  }
}

// The same from a generic pointer into shared memory.
template <int Num, bool Trans = false>
TL_DEVICE void ldmatrix(std::uint32_t (&r)[Num], const void* smem_row) {
  ldmatrix<Num, Trans>(r, smem_addr(smem_row));
}

// Named forms, as generated code spells them.
template <class Addr>
TL_DEVICE void ldmatrix_x1(std::uint32_t (&r)[1], Addr a) { ldmatrix<1, false>(r, a); }
template <class Addr>
TL_DEVICE void ldmatrix_x2(std::uint32_t (&r)[2], Addr a) { ldmatrix<2, false>(r, a); }
template <class Addr>
TL_DEVICE void ldmatrix_x4(std::uint32_t (&r)[4], Addr a) { ldmatrix<4, false>(r, a); }
template <class Addr>
TL_DEVICE void ldmatrix_x1_trans(std::uint32_t (&r)[1], Addr a) { ldmatrix<1, true>(r, a); }
template <class Addr>
TL_DEVICE void ldmatrix_x2_trans(std::uint32_t (&r)[2], Addr a) { ldmatrix<2, true>(r, a); }
template <class Addr>
TL_DEVICE void ldmatrix_x4_trans(std::uint32_t (&r)[4], Addr a) { ldmatrix<4, true>(r, a); }

}  // namespace tl

#endif  // TL_CUDA
