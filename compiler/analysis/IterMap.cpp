#include "IterMap.h"

#include "Bounds.h"
#include "CheckedMath.h"
#include "Simplify.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <cassert>
#include <map>
#include <set>

namespace tlc {

namespace {

int log2Exact(int64_t v) { return static_cast<int>(log2Ceil(v)); }

// Records the first failure reason; returns nullopt so callers can `return fail(...)`.
class FailureSink {
public:
  explicit FailureSink(std::string *whyNot) : whyNot(whyNot) {}
  std::nullopt_t operator()(const llvm::Twine &reason) const {
    if (whyNot && whyNot->empty())
      *whyNot = reason.str();
    return std::nullopt;
  }

private:
  std::string *whyNot;
};

// Splits digit d at relative factor f (1 < f < extent, f | extent) into its low and high
// parts; every XORed split is cut at the same place, which is exact because XOR digits
// have power-of-two extents.
std::pair<IterDigit, IterDigit> splitDigit(const IterDigit &d, int64_t f) {
  IterDigit low{{}, d.scale};
  IterDigit high{{}, d.scale * f};
  for (const IterSplit &s : d.splits) {
    low.splits.push_back({s.var, s.lower, f});
    high.splits.push_back({s.var, s.lower * f, s.extent / f});
  }
  return {low, high};
}

// Removes pairs of identical splits (x ^ x == 0) from an XOR digit.
void cancelEqualSplits(IterDigit &d) {
  for (size_t i = 0; i < d.splits.size(); ++i) {
    for (size_t j = i + 1; j < d.splits.size(); ++j) {
      if (d.splits[i].sameAs(d.splits[j])) {
        d.splits.erase(d.splits.begin() + j);
        d.splits.erase(d.splits.begin() + i);
        --i;
        break;
      }
    }
  }
}

class IterSumDetector {
public:
  IterSumDetector(llvm::ArrayRef<IterVarDomain> domain, std::string *whyNot)
      : domain(domain), fail(whyNot) {}

  std::optional<IterSum> detect(const IntExpr &e) {
    switch (e.kind()) {
    case IntExprKind::Const: {
      IterSum sum;
      sum.offset = e.constValue();
      return sum;
    }
    case IntExprKind::Var: return detectVar(e);
    case IntExprKind::Add:
    case IntExprKind::Sub: {
      auto lhs = detect(e.lhs());
      auto rhs = lhs ? detect(e.rhs()) : std::nullopt;
      if (!rhs)
        return std::nullopt;
      int64_t sign = e.kind() == IntExprKind::Add ? 1 : -1;
      for (IterDigit &d : rhs->digits) {
        d.scale *= sign;
        lhs->digits.push_back(std::move(d));
      }
      lhs->offset += sign * rhs->offset;
      return lhs;
    }
    case IntExprKind::Mul: {
      const IntExpr &factor = e.rhs().isConst() ? e.rhs() : e.lhs();
      const IntExpr &other = e.rhs().isConst() ? e.lhs() : e.rhs();
      if (!factor.isConst())
        return fail("`" + e.str() + "` multiplies two indices");
      auto sum = detect(other);
      if (!sum)
        return std::nullopt;
      for (IterDigit &d : sum->digits)
        d.scale *= factor.constValue();
      sum->offset *= factor.constValue();
      llvm::erase_if(sum->digits, [](const IterDigit &d) { return d.scale == 0; });
      return sum;
    }
    case IntExprKind::FloorDiv:
    case IntExprKind::FloorMod: {
      if (!e.rhs().isConst() || e.rhs().constValue() <= 0)
        return fail("`" + e.str() + "` divides by something other than a positive constant");
      auto sum = detect(e.lhs());
      if (!sum)
        return std::nullopt;
      return divMod(*sum, e.rhs().constValue(), e.kind() == IntExprKind::FloorDiv, e);
    }
    case IntExprKind::Xor: {
      auto lhs = detect(e.lhs());
      auto rhs = lhs ? detect(e.rhs()) : std::nullopt;
      if (!rhs)
        return std::nullopt;
      return xorSums(*lhs, *rhs, e);
    }
    default: break;
    }
    return fail("`" + e.str() + "` is not an affine, div/mod or XOR index expression");
  }

private:
  std::optional<IterSum> detectVar(const IntExpr &v) {
    for (const IterVarDomain &dom : domain) {
      if (dom.var.varId() != v.varId())
        continue;
      IterSum sum;
      if (dom.extent > 1)
        sum.digits.push_back({{{v, 1, dom.extent}}, 1});
      return sum;
    }
    return fail("`" + v.str() + "` is not one of the layout's indices");
  }

