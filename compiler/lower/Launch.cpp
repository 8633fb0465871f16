#include "lower/Launch.h"

#include "lower/Lower.h"
#include "lower/Naming.h"
#include "target/TargetInfo.h"

#include "llvm/Support/SourceMgr.h"

namespace tlc::lower {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace {

// Host-side rendering of a shape or grid expression: shape symbols are the int64_t locals
// the launcher bound, compile-time values are folded. With `inlineLets`, a let stands for its
// initializer (the size checks: lets are not host variables), and divisions set `zeroFlag`.
std::string hostExpr(const Expr *e, bool inlineLets = false, const char *zeroFlag = kZeroDivisorFlag) {
  auto host = [&](const Expr *x) { return hostExpr(x, inlineLets, zeroFlag); };
  if (e->constant && e->constant->isInt())
    return "int64_t(" + std::to_string(e->constant->getInt()) + ")";
  if (e->constant && e->constant->isBool())
    return e->constant->getBool() ? "true" : "false";
  if (auto *n = dyn_cast<NameExpr>(e)) {
    if (auto *l = dyn_cast_or_null<LetDecl>(n->decl); inlineLets && l && l->init)
      return "(" + host(l->init) + ")";
    return cppName(n->name);
  }
  if (auto *b = dyn_cast<BinaryExpr>(e)) {
    // Division floors, as on the device; a zero divisor sets the launcher's flag.
    if (b->op == BinaryOp::Div || b->op == BinaryOp::Rem)
      return std::string(b->op == BinaryOp::Div ? "tlc_floordiv(" : "tlc_floormod(") + host(b->lhs) + ", " +
             host(b->rhs) + ", " + zeroFlag + ")";
    return "(" + host(b->lhs) + " " + spelling(b->op).str() + " " + host(b->rhs) + ")";
  }
  if (auto *u = dyn_cast<UnaryExpr>(e))
    return "(" + spelling(u->op).str() + host(u->operand) + ")";
  if (auto *c = dyn_cast<CallExpr>(e)) {
    auto args = c->positional();
    if (c->builtin == Builtin::CeilDiv)
      return "tlc_ceildiv(" + host(args[0]) + ", " + host(args[1]) + ", " + zeroFlag + ")";
    if (c->builtin == Builtin::Max || c->builtin == Builtin::Min)
      return std::string(c->builtin == Builtin::Max ? "std::max" : "std::min") + "<int64_t>(" + host(args[0]) +
             ", " + host(args[1]) + ")";
    if (c->builtin == Builtin::Abs)
      return "tlc_abs(" + host(args[0]) + ")";
    if (c->builtin == Builtin::Select)
      return "(" + host(args[0]) + " ? " + host(args[1]) + " : " + host(args[2]) + ")";
    // An integer cast: the value wraps to the type as on the device, then widens back.
    if (c->calleeKind == CalleeKind::Cast && isInteger(c->castType))
      return "int64_t(static_cast<" + cppType(c->castType) + ">(" + host(args[0]) + "))";
  }
  return toSource(e);
}

// Whether the host can evaluate `e` (hostExpr with lets inlined): constants, shape symbols,
// scalar parameters and lets of such values, combined by what hostExpr renders but `select`,
// whose arms are not checked (a product there could leave even 64 bits on the host).
bool hostKnown(const Expr *e) {
  if (e->constant)
    return e->constant->isInt() || e->constant->isBool();
  if (auto *n = dyn_cast<NameExpr>(e)) {
    if (!n->decl)
      return false;
    if (isa<ShapeSymbolDecl>(n->decl))
      return true;
    if (auto *p = dyn_cast<TensorParamDecl>(n->decl))
      return p->isScalar() && isInteger(p->elemType);
    auto *l = dyn_cast<LetDecl>(n->decl);
    return l && l->init && hostKnown(l->init);
  }
  if (auto *b = dyn_cast<BinaryExpr>(e))
    return b->op != BinaryOp::And && b->op != BinaryOp::Or && hostKnown(b->lhs) && hostKnown(b->rhs);
  if (auto *u = dyn_cast<UnaryExpr>(e))
    return u->op == UnaryOp::Neg && hostKnown(u->operand);
  if (auto *c = dyn_cast<CallExpr>(e)) {
    bool rendered = c->builtin == Builtin::CeilDiv || c->builtin == Builtin::Max || c->builtin == Builtin::Min ||
                    c->builtin == Builtin::Abs || (c->calleeKind == CalleeKind::Cast && isInteger(c->castType));
    return rendered && llvm::all_of(c->positional(), [](const Expr *a) { return hostKnown(a); });
  }
  return false;
}

// The size checks of expression `e`, innermost first: its i32 sums, differences, products,
// negations and shifts the host can evaluate, not under a select's arms.
void sizeChecksOf(const Expr *e, const llvm::SourceMgr &sm, const std::string &file, std::vector<SizeCheck> &out) {
  if (!e || e->constant)
    return;
  if (auto *c = dyn_cast<CallExpr>(e)) {
    auto args = c->positional();
    for (size_t i = 0; i < args.size(); ++i)
      if (c->builtin != Builtin::Select || i == 0)
        sizeChecksOf(args[i], sm, file, out);
    return;
  }
  if (auto *u = dyn_cast<UnaryExpr>(e))
    sizeChecksOf(u->operand, sm, file, out);
  auto *b = dyn_cast<BinaryExpr>(e);
  if (b) {
    sizeChecksOf(b->lhs, sm, file, out);
    sizeChecksOf(b->rhs, sm, file, out);
  }
  // (A shift by a constant below 32 only: the host's own shift is defined for those.)
  bool constantShift = b && b->op == BinaryOp::Shl && b->rhs->constant && b->rhs->constant->isInt() &&
                       b->rhs->constant->getInt() >= 0 && b->rhs->constant->getInt() < 32;
  bool wraps = (b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul)) || constantShift ||
               (isa<UnaryExpr>(e) && cast<UnaryExpr>(e)->op == UnaryOp::Neg);
  if (!wraps || !e->type.isScalar() || e->type.dtype() != DType::I32 || !hostKnown(e))
    return;
  auto [line, col] = sm.getLineAndColumn(e->getRange().Start);
  std::string where = file + ":" + std::to_string(line) + ":" + std::to_string(col);
  std::string text = toSource(e);
  if (llvm::any_of(out, [&](const SizeCheck &c) { return c.text == text; }))
    return; // the same value checked once (at its first place)
  out.push_back({where, text, hostExpr(e, true, kSizeCheckZeroFlag)});
}

// Host type of a run-time scalar parameter (16-bit floats travel as float).
std::string cppTypeHost(DType t) {
  switch (t) {
  case DType::F16: case DType::BF16: case DType::F32: return "float";
  case DType::F64: return "double";
  case DType::Bool: return "bool";
  case DType::I64: return "long long";
  case DType::U32: return "unsigned";
  default: return "int";
  }
}

} // namespace

