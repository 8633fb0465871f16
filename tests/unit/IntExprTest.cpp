// Integer index expressions: builders, evaluation, bounds, the simplifier, the printers
// and the iterator-map analysis under the layout algebra.
#include "analysis/Bounds.h"
#include "analysis/IntExpr.h"
#include "analysis/IntExprPrinter.h"
#include "analysis/IterMap.h"
#include "analysis/Simplify.h"

#include <catch2/catch.hpp>

#include <random>

using namespace tlc;

namespace {

// Index variables i, j in [0, 64), a in [0, 4096), and u, v without bounds.
struct Vars {
  IntExpr i = IntExpr::var("i");
  IntExpr j = IntExpr::var("j");
  IntExpr a = IntExpr::var("a");
  IntExpr u = IntExpr::var("u");
  IntExpr v = IntExpr::var("v");
  VarBounds bounds;
  Vars() {
    bounds.bindExtent(i, 64);
    bounds.bindExtent(j, 64);
    bounds.bindExtent(a, 4096);
  }
  std::string simplified(const IntExpr &e) const { return simplify(e, bounds).str(); }
};

} // namespace

TEST_CASE("IntExpr builders fold constants and nothing else", "[intexpr]") {
  IntExpr i = IntExpr::var("i");
  CHECK((IntExpr(3) + 4).isConst(7));
  CHECK((IntExpr(-7) / 2).isConst(-4));
  CHECK((IntExpr(1) << 5).isConst(32));
  IntExpr sum = i + 0;
  CHECK(sum.kind() == IntExprKind::Add);
  CHECK(sum.str() == "i + 0");
  // Division by zero is not folded away: it stays in the tree.
  CHECK((IntExpr(1) / 0).kind() == IntExprKind::FloorDiv);
}

TEST_CASE("variables are identified by id, not by name", "[intexpr]") {
  IntExpr first = IntExpr::var("i"), second = IntExpr::var("i");
  CHECK(first != second);
  CHECK(first == first);
  VarSubstitution subst;
  subst[first.varId()] = IntExpr(10);
  IntExpr replaced = substitute(first * 2 + second, subst);
  VarValues values;
  values[second.varId()] = 1;
  CHECK(evaluate(replaced, values) == 21);
  CHECK(usesVar(replaced, second));
  CHECK_FALSE(usesVar(replaced, first));
}

TEST_CASE("evaluation uses floor division and two's complement bit operations", "[intexpr]") {
  IntExpr x = IntExpr::var("x");
  VarValues values;
  values[x.varId()] = -7;
  CHECK(evaluate(x / 2, values) == -4);
  CHECK(evaluate(x % 2, values) == 1);
  CHECK(evaluate(x % -2, values) == -1);
  CHECK(evaluate(x >> 1, values) == -4);
  CHECK(evaluate(x & 7, values) == 1);
  CHECK(evaluate(x ^ 3, values) == -6);
  CHECK(evaluate(min(x, 0) + max(x, 0), values) == -7);
  CHECK_FALSE(evaluate(x / 0, values).has_value());
  CHECK_FALSE(evaluate(x << 64, values).has_value());
  CHECK_FALSE(evaluate(x + IntExpr::var("unbound"), values).has_value());
  CHECK(floorDiv(7, -2) == -4);
  CHECK(floorMod(7, -2) == -1);
}

TEST_CASE("interval bounds of index expressions", "[intexpr][bounds]") {
  Vars s;
  CHECK(boundOf(s.i * 64 + s.j, s.bounds) == IntRange{0, 4095});
  CHECK(boundOf((s.j / 8 ^ s.i % 8) * 8 + s.j % 8, s.bounds) == IntRange{0, 63});
  CHECK(boundOf(s.i - s.j, s.bounds) == IntRange{-63, 63});
  CHECK(boundOf(s.u % 8, s.bounds) == IntRange{0, 7});
  CHECK(boundOf(s.u / 8, s.bounds) == IntRange::everything());
  CHECK(boundOf(s.u * 2, s.bounds) == IntRange::everything());
  CHECK(boundOf(min(s.i, 10), s.bounds) == IntRange{0, 10});
  CHECK(boundOf(s.i & s.u, s.bounds) == IntRange{0, 63});
  CHECK(boundOf((s.i + 8) % 8, s.bounds) == IntRange{0, 7});
  CHECK(boundOf((s.i % 4 + 8) % 8, s.bounds) == IntRange{0, 3});
  CHECK(boundOf((s.i % 4 + 8) % 16, s.bounds) == IntRange{8, 11});
}

