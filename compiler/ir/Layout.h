// Layouts: how an n-d tile index maps to an address, or to another n-d index.
//
// Representation. A Layout is a list of integer expressions over its index variables,
// `(i, j) => [i * 64 + ((j / 8) ^ (i % 8)) * 8 + j % 8]`: TileLang's symbolic
// forward-index form, not CuTe's shape:stride algebra. The reasons:
//  - the language's own `annotate_layout(buf, (i, j) => [...])` is such a lambda, so user
//    layouts need no translation and print back in the syntax they were written in;
//  - XOR swizzles, padding and any other index arithmetic are ordinary expressions, while
//    CuTe needs a separate Swizzle functor composed around its layouts;
//  - codegen wants index expressions anyway, and the simplifier that cleans them up is the
//    one the rest of the compiler uses for loop bounds and addresses;
//  - shape:stride layouts lose nothing: makeStridedLayout / makeCuteLayout turn any
//    (hierarchical) shape:stride into a sum of digits, and the iterator-map analysis
//    (analysis/IterMap.h) recovers the digit structure CuTe keeps explicitly, which is
//    what inversion needs.
// The price is that algebraic questions (is it a bijection? what is the inverse?) need
// that analysis, and fall back to exhaustive evaluation where it gives up; tile shapes are
// compile-time constants, so the fallback is exact.
//
// Index variables are owned by the layout and range over [0, extent) of its input shape.
// Outputs are kept simplified, and swizzles in digit-wise canonical form, so structurally
// equal layouts compare equal cheaply.
#pragma once

#include "Swizzle.h"

#include "analysis/Bounds.h"
#include "analysis/IntExpr.h"
#include "analysis/IntExprPrinter.h"
#include "analysis/IterMap.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
}

namespace tlc {

using IndexList = llvm::SmallVector<IntExpr, 4>;
using Shape = llvm::SmallVector<int64_t, 4>;

// The extent reported for an output whose range cannot be bounded (it mentions a symbol).
constexpr int64_t kUnknownExtent = -1;

// In which order repeated copies of a tile are numbered.
enum class TileOrder {
  RowMajor, // the last dimension's copies are adjacent
  ColMajor, // the first dimension's copies are adjacent
};

// Calls fn on every index of `shape`, in row-major order.
void forEachIndex(llvm::ArrayRef<int64_t> shape,
                  llvm::function_ref<void(llvm::ArrayRef<int64_t>)> fn);
int64_t numElements(llvm::ArrayRef<int64_t> shape);
// Fresh index variables over `shape`, named by position (see indexName).
llvm::SmallVector<IterVarDomain, 4> makeIndexVars(llvm::ArrayRef<int64_t> shape,
                                                  llvm::StringRef prefix = "");
// The row-major flat index of `index` in `shape`, and back.
IntExpr flattenRowMajor(llvm::ArrayRef<IntExpr> index, llvm::ArrayRef<int64_t> shape);
IndexList unflattenRowMajor(const IntExpr &flat, llvm::ArrayRef<int64_t> shape);
// The positional name of index d: i, j, k, l, m, n, then i6, i7, ...
std::string indexName(unsigned d);

// An index of a tile repeated `repeats` times, split into the index inside the copy and
// the number of the copy (copies numbered in `order`).
struct TiledIndex {
  IndexList inner;
  IntExpr copy;
};
TiledIndex splitTiledIndex(llvm::ArrayRef<IntExpr> index, llvm::ArrayRef<int64_t> tileShape,
                           llvm::ArrayRef<int64_t> repeats, TileOrder order);

class Layout {
public:
  using IndexFn = llvm::function_ref<IndexList(llvm::ArrayRef<IntExpr>)>;

  // A layout over `shape` whose outputs `fn` computes from the index variables.
  static Layout make(llvm::ArrayRef<int64_t> shape, IndexFn fn);
  // The identity on `shape`.
  static Layout identity(llvm::ArrayRef<int64_t> shape);

  Layout(llvm::SmallVector<IterVarDomain, 4> inputs, IndexList outputs);

  size_t inputRank() const { return inputVars.size(); }
  size_t outputRank() const { return outputExprs.size(); }
  llvm::ArrayRef<IterVarDomain> inputs() const { return inputVars; }
  llvm::ArrayRef<IntExpr> outputs() const { return outputExprs; }
  Shape inputShape() const;
  // One past the largest value of each output (kUnknownExtent where unbounded). For an
  // address layout this is the memory footprint in elements.
  Shape outputShape() const;
  int64_t size() const { return numElements(inputShape()); }
  VarBounds inputBounds() const { return boundsOf(inputVars); }

  // The outputs at `indices`, simplified under `indexBounds`.
  IndexList apply(llvm::ArrayRef<IntExpr> indices,
                  const VarBounds &indexBounds = VarBounds()) const;
  Shape evaluate(llvm::ArrayRef<int64_t> index) const;

  // x -> (*this)(inner(x)): inner's outputs must index this layout's inputs.
  Layout compose(const Layout &inner) const;
  // The inverse of a bijection from the input shape onto the output box; nullopt (with
  // the reason) for layouts that are not bijective or that the analysis cannot invert.
  std::optional<Layout> inverse(std::string *whyNot = nullptr) const;
  // The same mapping viewed through a row-major reshape of the input to `shape`.
  Layout reshape(llvm::ArrayRef<int64_t> shape) const;
  // For address layouts (one output): the tile repeated `repeats[d]` times along each
  // dimension, copy after copy in memory in `order`.
  Layout repeat(llvm::ArrayRef<int64_t> repeats, TileOrder order = TileOrder::RowMajor) const;
  // For address layouts: the address passed through `swizzle`.
  Layout swizzle(const Swizzle &swizzle) const;

  // Same input shape and same value at every index.
  bool isEqual(const Layout &other) const;

  // `layout[64, 64] (i, j) => [i * 64 + j]`; index variables are named by position.
  void print(llvm::raw_ostream &os) const;
  std::string str() const;
  // Each output as C++ source, the index variables spelled `indexNames`.
  llvm::SmallVector<std::string, 4> toCpp(llvm::ArrayRef<std::string> indexNames,
                                          const CppPrintOptions &options = {}) const;

private:
  llvm::SmallVector<IterVarDomain, 4> inputVars;
  IndexList outputExprs;
};

llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const Layout &layout);

// Simplifies `e` under `bounds`, and rewrites XOR swizzles digit by digit when the
// iterator-map analysis can read them, so equal swizzles have one form.
IntExpr canonicalizeIndexExpr(const IntExpr &e, llvm::ArrayRef<IterVarDomain> domain,
                              const VarBounds &bounds);

// Substitutes `to[k]` for `from[k].var` in `e`.
IntExpr substituteVars(const IntExpr &e, llvm::ArrayRef<IterVarDomain> from,
                       llvm::ArrayRef<IntExpr> to);

} // namespace tlc
