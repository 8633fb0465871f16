// Memory layouts later stages ask for by name: dense row-/column-major, strided and CuTe
// shape:stride layouts, padded rows, and the XOR-swizzled shared-memory layouts that make
// ldmatrix and cp.async traffic bank-conflict free.
#pragma once

#include "Layout.h"

namespace tlc {

// Row-major (C order) addresses of `shape`: the last index is contiguous.
Layout makeRowMajorLayout(llvm::ArrayRef<int64_t> shape);
// Column-major (Fortran order) addresses of `shape`: the first index is contiguous.
Layout makeColMajorLayout(llvm::ArrayRef<int64_t> shape);
// sum_d index[d] * strides[d]: the paper's  sum_i y_i s_i  address form.
Layout makeStridedLayout(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides);

// One (extent, stride) level of a hierarchical CuTe mode.
struct CuteDim {
  int64_t extent;
  int64_t stride;
};
// A CuTe layout with one level of nesting, e.g. Hexcute's ((4,8),(2,4)):((64,1),(32,8)):
// input d is the coordinate of mode d, split colexicographically (first sub-dimension
// fastest) over the mode's extents, each digit times its stride.
Layout makeCuteLayout(llvm::ArrayRef<llvm::SmallVector<CuteDim, 4>> modes);

// A row-major [rows, cols] tile whose rows are `padElems` elements longer than `cols`:
// consecutive rows start in different banks without any swizzle.
Layout makePaddedLayout(int64_t rows, int64_t cols, int64_t padElems);

// The XOR-swizzled layout of a row-major [rows, cols] tile of `elementBits`-bit elements
// in shared memory, with the `swizzleBytes` (32, 64 or 128) swizzle of CUTLASS: an atom of
// 8 rows by swizzleBytes, tiled down the rows and then across the columns, each atom
// swizzled by Swizzle::forSharedRows. cols * elementBits / 8 must be a multiple of
// swizzleBytes and rows a multiple of 8.
Layout makeSwizzledSharedLayout(int64_t rows, int64_t cols, int64_t elementBits,
                                int64_t swizzleBytes);

// The widest swizzle (128, 64 or 32 bytes) whose width divides a row of `cols` elements,
// or 0 if none does (the row is narrower than 32 bytes or not a multiple of 32 bytes).
int64_t widestSharedSwizzleBytes(int64_t cols, int64_t elementBits);

// TileLang's default for a GEMM operand tile in shared memory: the widest swizzle that
// fits, otherwise a row padded by 16 bytes when rows are a multiple of 32 bytes, otherwise
// plain row-major.
Layout makeGemmSharedLayout(int64_t rows, int64_t cols, int64_t elementBits);

} // namespace tlc