TEST_CASE("simplifier: identities and constant folding", "[intexpr][simplify]") {
  Vars s;
  CHECK(s.simplified(s.i * 1 + 0) == "i");
  CHECK(s.simplified(s.i - s.i) == "0");
  CHECK(s.simplified((IntExpr(2) + 3) * s.u - s.u * 5) == "0");
  CHECK(s.simplified(3 - s.i * 2 + s.i) == "3 - i");
  CHECK(s.simplified(s.u * 2 * 3 + s.v + s.u) == "u * 7 + v");
  CHECK(s.simplified(s.u * s.v + s.v * s.u) == "u * v * 2");
  CHECK(s.simplified(s.u * 0 + 4) == "4");
  CHECK(s.simplified(s.u - 5 + 2) == "u - 3");
}

TEST_CASE("simplifier: division and modulus rules", "[intexpr][simplify]") {
  Vars s;
  CHECK(s.simplified(s.u * 8 / 8) == "u");
  CHECK(s.simplified(s.u * 6 / 3) == "u * 2");
  CHECK(s.simplified((s.u * 8 + 3) / 8) == "u");   // needs no bound: 3 < 8
  CHECK(s.simplified((s.u * 8 + 3) % 8) == "3");
  CHECK(s.simplified((s.u * 4 + 2) / 8) == "u / 2"); // (x*c) / c with a common factor
  CHECK(s.simplified((s.u - 3) / 2) == "(u + 1) / 2 - 2");
  CHECK(s.simplified(s.u / 4 / 8) == "u / 32");
  CHECK(s.simplified(s.u % 64 % 8) == "u % 8");
  CHECK(s.simplified(s.u % 64 / 8) == "(u / 8) % 8");
  // Bound-driven rules: j < 64.
  CHECK(s.simplified((s.i * 64 + s.j) / 64) == "i");
  CHECK(s.simplified((s.i * 64 + s.j) % 64) == "j");
  CHECK(s.simplified(s.j % 64) == "j");
  CHECK(s.simplified(s.j / 64) == "0");
  CHECK(s.simplified((s.i + 64) / 64) == "1");
  // Splitting a term across the divisor: i*4 + (j%4) over 8.
  CHECK(s.simplified((s.i * 4 + s.j % 4) / 8) == "i / 2");
  CHECK(s.simplified((s.i * 4 + s.j % 4) % 8) == "(i % 2) * 4 + j % 4");
  // Without the bound on j the split is not exact and must not happen.
  CHECK(s.simplified((s.u * 4 + s.v) / 8) == "(u * 4 + v) / 8");
}

TEST_CASE("simplifier: digits recombine", "[intexpr][simplify]") {
  Vars s;
  CHECK(s.simplified(s.u / 64 * 64 + s.u % 64) == "u");
  CHECK(s.simplified(s.u / 8 % 8 * 8 + s.u % 8) == "u % 64");
  CHECK(s.simplified(s.u / 64 * 8 + s.u / 8 % 8) == "u / 8");
  CHECK(s.simplified(s.a / 512 * 512 + s.a / 64 % 8 * 64 + s.a / 8 % 8 * 8 + s.a % 8) == "a");
  // Coefficients that do not line up are left alone.
  CHECK(s.simplified(s.u / 64 * 32 + s.u % 64) == "(u / 64) * 32 + u % 64");
}

TEST_CASE("simplifier: bit operations", "[intexpr][simplify]") {
  Vars s;
  CHECK(s.simplified((s.a >> 6) & 7) == "(a / 64) % 8");
  CHECK(s.simplified(s.u << 3) == "u * 8");
  CHECK(s.simplified(s.u & 0) == "0");
  CHECK(s.simplified(s.u | 0) == "u");
  CHECK(s.simplified(s.u & 6) == "u & 6");
  CHECK(s.simplified((s.u ^ s.v) ^ s.u) == "v");
  CHECK(s.simplified(s.u ^ 0) == "u");
  CHECK(s.simplified(IntExpr(5) ^ s.u ^ 5) == "u");
  // Disjoint bit fields: XOR is addition.
  CHECK(s.simplified(s.i * 8 ^ s.j % 8) == "i * 8 + j % 8");
  // floordiv / floormod by 2^k distribute over XOR.
  CHECK(s.simplified((s.i * 8 ^ s.j % 8) / 8) == "i");
  CHECK(s.simplified(((s.j / 8 ^ s.i % 8) * 8 + s.j % 8) / 8) == "(j / 8) ^ (i % 8)");
}

