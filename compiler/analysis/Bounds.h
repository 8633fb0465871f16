// Constant interval bounds of integer expressions. The simplifier's index rules (dropping
// `floormod(j, 64)` when 0 <= j < 64, folding `floordiv(r, 8)` to 0 when 0 <= r < 8) all
// rest on knowing the range of a subexpression; layouts know the ranges of their index
// variables and pass them in through VarBounds.
#pragma once

#include "IntExpr.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <limits>

namespace tlc {

// A closed interval [lo, hi]. The int64 extremes stand for minus and plus infinity, and
// arithmetic on them saturates, so an unknown bound stays unknown instead of wrapping.
struct IntRange {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

  int64_t lo = kNegInf;
  int64_t hi = kPosInf;

  static IntRange everything() { return {}; }
  static IntRange point(int64_t v) { return {v, v}; }
  // [0, extent - 1]: the range of a loop or layout index with the given extent.
  static IntRange extent(int64_t extent) { return {0, extent - 1}; }

  bool isPoint() const { return lo == hi; }
  bool isNonNegative() const { return lo >= 0; }
  bool hasFiniteLo() const { return lo != kNegInf; }
  bool hasFiniteHi() const { return hi != kPosInf; }
  bool isFinite() const { return hasFiniteLo() && hasFiniteHi(); }
  // True if every value lies in [lo, hi].
  bool within(int64_t rangeLo, int64_t rangeHi) const { return lo >= rangeLo && hi <= rangeHi; }
  bool operator==(const IntRange &o) const { return lo == o.lo && hi == o.hi; }
};

// The ranges of the free variables of an expression. Unbound variables are unbounded.
class VarBounds {
public:
  void bind(const IntExpr &var, IntRange range);
  // Binds `var` to [0, extent - 1].
  void bindExtent(const IntExpr &var, int64_t extent) { bind(var, IntRange::extent(extent)); }
  IntRange lookup(const IntExpr &var) const;
  bool isBound(const IntExpr &var) const;
  // Adds every binding of `other` (other's bindings win).
  void merge(const VarBounds &other);

private:
  llvm::DenseMap<uint64_t, IntRange> ranges;
};

// A sound interval for the values of `e` when its variables range over `bounds`.
IntRange boundOf(const IntExpr &e, const VarBounds &bounds);

} // namespace tlc
