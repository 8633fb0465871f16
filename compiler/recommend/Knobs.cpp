#include "recommend/Knobs.h"
#include "recommend/ExprEval.h"
#include "recommend/KernelWalk.h"

#include "analysis/CheckedMath.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace tlc::recommend {

using llvm::dyn_cast;

llvm::StringRef knobRoleName(KnobRole r) {
  switch (r) {
  case KnobRole::Tile: return "tile";
  case KnobRole::Threads: return "threads";
  case KnobRole::Stages: return "stages";
  case KnobRole::Policy: return "policy";
  case KnobRole::Panel: return "panel";
  }
  return "?";
}

namespace {

// Where the kernel uses one parameter.
struct Uses {
  bool referenced = false; // anywhere in the kernel
  bool problem = false, threads = false, stages = false, panel = false, tile = false,
       gemmK = false;
  std::optional<int64_t> extent; // of a problem dimension the parameter tiles
};

class UseCollector {
public:
  UseCollector(const KernelDecl &k, const ExprEvaluator &shapes) : k(k), shapes(shapes) {}

  Uses collect(const CompileParamDecl *p) {
    Uses u;
    for (const TensorParamDecl *t : k.params)
      for (const Expr *d : t->shape.dims)
        u.problem |= mentions(d, p);
    u.threads = mentions(k.threads, p);
    u.referenced = u.problem || u.threads ||
                   llvm::any_of(k.grid, [&](const Expr *g) { return mentions(g, p); });
    forEachStmt(k.body, [&](const Stmt *s) {
      for (const Expr *e : exprsOf(s))
        u.referenced |= mentions(e, p);
      if (auto *a = dyn_cast<AllocStmt>(s))
        for (const Expr *d : a->buffer->shape.dims)
          u.tile |= mentions(d, p);
      if (auto *f = dyn_cast<ForStmt>(s); f && f->loopKind == LoopKind::Pipelined)
        for (const CallArg &a : f->args)
          if (a.keyword == "stages")
            u.stages |= mentions(a.value, p);
      if (auto *c = dyn_cast<CallStmt>(s))
        noteTileOp(c->call, p, u);
      for (const Expr *e : exprsOf(s))
        noteExtent(e, p, u);
    });
    for (const Expr *g : k.grid)
      noteExtent(g, p, u);
    return u;
  }

private:
  void noteTileOp(const CallExpr *c, const CompileParamDecl *p, Uses &u) {
    if (c->builtin == Builtin::SwizzleBlocks) {
      u.panel |= mentions(tileOpArg(c, 0, "panel"), p);
    } else if (c->builtin == Builtin::Gemm) {
      auto boolArg = [&](llvm::StringRef kw) {
        const CallArg *a = c->keywordArg(kw);
        return a && a->value->constant && a->value->constant->isBool() && a->value->constant->getBool();
      };
      // The reduction dimension: A's columns (rows if transposed), B's rows (columns).
      const BufferLikeDecl *a = operandBuffer(tileOpArg(c, 0, "A"));
      const BufferLikeDecl *b = operandBuffer(tileOpArg(c, 1, "B"));
      if (a && a->shape.rank() == 2)
        u.gemmK |= mentions(a->shape.dims[boolArg("transpose_A") ? 0 : 1], p);
      if (b && b->shape.rank() == 2)
        u.gemmK |= mentions(b->shape.dims[boolArg("transpose_B") ? 1 : 0], p);
    }
  }

  // `ceildiv(X, p)` with X known: p tiles a problem dimension of extent X.
  void noteExtent(const Expr *root, const CompileParamDecl *p, Uses &u) {
    forEachExpr(root, [&](const Expr *e) {
      auto *c = dyn_cast<CallExpr>(e);
      if (!c || c->builtin != Builtin::CeilDiv || c->args.size() != 2)
        return;
      auto *n = dyn_cast<NameExpr>(c->args[1].value);
      if (!n || n->decl != p)
        return;
      if (std::optional<int64_t> x = shapes.evalInt(c->args[0].value))
        u.extent = std::max(u.extent.value_or(0), *x);
    });
  }

