#include "Simplify.h"
#include "CheckedMath.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace tlc {

namespace {

// c1 * c2 when it fits; the rules that need a product bail out when it does not.
std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

// Coefficient arithmetic wraps like the generated code would instead of overflowing
// (undefined behaviour) on absurd user constants.
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

struct Term {
  IntExpr atom;
  int64_t coeff;
};

// A linear combination of non-linear atoms: the normal form of + - and * by constants.
struct LinearSum {
  llvm::SmallVector<Term, 4> terms;
  int64_t constant = 0;

  void add(const LinearSum &other, int64_t scale) {
    for (const Term &t : other.terms)
      terms.push_back({t.atom, wrapMul(t.coeff, scale)});
    constant = wrapAdd(constant, wrapMul(other.constant, scale));
  }
  // gcd of every coefficient and the constant (0 for the zero sum).
  int64_t gcd() const {
    int64_t g = std::llabs(constant);
    for (const Term &t : terms)
      g = std::gcd(g, std::llabs(t.coeff));
    return g;
  }
};

// `atom` read as floormod(floordiv(x, div), mod); mod == 0 means "no modulus". Every atom
// has such a reading (x = atom, div = 1, mod = 0); digit recombination matches on them.
struct DivModView {
  IntExpr x;
  int64_t div = 1;
  int64_t mod = 0;
};

DivModView viewAsDivMod(const IntExpr &atom) {
  DivModView view{atom, 1, 0};
  IntExpr inner = atom;
  if (inner.kind() == IntExprKind::FloorMod && inner.rhs().isConst() &&
      inner.rhs().constValue() > 0) {
    view.mod = inner.rhs().constValue();
    inner = inner.lhs();
  }
  if (inner.kind() == IntExprKind::FloorDiv && inner.rhs().isConst() &&
      inner.rhs().constValue() > 0) {
    view.div = inner.rhs().constValue();
    inner = inner.lhs();
  }
  view.x = inner;
  return view;
}

class Simplifier {
public:
  explicit Simplifier(const VarBounds &bounds) : bounds(bounds) {}

  IntExpr visit(const IntExpr &e) {
    if (e.isVar()) {
      // A variable bound to a single value (a replica index of extent 1) is that value.
      IntRange r = range(e);
      return r.isPoint() ? IntExpr(r.lo) : e;
    }
    if (!e.isBinary())
      return e;
    IntExpr a = visit(e.lhs());
    IntExpr b = visit(e.rhs());
    return apply(e.kind(), a, b);
  }

private:
  // Simplifies `a kind b` where a and b are already simplified.
  IntExpr apply(IntExprKind kind, const IntExpr &a, const IntExpr &b) {
    if (a.isConst() && b.isConst())
      if (auto folded = foldIntOp(kind, a.constValue(), b.constValue()))
        return *folded;
    switch (kind) {
    case IntExprKind::Add:
    case IntExprKind::Sub: {
      LinearSum sum = toSum(a);
      sum.add(toSum(b), kind == IntExprKind::Add ? 1 : -1);
      return fromSum(std::move(sum));
    }
    case IntExprKind::Mul: return mul(a, b);
    case IntExprKind::FloorDiv: return floorDivide(a, b);
    case IntExprKind::FloorMod: return floorModulo(a, b);
    case IntExprKind::Min:
    case IntExprKind::Max: return minMax(kind, a, b);
    case IntExprKind::Xor: return xorOf({a, b});
    case IntExprKind::And:
    case IntExprKind::Or: return andOr(kind, a, b);
    case IntExprKind::Shl:
    case IntExprKind::Shr: return shift(kind, a, b);
    case IntExprKind::Const:
    case IntExprKind::Var: break;
    }
    return IntExpr::binary(kind, a, b);
  }

  IntRange range(const IntExpr &e) const { return boundOf(e, bounds); }

  IntExpr add(const IntExpr &a, const IntExpr &b) { return apply(IntExprKind::Add, a, b); }

  // ------------------------------------------------------------------ linear sums

