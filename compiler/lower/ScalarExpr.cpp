// Scalar expressions and statements as C++ text (the leaves of the loop IR until expression
// trees replace them), and the C++ spelling of element types.
#include "lower/KernelLowering.h"

#include "infer/ParallelAccess.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"

#include <cmath>

namespace tlc::lower {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

std::string cppType(DType t) {
  switch (t) {
  case DType::F16: return "tl::f16";
  case DType::BF16: return "tl::bf16";
  case DType::F32: return "float";
  case DType::F64: return "double";
  case DType::F8E4M3: return "tl::f8e4m3";
  case DType::F8E5M2: return "tl::f8e5m2";
  case DType::I8: return "int8_t";
  case DType::U8: return "uint8_t";
  case DType::I16: return "int16_t";
  case DType::I32: return "int";
  case DType::U32: return "unsigned";
  case DType::I64: return "long long";
  case DType::Bool: return "bool";
  case DType::I4: case DType::U4: case DType::F4E2M1: return "uint8_t";
  }
  return "float";
}

std::string cppType(Type t) {
  if (t.kind() == Type::IntLiteral)
    return "int";
  if (t.kind() == Type::FloatLiteral)
    return "float";
  return t.isScalar() ? cppType(t.dtype()) : "auto";
}

std::string runtimeDType(DType t) {
  switch (t) {
  case DType::F16: return "TLC_F16";
  case DType::BF16: return "TLC_BF16";
  case DType::F32: return "TLC_F32";
  case DType::F64: return "TLC_F64";
  case DType::F8E4M3: return "TLC_F8E4M3";
  case DType::F8E5M2: return "TLC_F8E5M2";
  case DType::I4: return "TLC_I4";
  case DType::U4: return "TLC_U4";
  case DType::F4E2M1: return "TLC_F4E2M1";
  case DType::I8: return "TLC_I8";
  case DType::U8: return "TLC_U8";
  case DType::I16: return "TLC_I16";
  case DType::I32: return "TLC_I32";
  case DType::U32: return "TLC_U32";
  case DType::I64: return "TLC_I64";
  case DType::Bool: return "TLC_BOOL";
  }
  return "TLC_F32";
}

namespace {

std::string floatLiteral(double v, bool single) {
  // The value the literal denotes: an f32 constant out of range is infinite, a tiny one 0
  // (a literal such as 1e300f would be an nvcc error).
  if (single)
    v = static_cast<float>(v);
  if (std::isnan(v)) {
    // No C++ literal is a NaN (printf gives "nan" or "-nan"): its bits, sign and payload kept.
    std::string s;
    llvm::raw_string_ostream os(s);
    if (single)
      os << "tl::bit_cast<float>(" << llvm::format_hex(llvm::bit_cast<uint32_t>(float(v)), 10) << "u)";
    else
      os << "tl::bit_cast<double>(" << llvm::format_hex(llvm::bit_cast<uint64_t>(v), 18) << "ull)";
    return os.str();
  }
  if (std::isinf(v))
    return std::string(v < 0 ? "-" : "") + (single ? "tl::inf<float>()" : "tl::inf<double>()");
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format(single ? "%.9g" : "%.17g", v);
  os.flush();
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return single ? s + "f" : s;
}

// A literal of the given scalar type.
std::string constantAs(const ConstValue &c, Type t) {
  if (t.isBool() || c.isBool())
    return (c.isBool() ? c.getBool() : c.isInt() ? c.getInt() != 0 : c.getFloat() != 0) ? "true"
                                                                                        : "false";
  bool wantFloat = t.isFloating();
  if (!wantFloat) {
    int64_t v = c.isInt() ? c.getInt() : int64_t(c.getFloat());
    bool wide = v > INT32_MAX || v < INT32_MIN || (t.isScalar() && t.dtype() == DType::I64);
    return (v < 0 ? "(" : "") + std::to_string(v) + (wide ? "LL" : "") + (v < 0 ? ")" : "");
  }
  double v = c.isInt() ? double(c.getInt()) : c.getFloat();
  if (t.kind() == Type::FloatLiteral || (t.isScalar() && t.dtype() == DType::F32))
    return floatLiteral(v, true);
  if (t.isScalar() && t.dtype() == DType::F64)
    return floatLiteral(v, false);
  return "tl::convert<" + cppType(t.dtype()) + ">(" + floatLiteral(v, true) + ")";
}

// The type scalar arithmetic on `t` is computed in: FP8 types have no operators in CUDA, so
// their arithmetic, comparisons and max/min/abs run in f32 and round back on the way out.
DType computeType(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2 ? DType::F32 : t; }
bool isFp8(const Type &t) { return t.isScalar() && computeType(t.dtype()) != t.dtype(); }

} // namespace

void KernelLowering::unsupported(llvm::SMRange r, const std::string &what, const std::string &hint) {
  auto d = diags.error(r, "not supported yet: " + what);
  if (!hint.empty())
    d.hint(hint);
  ok = false;
}

bool KernelLowering::checkAtomicType(llvm::SMRange r, DType t) {
  // The element types with a hardware atomic add (stdlib/tl/atomic.h); any other would give
  // code nvcc rejects.
  static constexpr DType native[] = {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I32, DType::U32};
  if (llvm::is_contained(native, t))
    return true;
  unsupported(r, "atomic_add into " + dtypeName(t).str() +
                     " elements (native atomics: f16, bf16, f32, f64, i32, u32)");
  return false;
}

// ------------------------------------------------------------------ expressions

std::string KernelLowering::exprAs(const Expr *e, DType t) {
  Type want = Type::scalar(t);
  if (e->constant && (e->type.isNumeric() || e->type.isBool()))
    return constantAs(*e->constant, want);
  if (e->type == want)
    return expr(e);
  return "tl::convert<" + cppType(t) + ">(" + expr(e) + ")";
}

std::string KernelLowering::printCall(const CallExpr *c) {
  // Device printf: the block's and thread's coordinates, then each value, space-separated.
  // Labels are pasted into the format with C escapes (and % doubled); floating values print
  // as %g of their f32 value, integers as %lld, bools as 0/1.
  std::string format = "[block %d,%d,%d thread %d]", values = "(int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z, " + kThreadIndex;
  for (const Expr *a : c->positional()) {
    if (auto *lit = dyn_cast<StringLitExpr>(a)) {
      format += " ";
      for (char ch : cEscaped(lit->value))
        format += ch == '%' ? std::string("%%") : std::string(1, ch);
      continue;
    }
    DType t = materialize(a->type).dtype();
    if (t == DType::Bool) {
      format += " %d";
      values += ", (int)(" + expr(a) + ")";
    } else if (isInteger(t)) {
      format += " %lld";
      values += ", (long long)(" + expr(a) + ")";
    } else {
      format += " %g";
      values += ", (double)tl::convert<float>(" + expr(a) + ")";
    }
  }
  return "printf(\"" + format + "\\n\", " + values + ")";
}

namespace {
// True when `s` is one parenthesized group: "(a + b)", not "(a) + (b)".
bool isParenthesized(const std::string &s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')')
    return false;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0 && i + 1 < s.size())
      return false;
  }
  return true;
}
} // namespace

