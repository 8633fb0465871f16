#include "ir/InferenceVerifier.h"

#include "ir/AccessAnalysis.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace tlc::ftg {

namespace {

std::string enumerateSharedLayout(const SharedLayout &l, int64_t elems);

// Why `l` does not map the [rows, cols] tile of `b` one-to-one into its elements, or "".
std::string sharedLayoutProblem(const Buffer &b, const SharedLayout &l) {
  int64_t elems = b.numElements();
  if (l.rows * l.cols != elems)
    return "layout covers " + std::to_string(l.rows) + "x" + std::to_string(l.cols) +
           " elements but the buffer has " + std::to_string(elems);
  if (l.isPanelled() && (l.panelCols <= 0 || l.cols % l.panelCols != 0))
    return "layout " + l.str() + " does not cut its rows into whole panels";
  if (l.isSwizzled()) {
    // The XOR may only permute chunks within a row: whole chunks, and groups of mask + 1
    // chunks that divide the row.
    int64_t perChunk = int64_t(l.unitBytes) * 8 / l.elemBits;
    int64_t chunks = perChunk > 0 && l.cols % perChunk == 0 ? l.cols / perChunk : 0;
    if (chunks == 0 || chunks % (int64_t(l.mask) + 1) != 0 || (l.mask & (l.mask + 1)) != 0 ||
        (l.unitFlipBit > 0 && chunks % 2 != 0))
      return "swizzle " + l.str() + " moves chunks out of their row";
  }
  if (elems > kVerifyEnumerationLimit)
    return "";
  // The inferred families are pure functions of their parameters, and `tlc recommend` infers
  // the same few tiles for every candidate it ranks (a third of its time went to enumerating
  // them again): each parameter set is enumerated once per thread. Annotated layouts are not
  // cached (their offsets are the user's lambda).
  using Key = std::tuple<int64_t, int64_t, int, int, int, int, int64_t>;
  thread_local std::map<Key, std::string> verified;
  std::optional<Key> key;
  if (!l.isAnnotated()) {
    key = Key(l.rows, l.cols, l.elemBits, l.mask, l.rowShift, l.unitBytes, l.panelCols);
    if (auto it = verified.find(*key); it != verified.end())
      return it->second;
    if (verified.size() >= 4096)
      verified.clear();
  }
  std::string problem = enumerateSharedLayout(l, elems);
  if (key)
    verified.emplace(*key, problem);
  return problem;
}

// Every element of `l`'s [rows, cols] tile at a distinct offset in [0, elems), or why not.
std::string enumerateSharedLayout(const SharedLayout &l, int64_t elems) {
  std::vector<bool> hit(size_t(elems), false);
  for (int64_t i = 0; i < l.rows; ++i)
    for (int64_t j = 0; j < l.cols; ++j) {
      int64_t o = l.offset(i, j);
      if (o < 0 || o >= elems)
        return "element (" + std::to_string(i) + ", " + std::to_string(j) + ") maps to offset " +
               std::to_string(o) + ", outside its " + std::to_string(elems) + " elements";
      if (hit[size_t(o)])
        return "element (" + std::to_string(i) + ", " + std::to_string(j) +
               ") maps to offset " + std::to_string(o) + ", which another element also uses";
      hit[size_t(o)] = true;
    }
  return "";
}

// Why `l` does not cover the tile of fragment `b` exactly, or "". A proof from the layout
// algebra rather than an enumeration: the fragment's map (index, replica) -> (thread,
// register) is inverted, which succeeds exactly when it is a bijection onto the threads'
// registers, i.e. when every element is held once per replica and no register is shared.
std::string fragmentLayoutProblem(const Buffer &b, const FragmentLayout &l) {
  bool isRow = l.kind == FragmentLayout::Row;
  int64_t rows = isRow ? b.numElements() : b.shape.size() == 1 ? 1 : b.shape[0].value_or(1);
  int64_t cols = isRow ? 1 : b.shape.empty() ? 1 : b.shape.back().value_or(1);
  if (b.shape.size() > 2 || rows != l.rows || (!isRow && cols != l.cols))
    return "layout " + l.str() + " does not have the buffer's shape";
  if (!l.algebra)
    return "layout " + l.str() + " has no fragment";
  const Fragment &f = l.fragment();
  Shape want = isRow ? Shape{rows} : Shape{rows, cols};
  if (f.shape() != want)
    return "fragment " + f.str() + " does not have the buffer's shape";
  if (f.threadExtent() != l.threads)
    return "fragment " + f.str() + " uses " + std::to_string(f.threadExtent()) +
           " threads, but the block has " + std::to_string(l.threads);
  int64_t copies = l.kind == FragmentLayout::Blocked || l.kind == FragmentLayout::Generic ? l.replicas : 1;
  if (!isRow && f.replicate() != copies)
    return "fragment " + f.str() + " holds its elements " + std::to_string(f.replicate()) +
           " times, its layout says " + std::to_string(copies);
  std::string whyNot;
  if (!f.inverse(&whyNot))
    return "fragment " + f.str() + " is not one-to-one onto the threads' registers: " + whyNot;
  return "";
}

} // namespace

