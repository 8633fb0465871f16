// Sema for expressions: resolution, typing with the implicit-conversion rules, and
// constant folding (every expression whose operands are constant gets `constant`).
#include "ConstantFolder.h"
#include "Sema.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>

namespace tlc {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace {

// Names of every builtin callable in expression position, for suggestions.
std::vector<std::string> scalarBuiltinNames() {
  return {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sigmoid",
          "max", "min", "abs", "select", "inf", "ceildiv", "warpgroup_id", "max_shared_bytes", "last_block"};
}

} // namespace

std::string operandText(const Expr *e) {
  std::string text = toSource(e);
  if (text.size() > 32)
    return "x";
  return isa<BinaryExpr>(e) ? "(" + text + ")" : text;
}

Type Sema::checkExpr(Expr *e, ExprContext context) {
  Type t;
  switch (e->getKind()) {
  case Expr::EK_IntLit:
    t = Type::intLiteral();
    e->constant = ConstValue{cast<IntLitExpr>(e)->value};
    break;
  case Expr::EK_FloatLit:
    t = Type::floatLiteral();
    e->constant = ConstValue{cast<FloatLitExpr>(e)->value};
    break;
  case Expr::EK_BoolLit:
    t = Type::scalar(DType::Bool);
    e->constant = ConstValue{cast<BoolLitExpr>(e)->value};
    break;
  case Expr::EK_StringLit:
    t = Type::string();
    break;
  case Expr::EK_DTypeRef:
    t = Type::dtypeValue();
    e->constant = ConstValue{cast<DTypeRefExpr>(e)->dtype};
    break;
  case Expr::EK_PolicyRef:
    t = Type::policyValue();
    e->constant = ConstValue{cast<PolicyRefExpr>(e)->policy};
    break;
  case Expr::EK_Name:
    t = checkName(cast<NameExpr>(e), context);
    break;
  case Expr::EK_Index:
    t = checkIndex(cast<IndexExpr>(e), context);
    break;
  case Expr::EK_Unary:
    t = checkUnary(cast<UnaryExpr>(e));
    break;
  case Expr::EK_Binary:
    t = checkBinary(cast<BinaryExpr>(e));
    break;
  case Expr::EK_Call:
    t = checkCall(cast<CallExpr>(e));
    break;
  case Expr::EK_Lambda:
    diags.error(e->getRange(), "a layout function is only allowed as the second argument of "
                               "annotate_layout");
    t = Type::error();
    break;
  }
  if (t.kind() == Type::String && context == ExprContext::Value) {
    diags.error(e->getRange(), "strings are only allowed as the function name of call_extern");
    t = Type::error();
  }
  e->type = t;
  return t;
}

Type Sema::checkName(NameExpr *e, ExprContext context) {
  Decl *d = lookup(e->name);
  if (!d) {
    auto diag = diags.error(e->getRange(), "use of undeclared name '" + e->name + "'");
    // A shape symbol is declared by its first bare use in a shape, so `B: u8[N, K / 2]` before
    // `W: f16[N, K]` names K before it exists.
    const NameExpr *later = nullptr;
    for (const TensorParamDecl *p : kernel ? kernel->params : std::vector<TensorParamDecl *>{})
      for (const Expr *dim : p->shape.dims)
        if (auto *n = dyn_cast<NameExpr>(dim); n && !later && n->name == e->name &&
                                                 n->getRange().Start.getPointer() > e->getRange().Start.getPointer())
          later = n;
    if (later) {
      diag.note(later->getRange(), "'" + e->name + "' becomes a shape symbol here, in a later parameter")
          .hint("a shape symbol is declared where a shape first names it alone: move that parameter before this "
                "one");
      return Type::error();
    }
    std::string near = closestMatch(e->name, visibleNames());
    if (!near.empty())
      diag.hint("did you mean '" + near + "'?");
    return Type::error();
  }
  e->decl = d;
  if (auto *param = dyn_cast<CompileParamDecl>(d); param && !checkingDefault)
    param->usedOutsideDefaults = true;
  if (auto *buf = dyn_cast<BufferLikeDecl>(d)) {
    auto *tp = dyn_cast<TensorParamDecl>(d);
    if (!tp || !tp->isScalar()) {
      if (context == ExprContext::TileOperand)
        return d->type;
      if (d->type.isError())
        return Type::error();
      std::string what = tp ? "tensor" : scopeName(buf->scope).str() + " buffer";
      diags.error(e->getRange(), "'" + e->name + "' is a " + what + ", not a scalar")
          .hint("index it (" + e->name + "[...]) or pass it to a tile operator");
      return Type::error();
    }
  }
  e->constant = d->constant;
  return d->type;
}

void Sema::checkIndexBounds(IndexExpr *e, BufferLikeDecl *buf) {
  for (size_t i = 0; i < e->indices.size() && i < buf->shape.rank(); ++i) {
    const IndexItem &item = e->indices[i];
    std::optional<int64_t> dim = buf->shape.constDim(i);
    if (!dim)
      continue;
    auto outOfBounds = [&](const Expr *at, int64_t value) {
      diags.error(at->getRange(), std::string(!item.isSlice ? "index "
                                              : at == item.lo ? "slice start "
                                                              : "slice end ") +
                                      std::to_string(value) + " is out of bounds for dimension " +
                                      std::to_string(i) + " of '" + buf->getName() + "' (size " +
                                      std::to_string(*dim) + ")")
          .note(buf->getRange(), "'" + buf->getName() + "' is declared here with shape " +
                                     buf->shape.str());
    };
    if (!item.isSlice && item.lo && item.lo->constant && item.lo->constant->isInt()) {
      int64_t v = item.lo->constant->getInt();
      if (v < 0 || v >= *dim)
        outOfBounds(item.lo, v);
    }
    if (item.isSlice && item.hi && item.hi->constant && item.hi->constant->isInt() &&
        (item.hi->constant->getInt() > *dim || item.hi->constant->getInt() < 0))
      outOfBounds(item.hi, item.hi->constant->getInt());
    // On-chip regions must lie inside the buffer (global ones are bounds-checked at run time).
    if (item.isSlice && item.lo && item.lo->constant && item.lo->constant->isInt() &&
        item.lo->constant->getInt() < 0 && buf->scope != Scope::Global)
      outOfBounds(item.lo, item.lo->constant->getInt());
    // A parallel loop variable used directly as an index must not run past the buffer.
    if (item.isSlice || buf->scope == Scope::Global)
      continue;
    auto *n = dyn_cast_or_null<NameExpr>(item.lo);
    if (!n || !n->decl || n->decl->getKind() != Decl::DK_LoopVar)
      continue;
    for (ForStmt *loop : loops) {
      if (loop->loopKind != LoopKind::Parallel)
        continue;
      for (size_t v = 0; v < loop->vars.size() && v < loop->extents.size(); ++v) {
        if (loop->vars[v] != n->decl || !loop->extents[v]->constant ||
            !loop->extents[v]->constant->isInt())
          continue;
        int64_t extent = loop->extents[v]->constant->getInt();
        if (extent > *dim)
          diags.error(n->getRange(), "parallel loop variable '" + n->name + "' runs to " +
                                         std::to_string(extent - 1) + " but dimension " +
                                         std::to_string(i) + " of '" + buf->getName() +
                                         "' has size " + std::to_string(*dim))
              .note(loop->extents[v]->getRange(), "the loop extent is " + std::to_string(extent))
              .note(buf->getRange(), "'" + buf->getName() + "' is declared here with shape " +
                                         buf->shape.str());
      }
    }
  }
}

Type Sema::checkIndex(IndexExpr *e, ExprContext context) {
  Decl *d = lookup(e->base->name);
  for (IndexItem &item : e->indices) {
    if (item.lo)
      expectIntegral(item.lo, checkExpr(item.lo), "an index");
    if (item.hi)
      expectIntegral(item.hi, checkExpr(item.hi), "an index");
  }
  if (!d) {
    checkName(e->base, context); // reports it
    return Type::error();
  }
  e->base->decl = d;
  auto *buf = dyn_cast<BufferLikeDecl>(d);
  if (!buf || (isa<TensorParamDecl>(d) && cast<TensorParamDecl>(d)->isScalar())) {
    diags.error(e->base->getRange(), "'" + e->base->name + "' is a " + d->kindName() +
                                         " and cannot be indexed")
        .note(d->getRange(), "'" + e->base->name + "' is declared here");
    return Type::error();
  }
  if (d->type.isError())
    return Type::error();
  if (e->indices.size() != buf->shape.rank()) {
    diags.error(e->getRange(), "'" + buf->getName() + "' has " +
                                   std::to_string(buf->shape.rank()) + " dimension" +
                                   (buf->shape.rank() == 1 ? "" : "s") + " but " +
                                   std::to_string(e->indices.size()) + " ind" +
                                   (e->indices.size() == 1 ? "ex was" : "ices were") + " given")
        .note(buf->getRange(), "'" + buf->getName() + "' is declared here with shape " +
                                   buf->shape.str());
    return Type::error();
  }
  checkIndexBounds(e, buf);
  if (e->hasSlice()) {
    if (context != ExprContext::TileOperand) {
      diags.error(e->getRange(), "a region slice is only allowed as a tile operator argument")
          .hint("index single elements with points: " + buf->getName().str() + "[i, j]");
      return Type::error();
    }
    return Type::buffer();
  }
  if (context == ExprContext::TileOperand)
    return Type::buffer();
  // An i4/u4 element reads as the byte-wide integer that holds its value (docs/language.md 4.1).
  if (isPacked(buf->elemType)) {
    if (buf->scope == Scope::Fragment) {
      diags.error(e->getRange(), "not supported yet: reading single elements of " +
                                     dtypeName(buf->elemType).str() + " fragment '" + buf->getName().str() + "'")
          .hint("unpack the fragment with dequant_i4, or copy it into a shared buffer and read that");
      return Type::error();
    }
    if (buf->scope == Scope::Local)
      return Type::scalar(buf->elemType); // rejected by code generation (docs/status.md)
    // f4e2m1 reads as f16, which holds each of its values exactly.
    return Type::scalar(buf->elemType == DType::I4       ? DType::I8
                        : buf->elemType == DType::F4E2M1 ? DType::F16
                                                         : DType::U8);
  }
  return Type::scalar(buf->elemType);
}

Type Sema::checkUnary(UnaryExpr *e) {
  Type t = checkExpr(e->operand);
  if (t.isError())
    return t;
  Type result = t;
  switch (e->op) {
  case UnaryOp::Neg:
    if (!t.isNumeric()) {
      diags.error(e->getRange(), "unary '-' needs a number, got " + t.str());
      return Type::error();
    }
    break;
  case UnaryOp::Not:
    if (!t.isBool()) {
      auto diag = diags.error(e->getRange(), "'!' needs a bool, got " + t.str());
      if (t.isNumeric())
        diag.hint("compare explicitly: `" + operandText(e->operand) + " == 0`");
      return Type::error();
    }
    break;
  case UnaryOp::BitNot:
    if (!t.isIntegral()) {
      diags.error(e->getRange(), "'~' needs an integer, got " + t.str());
      return Type::error();
    }
    break;
  }
  if (e->operand->constant)
    e->constant = foldUnary(e->op, *e->operand->constant).value;
  return result;
}

Type Sema::checkBinary(BinaryExpr *e) {
  Type a = checkExpr(e->lhs);
  Type b = checkExpr(e->rhs);
  if (a.isError() || b.isError())
    return Type::error();
  llvm::StringRef op = spelling(e->op);
  auto mismatch = [&](llvm::StringRef need) {
    diags.error(e->opRange, "operator '" + op + "' needs " + need + ", got " + a.str() +
                                " and " + b.str())
        .note(e->lhs->getRange(), "left operand has type " + a.str())
        .note(e->rhs->getRange(), "right operand has type " + b.str());
    return Type::error();
  };
  Type result;
  switch (e->op) {
  case BinaryOp::And:
  case BinaryOp::Or:
    if (!a.isBool() || !b.isBool())
      return mismatch("bool operands");
    result = a;
    break;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    if (a.isBool() && b.isBool()) {
      result = a;
      break;
    }
    // `dtype == f32`, `policy != square`: compile-time parameters compared at compile time,
    // so that a default can depend on the element type (`block_K = select(dtype == f32, 32,
    // 64)`). Such values are always constants; compare them here, foldBinary takes numbers.
    if ((a.kind() == Type::DTypeValue || a.kind() == Type::PolicyValue) && a == b) {
      if (!e->lhs->constant || !e->rhs->constant)
        return mismatch("operands known at compile time");
      bool equal = e->lhs->constant->value == e->rhs->constant->value;
      e->constant = ConstValue{equal == (e->op == BinaryOp::Eq)};
      return Type::scalar(DType::Bool);
    }
    if (a.kind() == Type::DTypeValue || b.kind() == Type::DTypeValue ||
        a.kind() == Type::PolicyValue || b.kind() == Type::PolicyValue)
      return mismatch("two numbers, two dtypes or two policies");
    [[fallthrough]];
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    if (!a.isNumeric() || !b.isNumeric())
      return mismatch("numeric operands");
    result = Type::scalar(DType::Bool);
    break;
  case BinaryOp::Rem:
  case BinaryOp::Shl:
  case BinaryOp::Shr:
  case BinaryOp::BitAnd:
  case BinaryOp::BitXor:
  case BinaryOp::BitOr:
    if (!a.isIntegral() || !b.isIntegral())
      return mismatch("integer operands");
    result = promote(a, b);
    break;
  default: // + - * /
    if (!a.isNumeric() || !b.isNumeric())
      return mismatch("numeric operands");
    result = promote(a, b);
    break;
  }
  if ((e->op == BinaryOp::Shl || e->op == BinaryOp::Shr) && result.isScalar() &&
      e->rhs->constant && e->rhs->constant->isInt()) {
    int64_t amount = e->rhs->constant->getInt();
    unsigned bits = bitWidth(result.dtype());
    if (amount < 0 || amount >= int64_t(bits)) {
      diags.error(e->rhs->getRange(), "shift amount " + std::to_string(amount) +
                                          " is out of range [0, " + std::to_string(bits) +
                                          ") for " + dtypeName(result.dtype()))
          .note(e->lhs->getRange(), "the shifted value has type " + result.str())
          .hint(amount < 0 ? "shift the other way"
                           : "widen the value first, e.g. i64(" + toSource(e->lhs) + ")");
      return Type::error();
    }
  }
  if (e->lhs->constant && e->rhs->constant) {
    FoldResult r = foldBinary(e->op, *e->lhs->constant, *e->rhs->constant);
    if (!r.error.empty()) {
      diags.error(e->rhs->getRange(), r.error + " in a constant expression");
      return Type::error();
    }
    e->constant = r.value;
    // Integer results of float literals keep float-ness: 1.0 * 2 is a float literal.
    if (e->constant && result.isFloating() && e->constant->isInt())
      e->constant = ConstValue{static_cast<double>(e->constant->getInt())};
  } else if ((e->op == BinaryOp::And || e->op == BinaryOp::Or) && e->lhs->constant &&
             e->lhs->constant->isBool() && e->lhs->constant->getBool() == (e->op == BinaryOp::Or)) {
    // `false && x` and `true || x` never evaluate x (as in C++): constant, so that a
    // compile-time switch such as `if ping_pong && warpgroup_id() == 1` leaves no code behind.
    e->constant = e->lhs->constant;
  } else if ((e->op == BinaryOp::Div || e->op == BinaryOp::Rem) && e->rhs->constant &&
             e->rhs->constant->isInt() && e->rhs->constant->getInt() == 0) {
    diags.error(e->rhs->getRange(), "division by zero");
    return Type::error();
  }
  return result;
}

Type Sema::checkCast(CallExpr *e, DType to) {
  std::vector<Expr *> pos = e->positional();
  if (pos.size() != 1 || pos.size() != e->args.size()) {
    std::string target = dtypeName(to).str();
    if (e->callee != target)
      target = "'" + e->callee + "' (" + target + ")";
    diags.error(e->getRange(), "a cast to " + target + " takes exactly one argument");
    for (const CallArg &a : e->args)
      checkExpr(a.value);
    return Type::error();
  }
  Type t = checkExpr(pos[0]);
  if (t.isError())
    return t;
  if (!t.isNumeric() && !t.isBool()) {
    diags.error(pos[0]->getRange(), "cannot convert a " + t.str() + " to " + dtypeName(to));
    return Type::error();
  }
  if (to == DType::F4E2M1) {
    // A storage type: its values are read (as f16) and unpacked (dequant_i4), not computed.
    diags.error(e->getRange(), "not supported yet: converting values to f4e2m1")
        .hint("f4e2m1 tensors are read element by element (as f16) or unpacked with dequant_i4; "
              "quantize on the host");
    return Type::error();
  }
  if (pos[0]->constant)
    e->constant = castConstant(*pos[0]->constant, to);
  return Type::scalar(to);
}

Type Sema::checkCall(CallExpr *e) {
  switch (e->calleeKind) {
  case CalleeKind::TileOp:
    if (e->builtin == Builtin::CallExtern) {
      checkTileOp(e);
      return e->type.kind() == Type::Void ? Type::error() : e->type;
    }
    diags.error(e->calleeRange, "'" + e->callee + "' is a tile operator and has no value")
        .hint("call it as a statement: `" + e->callee + "(...);`");
    for (const CallArg &a : e->args)
      checkExpr(a.value, ExprContext::TileOperand);
    return Type::error();
  case CalleeKind::Cast:
    return checkCast(e, e->castType);
  case CalleeKind::Builtin:
    return checkScalarBuiltin(e);
  case CalleeKind::Named:
    break;
  }
  // A call of a name: only a dtype parameter or constant can be called, as a cast.
  Decl *d = lookup(e->callee);
  if (d && d->type.kind() == Type::DTypeValue) {
    e->calleeDecl = d;
    if (!d->constant) {
      for (const CallArg &a : e->args)
        checkExpr(a.value);
      return Type::error();
    }
    e->calleeKind = CalleeKind::Cast;
    e->castType = d->constant->getDType();
    return checkCast(e, e->castType);
  }
  for (const CallArg &a : e->args)
    checkExpr(a.value, ExprContext::TileOperand);
  if (d) {
    diags.error(e->calleeRange, "'" + e->callee + "' is a " + d->kindName() +
                                    ", not a function")
        .note(d->getRange(), "'" + e->callee + "' is declared here");
    return Type::error();
  }
  auto diag = diags.error(e->calleeRange, "unknown function '" + e->callee + "'");
  std::vector<std::string> candidates = scalarBuiltinNames();
  for (const char *op : {"copy", "gemm", "fill", "clear", "atomic_add", "cumsum", "cummax", "cummin", "dequant_i4",
                         "reduce_sum", "reduce_max", "reduce_min", "reduce_abssum", "reduce_absmax", "reduce_and",
                         "reduce_or", "reduce_xor", "reduce_argmax", "reduce_argmin",
                         "annotate_layout", "swizzle_blocks", "barrier_arrive", "barrier_wait",
                         "warp_specialize", "persistent", "tune_for", "call_extern"})
    candidates.push_back(op);
  std::string near = closestMatch(e->callee, candidates);
  if (!near.empty())
    diag.hint("did you mean '" + near + "'?");
  else
    diag.hint("to call a device function of your own, use call_extern(\"" + e->callee +
              "\", ...)");
  return Type::error();
}

Type Sema::checkScalarBuiltin(CallExpr *e) {
  llvm::StringRef name = e->callee;
  std::vector<Expr *> args = e->positional();
  if (args.size() != e->args.size()) {
    for (const CallArg &a : e->args)
      if (!a.keyword.empty())
        diags.error(a.keywordRange, "'" + name + "' takes no keyword arguments");
    for (const CallArg &a : e->args)
      checkExpr(a.value);
    return Type::error();
  }
  if (e->builtin == Builtin::LastBlock) {
    // Sema::checkIf takes it where it may stand; anywhere else it is an error.
    diags.error(e->getRange(), "last_block(...) must be the whole condition of an `if`")
        .hint("write `if last_block(Counter[...], arrivals) { ... }`; its branch runs in the last block to "
              "arrive (docs/language.md 9.17)");
    for (Expr *a : args)
      checkExpr(a);
    return Type::error();
  }
  size_t arity = 1;
  switch (e->builtin) {
  case Builtin::Max: case Builtin::Min: case Builtin::CeilDiv: arity = 2; break;
  case Builtin::Select: arity = 3; break;
  case Builtin::WarpgroupId: case Builtin::MaxSharedBytes: arity = 0; break;
  default: break;
  }
  std::vector<Type> types;
  bool anyError = false;
  for (Expr *a : args) {
    types.push_back(checkExpr(a));
    anyError |= types.back().isError();
  }
  if (args.size() != arity) {
    diags.error(e->getRange(), "'" + name + "' takes " + std::to_string(arity) + " argument" +
                                   (arity == 1 ? "" : "s") + ", got " +
                                   std::to_string(args.size()));
    return Type::error();
  }
  if (anyError)
    return Type::error();

  Type result;
  switch (e->builtin) {
  case Builtin::WarpgroupId:
    return Type::scalar(DType::I32); // differs between warpgroups: never a constant
  case Builtin::MaxSharedBytes:
    // The driver tells Sema the target (setTarget); each compilation has one.
    if (targetSharedBytes <= 0) {
      diags.error(e->getRange(), "max_shared_bytes() needs a target, and this compilation has none");
      return Type::error();
    }
    e->constant = ConstValue{targetSharedBytes};
    return Type::intLiteral();
  case Builtin::Inf: {
    if (types[0].kind() != Type::DTypeValue || !args[0]->constant) {
      diags.error(args[0]->getRange(), "inf(...) takes a dtype, e.g. inf(f32)");
      return Type::error();
    }
    DType dt = args[0]->constant->getDType();
    if (!isFloat(dt)) {
      diags.error(args[0]->getRange(), dtypeName(dt) + " has no infinity")
          .hint("use a floating-point dtype");
      return Type::error();
    }
    return Type::scalar(dt); // not folded: infinity is not a useful constant to propagate
  }
  case Builtin::CeilDiv:
    for (size_t i = 0; i < 2; ++i)
      if (!expectIntegral(args[i], types[i], "an argument of ceildiv"))
        return Type::error();
    result = promote(types[0], types[1]);
    break;
  case Builtin::Select:
    if (!expectBool(args[0], types[0], "the condition of select"))
      return Type::error();
    if (!(types[1].isNumeric() && types[2].isNumeric()) && types[1] != types[2]) {
      diags.error(e->getRange(), "select's branches have incompatible types " + types[1].str() +
                                     " and " + types[2].str());
      return Type::error();
    }
    result = types[1].isNumeric() ? promote(types[1], types[2]) : types[1];
    break;
  case Builtin::Max:
  case Builtin::Min:
    for (size_t i = 0; i < 2; ++i)
      if (!types[i].isNumeric()) {
        diags.error(args[i]->getRange(), "'" + name + "' needs numbers, got " + types[i].str());
        return Type::error();
      }
    result = promote(types[0], types[1]);
    break;
  case Builtin::Abs:
    if (!types[0].isNumeric()) {
      diags.error(args[0]->getRange(), "abs needs a number, got " + types[0].str());
      return Type::error();
    }
    result = types[0];
    break;
  default: // exp, exp2, log, log2, sqrt, rsqrt, tanh, sigmoid: floating point only
    if (types[0].kind() == Type::IntLiteral) {
      result = Type::floatLiteral();
    } else if (!types[0].isFloating()) {
      diags.error(args[0]->getRange(), "'" + name + "' needs a floating-point argument, got " +
                                           types[0].str())
          .hint("convert explicitly: " + name.str() + "(f32(" + toSource(args[0]) + "))");
      return Type::error();
    } else {
      result = types[0];
    }
    break;
  }
  if (llvm::all_of(args, [](Expr *a) { return a->constant.has_value(); })) {
    std::vector<ConstValue> values;
    for (Expr *a : args)
      values.push_back(*a->constant);
    FoldResult r = foldBuiltin(e->builtin, values);
    if (!r.error.empty()) {
      diags.error(e->getRange(), r.error + " in a constant expression");
      return Type::error();
    }
    e->constant = r.value;
  }
  return result;
}

// ------------------------------------------------------------------ linear forms

// Linear forms whose coefficients overflow int64_t are not linear forms we can use.
static std::optional<LinearForm> scale(const LinearForm &f, int64_t k) {
  LinearForm out;
  if (llvm::MulOverflow(f.constant, k, out.constant))
    return std::nullopt;
  if (k != 0)
    for (auto &[d, c] : f.terms) {
      int64_t scaled = 0;
      if (llvm::MulOverflow(c, k, scaled))
        return std::nullopt;
      out.terms.push_back({d, scaled});
    }
  return out;
}

static std::optional<LinearForm> add(const LinearForm &a, const LinearForm &b, int64_t sign) {
  std::optional<LinearForm> negated = sign < 0 ? scale(b, -1) : b;
  if (!negated)
    return std::nullopt;
  std::map<LinearForm::Atom, int64_t> sum;
  for (auto &[d, c] : a.terms)
    sum[d] = c;
  LinearForm out;
  if (llvm::AddOverflow(a.constant, negated->constant, out.constant))
    return std::nullopt;
  for (auto &[d, c] : negated->terms)
    if (llvm::AddOverflow(sum[d], c, sum[d]))
      return std::nullopt;
  for (auto &[d, c] : sum)
    if (c != 0)
      out.terms.push_back({d, c});
  return out;
}

// An integer expression linearize does not look into, as one atom keyed by its text: a load
// (`Tab[k]`), a division or remainder, a product of two variables, a call of a pure builtin
// (min, max, ceildiv, select, abs, a cast). Long texts are not keyed (the key is only ever
// compared); anything else is not linear.
static bool isPure(const Expr *e, int &budget) {
  if (!e || --budget < 0)
    return false;
  if (isa<IntLitExpr, FloatLitExpr, BoolLitExpr, NameExpr>(e))
    return true;
  if (auto *u = dyn_cast<UnaryExpr>(e))
    return isPure(u->operand, budget);
  if (auto *b = dyn_cast<BinaryExpr>(e))
    return isPure(b->lhs, budget) && isPure(b->rhs, budget);
  if (auto *x = dyn_cast<IndexExpr>(e))
    return llvm::all_of(x->indices, [&](const IndexItem &i) {
      return !i.isSlice && isPure(i.lo, budget);
    });
  if (auto *c = dyn_cast<CallExpr>(e)) {
    static constexpr Builtin kPure[] = {Builtin::Max,    Builtin::Min,     Builtin::Abs,
                                        Builtin::Select, Builtin::CeilDiv, Builtin::WarpgroupId};
    bool pureCallee = c->calleeKind == CalleeKind::Cast ||
                      (c->calleeKind == CalleeKind::Builtin && llvm::is_contained(kPure, c->builtin));
    return pureCallee && llvm::all_of(c->args, [&](const CallArg &a) { return isPure(a.value, budget); });
  }
  return false;
}

static std::optional<LinearForm> opaqueAtom(const Expr *e) {
  constexpr size_t kMaxAtomText = 512;
  int budget = 64; // subexpressions looked at: a longer text is not keyed anyway
  if (!e->type.isIntegral() || isa<IntLitExpr, NameExpr>(e) || !isPure(e, budget))
    return std::nullopt;
  std::string text = toSource(e);
  if (text.size() > kMaxAtomText)
    return std::nullopt;
  LinearForm f;
  f.terms.push_back({std::move(text), 1});
  return f;
}

std::optional<LinearForm> linearize(const Expr *e) {
  if (!e)
    return std::nullopt;
  if (e->constant && e->constant->isInt()) {
    LinearForm f;
    f.constant = e->constant->getInt();
    return f;
  }
  if (auto *n = dyn_cast<NameExpr>(e)) {
    if (!n->decl || !n->type.isIntegral())
      return std::nullopt;
    LinearForm f;
    f.terms.push_back({n->decl, 1});
    return f;
  }
  if (auto *u = dyn_cast<UnaryExpr>(e)) {
    if (u->op != UnaryOp::Neg)
      return std::nullopt;
    if (auto f = linearize(u->operand))
      return scale(*f, -1);
    return std::nullopt;
  }
  auto *b = dyn_cast<BinaryExpr>(e);
  if (b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul)) {
    auto l = linearize(b->lhs), r = linearize(b->rhs);
    if (l && r) {
      if (b->op != BinaryOp::Mul)
        return add(*l, *r, b->op == BinaryOp::Add ? 1 : -1);
      if (l->isConstant())
        return scale(*r, l->constant);
      if (r->isConstant())
        return scale(*l, r->constant);
    }
  }
  return opaqueAtom(e);
}

