#include "Fragment.h"

#include "analysis/Simplify.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

namespace tlc {

namespace {

IndexList varsOf(llvm::ArrayRef<IterVarDomain> domain) {
  IndexList vars;
  for (const IterVarDomain &d : domain)
    vars.push_back(d.var);
  return vars;
}

// One past the largest value of a thread or register index; they must be non-negative
// and bounded for a fragment to make sense.
int64_t extentOf(const IntExpr &e, const VarBounds &bounds) {
  IntRange r = boundOf(e, bounds);
  assert(r.isNonNegative() && r.hasFiniteHi() && "fragment index must be bounded and >= 0");
  return r.hi + 1;
}

} // namespace

Fragment Fragment::make(llvm::ArrayRef<int64_t> shape, PlaceFn fn, int64_t replicate) {
  auto vars = makeIndexVars(shape);
  IterVarDomain rep{IntExpr::var("rep"), replicate};
  Placement placement = fn(varsOf(vars), rep.var);
  return Fragment(std::move(vars), rep, placement.thread, placement.reg);
}

std::optional<Fragment> Fragment::fromThreadMap(llvm::ArrayRef<int64_t> shape, ThreadFn fn,
                                                int64_t replicate, std::string *whyNot) {
  auto vars = makeIndexVars(shape);
  IterVarDomain rep{IntExpr::var("rep"), replicate};
  auto domain = vars;
  domain.push_back(rep);
  IntExpr thread = simplify(fn(varsOf(vars), rep.var), boundsOf(domain));
  auto unused = unusedSplits({thread}, domain, {rep.var}, whyNot);
  if (!unused)
    return std::nullopt;
  IntExpr reg = 0;
  for (const IterSplit &piece : *unused)
    reg = reg * piece.extent + piece.toExpr();
  return Fragment(std::move(vars), rep, thread, reg);
}

Fragment::Fragment(llvm::SmallVector<IterVarDomain, 4> inputs, IterVarDomain replica,
                   IntExpr thread, IntExpr reg)
    : inputVars(std::move(inputs)), replicaVar(std::move(replica)) {
  auto domain = domainWithReplica();
  VarBounds bounds = boundsOf(domain);
  threadIndex = canonicalizeIndexExpr(thread, domain, bounds);
  regIndex = canonicalizeIndexExpr(reg, domain, bounds);
  assert(!usesVar(regIndex, replicaVar.var) && "replicas share one register index");
  numThreads = extentOf(threadIndex, bounds);
  numRegisters = extentOf(regIndex, bounds);
}

llvm::SmallVector<IterVarDomain, 4> Fragment::domainWithReplica() const {
  auto domain = inputVars;
  domain.push_back(replicaVar);
  return domain;
}

Shape Fragment::shape() const {
  Shape s;
  for (const IterVarDomain &v : inputVars)
    s.push_back(v.extent);
  return s;
}

Fragment::Location Fragment::evaluate(llvm::ArrayRef<int64_t> index, int64_t rep) const {
  assert(index.size() == rank() && rep >= 0 && rep < replicate());
  VarValues values;
  for (size_t d = 0; d < index.size(); ++d)
    values[inputVars[d].var.varId()] = index[d];
  values[replicaVar.var.varId()] = rep;
  auto thread = tlc::evaluate(threadIndex, values);
  auto reg = tlc::evaluate(regIndex, values);
  assert(thread && reg && "fragment depends on an unbound symbol");
  return {thread.value_or(0), reg.value_or(0)};
}

Fragment Fragment::repeat(llvm::ArrayRef<int64_t> repeats, RepeatOn on, TileOrder order) const {
  assert(repeats.size() == rank());
  Shape tile = shape(), newShape;
  for (size_t d = 0; d < rank(); ++d)
    newShape.push_back(tile[d] * repeats[d]);
  auto vars = makeIndexVars(newShape);
  TiledIndex tiled = splitTiledIndex(varsOf(vars), tile, repeats, order);
  IntExpr thread = substituteVars(threadIndex, inputVars, tiled.inner);
  IntExpr reg = substituteVars(regIndex, inputVars, tiled.inner);
  if (on == RepeatOn::Thread)
    thread = thread + tiled.copy * numThreads;
  else
    reg = reg + tiled.copy * numRegisters;
  return Fragment(std::move(vars), replicaVar, thread, reg);
}

Fragment Fragment::replicate(int64_t times) const {
  assert(times >= 1);
  int64_t oldReplicate = replicate();
  IterVarDomain rep{IntExpr::var("rep"), oldReplicate * times};
  // The old replicas keep their threads; each further group of threadExtent() threads
  // holds another full copy.
  IntExpr thread = substituteVars(threadIndex, {replicaVar}, {rep.var % oldReplicate}) +
                   rep.var / oldReplicate * numThreads;
  return Fragment(inputVars, rep, thread, regIndex);
}

std::optional<Fragment> Fragment::reduce(size_t dim, std::string *whyNot) const {
  assert(dim < rank() && "reducing a dimension the fragment does not have");
  auto domain = domainWithReplica();
  auto sum = detectIterSum(threadIndex, domain, whyNot);
  if (!sum)
    return std::nullopt;
  const uint64_t reduced = inputVars[dim].var.varId(), replica = replicaVar.var.varId();
  // The digits of the reduced index (and of the old replica) that the thread index reads:
  // the threads that share a line differ in exactly these, so they number the new replicas.
  llvm::SmallVector<IterSplit, 4> spread;
  for (const IterDigit &d : sum->digits)
    for (const IterSplit &s : d.splits)
      if ((s.var.varId() == reduced || s.var.varId() == replica) &&
          llvm::none_of(spread, [&](const IterSplit &o) { return o.sameAs(s); }))
        spread.push_back(s);
  for (size_t a = 0; a < spread.size(); ++a)
    for (size_t b = a + 1; b < spread.size(); ++b)
      if (spread[a].var.varId() == spread[b].var.varId() &&
          spread[a].lower < spread[b].lower * spread[b].extent &&
          spread[b].lower < spread[a].lower * spread[a].extent) {
        if (whyNot)
          *whyNot = "the thread index reads overlapping pieces of one index";
        return std::nullopt;
      }
  int64_t replicas = 1;
  for (const IterSplit &s : spread)
    replicas *= s.extent;
  Shape kept;
  for (size_t d = 0; d < rank(); ++d)
    if (d != dim)
      kept.push_back(inputVars[d].extent);
  return fromThreadMap(
      kept,
      [&](llvm::ArrayRef<IntExpr> index, const IntExpr &rep) {
        // rep enumerates the spread digits, the first one fastest; the pieces the thread
        // index does not read are taken as 0 (any value gives the same thread).
        IntExpr rest = rep, reducedValue = 0, oldReplica = 0;
        for (const IterSplit &s : spread) {
          IntExpr term = rest % s.extent * s.lower;
          rest = rest / s.extent;
          (s.var.varId() == reduced ? reducedValue : oldReplica) =
              (s.var.varId() == reduced ? reducedValue : oldReplica) + term;
        }
        IndexList to;
        for (size_t d = 0, k = 0; d < rank(); ++d)
          to.push_back(d == dim ? reducedValue : index[k++]);
        to.push_back(oldReplica);
        return substituteVars(threadIndex, domain, to);
      },
      replicas, whyNot);
}

Fragment Fragment::reshape(llvm::ArrayRef<int64_t> newShape) const {
  assert(numElements(newShape) == numElements(shape()) && "reshape must keep the size");
  auto vars = makeIndexVars(newShape);
  IndexList old = unflattenRowMajor(flattenRowMajor(varsOf(vars), newShape), shape());
  return Fragment(std::move(vars), replicaVar, substituteVars(threadIndex, inputVars, old),
                  substituteVars(regIndex, inputVars, old));
}

Fragment Fragment::compose(const Layout &inner) const {
  assert(inner.outputRank() == rank() && "composition rank mismatch");
  llvm::SmallVector<IterVarDomain, 4> vars(inner.inputs().begin(), inner.inputs().end());
  return Fragment(std::move(vars), replicaVar,
                  substituteVars(threadIndex, inputVars, inner.outputs()),
                  substituteVars(regIndex, inputVars, inner.outputs()));
}

Layout Fragment::asLayout() const {
  auto domain = replicate() > 1 ? domainWithReplica() : inputVars;
  return Layout(std::move(domain), {threadIndex, regIndex});
}

std::optional<Layout> Fragment::inverse(std::string *whyNot) const {
  return asLayout().inverse(whyNot);
}

bool Fragment::isEqual(const Fragment &other) const {
  if (shape() != other.shape() || replicate() != other.replicate())
    return false;
  auto domain = domainWithReplica();
  IndexList ours = varsOf(domain);
  auto theirDomain = other.domainWithReplica();
  VarBounds bounds = boundsOf(domain);
  auto same = [&](const IntExpr &mine, const IntExpr &theirs) {
    return canonicalizeIndexExpr(substituteVars(theirs, theirDomain, ours), domain, bounds) ==
           mine;
  };
  if (same(threadIndex, other.threadIndex) && same(regIndex, other.regIndex))
    return true;
  bool equal = true;
  forEachIndex(shape(), [&](llvm::ArrayRef<int64_t> index) {
    for (int64_t rep = 0; rep < replicate() && equal; ++rep)
      equal = evaluate(index, rep) == other.evaluate(index, rep);
  });
  return equal;
}

void Fragment::print(llvm::raw_ostream &os) const {
  IntExprPrinter printer;
  printer.rename(replicaVar.var, "rep");
  os << "fragment[";
  for (size_t d = 0; d < rank(); ++d) {
    printer.rename(inputVars[d].var, indexName(d));
    os << (d ? ", " : "") << inputVars[d].extent;
  }
  os << "] threads " << numThreads << " regs " << numRegisters;
  if (replicate() > 1)
    os << " replicate " << replicate();
  os << " (";
  for (size_t d = 0; d < rank(); ++d)
    os << (d ? ", " : "") << indexName(d);
  if (replicate() > 1)
    os << ", rep";
  os << ") => thread ";
  printer.print(os, threadIndex);
  os << ", reg ";
  printer.print(os, regIndex);
}

std::string Fragment::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return os.str();
}

llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const Fragment &fragment) {
  fragment.print(os);
  return os;
}

} // namespace tlc