Launch describeLaunch(const ftg::Graph &g) {
  const KernelDecl &k = *g.kernel;
  Launch L;
  L.kernel = k.name;
  for (const TensorParamDecl *p : k.params) {
    HostParam h;
    h.name = p->getName().str();
    h.cpp = cppName(p->getName());
    h.scalar = p->isScalar();
    h.isOut = p->isOut;
    if (h.scalar) {
      h.hostType = cppTypeHost(p->elemType);
    } else {
      h.dtype = runtimeDType(p->elemType);
      for (const Expr *dim : p->shape.dims) {
        auto *n = dyn_cast<NameExpr>(dim);
        bool symbol = n && n->decl && isa<ShapeSymbolDecl>(n->decl);
        h.symbol.push_back(symbol ? n->name : "");
        h.extent.push_back(symbol ? "" : hostExpr(dim));
      }
    }
    L.params.push_back(std::move(h));
  }
  for (const ShapeSymbolDecl *s : k.shapeSymbols)
    L.symbols.push_back({s->getName().str(), cppName(s->getName()), s->constant ? s->constant->str() : ""});
  for (const Expr *e : k.grid)
    L.grid.push_back(hostExpr(e));
  for (const auto &b : g.buffers)
    if (b->scope != Scope::Global)
      for (size_t d = 0; d < b->shape.size(); ++d) {
        // A packed buffer's indices count its 4-bit elements: twice its innermost bytes.
        int64_t scale = b->packed && d + 1 == b->shape.size() ? 2 : 1;
        L.headroom = std::max(L.headroom, b->shape[d].value_or(1) * scale);
      }
  L.target = g.target->name().str();
  L.capability = g.target->computeCapability();
  L.hip = g.target->vendor() == target::Vendor::Amd;
  for (const CompileParamDecl *p : k.compileParams)
    L.compileParams += (L.compileParams.empty() ? "" : ", ") + p->getName().str() + " = " +
                       (p->constant ? p->constant->str() : "?") +
                       // Filled by the recommender (driver/AutoParams.cpp).
                       (p->source == CompileParamDecl::Source::Auto && p->constant ? " (auto)" : "");
  return L;
}

void addSizeChecks(Launch &launch, const ftg::Graph &g, const llvm::SourceMgr &sm, const std::string &sourceName) {
  for (const ftg::Node *n : ftg::flattenedSiblings(g.body)) {
    if (n->kind == ftg::NodeKind::Let && n->stmt)
      if (auto *let = dyn_cast<LetStmt>(n->stmt))
        sizeChecksOf(let->decl->init, sm, sourceName, launch.sizeChecks);
    if (n->kind == ftg::NodeKind::Loop && n->loop) {
      for (const Expr *e : n->loop->extents)
        sizeChecksOf(e, sm, sourceName, launch.sizeChecks);
      sizeChecksOf(n->loop->start, sm, sourceName, launch.sizeChecks);
    }
  }
}

bool checkTensorRanks(const KernelDecl &k, DiagnosticEngine &diags) {
  bool ok = true;
  for (const TensorParamDecl *p : k.params)
    if (!p->isScalar() && p->shape.rank() > kMaxTensorRank) {
      diags.error(p->getRange(), "tensor parameter '" + p->getName() + "' has " +
                                     std::to_string(p->shape.rank()) + " dimensions; the launcher "
                                     "takes at most " + std::to_string(kMaxTensorRank))
          .hint("tlc_tensor_view (tlc/runtime.h) holds TLC_MAX_RANK = " +
                std::to_string(kMaxTensorRank) + " extents and strides; merge dimensions");
      ok = false;
    }
  return ok;
}

} // namespace tlc::lower
