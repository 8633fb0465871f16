#include "Bounds.h"

#include <algorithm>

namespace tlc {

namespace {

constexpr int64_t kNegInf = IntRange::kNegInf;
constexpr int64_t kPosInf = IntRange::kPosInf;

bool isInf(int64_t v) { return v == kNegInf || v == kPosInf; }

// Clamps a wide result into the finite int64 range; values that do not fit become the
// matching infinity, which keeps the bound sound.
int64_t clampWide(__int128 v) {
  if (v <= static_cast<__int128>(kNegInf))
    return kNegInf;
  if (v >= static_cast<__int128>(kPosInf))
    return kPosInf;
  return static_cast<int64_t>(v);
}

// a + b where an infinite operand dominates. Callers never add opposite infinities: a
// lower bound only meets lower bounds.
int64_t satAdd(int64_t a, int64_t b) {
  if (isInf(a))
    return a;
  if (isInf(b))
    return b;
  return clampWide(static_cast<__int128>(a) + b);
}

int64_t satNeg(int64_t a) {
  if (a == kNegInf)
    return kPosInf;
  if (a == kPosInf)
    return kNegInf;
  return -a;
}

int64_t satMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  if (isInf(a) || isInf(b))
    return ((a < 0) != (b < 0)) ? kNegInf : kPosInf;
  return clampWide(static_cast<__int128>(a) * b);
}

// floor(a / c) for a constant c > 0, keeping infinities.
int64_t satFloorDiv(int64_t a, int64_t c) { return isInf(a) ? a : floorDiv(a, c); }

IntRange addRanges(IntRange a, IntRange b) { return {satAdd(a.lo, b.lo), satAdd(a.hi, b.hi)}; }

IntRange negateRange(IntRange a) { return {satNeg(a.hi), satNeg(a.lo)}; }

IntRange mulRanges(IntRange a, IntRange b) {
  int64_t products[] = {satMul(a.lo, b.lo), satMul(a.lo, b.hi), satMul(a.hi, b.lo),
                        satMul(a.hi, b.hi)};
  return {*std::min_element(std::begin(products), std::end(products)),
          *std::max_element(std::begin(products), std::end(products))};
}

IntRange floorDivRange(IntRange a, IntRange d) {
  if (d.isPoint() && d.lo > 0)
    return {satFloorDiv(a.lo, d.lo), satFloorDiv(a.hi, d.lo)};
  if (d.isPoint() && d.lo < 0 && d.lo != kNegInf)
    return floorDivRange(negateRange(a), IntRange::point(-d.lo));
  if (d.lo > 0 && a.isNonNegative())
    return {0, satFloorDiv(a.hi, d.lo)};
  return IntRange::everything();
}

IntRange floorModRange(IntRange a, IntRange d) {
  if (d.isPoint() && d.lo > 0) {
    int64_t c = d.lo;
    if (a.isFinite() && floorDiv(a.lo, c) == floorDiv(a.hi, c))
      return {floorMod(a.lo, c), floorMod(a.hi, c)};
    return {0, c - 1};
  }
  if (d.lo > 0)
    return {0, d.hi == kPosInf ? kPosInf : d.hi - 1};
  if (d.hi < 0)
    return {d.lo == kNegInf ? kNegInf : d.lo + 1, 0};
  return IntRange::everything();
}

// The smallest 2^k - 1 that is >= v, for v >= 0: the largest value a bitwise OR or XOR of
// operands in [0, v] can produce.
int64_t allOnesCovering(int64_t v) {
  if (v == kPosInf)
    return kPosInf;
  int64_t mask = 0;
  while (mask < v)
    mask = (mask << 1) | 1;
  return mask;
}

IntRange bitwiseRange(IntExprKind kind, IntRange a, IntRange b) {
  if (kind == IntExprKind::And) {
    if (a.isNonNegative() && b.isNonNegative())
      return {0, std::min(a.hi, b.hi)};
    if (a.isNonNegative())
      return {0, a.hi};
    if (b.isNonNegative())
      return {0, b.hi};
    return IntRange::everything();
  }
  if (!a.isNonNegative() || !b.isNonNegative())
    return IntRange::everything();
  int64_t hi = allOnesCovering(std::max(a.hi, b.hi));
  return {kind == IntExprKind::Or ? std::max(a.lo, b.lo) : 0, hi};
}

IntRange shiftRange(IntExprKind kind, IntRange a, IntRange amount) {
  if (!amount.isPoint() || amount.lo < 0 || amount.lo >= 63)
    return IntRange::everything();
  IntRange scale = IntRange::point(int64_t(1) << amount.lo);
  return kind == IntExprKind::Shl ? mulRanges(a, scale) : floorDivRange(a, scale);
}

} // namespace

void VarBounds::bind(const IntExpr &var, IntRange range) { ranges[var.varId()] = range; }

IntRange VarBounds::lookup(const IntExpr &var) const {
  auto it = ranges.find(var.varId());
  return it == ranges.end() ? IntRange::everything() : it->second;
}

bool VarBounds::isBound(const IntExpr &var) const { return ranges.count(var.varId()) != 0; }

void VarBounds::merge(const VarBounds &other) {
  for (const auto &entry : other.ranges)
    ranges[entry.first] = entry.second;
}

IntRange boundOf(const IntExpr &e, const VarBounds &bounds) {
  if (e.isConst())
    return IntRange::point(e.constValue());
  if (e.isVar())
    return bounds.lookup(e);
  IntRange a = boundOf(e.lhs(), bounds);
  IntRange b = boundOf(e.rhs(), bounds);
  switch (e.kind()) {
  case IntExprKind::Add: return addRanges(a, b);
  case IntExprKind::Sub: return addRanges(a, negateRange(b));
  case IntExprKind::Mul: return mulRanges(a, b);
  case IntExprKind::FloorDiv: return floorDivRange(a, b);
  case IntExprKind::FloorMod: return floorModRange(a, b);
  case IntExprKind::Min: return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
  case IntExprKind::Max: return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  case IntExprKind::And:
  case IntExprKind::Or:
  case IntExprKind::Xor: return bitwiseRange(e.kind(), a, b);
  case IntExprKind::Shl:
  case IntExprKind::Shr: return shiftRange(e.kind(), a, b);
  case IntExprKind::Const:
  case IntExprKind::Var: break;
  }
  return IntRange::everything();
}

} // namespace tlc
