#include "recommend/Knobs.h"
#include "recommend/ExprEval.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <functional>

namespace tlc::recommend {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

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

// Calls `f(expr)` on every expression of a statement tree, outermost first.
void forEachExpr(const Expr *e, const std::function<void(const Expr *)> &f) {
  if (!e)
    return;
  f(e);
  if (auto *u = dyn_cast<UnaryExpr>(e)) {
    forEachExpr(u->operand, f);
  } else if (auto *b = dyn_cast<BinaryExpr>(e)) {
    forEachExpr(b->lhs, f);
    forEachExpr(b->rhs, f);
  } else if (auto *c = dyn_cast<CallExpr>(e)) {
    for (const CallArg &a : c->args)
      forEachExpr(a.value, f);
  } else if (auto *ix = dyn_cast<IndexExpr>(e)) {
    for (const IndexItem &i : ix->indices) {
      forEachExpr(i.lo, f);
      forEachExpr(i.hi, f);
    }
  }
}

void forEachStmt(const Stmt *s, const std::function<void(const Stmt *)> &f) {
  if (!s)
    return;
  f(s);
  if (auto *b = dyn_cast<BlockStmt>(s)) {
    for (const Stmt *c : b->body)
      forEachStmt(c, f);
  } else if (auto *i = dyn_cast<IfStmt>(s)) {
    forEachStmt(i->thenBody, f);
    forEachStmt(i->elseBody, f);
  } else if (auto *l = dyn_cast<ForStmt>(s)) {
    forEachStmt(l->body, f);
  }
}

// Every expression directly owned by one statement (not its sub-statements).
std::vector<const Expr *> exprsOf(const Stmt *s) {
  std::vector<const Expr *> out;
  if (auto *a = dyn_cast<AllocStmt>(s)) {
    for (const Expr *d : a->buffer->shape.dims)
      out.push_back(d);
  } else if (auto *l = dyn_cast<LetStmt>(s)) {
    out.push_back(l->decl->init);
  } else if (auto *f = dyn_cast<ForStmt>(s)) {
    for (const CallArg &a : f->args)
      out.push_back(a.value);
  } else if (auto *i = dyn_cast<IfStmt>(s)) {
    out.push_back(i->cond);
  } else if (auto *a = dyn_cast<AssignStmt>(s)) {
    out.push_back(a->target);
    out.push_back(a->value);
  } else if (auto *c = dyn_cast<CallStmt>(s)) {
    out.push_back(c->call);
  }
  return out;
}

bool mentionsParam(const Expr *e, const CompileParamDecl *p) { return mentions(e, p); }

// The positional-or-keyword argument of a tile-operator call.
const Expr *callArg(const CallExpr *c, size_t pos, llvm::StringRef kw) {
  if (const CallArg *a = c->keywordArg(kw))
    return a->value;
  auto p = c->positional();
  return pos < p.size() ? p[pos] : nullptr;
}

const BufferLikeDecl *bufferOf(const Expr *e) {
  const NameExpr *n = dyn_cast_or_null<NameExpr>(e);
  if (auto *ix = dyn_cast_or_null<IndexExpr>(e))
    n = ix->base;
  return n ? dyn_cast_or_null<BufferLikeDecl>(n->decl) : nullptr;
}

// Where the kernel uses one parameter.
struct Uses {
  bool problem = false, threads = false, stages = false, policy = false, panel = false,
       tile = false, gemmK = false;
  std::optional<int64_t> extent; // of a problem dimension the parameter tiles
};

class UseCollector {
public:
  UseCollector(const KernelDecl &k) : k(k) {}

