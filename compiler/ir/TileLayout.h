// The layouts layout inference assigns to on-chip buffers, in the closed families the CUDA
// back end lowers:
//
//   SharedLayout    row-major, or XOR-swizzled at 16-byte granularity (bank-conflict-free
//                   ldmatrix and cp.async for gemm operands), or the layout the kernel fixed
//                   with annotate_layout (any bijection, ir/AnnotatedLayout.h)
//   FragmentLayout  how a register tile is spread over the threads of a block:
//     MmaC     the accumulator layout of mma.m16n8k16 tiled over a wm x wn grid of warps
//              (also the A-operand layout of a following register-sourced gemm)
//     Blocked  rows over groups of `tpr` consecutive threads, `vec` contiguous elements per
//              access: the free layout for element-wise and row-reduction work; a tile too
//              small for the block is held by `replicas` groups of threads, each a full copy
//     Row      the [rows] layout obtained by reducing dim 1 of an MmaC or Blocked fragment:
//              each thread holds the rows it owned, replicated over the threads of the row
//
// A family is a name and its parameters (what --emit=inferred prints and what layout
// conflicts compare); its factory builds the Fragment of the layout algebra (ir/Fragment.h)
// from the instruction atoms, and every index expression code generation prints, every
// register count and the row layout of a reduction are computed from that Fragment (its
// inverse, printed as C++), not written per family.
#pragma once

#include "ir/Fragment.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tlc {

// A shared layout the kernel fixed itself: `annotate_layout(buf, (i, j) => [p, q])` stores
// element [i, j] where element [p, q] of the row-major buffer would be (ir/AnnotatedLayout.h
// builds it and proves it a bijection).
struct AnnotatedLayout {
  Layout indexMap; // over the buffer's shape: the user's (i, j) => [p, q], simplified
  Layout address;  // over the [rows, cols] view: the element offset code generation prints
  // The widest run of columns (a power of two, at most 16) that every aligned group of
  // columns keeps at consecutive offsets starting at a multiple of the run: how many
  // elements one vector access or cp.async may move (1: element by element).
  int64_t vectorRun = 1;
  unsigned line = 0; // of the annotate_layout statement, for --emit=inferred
  // SharedLayout::sameOffsets's answers for the inferred layouts compared with this one (a
  // few: every gemm of a kernel asks again), so that each comparison enumerates once.
  mutable std::vector<std::pair<std::string, bool>> sameOffsetsAs;
};

struct SharedLayout {
  int64_t rows = 1, cols = 1; // leading dimensions are folded into rows
  int elemBits = 16;
  // XOR swizzle of 16-byte chunks: chunk ^= (row >> rowShift) & mask; mask 0: row-major.
  int mask = 0;
  int rowShift = 0;
  // The bytes the XOR moves as one (16: the chunk of ldmatrix and cp.async; 8 on gfx9, where
  // MFMA lanes read 8-byte runs and a conflict-free layout must permute those: ir/LdsBanks.h).
  int unitBytes = 16;
  // gfx9's rows of 256 bytes or more: with unitFlipBit f > 0 the unit also moves by bit f of
  // its own index, unit ^= (row >> rowShift) & mask ^ (unit >> f) & 1, so that the two 128-byte
  // halves of every 256 bytes of a row put a unit's even and odd halves on opposite banks
  // (ir/LdsBanks.h says why); 0: no flip.
  int unitFlipBit = 0;
  // wgmma operand tiles: the row is cut into panels of `panelCols` columns (one swizzle
  // span), each a [rows, panelCols] tile swizzled as above, stored one after another; 0: the
  // row is not cut. Such a tile starts 1024-byte aligned (the hardware swizzle's period).
  int64_t panelCols = 0;
  // annotate_layout: the user's layout, which replaces everything above but rows, cols and
  // elemBits (mask and panelCols stay 0); null for the inferred families.
  std::shared_ptr<const AnnotatedLayout> annotated;

  // Row-major, or the swizzle that makes 8 consecutive rows of one chunk column hit 8
  // distinct 16-byte bank groups (what ldmatrix reads).
  static SharedLayout rowMajor(int64_t rows, int64_t cols, int elemBits);
  static SharedLayout swizzled(int64_t rows, int64_t cols, int elemBits);
  // unit ^= (row >> rowShift) & mask (^ (unit >> flipBit) & 1 where flipBit > 0) on
  // `unitBytes`-byte units, or nullopt when the row is not whole groups of mask + 1 units (or,
  // with a flip, of two units and of 2^(flipBit + 1) units): the XOR would move units out of
  // their row.
  static std::optional<SharedLayout> xorUnits(int64_t rows, int64_t cols, int elemBits, int unitBytes,
                                              int rowShift, int mask, int flipBit = 0);
  // The layout Hopper's wgmma reads through its 32/64/128-byte swizzle modes (tl::GmmaLayout):
  // panels of the widest span dividing the row, or nullopt when the tile has no such layout
  // (rows not a multiple of 32 bytes, or not a multiple of 8 rows).
  static std::optional<SharedLayout> wgmmaOperand(int64_t rows, int64_t cols, int elemBits);

