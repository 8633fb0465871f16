#include "AST.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <sstream>

namespace tlc {

std::string ConstValue::str() const {
  if (isInt())
    return std::to_string(getInt());
  if (isBool())
    return getBool() ? "true" : "false";
  if (isDType())
    return dtypeName(getDType()).str();
  if (isPolicy())
    return policyName(getPolicy()).str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << getFloat();
  os.flush();
  // Keep floats recognisable as floats in dumps.
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

llvm::StringRef scopeName(Scope s) {
  switch (s) {
  case Scope::Global: return "global";
  case Scope::Shared: return "shared";
  case Scope::Fragment: return "fragment";
  case Scope::Local: return "local";
  }
  return "?";
}

const char *Decl::kindName() const {
  switch (kind) {
  case DK_Const: return "constant";
  case DK_CompileParam: return "compile-time parameter";
  case DK_TensorParam:
    return llvm::cast<TensorParamDecl>(this)->isScalar() ? "scalar parameter" : "tensor";
  case DK_ShapeSymbol: return "shape symbol";
  case DK_BlockIndex: return "block index";
  case DK_Buffer: return "buffer";
  case DK_Let: return "let binding";
  case DK_LoopVar: return "loop variable";
  case DK_LambdaParam: return "layout parameter";
  }
  return "declaration";
}

std::optional<int64_t> BufferShape::constDim(size_t i) const {
  if (i >= dims.size() || !dims[i] || !dims[i]->constant || !dims[i]->constant->isInt())
    return std::nullopt;
  return dims[i]->constant->getInt();
}

std::string BufferShape::str() const {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    if (auto c = constDim(i))
      s += std::to_string(*c);
    else
      s += toSource(dims[i]);
  }
  return s + "]";
}

const IndexExpr *IfStmt::lastBlockCounter() const {
  return llvm::cast<IndexExpr>(llvm::cast<CallExpr>(cond)->positional()[0]);
}

bool IndexExpr::hasSlice() const {
  for (const IndexItem &i : indices)
    if (i.isSlice)
      return true;
  return false;
}

llvm::StringRef spelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "-";
  case UnaryOp::Not: return "!";
  case UnaryOp::BitNot: return "~";
  }
  return "?";
}

llvm::StringRef spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Rem: return "%";
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Shl: return "<<";
  case BinaryOp::Shr: return ">>";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::BitAnd: return "&";
  case BinaryOp::BitXor: return "^";
  case BinaryOp::BitOr: return "|";
  case BinaryOp::And: return "&&";
  case BinaryOp::Or: return "||";
  }
  return "?";
}

int precedence(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Rem: return 10;
  case BinaryOp::Add: case BinaryOp::Sub: return 9;
  case BinaryOp::Shl: case BinaryOp::Shr: return 8;
  case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge: return 7;
  case BinaryOp::Eq: case BinaryOp::Ne: return 6;
  case BinaryOp::BitAnd: return 5;
  case BinaryOp::BitXor: return 4;
  case BinaryOp::BitOr: return 3;
  case BinaryOp::And: return 2;
  case BinaryOp::Or: return 1;
  }
  return 0;
}

llvm::StringRef spelling(AssignOp op) {
  switch (op) {
  case AssignOp::Assign: return "=";
  case AssignOp::Add: return "+=";
  case AssignOp::Sub: return "-=";
  case AssignOp::Mul: return "*=";
  case AssignOp::Div: return "/=";
  }
  return "?";
}

llvm::StringRef loopKindName(LoopKind k) {
  switch (k) {
  case LoopKind::Parallel: return "parallel";
  case LoopKind::Pipelined: return "pipelined";
  case LoopKind::Serial: return "serial";
  case LoopKind::Unroll: return "unroll";
  case LoopKind::Vectorized: return "vectorized";
  }
  return "?";
}

