// Conditions that are the same at every element of a parallel loop's tile.
//
// A mask such as attention's `select(k_pos < seq_len && k_pos <= q_pos, 0, -inf)` costs a
// compare and a select per element of every tile, yet it varies only on the tiles that cross
// the sequence's end or the diagonal: everywhere else it holds (or fails) for the whole tile.
// When a condition is linear in the loop's variables, with every other term the same for the
// whole block (block indices, shape symbols, scalar parameters, the enclosing loops'
// variables), the comparison is extreme at a corner of the loop's box, so one evaluation at
// that corner decides it for every element. parallelElements (Parallel.cpp) then emits the
// loop twice: a version where each such condition is one block-uniform bool, taken when every
// condition is decided for the whole tile, and the loop as written for the tiles on an edge.
//
// The corner is a point the loop itself visits, so the test computes values the loop computes
// anyway: it overflows nowhere the loop does not. Loops whose threads hold fewer than
// kMinVersionedRegisters elements are not versioned (the test costs more than it saves).
#include "lower/KernelLowering.h"

#include "llvm/Support/MathExtras.h"

namespace tlc::lower {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

// An integer expression that is linear in the loop's variables: their coefficients, and the
// rest, which is the same for the whole block and, where the expression says, a constant.
struct Linear {
  llvm::SmallVector<int64_t, 2> coefs;
  std::optional<int64_t> constant; // the rest, when it is known at compile time

  bool uniform() const {
    return llvm::all_of(coefs, [](int64_t v) { return v == 0; });
  }
};

// Exact 64-bit arithmetic, or nothing.
std::optional<int64_t> plus(std::optional<int64_t> a, std::optional<int64_t> b, bool subtract = false) {
  int64_t r;
  if (!a || !b || (subtract ? llvm::SubOverflow(*a, *b, r) : llvm::AddOverflow(*a, *b, r)))
    return std::nullopt;
  return r;
}
std::optional<int64_t> times(std::optional<int64_t> a, int64_t b) {
  int64_t r;
  if (!a || llvm::MulOverflow(*a, b, r))
    return std::nullopt;
  return r;
}

// Largest expression (in AST nodes, with the loop's lets inlined) a test is emitted for: a
// chain of lets that doubles at each step must not blow the generated code up.
constexpr int64_t kMaxTestNodes = 256;

// Fewest registers per thread (elements of the loop's driving fragment) for which a parallel
// loop is versioned on a run-time test.
constexpr int64_t kMinVersionedRegisters = 32;

class TileAnalysis {
public:
  TileAnalysis(const ForStmt &loop) : loop(loop) { collectLets(loop.body); }

  // The loop's lets: inlined where a test is evaluated outside the loop.
  const llvm::SmallPtrSet<const Decl *, 8> &lets() const { return bodyLets; }

  // Memoized, so that chains of lets stay linear.
  std::optional<Linear> linear(const Expr *e) {
    if (auto it = memo.find(e); it != memo.end())
      return it->second;
    std::optional<Linear> r = compute(e);
    // A term that varies over the tile must be signed integer arithmetic, where linear
    // reasoning is exact (floats round, unsigned values wrap).
    if (r && !r->uniform() && !signedInteger(e))
      r.reset();
    memo[e] = r;
    return r;
  }

  // Nodes of `e` with the loop's lets inlined, saturating past kMaxTestNodes.
  int64_t size(const Expr *e) {
    return expandedSize(e, [&](const LetDecl *let) { return bodyLets.count(let) != 0; }, kMaxTestNodes, sizes);
  }

  int64_t extent(size_t k) const { return loop.extents[k]->constant->getInt(); }
  size_t rank() const { return loop.vars.size(); }

private:
  static bool signedInteger(const Expr *e) {
    Type t = materialize(e->type);
    return t.isScalar() && (t.dtype() == DType::I32 || t.dtype() == DType::I64);
  }

  void collectLets(const tlc::Stmt *s) {
    if (!s)
      return;
    if (auto *l = dyn_cast<LetStmt>(s))
      bodyLets.insert(l->decl);
    else if (auto *b = dyn_cast<BlockStmt>(s))
      for (const tlc::Stmt *c : b->body)
        collectLets(c);
    else if (auto *i = dyn_cast<IfStmt>(s)) {
      collectLets(i->thenBody);
      collectLets(i->elseBody);
    }
  }

  Linear uniform(std::optional<int64_t> constant = std::nullopt) const {
    return {llvm::SmallVector<int64_t, 2>(rank(), 0), constant};
  }