  static SharedLayout fromAnnotation(int64_t rows, int64_t cols, int elemBits,
                                     std::shared_ptr<const AnnotatedLayout> annotated);

  bool isAnnotated() const { return annotated != nullptr; }
  bool isSwizzled() const { return mask != 0; }
  bool isPanelled() const { return panelCols != 0; }
  // Plain row-major: each row's `cols` elements at consecutive offsets, rows one after another
  // (what an unswizzled bulk tensor copy writes).
  bool isPlainRowMajor() const { return !isAnnotated() && !isSwizzled() && !isPanelled() && unitFlipBit == 0; }
  // The alignment the tile's first byte needs in shared memory.
  int64_t alignBytes() const { return isPanelled() ? 1024 : 128; }
  // Element offset of (row, col) as C++ source.
  std::string offsetExpr(const std::string &row, const std::string &col) const;
  // The same computed on integers (tests).
  int64_t offset(int64_t row, int64_t col) const;
  // Whether `v` consecutive columns starting at a multiple of v sit at v consecutive offsets
  // starting at a multiple of v, as vector accesses need. The inferred families keep 16-byte
  // chunks whole (their callers check the row width); an annotated layout says so itself.
  bool keepsVectors(int64_t v) const { return vectorRun(v) == v; }
  // The widest such run of at most `v` columns (a power of two when v is): what an annotated
  // layout keeps, the unit of a swizzle of units under 16 bytes (gfx9's MFMA operands), else v.
  int64_t vectorRun(int64_t v) const {
    int64_t keep = annotated                        ? annotated->vectorRun
                   : isSwizzled() && unitBytes < 16 ? std::max<int64_t>(1, int64_t(unitBytes) * 8 / elemBits)
                                                    : v;
    return v < keep ? v : keep;
  }
  // Whether every element has the same offset in both (an annotation that spells out the
  // layout an instruction needs). Exact: compares the structure, then every element (tiles
  // are small; beyond kMaxOffsetCompare elements it answers false).
  bool sameOffsets(const SharedLayout &o) const;
  static constexpr int64_t kMaxOffsetCompare = int64_t(1) << 22;
  std::string str() const;
  bool operator==(const SharedLayout &o) const {
    return rows == o.rows && cols == o.cols && elemBits == o.elemBits && mask == o.mask &&
           rowShift == o.rowShift && unitBytes == o.unitBytes && unitFlipBit == o.unitFlipBit &&
           panelCols == o.panelCols &&
           annotated == o.annotated;
  }
};

struct FragmentAlgebra;

struct FragmentLayout {
  // Generic: a layout known only by its fragment (an operator's own placement, such as the
  // transposed accumulator of a gemm with B dequantized in registers); copies move it element
  // by element and reductions do not take it.
  enum Kind { MmaC, Blocked, Row, Generic };
  Kind kind = Blocked;
  Kind parent = Blocked; // for Row: the family it was reduced from
  int64_t rows = 1, cols = 1;
  int threads = 128;
  int wm = 1, wn = 1;   // MmaC (and Row of MmaC): warp grid
  int atomM = 1, atomN = 1; // MmaC: the accumulator tile of one instruction
  int tpr = 1, vec = 1; // Blocked (and Row of Blocked)
  int replicas = 1;     // Blocked (and Row of Blocked), Generic: copies of the tile, on further threads
  // Blocked: the columns cut into `colSplit` equal slices, slice p a blocked tile of its own on
  // threads p * threads / colSplit .. (a gemm whose warps split K: each warp group's weights).
  int colSplit = 1;
  // Generic: each element is the sum of `partials` values held by as many groups of threads
  // (a gemm whose warp groups split K leaves each group's partial sums); reading it needs
  // their sum, which a copy takes (ops/Copy.cpp, throughScratch).
  int partials = 1;
  // The layout as a Fragment, with its inverse; shared by copies of this layout.
  std::shared_ptr<const FragmentAlgebra> algebra;
  // Generic: what the layout is, for --emit=inferred and equality (unique per placement).
  std::string description;

