#include "Layout.h"

#include "analysis/Simplify.h"

#include "llvm/Support/raw_ostream.h"

#include <cassert>

namespace tlc {

// Beyond this many elements isEqual gives up on the exhaustive comparison (and answers
// false); tiles are orders of magnitude smaller.
static constexpr int64_t kMaxExhaustiveCompare = int64_t(1) << 24;

void forEachIndex(llvm::ArrayRef<int64_t> shape,
                  llvm::function_ref<void(llvm::ArrayRef<int64_t>)> fn) {
  if (numElements(shape) == 0)
    return;
  Shape index(shape.size(), 0);
  while (true) {
    fn(index);
    int d = static_cast<int>(shape.size()) - 1;
    while (d >= 0 && ++index[d] == shape[d])
      index[d--] = 0;
    if (d < 0)
      return;
  }
}

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n *= e;
  return n;
}

std::string indexName(unsigned d) {
  static const char *const names[] = {"i", "j", "k", "l", "m", "n"};
  return d < 6 ? names[d] : "i" + std::to_string(d);
}

llvm::SmallVector<IterVarDomain, 4> makeIndexVars(llvm::ArrayRef<int64_t> shape,
                                                  llvm::StringRef prefix) {
  llvm::SmallVector<IterVarDomain, 4> vars;
  for (unsigned d = 0; d < shape.size(); ++d)
    vars.push_back({IntExpr::var(prefix.str() + indexName(d)), shape[d]});
  return vars;
}

IntExpr flattenRowMajor(llvm::ArrayRef<IntExpr> index, llvm::ArrayRef<int64_t> shape) {
  assert(index.size() == shape.size());
  IntExpr flat = 0;
  for (size_t d = 0; d < index.size(); ++d)
    flat = flat * shape[d] + index[d];
  return flat;
}

IndexList unflattenRowMajor(const IntExpr &flat, llvm::ArrayRef<int64_t> shape) {
  IndexList index(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 1;) {
    index[d] = floormod(floordiv(flat, stride), shape[d]);
    stride *= shape[d];
  }
  // The leading index needs no modulus: it is whatever is left above the others.
  if (!shape.empty())
    index[0] = floordiv(flat, stride);
  return index;
}

TiledIndex splitTiledIndex(llvm::ArrayRef<IntExpr> index, llvm::ArrayRef<int64_t> tileShape,
                           llvm::ArrayRef<int64_t> repeats, TileOrder order) {
  assert(index.size() == tileShape.size() && repeats.size() == tileShape.size());
  TiledIndex tiled;
  tiled.copy = 0;
  size_t rank = index.size();
  for (size_t k = 0; k < rank; ++k) {
    // Row-major numbering visits the last dimension fastest; column-major the first.
    size_t d = order == TileOrder::RowMajor ? k : rank - 1 - k;
    tiled.copy = tiled.copy * repeats[d] + floordiv(index[d], tileShape[d]);
  }
  for (size_t d = 0; d < rank; ++d)
    tiled.inner.push_back(floormod(index[d], tileShape[d]));
  return tiled;
}

IntExpr canonicalizeIndexExpr(const IntExpr &e, llvm::ArrayRef<IterVarDomain> domain,
                              const VarBounds &bounds) {
  IntExpr simplified = simplify(e, bounds);
  if (containsKind(simplified, IntExprKind::Xor))
    if (auto digitWise = canonicalizeIterSum(simplified, domain))
      return *digitWise;
  return simplified;
}

IntExpr substituteVars(const IntExpr &e, llvm::ArrayRef<IterVarDomain> from,
                       llvm::ArrayRef<IntExpr> to) {
  assert(from.size() == to.size());
  VarSubstitution subst;
  for (size_t d = 0; d < from.size(); ++d)
    subst[from[d].var.varId()] = to[d];
  return substitute(e, subst);
}

// ============================================================================== Layout

Layout Layout::make(llvm::ArrayRef<int64_t> shape, IndexFn fn) {
  auto vars = makeIndexVars(shape);
  IndexList indices;
  for (const IterVarDomain &v : vars)
    indices.push_back(v.var);
  return Layout(std::move(vars), fn(indices));
}

Layout Layout::identity(llvm::ArrayRef<int64_t> shape) {
  return make(shape, [](llvm::ArrayRef<IntExpr> idx) { return IndexList(idx.begin(), idx.end()); });
}

Layout::Layout(llvm::SmallVector<IterVarDomain, 4> inputs, IndexList outputs)
    : inputVars(std::move(inputs)) {
  VarBounds bounds = inputBounds();
  for (const IntExpr &e : outputs)
    outputExprs.push_back(canonicalizeIndexExpr(e, inputVars, bounds));
}

Shape Layout::inputShape() const {
  Shape shape;
  for (const IterVarDomain &v : inputVars)
    shape.push_back(v.extent);
  return shape;
}

Shape Layout::outputShape() const {
  VarBounds bounds = inputBounds();
  Shape shape;
  for (const IntExpr &e : outputExprs) {
    IntRange r = boundOf(e, bounds);
    shape.push_back(r.isNonNegative() && r.hasFiniteHi() ? r.hi + 1 : kUnknownExtent);
  }
  return shape;
}

IndexList Layout::apply(llvm::ArrayRef<IntExpr> indices, const VarBounds &indexBounds) const {
  assert(indices.size() == inputRank());
  IndexList result;
  for (const IntExpr &e : outputExprs)
    result.push_back(simplify(substituteVars(e, inputVars, indices), indexBounds));
  return result;
}