static const std::pair<Builtin, const char *> kBuiltinNames[] = {
    {Builtin::Copy, "copy"}, {Builtin::Gemm, "gemm"}, {Builtin::Fill, "fill"},
    {Builtin::Clear, "clear"}, {Builtin::AtomicAdd, "atomic_add"}, {Builtin::Cumsum, "cumsum"},
    {Builtin::Cummax, "cummax"}, {Builtin::Cummin, "cummin"},
    {Builtin::DequantI4, "dequant_i4"}, {Builtin::Im2col, "im2col"},
    {Builtin::ReduceSum, "reduce_sum"}, {Builtin::ReduceMax, "reduce_max"},
    {Builtin::ReduceMin, "reduce_min"}, {Builtin::ReduceAbsSum, "reduce_abssum"},
    {Builtin::ReduceAbsMax, "reduce_absmax"}, {Builtin::ReduceAnd, "reduce_and"},
    {Builtin::ReduceOr, "reduce_or"}, {Builtin::ReduceXor, "reduce_xor"},
    {Builtin::ReduceArgmax, "reduce_argmax"}, {Builtin::ReduceArgmin, "reduce_argmin"},
    {Builtin::AnnotateLayout, "annotate_layout"},
    {Builtin::SwizzleBlocks, "swizzle_blocks"}, {Builtin::BarrierArrive, "barrier_arrive"},
    {Builtin::BarrierWait, "barrier_wait"}, {Builtin::WarpSpecialize, "warp_specialize"},
    {Builtin::Persistent, "persistent"}, {Builtin::TuneFor, "tune_for"},
    {Builtin::CallExtern, "call_extern"}, {Builtin::Print, "print"},
    {Builtin::Exp, "exp"}, {Builtin::Exp2, "exp2"}, {Builtin::Log, "log"},
    {Builtin::Log2, "log2"}, {Builtin::Sqrt, "sqrt"}, {Builtin::Rsqrt, "rsqrt"},
    {Builtin::Tanh, "tanh"}, {Builtin::Sigmoid, "sigmoid"}, {Builtin::Max, "max"},
    {Builtin::Min, "min"}, {Builtin::Abs, "abs"}, {Builtin::Select, "select"},
    {Builtin::Inf, "inf"}, {Builtin::CeilDiv, "ceildiv"}, {Builtin::WarpgroupId, "warpgroup_id"},
    {Builtin::MaxSharedBytes, "max_shared_bytes"}, {Builtin::LastBlock, "last_block"},
};

Builtin parseBuiltin(llvm::StringRef name) {
  for (const auto &[b, n] : kBuiltinNames)
    if (name == n)
      return b;
  return Builtin::None;
}

llvm::StringRef builtinName(Builtin b) {
  for (const auto &[bi, n] : kBuiltinNames)
    if (bi == b)
      return n;
  return "?";
}

bool isTileOp(Builtin b) { return b <= Builtin::Print; }

bool isReduce(Builtin b) { return b >= Builtin::ReduceSum && b <= Builtin::ReduceArgmin; }

bool isBitwiseReduce(Builtin b) { return b >= Builtin::ReduceAnd && b <= Builtin::ReduceXor; }

bool isArgReduce(Builtin b) { return b == Builtin::ReduceArgmax || b == Builtin::ReduceArgmin; }

bool isScan(Builtin b) { return b >= Builtin::Cumsum && b <= Builtin::Cummin; }

std::vector<Expr *> CallExpr::positional() const {
  std::vector<Expr *> out;
  for (const CallArg &a : args)
    if (a.keyword.empty())
      out.push_back(a.value);
  return out;
}

const CallArg *CallExpr::keywordArg(llvm::StringRef name) const {
  for (const CallArg &a : args)
    if (a.keyword == name)
      return &a;
  return nullptr;
}

static void printExpr(llvm::raw_ostream &os, const Expr *e, int parentPrec);

static void printArgs(llvm::raw_ostream &os, const std::vector<CallArg> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (i)
      os << ", ";
    if (!args[i].keyword.empty())
      os << args[i].keyword << " = ";
    printExpr(os, args[i].value, 0);
  }
}