  // floordiv or floormod by c: digits at or above c move (divided) to the quotient, those
  // below stay in the remainder, and a digit straddling c is split in two. Exact only when
  // the remainder provably stays in [0, c).
  std::optional<IterSum> divMod(const IterSum &sum, int64_t c, bool isDiv, const IntExpr &e) {
    IterSum quotient, rest;
    quotient.offset = floorDiv(sum.offset, c);
    rest.offset = floorMod(sum.offset, c);
    for (const IterDigit &d : sum.digits) {
      int64_t s = d.scale;
      if (s <= 0)
        return fail("`" + e.str() + "` divides a sum with a negative term");
      if (s % c == 0) {
        quotient.digits.push_back({d.splits, s / c});
      } else if (c % s == 0 && d.extent() <= c / s) {
        rest.digits.push_back(d);
      } else if (c % s == 0 && d.extent() % (c / s) == 0) {
        auto [low, high] = splitDigit(d, c / s);
        rest.digits.push_back(std::move(low));
        high.scale = 1;
        quotient.digits.push_back(std::move(high));
      } else {
        return fail("in `" + e.str() + "` a digit of scale " + llvm::Twine(s) +
                    " and extent " + llvm::Twine(d.extent()) + " does not align with " +
                    llvm::Twine(c));
      }
    }
    int64_t restMax = rest.offset;
    for (const IterDigit &d : rest.digits)
      restMax += (d.extent() - 1) * d.scale;
    if (restMax >= c)
      return fail("in `" + e.str() + "` the digits below " + llvm::Twine(c) + " reach " +
                  llvm::Twine(restMax));
    return isDiv ? quotient : rest;
  }

  // Bit range [lo, hi) of a digit with power-of-two scale and extent.
  static std::optional<std::pair<int, int>> bitRange(const IterDigit &d) {
    if (!isPowerOfTwo(d.scale) || !isPowerOfTwo(d.extent()))
      return std::nullopt;
    int lo = log2Exact(d.scale);
    return std::make_pair(lo, lo + log2Exact(d.extent()));
  }

  // Cuts every digit of `sum` at each boundary bit inside its range.
  static llvm::SmallVector<IterDigit, 4> cutAtBits(const IterSum &sum,
                                                   const std::set<int> &boundaries) {
    llvm::SmallVector<IterDigit, 4> out;
    for (const IterDigit &d : sum.digits) {
      auto [lo, hi] = *bitRange(d);
      IterDigit rest = d;
      int restLo = lo;
      for (auto it = boundaries.upper_bound(lo); it != boundaries.end() && *it < hi; ++it) {
        auto [low, high] = splitDigit(rest, int64_t(1) << (*it - restLo));
        out.push_back(std::move(low));
        rest = std::move(high);
        restLo = *it;
      }
      out.push_back(std::move(rest));
    }
    return out;
  }