Shape Layout::evaluate(llvm::ArrayRef<int64_t> index) const {
  assert(index.size() == inputRank());
  VarValues values;
  for (size_t d = 0; d < index.size(); ++d)
    values[inputVars[d].var.varId()] = index[d];
  Shape result;
  for (const IntExpr &e : outputExprs) {
    auto v = tlc::evaluate(e, values);
    assert(v && "layout output depends on an unbound symbol");
    result.push_back(v.value_or(0));
  }
  return result;
}

Layout Layout::compose(const Layout &inner) const {
  assert(inner.outputRank() == inputRank() && "composition rank mismatch");
#ifndef NDEBUG
  Shape innerOut = inner.outputShape();
  for (size_t d = 0; d < inputRank(); ++d)
    assert((innerOut[d] == kUnknownExtent || innerOut[d] <= inputVars[d].extent) &&
           "inner layout leaves the outer layout's domain");
#endif
  IndexList outputs;
  for (const IntExpr &e : outputExprs)
    outputs.push_back(substituteVars(e, inputVars, inner.outputExprs));
  return Layout(inner.inputVars, std::move(outputs));
}

std::optional<Layout> Layout::inverse(std::string *whyNot) const {
  IndexList newVars;
  for (unsigned d = 0; d < outputRank(); ++d)
    newVars.push_back(IntExpr::var(indexName(d)));
  auto inv = inverseIterMap(outputExprs, inputVars, newVars, whyNot);
  if (!inv)
    return std::nullopt;
  llvm::SmallVector<IterVarDomain, 4> domain;
  for (unsigned d = 0; d < outputRank(); ++d)
    domain.push_back({newVars[d], inv->outputExtents[d]});
  return Layout(std::move(domain), IndexList(inv->inputs.begin(), inv->inputs.end()));
}

Layout Layout::reshape(llvm::ArrayRef<int64_t> shape) const {
  assert(numElements(shape) == size() && "reshape must keep the number of elements");
  auto vars = makeIndexVars(shape);
  IndexList newIndex;
  for (const IterVarDomain &v : vars)
    newIndex.push_back(v.var);
  Layout toOld(vars, unflattenRowMajor(flattenRowMajor(newIndex, shape), inputShape()));
  return compose(toOld);
}

Layout Layout::repeat(llvm::ArrayRef<int64_t> repeats, TileOrder order) const {
  assert(outputRank() == 1 && repeats.size() == inputRank());
  int64_t footprint = outputShape()[0];
  assert(footprint != kUnknownExtent && "cannot repeat a layout of unknown footprint");
  Shape tile = inputShape(), shape;
  for (size_t d = 0; d < tile.size(); ++d)
    shape.push_back(tile[d] * repeats[d]);
  auto vars = makeIndexVars(shape);
  IndexList index;
  for (const IterVarDomain &v : vars)
    index.push_back(v.var);
  TiledIndex tiled = splitTiledIndex(index, tile, repeats, order);
  IntExpr address = substituteVars(outputExprs[0], inputVars, tiled.inner) + tiled.copy * footprint;
  return Layout(std::move(vars), {address});
}

Layout Layout::swizzle(const Swizzle &swizzle) const {
  assert(outputRank() == 1 && "only addresses are swizzled");
  return Layout(inputVars, {swizzle.apply(outputExprs[0])});
}

bool Layout::isEqual(const Layout &other) const {
  if (inputShape() != other.inputShape() || outputRank() != other.outputRank())
    return false;
  IndexList ours;
  for (const IterVarDomain &v : inputVars)
    ours.push_back(v.var);
  VarBounds bounds = inputBounds();
  bool structurallyEqual = true;
  for (size_t k = 0; k < outputRank() && structurallyEqual; ++k) {
    IntExpr theirs = substituteVars(other.outputExprs[k], other.inputVars, ours);
    structurallyEqual = canonicalizeIndexExpr(theirs, inputVars, bounds) == outputExprs[k];
  }
  if (structurallyEqual)
    return true;
  if (size() > kMaxExhaustiveCompare)
    return false;
  bool equal = true;
  forEachIndex(inputShape(), [&](llvm::ArrayRef<int64_t> index) {
    if (equal && evaluate(index) != other.evaluate(index))
      equal = false;
  });
  return equal;
}

void Layout::print(llvm::raw_ostream &os) const {
  IntExprPrinter printer;
  os << "layout[";
  for (size_t d = 0; d < inputRank(); ++d) {
    printer.rename(inputVars[d].var, indexName(d));
    os << (d ? ", " : "") << inputVars[d].extent;
  }
  os << "] (";
  for (size_t d = 0; d < inputRank(); ++d)
    os << (d ? ", " : "") << indexName(d);
  os << ") => [";
  for (size_t k = 0; k < outputRank(); ++k) {
    os << (k ? ", " : "");
    printer.print(os, outputExprs[k]);
  }
  os << "]";
}

std::string Layout::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return os.str();
}

llvm::SmallVector<std::string, 4> Layout::toCpp(llvm::ArrayRef<std::string> indexNames,
                                                const CppPrintOptions &options) const {
  assert(indexNames.size() == inputRank());
  VarBounds bounds = inputBounds();
  IntExprPrinter printer = IntExprPrinter::cpp(&bounds, options);
  for (size_t d = 0; d < inputRank(); ++d)
    printer.rename(inputVars[d].var, indexNames[d]);
  llvm::SmallVector<std::string, 4> result;
  for (const IntExpr &e : outputExprs)
    result.push_back(printer.toString(e));
  return result;
}

llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const Layout &layout) {
  layout.print(os);
  return os;
}

} // namespace tlc
