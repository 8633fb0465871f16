// Iterator-map analysis: reading an index expression as a mixed-radix number whose digits
// are pieces of the iteration variables, which is what makes layouts invertible.
//
// Every variable v of a domain ranges over [0, E). A *split* of v is one of its digits,
//   floormod(floordiv(v, lower), extent),
// and an expression is an *iterator sum* when it equals  sum_k scale_k * digit_k + offset,
// where each digit is a split or, for XOR swizzles, the XOR of splits of equal
// power-of-two extent. TileLang's forward-index layouts are exactly such sums
// (`i * 64 + ((j / 8) ^ (i % 8)) * 8 + j % 8` has digits j%8, (j/8)^(i%8) and i), and so
// are CuTe's shape:stride layouts.
//
// When a list of outputs are dense sums (scales 1, E0, E0*E1, ...) whose digits, refined to
// a common set of split points, cover every piece of every variable, and the output box has
// as many points as the domain, the map is a bijection; inverseIterMap then solves for
// each piece (XOR digits once their partners are known) and returns the inverse.
#pragma once

#include "Bounds.h"
#include "IntExpr.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace tlc {

// A variable ranging over [0, extent).
struct IterVarDomain {
  IntExpr var;
  int64_t extent;
};

// Bounds binding each variable of `domain` to [0, extent).
VarBounds boundsOf(llvm::ArrayRef<IterVarDomain> domain);

// floormod(floordiv(var, lower), extent).
struct IterSplit {
  IntExpr var;
  int64_t lower;
  int64_t extent;

  IntExpr toExpr() const;
  bool sameAs(const IterSplit &o) const;
};

// scale * (splits[0] ^ splits[1] ^ ...); a plain digit has one split.
struct IterDigit {
  llvm::SmallVector<IterSplit, 2> splits;
  int64_t scale;

  int64_t extent() const { return splits.front().extent; }
  IntExpr toExpr() const;
};

struct IterSum {
  llvm::SmallVector<IterDigit, 4> digits;
  int64_t offset = 0;

  IntExpr toExpr() const;
  // The number of values of a dense sum: the product of the digit extents, provided the
  // offset is 0 and the digits sorted by scale have scales 1, E0, E0*E1, ...; nullopt if
  // the sum is not dense.
  std::optional<int64_t> denseExtent() const;
};

// Reads `e` (best simplified first) as an iterator sum over `domain`; nullopt, with the
// reason in *whyNot, if it is not one.
std::optional<IterSum> detectIterSum(const IntExpr &e, llvm::ArrayRef<IterVarDomain> domain,
                                     std::string *whyNot = nullptr);

// `e` rebuilt from its digits and simplified, or nullopt if it is not an iterator sum.
// XOR swizzles written on whole addresses, `(i*64 + j) ^ (i%8 * 8)`, come back digit by
// digit, `i*64 + ((j/8) ^ i%8)*8 + j%8`, so equal swizzles print and compare equal.
std::optional<IntExpr> canonicalizeIterSum(const IntExpr &e,
                                           llvm::ArrayRef<IterVarDomain> domain);

struct IterMapInverse {
  // The extent of each output: the inverse is defined on the box they span.
  llvm::SmallVector<int64_t, 4> outputExtents;
  // One expression per domain variable, over `outputVars`.
  llvm::SmallVector<IntExpr, 4> inputs;
};

// Inverts the map domain -> (outputs[0], outputs[1], ...) if it is a bijection onto the
// box of its output extents. `outputVars` name the inverse's arguments, one per output.
std::optional<IterMapInverse> inverseIterMap(llvm::ArrayRef<IntExpr> outputs,
                                             llvm::ArrayRef<IterVarDomain> domain,
                                             llvm::ArrayRef<IntExpr> outputVars,
                                             std::string *whyNot = nullptr);

// The pieces of the domain variables that none of `exprs` depends on, in row-major order
// (first variable's highest piece first, last variable's lowest piece last); variables in
// `ignored` are left out. A fragment whose thread index uses some pieces holds the others
// in registers. nullopt if some expression is not an iterator sum.
std::optional<llvm::SmallVector<IterSplit, 4>>
unusedSplits(llvm::ArrayRef<IntExpr> exprs, llvm::ArrayRef<IterVarDomain> domain,
             llvm::ArrayRef<IntExpr> ignored = {}, std::string *whyNot = nullptr);

} // namespace tlc