bool verifyInference(const Graph &g, llvm::raw_ostream &errors) {
  bool ok = true;
  auto fail = [&](const Buffer &b, const std::string &what) {
    errors << "inference verifier: " << scopeName(b.scope) << " buffer '" << b.name << "': " << what
           << "\n";
    ok = false;
  };
  std::vector<const Buffer *> placed;
  for (const auto &bp : g.buffers) {
    const Buffer &b = *bp;
    if (b.shared)
      if (std::string p = sharedLayoutProblem(b, *b.shared); !p.empty())
        fail(b, p);
    if (b.fragment)
      if (std::string p = fragmentLayoutProblem(b, *b.fragment); !p.empty())
        fail(b, p);
    if (b.scope == Scope::Shared && b.sharedOffset >= 0)
      placed.push_back(&b);
  }
  // Shared-memory plan: inside the planned bytes, no two buffers live together share bytes.
  // Buffers no node touches count as live throughout (as the planner treats them).
  auto lifetimes = topLevelLifetimes(g);
  auto end = [](const Buffer *b) { return b->sharedOffset + b->bytes() * b->stages; };
  for (size_t i = 0; i < placed.size(); ++i) {
    const Buffer *a = placed[i];
    if (g.sharedBytes > 0 && end(a) > g.scratchOffset)
      fail(*a, "bytes [" + std::to_string(a->sharedOffset) + ", " + std::to_string(end(a)) +
                   ") extend past the planned " + std::to_string(g.scratchOffset) + " bytes");
    for (size_t j = i + 1; j < placed.size(); ++j) {
      const Buffer *b = placed[j];
      auto la = lifetimes.find(a), lb = lifetimes.find(b);
      bool together = la == lifetimes.end() || lb == lifetimes.end() || la->second.overlaps(lb->second);
      if (together && a->sharedOffset < end(b) && b->sharedOffset < end(a))
        fail(*b, "bytes [" + std::to_string(b->sharedOffset) + ", " + std::to_string(end(b)) +
                     ") overlap '" + a->name + "' [" + std::to_string(a->sharedOffset) + ", " +
                     std::to_string(end(a)) + ") while both are live");
    }
  }
  // Every fragment a node touches has a layout (lowering indexes registers through it), and
  // every shared buffer a prefetched copy writes rotates over at least two stages (with one,
  // the copy for iteration k + 1 would overwrite the tile iteration k still reads).
  llvm::SmallPtrSet<const Buffer *, 8> reported;
  g.walk([&](const Node &n) {
    for (const auto *set : {&n.reads, &n.writes})
      for (const Buffer *b : *set)
        if (b->scope == Scope::Fragment && !b->fragment && reported.insert(b).second)
          fail(*b, "is used but layout inference gave it no layout");
    if (n.producer) {
      std::vector<const Buffer *> written;
      for (const Operand &o : n.outputs)
        written.push_back(o.buffer);
      if (n.gather)
        written.push_back(n.gather->dst);
      for (const Buffer *b : written)
        if (b && b->scope == Scope::Shared && b->stages < 2)
          fail(*b, "is written by a prefetched copy but has " + std::to_string(b->stages) +
                       " stage (a pipeline needs 2 or more)");
    }
  });
  return ok;
}

} // namespace tlc::ftg