std::string KernelLowering::expr(const Expr *e) {
  if (e->constant && (e->type.isNumeric() || e->type.isBool()))
    return constantAs(*e->constant, e->type);
  switch (e->getKind()) {
  case Expr::EK_Name: {
    auto *n = cast<NameExpr>(e);
    // A tile test (TileConditions.cpp): the loop's variables at a corner, its lets inlined.
    if (auto o = nameOverrides.find(n->decl); o != nameOverrides.end())
      return o->second;
    if (inlinedLets && inlinedLets->count(n->decl)) {
      auto *let = cast<LetDecl>(n->decl);
      Type t = materialize(let->type);
      std::string value = t.isScalar() ? exprAs(let->init, t.dtype()) : expr(let->init);
      return isParenthesized(value) ? value : "(" + value + ")";
    }
    if (n->decl && (isa<CompileParamDecl>(n->decl) || isa<ConstDecl>(n->decl)) && !n->decl->constant)
      unsupported(n->getRange(), "'" + n->name + "' has no value yet: `auto` parameters are filled "
                                 "by the recommender; pass -D " + n->name + "=VALUE for now");
    return cppName(n->name);
  }
  case Expr::EK_Index: {
    auto *ix = cast<IndexExpr>(e);
    if (const ftg::Buffer *b = g.bufferOf(ix->base->decl))
      for (std::vector<Access> *log : readLogs)
        log->push_back(access(b));
    return elementRef(ix);
  }
  case Expr::EK_Unary: {
    auto *u = cast<UnaryExpr>(e);
    if (isFp8(u->type))
      return "tl::convert<" + cppType(u->type.dtype()) + ">(" + spelling(u->op).str() +
             "tl::convert<float>(" + exprAs(u->operand, u->type.dtype()) + "))";
    return "(" + spelling(u->op).str() + expr(u->operand) + ")";
  }
  case Expr::EK_Binary: {
    auto *b = cast<BinaryExpr>(e);
    if (std::optional<std::string> u = uniformComparison(b))
      return *u;
    bool compare = b->op >= BinaryOp::Lt && b->op <= BinaryOp::Ne;
    bool logical = b->op == BinaryOp::And || b->op == BinaryOp::Or;
    Type operandType = compare ? materialize(promote(b->lhs->type, b->rhs->type))
                               : materialize(b->type);
    if (logical || !operandType.isScalar() || (compare && b->lhs->type.isBool()))
      return "(" + expr(b->lhs) + " " + spelling(b->op).str() + " " + expr(b->rhs) + ")";
    // Operands take the operand type first (an untyped constant rounds to it), then FP8 widens.
    auto operand = [&](const Expr *x) {
      std::string v = exprAs(x, operandType.dtype());
      return isFp8(operandType) ? "tl::convert<float>(" + v + ")" : v;
    };
    std::string s = arithmetic(b->op, operandType.dtype(), operand(b->lhs), operand(b->rhs),
                               provablyNonNegative(b->lhs) && provablyNonNegative(b->rhs));
    return compare || !isFp8(operandType) ? s : "tl::convert<" + cppType(operandType.dtype()) + ">" + s;
  }
  case Expr::EK_Call: {
    auto *c = cast<CallExpr>(e);
    auto args = c->positional();
    Type result = materialize(c->type);
    if (c->calleeKind == CalleeKind::Cast)
      return "tl::convert<" + cppType(c->castType) + ">(" + expr(args[0]) + ")";
    if (c->builtin == Builtin::Print)
      return printCall(c);
    if (c->builtin == Builtin::CallExtern) {
      std::string s = cast<StringLitExpr>(args[0])->value + "(";
      for (size_t i = 1; i < args.size(); ++i)
        s += (i > 1 ? ", " : "") + expr(args[i]);
      return s + ")";
    }
    std::string T = result.isScalar() ? cppType(result.dtype()) : "float";
    auto arg = [&](size_t i) { return result.isScalar() ? exprAs(args[i], result.dtype()) : expr(args[i]); };
    // max/min/abs of FP8 values compare in f32 (computeType).
    auto computed = [&](const std::string &fn, size_t n) {
      if (!isFp8(result))
        return fn + "(" + arg(0) + (n == 2 ? ", " + arg(1) : "") + ")";
      auto wide = [&](size_t i) { return "tl::convert<float>(" + arg(i) + ")"; };
      return "tl::convert<" + T + ">(" + fn + "(" + wide(0) + (n == 2 ? ", " + wide(1) : "") + "))";
    };
    switch (c->builtin) {
    case Builtin::Inf:
      return "tl::inf<" + T + ">()";
    case Builtin::Select: {
      // A global tensor element on one side: a predicated load (tl::load_or), not a branch
      // around the load, so that a thread's loads under such selects are in flight together
      // (the split-KV combine's partials). Where the element's type is the result's, the
      // other side is the fallback as it is; else only a zero other side (load_or_zero).
      auto globalElement = [&](const Expr *x) -> const IndexExpr * {
        auto *ix = dyn_cast<IndexExpr>(x);
        const ftg::Buffer *b = ix && !ix->hasSlice() ? g.bufferOf(ix->base->decl) : nullptr;
        return b && b->scope == Scope::Global && !b->packed ? ix : nullptr;
      };
      auto isZero = [](const Expr *x) {
        return x->constant && ((x->constant->isInt() && x->constant->getInt() == 0) ||
                               (x->constant->isFloat() && x->constant->getFloat() == 0.0));
      };
      const std::string cond = expr(args[0]);
      if (result.isScalar())
        for (size_t side : {size_t(1), size_t(2)}) {
          const IndexExpr *ix = globalElement(args[side]);
          if (!ix)
            continue;
          DType elem = cast<BufferLikeDecl>(ix->base->decl)->elemType;
          std::string valid = side == 1 ? cond : "!(" + cond + ")";
          if (elem == result.dtype())
            return "tl::load_or(&" + expr(ix) + ", " + valid + ", " + arg(3 - side) + ")";
          if (isZero(args[3 - side]))
            return "tl::convert<" + T + ">(tl::load_or_zero(&" + expr(ix) + ", " + valid + "))";
        }
      return "(" + cond + " ? " + arg(1) + " : " + arg(2) + ")";
    }
    case Builtin::Max: return computed("tl::max", 2);
    case Builtin::Min: return computed("tl::min", 2);
    case Builtin::Abs: return computed("tl::abs", 1);
    case Builtin::CeilDiv: return "tl::ceildiv(" + arg(0) + ", " + arg(1) + ")";
    case Builtin::WarpgroupId: return "(" + kThreadIndex + " / " + std::to_string(kWarpgroupThreads) + ")";
    default: {
      // Transcendentals compute in f32 (or f64) and round back for 16-bit types.
      std::string fn = "tl::" + builtinName(c->builtin).str();
      if (result.isScalar() && (result.dtype() == DType::F32 || result.dtype() == DType::F64))
        return fn + "(" + arg(0) + ")";
      return "tl::convert<" + T + ">(" + fn + "(" + exprAs(args[0], DType::F32) + "))";
    }
    }
  }
  default:
    unsupported(e->getRange(), "this expression in generated code");
    return "0";
  }
}

