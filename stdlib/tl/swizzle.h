// tl/swizzle.h - the XOR-swizzled shared-memory layout of gemm operand tiles.
//
// A [Rows][Cols] tile is stored row-major with its 16-byte chunks permuted within each row:
// chunk' = chunk ^ ((row >> Shift) & Mask), Mask + 1 a power-of-two divisor of the chunk
// count so that the permutation stays inside the row. The key makes the 8 rows that one
// ldmatrix phase reads (same logical chunk) land in 8 distinct 16-byte bank groups.
//
// Plain C++ (no CUDA dependencies), so that tests/unit/TileLayoutTest.cpp can check that the
// compiler's layout inference (compiler/ir/TileLayout.cpp, SharedLayout::swizzled) and this
// device-side definition agree on every element.
#pragma once

#include "host_device.h"

namespace tl {

template <int Rows, int Cols, int ElemBits>
struct SwizzledLayout {
  static constexpr int kChunkElems = 128 / ElemBits;
  static constexpr int kRowBytes = Cols * ElemBits / 8;
  static constexpr int kChunks = (Cols * ElemBits % 128 == 0) ? kRowBytes / 16 : 0;
  // Chunks are permuted within groups of kGroup, the largest power of two (at most 8) that
  // divides the row's chunk count, so a chunk never leaves its row (rows of 12 chunks, a
  // 96-wide f16 tile, swizzle in groups of 4). Odd chunk counts are not swizzled.
  static constexpr int kGroup = kChunks == 0 ? 1
                                : kChunks % 8 == 0 ? 8
                                : kChunks % 4 == 0 ? 4
                                : kChunks % 2 == 0 ? 2
                                                   : 1;
  static constexpr int kMask = kGroup - 1;
  // A row of C chunks starts (C * row) % 8 chunks into the 32 banks, which repeats every
  // 8 / kGroup rows: the key skips past them.
  static constexpr int kShift = kGroup == 8 ? 0 : kGroup == 4 ? 1 : 2;
  static constexpr int kSize = Rows * Cols;

  // The XOR key of a row. It depends only on row % 8 (shift <= 2, mask <= 7), which is what
  // lets tl::gemm hoist address arithmetic out of its k loop.
  TL_HOST_DEVICE static constexpr int key(int row) { return (row >> kShift) & kMask; }

  TL_HOST_DEVICE static constexpr int offset(int row, int col) {
    if constexpr (kMask == 0) {
      return row * Cols + col;
    } else {
      return row * Cols + (((col / kChunkElems) ^ ((row >> kShift) & kMask)) * kChunkElems) +
             col % kChunkElems;
    }
  }
};

// The shared layout of Hopper wgmma operand tiles (tl/wgmma.h). The tensor core reads a
// swizzled tile whose rows are exactly one swizzle span (32, 64 or 128 bytes), so a
// [Rows][Cols] tile is cut into panels of one span along its contiguous dimension, each panel
// a [Rows][span] SwizzledLayout tile (whose XOR pattern is the hardware's 32B/64B/128B
// swizzle), panels one after another. The span is the widest of 128, 64 and 32 bytes that
// divides the row (a 96-wide f16 row is three 64-byte panels); rows of other lengths have no
// such layout. A tile of one panel is exactly SwizzledLayout<Rows, Cols>. The pattern
// repeats every 8 rows, so a tile must start 8 * span bytes aligned (1024 at most).
// compiler/ir/TileLayout.cpp (SharedLayout::wgmmaOperand) builds the same layout.
template <int Rows, int Cols, int ElemBits>
struct GmmaLayout {
  static constexpr int kRowBytes = Cols * ElemBits / 8;
  static constexpr int kSpanBytes = Cols * ElemBits % 8 != 0 ? 0
                                    : kRowBytes % 128 == 0      ? 128
                                    : kRowBytes % 64 == 0       ? 64
                                    : kRowBytes % 32 == 0       ? 32
                                                                : 0;
  static constexpr bool kValid = kSpanBytes != 0 && Rows % 8 == 0;
  static constexpr int kPanelCols = kSpanBytes == 0 ? Cols : kSpanBytes * 8 / ElemBits;
  static constexpr int kPanels = Cols / kPanelCols;
  static constexpr int kPanelElems = Rows * kPanelCols;
  using Panel = SwizzledLayout<Rows, kPanelCols, ElemBits>;
  static constexpr int kSize = Rows * Cols;

  TL_HOST_DEVICE static constexpr int offset(int row, int col) {
    return (col / kPanelCols) * kPanelElems + Panel::offset(row, col % kPanelCols);
  }
};

}  // namespace tl
