#include "LayoutFactories.h"

#include <cassert>

namespace tlc {

Layout makeStridedLayout(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides) {
  assert(shape.size() == strides.size());
  Shape strideList(strides.begin(), strides.end());
  return Layout::make(shape, [&](llvm::ArrayRef<IntExpr> idx) {
    IntExpr address = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      address = address + idx[d] * strideList[d];
    return IndexList{address};
  });
}

Layout makeRowMajorLayout(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return makeStridedLayout(shape, strides);
}

Layout makeColMajorLayout(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return makeStridedLayout(shape, strides);
}

Layout makeCuteLayout(llvm::ArrayRef<llvm::SmallVector<CuteDim, 4>> modes) {
  Shape shape;
  for (const auto &mode : modes) {
    int64_t size = 1;
    for (const CuteDim &dim : mode)
      size *= dim.extent;
    shape.push_back(size);
  }
  return Layout::make(shape, [&](llvm::ArrayRef<IntExpr> idx) {
    IntExpr address = 0;
    for (size_t m = 0; m < modes.size(); ++m) {
      int64_t below = 1;
      for (const CuteDim &dim : modes[m]) {
        address = address + idx[m] / below % dim.extent * dim.stride;
        below *= dim.extent;
      }
    }
    return IndexList{address};
  });
}

Layout makePaddedLayout(int64_t rows, int64_t cols, int64_t padElems) {
  return makeStridedLayout({rows, cols}, {cols + padElems, 1});
}

Layout makeSwizzledSharedLayout(int64_t rows, int64_t cols, int64_t elementBits,
                                int64_t swizzleBytes) {
  int64_t atomCols = swizzleBytes * 8 / elementBits;
  assert(cols % atomCols == 0 && "rows must be a whole number of swizzle atoms wide");
  assert(rows % 8 == 0 && "swizzle atoms are 8 rows tall");
  // Column-major order over the atoms: all atoms of one column band, then the next band,
  // as CuTe's tile_to_shape lays out a K-major operand.
  return makeRowMajorLayout({8, atomCols})
      .swizzle(Swizzle::forSharedRows(swizzleBytes, elementBits))
      .repeat({rows / 8, cols / atomCols}, TileOrder::ColMajor);
}

int64_t widestSharedSwizzleBytes(int64_t cols, int64_t elementBits) {
  int64_t rowBits = cols * elementBits;
  for (int64_t bytes : {128, 64, 32})
    if (rowBits % (bytes * 8) == 0)
      return bytes;
  return 0;
}

Layout makeGemmSharedLayout(int64_t rows, int64_t cols, int64_t elementBits) {
  int64_t swizzleBytes = widestSharedSwizzleBytes(cols, elementBits);
  if (swizzleBytes != 0 && rows % 8 == 0)
    return makeSwizzledSharedLayout(rows, cols, elementBits, swizzleBytes);
  // Rows a multiple of 32 bytes would all start in the same bank; 16 bytes of padding
  // staggers them by one ldmatrix row.
  if ((cols * elementBits) % 256 == 0)
    return makePaddedLayout(rows, cols, 128 / elementBits);
  return makeRowMajorLayout({rows, cols});
}

} // namespace tlc
