// The layouts layout inference assigns to on-chip buffers, in the closed families the CUDA
// back end lowers:
//
//   SharedLayout    row-major, or XOR-swizzled at 16-byte granularity (bank-conflict-free
//                   ldmatrix and cp.async for gemm operands)
//   FragmentLayout  how a register tile is spread over the threads of a block:
//     MmaC     the accumulator layout of mma.m16n8k16 tiled over a wm x wn grid of warps
//              (also the A-operand layout of a following register-sourced gemm)
//     Blocked  rows over groups of `tpr` consecutive threads, `vec` contiguous elements per
//              access: the free layout for element-wise and row-reduction work
//     Row      the [rows] layout obtained by reducing dim 1 of an MmaC or Blocked fragment:
//              each thread holds the rows it owned, replicated over the threads of the row
//
// Each family gives C++ index expressions for code generation and a Fragment (ir/Fragment.h)
// for the algebraic view printed by --emit=inferred.
#pragma once

#include "frontend/Types.h"

#include <cstdint>
#include <string>

namespace tlc {

struct SharedLayout {
  int64_t rows = 1, cols = 1; // leading dimensions are folded into rows
  int elemBits = 16;
  // XOR swizzle of 16-byte chunks: chunk ^= (row >> rowShift) & mask; mask 0: row-major.
  int mask = 0;
  int rowShift = 0;

  // Row-major, or the swizzle that makes 8 consecutive rows of one chunk column hit 8
  // distinct 16-byte bank groups (what ldmatrix reads).
  static SharedLayout rowMajor(int64_t rows, int64_t cols, int elemBits);
  static SharedLayout swizzled(int64_t rows, int64_t cols, int elemBits);

  bool isSwizzled() const { return mask != 0; }
  // Element offset of (row, col) as C++ source.
  std::string offsetExpr(const std::string &row, const std::string &col) const;
  // The same computed on integers (tests).
  int64_t offset(int64_t row, int64_t col) const;
  std::string str() const;
  bool operator==(const SharedLayout &o) const {
    return rows == o.rows && cols == o.cols && elemBits == o.elemBits && mask == o.mask &&
           rowShift == o.rowShift;
  }
};

struct FragmentLayout {
  enum Kind { MmaC, Blocked, Row };
  Kind kind = Blocked;
  Kind parent = Blocked; // for Row: the family it was reduced from
  int64_t rows = 1, cols = 1;
  int threads = 128;
  int wm = 1, wn = 1;   // MmaC (and Row of MmaC): warp grid
  int tpr = 1, vec = 1; // Blocked (and Row of Blocked)

  static FragmentLayout mmaC(int64_t rows, int64_t cols, int threads, int wm, int wn);
  // The free layout: `vec` contiguous elements per access, rows spread over thread groups.
  // Returns false in `ok` when the shape cannot be covered evenly.
  static FragmentLayout blocked(int64_t rows, int64_t cols, int threads, int vec, bool &ok);
  FragmentLayout rowLayout() const;

  int registers() const;
  // Register r of thread tid holds element (rowOf, colOf).
  std::string rowOf(const std::string &tid, const std::string &r) const;
  std::string colOf(const std::string &tid, const std::string &r) const;
  // For a full (MmaC or Blocked) layout: the register of its Row layout that holds the row
  // of this layout's register r.
  std::string rowRegister(const std::string &r) const;
  // Evaluation on integers (tests and verification).
  int64_t rowAt(int64_t tid, int64_t r) const;
  int64_t colAt(int64_t tid, int64_t r) const;

  // MmaC geometry.
  int64_t warpRows() const { return rows / wm; }
  int64_t warpCols() const { return cols / wn; }
  int64_t mTiles() const { return warpRows() / 16; }
  int64_t nTiles() const { return warpCols() / 8; }
  // Blocked geometry.
  int64_t rowsPerPass() const { return threads / tpr; }
  int64_t chunksPerRow() const { return cols / (int64_t(tpr) * vec); }

  // How one row is spread for a reduction along dim 1: over `lanes` threads of one warp
  // (combined by a shuffle butterfly of that width) and over `warps` warps (combined
  // through shared scratch). The one rule the shared-memory planner (scratch size), the
  // cost model and the lowering share; `warpSize` is the target's.
  struct RowSpread {
    int lanes;
    int warps;
  };
  RowSpread rowSpread(int warpSize) const;

  std::string str() const;
  bool operator==(const FragmentLayout &o) const;
  bool operator!=(const FragmentLayout &o) const { return !(*this == o); }
};

} // namespace tlc