static void printExpr(llvm::raw_ostream &os, const Expr *e, int parentPrec) {
  if (!e) {
    os << "<null>";
    return;
  }
  switch (e->getKind()) {
  case Expr::EK_IntLit:
    os << llvm::cast<IntLitExpr>(e)->value;
    return;
  case Expr::EK_FloatLit:
    os << llvm::cast<FloatLitExpr>(e)->spelling;
    return;
  case Expr::EK_BoolLit:
    os << (llvm::cast<BoolLitExpr>(e)->value ? "true" : "false");
    return;
  case Expr::EK_StringLit:
    os << '"';
    os.write_escaped(llvm::cast<StringLitExpr>(e)->value);
    os << '"';
    return;
  case Expr::EK_Name:
    os << llvm::cast<NameExpr>(e)->name;
    return;
  case Expr::EK_DTypeRef:
    os << dtypeName(llvm::cast<DTypeRefExpr>(e)->dtype);
    return;
  case Expr::EK_PolicyRef:
    os << policyName(llvm::cast<PolicyRefExpr>(e)->policy);
    return;
  case Expr::EK_Index: {
    auto *ix = llvm::cast<IndexExpr>(e);
    os << ix->base->name << "[";
    for (size_t i = 0; i < ix->indices.size(); ++i) {
      const IndexItem &item = ix->indices[i];
      if (i)
        os << ", ";
      if (item.lo)
        printExpr(os, item.lo, 0);
      if (item.isSlice) {
        os << ":";
        if (item.hi)
          printExpr(os, item.hi, 0);
      }
    }
    os << "]";
    return;
  }
  case Expr::EK_Unary: {
    auto *u = llvm::cast<UnaryExpr>(e);
    os << spelling(u->op);
    printExpr(os, u->operand, 11);
    return;
  }
  case Expr::EK_Binary: {
    auto *b = llvm::cast<BinaryExpr>(e);
    int prec = precedence(b->op);
    if (prec < parentPrec)
      os << "(";
    printExpr(os, b->lhs, prec);
    os << " " << spelling(b->op) << " ";
    printExpr(os, b->rhs, prec + 1);
    if (prec < parentPrec)
      os << ")";
    return;
  }
  case Expr::EK_Call: {
    auto *c = llvm::cast<CallExpr>(e);
    os << c->callee << "(";
    printArgs(os, c->args);
    os << ")";
    return;
  }
  case Expr::EK_Lambda: {
    auto *l = llvm::cast<LambdaExpr>(e);
    os << "(";
    for (size_t i = 0; i < l->params.size(); ++i)
      os << (i ? ", " : "") << l->params[i]->getName();
    os << ") => [";
    for (size_t i = 0; i < l->results.size(); ++i) {
      if (i)
        os << ", ";
      printExpr(os, l->results[i], 0);
    }
    os << "]";
    return;
  }
  }
}

std::string toSource(const Expr *e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printExpr(os, e, 0);
  return os.str();
}

int64_t expandedSize(const Expr *e, const std::function<bool(const LetDecl *)> &expand, int64_t cap,
                     llvm::DenseMap<const Expr *, int64_t> &memo) {
  if (!e)
    return 0;
  if (auto it = memo.find(e); it != memo.end())
    return it->second;
  int64_t n = 1;
  auto add = [&](const Expr *c) { n = std::min(cap + 1, n + expandedSize(c, expand, cap, memo)); };
  if (e->constant) {
    // one node
  } else if (auto *name = llvm::dyn_cast<NameExpr>(e)) {
    if (auto *let = llvm::dyn_cast_or_null<LetDecl>(name->decl); let && expand(let))
      add(let->init);
  } else if (auto *u = llvm::dyn_cast<UnaryExpr>(e)) {
    add(u->operand);
  } else if (auto *b = llvm::dyn_cast<BinaryExpr>(e)) {
    add(b->lhs);
    add(b->rhs);
  } else if (auto *c = llvm::dyn_cast<CallExpr>(e)) {
    for (const Expr *a : c->positional())
      add(a);
  } else if (auto *ix = llvm::dyn_cast<IndexExpr>(e)) {
    for (const IndexItem &i : ix->indices) {
      add(i.lo);
      add(i.hi);
    }
  }
  memo[e] = n;
  return n;
}

} // namespace tlc