std::string KernelLowering::arithmetic(BinaryOp op, DType t, const std::string &a,
                                      const std::string &b, bool nonNegative) {
  // TileLang's integer `/` and `%` floor (docs/language.md), as the constant folder does;
  // C++'s truncate. They agree when both operands are non-negative, which covers index
  // arithmetic, so only there is the plain (cheaper) operator exact. Unsigned types are
  // C's either way. i4/u4 values are stored as uint8_t and keep C's operators.
  bool floors = (op == BinaryOp::Div || op == BinaryOp::Rem) && isInteger(t) && isSigned(t) &&
                t != DType::I4 && !nonNegative;
  if (!floors)
    return "(" + a + " " + spelling(op).str() + " " + b + ")";
  // 8- and 16-bit operands are promoted to int by C++, so the template argument is explicit.
  std::string fn = op == BinaryOp::Div ? "tl::floordiv" : "tl::floormod";
  std::string targs = t == DType::I32 || t == DType::I64 ? "" : "<" + cppType(t) + ">";
  return fn + targs + "(" + a + ", " + b + ")";
}

int64_t KernelLowering::letExpansion(const Expr *e) {
  return expandedSize(e, [](const LetDecl *) { return true; }, kMaxConstLetExpansion, letExpansionMemo);
}

bool KernelLowering::provablyNonNegative(const Expr *e) {
  if (e->constant)
    return e->constant->isInt() ? e->constant->getInt() >= 0
                                : e->constant->isBool() || (e->constant->isFloat() && e->constant->getFloat() >= 0);
  auto [it, inserted] = nonNegativeMemo.try_emplace(e, false);
  if (!inserted)
    return it->second;
  bool result = computeNonNegative(e);
  nonNegativeMemo[e] = result;
  return result;
}