TEST_CASE("simplifier: min and max decided by bounds", "[intexpr][simplify]") {
  Vars s;
  CHECK(s.simplified(min(s.i, 64)) == "i");
  CHECK(s.simplified(max(s.i, 63)) == "63");
  CHECK(s.simplified(max(s.i / 8, 8)) == "8");
  CHECK(s.simplified(min(s.u, s.u)) == "u");
  CHECK(s.simplified(min(s.v, s.u)) == s.simplified(min(s.u, s.v)));
}

TEST_CASE("simplifier inverts the 128-byte swizzle symbolically", "[intexpr][simplify]") {
  Vars s;
  // f: (i, j) -> address of the f16 64x64 tile with Swizzle<3,3,3>; g: its inverse.
  IntExpr f = s.i * 64 + ((s.j / 8) ^ (s.i % 8)) * 8 + s.j % 8;
  IntExpr gRow = s.a / 64;
  IntExpr gCol = (((s.a / 8) % 8) ^ ((s.a / 64) % 8)) * 8 + s.a % 8;
  VarSubstitution fwd;
  fwd[s.a.varId()] = f;
  CHECK(simplify(substitute(gRow, fwd), s.bounds) == s.i);
  CHECK(simplify(substitute(gCol, fwd), s.bounds) == s.j);
  VarSubstitution back;
  back[s.i.varId()] = gRow;
  back[s.j.varId()] = gCol;
  CHECK(simplify(substitute(f, back), s.bounds) == s.a);
}

TEST_CASE("simplification is a fixed point", "[intexpr][simplify]") {
  Vars s;
  IntExpr samples[] = {
      s.i * 64 + ((s.j / 8) ^ (s.i % 8)) * 8 + s.j % 8,
      (s.u - 3) / 2 + s.v % 7,
      (s.i * 4 + s.j % 4) % 8 + min(s.u, s.v),
      s.u / 8 % 8 * 8 + s.u % 8 - s.v,
      (s.a >> 6 & 7) << 3,
  };
  for (const IntExpr &e : samples) {
    IntExpr once = simplify(e, s.bounds);
    CHECK(simplify(once, s.bounds) == once);
  }
}

namespace {

// Random expressions over bounded variables, for differential testing of the simplifier
// against direct evaluation.
class RandomExprGen {
public:
  RandomExprGen(llvm::ArrayRef<IntExpr> vars, uint32_t seed) : vars(vars), rng(seed) {}

  IntExpr gen(int depth) {
    if (depth == 0 || pick(4) == 0)
      return pick(3) == 0 ? IntExpr(pick(17) - 4) : vars[pick(vars.size())];
    IntExpr a = gen(depth - 1);
    switch (pick(11)) {
    case 0: return a + gen(depth - 1);
    case 1: return a - gen(depth - 1);
    case 2: return a * (pick(9) - 2);
    case 3: return a * gen(depth - 1);
    case 4: return a / divisor();
    case 5: return a % divisor();
    case 6: return min(a, gen(depth - 1));
    case 7: return max(a, gen(depth - 1));
    case 8: return a ^ gen(depth - 1);
    case 9: return (a >> int64_t(pick(4))) & int64_t((1 << pick(5)) - 1);
    default: return (a << int64_t(pick(3))) + gen(depth - 1) / divisor();
    }
  }

  int64_t pick(size_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng); }

private:
  IntExpr divisor() {
    static const int64_t divisors[] = {1, 2, 3, 4, 6, 8, 16, 64};
    return divisors[pick(8)];
  }
  llvm::ArrayRef<IntExpr> vars;
  std::mt19937 rng;
};

} // namespace