  std::optional<Linear> compute(const Expr *e) {
    if (e->constant)
      return uniform(e->constant->isInt() ? std::optional<int64_t>(e->constant->getInt()) : std::nullopt);
    switch (e->getKind()) {
    case Expr::EK_Name: {
      const Decl *d = cast<NameExpr>(e)->decl;
      if (!d)
        return std::nullopt;
      for (size_t k = 0; k < rank(); ++k)
        if (d == loop.vars[k]) {
          Linear v = uniform(0);
          v.coefs[k] = 1;
          return v;
        }
      switch (d->getKind()) {
      case Decl::DK_Let: {
        const Expr *init = cast<LetDecl>(d)->init;
        return init ? linear(init) : std::nullopt;
      }
      // The same for the whole block: nothing inside a parallel loop declares a loop (its
      // body is scalar statements), so another loop's variable is an enclosing loop's.
      case Decl::DK_BlockIndex:
      case Decl::DK_ShapeSymbol:
      case Decl::DK_TensorParam:
      case Decl::DK_LoopVar:
      case Decl::DK_Const:
      case Decl::DK_CompileParam:
        return uniform();
      default:
        return std::nullopt;
      }
    }
    case Expr::EK_Unary: {
      auto *u = cast<UnaryExpr>(e);
      std::optional<Linear> v = linear(u->operand);
      if (!v)
        return std::nullopt;
      if (u->op == UnaryOp::Neg) {
        for (int64_t &c : v->coefs)
          if (llvm::MulOverflow(c, int64_t(-1), c))
            return std::nullopt;
        v->constant = times(v->constant, -1);
        return v;
      }
      return v->uniform() ? std::optional<Linear>(uniform()) : std::nullopt;
    }
    case Expr::EK_Binary: {
      auto *b = cast<BinaryExpr>(e);
      std::optional<Linear> l = linear(b->lhs), r = linear(b->rhs);
      if (!l || !r)
        return std::nullopt;
      switch (b->op) {
      case BinaryOp::Add:
      case BinaryOp::Sub: {
        bool sub = b->op == BinaryOp::Sub;
        Linear out = uniform(plus(l->constant, r->constant, sub));
        for (size_t k = 0; k < rank(); ++k) {
          std::optional<int64_t> c = plus(l->coefs[k], r->coefs[k], sub);
          if (!c)
            return std::nullopt;
          out.coefs[k] = *c;
        }
        return out;
      }
      case BinaryOp::Mul: {
        // One side a compile-time integer: the other's coefficients scaled.
        auto scaled = [&](const Linear &v, const Expr *factor) -> std::optional<Linear> {
          if (!factor->constant || !factor->constant->isInt())
            return std::nullopt;
          int64_t f = factor->constant->getInt();
          Linear out = uniform(times(v.constant, f));
          for (size_t k = 0; k < rank(); ++k) {
            std::optional<int64_t> c = times(v.coefs[k], f);
            if (!c)
              return std::nullopt;
            out.coefs[k] = *c;
          }
          return out;
        };
        if (l->uniform() && r->uniform())
          return uniform();
        return r->uniform() ? scaled(*l, b->rhs) : l->uniform() ? scaled(*r, b->lhs) : std::nullopt;
      }
      default:
        // Anything else of block-uniform operands is block-uniform.
        return l->uniform() && r->uniform() ? std::optional<Linear>(uniform()) : std::nullopt;
      }
    }
    case Expr::EK_Call: {
      auto *c = cast<CallExpr>(e);
      bool pure = c->calleeKind == CalleeKind::Cast ||
                  (c->calleeKind == CalleeKind::Builtin && !isTileOp(c->builtin) &&
                   c->builtin != Builtin::WarpgroupId && c->builtin != Builtin::Print && c->builtin != Builtin::LastBlock &&
                   c->builtin != Builtin::CallExtern);
      if (!pure)
        return std::nullopt;
      for (const Expr *a : c->positional()) {
        std::optional<Linear> v = linear(a);
        if (!v || !v->uniform())
          return std::nullopt;
      }
      return uniform();
    }
    default:
      // Reads of buffers, lambdas: not known to be the same for the whole block.
      return std::nullopt;
    }
  }