bool KernelLowering::computeNonNegative(const Expr *e) {
  auto nonNeg = [&](const Expr *x) { return provablyNonNegative(x); };
  switch (e->getKind()) {
  case Expr::EK_Name: {
    const Decl *d = cast<NameExpr>(e)->decl;
    if (!d)
      return false;
    // Block indices and shape symbols are never negative (the launcher checks shapes), loop
    // variables count up from a start registered in nonNegativeVars, lets are immutable.
    if (d->getKind() == Decl::DK_BlockIndex || isa<ShapeSymbolDecl>(d))
      return true;
    if (auto *l = dyn_cast<LetDecl>(d))
      return l->init && nonNeg(l->init);
    return nonNegativeVars.count(d) != 0;
  }
  case Expr::EK_Binary: {
    // Sums and products of non-negative values are taken as non-negative: index arithmetic
    // that overflows i32 is excluded by the launcher's size checks.
    auto *b = cast<BinaryExpr>(e);
    switch (b->op) {
    case BinaryOp::Add: case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::BitOr:
    case BinaryOp::BitXor:
      return nonNeg(b->lhs) && nonNeg(b->rhs);
    case BinaryOp::Rem: // floormod has the divisor's sign
      return nonNeg(b->rhs);
    case BinaryOp::Shr:
      return nonNeg(b->lhs);
    case BinaryOp::BitAnd:
      return nonNeg(b->lhs) || nonNeg(b->rhs);
    default:
      return false;
    }
  }
  case Expr::EK_Call: {
    auto *c = cast<CallExpr>(e);
    auto args = c->positional();
    switch (c->builtin) {
    case Builtin::Max: return nonNeg(args[0]) || nonNeg(args[1]);
    case Builtin::Min: case Builtin::CeilDiv: return nonNeg(args[0]) && nonNeg(args[1]);
    case Builtin::Select: return nonNeg(args[1]) && nonNeg(args[2]);
    case Builtin::WarpgroupId: return true;
    default: return false;
    }
  }
  default:
    return false;
  }
}

