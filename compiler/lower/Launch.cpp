#include "lower/Launch.h"

#include "lower/Lower.h"
#include "lower/Naming.h"
#include "target/TargetInfo.h"

namespace tlc::lower {

using llvm::dyn_cast;
using llvm::isa;

namespace {

// Host-side rendering of a shape or grid expression: shape symbols are the int64_t locals
// the launcher bound, compile-time values are folded.
std::string hostExpr(const Expr *e) {
  if (e->constant && e->constant->isInt())
    return "int64_t(" + std::to_string(e->constant->getInt()) + ")";
  if (e->constant && e->constant->isBool())
    return e->constant->getBool() ? "true" : "false";
  if (auto *n = dyn_cast<NameExpr>(e))
    return cppName(n->name);
  if (auto *b = dyn_cast<BinaryExpr>(e)) {
    // Division floors, as on the device; a zero divisor sets the launcher's flag.
    if (b->op == BinaryOp::Div || b->op == BinaryOp::Rem)
      return std::string(b->op == BinaryOp::Div ? "tlc_floordiv(" : "tlc_floormod(") + hostExpr(b->lhs) + ", " +
             hostExpr(b->rhs) + ", " + kZeroDivisorFlag + ")";
    return "(" + hostExpr(b->lhs) + " " + spelling(b->op).str() + " " + hostExpr(b->rhs) + ")";
  }
  if (auto *u = dyn_cast<UnaryExpr>(e))
    return "(" + spelling(u->op).str() + hostExpr(u->operand) + ")";
  if (auto *c = dyn_cast<CallExpr>(e)) {
    auto args = c->positional();
    if (c->builtin == Builtin::CeilDiv)
      return "tlc_ceildiv(" + hostExpr(args[0]) + ", " + hostExpr(args[1]) + ", " + kZeroDivisorFlag + ")";
    if (c->builtin == Builtin::Max || c->builtin == Builtin::Min)
      return std::string(c->builtin == Builtin::Max ? "std::max" : "std::min") + "<int64_t>(" +
             hostExpr(args[0]) + ", " + hostExpr(args[1]) + ")";
    if (c->builtin == Builtin::Abs)
      return "tlc_abs(" + hostExpr(args[0]) + ")";
    if (c->builtin == Builtin::Select)
      return "(" + hostExpr(args[0]) + " ? " + hostExpr(args[1]) + " : " + hostExpr(args[2]) + ")";
    // An integer cast: the value wraps to the type as on the device, then widens back.
    if (c->calleeKind == CalleeKind::Cast && isInteger(c->castType))
      return "int64_t(static_cast<" + cppType(c->castType) + ">(" + hostExpr(args[0]) + "))";
  }
  return toSource(e);
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
