#include "TensorCoreLayouts.h"

#include <cassert>

namespace tlc {

namespace {

// Row and column block counts of an ldmatrix tile.
std::pair<int64_t, int64_t> ldmatrixBlocks(int numMatrices, MatrixOrder order) {
  assert((numMatrices == 1 || numMatrices == 2 || numMatrices == 4) &&
         "ldmatrix loads 1, 2 or 4 matrices");
  if (numMatrices == 4)
    return {2, 2};
  if (numMatrices == 1)
    return {1, 1};
  return order == MatrixOrder::ColMajor ? std::make_pair(2, 1) : std::make_pair(1, 2);
}

// The matrix holding tile row block rb and column block cb.
IntExpr matrixOf(const IntExpr &rowBlock, const IntExpr &colBlock, int numMatrices,
                 MatrixOrder order) {
  auto [rowBlocks, colBlocks] = ldmatrixBlocks(numMatrices, order);
  return order == MatrixOrder::ColMajor ? colBlock * rowBlocks + rowBlock
                                        : rowBlock * colBlocks + colBlock;
}

struct WarpTile {
  int64_t rows;
  int64_t cols;
};

WarpTile warpTile(int64_t blockRows, int64_t blockCols, int64_t warpsM, int64_t warpsN) {
  assert(blockRows % warpsM == 0 && blockCols % warpsN == 0 && "warps must split the block");
  return {blockRows / warpsM, blockCols / warpsN};
}

} // namespace

Fragment makeMmaM16N8K16FragmentA() {
  return Fragment::make({16, 16}, [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
    const IntExpr &m = idx[0], &k = idx[1];
    return Fragment::Placement{m % 8 * 4 + k % 8 / 2, k / 8 * 4 + m / 8 * 2 + k % 2};
  });
}

Fragment makeMmaM16N8K16FragmentB() {
  return Fragment::make({16, 8}, [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
    const IntExpr &k = idx[0], &n = idx[1];
    return Fragment::Placement{n * 4 + k % 8 / 2, k / 8 * 2 + k % 2};
  });
}

Fragment makeMmaM16N8K16FragmentC() {
  return Fragment::make({16, 8}, [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
    const IntExpr &m = idx[0], &n = idx[1];
    return Fragment::Placement{m % 8 * 4 + n / 2, m / 8 * 2 + n % 2};
  });
}

Fragment makeMmaBlockFragmentC(int64_t blockM, int64_t blockN, int64_t warpsM, int64_t warpsN) {
  WarpTile warp = warpTile(blockM, blockN, warpsM, warpsN);
  assert(warp.rows % 16 == 0 && warp.cols % 8 == 0);
  return makeMmaM16N8K16FragmentC()
      .repeat({warp.rows / 16, warp.cols / 8}, RepeatOn::Register)
      .repeat({warpsM, warpsN}, RepeatOn::Thread);
}

// For the operands the replica index is the warp coordinate the operand does not depend
// on; the order of replicate and repeat puts it at the right place in the warp number.
Fragment makeMmaBlockFragmentA(int64_t blockM, int64_t blockK, int64_t warpsM, int64_t warpsN) {
  WarpTile warp = warpTile(blockM, blockK, warpsM, 1);
  assert(warp.rows % 16 == 0 && blockK % 16 == 0);
  // Warp (wm, wn) is number wm * warpsN + wn: the replicas (wn) are the low part.
  return makeMmaM16N8K16FragmentA()
      .repeat({warp.rows / 16, blockK / 16}, RepeatOn::Register)
      .replicate(warpsN)
      .repeat({warpsM, 1}, RepeatOn::Thread);
}

Fragment makeMmaBlockFragmentB(int64_t blockK, int64_t blockN, int64_t warpsM, int64_t warpsN) {
  WarpTile warp = warpTile(blockK, blockN, 1, warpsN);
  assert(blockK % 16 == 0 && warp.cols % 8 == 0);
  // Here the replicas (wm) are the high part of the warp number.
  return makeMmaM16N8K16FragmentB()
      .repeat({blockK / 16, warp.cols / 8}, RepeatOn::Register)
      .repeat({1, warpsN}, RepeatOn::Thread)
      .replicate(warpsM);
}

Shape ldmatrixTileShape(int numMatrices, MatrixOrder order) {
  auto [rowBlocks, colBlocks] = ldmatrixBlocks(numMatrices, order);
  return {rowBlocks * 8, colBlocks * 8};
}

Fragment makeLdmatrixFragment(int numMatrices, bool transpose, MatrixOrder order) {
  return Fragment::make(
      ldmatrixTileShape(numMatrices, order), [&](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
        const IntExpr &r = idx[0], &c = idx[1];
        IntExpr matrix = matrixOf(r / 8, c / 8, numMatrices, order);
        // .trans hands each lane a pair of rows of one column instead of a pair of
        // columns of one row.
        const IntExpr &pairDim = transpose ? r : c;
        const IntExpr &laneDim = transpose ? c : r;
        return Fragment::Placement{laneDim % 8 * 4 + pairDim % 8 / 2, matrix * 2 + pairDim % 2};
      });
}

Layout makeLdmatrixAddressLayout(int numMatrices, MatrixOrder order) {
  auto [rowBlocks, colBlocks] = ldmatrixBlocks(numMatrices, order);
  // Init-captures: clang 14 (the fuzzer's build) cannot capture structured bindings.
  return Layout::make({8 * int64_t(numMatrices)}, [&, rowBlocks = rowBlocks, colBlocks = colBlocks](
                                                      llvm::ArrayRef<IntExpr> idx) {
    IntExpr matrix = idx[0] / 8;
    IntExpr rowBlock = order == MatrixOrder::ColMajor ? matrix % rowBlocks : matrix / colBlocks;
    IntExpr colBlock = order == MatrixOrder::ColMajor ? matrix / rowBlocks : matrix % colBlocks;
    return IndexList{rowBlock * 8 + idx[0] % 8, colBlock * 8};
  });
}

} // namespace tlc
