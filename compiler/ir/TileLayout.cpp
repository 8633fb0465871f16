#include "ir/TileLayout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>

namespace tlc {

namespace {

std::string paren(const std::string &s) {
  bool simple = std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  return simple ? s : "(" + s + ")";
}

int log2Exact(int64_t x) {
  int k = 0;
  while ((int64_t(1) << k) < x)
    ++k;
  return (int64_t(1) << k) == x ? k : -1;
}

} // namespace

// ------------------------------------------------------------------ shared

SharedLayout SharedLayout::rowMajor(int64_t rows, int64_t cols, int elemBits) {
  SharedLayout l;
  l.rows = rows;
  l.cols = cols;
  l.elemBits = elemBits;
  return l;
}

SharedLayout SharedLayout::swizzled(int64_t rows, int64_t cols, int elemBits) {
  SharedLayout l = rowMajor(rows, cols, elemBits);
  int64_t rowBytes = cols * elemBits / 8;
  if (cols * elemBits % 128 != 0)
    return l;
  int64_t chunks = rowBytes / 16;
  // The XOR permutes chunks only within groups of `group` chunks, the largest power of two
  // (at most 8) dividing the row's chunk count, so every chunk stays inside its own row: a
  // bijection for every width. (XORing a 12-chunk row with row & 7 sent chunks 8-11 past
  // the row's end.)
  int64_t group = 1;
  while (group < 8 && chunks % (group * 2) == 0)
    group *= 2;
  if (group == 1)
    return l; // an odd chunk count staggers consecutive rows over the banks by itself
  // 8 chunks of 16 bytes span all 32 banks. A row of c chunks starts (c * row) % 8 chunks
  // into that span, which repeats every 8 / group rows; the key is the row index shifted
  // past them, so the 8 rows one ldmatrix phase reads hit 8 distinct 16-byte bank groups.
  // Rows of 2, 4, 8, 16, ... chunks (32-, 64-, 128-wide f16 tiles) keep their layout.
  l.mask = int(group - 1);
  l.rowShift = log2Exact(8 / group);
  return l;
}

std::optional<SharedLayout> SharedLayout::xorUnits(int64_t rows, int64_t cols, int elemBits, int unitBytes,
                                                   int rowShift, int mask, int flipBit) {
  SharedLayout l = rowMajor(rows, cols, elemBits);
  if (unitBytes <= 0 || unitBytes * 8 % elemBits != 0 || (mask & (mask + 1)) != 0 || mask == 0 || flipBit < 0 ||
      flipBit > 30)
    return std::nullopt;
  int64_t perUnit = int64_t(unitBytes) * 8 / elemBits;
  if (cols % perUnit != 0 || (cols / perUnit) % (int64_t(mask) + 1) != 0)
    return std::nullopt;
  // The flip exchanges units 2i and 2i + 1, and is only worth its name where bit flipBit of a
  // unit index varies inside the row.
  if (flipBit > 0 && (cols / perUnit) % (int64_t(2) << flipBit) != 0)
    return std::nullopt;
  l.unitBytes = unitBytes;
  l.mask = mask;
  l.rowShift = rowShift;
  l.unitFlipBit = flipBit;
  return l;
}

std::optional<SharedLayout> SharedLayout::wgmmaOperand(int64_t rows, int64_t cols, int elemBits) {
  if (elemBits <= 0 || cols * elemBits % 8 != 0 || rows % 8 != 0)
    return std::nullopt;
  int64_t rowBytes = cols * elemBits / 8;
  // The widest span dividing the row (tl::GmmaLayout): 8, 4 or 2 chunks of 16 bytes (the
  // 128B, 64B and 32B modes); a 192-byte row is three 64-byte panels.
  int64_t span = 0;
  for (int64_t chunks = 8; chunks >= 2 && span == 0; chunks /= 2)
    if (rowBytes % (16 * chunks) == 0)
      span = 16 * chunks;
  if (span == 0)
    return std::nullopt;
  int64_t panel = span * 8 / elemBits;
  // Inside a panel, exactly swizzled()'s permutation of a span-wide row: the hardware's
  // 128B/64B/32B patterns (chunk ^= row % 8, (row / 2) % 4, (row / 4) % 2).
  SharedLayout l = swizzled(rows, panel, elemBits);
  l.cols = cols;
  l.panelCols = panel;
  return l;
}

SharedLayout SharedLayout::fromAnnotation(int64_t rows, int64_t cols, int elemBits,
                                          std::shared_ptr<const AnnotatedLayout> annotated) {
  SharedLayout l = rowMajor(rows, cols, elemBits);
  l.annotated = std::move(annotated);
  return l;
}

std::string SharedLayout::offsetExpr(const std::string &row, const std::string &col) const {
  std::string r = paren(row), c = paren(col);
  if (annotated)
    return annotated->address.toCpp({r, c})[0];
  if (isPanelled() && panelCols != cols) {
    SharedLayout panel = *this;
    panel.cols = panelCols;
    panel.panelCols = 0;
    std::string p = std::to_string(panelCols);
    return "(" + c + " / " + p + ") * " + std::to_string(rows * panelCols) + " + " +
           panel.offsetExpr(r, c + " % " + p);
  }
  if (!isSwizzled())
    return r + " * " + std::to_string(cols) + " + " + c;
  int perChunk = unitBytes * 8 / elemBits;
  std::string key = rowShift ? "((" + r + " >> " + std::to_string(rowShift) + ") & " +
                                   std::to_string(mask) + ")"
                             : "(" + r + " & " + std::to_string(mask) + ")";
  if (unitFlipBit > 0)
    key += " ^ (((" + c + " / " + std::to_string(perChunk) + ") >> " + std::to_string(unitFlipBit) + ") & 1)";
  return r + " * " + std::to_string(cols) + " + (((" + c + " / " + std::to_string(perChunk) +
         ") ^ " + key + ") * " + std::to_string(perChunk) + ") + " + c + " % " +
         std::to_string(perChunk);
}

int64_t SharedLayout::offset(int64_t row, int64_t col) const {
  if (annotated)
    return annotated->address.evaluate({row, col})[0];
  if (isPanelled() && panelCols != cols) {
    SharedLayout panel = *this;
    panel.cols = panelCols;
    panel.panelCols = 0;
    return (col / panelCols) * rows * panelCols + panel.offset(row, col % panelCols);
  }
  if (!isSwizzled())
    return row * cols + col;
  int perChunk = unitBytes * 8 / elemBits;
  int64_t chunk = (col / perChunk) ^ ((row >> rowShift) & mask);
  if (unitFlipBit > 0)
    chunk ^= ((col / perChunk) >> unitFlipBit) & 1;
  return row * cols + chunk * perChunk + col % perChunk;
}

bool SharedLayout::sameOffsets(const SharedLayout &o) const {
  if (rows != o.rows || cols != o.cols)
    return false;
  if (*this == o)
    return true;
  if (rows * cols > kMaxOffsetCompare)
    return false;
  // An annotated layout remembers its answer for each inferred layout (str() names one).
  const AnnotatedLayout *memo = annotated && !o.annotated ? annotated.get()
                                : o.annotated && !annotated ? o.annotated.get()
                                                            : nullptr;
  std::string key = memo ? (annotated ? o : *this).str() + " " + std::to_string(elemBits) : "";
  if (memo)
    for (const auto &[k, same] : memo->sameOffsetsAs)
      if (k == key)
        return same;
  bool same = true;
  for (int64_t i = 0; i < rows && same; ++i)
    for (int64_t j = 0; j < cols && same; ++j)
      same = offset(i, j) == o.offset(i, j);
  if (memo)
    memo->sameOffsetsAs.push_back({key, same});
  return same;
}

std::string SharedLayout::str() const {
  std::string s = "[" + std::to_string(rows) + ", " + std::to_string(cols) + "] ";
  if (annotated) {
    // The user's map as written (simplified), then the offset it gives the [rows, cols] view.
    // Layout::str() is `layout[shape] (i, j) => [...]`; the shape is printed already.
    auto body = [](const Layout &l) {
      std::string t = l.str();
      return t.substr(t.find("] ") + 2);
    };
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "annotated " << body(annotated->indexMap) << ", offset " << body(annotated->address);
    if (annotated->vectorRun > 1)
      os << ", " << annotated->vectorRun << "-element vectors";
    return s + os.str();
  }
  if (isPanelled())
    s += "wgmma " + std::to_string(panelCols * elemBits / 8) + "-byte swizzle" +
         (panelCols != cols ? " in panels of " + std::to_string(panelCols) + " columns" : "") + ", ";
  if (!isSwizzled())
    return s + "row-major";
  return s + "swizzled(chunk ^= (row >> " + std::to_string(rowShift) + ") & " + std::to_string(mask) +
         (unitFlipBit > 0 ? " ^ (chunk >> " + std::to_string(unitFlipBit) + ") & 1" : "") + ", " +
         std::to_string(unitBytes) + "-byte chunks)";
}

// ------------------------------------------------------------------ fragments

namespace {

// The inverse of `fragment` (with `rows` filled in for full layouts): what lowering prints.
std::shared_ptr<FragmentAlgebra> invert(const Fragment &fragment) {
  auto a = std::make_shared<FragmentAlgebra>(FragmentAlgebra{fragment, {}, {}, {}, {}, nullptr, {}, {}});
  std::string whyNot;
  std::optional<Layout> inverse = fragment.inverse(&whyNot);
  // Every family is a bijection between its tile (times its replicas) and the threads'
  // registers; the factories' own tests prove it for each shape they accept.
  assert(inverse && "a fragment layout family that is not invertible");
  (void)whyNot;
  a->thread = inverse->inputs()[0];
  a->reg = inverse->inputs()[1];
  a->position.assign(inverse->outputs().begin(), inverse->outputs().begin() + fragment.rank());
  if (fragment.replicate() > 1)
    a->replica = inverse->outputs()[fragment.rank()];
  return a;
}

// The algebra of the full layout `build` makes, known to the cache as `key` (the family and
// its parameters). Inference builds the same few layouts again and again (the recommender
// runs it for every candidate), and the algebra is immutable: equal layouts share one.
std::shared_ptr<const FragmentAlgebra> buildFull(const std::string &key,
                                                 llvm::function_ref<Fragment()> build) {
  static llvm::StringMap<std::shared_ptr<const FragmentAlgebra>> built;
  if (auto hit = built.find(key); hit != built.end())
    return hit->second;
  // A process that compiles many kernels (the fuzzer, a host embedding tlc) keeps a bounded
  // cache.
  if (built.size() >= 4096)
    built.clear();
  Fragment fragment = build();
  std::shared_ptr<FragmentAlgebra> a = invert(fragment);
  std::optional<Fragment> rows = fragment.reduce(1);
  assert(rows && "a fragment layout family whose rows cannot be read off");
  a->rows = invert(*rows);
  // The row register of `reg`: the row layout's register of the row `reg` holds, which the
  // families make independent of the thread.
  llvm::SmallVector<IterVarDomain, 4> domain{a->thread, a->reg};
  IntExpr rowReg = substituteVars(rows->regExpr(), rows->inputs(), {a->position[0]});
  a->rowRegister = canonicalizeIndexExpr(rowReg, domain, boundsOf(domain));
  assert(!usesVar(a->rowRegister, a->thread.var) && "row register depends on the thread");
  for (int64_t j = 0; j < fragment.shape()[1]; ++j)
    a->rowThreads.push_back(fragment.evaluate({0, j}).thread);
  llvm::sort(a->rowThreads);
  a->rowThreads.erase(std::unique(a->rowThreads.begin(), a->rowThreads.end()), a->rowThreads.end());
  built[key] = a;
  return a;
}

std::string print(const FragmentAlgebra &a, const IntExpr &e, const std::string &tid,
                  const std::string &r) {
  llvm::SmallVector<IterVarDomain, 2> domain{a.thread, a.reg};
  VarBounds bounds = boundsOf(domain);
  IntExprPrinter printer = IntExprPrinter::cpp(&bounds);
  printer.rename(a.thread.var, paren(tid)).rename(a.reg.var, paren(r));
  return printer.toString(e);
}

int64_t evaluateAt(const FragmentAlgebra &a, const IntExpr &e, int64_t tid, int64_t r) {
  VarValues values;
  values[a.thread.var.varId()] = tid;
  values[a.reg.var.varId()] = r;
  return evaluate(e, values).value_or(-1);
}

} // namespace

FragmentLayout FragmentLayout::mmaC(int64_t rows, int64_t cols, int threads, int wm, int wn,
                                    const Fragment &atomC) {
  FragmentLayout l;
  l.kind = MmaC;
  l.rows = rows;
  l.cols = cols;
  l.threads = threads;
  l.wm = wm;
  l.wn = wn;
  l.atomM = int(atomC.shape()[0]);
  l.atomN = int(atomC.shape()[1]);
  assert(rows % (int64_t(wm) * l.atomM) == 0 && cols % (int64_t(wn) * l.atomN) == 0);
  std::string key = "mma " + std::to_string(rows) + "x" + std::to_string(cols) + " warps " +
                    std::to_string(wm) + "x" + std::to_string(wn) + " atom " + atomC.str();
  l.algebra = buildFull(key, [&] {
    return atomC.repeat({l.mTiles(), l.nTiles()}, RepeatOn::Register).repeat({wm, wn}, RepeatOn::Thread);
  });
  return l;
}

FragmentLayout FragmentLayout::mmaTransposedRuns(int64_t rows, int64_t cols, int threads, int warpSize) {
  FragmentLayout l;
  l.kind = Generic;
  l.rows = rows;
  l.cols = cols;
  l.threads = threads;
  // mma.m16n8's C fragment: lane = 4 * groupID + threadID_in_group over a warp of warpSize lanes.
  const int64_t warps = threads / warpSize, half = cols / 2;
  assert(rows % 8 == 0 && cols == 16 * warps && threads % warpSize == 0);
  l.description = "mma.m16n8 accumulator transposed (activations as B), weight rows g and g + " +
                  std::to_string(half) + " of each lane, warps " + std::to_string(warps);
  std::string key = "mma transposed runs " + std::to_string(rows) + "x" + std::to_string(cols) + " threads " +
                    std::to_string(threads) + " warp " + std::to_string(warpSize);
  l.algebra = buildFull(key, [&] {
    return Fragment::make({rows, cols}, [&](llvm::ArrayRef<IntExpr> x, const IntExpr &) {
      const IntExpr &m = x[0], &n = x[1];
      IntExpr lane = (n % 8) * 4 + (m % 8) / 2;
      IntExpr warp = (n % half) / 8;
      return Fragment::Placement{warp * warpSize + lane, (m / 8) * 4 + (n / half) * 2 + m % 2};
    });
  });
  return l;
}

// What partialSums() and summed() add to the part's description: one text, so that summed()
// can take it off again.
static std::string groupsText(int groups, bool partial) {
  return (partial ? ", partial sums over " : ", summed, held by ") + std::to_string(groups) + " thread groups";
}

FragmentLayout FragmentLayout::partialSums(const FragmentLayout &part, int groups) {
  FragmentLayout l = part;
  l.kind = Generic;
  l.threads = part.threads * groups;
  l.partials = groups;
  l.replicas = groups;
  l.description = part.family() + groupsText(groups, true);
  // Layouts are equal when their descriptions are (Generic): the part's own name keeps them apart.
  std::string key = "partials " + std::to_string(groups) + " of " + part.str() + " threads " +
                    std::to_string(part.threads);
  l.algebra = buildFull(key, [&] { return part.fragment().replicate(groups); });
  return l;
}

FragmentLayout FragmentLayout::summed() const {
  assert(kind == Generic && partials > 1);
  FragmentLayout l = *this;
  l.partials = 1;
  const std::string partial = groupsText(partials, true);
  l.description = description.substr(0, description.size() - partial.size()) + groupsText(partials, false);
  return l;
}

FragmentLayout FragmentLayout::blocked(int64_t rows, int64_t cols, int threads, int vec, bool &ok,
                                       int replicas) {
  if (replicas < 1 || threads % replicas != 0) // blockedWith says it cannot (ok = false)
    return blockedWith(rows, cols, threads, 1, vec, ok, replicas);
  int copyThreads = threads / replicas;
  // Widest vector that divides the row, then as many threads per row as the row has vectors
  // (a power of two dividing the block), so that a row is a group of consecutive lanes.
  while (vec > 1 && cols % vec != 0)
    vec /= 2;
  int64_t vectors = cols / vec;
  int tpr = 1;
  while (tpr * 2 <= copyThreads && vectors % (tpr * 2) == 0)
    tpr *= 2;
  // Enough rows to keep every thread busy: fewer threads per row when rows are plentiful.
  while (tpr > 1 && rows % (copyThreads / (tpr / 2)) == 0 && rows >= copyThreads / (tpr / 2) &&
         (copyThreads / tpr) < rows)
    tpr /= 2;
  return blockedWith(rows, cols, threads, tpr, vec, ok, replicas);
}

FragmentLayout FragmentLayout::blockedWith(int64_t rows, int64_t cols, int threads, int tpr, int vec, bool &ok,
                                           int replicas, int colSplit) {
  FragmentLayout l;
  l.kind = Blocked;
  l.rows = rows;
  l.cols = cols;
  l.threads = threads;
  l.replicas = replicas;
  l.vec = vec;
  l.tpr = tpr;
  l.colSplit = colSplit;
  ok = replicas >= 1 && colSplit >= 1 && threads % (replicas * colSplit) == 0 && tpr >= 1 && vec >= 1 &&
       (threads / colSplit / replicas) % tpr == 0 && rows % l.rowsPerPass() == 0 &&
       cols % (int64_t(colSplit) * tpr * vec) == 0;
  if (!ok)
    return l;
  std::string key = "blocked " + std::to_string(rows) + "x" + std::to_string(cols) + " threads " +
                    std::to_string(threads) + " tpr " + std::to_string(tpr) + " vec " + std::to_string(vec) +
                    " replicas " + std::to_string(replicas) + " split " + std::to_string(colSplit);
  l.algebra = buildFull(key, [&] {
    // One thread's vector, spread over tpr consecutive threads along the row and over
    // rowsPerPass rows, the passes and chunks of a row then repeated on registers, and the
    // whole tile on `replicas` groups of threads.
    Fragment vector = Fragment::make({1, vec}, [](llvm::ArrayRef<IntExpr> x, const IntExpr &) {
      return Fragment::Placement{0, x[1]};
    });
    Fragment copy = vector.repeat({l.rowsPerPass(), tpr}, RepeatOn::Thread)
                        .repeat({rows / l.rowsPerPass(), l.chunksPerRow()}, RepeatOn::Register);
    if (replicas > 1)
      copy = copy.replicate(replicas);
    // Column slices side by side, each on the next group of threads.
    return colSplit > 1 ? copy.repeat({1, colSplit}, RepeatOn::Thread) : copy;
  });
  return l;
}

FragmentLayout FragmentLayout::fewestRegisters(int64_t rows, int64_t cols, int threads, int maxVec,
                                               bool &ok) {
  std::optional<FragmentLayout> best;
  auto better = [&](const FragmentLayout &l) {
    if (!best)
      return true;
    int64_t mine = l.rows * l.cols / (l.threads / l.replicas);
    int64_t theirs = best->rows * best->cols / (best->threads / best->replicas);
    if (mine != theirs)
      return mine < theirs;
    if (l.replicas != best->replicas)
      return l.replicas < best->replicas;
    return l.vec > best->vec;
  };
  // Copies on power-of-two thread groups, and at last one copy per thread (which any tile
  // fits, whatever the block size).
  std::vector<int> copies;
  for (int replicas = 1; replicas < threads; replicas *= 2)
    copies.push_back(replicas);
  copies.push_back(threads);
  for (int replicas : copies)
    for (int vec = std::max(1, maxVec); vec >= 1; vec /= 2) {
      bool fits = false;
      FragmentLayout l = blocked(rows, cols, threads, vec, fits, replicas);
      if (fits && better(l))
        best = l;
    }
  ok = best.has_value();
  if (!best) {
    bool unused = false;
    return blocked(rows, cols, threads, maxVec, unused);
  }
  return *best;
}

FragmentLayout::RowSpread FragmentLayout::rowSpread(int warpSize) const {
  const std::vector<int64_t> &t = algebra->rowThreads;
  assert(kind != Row && !t.empty());
  int lanes = int(llvm::count_if(t, [&](int64_t x) { return x / warpSize == t[0] / warpSize; }));
  // The row's lanes (sorted) step by a power of two: t[0] ^ k * stride for k < lanes, which
  // is the set a butterfly of that width and stride combines.
  int stride = lanes > 1 ? int(t[1] - t[0]) : 1;
  for (int k = 0; k < lanes; ++k)
    assert(t[k] == (t[0] ^ (int64_t(k) * stride)) && "a row's lanes form a butterfly group");
  return {lanes, int(t.size()) / lanes, stride};
}

FragmentLayout FragmentLayout::rowLayout() const {
  FragmentLayout l = *this;
  l.parent = kind == Row ? parent : kind;
  l.kind = Row;
  if (kind != Row)
    l.algebra = algebra->rows;
  return l;
}

const Fragment &FragmentLayout::fragment() const { return algebra->fragment; }

int FragmentLayout::registers() const { return int(algebra->fragment.registerCount()); }

std::string FragmentLayout::rowOf(const std::string &tid, const std::string &r) const {
  return print(*algebra, algebra->position[0], tid, r);
}

std::string FragmentLayout::colOf(const std::string &tid, const std::string &r) const {
  return kind == Row ? "0" : print(*algebra, algebra->position[1], tid, r);
}

std::string FragmentLayout::replicaGuard(const std::string &tid, const std::string &r) const {
  if (!algebra->replica)
    return "";
  return print(*algebra, algebra->replica, tid, r) + " == 0";
}

std::string FragmentLayout::replicaOf(const std::string &tid, const std::string &r) const {
  return algebra->replica ? print(*algebra, algebra->replica, tid, r) : "0";
}

std::string FragmentLayout::rowRegister(const std::string &r) const {
  assert(kind != Row);
  return print(*algebra, algebra->rowRegister, "0", r);
}

int64_t FragmentLayout::rowAt(int64_t tid, int64_t r) const {
  return evaluateAt(*algebra, algebra->position[0], tid, r);
}

int64_t FragmentLayout::colAt(int64_t tid, int64_t r) const {
  return kind == Row ? 0 : evaluateAt(*algebra, algebra->position[1], tid, r);
}

std::string FragmentLayout::family() const {
  switch (kind) {
  case MmaC: {
    // A 64-row atom is a warpgroup's (wgmma); the split is then over warpgroups.
    std::string unit = atomM == 64 ? "warpgroup" : "warp";
    return (atomM == 64 ? "wgmma.m" : "mma.m") + std::to_string(atomM) + "n" + std::to_string(atomN) +
           " accumulator, " + unit + "s " + std::to_string(wm) + "x" + std::to_string(wn) + " (" + unit +
           " tile " + std::to_string(warpRows()) + "x" + std::to_string(warpCols()) + ")";
  }
  case Blocked:
    return "blocked: " + std::to_string(tpr) + " threads/row, " + std::to_string(vec) +
           " contiguous elements/access, " + std::to_string(rowsPerPass()) + " rows/pass" +
           (replicas > 1 ? ", " + std::to_string(replicas) + " copies" : "") +
           (colSplit > 1 ? ", columns in " + std::to_string(colSplit) + " slices over thread groups" : "");
  case Generic:
    return description;
  case Row:
    return "rows of " +
           (parent == MmaC ? (atomM == 64 ? "a wgmma accumulator (warpgroups " : "an mma accumulator (warps ") +
                                 std::to_string(wm) + "x" + std::to_string(wn) + ")"
                           : "a blocked tile (" + std::to_string(tpr) + " threads/row)") +
           ", replicated across the row's threads";
  }
  return "";
}

std::string FragmentLayout::str() const {
  std::string shape = kind == Row ? "[" + std::to_string(rows) + "]"
                                  : "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
  return shape + " " + family() + ", " + std::to_string(registers()) + " registers/thread";
}

bool FragmentLayout::operator==(const FragmentLayout &o) const {
  if (kind != o.kind || rows != o.rows || threads != o.threads)
    return false;
  if (kind == Generic)
    return cols == o.cols && description == o.description && partials == o.partials;
  Kind family = kind == Row ? parent : kind;
  if (kind == Row && parent != o.parent)
    return false;
  if (kind != Row && cols != o.cols)
    return false;
  if (family == MmaC)
    return wm == o.wm && wn == o.wn && atomM == o.atomM && atomN == o.atomN &&
           (kind == Row ? warpRows() == o.warpRows() : true);
  return tpr == o.tpr && replicas == o.replicas && colSplit == o.colSplit && (kind == Row || vec == o.vec);
}

} // namespace tlc
