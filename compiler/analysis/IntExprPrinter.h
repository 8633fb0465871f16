// Printing integer expressions, in two dialects:
//
//  - TileLang: the surface syntax of .tl files (`/` and `%` for floordiv/floormod,
//    `min(a, b)`), used by IR dumps and diagnostics, so that a printed layout can be pasted
//    back into `annotate_layout`.
//  - C++: source text for generated CUDA/HIP code. C++ `/` and `%` truncate toward zero, so
//    they are emitted only where the numerator is provably non-negative and the divisor
//    positive (from the VarBounds given); anywhere else the printer calls the floor helpers
//    named in CppPrintOptions, which the device library must provide.
//
// Both dialects use C operator precedence and print the fewest parentheses that keep the
// tree, except that operands of bitwise operators are always parenthesized when they are
// compound (`(j / 8) ^ i`), the way -Wparentheses asks humans to write them.
#pragma once

#include "Bounds.h"
#include "IntExpr.h"

#include "llvm/ADT/DenseMap.h"

#include <string>

namespace llvm {
class raw_ostream;
}

namespace tlc {

// Names of the device functions the C++ dialect calls.
struct CppPrintOptions {
  std::string floorDivFn = "tl::floordiv";
  std::string floorModFn = "tl::floormod";
  std::string minFn = "min";
  std::string maxFn = "max";
};

class IntExprPrinter {
public:
  // TileLang dialect.
  IntExprPrinter() = default;
  // C++ dialect. `bounds` (may be null: nothing is known) decides where plain `/` and `%`
  // are exact; it must outlive the printer.
  static IntExprPrinter cpp(const VarBounds *bounds, CppPrintOptions options = {});

  // Prints `var` as `text` instead of its own name (C++ loop variables, `threadIdx.x`).
  IntExprPrinter &rename(const IntExpr &var, std::string text);

  void print(llvm::raw_ostream &os, const IntExpr &e) const;
  std::string toString(const IntExpr &e) const;

private:
  enum class Dialect { TileLang, Cpp };

  void printOperand(llvm::raw_ostream &os, const IntExpr &parent, const IntExpr &child,
                    bool isRhs) const;
  void printCall(llvm::raw_ostream &os, llvm::StringRef fn, const IntExpr &e) const;
  // True when C++ `/` and `%` agree with floordiv and floormod on `e`'s operands.
  bool truncationIsExact(const IntExpr &e) const;

  Dialect dialect = Dialect::TileLang;
  const VarBounds *bounds = nullptr;
  CppPrintOptions options;
  llvm::DenseMap<uint64_t, std::string> names;
};

} // namespace tlc