  // XOR acts bit by bit, so it distributes over digits occupying disjoint bit ranges: cut
  // both operands at every digit boundary of either, then XOR the pieces that coincide.
  std::optional<IterSum> xorSums(const IterSum &a, const IterSum &b, const IntExpr &e) {
    if (a.offset != 0 || b.offset != 0)
      return fail("`" + e.str() + "` XORs a constant offset");
    std::set<int> boundaries;
    for (const IterSum *operand : {&a, &b}) {
      llvm::SmallVector<std::pair<int, int>, 4> ranges;
      for (const IterDigit &d : operand->digits) {
        auto range = bitRange(d);
        if (!range)
          return fail("`" + e.str() + "` XORs a digit that is not a power-of-two bit field");
        ranges.push_back(*range);
        boundaries.insert(range->first);
        boundaries.insert(range->second);
      }
      llvm::sort(ranges);
      for (size_t i = 1; i < ranges.size(); ++i)
        if (ranges[i].first < ranges[i - 1].second)
          return fail("`" + e.str() + "` XORs a sum whose digits overlap");
    }
    std::map<int, IterDigit> byLowBit;
    for (const IterSum *operand : {&a, &b}) {
      for (IterDigit &piece : cutAtBits(*operand, boundaries)) {
        int lo = bitRange(piece)->first;
        auto it = byLowBit.find(lo);
        if (it == byLowBit.end()) {
          byLowBit.emplace(lo, std::move(piece));
          continue;
        }
        it->second.splits.append(piece.splits.begin(), piece.splits.end());
        cancelEqualSplits(it->second);
      }
    }
    IterSum result;
    for (auto &entry : byLowBit)
      if (!entry.second.splits.empty())
        result.digits.push_back(std::move(entry.second));
    return result;
  }

  llvm::ArrayRef<IterVarDomain> domain;
  FailureSink fail;
};

// Cuts the digits of several sums so that, for each variable, every split is one of its
// elementary pieces: no split of a variable straddles a cut point of another split of the
// same variable. Cutting one member of an XOR digit cuts its partners too, which adds cut
// points to their variables, so it iterates to a fixed point.
class SplitRefiner {
public:
  SplitRefiner(llvm::ArrayRef<IterVarDomain> domain, std::string *whyNot)
      : domain(domain), cuts(domain.size()), fail(whyNot) {
    for (size_t v = 0; v < domain.size(); ++v) {
      cuts[v].insert(1);
      cuts[v].insert(domain[v].extent);
    }
  }

  std::optional<unsigned> indexOf(const IntExpr &var) const {
    for (size_t v = 0; v < domain.size(); ++v)
      if (domain[v].var.varId() == var.varId())
        return v;
    return std::nullopt;
  }

  bool refine(llvm::MutableArrayRef<IterSum> sums) {
    for (const IterSum &sum : sums)
      for (const IterDigit &d : sum.digits)
        for (const IterSplit &s : d.splits)
          addCuts(s);
    bool changed = true;
    while (changed) {
      changed = false;
      for (IterSum &sum : sums) {
        for (size_t i = 0; i < sum.digits.size(); ++i) {
          auto f = cutFactor(sum.digits[i]);
          if (!f)
            return false;
          if (*f == 1)
            continue;
          auto [low, high] = splitDigit(sum.digits[i], *f);
          for (const IterDigit *part : {&low, &high})
            for (const IterSplit &s : part->splits)
              addCuts(s);
          sum.digits[i] = std::move(low);
          sum.digits.insert(sum.digits.begin() + i + 1, std::move(high));
          changed = true;
        }
      }
    }
    return true;
  }

  // The elementary pieces of variable v (lower, extent), lowest first; nullopt if its cut
  // points do not divide each other.
  std::optional<llvm::SmallVector<std::pair<int64_t, int64_t>, 4>> pieces(unsigned v) const {
    llvm::SmallVector<std::pair<int64_t, int64_t>, 4> out;
    int64_t prev = 0;
    for (int64_t cut : cuts[v]) {
      if (prev != 0) {
        if (cut % prev != 0) {
          fail("the splits of `" + domain[v].var.str() + "` at " + llvm::Twine(prev) +
               " and " + llvm::Twine(cut) + " do not nest");
          return std::nullopt;
        }
        out.push_back({prev, cut / prev});
      }
      prev = cut;
    }
    return out;
  }

private:
  void addCuts(const IterSplit &s) {
    if (auto v = indexOf(s.var)) {
      cuts[*v].insert(s.lower);
      cuts[*v].insert(s.lower * s.extent);
    }
  }

