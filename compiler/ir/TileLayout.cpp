#include "ir/TileLayout.h"

#include <algorithm>

namespace tlc {

namespace {

std::string paren(const std::string &s) {
  bool simple = std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  return simple ? s : "(" + s + ")";
}

int log2Exact(int64_t x) {
  int k = 0;
  while ((int64_t(1) << k) < x)
    ++k;
  return (int64_t(1) << k) == x ? k : -1;
}

} // namespace

// ------------------------------------------------------------------ shared

SharedLayout SharedLayout::rowMajor(int64_t rows, int64_t cols, int elemBits) {
  SharedLayout l;
  l.rows = rows;
  l.cols = cols;
  l.elemBits = elemBits;
  return l;
}

SharedLayout SharedLayout::swizzled(int64_t rows, int64_t cols, int elemBits) {
  SharedLayout l = rowMajor(rows, cols, elemBits);
  int64_t rowBytes = cols * elemBits / 8;
  if (cols * elemBits % 128 != 0)
    return l;
  int64_t chunks = rowBytes / 16;
  // The XOR permutes chunks only within groups of `group` chunks, the largest power of two
  // (at most 8) dividing the row's chunk count, so every chunk stays inside its own row: a
  // bijection for every width. (XORing a 12-chunk row with row & 7 sent chunks 8-11 past
  // the row's end.)
  int64_t group = 1;
  while (group < 8 && chunks % (group * 2) == 0)
    group *= 2;
  if (group == 1)
    return l; // an odd chunk count staggers consecutive rows over the banks by itself
  // 8 chunks of 16 bytes span all 32 banks. A row of c chunks starts (c * row) % 8 chunks
  // into that span, which repeats every 8 / group rows; the key is the row index shifted
  // past them, so the 8 rows one ldmatrix phase reads hit 8 distinct 16-byte bank groups.
  // Rows of 2, 4, 8, 16, ... chunks (32-, 64-, 128-wide f16 tiles) keep their layout.
  l.mask = int(group - 1);
  l.rowShift = log2Exact(8 / group);
  return l;
}

std::string SharedLayout::offsetExpr(const std::string &row, const std::string &col) const {
  std::string r = paren(row), c = paren(col);
  if (!isSwizzled())
    return r + " * " + std::to_string(cols) + " + " + c;
  int perChunk = 128 / elemBits;
  std::string key = rowShift ? "((" + r + " >> " + std::to_string(rowShift) + ") & " +
                                   std::to_string(mask) + ")"
                             : "(" + r + " & " + std::to_string(mask) + ")";
  return r + " * " + std::to_string(cols) + " + (((" + c + " / " + std::to_string(perChunk) +
         ") ^ " + key + ") * " + std::to_string(perChunk) + ") + " + c + " % " +
         std::to_string(perChunk);
}

int64_t SharedLayout::offset(int64_t row, int64_t col) const {
  if (!isSwizzled())
    return row * cols + col;
  int perChunk = 128 / elemBits;
  int64_t chunk = (col / perChunk) ^ ((row >> rowShift) & mask);
  return row * cols + chunk * perChunk + col % perChunk;
}

std::string SharedLayout::str() const {
  std::string s = "[" + std::to_string(rows) + ", " + std::to_string(cols) + "] ";
  if (!isSwizzled())
    return s + "row-major";
  return s + "swizzled(chunk ^= (row >> " + std::to_string(rowShift) + ") & " +
         std::to_string(mask) + ", 16-byte chunks)";
}

// ------------------------------------------------------------------ fragments

FragmentLayout FragmentLayout::mmaC(int64_t rows, int64_t cols, int threads, int wm, int wn) {
  FragmentLayout l;
  l.kind = MmaC;
  l.rows = rows;
  l.cols = cols;
  l.threads = threads;
  l.wm = wm;
  l.wn = wn;
  return l;
}

FragmentLayout FragmentLayout::blocked(int64_t rows, int64_t cols, int threads, int vec, bool &ok) {
  FragmentLayout l;
  l.kind = Blocked;
  l.rows = rows;
  l.cols = cols;
  l.threads = threads;
  ok = false;
  // Widest vector that divides the row, then as many threads per row as the row has vectors
  // (a power of two dividing the block), so that a row is a group of consecutive lanes.
  while (vec > 1 && cols % vec != 0)
    vec /= 2;
  l.vec = vec;
  int64_t vectors = cols / vec;
  int tpr = 1;
  while (tpr * 2 <= threads && vectors % (tpr * 2) == 0)
    tpr *= 2;
  // Enough rows to keep every thread busy: fewer threads per row when rows are plentiful.
  while (tpr > 1 && rows % (threads / (tpr / 2)) == 0 && rows >= threads / (tpr / 2) &&
         (threads / tpr) < rows)
    tpr /= 2;
  l.tpr = tpr;
  ok = rows % l.rowsPerPass() == 0 && cols % (int64_t(tpr) * vec) == 0;
  return l;
}

FragmentLayout::RowSpread FragmentLayout::rowSpread(int warpSize) const {
  // An mma accumulator row lies in the 4 lanes of a quad (threadID_in_group) in each of the
  // wn warps of its warp row; a blocked row in tpr consecutive threads.
  if (kind == MmaC)
    return {4, wn};
  return {std::min(tpr, warpSize), std::max(1, tpr / warpSize)};
}

FragmentLayout FragmentLayout::rowLayout() const {
  FragmentLayout l = *this;
  l.parent = kind == Row ? parent : kind;
  l.kind = Row;
  return l;
}

int FragmentLayout::registers() const {
  switch (kind) {
  case MmaC: return int(mTiles() * nTiles() * 4);
  case Blocked: return int(rows / rowsPerPass() * chunksPerRow() * vec);
  case Row: return parent == MmaC ? int(mTiles() * 2) : int(rows / rowsPerPass());
  }
  return 0;
}

std::string FragmentLayout::rowOf(const std::string &tid, const std::string &r) const {
  std::string t = paren(tid), R = paren(r);
  std::string warp = "(" + t + " / 32)", lane = "(" + t + " % 32)";
  if (kind == MmaC || (kind == Row && parent == MmaC)) {
    std::string wr = "(" + warp + " / " + std::to_string(wn) + ")";
    std::string mi = kind == MmaC ? "(" + R + " / " + std::to_string(nTiles() * 4) + ")"
                                  : "(" + R + " / 2)";
    std::string half = kind == MmaC ? "((" + R + " % 4) / 2)" : "(" + R + " % 2)";
    return wr + " * " + std::to_string(warpRows()) + " + " + mi + " * 16 + " + lane + " / 4 + " +
           half + " * 8";
  }
  std::string pass = kind == Blocked ? "(" + R + " / " + std::to_string(chunksPerRow() * vec) + ")" : R;
  return pass + " * " + std::to_string(rowsPerPass()) + " + " + t + " / " + std::to_string(tpr);
}

std::string FragmentLayout::colOf(const std::string &tid, const std::string &r) const {
  std::string t = paren(tid), R = paren(r);
  if (kind == MmaC) {
    std::string wc = "((" + t + " / 32) % " + std::to_string(wn) + ")";
    return wc + " * " + std::to_string(warpCols()) + " + ((" + R + " / 4) % " +
           std::to_string(nTiles()) + ") * 8 + ((" + t + " % 32) % 4) * 2 + " + R + " % 2";
  }
  if (kind == Blocked)
    return "((" + R + " / " + std::to_string(vec) + ") % " + std::to_string(chunksPerRow()) +
           ") * " + std::to_string(int64_t(tpr) * vec) + " + (" + t + " % " + std::to_string(tpr) +
           ") * " + std::to_string(vec) + " + " + R + " % " + std::to_string(vec);
  return "0";
}

std::string FragmentLayout::rowRegister(const std::string &r) const {
  std::string R = paren(r);
  if (kind == MmaC)
    return "(" + R + " / " + std::to_string(nTiles() * 4) + ") * 2 + (" + R + " % 4) / 2";
  return R + " / " + std::to_string(chunksPerRow() * vec);
}

int64_t FragmentLayout::rowAt(int64_t tid, int64_t r) const {
  int64_t warp = tid / 32, lane = tid % 32;
  if (kind == MmaC)
    return (warp / wn) * warpRows() + (r / (nTiles() * 4)) * 16 + lane / 4 + ((r % 4) / 2) * 8;
  if (kind == Row && parent == MmaC)
    return (warp / wn) * warpRows() + (r / 2) * 16 + lane / 4 + (r % 2) * 8;
  int64_t pass = kind == Blocked ? r / (chunksPerRow() * vec) : r;
  return pass * rowsPerPass() + tid / tpr;
}

int64_t FragmentLayout::colAt(int64_t tid, int64_t r) const {
  if (kind == MmaC)
    return ((tid / 32) % wn) * warpCols() + ((r / 4) % nTiles()) * 8 + ((tid % 32) % 4) * 2 + r % 2;
  if (kind == Blocked)
    return ((r / vec) % chunksPerRow()) * tpr * vec + (tid % tpr) * vec + r % vec;
  return 0;
}

std::string FragmentLayout::str() const {
  std::string shape = kind == Row ? "[" + std::to_string(rows) + "]"
                                  : "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
  std::string regs = ", " + std::to_string(registers()) + " registers/thread";
  switch (kind) {
  case MmaC:
    return shape + " mma.m16n8 accumulator, warps " + std::to_string(wm) + "x" +
           std::to_string(wn) + " (warp tile " + std::to_string(warpRows()) + "x" +
           std::to_string(warpCols()) + ")" + regs;
  case Blocked:
    return shape + " blocked: " + std::to_string(tpr) + " threads/row, " + std::to_string(vec) +
           " contiguous elements/access, " + std::to_string(rowsPerPass()) + " rows/pass" + regs;
  case Row:
    return shape + " rows of " +
           (parent == MmaC ? "an mma accumulator (warps " + std::to_string(wm) + "x" + std::to_string(wn) + ")"
                           : "a blocked tile (" + std::to_string(tpr) + " threads/row)") +
           ", replicated across the row's threads" + regs;
  }
  return shape;
}

bool FragmentLayout::operator==(const FragmentLayout &o) const {
  if (kind != o.kind || rows != o.rows || threads != o.threads)
    return false;
  Kind family = kind == Row ? parent : kind;
  if (kind == Row && parent != o.parent)
    return false;
  if (kind != Row && cols != o.cols)
    return false;
  if (family == MmaC)
    return wm == o.wm && wn == o.wn && (kind == Row ? warpRows() == o.warpRows() : true);
  return tpr == o.tpr && (kind == Row || vec == o.vec);
}

} // namespace tlc