std::string KernelLowering::dimExpr(const ftg::Buffer &b, size_t d) {
  if (d < b.shape.size() && b.shape[d])
    return std::to_string(*b.shape[d]);
  // A packed tensor's innermost dimension counts bytes (ftg::Buffer::packed).
  if (b.packed && d + 1 == b.shape.size())
    return "(" + expr(b.decl->shape.dims[d]) + " / 2)";
  return expr(b.decl->shape.dims[d]);
}

std::string KernelLowering::globalOffset(const ftg::Buffer &b, const std::vector<std::string> &idx) const {
  std::string s;
  for (size_t d = 0; d < idx.size(); ++d) {
    std::string term = d + 1 == idx.size() ? "(int64_t)(" + idx[d] + ")"
                                           : "(int64_t)(" + idx[d] + ") * " + strideName(b.name, d);
    s += (s.empty() ? "" : " + ") + term;
  }
  return s.empty() ? "0" : s;
}

std::string KernelLowering::sharedElement(const ftg::Buffer &b, const std::string &row, const std::string &col) {
  auto staged = stageOf.find(&b);
  std::string off = b.shared->offsetExpr(row, col);
  if (staged != stageOf.end())
    off = staged->second.index + " * " + std::to_string(b.numElements()) + " + " + off;
  return bufferName(b) + "[" + off + "]";
}