  static LinearSum toSum(const IntExpr &e) {
    LinearSum sum;
    switch (e.kind()) {
    case IntExprKind::Const: sum.constant = e.constValue(); return sum;
    case IntExprKind::Add:
    case IntExprKind::Sub:
      sum = toSum(e.lhs());
      sum.add(toSum(e.rhs()), e.kind() == IntExprKind::Add ? 1 : -1);
      return sum;
    case IntExprKind::Mul:
      if (e.rhs().isConst()) {
        sum.add(toSum(e.lhs()), e.rhs().constValue());
        return sum;
      }
      break;
    default: break;
    }
    sum.terms.push_back({e, 1});
    return sum;
  }

  // Sorts terms by atom and adds up the coefficients of equal atoms.
  static void mergeEqualAtoms(LinearSum &sum) {
    llvm::sort(sum.terms, [](const Term &x, const Term &y) { return x.atom < y.atom; });
    llvm::SmallVector<Term, 4> merged;
    for (Term &t : sum.terms) {
      if (!merged.empty() && merged.back().atom == t.atom)
        merged.back().coeff = wrapAdd(merged.back().coeff, t.coeff);
      else
        merged.push_back(std::move(t));
    }
    llvm::erase_if(merged, [](const Term &t) { return t.coeff == 0; });
    sum.terms = std::move(merged);
  }

  // Finds two terms that are adjacent digits of one value and fuses them:
  //   k*m * floormod(floordiv(x, a*m), n) + k * floormod(floordiv(x, a), m)
  //     = k * floormod(floordiv(x, a), m*n)        (no outer floormod: floordiv(x, a))
  bool recombineOneDigitPair(LinearSum &sum) {
    for (size_t lowIdx = 0; lowIdx < sum.terms.size(); ++lowIdx) {
      DivModView low = viewAsDivMod(sum.terms[lowIdx].atom);
      if (low.mod == 0)
        continue;
      auto highDiv = checkedMul(low.div, low.mod);
      auto highCoeff = checkedMul(sum.terms[lowIdx].coeff, low.mod);
      if (!highDiv || !highCoeff)
        continue;
      for (size_t highIdx = 0; highIdx < sum.terms.size(); ++highIdx) {
        if (highIdx == lowIdx || sum.terms[highIdx].coeff != *highCoeff)
          continue;
        DivModView high = viewAsDivMod(sum.terms[highIdx].atom);
        if (high.div != *highDiv || high.x != low.x)
          continue;
        IntExpr fused = floorDivide(low.x, IntExpr(low.div));
        if (high.mod != 0) {
          auto mod = checkedMul(low.mod, high.mod);
          if (!mod)
            continue;
          fused = floorModulo(fused, IntExpr(*mod));
        }
        int64_t coeff = sum.terms[lowIdx].coeff;
        sum.terms.erase(sum.terms.begin() + std::max(lowIdx, highIdx));
        sum.terms.erase(sum.terms.begin() + std::min(lowIdx, highIdx));
        sum.add(toSum(fused), coeff);
        return true;
      }
    }
    return false;
  }