// `budget` bounds the work: a chain of lets each adding the previous one twice would otherwise
// take exponential time; running out answers "not provably", which is always safe.
static bool multipleOf(const Expr *e, int64_t m, int &budget) {
  if (!e)
    return true;
  if (m == 0 || --budget < 0)
    return false;
  if (auto *n = llvm::dyn_cast<NameExpr>(e))
    if (auto *l = llvm::dyn_cast_or_null<LetDecl>(n->decl); l && l->init && n->type.isIntegral())
      return multipleOf(l->init, m, budget);
  if (auto *b = llvm::dyn_cast<BinaryExpr>(e); b && b->type.isIntegral()) {
    if (b->op == BinaryOp::Mul && (multipleOf(b->lhs, m, budget) || multipleOf(b->rhs, m, budget)))
      return true;
    if ((b->op == BinaryOp::Add || b->op == BinaryOp::Sub) && multipleOf(b->lhs, m, budget) &&
        multipleOf(b->rhs, m, budget))
      return true;
  }
  auto f = linearize(e);
  if (!f || f->constant % m != 0)
    return false;
  for (auto &[d, c] : f->terms)
    if (c % m != 0)
      return false;
  return true;
}

bool multipleOf(const Expr *e, int64_t m) {
  int budget = 4096;
  return multipleOf(e, m, budget);
}

std::optional<int64_t> constantDifference(const Expr *hi, const Expr *lo) {
  auto h = linearize(hi);
  if (!h)
    return std::nullopt;
  LinearForm l;
  if (lo) {
    auto lf = linearize(lo);
    if (!lf)
      return std::nullopt;
    l = *lf;
  }
  std::optional<LinearForm> diff = add(*h, l, -1);
  if (!diff || !diff->isConstant())
    return std::nullopt;
  return diff->constant;
}

} // namespace tlc
