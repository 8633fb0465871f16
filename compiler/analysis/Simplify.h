// The canonicalizing simplifier for index expressions.
//
// Sums and products by constants are normalized to a linear form `c1*t1 + c2*t2 + ... + c`
// whose terms are sorted (larger coefficients first, then structurally), so equal linear
// expressions print and compare equal. On top of that it applies the index rules that
// layout algebra needs, each justified for floor semantics on all integers unless a bound
// is named:
//
//   floordiv(c*q + r, c)      -> q + floordiv(r, c)
//   floordiv(r, c)            -> k          when r's bounds lie in [k*c, (k+1)*c)
//   floormod(c*q + r, c)      -> floormod(r, c)
//   floormod(r, c)            -> r          when 0 <= r < c
//   floordiv(floordiv(x, a), b) -> floordiv(x, a*b)
//   floordiv(floormod(x, m), c) -> floormod(floordiv(x, c), m/c)     when c divides m
//   floormod(floormod(x, m), c) -> floormod(x, c)                    when c divides m
//   floordiv(g*x, g*c)        -> floordiv(x, c), floormod(g*x, g*c) -> g*floormod(x, c)
//   floordiv(s*x + r, c)      -> floordiv(x, c/s)   when s divides c and the split rest
//                                                   (s*floormod(x, c/s) + r) is in [0, c)
//   floordiv(x, a*m)*m + floormod(floordiv(x, a), m) -> floordiv(x, a)   (and the same with
//                                                   an outer floormod): digits recombine
//   x >> k -> floordiv(x, 2^k), x << k -> x * 2^k, x & (2^k - 1) -> floormod(x, 2^k)
//   x ^ x -> 0, and x ^ y -> x + y when y < 2^k and every term of x is a multiple of 2^k
//   floordiv/floormod by 2^k distribute over ^
//   min/max decided by bounds
//
// The result is a fixed point: simplifying it again returns the same tree.
#pragma once

#include "Bounds.h"
#include "IntExpr.h"

namespace tlc {

IntExpr simplify(const IntExpr &e, const VarBounds &bounds = VarBounds());

// True if a - b simplifies to 0 under `bounds` (sound but incomplete).
bool proveEqual(const IntExpr &a, const IntExpr &b, const VarBounds &bounds = VarBounds());

} // namespace tlc