  const ForStmt &loop;
  llvm::SmallPtrSet<const Decl *, 8> bodyLets;
  llvm::DenseMap<const Expr *, std::optional<Linear>> memo;
  llvm::DenseMap<const Expr *, int64_t> sizes;
};

bool isComparison(BinaryOp op) { return op >= BinaryOp::Lt && op <= BinaryOp::Ne; }

std::string conjoin(const std::string &a, const std::string &b) {
  if (a == "false" || b == "false")
    return "false";
  if (a == "true")
    return b;
  if (b == "true")
    return a;
  return a + " && " + b;
}

std::string disjoin(const std::string &a, const std::string &b) {
  if (a == "true" || b == "true")
    return "true";
  if (a == "false")
    return b;
  if (b == "false")
    return a;
  return "(" + a + " || " + b + ")";
}

// Whether every extent of a parallel loop is a positive constant: the tile the tests decide.
bool constantExtents(const ForStmt &loop) {
  return llvm::all_of(loop.extents,
                      [](const Expr *e) { return e->constant && e->constant->isInt() && e->constant->getInt() >= 1; });
}

// The comparisons that decide the body's selects and ifs: each select's first operand and
// each if's condition, taken apart at &&, || and !, in source order, once each.
// A bool let's comparisons are its uses' too (`let visible = k_pos < seq_len`), each let
// visited once.
struct Comparisons {
  std::vector<const BinaryExpr *> list;
  llvm::SmallPtrSet<const Decl *, 8> letsSeen;
};

void collectComparisons(const Expr *cond, Comparisons &out) {
  if (!cond || cond->constant)
    return;
  if (auto *n = dyn_cast<NameExpr>(cond)) {
    if (auto *let = dyn_cast_or_null<LetDecl>(n->decl); let && out.letsSeen.insert(let).second)
      collectComparisons(let->init, out);
    return;
  }
  if (auto *u = dyn_cast<UnaryExpr>(cond); u && u->op == UnaryOp::Not)
    return collectComparisons(u->operand, out);
  if (auto *b = dyn_cast<BinaryExpr>(cond)) {
    if (b->op == BinaryOp::And || b->op == BinaryOp::Or) {
      collectComparisons(b->lhs, out);
      return collectComparisons(b->rhs, out);
    }
    if (isComparison(b->op) && !llvm::is_contained(out.list, b))
      out.list.push_back(b);
  }
}

void collectConditions(const Expr *e, Comparisons &out) {
  if (!e || e->constant)
    return;
  if (auto *u = dyn_cast<UnaryExpr>(e))
    return collectConditions(u->operand, out);
  if (auto *b = dyn_cast<BinaryExpr>(e)) {
    collectConditions(b->lhs, out);
    return collectConditions(b->rhs, out);
  }
  if (auto *ix = dyn_cast<IndexExpr>(e)) {
    for (const IndexItem &item : ix->indices) {
      collectConditions(item.lo, out);
      collectConditions(item.hi, out);
    }
    return;
  }
  if (auto *c = dyn_cast<CallExpr>(e)) {
    auto args = c->positional();
    if (c->builtin == Builtin::Select && !args.empty())
      collectComparisons(args[0], out);
    for (const Expr *a : args)
      collectConditions(a, out);
  }
}

void collectConditions(const tlc::Stmt *s, Comparisons &out) {
  if (!s)
    return;
  switch (s->getKind()) {
  case tlc::Stmt::SK_Let:
    return collectConditions(cast<LetStmt>(s)->decl->init, out);
  case tlc::Stmt::SK_Assign:
    collectConditions(cast<AssignStmt>(s)->target, out);
    return collectConditions(cast<AssignStmt>(s)->value, out);
  case tlc::Stmt::SK_Call:
    return collectConditions(cast<CallStmt>(s)->call, out);
  case tlc::Stmt::SK_Block:
    for (const tlc::Stmt *c : cast<BlockStmt>(s)->body)
      collectConditions(c, out);
    return;
  case tlc::Stmt::SK_If: {
    auto *i = cast<IfStmt>(s);
    collectComparisons(i->cond, out);
    collectConditions(i->cond, out);
    collectConditions(i->thenBody, out);
    return collectConditions(i->elseBody, out);
  }
  default:
    return;
  }
}

bool compare(BinaryOp op, int64_t d) {
  switch (op) {
  case BinaryOp::Lt: return d < 0;
  case BinaryOp::Le: return d <= 0;
  case BinaryOp::Gt: return d > 0;
  default: return d >= 0;
  }
}

} // namespace

// The tests of one comparison `lhs op rhs`: that it holds at every element of the tile, and
// that it fails at every element. lhs - rhs is linear in the loop's variables, so `<` and
// `<=` hold everywhere iff they hold where it is largest and fail everywhere iff they fail
// where it is smallest (`>` and `>=` the other way round): one evaluation at a corner of the
// box. Empty when the comparison is not linear or does not depend on the loop's variables.
struct KernelLowering::TileTestBuilder {
  KernelLowering &lowering;
  const ftg::Node &node;
  TileAnalysis analysis;