  IntExpr fromSum(LinearSum sum) {
    mergeEqualAtoms(sum);
    // Each fusion removes a floordiv/floormod atom, so this terminates; the cap only
    // guards against a rule interaction nobody foresaw.
    for (int round = 0; round < 64 && recombineOneDigitPair(sum); ++round)
      mergeEqualAtoms(sum);

    llvm::stable_sort(sum.terms, [](const Term &x, const Term &y) {
      if (x.coeff != y.coeff)
        return x.coeff > y.coeff;
      return x.atom < y.atom;
    });
    IntExpr result;
    // All coefficients negative: lead with the constant (`8 - x`, not `x * -1 + 8`).
    if (!sum.terms.empty() && sum.terms.front().coeff < 0 && sum.constant > 0) {
      result = sum.constant;
      sum.constant = 0;
    }
    for (const Term &t : sum.terms) {
      if (!result) {
        result = t.coeff == 1 ? t.atom : IntExpr::binary(IntExprKind::Mul, t.atom, t.coeff);
        continue;
      }
      int64_t magnitude = t.coeff < 0 ? -t.coeff : t.coeff;
      IntExpr scaled =
          magnitude == 1 ? t.atom : IntExpr::binary(IntExprKind::Mul, t.atom, magnitude);
      result = IntExpr::binary(t.coeff < 0 ? IntExprKind::Sub : IntExprKind::Add, result,
                               scaled);
    }
    if (!result)
      return sum.constant;
    if (sum.constant == 0)
      return result;
    // `x - 3` rather than `x + (-3)` (INT64_MIN has no negation and stays added).
    bool subtract = sum.constant < 0 && sum.constant != IntRange::kNegInf;
    return IntExpr::binary(subtract ? IntExprKind::Sub : IntExprKind::Add, result,
                           subtract ? -sum.constant : sum.constant);
  }

  // ------------------------------------------------------------------ products

  IntExpr mul(IntExpr a, IntExpr b) {
    if (a.isConst())
      std::swap(a, b);
    if (b.isConst()) {
      int64_t c = b.constValue();
      if (c == 0)
        return 0;
      if (c == 1)
        return a;
      LinearSum sum;
      sum.add(toSum(a), c);
      return fromSum(std::move(sum));
    }
    if (b < a)
      std::swap(a, b);
    return IntExpr::binary(IntExprKind::Mul, a, b);
  }

  // ------------------------------------------------------------------ division

  // Splits the numerator's terms into the multiples of c (returned divided by c, with the
  // constant's quotient) and the rest (with the constant's remainder in [0, c)).
  static std::pair<LinearSum, LinearSum> splitByDivisor(const LinearSum &sum, int64_t c) {
    LinearSum quotient, rest;
    for (const Term &t : sum.terms) {
      if (t.coeff % c == 0)
        quotient.terms.push_back({t.atom, t.coeff / c});
      else
        rest.terms.push_back(t);
    }
    quotient.constant = floorDiv(sum.constant, c);
    rest.constant = floorMod(sum.constant, c);
    return {quotient, rest};
  }

  // Tries the digit split: every term s*x with s | c (1 < s < c) is rewritten as
  //   c * floordiv(x, c/s) + s * floormod(x, c/s).
  // Succeeds when what remains below c provably lies in [0, c); returns (quotient, rest).
  std::optional<std::pair<IntExpr, IntExpr>> splitDigits(const LinearSum &sum, int64_t c) {
    LinearSum quotient, rest;
    bool anySplit = false;
    for (const Term &t : sum.terms) {
      // s == 1 would only restate the division being simplified.
      if (t.coeff > 1 && t.coeff < c && c % t.coeff == 0) {
        int64_t f = c / t.coeff;
        quotient.terms.push_back({floorDivide(t.atom, IntExpr(f)), 1});
        rest.terms.push_back({floorModulo(t.atom, IntExpr(f)), t.coeff});
        anySplit = true;
      } else {
        rest.terms.push_back(t);
      }
    }
    rest.constant = sum.constant;
    if (!anySplit)
      return std::nullopt;
    IntExpr restExpr = fromSum(std::move(rest));
    if (!range(restExpr).within(0, c - 1))
      return std::nullopt;
    return std::make_pair(fromSum(std::move(quotient)), restExpr);
  }

  // The rules below need a positive constant divisor; anything else stays as written.
  static std::optional<IntExpr> foldOrKeep(IntExprKind kind, const IntExpr &a,
                                           const IntExpr &b) {
    if (a.isConst() && b.isConst()) {
      if (auto folded = foldIntOp(kind, a.constValue(), b.constValue()))
        return IntExpr(*folded);
      return IntExpr::binary(kind, a, b);
    }
    if (!b.isConst() || b.constValue() <= 0)
      return IntExpr::binary(kind, a, b);
    return std::nullopt;
  }