std::string KernelLowering::elementRef(const IndexExpr *ix) {
  ftg::Buffer *b = g.bufferOf(ix->base->decl);
  std::vector<std::string> idx;
  for (const IndexItem &i : ix->indices)
    idx.push_back(expr(i.lo));
  if (!b) {
    unsupported(ix->getRange(), "indexing this value");
    return "0";
  }
  // A packed element (Sema allows reads only, of tensors and shared buffers).
  if (b->packed && (b->scope == Scope::Global || b->scope == Scope::Shared) && !idx.empty())
    return packedElementAt(*this, *b, idx);
  switch (b->scope) {
  case Scope::Global:
    return bufferName(*b) + "[" + globalOffset(*b, idx) + "]";
  case Scope::Shared: {
    // A read the parallel loop made as a vector (Parallel.cpp): the element of its array.
    if (auto v = vectorReads.find(ix); v != vectorReads.end())
      return v->second;
    // Leading dimensions fold into rows, as in the buffer's layout.
    std::string row = "0";
    for (size_t d = 0; d + 1 < idx.size(); ++d)
      row = d == 0 ? idx[0] : "(" + row + ") * " + dimExpr(*b, d) + " + " + idx[d];
    return sharedElement(*b, row, idx.back());
  }
  case Scope::Local: {
    std::string flat = "0";
    for (size_t d = 0; d < idx.size(); ++d)
      flat = d == 0 ? idx[0] : "(" + flat + ") * " + dimExpr(*b, d) + " + " + idx[d];
    return bufferName(*b) + "[" + flat + "]";
  }
  case Scope::Fragment:
    break;
  }
  if (!parallelNode || !parallelNode->driver) {
    unsupported(ix->getRange(), "reading or writing an element of fragment '" + b->name +
                                    "' outside a parallel loop");
    return "0";
  }
  const ftg::Buffer *driver = parallelNode->driver;
  if (b == driver || (b->fragment && *b->fragment == *driver->fragment))
    return bufferName(*b) + "[" + parallelReg + "]";
  // A row vector indexed by the loop's first variable in a 2-d loop.
  return bufferName(*b) + "[" + driver->fragment->rowRegister(parallelReg) + "]";
}


// ------------------------------------------------------------------ statements

std::vector<Access> KernelLowering::readsOf(const std::function<void()> &f) {
  std::vector<Access> reads;
  readLogs.push_back(&reads);
  f();
  readLogs.pop_back();
  return reads;
}

void KernelLowering::scalarStmt(const tlc::Stmt *s) {
  atLine(s->getRange().Start, [&] { scalarStmtHere(s); });
}

