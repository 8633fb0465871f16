#include "codegen/KernelEmitter.h"

#include "infer/ParallelAccess.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/Format.h"

#include <cmath>

namespace tlc::codegen {

using namespace ftg;
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
  case DType::I4: case DType::U4: return "uint8_t";
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

bool isShared(const Buffer *b) { return b && b->scope == Scope::Shared; }

// The type scalar arithmetic on `t` is computed in: FP8 types have no operators in CUDA, so
// their arithmetic, comparisons and max/min/abs run in f32 and round back on the way out.
DType computeType(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2 ? DType::F32 : t; }
bool isFp8(const Type &t) { return t.isScalar() && computeType(t.dtype()) != t.dtype(); }

} // namespace

void KernelEmitter::unsupported(llvm::SMRange r, const std::string &what) {
  diags.error(r, "not supported yet: " + what);
  ok = false;
}

bool KernelEmitter::checkAtomicType(llvm::SMRange r, DType t) {
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

std::string KernelEmitter::exprAs(const Expr *e, DType t) {
  Type want = Type::scalar(t);
  if (e->constant && (e->type.isNumeric() || e->type.isBool()))
    return constantAs(*e->constant, want);
  if (e->type == want)
    return expr(e);
  return "tl::convert<" + cppType(t) + ">(" + expr(e) + ")";
}

std::string KernelEmitter::expr(const Expr *e) {
  if (e->constant && (e->type.isNumeric() || e->type.isBool()))
    return constantAs(*e->constant, e->type);
  switch (e->getKind()) {
  case Expr::EK_Name: {
    auto *n = cast<NameExpr>(e);
    if (n->decl && (isa<CompileParamDecl>(n->decl) || isa<ConstDecl>(n->decl)) && !n->decl->constant)
      unsupported(n->getRange(), "'" + n->name + "' has no value yet: `auto` parameters are filled "
                                 "by the recommender; pass -D " + n->name + "=VALUE for now");
    return cppName(n->name);
  }
  case Expr::EK_Index:
    return elementRef(cast<IndexExpr>(e));
  case Expr::EK_Unary: {
    auto *u = cast<UnaryExpr>(e);
    if (isFp8(u->type))
      return "tl::convert<" + cppType(u->type.dtype()) + ">(" + spelling(u->op).str() +
             "tl::convert<float>(" + exprAs(u->operand, u->type.dtype()) + "))";
    return "(" + spelling(u->op).str() + expr(u->operand) + ")";
  }
  case Expr::EK_Binary: {
    auto *b = cast<BinaryExpr>(e);
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
    case Builtin::Select:
      return "(" + expr(args[0]) + " ? " + arg(1) + " : " + arg(2) + ")";
    case Builtin::Max: return computed("tl::max", 2);
    case Builtin::Min: return computed("tl::min", 2);
    case Builtin::Abs: return computed("tl::abs", 1);
    case Builtin::CeilDiv: return "tl::ceildiv(" + arg(0) + ", " + arg(1) + ")";
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

std::string KernelEmitter::arithmetic(BinaryOp op, DType t, const std::string &a,
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

bool KernelEmitter::provablyNonNegative(const Expr *e) {
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

bool KernelEmitter::computeNonNegative(const Expr *e) {
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
    default: return false;
    }
  }
  default:
    return false;
  }
}

std::string KernelEmitter::dimExpr(const Buffer &b, size_t d) {
  if (d < b.shape.size() && b.shape[d])
    return std::to_string(*b.shape[d]);
  return expr(b.decl->shape.dims[d]);
}

std::string KernelEmitter::globalOffset(const Buffer &b, const std::vector<std::string> &idx) const {
  std::string s;
  for (size_t d = 0; d < idx.size(); ++d) {
    std::string term = d + 1 == idx.size() ? "(int64_t)(" + idx[d] + ")"
                                           : "(int64_t)(" + idx[d] + ") * " + strideName(b.name, d);
    s += (s.empty() ? "" : " + ") + term;
  }
  return s.empty() ? "0" : s;
}

std::string KernelEmitter::sharedElement(const Buffer &b, const std::string &row, const std::string &col) {
  std::string stage = stageExpr.lookup(&b);
  std::string off = b.shared->offsetExpr(row, col);
  if (!stage.empty())
    off = stage + " * " + std::to_string(b.numElements()) + " + " + off;
  return cppName(b.name) + "[" + off + "]";
}

std::string KernelEmitter::elementRef(const IndexExpr *ix) {
  Buffer *b = g.bufferOf(ix->base->decl);
  std::vector<std::string> idx;
  for (const IndexItem &i : ix->indices)
    idx.push_back(expr(i.lo));
  if (!b) {
    unsupported(ix->getRange(), "indexing this value");
    return "0";
  }
  switch (b->scope) {
  case Scope::Global:
    return cppName(b->name) + "[" + globalOffset(*b, idx) + "]";
  case Scope::Shared: {
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
    return cppName(b->name) + "[" + flat + "]";
  }
  case Scope::Fragment:
    break;
  }
  if (!parallelNode || !parallelNode->driver) {
    unsupported(ix->getRange(), "reading or writing an element of fragment '" + b->name +
                                    "' outside a parallel loop");
    return "0";
  }
  const Buffer *driver = parallelNode->driver;
  if (b == driver || (b->fragment && *b->fragment == *driver->fragment))
    return cppName(b->name) + "[" + parallelReg + "]";
  // A row vector indexed by the loop's first variable in a 2-d loop.
  return cppName(b->name) + "[" + driver->fragment->rowRegister(parallelReg) + "]";
}

// ------------------------------------------------------------------ barriers

void KernelEmitter::sync(const std::string &why) {
  w.line("__syncthreads();  // " + why);
  pendingReads.clear();
  pendingWrites.clear();
}

// Buffers that share bytes (SharedMemoryPlanner) conflict as if they were one.
static bool overlaps(const Buffer *a, const Buffer *b) {
  if (a == b)
    return true;
  int64_t aEnd = a->sharedOffset + a->bytes() * a->stages, bEnd = b->sharedOffset + b->bytes() * b->stages;
  return a->sharedOffset < bEnd && b->sharedOffset < aEnd;
}

void KernelEmitter::beforeAccess(llvm::ArrayRef<Buffer *> reads, llvm::ArrayRef<Buffer *> writes) {
  auto pendingOverlap = [](const llvm::SmallPtrSetImpl<const Buffer *> &set, const Buffer *b) {
    for (const Buffer *p : set)
      if (overlaps(p, b))
        return p;
    return static_cast<const Buffer *>(nullptr);
  };
  std::string conflict;
  for (const Buffer *r : reads)
    if (isShared(r))
      if (const Buffer *p = pendingOverlap(pendingWrites, r))
        conflict = "'" + p->name + "' was written by other threads";
  for (const Buffer *o : writes)
    if (isShared(o))
      if (const Buffer *p = pendingOverlap(pendingReads, o) ? pendingOverlap(pendingReads, o)
                                                            : pendingOverlap(pendingWrites, o))
        conflict = "'" + p->name + "' is still being read or written by other threads";
  if (!conflict.empty())
    sync(conflict);
  for (const Buffer *r : reads)
    if (isShared(r))
      pendingReads.insert(r);
  for (const Buffer *o : writes)
    if (isShared(o))
      pendingWrites.insert(o);
}

// ------------------------------------------------------------------ statements

void KernelEmitter::emitScalarStmt(const Stmt *s) {
  switch (s->getKind()) {
  case Stmt::SK_Let: {
    auto *l = cast<LetStmt>(s)->decl;
    Type t = materialize(l->type);
    w.line("[[maybe_unused]] const " + cppType(t) + " " + cppName(l->getName()) + " = " +
           (t.isScalar() ? exprAs(l->init, t.dtype()) : expr(l->init)) + ";");
    return;
  }
  case Stmt::SK_Assign: {
    auto *a = cast<AssignStmt>(s);
    auto *ix = dyn_cast<IndexExpr>(a->target);
    if (!ix)
      return unsupported(a->getRange(), "this assignment");
    DType elem = cast<BufferLikeDecl>(ix->base->decl)->elemType;
    std::string target = elementRef(ix);
    if (a->op == AssignOp::Assign) {
      w.line(target + " = " + exprAs(a->value, elem) + ";");
    } else {
      // Compound assignment computes in the wider of the two types, then stores.
      Type wide = Type::scalar(computeType(materialize(promote(Type::scalar(elem), a->value->type)).dtype()));
      BinaryOp op = a->op == AssignOp::Add ? BinaryOp::Add : a->op == AssignOp::Sub ? BinaryOp::Sub
                  : a->op == AssignOp::Mul ? BinaryOp::Mul : BinaryOp::Div;
      // The stored element's sign is unknown, so an integer `/=` always floors.
      w.line(target + " = tl::convert<" + cppType(elem) + ">" +
             arithmetic(op, wide.dtype(), "tl::convert<" + cppType(wide.dtype()) + ">(" + target + ")",
                        exprAs(a->value, wide.dtype()), /*nonNegative=*/false) + ";");
    }
    return;
  }
  case Stmt::SK_If: {
    // Else-if chains at one indentation level, as for tile-level ifs.
    auto *i = cast<IfStmt>(s);
    w.open("if (" + expr(i->cond) + ")");
    while (true) {
      emitScalarStmt(i->thenBody);
      if (!i->elseBody)
        break;
      w.indent--;
      if (auto *next = dyn_cast<IfStmt>(i->elseBody)) {
        w.line("} else if (" + expr(next->cond) + ") {");
        w.indent++;
        i = next;
        continue;
      }
      w.line("} else {");
      w.indent++;
      emitScalarStmt(i->elseBody);
      break;
    }
    w.close();
    return;
  }
  case Stmt::SK_Block:
    for (const Stmt *c : cast<BlockStmt>(s)->body)
      emitScalarStmt(c);
    return;
  case Stmt::SK_Call: {
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
      w.line("tl::atomic_add(&" + elementRef(ix) + ", " + exprAs(val, elem) + ");");
      return;
    }
    w.line(expr(c) + ";");
    return;
  }
  default:
    unsupported(s->getRange(), "this statement inside a parallel loop");
  }
}

void KernelEmitter::emitParallel(const Node &n) {
  const ForStmt *f = n.loop;
  nonNegativeVars.insert(f->vars.begin(), f->vars.end()); // each in [0, extent)
  beforeAccess(n);
  std::string vars;
  for (size_t i = 0; i < f->vars.size(); ++i)
    vars += (i ? ", " : "") + f->vars[i]->getName().str() + " < " + toSource(f->extents[i]);
  if (n.driver) {
    const FragmentLayout &l = *n.driver->fragment;
    std::string r = fresh("r");
    w.line("// parallel(" + vars + "): each thread visits its " + std::to_string(l.registers()) +
           " registers of fragment '" + n.driver->name + "'");
    w.line("#pragma unroll");
    w.open("for (int " + r + " = 0; " + r + " < " + std::to_string(l.registers()) + "; ++" + r + ")");
    if (f->vars.size() == 2) {
      w.line("[[maybe_unused]] const int " + cppName(f->vars[0]->getName()) + " = " + l.rowOf(kThreadIndex, r) + ";");
      w.line("[[maybe_unused]] const int " + cppName(f->vars[1]->getName()) + " = " + l.colOf(kThreadIndex, r) + ";");
    } else {
      w.line("[[maybe_unused]] const int " + cppName(f->vars[0]->getName()) + " = " +
             (l.kind == FragmentLayout::Row ? l.rowOf(kThreadIndex, r) : l.colOf(kThreadIndex, r)) + ";");
    }
    const Node *saved = parallelNode;
    std::string savedReg = parallelReg;
    parallelNode = &n;
    parallelReg = r;
    emitScalarStmt(f->body);
    parallelNode = saved;
    parallelReg = savedReg;
    w.close();
    return;
  }
  // No fragment: threads stride over the flattened iteration space.
  std::string total;
  for (const Expr *e : f->extents)
    total += (total.empty() ? "" : " * ") + std::string("(") + expr(e) + ")";
  std::string idx = fresh("e");
  w.line("// parallel(" + vars + "): threads stride over the flattened index");
  w.open("for (int " + idx + " = " + kThreadIndex + "; " + idx + " < " + total + "; " + idx + " += " +
         std::to_string(g.threads) + ")");
  std::string rest = idx;
  for (size_t i = f->vars.size(); i-- > 0;) {
    std::string extent = "(" + expr(f->extents[i]) + ")";
    w.line("[[maybe_unused]] const int " + cppName(f->vars[i]->getName()) + " = " +
           (i == 0 ? rest : rest + " % " + extent) + ";");
    if (i)
      rest = "(" + rest + " / " + extent + ")";
  }
  emitScalarStmt(f->body);
  w.close();
}

void KernelEmitter::emitLoop(const Node &n) {
  const ForStmt *f = n.loop;
  std::string var = cppName(f->vars[0]->getName());
  std::string lo = f->start ? expr(f->start) : "0";
  if (!f->start || provablyNonNegative(f->start))
    nonNegativeVars.insert(f->vars[0]);
  if (f->loopKind == LoopKind::Unroll)
    w.line("#pragma unroll");
  auto before = pendingWrites;
  auto beforeReads = pendingReads;
  w.open("for (int " + var + " = " + lo + "; " + var + " < " + expr(f->extents[0]) + "; ++" + var + ")");
  emitNodes(n.body);
  // The next iteration may overwrite what this one still reads (or read what it wrote).
  if (!pendingWrites.empty() || !pendingReads.empty())
    sync("loop back-edge: shared buffers are reused by the next iteration");
  w.close();
  pendingWrites.insert(before.begin(), before.end());
  pendingReads.insert(beforeReads.begin(), beforeReads.end());
}

void KernelEmitter::emitPipelined(const Node &n) {
  const ForStmt *f = n.loop;
  llvm::StringRef userVar = f->vars[0]->getName();
  std::string var = cppName(userVar);
  std::vector<const Node *> producers;
  for (auto &c : n.body)
    if (c->producer)
      producers.push_back(c.get());
  int S = n.stages;
  if (producers.empty() || S < 2)
    return emitLoop(n);

  nonNegativeVars.insert(f->vars[0]); // counts up from 0
  const std::string count = generatedName(userVar + "_count"), stage = generatedName("stage"),
                    next = generatedName("next");
  w.line("// pipelined loop over " + userVar.str() + ": " + std::to_string(producers.size()) +
         " copies prefetched " + std::to_string(S - 1) + " iteration(s) ahead into " +
         std::to_string(S) + " rotating shared buffers");
  w.open("");
  w.line("const int " + count + " = " + expr(f->extents[0]) + ";");
  // Producers write buffers other threads may still be reading from earlier code.
  std::vector<Buffer *> written;
  for (const Node *p : producers)
    written.push_back(p->outputs[0].buffer);
  beforeAccess({}, written);
  TileOpLowering lower(*this);
  auto issue = [&](const std::string &iter, const std::string &stage) {
    w.line("[[maybe_unused]] const int " + var + " = " + iter + ";");  // copies may not use it
    for (const LetStmt *let : n.prefetchLets)
      emitScalarStmt(let);
    for (const Node *p : producers) {
      stageExpr[p->outputs[0].buffer] = stage;
      lower.copy(*p, "prefetch");
    }
  };
  w.line("#pragma unroll");
  w.open("for (int " + stage + " = 0; " + stage + " < " + std::to_string(S - 1) + "; ++" + stage + ")");
  w.open("if (" + stage + " < " + count + ")");
  issue(stage, stage);
  w.close();
  w.line("tl::cp_async_commit();");
  w.close();

  w.open("for (int " + var + " = 0; " + var + " < " + count + "; ++" + var + ")");
  w.line("tl::cp_async_wait<" + std::to_string(S - 2) + ">();");
  sync("stage " + userVar.str() + " % " + std::to_string(S) + " has landed; stage (" + userVar.str() + " - 1) % " +
       std::to_string(S) + " is free again");
  w.open("");
  w.line("const int " + next + " = " + var + " + " + std::to_string(S - 1) + ";");
  w.open("if (" + next + " < " + count + ")");
  issue(next, "(" + next + " % " + std::to_string(S) + ")");
  w.close();
  w.line("tl::cp_async_commit();");
  w.close();
  for (const Node *p : producers)
    stageExpr[p->outputs[0].buffer] = "(" + var + " % " + std::to_string(S) + ")";
  for (auto &c : n.body)
    if (!c->producer)
      emitNode(*c);
  w.close();
  w.line("tl::cp_async_wait<0>();");
  for (const Node *p : producers)
    stageExpr.erase(p->outputs[0].buffer);
  w.close();
  // What the last iteration read stays pending: a buffer placed in the same bytes after
  // the loop must wait for every thread to finish with it.
}

void KernelEmitter::emitNode(const Node &n) {
  TileOpLowering lower(*this);
  auto comment = [&](const char *what) {
    auto lc = diags.sourceManager().getLineAndColumn(n.stmt->getRange().Start);
    w.line(std::string("// ") + what + " (" + sourceName + ":" + std::to_string(lc.first) + ")");
  };
  switch (n.kind) {
  case NodeKind::Copy:
    comment(("copy: " + toSource(n.call->args[0].value) + " -> " + toSource(n.call->args[1].value)).c_str());
    return lower.copy(n);
  case NodeKind::Fill:
    comment((n.call->callee + "(" + n.outputs[0].buffer->name + ")").c_str());
    return lower.fill(n);
  case NodeKind::Reduce:
    comment((n.call->callee + ": " + n.inputs[0].buffer->name + " -> " + n.outputs[0].buffer->name).c_str());
    return lower.reduce(n);
  case NodeKind::Gemm:
    comment(("gemm: " + n.outputs[0].buffer->name + " += " + n.inputs[0].buffer->name + " @ " +
             n.inputs[1].buffer->name).c_str());
    return lower.gemm(n);
  case NodeKind::AtomicAdd:
    comment("atomic_add");
    return lower.atomicAdd(n);
  case NodeKind::Parallel:
    return emitParallel(n);
  case NodeKind::Let:
  case NodeKind::Scalar:
    beforeAccess(n);
    return emitScalarStmt(n.stmt);
  case NodeKind::Loop:
    comment((loopKindName(n.loop->loopKind).str() + " loop").c_str());
    return n.loop->loopKind == LoopKind::Pipelined ? emitPipelined(n) : emitLoop(n);
  case NodeKind::If: {
    // An else-if chain stays at one indentation level: nesting each branch one level deeper
    // made the output quadratic in the chain's length (1.2 GB for 20k branches).
    const Node *branch = &n;
    w.open("if (" + expr(cast<IfStmt>(branch->stmt)->cond) + ")");
    while (true) {
      emitNodes(branch->body);
      if (branch->elseBody.empty())
        break;
      const Node &next = *branch->elseBody.front();
      w.indent--;
      if (branch->elseBody.size() == 1 && next.kind == NodeKind::If) {
        w.line("} else if (" + expr(cast<IfStmt>(next.stmt)->cond) + ") {");
        w.indent++;
        branch = &next;
        continue;
      }
      w.line("} else {");
      w.indent++;
      emitNodes(branch->elseBody);
      break;
    }
    w.close();
    return;
  }
  case NodeKind::SwizzleBlocks:
    comment("swizzle_blocks: L2-friendly block order");
    w.line("tl::swizzle_blocks(" + std::to_string(g.swizzlePanel) + ", " +
           cppName(k.blockIndices[0]->getName()) + ", " + cppName(k.blockIndices[1]->getName()) + ");");
    return;
  case NodeKind::Extern:
    w.line(expr(n.call) + ";");
    return;
  default:
    unsupported(n.stmt->getRange(), nodeKindName(n.kind).str() + " in code generation");
  }
}

void KernelEmitter::emitNodes(const std::vector<std::unique_ptr<Node>> &nodes) {
  for (auto &n : nodes)
    emitNode(*n);
}

// ------------------------------------------------------------------ kernel

std::vector<KernelEmitter::Param> KernelEmitter::deviceParams() const {
  std::vector<Param> params;
  for (const TensorParamDecl *p : k.params) {
    std::string name = cppName(p->getName());
    if (p->isScalar()) {
      params.push_back({cppType(p->elemType), name, name});
      continue;
    }
    std::string T = std::string(p->isOut ? "" : "const ") + cppType(p->elemType);
    params.push_back({T + "* __restrict__", name, "static_cast<" + T + "*>(" + name + ".data)"});
    for (size_t d = 0; d + 1 < p->shape.rank(); ++d)
      params.push_back({"int64_t", strideName(p->getName(), d), name + ".strides[" + std::to_string(d) + "]"});
  }
  for (const ShapeSymbolDecl *s : k.shapeSymbols)
    if (!s->constant) {
      std::string name = cppName(s->getName());
      params.push_back({"int", name, "static_cast<int>(" + name + ")"});
    }
  return params;
}

bool KernelEmitter::emitKernel() {
  for (auto &b : g.buffers)
    if (b->scope != Scope::Fragment && (b->dtype == DType::I4 || b->dtype == DType::U4))
      unsupported(b->decl->getRange(), "packed i4/u4 buffers in code generation (store them as "
                                       "u8 and unpack with shifts)");

  std::string params;
  for (const Param &p : deviceParams())
    params += (params.empty() ? "" : ", ") + p.type + " " + p.name;
  w.line("// kernel '" + g.symbolName() + "': " + std::to_string(g.threads) + " threads per block, " +
         std::to_string(g.sharedBytes) + " bytes of shared memory");
  w.line("template <bool kAligned>");
  w.line("__global__ void __launch_bounds__(" + std::to_string(g.threads) + ") " + kernelName() + "(" +
         params + ") {");
  w.indent++;
  if (g.sharedBytes > 0)
    w.line("extern __shared__ __align__(128) unsigned char tl_smem[];");
  w.line("const int " + kThreadIndex + " = threadIdx.x;");
  const char *axes = "xyz";
  for (size_t i = 0; i < k.blockIndices.size(); ++i)
    w.line("[[maybe_unused]] int " + cppName(k.blockIndices[i]->getName()) + " = blockIdx." + axes[i] + ";");
  for (const ShapeSymbolDecl *s : k.shapeSymbols)
    if (s->constant)
      w.line("constexpr int " + cppName(s->getName()) + " = " + s->constant->str() + ";  // bound by -D");
  for (auto &b : g.buffers) {
    std::string T = cppType(b->dtype);
    if (b->scope == Scope::Shared) {
      w.line(T + "* " + cppName(b->name) + " = reinterpret_cast<" + T + "*>(tl_smem + " +
             std::to_string(b->sharedOffset) + ");  // shared " + dtypeName(b->dtype).str() +
             " " + b->shared->str() + (b->stages > 1 ? ", " + std::to_string(b->stages) + " stages" : ""));
    } else if (b->scope == Scope::Fragment && b->fragment) {  // unused fragments have none
      w.line(T + " " + cppName(b->name) + "[" + std::to_string(b->fragment->registers()) + "];  // fragment " +
             b->fragment->str());
    } else if (b->scope == Scope::Local) {
      w.line(T + " " + cppName(b->name) + "[" + std::to_string(b->numElements()) + "];  // local");
    }
  }
  if (g.sharedBytes > g.scratchOffset)
    w.line("float* tl_reduce_scratch = reinterpret_cast<float*>(tl_smem + " +
           std::to_string(g.scratchOffset) + ");");
  w.line();
  emitNodes(g.body);
  w.indent--;
  w.line("}");
  return ok;
}

} // namespace tlc::codegen