TEST_CASE("simplifier agrees with evaluation on random expressions", "[intexpr][simplify]") {
  IntExpr x = IntExpr::var("x"), y = IntExpr::var("y"), z = IntExpr::var("z");
  IntExpr vars[] = {x, y, z};
  const int64_t extents[] = {64, 8, 128};
  VarBounds bounds;
  bounds.bindExtent(x, extents[0]);
  bounds.bindExtent(y, extents[1]);
  // z is signed: [-64, 63], so the rules are exercised on negative values too.
  bounds.bind(z, IntRange{-64, 63});
  RandomExprGen gen(vars, 20261122);
  for (int round = 0; round < 3000; ++round) {
    IntExpr e = gen.gen(4);
    IntExpr s = simplify(e, bounds);
    {
      INFO("expression: " << e.str() << "\nsimplified: " << s.str());
      CHECK(simplify(s, bounds) == s);
    }
    for (int sample = 0; sample < 12; ++sample) {
      VarValues values;
      values[x.varId()] = gen.pick(extents[0]);
      values[y.varId()] = gen.pick(extents[1]);
      values[z.varId()] = gen.pick(128) - 64;
      auto expected = evaluate(e, values);
      if (!expected)
        continue; // a shift or division the original leaves undefined
      auto got = evaluate(s, values);
      INFO("expression: " << e.str() << "\nsimplified: " << s.str());
      REQUIRE(got == expected);
    }
  }
}

TEST_CASE("proveEqual", "[intexpr][simplify]") {
  Vars s;
  CHECK(proveEqual(s.u / 64 * 64 + s.u % 64, s.u));
  CHECK(proveEqual((s.i * 64 + s.j) % 64, s.j, s.bounds));
  CHECK_FALSE(proveEqual((s.u * 64 + s.v) % 64, s.v));
}

TEST_CASE("printing in TileLang and C++ dialects", "[intexpr][print]") {
  Vars s;
  IntExpr swz = simplify(s.i * 64 + ((s.j / 8) ^ (s.i % 8)) * 8 + s.j % 8, s.bounds);
  CHECK(swz.str() == "i * 64 + ((j / 8) ^ (i % 8)) * 8 + j % 8");
  CHECK((s.u - (s.v - 1)).str() == "u - (v - 1)");
  CHECK((s.u * (s.v + 1)).str() == "u * (v + 1)");
  CHECK((s.u / 8 % 8 * 8).str() == "((u / 8) % 8) * 8");
  CHECK((s.u + IntExpr(-3)).str() == "u + (-3)");
  CHECK(min(s.u, max(s.v, 2)).str() == "min(u, max(v, 2))");

  // C++: `/` and `%` only where truncation equals flooring.
  IntExprPrinter cpp = IntExprPrinter::cpp(&s.bounds);
  CHECK(cpp.toString(swz) == "i * 64 + ((j / 8) ^ (i % 8)) * 8 + j % 8");
  CHECK(cpp.toString(s.u / 8 + s.i % 4) == "tl::floordiv(u, 8) + i % 4");
  CHECK(cpp.toString((s.i - 8) % 4) == "tl::floormod(i - 8, 4)");
  IntExprPrinter noBounds = IntExprPrinter::cpp(nullptr, {"fdiv", "fmod", "imin", "imax"});
  CHECK(noBounds.toString(s.i / 8 + min(s.i, s.j)) == "fdiv(i, 8) + imin(i, j)");
  IntExprPrinter renamed = IntExprPrinter::cpp(&s.bounds);
  renamed.rename(s.i, "threadIdx.x").rename(s.j, "r");
  CHECK(renamed.toString(s.i * 4 + s.j) == "threadIdx.x * 4 + r");
  CHECK(cpp.toString(s.u + (int64_t(1) << 40)) == "u + 1099511627776LL");
}

