// tl/swizzle.h - the XOR-swizzled shared-memory layout of gemm operand tiles.
//
// A [Rows][Cols] tile is stored row-major with its 16-byte chunks permuted within each row:
// chunk' = chunk ^ ((row >> Shift) & Mask). With C chunks per row, 8 / C rows share one
// 128-byte span of the 32 banks, so the key skips past them; then the 8 rows that one
// ldmatrix phase reads (same logical chunk) land in 8 distinct 16-byte bank groups.
//
// Plain C++ (no CUDA dependencies), so that tests/unit/TileLayoutTest.cpp can check that the
// compiler's layout inference (compiler/ir/TileLayout.cpp, SharedLayout::swizzled) and this
// device-side definition agree on every element.
#pragma once

#ifndef TL_HOST_DEVICE
#if defined(__CUDACC__) || defined(__HIPCC__)
#define TL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TL_HOST_DEVICE inline
#endif
#endif

namespace tl {

template <int Rows, int Cols, int ElemBits>
struct SwizzledLayout {
  static constexpr int kChunkElems = 128 / ElemBits;
  static constexpr int kRowBytes = Cols * ElemBits / 8;
  static constexpr int kChunks = kRowBytes / 16;
  static constexpr int kMask = (kRowBytes % 16 != 0) ? 0
                               : kChunks >= 8        ? 7
                               : kChunks == 4        ? 3
                               : kChunks == 2        ? 1
                                                     : 0;
  static constexpr int kShift = kChunks >= 8 ? 0 : kChunks == 4 ? 1 : 2;
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

}  // namespace tl