void KernelLowering::scalarStmtHere(const tlc::Stmt *s) {
  switch (s->getKind()) {
  case tlc::Stmt::SK_Let: {
    auto *l = cast<LetStmt>(s)->decl;
    Type t = materialize(l->type);
    std::string value;
    auto reads = readsOf([&] { value = t.isScalar() ? exprAs(l->init, t.dtype()) : expr(l->init); });
    // nvcc's front end (cudafe++) expands a const local's initializer through the const
    // locals it names, again at each use: a chain of lets that doubles at each step
    // (`let d2 = d1 + d1`) took it 2^40 steps at 40 lets. Past a few thousand nodes, the
    // let is a plain local, which it does not expand.
    bool expands = letExpansion(l->init) <= kMaxConstLetExpansion;
    accessing(add(makeLet((expands ? "const " : "") + cppType(t), cppName(l->getName()), value)), reads, {});
    return;
  }
  case tlc::Stmt::SK_Assign: {
    auto *a = cast<AssignStmt>(s);
    auto *ix = dyn_cast<IndexExpr>(a->target);
    if (!ix)
      return unsupported(a->getRange(), "this assignment");
    DType elem = cast<BufferLikeDecl>(ix->base->decl)->elemType;
    std::string target, value;
    // The target's indices are reads; a compound assignment reads the target too.
    std::vector<Access> reads = readsOf([&] { target = elementRef(ix); });
    std::vector<Access> writes;
    if (const ftg::Buffer *b = g.bufferOf(ix->base->decl)) {
      writes.push_back(access(b));
      if (a->op != AssignOp::Assign)
        reads.push_back(access(b));
    }
    if (a->op == AssignOp::Assign) {
      for (const Access &r : readsOf([&] { value = exprAs(a->value, elem); }))
        reads.push_back(r);
      accessing(add(makeStore(target, value)), reads, writes);
    } else {
      // Compound assignment computes in the wider of the two types, then stores.
      Type wide = Type::scalar(computeType(materialize(promote(Type::scalar(elem), a->value->type)).dtype()));
      BinaryOp op = a->op == AssignOp::Add ? BinaryOp::Add : a->op == AssignOp::Sub ? BinaryOp::Sub
                  : a->op == AssignOp::Mul ? BinaryOp::Mul : BinaryOp::Div;
      // The stored element's sign is unknown, so an integer `/=` always floors.
      for (const Access &r : readsOf([&] { value = exprAs(a->value, wide.dtype()); }))
        reads.push_back(r);
      accessing(add(makeStore(target, "tl::convert<" + cppType(elem) + ">" +
                                          arithmetic(op, wide.dtype(), "tl::convert<" + cppType(wide.dtype()) + ">(" + target + ")",
                                                     value, /*nonNegative=*/false))),
                reads, writes);
    }
    return;
  }
  case tlc::Stmt::SK_If: {
    // Inside a parallel loop: each thread decides for its own elements.
    auto *i = cast<IfStmt>(s);
    auto branchOn = [&](const Expr *cond) {
      std::string c;
      auto reads = readsOf([&] { c = expr(cond); });
      StmtPtr b = makeIf(c, IfStyle::Braced, /*uniform=*/false);
      b->reads = std::move(reads);
      return b;
    };
    Stmt *branch = &add(branchOn(i->cond));
    while (true) {
      within(branch->body, [&] { scalarStmt(i->thenBody); });
      if (!i->elseBody)
        break;
      if (auto *next = dyn_cast<IfStmt>(i->elseBody)) {
        branch->elseIf = true;
        atLine(next->getRange().Start, [&] { within(branch->elseBody, [&] { add(branchOn(next->cond)); }); });
        branch = branch->elseBody.back().get();
        i = next;
        continue;
      }
      within(branch->elseBody, [&] { scalarStmt(i->elseBody); });
      break;
    }
    return;
  }
  case tlc::Stmt::SK_Block:
    for (const tlc::Stmt *c : cast<BlockStmt>(s)->body)
      scalarStmt(c);
    return;
  case tlc::Stmt::SK_Call: {
    const CallExpr *c = cast<CallStmt>(s)->call;
    if (c->builtin == Builtin::AtomicAdd) {
      auto pos = c->positional();
      const Expr *dst = c->keywordArg("dst") ? c->keywordArg("dst")->value : pos[0];
      const Expr *val = c->keywordArg("src") ? c->keywordArg("src")->value : pos[1];
      auto *ix = dyn_cast<IndexExpr>(dst);
      if (!ix)
        return unsupported(c->getRange(), "atomic_add of a whole region inside a parallel loop");
      DType elem = cast<BufferLikeDecl>(ix->base->decl)->elemType;
      if (!checkAtomicType(c->getRange(), elem))
        return;
      auto atomic = std::make_unique<Stmt>(StmtKind::AtomicAdd);
      atomic->reads = readsOf([&] {
        atomic->target = elementRef(ix);
        atomic->value = exprAs(val, elem);
      });
      if (const ftg::Buffer *b = g.bufferOf(ix->base->decl))
        atomic->writes = {access(b)};
      // Every thread that holds an iteration's element runs the iteration; a replicated
      // driver (a row fragment, held by all the threads of its row) must add only once.
      const ftg::Buffer *driver = parallelNode ? parallelNode->driver : nullptr;
      guarded(driver ? driver->fragment->replicaGuard(kThreadIndex, parallelReg) : "", std::move(atomic));
      return;
    }
    std::string call;
    auto reads = readsOf([&] { call = expr(c); });
    accessing(add(makeEval(call)), reads, {});
    return;
  }
  default:
    unsupported(s->getRange(), "this statement inside a parallel loop");
  }
}

} // namespace tlc::lower