  // 1 if no split of d straddles a cut point, the relative factor to cut at otherwise, and
  // nullopt if the cut does not divide the split.
  std::optional<int64_t> cutFactor(const IterDigit &d) const {
    for (const IterSplit &s : d.splits) {
      unsigned v = *indexOf(s.var);
      auto it = cuts[v].upper_bound(s.lower);
      if (it == cuts[v].end() || *it >= s.lower * s.extent)
        continue;
      int64_t f = *it / s.lower;
      if (*it % s.lower != 0 || s.extent % f != 0) {
        fail("the splits of `" + s.var.str() + "` do not nest");
        return std::nullopt;
      }
      return f;
    }
    return 1;
  }

  llvm::ArrayRef<IterVarDomain> domain;
  std::vector<std::set<int64_t>> cuts;
  FailureSink fail;
};

using PieceKey = std::pair<unsigned, int64_t>; // (variable index, lower)

} // namespace

IntExpr IterSplit::toExpr() const { return floormod(floordiv(var, lower), extent); }

bool IterSplit::sameAs(const IterSplit &o) const {
  return var.varId() == o.var.varId() && lower == o.lower && extent == o.extent;
}

IntExpr IterDigit::toExpr() const {
  IntExpr value = splits.front().toExpr();
  for (size_t i = 1; i < splits.size(); ++i)
    value = value ^ splits[i].toExpr();
  return value * scale;
}

IntExpr IterSum::toExpr() const {
  IntExpr result = offset;
  for (const IterDigit &d : digits)
    result = result + d.toExpr();
  return result;
}

std::optional<int64_t> IterSum::denseExtent() const {
  if (offset != 0)
    return std::nullopt;
  llvm::SmallVector<const IterDigit *, 4> sorted;
  for (const IterDigit &d : digits)
    sorted.push_back(&d);
  llvm::sort(sorted, [](const IterDigit *a, const IterDigit *b) { return a->scale < b->scale; });
  int64_t expected = 1;
  for (const IterDigit *d : sorted) {
    if (d->scale != expected)
      return std::nullopt;
    expected *= d->extent();
  }
  return expected;
}

std::optional<IterSum> detectIterSum(const IntExpr &e, llvm::ArrayRef<IterVarDomain> domain,
                                     std::string *whyNot) {
  return IterSumDetector(domain, whyNot).detect(e);
}

VarBounds boundsOf(llvm::ArrayRef<IterVarDomain> domain) {
  VarBounds bounds;
  for (const IterVarDomain &d : domain)
    bounds.bindExtent(d.var, d.extent);
  return bounds;
}

std::optional<IntExpr> canonicalizeIterSum(const IntExpr &e,
                                           llvm::ArrayRef<IterVarDomain> domain) {
  auto sum = detectIterSum(e, domain);
  if (!sum)
    return std::nullopt;
  return simplify(sum->toExpr(), boundsOf(domain));
}

std::optional<IterMapInverse> inverseIterMap(llvm::ArrayRef<IntExpr> outputs,
                                             llvm::ArrayRef<IterVarDomain> domain,
                                             llvm::ArrayRef<IntExpr> outputVars,
                                             std::string *whyNot) {
  FailureSink fail(whyNot);
  assert(outputs.size() == outputVars.size());
  llvm::SmallVector<IterSum, 4> sums;
  IterMapInverse inverse;
  for (size_t o = 0; o < outputs.size(); ++o) {
    auto sum = detectIterSum(outputs[o], domain, whyNot);
    if (!sum)
      return std::nullopt;
    auto extent = sum->denseExtent();
    if (!extent)
      return fail("output " + llvm::Twine(o) + " (`" + outputs[o].str() +
                  "`) does not cover a contiguous range exactly once");
    inverse.outputExtents.push_back(*extent);
    sums.push_back(std::move(*sum));
  }

  int64_t domainSize = 1, imageSize = 1;
  for (const IterVarDomain &d : domain)
    domainSize *= d.extent;
  for (int64_t e : inverse.outputExtents)
    imageSize *= e;
  if (domainSize != imageSize)
    return fail("the map sends " + llvm::Twine(domainSize) + " indices into " +
                llvm::Twine(imageSize) + " outputs, so it is not a bijection");

  SplitRefiner refiner(domain, whyNot);
  if (!refiner.refine(sums))
    return std::nullopt;

  // Solve for each piece: plain digits give it directly, an XOR digit gives its last
  // unknown member once the others are known.
  std::map<PieceKey, IntExpr> known;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t o = 0; o < sums.size(); ++o) {
      for (const IterDigit &d : sums[o].digits) {
        IntExpr value = floormod(floordiv(outputVars[o], d.scale), d.extent());
        const IterSplit *unknown = nullptr;
        int numUnknown = 0;
        for (const IterSplit &s : d.splits) {
          PieceKey key{*refiner.indexOf(s.var), s.lower};
          if (known.count(key)) {
            value = value ^ known[key];
          } else {
            unknown = &s;
            ++numUnknown;
          }
        }
        if (numUnknown == 1) {
          known[{*refiner.indexOf(unknown->var), unknown->lower}] = value;
          progress = true;
        }
      }
    }
  }

  VarBounds outputBounds;
  for (size_t o = 0; o < outputVars.size(); ++o)
    outputBounds.bindExtent(outputVars[o], inverse.outputExtents[o]);
  for (unsigned v = 0; v < domain.size(); ++v) {
    auto pieces = refiner.pieces(v);
    if (!pieces)
      return std::nullopt;
    IntExpr value = 0;
    for (auto [lower, extent] : *pieces) {
      auto it = known.find({v, lower});
      if (it == known.end())
        return fail("the digit of `" + domain[v].var.str() + "` at " + llvm::Twine(lower) +
                    " (extent " + llvm::Twine(extent) +
                    ") cannot be recovered from the outputs");
      value = value + it->second * lower;
    }
    inverse.inputs.push_back(simplify(value, outputBounds));
  }
  return inverse;
}