  IntExpr floorDivide(const IntExpr &a, const IntExpr &b) {
    if (auto kept = foldOrKeep(IntExprKind::FloorDiv, a, b))
      return *kept;
    int64_t c = b.constValue();
    if (c == 1)
      return a;
    IntRange r = range(a);
    if (r.isFinite() && floorDiv(r.lo, c) == floorDiv(r.hi, c))
      return floorDiv(r.lo, c);

    switch (a.kind()) {
    case IntExprKind::FloorDiv:
      if (a.rhs().isConst() && a.rhs().constValue() > 0)
        if (auto divisor = checkedMul(a.rhs().constValue(), c))
          return floorDivide(a.lhs(), IntExpr(*divisor));
      break;
    case IntExprKind::FloorMod:
      if (a.rhs().isConst() && a.rhs().constValue() > 0 && a.rhs().constValue() % c == 0)
        return floorModulo(floorDivide(a.lhs(), b), IntExpr(a.rhs().constValue() / c));
      break;
    case IntExprKind::Xor:
      if (isPowerOfTwo(c))
        return xorOf({floorDivide(a.lhs(), b), floorDivide(a.rhs(), b)});
      break;
    default: break;
    }

    LinearSum sum = toSum(a);
    auto [quotient, rest] = splitByDivisor(sum, c);
    if (!quotient.terms.empty() || quotient.constant != 0)
      return add(fromSum(quotient), floorDivide(fromSum(rest), b));
    if (int64_t g = std::gcd(sum.gcd(), c); g > 1) {
      LinearSum reduced;
      reduced.add(sum, 1);
      for (Term &t : reduced.terms)
        t.coeff /= g;
      reduced.constant /= g;
      return floorDivide(fromSum(std::move(reduced)), IntExpr(c / g));
    }
    if (auto split = splitDigits(sum, c))
      return split->first;
    return IntExpr::binary(IntExprKind::FloorDiv, a, b);
  }

  IntExpr floorModulo(const IntExpr &a, const IntExpr &b) {
    if (auto kept = foldOrKeep(IntExprKind::FloorMod, a, b))
      return *kept;
    int64_t c = b.constValue();
    if (c == 1)
      return 0;
    IntRange r = range(a);
    if (r.isFinite() && floorDiv(r.lo, c) == floorDiv(r.hi, c)) {
      int64_t k = floorDiv(r.lo, c);
      return k == 0 ? a : apply(IntExprKind::Sub, a, IntExpr(k * c));
    }

    switch (a.kind()) {
    case IntExprKind::FloorMod:
      if (a.rhs().isConst() && a.rhs().constValue() % c == 0)
        return floorModulo(a.lhs(), b);
      break;
    case IntExprKind::Xor:
      if (isPowerOfTwo(c))
        return xorOf({floorModulo(a.lhs(), b), floorModulo(a.rhs(), b)});
      break;
    default: break;
    }

    LinearSum sum = toSum(a);
    auto [quotient, rest] = splitByDivisor(sum, c);
    if (!quotient.terms.empty() || rest.constant != sum.constant)
      return floorModulo(fromSum(std::move(rest)), b);
    if (int64_t g = std::gcd(sum.gcd(), c); g > 1) {
      LinearSum reduced;
      reduced.add(sum, 1);
      for (Term &t : reduced.terms)
        t.coeff /= g;
      reduced.constant /= g;
      return mul(floorModulo(fromSum(std::move(reduced)), IntExpr(c / g)), g);
    }
    if (auto split = splitDigits(sum, c))
      return split->second;
    return IntExpr::binary(IntExprKind::FloorMod, a, b);
  }

  // ------------------------------------------------------------------ min / max

  IntExpr minMax(IntExprKind kind, IntExpr a, IntExpr b) {
    if (a == b)
      return a;
    IntRange ra = range(a), rb = range(b);
    bool isMin = kind == IntExprKind::Min;
    if (ra.hi <= rb.lo)
      return isMin ? a : b;
    if (rb.hi <= ra.lo)
      return isMin ? b : a;
    if (b < a)
      std::swap(a, b);
    return IntExpr::binary(kind, a, b);
  }