  const KernelDecl &k;
  const ExprEvaluator &shapes;
};

int64_t nextPow2(int64_t x) { return powerOf2Ceil(x); }

std::vector<std::string> tileValues(const Uses &u, const target::TargetDesc &target) {
  const target::TensorPath &path = target.tensorPath();
  int64_t unit = u.gemmK ? path.mmaK : std::max(path.mmaM, path.mmaN);
  int64_t top = u.gemmK ? 128 : 256;
  std::vector<std::string> values;
  for (int64_t v = std::max<int64_t>(unit, 16); v <= top; v *= 2) {
    // Past the problem's extent a larger tile only computes padding; tiles of 16 are worth
    // trying only for small problems.
    // The two smallest tiles stay, so that tiny problems keep a tile the warps can split.
    if (u.extent && v > std::max<int64_t>(nextPow2(*u.extent), 2 * unit))
      continue;
    if (u.extent && v == 16 && *u.extent >= 256)
      continue;
    values.push_back(std::to_string(v));
  }
  return values;
}

std::vector<std::string> defaultValues(KnobRole role, const Uses &u, const target::TargetDesc &target) {
  switch (role) {
  case KnobRole::Tile: return tileValues(u, target);
  case KnobRole::Threads: {
    std::vector<std::string> v;
    for (int t : {64, 128, 256})
      if (t % target.warpSize == 0 && t <= target.threadsPerBlock)
        v.push_back(std::to_string(t));
    return v;
  }
  case KnobRole::Stages: return {"1", "2", "3", "4"};
  case KnobRole::Policy: return {"full_row", "full_col", "square"};
  case KnobRole::Panel: return {"1", "4", "8", "16"};
  }
  return {};
}

} // namespace

KnobSpace KnobSpace::analyze(const KernelDecl &k, const target::TargetDesc &target,
                             const std::vector<std::string> &pinned, const KnobSpaceOptions &opts,
                             const ExprEvaluator &shapes) {
  KnobSpace space;
  UseCollector collector(k, shapes);
  for (const CompileParamDecl *p : k.compileParams) {
    if (llvm::is_contained(pinned, p->getName()) || (opts.onlyAuto && !p->isAuto))
      continue;
    // `auto` is for ints and policies (`auto(full_row, square)`); Sema reports the others.
    bool autoPolicy = p->isAuto && !p->autoCandidates.empty() &&
                      llvm::all_of(p->autoCandidates, [](const Expr *c) { return llvm::isa<PolicyRefExpr>(c); });
    bool isPolicy = autoPolicy || p->type.kind() == Type::PolicyValue ||
                    (p->defaultValue && llvm::isa<PolicyRefExpr>(p->defaultValue));
    bool isInt = !isPolicy && (p->isAuto ? !p->declaredType || *p->declaredType == "int"
                                         : p->type.kind() == Type::IntLiteral);
    if (!isInt && !isPolicy)
      continue;
    Uses u = collector.collect(p);
    if (!u.referenced || u.problem)
      continue; // changes nothing, or changes what the kernel computes
    Knob knob;
    knob.name = p->getName().str();
    knob.isAuto = p->isAuto;
    knob.gemmK = u.gemmK;
    if (p->defaultValue && p->defaultValue->constant)
      knob.defaultValue = p->defaultValue->constant->str();
    std::optional<KnobRole> role;
    if (isPolicy)
      role = KnobRole::Policy;
    else if (u.threads)
      role = KnobRole::Threads;
    else if (u.stages)
      role = KnobRole::Stages;
    else if (u.panel)
      role = KnobRole::Panel;
    else if (u.tile)
      role = KnobRole::Tile;
    knob.role = role.value_or(KnobRole::Tile);

    if (auto given = opts.values.find(knob.name); given != opts.values.end()) {
      knob.values = given->second; // exactly what was asked for
    } else {
      // Only values Sema accepts as the parameter's: a candidate Sema rejects (`auto(f16)`)
      // is reported at the candidate itself, never as a bad -D binding of the recommender's.
      for (const Expr *c : p->autoCandidates)
        if (c->constant && (isPolicy ? c->constant->isPolicy() : c->constant->isInt()))
          knob.values.push_back(c->constant->str());
      if (knob.values.empty() && role)
        knob.values = defaultValues(*role, u, target);
      if (!knob.defaultValue.empty() && !llvm::is_contained(knob.values, knob.defaultValue))
        knob.values.push_back(knob.defaultValue);
    }
    if (knob.values.empty()) {
      space.unresolved.push_back(knob.name); // an `auto` used in a way we cannot tune
      continue;
    }
    space.all.push_back(std::move(knob));
  }
  // Model-only knobs last: consecutive configurations then share one compilation.
  std::stable_partition(space.all.begin(), space.all.end(), [](const Knob &k) { return !k.modelOnly(); });
  return space;
}

size_t KnobSpace::size() const {
  size_t n = 1;
  for (const Knob &k : all)
    if (__builtin_mul_overflow(n, k.values.size(), &n))
      return SIZE_MAX;
  return n;
}

Config KnobSpace::at(size_t index) const {
  Config c(all.size());
  for (size_t i = all.size(); i-- > 0;) {
    const Knob &k = all[i];
    c[i] = {k.name, k.values[index % k.values.size()]};
    index /= k.values.size();
  }
  return c;
}

} // namespace tlc::recommend