std::optional<llvm::SmallVector<IterSplit, 4>>
unusedSplits(llvm::ArrayRef<IntExpr> exprs, llvm::ArrayRef<IterVarDomain> domain,
             llvm::ArrayRef<IntExpr> ignored, std::string *whyNot) {
  llvm::SmallVector<IterSum, 4> sums;
  for (const IntExpr &e : exprs) {
    auto sum = detectIterSum(e, domain, whyNot);
    if (!sum)
      return std::nullopt;
    sums.push_back(std::move(*sum));
  }
  SplitRefiner refiner(domain, whyNot);
  if (!refiner.refine(sums))
    return std::nullopt;
  std::set<PieceKey> used;
  for (const IterSum &sum : sums)
    for (const IterDigit &d : sum.digits)
      for (const IterSplit &s : d.splits)
        used.insert({*refiner.indexOf(s.var), s.lower});

  llvm::SmallVector<IterSplit, 4> result;
  for (unsigned v = 0; v < domain.size(); ++v) {
    bool skip = llvm::any_of(ignored, [&](const IntExpr &var) {
      return var.varId() == domain[v].var.varId();
    });
    if (skip)
      continue;
    auto pieces = refiner.pieces(v);
    if (!pieces)
      return std::nullopt;
    for (auto it = pieces->rbegin(); it != pieces->rend(); ++it)
      if (!used.count({v, it->first}))
        result.push_back({domain[v].var, it->first, it->second});
  }
  return result;
}

} // namespace tlc