  Uses collect(const CompileParamDecl *p) {
    Uses u;
    for (const TensorParamDecl *t : k.params)
      for (const Expr *d : t->shape.dims)
        u.problem |= mentionsParam(d, p);
    u.threads = mentionsParam(k.threads, p);
    forEachStmt(k.body, [&](const Stmt *s) {
      if (auto *a = dyn_cast<AllocStmt>(s))
        for (const Expr *d : a->buffer->shape.dims)
          u.tile |= mentionsParam(d, p);
      if (auto *f = dyn_cast<ForStmt>(s); f && f->loopKind == LoopKind::Pipelined)
        for (const CallArg &a : f->args)
          if (a.keyword == "stages")
            u.stages |= mentionsParam(a.value, p);
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
      u.panel |= mentionsParam(callArg(c, 0, "panel"), p);
    } else if (c->builtin == Builtin::Gemm) {
      if (const CallArg *pol = c->keywordArg("policy"))
        u.policy |= mentionsParam(pol->value, p);
      auto boolArg = [&](llvm::StringRef kw) {
        const CallArg *a = c->keywordArg(kw);
        return a && a->value->constant && a->value->constant->isBool() && a->value->constant->getBool();
      };
      // The reduction dimension: A's columns (rows if transposed), B's rows (columns).
      const BufferLikeDecl *a = bufferOf(callArg(c, 0, "A")), *b = bufferOf(callArg(c, 1, "B"));
      if (a && a->shape.rank() == 2)
        u.gemmK |= mentionsParam(a->shape.dims[boolArg("transpose_A") ? 0 : 1], p);
      if (b && b->shape.rank() == 2)
        u.gemmK |= mentionsParam(b->shape.dims[boolArg("transpose_B") ? 1 : 0], p);
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
      if (std::optional<int64_t> x = ExprEvaluator().evalInt(c->args[0].value))
        u.extent = std::max(u.extent.value_or(0), *x);
    });
  }

  const KernelDecl &k;
};

int64_t nextPow2(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p *= 2;
  return p;
}

std::vector<std::string> tileValues(const Uses &u, const TargetDesc &target) {
  const TensorPath &path = target.tensorPath();
  int64_t unit = u.gemmK ? path.mmaK : std::max(path.mmaM, path.mmaN);
  int64_t top = u.gemmK ? 128 : 256;
  std::vector<std::string> values;
  for (int64_t v = std::max<int64_t>(unit, 16); v <= top; v *= 2) {
    // Past the problem's extent a larger tile only computes padding; tiles of 16 are worth
    // trying only for small problems.
    if (u.extent && v > std::max<int64_t>(nextPow2(*u.extent), unit))
      continue;
    if (u.extent && v == 16 && *u.extent >= 256)
      continue;
    values.push_back(std::to_string(v));
  }
  return values;
}

std::vector<std::string> defaultValues(KnobRole role, const Uses &u, const TargetDesc &target) {
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

KnobSpace KnobSpace::analyze(const KernelDecl &k, const TargetDesc &target,
                             const std::vector<std::string> &pinned, const KnobSpaceOptions &opts) {
  KnobSpace space;
  UseCollector collector(k);
  for (const CompileParamDecl *p : k.compileParams) {
    if (llvm::is_contained(pinned, p->getName()) || (opts.onlyAuto && !p->isAuto))
      continue;
    Uses u = collector.collect(p);
    bool isPolicy = p->type.kind() == Type::PolicyValue ||
                    (p->defaultValue && llvm::isa<PolicyRefExpr>(p->defaultValue));
    bool isInt = p->isAuto || p->type.kind() == Type::IntLiteral;
    Knob knob;
    knob.name = p->getName().str();
    knob.isAuto = p->isAuto;
    knob.gemmK = u.gemmK;
    if (p->defaultValue && p->defaultValue->constant)
      knob.defaultValue = p->defaultValue->constant->str();
    bool tunable = true;
    if (u.problem || (!isInt && !isPolicy))
      tunable = false; // part of what the kernel computes
    else if (isPolicy)
      knob.role = KnobRole::Policy;
    else if (u.threads)
      knob.role = KnobRole::Threads;
    else if (u.stages)
      knob.role = KnobRole::Stages;
    else if (u.panel)
      knob.role = KnobRole::Panel;
    else if (u.tile)
      knob.role = KnobRole::Tile;
    else
      tunable = false;

    if (!p->autoCandidates.empty()) {
      for (const Expr *c : p->autoCandidates)
        if (c->constant)
          knob.values.push_back(c->constant->str());
    } else if (tunable) {
      knob.values = defaultValues(knob.role, u, target);
    }
    if (!tunable && p->autoCandidates.empty()) {
      if (p->isAuto)
        space.unresolved.push_back(knob.name);
      continue;
    }
    if (!knob.defaultValue.empty() && !llvm::is_contained(knob.values, knob.defaultValue))
      knob.values.push_back(knob.defaultValue);
    if (knob.values.empty()) {
      if (p->isAuto)
        space.unresolved.push_back(knob.name);
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
    n *= k.values.size();
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