TEST_CASE("iterator sums: digits of affine, div/mod and XOR expressions", "[intexpr][itermap]") {
  Vars s;
  std::vector<IterVarDomain> domain{{s.i, 64}, {s.j, 64}};
  auto sum = detectIterSum(s.i * 64 + s.j, domain);
  REQUIRE(sum);
  CHECK(sum->denseExtent() == 4096);

  // The whole-address form of the swizzle reads as three digits: j%8, (j/8)^(i%8), i.
  IntExpr wholeAddress = simplify((s.i * 64 + s.j) ^ (s.i % 8 * 8), s.bounds);
  auto swizzled = detectIterSum(wholeAddress, domain);
  REQUIRE(swizzled);
  REQUIRE(swizzled->digits.size() == 3);
  CHECK(swizzled->denseExtent() == 4096);
  CHECK(canonicalizeIterSum(wholeAddress, domain)->str() ==
        "i * 64 + ((j / 8) ^ (i % 8)) * 8 + j % 8");

  // Padding leaves holes: a sum, but not a dense one.
  auto padded = detectIterSum(s.i * 72 + s.j, domain);
  REQUIRE(padded);
  CHECK_FALSE(padded->denseExtent());

  std::string why;
  CHECK_FALSE(detectIterSum(s.i * s.j, domain, &why));
  CHECK(why.find("multiplies two indices") != std::string::npos);
  why.clear();
  CHECK_FALSE(detectIterSum(s.i + s.u, domain, &why));
  CHECK(why.find("not one of the layout's indices") != std::string::npos);
  why.clear();
  // (i*3 + j) / 8 cannot be split into digits.
  CHECK_FALSE(detectIterSum((s.i * 3 + s.j) / 8, domain, &why));
  CHECK_FALSE(why.empty());
}

TEST_CASE("iterator maps: inverses", "[intexpr][itermap]") {
  Vars s;
  std::vector<IterVarDomain> domain{{s.i, 64}, {s.j, 64}};
  IntExpr out0 = IntExpr::var("o0"), out1 = IntExpr::var("o1");

  auto transpose = inverseIterMap({s.j, s.i}, domain, {out0, out1});
  REQUIRE(transpose);
  CHECK(transpose->inputs[0] == out1);
  CHECK(transpose->inputs[1] == out0);

  auto swz = inverseIterMap({s.i * 64 + ((s.j / 8) ^ (s.i % 8)) * 8 + s.j % 8}, domain, {out0});
  REQUIRE(swz);
  CHECK(swz->outputExtents[0] == 4096);
  CHECK(swz->inputs[0].str() == "o0 / 64");
  CHECK(swz->inputs[1].str() == "(((o0 / 8) % 8) ^ ((o0 / 64) % 8)) * 8 + o0 % 8");

  std::string why;
  CHECK_FALSE(inverseIterMap({s.i * 72 + s.j}, domain, {out0}, &why));
  CHECK(why.find("contiguous") != std::string::npos);
  why.clear();
  // Both outputs see only j: the map is not injective.
  CHECK_FALSE(inverseIterMap({s.j, s.j}, domain, {out0, out1}, &why));
  CHECK_FALSE(why.empty());
}

TEST_CASE("iterator maps: pieces a thread index leaves to registers", "[intexpr][itermap]") {
  IntExpr i = IntExpr::var("i"), j = IntExpr::var("j");
  std::vector<IterVarDomain> domain{{i, 16}, {j, 8}};
  // The mma.m16n8 accumulator's lane: row%8 and column/2.
  auto unused = unusedSplits({i % 8 * 4 + j / 2}, domain);
  REQUIRE(unused);
  REQUIRE(unused->size() == 2);
  CHECK((*unused)[0].var == i);
  CHECK((*unused)[0].lower == 8);
  CHECK((*unused)[0].extent == 2);
  CHECK((*unused)[1].var == j);
  CHECK((*unused)[1].lower == 1);
  CHECK((*unused)[1].extent == 2);
}

TEST_CASE("xor simplification terminates for ranges past 2^62", "[intexpr][simplify][limits]") {
  // The smallest power of two above x's upper bound was found by doubling, which wrapped and
  // looped forever once the bound passed 2^62.
  IntExpr x = IntExpr::var("x"), y = IntExpr::var("y");
  VarBounds bounds;
  bounds.bind(x, IntRange{0, (int64_t(1) << 62) + 5});
  bounds.bind(y, IntRange{0, 3});
  IntExpr e = x ^ (y * 8);
  IntExpr s = simplify(e, bounds);
  CHECK(simplify(s, bounds) == s);
  bounds.bind(x, IntRange{0, 5});
  CHECK(simplify(x ^ (y * 8), bounds).str() == simplify(x + y * 8, bounds).str());
}