  // `e` with the loop's variables at `corner` (its lets inlined), or nothing if too large.
  std::optional<std::string> at(const BinaryExpr *e, llvm::ArrayRef<int64_t> corner) {
    if (analysis.size(e) > kMaxTestNodes)
      return std::nullopt;
    const ForStmt &loop = *node.loop;
    for (size_t k = 0; k < loop.vars.size(); ++k)
      lowering.nameOverrides[loop.vars[k]] = std::to_string(corner[k]);
    lowering.inlinedLets = &analysis.lets();
    const ftg::Node *saved = lowering.parallelNode;
    lowering.parallelNode = &node;
    std::string s = lowering.expr(e);
    lowering.parallelNode = saved;
    lowering.inlinedLets = nullptr;
    lowering.nameOverrides.clear();
    return s;
  }

  struct Tests {
    std::optional<std::string> holds, fails; // C++ tests, "true"/"false" when known now
  };

  std::optional<std::string> everywhere(const Expr *c, bool value);

  Tests tests(const BinaryExpr *cmp) {
    if (cmp->op == BinaryOp::Eq || cmp->op == BinaryOp::Ne)
      return {};
    std::optional<Linear> l = analysis.linear(cmp->lhs), r = analysis.linear(cmp->rhs);
    if (!l || !r)
      return {};
    Linear d{llvm::SmallVector<int64_t, 2>(analysis.rank(), 0), plus(l->constant, r->constant, true)};
    for (size_t k = 0; k < d.coefs.size(); ++k) {
      std::optional<int64_t> c = plus(l->coefs[k], r->coefs[k], true);
      if (!c)
        return {};
      d.coefs[k] = *c;
    }
    if (d.uniform())
      return {}; // nvcc hoists it without help
    bool lessThan = cmp->op == BinaryOp::Lt || cmp->op == BinaryOp::Le;
    // The corner where lhs - rhs is largest (or smallest), and its value there if known now.
    auto corner = [&](bool largest) {
      llvm::SmallVector<int64_t, 2> point(d.coefs.size(), 0);
      for (size_t k = 0; k < d.coefs.size(); ++k)
        if (d.coefs[k] != 0 && (d.coefs[k] > 0) == largest)
          point[k] = analysis.extent(k) - 1;
      return point;
    };
    auto valueAt = [&](llvm::ArrayRef<int64_t> point) {
      std::optional<int64_t> v = d.constant;
      for (size_t k = 0; k < point.size(); ++k)
        v = plus(v, times(std::optional<int64_t>(point[k]), d.coefs[k]));
      return v;
    };
    Tests t;
    llvm::SmallVector<int64_t, 2> worst = corner(lessThan), best = corner(!lessThan);
    if (std::optional<int64_t> v = valueAt(worst))
      t.holds = compare(cmp->op, *v) ? "true" : "false";
    else
      t.holds = at(cmp, worst);
    if (std::optional<int64_t> v = valueAt(best))
      t.fails = compare(cmp->op, *v) ? "false" : "true";
    else if (std::optional<std::string> s = at(cmp, best))
      t.fails = "!" + *s;
    return t;
  }
};

// A test that condition `c` has `value` at every element of the tile, or nothing when the
// conditions it is made of cannot be decided for the whole tile. Sufficient, not necessary:
// `a || b` holds everywhere if a does or b does.
std::optional<std::string> KernelLowering::TileTestBuilder::everywhere(const Expr *c, bool value) {
  if (!c)
    return std::nullopt;
  if (c->constant)
    return c->constant->isBool() ? std::optional<std::string>(c->constant->getBool() == value ? "true" : "false")
                                 : std::nullopt;
  if (auto *n = dyn_cast<NameExpr>(c)) {
    auto *let = dyn_cast_or_null<LetDecl>(n->decl);
    return let ? everywhere(let->init, value) : std::nullopt;
  }
  if (auto *u = dyn_cast<UnaryExpr>(c))
    return u->op == UnaryOp::Not ? everywhere(u->operand, !value) : std::nullopt;
  auto *b = dyn_cast<BinaryExpr>(c);
  if (!b)
    return std::nullopt;
  if (b->op == BinaryOp::And || b->op == BinaryOp::Or) {
    std::optional<std::string> l = everywhere(b->lhs, value), r = everywhere(b->rhs, value);
    // value everywhere of a && b needs both (of a || b: either); false everywhere the reverse.
    if ((b->op == BinaryOp::And) == value)
      return l && r ? std::optional<std::string>(conjoin(*l, *r)) : std::nullopt;
    if (!l || !r)
      return l ? l : r;
    return disjoin(*l, *r);
  }
  if (!isComparison(b->op))
    return std::nullopt;
  Tests t = tests(b);
  if (!t.holds && !t.fails) {
    // Not linear in the loop's variables, or the same at every element: then one evaluation
    // decides it, if it reads no buffer.
    std::optional<Linear> l = analysis.linear(b->lhs), r = analysis.linear(b->rhs);
    if (!l || !r || !l->uniform() || !r->uniform())
      return std::nullopt;
    std::optional<std::string> s = at(b, llvm::SmallVector<int64_t, 2>(analysis.rank(), 0));
    if (!s)
      return std::nullopt;
    return value ? "(" + *s + ")" : "!(" + *s + ")";
  }
  const std::optional<std::string> &test = value ? t.holds : t.fails;
  if (!test)
    return std::nullopt;
  return *test;
}

