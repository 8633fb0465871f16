// Lowering of parallel loops: each thread visits the registers it owns of the loop's driving
// fragment, or (without a fragment) threads stride over the flattened iteration space.
#include "lower/KernelLowering.h"

#include "infer/ParallelAccess.h"

namespace tlc::lower {

namespace {

// A shared read of a parallel loop that each thread makes `width` elements at a time.
struct VectorRead {
  const IndexExpr *ix;
  const ftg::Buffer *buffer;
  int width;
};

bool isVar(const Expr *e, const Decl *var) {
  auto *n = llvm::dyn_cast_or_null<NameExpr>(e);
  return n && n->decl == var;
}

// The reads of shared tiles at the loop's column variable (`x_s[j]`, `A_s[i, j]`, leading
// indices the row variable or constants) that a thread can make as one 4- to 16-byte load per
// run of its driver registers: the driver's layout puts each run of `width` registers on
// consecutive columns of one row, starting at a multiple of `width` (checked for every thread
// and register), the tile is row-major (no swizzle or annotation) with rows a multiple of the
// vector, the loop writes no element of it, and the tile covers the loop's whole range, so
// that the elements of a run the body does not read (under an `if`) are in bounds too. nvcc
// does not merge the element loads itself: it cannot prove the alignment.
std::vector<VectorRead> vectorSharedReads(const ftg::Graph &g, const ftg::Node &n) {
  const ForStmt *f = n.loop;
  const FragmentLayout &l = *n.driver->fragment;
  if (l.kind != FragmentLayout::Blocked)
    return {};
  const Decl *rowVar = f->vars.size() == 2 ? f->vars[0] : nullptr;
  const Decl *colVar = f->vars.back();
  std::vector<infer::FragmentAccess> accesses = infer::collectFragmentAccesses(g, *f, Scope::Shared);
  llvm::SmallPtrSet<const ftg::Buffer *, 4> written;
  for (const infer::FragmentAccess &a : accesses)
    if (a.isWrite)
      written.insert(a.buffer);
  // Registers whose runs of `w` lie on consecutive columns of one row, from a multiple of `w`.
  auto runsContiguous = [&](int w) {
    if (l.registers() % w)
      return false;
    for (int64_t t = 0; t < l.threads; ++t)
      for (int64_t r = 0; r < l.registers(); r += w) {
        int64_t row = l.rowAt(t, r), col = l.colAt(t, r);
        if (col % w)
          return false;
        for (int d = 1; d < w; ++d)
          if (l.rowAt(t, r + d) != row || l.colAt(t, r + d) != col + d)
            return false;
      }
    return true;
  };
  std::vector<VectorRead> out;
  for (const infer::FragmentAccess &a : accesses) {
    const ftg::Buffer &b = *a.buffer;
    const IndexExpr *ix = a.expr;
    if (a.isWrite || written.count(&b) || !b.shared || b.packed || b.shared->isAnnotated() || b.shared->isSwizzled() ||
        b.shared->isPanelled() || b.shared->elemBits < 8 || ix->indices.size() != b.shape.size() ||
        !isVar(ix->indices.back().lo, colVar) || !b.shape.back() || *b.shape.back() < l.cols)
      continue;
    bool leadingOk = true;
    for (size_t d = 0; d + 1 < ix->indices.size() && leadingOk; ++d) {
      const Expr *e = ix->indices[d].lo;
      std::optional<int64_t> extent = b.shape[d];
      if (isVar(e, rowVar))
        leadingOk = extent && *extent >= l.rows;
      else
        leadingOk = e && e->constant && e->constant->isInt() && extent && e->constant->getInt() >= 0 &&
                    e->constant->getInt() < *extent;
    }
    if (!leadingOk)
      continue;
    int bytes = b.shared->elemBits / 8;
    int w = 16 / bytes;
    while (w * bytes >= 4 && (l.vec % w || b.shared->cols % w || !runsContiguous(w)))
      w /= 2;
    if (w * bytes >= 4 && w > 1)
      out.push_back({ix, &b, w});
  }
  return out;
}

} // namespace

void KernelLowering::lowerParallel(const ftg::Node &n) {
  tileOp(n, [&] { parallelElements(n); });
}

void KernelLowering::parallelElements(const ftg::Node &n) {
  const ForStmt *f = n.loop;
  nonNegativeVars.insert(f->vars.begin(), f->vars.end()); // each in [0, extent)
  std::string vars;
  for (size_t i = 0; i < f->vars.size(); ++i)
    vars += (i ? ", " : "") + f->vars[i]->getName().str() + " < " + toSource(f->extents[i]);
  if (n.driver) {
    const FragmentLayout &l = *n.driver->fragment;
    add(makeComment("parallel(" + vars + "): each thread visits its " + std::to_string(l.registers()) +
                    " registers of fragment '" + n.driver->name + "'"));
    // Each vector read goes into an array declared outside the register loop, which is
    // unrolled: the array's indices are constants and it stays in registers.
    std::vector<VectorRead> vectors = vectorSharedReads(g, n);
    std::vector<std::string> arrays;
    for (const VectorRead &v : vectors) {
      arrays.push_back(fresh("vec"));
      add(makeComment("'" + v.buffer->name + "' read " + std::to_string(v.width) +
                      " elements at a time: each run of a thread's registers is a run of its columns"));
      Stmt &decl = add(std::make_unique<Stmt>(StmtKind::Decl));
      decl.type = cppType(v.buffer->dtype);
      decl.name = arrays.back();
      decl.count = v.width;
      decl.align = 16;
    }
    auto registerLoop = [&] {
      std::string r = fresh("r");
      nest(makeFor(ForRole::Registers, r, "0", std::to_string(l.registers()), "", 0), [&] {
        if (f->vars.size() == 2) {
          add(makeLet("const int", cppName(f->vars[0]->getName()), l.rowOf(kThreadIndex, r)));
          add(makeLet("const int", cppName(f->vars[1]->getName()), l.colOf(kThreadIndex, r)));
        } else {
          add(makeLet("const int", cppName(f->vars[0]->getName()),
                      l.kind == FragmentLayout::Row ? l.rowOf(kThreadIndex, r) : l.colOf(kThreadIndex, r)));
        }
        for (size_t i = 0; i < vectors.size(); ++i) {
          const VectorRead &v = vectors[i];
          std::string w = std::to_string(v.width);
          std::vector<Access> reads;
          std::string src = "&" + elementRef(v.ix);
          reads.push_back(access(v.buffer));
          StmtPtr load = makeIf(r + " % " + w + " == 0", IfStyle::SameLine);
          load->body.push_back(withAccess(
              makeEval("tl::copy_vec<" + std::to_string(v.width * v.buffer->shared->elemBits / 8) + ">(" +
                       arrays[i] + ", " + src + ")"),
              reads, {}));
          accessing(add(std::move(load)), reads, {});
          vectorReads[v.ix] = arrays[i] + "[" + r + " % " + w + "]";
        }
        const ftg::Node *saved = parallelNode;
        std::string savedReg = parallelReg;
        parallelNode = &n;
        parallelReg = r;
        scalarStmt(f->body);
        parallelNode = saved;
        parallelReg = savedReg;
        for (const VectorRead &v : vectors)
          vectorReads.erase(v.ix);
      });
    };
    std::optional<TileVersions> versions = tileVersions(n);
    if (!versions) {
      registerLoop();
      return;
    }
    // Two versions: one for the tiles where each such comparison is the same at every element
    // (TileConditions.cpp), one as written for the tiles on an edge.
    std::string lines, box;
    for (unsigned line : versions->lines)
      lines += (lines.empty() ? "" : ", ") + std::to_string(line);
    for (const Expr *e : f->extents)
      box += (box.empty() ? "" : "x") + std::to_string(e->constant->getInt());
    std::string which = "the comparison" + std::string(versions->conditions.size() > 1 ? "s" : "") + " of line" +
                        (versions->lines.size() > 1 ? "s " : " ") + lines;
    // The version where each comparison is its block-uniform value.
    auto decidedLoop = [&] {
      uniformConditions = &*versions;
      registerLoop();
      uniformConditions = nullptr;
    };
    if (versions->taken == "true") {
      add(makeComment(which + " decided at compile time for every element of the " + box + " tile"));
      decidedLoop();
      return;
    }
    add(makeComment(which + ", tested once for the whole " + box +
                    " tile: a version of the loop without per-element tests where the tile decides them"));
    for (const TileVersions::Test &t : versions->tests)
      add(makeLet("const bool", t.name, t.value, /*maybeUnused=*/false));
    Stmt &choice = add(makeIf(versions->taken));
    choice.variants = true;
    within(choice.body, decidedLoop);
    within(choice.elseBody, registerLoop);
    return;
  }
  std::string total;
  for (const Expr *e : f->extents)
    total += (total.empty() ? "" : " * ") + std::string("(") + expr(e) + ")";
  std::string idx = fresh("e");
  add(makeComment("parallel(" + vars + "): threads stride over the flattened index"));
  nest(makeFor(ForRole::Threads, idx, kThreadIndex, total, std::to_string(g.threads)), [&] {
    std::string rest = idx;
    for (size_t i = f->vars.size(); i-- > 0;) {
      std::string extent = "(" + expr(f->extents[i]) + ")";
      add(makeLet("const int", cppName(f->vars[i]->getName()), i == 0 ? rest : rest + " % " + extent));
      if (i)
        rest = "(" + rest + " / " + extent + ")";
    }
    scalarStmt(f->body);
  });
}

} // namespace tlc::lower