  // ------------------------------------------------------------------ bit operations

  // True if every value of `e` is a multiple of `m` (judged from its linear form).
  static bool isMultipleOf(const IntExpr &e, int64_t m) {
    int64_t g = toSum(e).gcd();
    return g != 0 ? g % m == 0 : true;
  }

  IntExpr xorOf(llvm::SmallVector<IntExpr, 4> operands) {
    llvm::SmallVector<IntExpr, 4> flat;
    int64_t constant = 0;
    while (!operands.empty()) {
      IntExpr e = operands.pop_back_val();
      if (e.kind() == IntExprKind::Xor) {
        operands.push_back(e.lhs());
        operands.push_back(e.rhs());
      } else if (e.isConst()) {
        constant ^= e.constValue();
      } else {
        flat.push_back(e);
      }
    }
    llvm::sort(flat);
    // x ^ x == 0: drop equal pairs.
    llvm::SmallVector<IntExpr, 4> kept;
    for (IntExpr &e : flat) {
      if (!kept.empty() && kept.back() == e)
        kept.pop_back();
      else
        kept.push_back(std::move(e));
    }
    if (constant != 0)
      kept.push_back(constant);

    // An operand below 2^k against operands whose low k bits are zero: XOR is addition.
    for (size_t i = 0; i < kept.size() && kept.size() > 1; ++i) {
      IntRange r = range(kept[i]);
      // No power of two above 2^62 fits in an int64_t.
      if (!r.isNonNegative() || !r.hasFiniteHi() || r.hi >= kMaxPowerOf2)
        continue;
      int64_t span = powerOf2Ceil(r.hi + 1); // the smallest power of two above r.hi
      bool othersAligned = true;
      for (size_t j = 0; j < kept.size() && othersAligned; ++j)
        othersAligned = j == i || isMultipleOf(kept[j], span);
      if (!othersAligned)
        continue;
      IntExpr low = kept[i];
      kept.erase(kept.begin() + i);
      return add(xorOf(std::move(kept)), low);
    }

    if (kept.empty())
      return 0;
    IntExpr result = kept.front();
    for (size_t i = 1; i < kept.size(); ++i)
      result = IntExpr::binary(IntExprKind::Xor, result, kept[i]);
    return result;
  }

  IntExpr andOr(IntExprKind kind, IntExpr a, IntExpr b) {
    if (a.isConst())
      std::swap(a, b);
    if (a == b)
      return a;
    if (b.isConst()) {
      int64_t c = b.constValue();
      if (kind == IntExprKind::And) {
        if (c == 0)
          return 0;
        if (c == -1)
          return a;
        // x & (2^k - 1) keeps the low k bits: floormod(x, 2^k) in two's complement.
        if (c > 0 && isPowerOfTwo(c + 1))
          return floorModulo(a, IntExpr(c + 1));
      } else if (c == 0) {
        return a;
      }
      return IntExpr::binary(kind, a, b);
    }
    if (b < a)
      std::swap(a, b);
    return IntExpr::binary(kind, a, b);
  }

  IntExpr shift(IntExprKind kind, const IntExpr &a, const IntExpr &b) {
    if (!b.isConst() || b.constValue() < 0 || b.constValue() > 62)
      return IntExpr::binary(kind, a, b);
    IntExpr scale = int64_t(1) << b.constValue();
    // Arithmetic right shift is floor division by 2^k; left shift is multiplication.
    return kind == IntExprKind::Shl ? mul(a, scale) : floorDivide(a, scale);
  }

  const VarBounds &bounds;
};

} // namespace

IntExpr simplify(const IntExpr &e, const VarBounds &bounds) {
  return Simplifier(bounds).visit(e);
}

bool proveEqual(const IntExpr &a, const IntExpr &b, const VarBounds &bounds) {
  return simplify(a - b, bounds).isConst(0);
}

} // namespace tlc