  // The accumulator `atomC` (an [m, n] tile over the threads of one warp) of the target's
  // tensor-core instruction, repeated over each warp's tile on registers and over the
  // wm x wn warps (numbered row-major) on threads.
  static FragmentLayout mmaC(int64_t rows, int64_t cols, int threads, int wm, int wn,
                             const Fragment &atomC);
  // The free layout: `vec` contiguous elements per access, rows spread over thread groups,
  // the tile held `replicas` times (threads / replicas threads per copy). Returns false in
  // `ok` when the shape cannot be covered evenly.
  static FragmentLayout blocked(int64_t rows, int64_t cols, int threads, int vec, bool &ok,
                                int replicas = 1);
  // The same with the threads per row given (a layout derived from another's: dequant_i4's
  // unpacked tile keeps its packed tile's threads and doubles the vector).
  static FragmentLayout blockedWith(int64_t rows, int64_t cols, int threads, int tpr, int vec, bool &ok,
                                    int replicas = 1, int colSplit = 1);
  // The FREE level's choice (the TileLang paper's Algorithm 1): among the blocked layouts of
  // the tile over `threads` threads (vectors of `maxVec` elements down to 1, the tile copied
  // over 1, 2, 4, ... thread groups when it is too small for the block), the one with the
  // fewest registers per thread; ties go to fewer copies, then wider vectors. ok = false
  // when none covers the tile (never, for a block of a power-of-two thread count).
  static FragmentLayout fewestRegisters(int64_t rows, int64_t cols, int threads, int maxVec, bool &ok);
  // The accumulator of mma.sync m16n8 with the weights as A and the activations as B, seen
  // as C = A_act @ W^T [rows, cols] (rows = activation rows, cols = weight rows): weight row
  // n = 8w + g + (cols / 2) * p is row g + 8p of warp w's m16 tile, activation row m = 8j +
  // 2t + e is column 2t + e of its n8 tile j; register 4j + 2p + e of lane 4g + t.
  static FragmentLayout mmaTransposedRuns(int64_t rows, int64_t cols, int threads, int warpSize);
  // `part` (a layout over threads / groups threads) held by `groups` groups of threads, each
  // with partial sums of every element (a Generic layout with partials = groups); summed()
  // is the same placement with each group holding the whole sum (replicas).
  static FragmentLayout partialSums(const FragmentLayout &part, int groups);
  FragmentLayout summed() const;
  // The layout a reduction over dim 1 leaves: Fragment::reduce of this one.
  FragmentLayout rowLayout() const;

  const Fragment &fragment() const;
  int registers() const;
  // Register r of thread tid holds element (rowOf, colOf), as C++ (tid and r are C++
  // expressions; divisions are exact there since both are non-negative).
  std::string rowOf(const std::string &tid, const std::string &r) const;
  std::string colOf(const std::string &tid, const std::string &r) const;
  // A C++ condition true in exactly one of the threads that hold register r's element (the
  // first replica), or "" when every element is held once. Side effects that must happen
  // once per element (atomic adds) are guarded by it.
  std::string replicaGuard(const std::string &tid, const std::string &r) const;
  // Which copy (or, with partials > 1, which partial sum) of its element register r of thread
  // tid holds, as C++: "0" when every element is held once.
  std::string replicaOf(const std::string &tid, const std::string &r) const;
  // For a full (MmaC or Blocked) layout: the register of its Row layout that holds the row
  // of this layout's register r (the same in every thread).
  std::string rowRegister(const std::string &r) const;
  // Evaluation on integers (tests and verification).
  int64_t rowAt(int64_t tid, int64_t r) const;
  int64_t colAt(int64_t tid, int64_t r) const;

  // MmaC geometry.
  int64_t warpRows() const { return rows / wm; }
  int64_t warpCols() const { return cols / wn; }
  int64_t mTiles() const { return warpRows() / atomM; }
  int64_t nTiles() const { return warpCols() / atomN; }
  // Blocked geometry.
  int64_t rowsPerPass() const { return threads / colSplit / replicas / tpr; }
  int64_t chunksPerRow() const { return cols / colSplit / (int64_t(tpr) * vec); }

  // How one row is spread for a reduction along dim 1: over `lanes` threads of one warp,
  // `laneStride` apart (consecutive for mma.sync and blocked layouts; 32 or 16 apart for
  // gfx9's MFMA accumulators, whose lane halves or quarters share a row), combined by a
  // shuffle butterfly over those lane bits, and over `warps` warps (combined through shared
  // scratch). Read off the fragment: the threads that hold row 0. The one rule the
  // shared-memory planner (scratch size), the cost model and the lowering share; `warpSize`
  // is the target's.
  struct RowSpread {
    int lanes;
    int warps;
    int laneStride = 1;
  };
  RowSpread rowSpread(int warpSize) const;

  std::string str() const;
  // str() without the shape and the register count: the family and its parameters.
  std::string family() const;
  bool operator==(const FragmentLayout &o) const;
  bool operator!=(const FragmentLayout &o) const { return !(*this == o); }
};

// What a FragmentLayout computes from: the Fragment, and its inverse (thread, register) ->
// tile index that lowering prints.
struct FragmentAlgebra {
  Fragment fragment;
  IterVarDomain thread, reg; // the inverse's arguments
  IndexList position;        // the tile index held there ((i, j), or (i) for a row layout)
  IntExpr replica;           // which copy of it (replicated fragments only)
  // Full layouts: the Row layout, and the row register of `reg` as an expression in `reg`.
  std::shared_ptr<const FragmentAlgebra> rows;
  IntExpr rowRegister;
  // The threads that hold row 0 (full layouts; replica 0), ascending.
  std::vector<int64_t> rowThreads;
};

} // namespace tlc