std::optional<std::string> KernelLowering::conditionEverywhere(const ftg::Node &n, const Expr *cond, bool value) {
  const ForStmt &loop = *n.loop;
  if (!constantExtents(loop))
    return std::nullopt;
  TileTestBuilder builder{*this, n, TileAnalysis(loop)};
  return builder.everywhere(cond, value);
}

std::optional<KernelLowering::TileVersions> KernelLowering::tileVersions(const ftg::Node &n) {
  const ForStmt &loop = *n.loop;
  if (!constantExtents(loop))
    return std::nullopt;
  Comparisons found;
  collectConditions(loop.body, found);
  const std::vector<const BinaryExpr *> &comparisons = found.list;
  if (comparisons.empty())
    return std::nullopt;
  TileTestBuilder builder{*this, n, TileAnalysis(loop)};
  struct Decided {
    const BinaryExpr *cmp;
    TileTestBuilder::Tests tests;
  };
  std::vector<Decided> decided;
  bool runTime = false; // some comparison needs a test before the loop
  for (const BinaryExpr *cmp : comparisons) {
    TileTestBuilder::Tests t = builder.tests(cmp);
    // A test known to be false now never picks the version; one known to be true decides the
    // comparison everywhere.
    if (t.holds == "false")
      t.holds.reset();
    if (t.fails == "false")
      t.fails.reset();
    if (!t.holds && !t.fails)
      continue;
    runTime |= t.holds != "true" && t.fails != "true";
    decided.push_back({cmp, t});
  }
  if (decided.empty())
    return std::nullopt;
  // A thread with a handful of elements saves less than the test and the branch around its
  // loop cost: MLA decoding's 16 registers ran 1-4% slower versioned in two H100 runs (70 and
  // 71), attention's 64 up to 14% faster. Comparisons decided at compile time cost nothing.
  if (runTime && n.driver->fragment->registers() < kMinVersionedRegisters)
    return std::nullopt;
  TileVersions v;
  v.taken = "true";
  for (const Decided &d : decided) {
    const TileTestBuilder::Tests &t = d.tests;
    TileVersions::Condition c;
    c.line = diags.sourceManager().getLineAndColumn(d.cmp->getRange().Start).first;
    if (t.holds == "true" || t.fails == "true") {
      c.value = t.holds == "true";
    } else if (t.holds && t.fails) {
      c.name = fresh("tile");
      std::string failsName = fresh("tile");
      v.tests.push_back({c.name, *t.holds});
      v.tests.push_back({failsName, *t.fails});
      v.taken = conjoin(v.taken, "(" + c.name + " || " + failsName + ")");
    } else {
      c.name = fresh("tile");
      c.value = t.holds.has_value();
      v.tests.push_back({c.name, t.holds ? *t.holds : *t.fails});
      v.taken = conjoin(v.taken, c.name);
    }
    v.conditions[d.cmp] = c;
    if (!llvm::is_contained(v.lines, c.line))
      v.lines.push_back(c.line);
  }
  llvm::sort(v.lines);
  return v;
}

std::optional<std::string> KernelLowering::uniformComparison(const Expr *cmp) {
  if (!uniformConditions)
    return std::nullopt;
  auto it = uniformConditions->conditions.find(cmp);
  if (it == uniformConditions->conditions.end())
    return std::nullopt;
  if (it->second.value)
    return std::string(*it->second.value ? "true" : "false");
  return it->second.name;
}

} // namespace tlc::lower
