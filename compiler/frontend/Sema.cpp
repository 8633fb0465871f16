// Sema: declarations, scopes, kernels and statements. Expressions are in SemaExpr.cpp and
// tile operators in SemaTileOps.cpp.
#include "Sema.h"
#include "ConstantFolder.h"

#include "analysis/CheckedMath.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

namespace tlc {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

std::optional<Define> parseDefine(llvm::StringRef text) {
  auto [lhs, value] = text.split('=');
  if (lhs.empty() || value.empty() || lhs.size() == text.size())
    return std::nullopt;
  Define d;
  auto [kernel, name] = lhs.rsplit('.');
  if (name.empty()) {
    d.name = lhs.str();
  } else {
    d.kernel = kernel.str();
    d.name = name.str();
  }
  d.value = value.trim().str();
  auto isIdent = [](llvm::StringRef s) {
    return !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_') &&
           llvm::all_of(s, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  };
  if (!isIdent(d.name) || (!d.kernel.empty() && !isIdent(d.kernel)))
    return std::nullopt;
  return d;
}

std::optional<int64_t> parseIntegerOption(llvm::StringRef text) {
  llvm::StringRef digits = text.trim();
  bool negative = digits.consume_front("-");
  unsigned radix = digits.consume_front("0x") ? 16 : 10;
  uint64_t magnitude = 0;
  // getAsInteger would take a leading 0 as octal and accept 0b/0o prefixes and a second sign.
  if (digits.empty() || !llvm::all_of(digits, [&](char c) {
        return radix == 16 ? llvm::isHexDigit(c) : llvm::isDigit(c);
      }) ||
      digits.getAsInteger(radix, magnitude))
    return std::nullopt;
  if (magnitude > uint64_t(INT64_MAX) + (negative ? 1 : 0))
    return std::nullopt;
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

// ------------------------------------------------------------------ scopes

Decl *Sema::lookup(llvm::StringRef name) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return found->second;
  }
  return nullptr;
}

bool Sema::declare(Decl *d) {
  // No shadowing at all: in a 70-line kernel a reused name is nearly always a mistake.
  if (Decl *previous = lookup(d->getName())) {
    diags.error(d->getRange(), "redefinition of '" + d->getName() + "'")
        .note(previous->getRange(),
              "'" + previous->getName() + "' was declared here as a " + previous->kindName());
    return false;
  }
  scopes.back()[d->getName()] = d;
  return true;
}

std::vector<std::string> Sema::visibleNames() const {
  std::vector<std::string> names;
  for (const auto &scope : scopes)
    for (const auto &entry : scope)
      names.push_back(entry.first().str());
  return names;
}

// ------------------------------------------------------------------ -D overrides

Define *Sema::findDefine(llvm::StringRef name) {
  // As with a C compiler's -D, a later option overrides an earlier one; a kernel-qualified
  // option overrides a plain one whatever the order. Overridden options count as used.
  Define *match = nullptr;
  for (Define &d : defines) {
    if (d.name != name)
      continue;
    if (!d.kernel.empty() && (!kernel || d.kernel != kernel->name))
      continue;
    d.used = true;
    if (!match || !d.kernel.empty() || match->kernel.empty())
      match = &d;
  }
  return match;
}

std::optional<ConstValue> Sema::parseDefineValue(Define &d, Type expected, llvm::StringRef what) {
  llvm::StringRef v = d.value;
  auto bad = [&](llvm::StringRef wanted) -> std::optional<ConstValue> {
    ++numCommandLineErrors;
    diags.errorNoLocation("-D " + d.name + "=" + d.value + ": " + what + " expects " + wanted);
    return std::nullopt;
  };
  switch (expected.kind()) {
  case Type::IntLiteral:
    if (std::optional<int64_t> x = parseIntegerOption(v))
      return ConstValue{*x};
    return bad("an integer (decimal, or hexadecimal with 0x) in the 64-bit range");
  case Type::FloatLiteral: {
    double x;
    if (v.getAsDouble(x))
      return bad("a number");
    return ConstValue{x};
  }
  case Type::DTypeValue:
    if (auto dt = parseDType(v))
      return ConstValue{*dt};
    return bad("a dtype (f16, bf16, f32, ...)");
  case Type::PolicyValue:
    if (v == "full_row")
      return ConstValue{WarpPolicy::FullRow};
    if (v == "full_col")
      return ConstValue{WarpPolicy::FullCol};
    if (v == "square")
      return ConstValue{WarpPolicy::Square};
    return bad("a warp policy (full_row, full_col or square)");
  case Type::Scalar:
    if (expected.isBool()) {
      if (v == "true" || v == "1")
        return ConstValue{true};
      if (v == "false" || v == "0")
        return ConstValue{false};
      return bad("true or false");
    }
    if (isFloat(expected.dtype())) {
      double x;
      if (v.getAsDouble(x))
        return bad("a number");
      return ConstValue{x};
    }
    if (std::optional<int64_t> x = parseIntegerOption(v))
      return ConstValue{*x};
    return bad("an integer (decimal, or hexadecimal with 0x) in the 64-bit range");
  default:
    return bad("a value of a supported kind");
  }
}

// ------------------------------------------------------------------ non-constant values

const NameExpr *firstNonConstantName(const Expr *e) {
  if (!e || e->constant || e->type.isError())
    return nullptr;
  switch (e->getKind()) {
  case Expr::EK_Name:
    return cast<NameExpr>(e)->decl ? cast<NameExpr>(e) : nullptr;
  case Expr::EK_Index:
    return firstNonConstantName(cast<IndexExpr>(e)->base);
  case Expr::EK_Unary:
    return firstNonConstantName(cast<UnaryExpr>(e)->operand);
  case Expr::EK_Binary: {
    auto *b = cast<BinaryExpr>(e);
    if (const NameExpr *n = firstNonConstantName(b->lhs))
      return n;
    return firstNonConstantName(b->rhs);
  }
  case Expr::EK_Call:
    for (const CallArg &a : cast<CallExpr>(e)->args)
      if (const NameExpr *n = firstNonConstantName(a.value))
        return n;
    return nullptr;
  default:
    return nullptr;
  }
}

void Sema::explainNotConstant(DiagnosticEngine::Builder &diag, const Expr *e,
                              llvm::StringRef fallbackHint) {
  const NameExpr *n = firstNonConstantName(e);
  const Decl *d = n ? n->decl : nullptr;
  if (auto *p = dyn_cast_or_null<CompileParamDecl>(d); p && p->isAuto) {
    std::string candidates;
    for (const Expr *c : p->autoCandidates)
      candidates += (candidates.empty() ? "" : ", ") + toSource(c);
    // The driver binds the `auto` parameters the recommender can tune before Sema runs;
    // one still unbound here is used in a way it does not tune.
    diag.note(p->getRange(), "'" + p->getName() + "' is `auto`, but the recommender did not "
                                                  "choose a value for it (it tunes tile sizes, "
                                                  "thread counts, pipeline stages, warp "
                                                  "policies and block-order panels)")
        .hint("pass -D " + p->getName() + "=VALUE" +
              (candidates.empty() ? "" : " (candidates: " + candidates + ")"));
    return;
  }
  if (d && !isa<CompileParamDecl>(d) && !isa<ConstDecl>(d)) {
    diag.note(d->getRange(), "'" + d->getName() + "' is a " + d->kindName() +
                                 ", known only at run time");
    if (isa<ShapeSymbolDecl>(d)) {
      diag.hint("bind it at compile time with -D " + d->getName() + "=VALUE");
      return;
    }
  }
  if (!fallbackHint.empty())
    diag.hint(fallbackHint);
}

// ------------------------------------------------------------------ top level

bool Sema::run() {
  unsigned errorsBefore = diags.errorCount();
  pushScope(); // file scope: constants
  for (ConstDecl *c : ctx.program.consts) {
    if (diags.overErrorCap())
      break;
    checkConst(c);
  }
  llvm::StringMap<KernelDecl *> kernelNames;
  for (KernelDecl *k : ctx.program.kernels) {
    if (diags.overErrorCap())
      break;
    auto [it, inserted] = kernelNames.try_emplace(k->name, k);
    if (!inserted)
      diags.error(k->nameRange, "redefinition of kernel '" + k->name + "'")
          .note(it->second->nameRange, "the first definition is here");
    checkKernel(k);
  }
  popScope();
  return diags.errorCount() == errorsBefore;
}

void Sema::checkConst(ConstDecl *c) {
  Type t = checkExpr(c->init);
  if (Define *d = findDefine(c->getName()))
    if (auto v = parseDefineValue(*d, t, "constant '" + c->getName().str() + "'"))
      c->init->constant = v;
  c->type = t;
  c->constant = c->init->constant;
  if (!t.isError() && !c->constant)
    diags.error(c->init->getRange(), "the value of const '" + c->getName() +
                                         "' is not a compile-time constant");
  if (c->declaredType && !t.isError()) {
    llvm::StringRef want = *c->declaredType;
    bool okType = (want == "int" && t.isIntegral()) || (want == "float" && t.isNumeric()) ||
                  (want == "dtype" && t.kind() == Type::DTypeValue) ||
                  (parseDType(want) && (t.isNumeric() || t.isBool()));
    if (!okType)
      diags.error(c->init->getRange(), "const '" + c->getName() + "' is declared " + want +
                                           " but its value has type " + t.str());
    if (want == "float" && t.kind() == Type::IntLiteral) {
      c->type = Type::floatLiteral();
      if (c->constant)
        c->constant = ConstValue{static_cast<double>(c->constant->getInt())};
    }
  }
  declare(c);
}

void Sema::checkKernel(KernelDecl *k) {
  kernel = k;
  pushScope();
  pendingShapeSymbols = laterShapeSymbols(k);
  for (CompileParamDecl *p : k->compileParams)
    checkCompileParam(p);
  pendingShapeSymbols.clear();
  for (TensorParamDecl *p : k->params)
    checkTensorParam(p);

  // Launch configuration.
  if (k->grid.empty() || k->grid.size() > 3)
    diags.error(k->gridRange, "grid takes 1 to 3 dimensions, got " +
                                  std::to_string(k->grid.size()));
  for (Expr *g : k->grid)
    if (expectIntegral(g, checkExpr(g), "a grid dimension")) {
      if (const Expr *bad = firstNonUniform(g)) {
        auto diag = diags.error(bad->getRange(), "grid(...) is computed by the launcher on the host, "
                                                 "before any thread runs");
        diag.hint("build the grid from shape symbols, parameters and constants");
      } else {
        checkHostComputable(g, "grid(...)");
      }
    }
  Type tt = checkExpr(k->threads);
  if (expectIntegral(k->threads, tt, "the thread count")) {
    if (!k->threads->constant) {
      auto diag = diags.error(k->threads->getRange(), "threads(...) must be a compile-time constant");
      explainNotConstant(diag, k->threads,
                         "use a literal or a compile-time parameter such as `threads = 128`");
    } else {
      int64_t n = k->threads->constant->getInt();
      if (n <= 0 || n > 1024)
        diags.error(k->threads->getRange(), "threads(" + std::to_string(n) +
                                                ") is outside the range 1..1024 threads per block");
      else if (n % 32 != 0)
        diags.error(k->threads->getRange(), "threads(" + std::to_string(n) +
                                                ") is not a multiple of the warp size (32)")
            .hint("tile operators distribute work over whole warps");
      else
        k->numThreads = n;
    }
  }
  if (k->blockIndices.size() > k->grid.size() && !k->grid.empty())
    diags.error(k->blockIndices[k->grid.size()]->getRange(),
                "the grid has " + std::to_string(k->grid.size()) + " dimension" +
                    (k->grid.size() == 1 ? "" : "s") + " but " +
                    std::to_string(k->blockIndices.size()) + " block indices are bound");
  for (SimpleDecl *b : k->blockIndices) {
    b->type = Type::index();
    declare(b);
  }

  pushScope();
  checkBlock(k->body);
  popScope();
  popScope();
  kernel = nullptr;
}

void Sema::checkCompileParam(CompileParamDecl *p) {
  // The parameter's type: declared, or that of its default.
  std::optional<Type> declared;
  if (p->declaredType) {
    llvm::StringRef t = *p->declaredType;
    if (t == "int")
      declared = Type::intLiteral();
    else if (t == "float")
      declared = Type::floatLiteral();
    else if (t == "dtype")
      declared = Type::dtypeValue();
    else if (t == "bool")
      declared = Type::scalar(DType::Bool);
    else
      diags.error(p->declaredTypeRange,
                  "compile-time parameters are int, float, bool or dtype, not '" + t + "'")
          .hint("element types of tensors are given with a dtype parameter: `T: dtype = " + t +
                "`");
  }

  // `p = auto(full_row, square)`: an `auto` whose candidates are warp policies is a policy.
  bool autoPolicy = p->isAuto && !p->declaredType && !p->autoCandidates.empty() &&
                    llvm::all_of(p->autoCandidates, [](const Expr *c) { return llvm::isa<PolicyRefExpr>(c); });
  Type type = autoPolicy ? Type::policyValue() : declared.value_or(Type::intLiteral());
  std::optional<ConstValue> value;
  if (p->defaultValue) {
    checkingDefault = true;
    Type dt = namesLaterShapeSymbol(p->defaultValue) ? checkSizeDependentDefault(p)
                                                      : checkExpr(p->defaultValue);
    checkingDefault = false;
    if (!dt.isError()) {
      if (!p->defaultValue->constant) {
        diags.error(p->defaultValue->getRange(), "the default of '" + p->getName() +
                                                     "' is not a compile-time constant");
      } else if (!declared) {
        type = dt.isScalar() && !dt.isBool() ? (dt.isFloating() ? Type::floatLiteral()
                                                                : Type::intLiteral())
                                             : dt;
        value = p->defaultValue->constant;
      } else {
        bool compatible = (declared->kind() == dt.kind() && (!declared->isScalar() || *declared == dt)) ||
                          (declared->kind() == Type::FloatLiteral && dt.isNumeric());
        if (!compatible)
          diags.error(p->defaultValue->getRange(), "the default of '" + p->getName() +
                                                       "' has type " + dt.str() +
                                                       " but the parameter is " + declared->str());
        else
          value = declared->kind() == Type::FloatLiteral
                      ? castConstant(*p->defaultValue->constant, DType::F64)
                      : *p->defaultValue->constant;
      }
    }
  }
  if (p->isAuto) {
    if (declared && declared->kind() != Type::IntLiteral)
      diags.error(p->autoRange, "'" + p->getName() + "' is a " + declared->str() +
                                    " parameter, but `auto` is only for int parameters and warp "
                                    "policies")
          .hint("the recommender chooses tile sizes, stages, thread counts and warp policies "
                "(`policy = auto(full_row, full_col, square)`); give '" + p->getName() +
                "' a default or pass -D " + p->getName() + "=VALUE");
    for (Expr *c : p->autoCandidates) {
      checkExpr(c);
      if (autoPolicy)
        continue; // policy literals, checked by the all_of above
      if (llvm::isa<PolicyRefExpr>(c))
        diags.error(c->getRange(), "the candidates of '" + p->getName() +
                                       "' mix warp policies and other values")
            .hint("list only policies (`auto(full_row, square)`) or only ints");
      else
        expectConstInt(c, "an auto candidate");
    }
    p->source = CompileParamDecl::Source::Auto;
  }
  if (Define *d = findDefine(p->getName())) {
    value = parseDefineValue(*d, type, "compile-time parameter '" + p->getName().str() + "' of kernel '" +
                                           kernel->name + "'");
    p->source = CompileParamDecl::Source::CommandLine;
  }
  if (!value && !p->isAuto) {
    // A rejected default or -D value has been reported already; only a parameter that was
    // never given one is "missing". Either way the Error type keeps every use of it quiet.
    if (!p->defaultValue && p->source != CompileParamDecl::Source::CommandLine) {
      p->source = CompileParamDecl::Source::Missing;
      diags.error(p->getRange(), "compile-time parameter '" + p->getName() + "' has no value")
          .hint("give it a default (`" + p->getName() + " = ...`) or pass -D " + p->getName() +
                "=VALUE");
    }
    type = Type::error();
  }
  p->type = type;
  p->constant = value;
  declare(p);
}

std::optional<DType> Sema::resolveElemType(llvm::StringRef name, llvm::SMRange range) {
  if (auto dt = parseDType(name))
    return dt;
  Decl *d = lookup(name);
  if (!d) {
    auto diag = diags.error(range, "unknown element type '" + name + "'");
    std::string near = closestMatch(name, visibleNames());
    if (!near.empty())
      diag.hint("did you mean '" + near + "'?");
    else
      diag.hint("use a dtype (f16, bf16, f32, i8, ...) or a dtype parameter");
    return std::nullopt;
  }
  if (d->type.kind() != Type::DTypeValue) {
    if (!d->type.isError())
      diags.error(range, "'" + name + "' is a " + d->kindName() + " of type " + d->type.str() +
                             ", not a dtype")
          .note(d->getRange(), "'" + name + "' is declared here");
    return std::nullopt;
  }
  if (!d->constant)
    return std::nullopt; // missing value, reported at the parameter
  return d->constant->getDType();
}

void Sema::checkTensorParam(TensorParamDecl *p) {
  std::optional<DType> elem = resolveElemType(p->elemTypeName, p->elemTypeRange);
  p->elemType = elem.value_or(DType::F32);
  p->scope = Scope::Global;
  if (p->isScalar()) {
    if (p->isOut)
      diags.error(p->getRange(), "scalar parameter '" + p->getName() + "' cannot be `out`")
          .hint("results are written to tensors; declare it as `" + p->getName() +
                ": out " + p->elemTypeName + "[1]`");
    p->type = elem ? Type::scalar(*elem) : Type::error();
    if (Define *d = findDefine(p->getName()))
      p->constant = parseDefineValue(*d, p->type, "scalar parameter '" + p->getName().str() + "'");
    declare(p);
    return;
  }
  p->type = elem ? Type::buffer() : Type::error();
  for (Expr *&dim : p->shape.dims) {
    // A fresh bare name in a shape declares a shape symbol (dynamic unless bound by -D).
    if (auto *n = dyn_cast<NameExpr>(dim); n && !lookup(n->name)) {
      auto *sym = ctx.make<ShapeSymbolDecl>(n->name, n->getRange());
      sym->type = Type::index();
      if (Define *d = findDefine(n->name)) {
        sym->constant = parseDefineValue(*d, Type::intLiteral(), "shape symbol '" + n->name + "'");
        if (sym->constant && (sym->constant->getInt() <= 0 ||
                              sym->constant->getInt() > kMaxShapeExtent)) {
          ++numCommandLineErrors;
          diags.errorNoLocation("-D " + d->name + "=" + d->value +
                                ": shape symbols are i32 and must be in 1.." +
                                std::to_string(kMaxShapeExtent));
          sym->constant.reset();
        }
      }
      declare(sym);
      kernel->shapeSymbols.push_back(sym);
    }
    Type t = checkExpr(dim);
    if (!expectIntegral(dim, t, "a tensor dimension") || !checkHostComputable(dim, "a tensor dimension") ||
        !dim->constant)
      continue;
    int64_t extent = dim->constant->getInt();
    if (extent <= 0)
      diags.error(dim->getRange(), "tensor dimension must be positive, got " +
                                       std::to_string(extent));
    else if (extent > kMaxShapeExtent)
      diags.error(dim->getRange(), "tensor dimension " + std::to_string(extent) +
                                       " does not fit in i32 (at most " +
                                       std::to_string(kMaxShapeExtent) + ")")
          .hint("tensor shapes are i32; split the tensor or the kernel's work");
  }
  checkPackedDecl(p);
  declare(p);
}

// ------------------------------------------------------------------ statements

void Sema::checkBlock(BlockStmt *b) {
  for (Stmt *s : b->body) {
    if (diags.overErrorCap())
      return;
    checkStmt(s);
  }
}

void Sema::checkStmt(Stmt *s) {
  switch (s->getKind()) {
  case Stmt::SK_Alloc: return checkAlloc(cast<AllocStmt>(s));
  case Stmt::SK_Let: return checkLet(cast<LetStmt>(s));
  case Stmt::SK_For: return checkFor(cast<ForStmt>(s));
  case Stmt::SK_If: return checkIf(cast<IfStmt>(s));
  case Stmt::SK_Assign: return checkAssign(cast<AssignStmt>(s));
  case Stmt::SK_Call: return checkCallStmt(cast<CallStmt>(s));
  case Stmt::SK_Block:
    pushScope();
    checkBlock(cast<BlockStmt>(s));
    popScope();
    return;
  }
}

void Sema::checkAlloc(AllocStmt *s) {
  BufferDecl *b = s->buffer;
  if (!loops.empty() || conditionalDepth != 0)
    diags.error(b->getRange(), "buffers must be allocated at the top level of the kernel body")
        .hint("move the allocation of '" + b->getName() + "' " +
              (loops.empty() ? "out of the if statement" : "before the loop") +
              "; the compiler reuses its storage");
  std::optional<DType> elem = resolveElemType(b->elemTypeName, b->elemTypeRange);
  b->elemType = elem.value_or(DType::F32);
  b->type = elem ? Type::buffer() : Type::error();
  for (Expr *dim : b->shape.dims) {
    Type t = checkExpr(dim);
    if (!expectIntegral(dim, t, "a buffer dimension"))
      continue;
    if (!dim->constant) {
      auto diag = diags.error(dim->getRange(), "the shape of " + scopeName(b->scope) +
                                                   " buffer '" + b->getName() +
                                                   "' must be a compile-time constant");
      explainNotConstant(diag, dim,
                         "on-chip buffers are sized at compile time; use a compile-time "
                         "parameter (or -D) for this dimension");
      b->type = Type::error();
    } else if (dim->constant->getInt() <= 0) {
      diags.error(dim->getRange(), "buffer dimension must be positive, got " +
                                       std::to_string(dim->constant->getInt()))
          .hint(isa<IntLitExpr>(dim) ? "a buffer holds at least one element along each dimension"
                                     : "the extent is computed from compile-time values: choose them (-D "
                                       "NAME=VALUE) so that it is at least 1");
      b->type = Type::error();
    }
  }
  if (!b->type.isError() && !checkOnChipSize(b))
    b->type = Type::error();
  checkPackedDecl(b);
  declare(b);
}

bool Sema::checkOnChipSize(BufferDecl *b) {
  std::vector<int64_t> dims;
  for (const Expr *dim : b->shape.dims) {
    if (!dim->constant || !dim->constant->isInt())
      return true; // already reported
    dims.push_back(dim->constant->getInt());
  }
  unsigned bits = bitWidth(b->elemType);
  std::optional<int64_t> elements = checkedProduct(dims);
  int64_t bytes = -1; // -1: the bit count overflows
  if (std::optional<int64_t> exact = elements ? checkedBytes(*elements, bits) : std::nullopt)
    bytes = *exact;
  if (bytes >= 0 && bytes <= kMaxOnChipBytes)
    return true;
  std::string what = scopeName(b->scope).str() + " buffer '" + b->getName().str() + "' " +
                     b->shape.str();
  std::string size = "more than 2^63 elements";
  if (elements)
    size = std::to_string(*elements) + " elements of " + std::to_string(bits) + " bits = " +
           (bytes >= 0 ? std::to_string(bytes) + " bytes" : "more than 2^63 bits");
  diags.error(b->getRange(), what + " has " + size + "; on-chip buffers are limited to " +
                                 std::to_string(kMaxOnChipBytes) + " bytes")
      .hint("no GPU has this much shared memory or registers per block; use smaller tiles");
  return false;
}

void Sema::checkLet(LetStmt *s) {
  LetDecl *d = s->decl;
  Type t = checkExpr(d->init);
  if (t.kind() == Type::Buffer) {
    diags.error(d->init->getRange(), "a let binding holds a scalar, not a buffer")
        .hint("tile operators take buffers directly");
    t = Type::error();
  }
  if (d->declaredType && !t.isError()) {
    if (checkConvertible(t, *d->declaredType, d->init,
                         "let binding '" + d->getName().str() + "'"))
      t = Type::scalar(*d->declaredType);
    if (d->init->constant)
      d->constant = castConstant(*d->init->constant, *d->declaredType);
  } else {
    d->constant = d->init->constant;
    if (!t.isError() && !t.isScalar() && t.kind() != Type::IntLiteral &&
        t.kind() != Type::FloatLiteral) {
      diags.error(d->init->getRange(), "a let binding must hold a number or a bool, not a " +
                                           t.str());
      t = Type::error();
    }
    t = materialize(t);
  }
  d->type = t;
  unsigned variance = 0;
  for (unsigned mode = 0; mode < 4; ++mode)
    if (firstNonUniform(d->init, /*withinWarp=*/mode & 2, /*sharedUniform=*/mode & 1))
      variance |= 1u << mode;
  if (variance)
    letVariance[d] = variance;
  declare(d);
}

void Sema::checkFor(ForStmt *s) {
  for (ForStmt *outer : loops) {
    if (outer->loopKind != LoopKind::Parallel)
      continue;
    diags.error(s->kindRange, s->loopKind == LoopKind::Parallel
                                  ? "parallel loops cannot be nested"
                                  : "a " + loopKindName(s->loopKind).str() +
                                        " loop cannot appear inside a parallel loop")
        .note(outer->kindRange, "inside this parallel loop")
        .hint(s->loopKind == LoopKind::Parallel
                  ? "list every dimension in one loop: `for i, j in parallel(M, N)`"
                  : "a parallel loop body is per-element scalar code");
    break;
  }

  std::vector<Expr *> positional;
  for (CallArg &a : s->args) {
    if (a.keyword.empty()) {
      positional.push_back(a.value);
      continue;
    }
    bool known = s->loopKind == LoopKind::Pipelined && a.keyword == "stages";
    if (!known) {
      auto diag = diags.error(a.keywordRange, "unknown option '" + a.keyword + "' for a " +
                                                  loopKindName(s->loopKind) + " loop");
      if (s->loopKind == LoopKind::Pipelined)
        diag.hint("pipelined loops take `stages = N`");
      checkExpr(a.value);
      continue;
    }
    checkExpr(a.value);
    s->stages = expectConstInt(a.value, "the number of pipeline stages");
    if (s->stages && (*s->stages < 1 || *s->stages > 8)) {
      diags.error(a.value->getRange(), "pipeline stages must be between 1 and 8, got " +
                                           std::to_string(*s->stages));
      s->stages.reset();
    }
  }
  for (Expr *e : positional)
    expectIntegral(e, checkExpr(e), "a loop bound");

  size_t nvars = s->vars.size();
  if (s->loopKind == LoopKind::Parallel) {
    if (positional.size() != nvars)
      diags.error(s->kindRange, "parallel loop binds " + std::to_string(nvars) + " variable" +
                                    (nvars == 1 ? "" : "s") + " but has " +
                                    std::to_string(positional.size()) + " extent" +
                                    (positional.size() == 1 ? "" : "s"))
          .hint("give one extent per variable: `for i, j in parallel(M, N)`");
    s->extents = positional;
  } else {
    if (nvars != 1)
      diags.error(s->vars[1]->getRange(), "a " + loopKindName(s->loopKind) +
                                              " loop binds exactly one variable");
    bool range2 = s->loopKind == LoopKind::Serial && positional.size() == 2;
    if (positional.empty() || (positional.size() > 1 && !range2))
      diags.error(s->kindRange, loopKindName(s->loopKind) +
                                    (s->loopKind == LoopKind::Serial
                                         ? " takes a trip count or a range: serial(n) or serial(lo, hi)"
                                         : " takes one trip count: " +
                                               loopKindName(s->loopKind).str() + "(n)"));
    else if (range2) {
      s->start = positional[0];
      s->extents = {positional[1]};
    } else {
      s->extents = {positional[0]};
    }
    if ((s->loopKind == LoopKind::Unroll || s->loopKind == LoopKind::Vectorized) &&
        s->extents.size() == 1 && !s->extents[0]->type.isError() && !s->extents[0]->constant) {
      auto diag = diags.error(s->extents[0]->getRange(), "the extent of a " +
                                                             loopKindName(s->loopKind) +
                                                             " loop must be a compile-time constant");
      explainNotConstant(diag, s->extents[0]);
    }
    if (s->loopKind == LoopKind::Pipelined && !s->stages &&
        !llvm::any_of(s->args, [](const CallArg &a) { return a.keyword == "stages"; }))
      s->stages = 2; // paper default: double buffering
  }
  for (Expr *e : s->extents)
    if (e->constant && e->constant->isInt() && e->constant->getInt() <= 0 &&
        s->loopKind == LoopKind::Parallel)
      diags.error(e->getRange(), "parallel loop extent must be positive, got " +
                                     std::to_string(e->constant->getInt()));
  checkLoopBoundsFitIndex(s);

  checkNestedPipeline(s);
  pushScope();
  for (SimpleDecl *v : s->vars) {
    v->type = Type::index();
    declare(v);
    if (s->loopKind == LoopKind::Parallel)
      parallelVars.insert(v);
  }
  loops.push_back(s);
  checkBlock(s->body);
  loops.pop_back();
  popScope();
}

void Sema::checkLoopBoundsFitIndex(ForStmt *s) {
  auto outOfRange = [&](const Expr *e, llvm::StringRef what, llvm::StringRef value) {
    diags.error(e->getRange(), what + " " + value + " does not fit in i32 (at most " +
                                   std::to_string(kMaxShapeExtent) + ")")
        .hint("loop variables and the flattened index of a parallel loop are i32");
  };
  std::vector<int64_t> extents;
  for (const Expr *e : s->extents) {
    if (!e->constant || !e->constant->isInt())
      continue;
    int64_t v = e->constant->getInt();
    if (v > kMaxShapeExtent || v < -kMaxShapeExtent)
      return outOfRange(e, "loop extent", std::to_string(v));
    extents.push_back(std::max<int64_t>(v, 1));
  }
  if (s->start && s->start->constant && s->start->constant->isInt()) {
    int64_t v = s->start->constant->getInt();
    if (v > kMaxShapeExtent || v < -kMaxShapeExtent)
      return outOfRange(s->start, "loop start", std::to_string(v));
  }
  // Threads stride over the product of a parallel loop's extents in one i32.
  if (s->loopKind != LoopKind::Parallel || extents.size() < 2)
    return;
  std::optional<int64_t> product = checkedProduct(extents);
  if (!product || *product > kMaxShapeExtent) {
    std::string text = product ? std::to_string(*product) : std::string("above 2^63");
    outOfRange(s->extents.front(), "the parallel loop's element count", text);
  }
}

void Sema::checkIf(IfStmt *s) {
  if (auto *c = dyn_cast<CallExpr>(s->cond); c && c->builtin == Builtin::LastBlock)
    checkLastBlock(s, c);
  else
    expectBool(s->cond, checkExpr(s->cond), "an if condition");
  s->blockUniform = !firstNonUniform(s->cond);
  ++conditionalDepth;
  conditions.push_back(s);
  std::optional<bool> known;
  if (s->cond->constant && s->cond->constant->isBool())
    known = s->cond->constant->getBool();
  pushScope();
  deadBranchDepth += known == false;
  checkBlock(s->thenBody);
  deadBranchDepth -= known == false;
  popScope();
  if (s->elseBody) {
    pushScope();
    deadBranchDepth += known == true;
    checkStmt(s->elseBody);
    deadBranchDepth -= known == true;
    popScope();
  }
  conditions.pop_back();
  --conditionalDepth;
}

void Sema::checkAssign(AssignStmt *s) {
  Type valueType = checkExpr(s->value);
  if (auto *n = dyn_cast<NameExpr>(s->target)) {
    Decl *d = lookup(n->name);
    if (!d) {
      diags.error(n->getRange(), "assignment to undeclared name '" + n->name + "'")
          .hint("declare a scalar with `let " + n->name + " = ...;` or allocate a buffer with `" +
                n->name + " = local f32[1];`");
      return;
    }
    n->decl = d;
    if (isa<BufferDecl>(d) || (isa<TensorParamDecl>(d) && !cast<TensorParamDecl>(d)->isScalar())) {
      diags.error(n->getRange(), "cannot assign to the whole buffer '" + n->name + "'")
          .hint("assign elements inside a parallel loop, or use fill(" + n->name + ", value) / copy");
      return;
    }
    auto diag = diags.error(n->getRange(), "cannot assign to '" + n->name + "': it is a " +
                                               d->kindName());
    diag.note(d->getRange(), "'" + n->name + "' is declared here");
    if (isa<LetDecl>(d))
      diag.hint("let bindings are immutable; keep mutable state in a buffer: `" + n->name +
                "_acc = local f32[1];`");
    return;
  }
  auto *ix = cast<IndexExpr>(s->target);
  if (auto *buf = dyn_cast_or_null<BufferLikeDecl>(lookup(ix->base->name)); buf && isPacked(buf->elemType)) {
    ix->base->decl = buf;
    diags.error(ix->getRange(), "not supported yet: writing single " + dtypeName(buf->elemType).str() +
                                    " elements ('" + buf->getName().str() + "')")
        .hint("two elements share a byte: compute the byte in a u8 buffer, e.g. "
              "lo | (hi << 4), or write the tile with copy");
    return;
  }
  Type targetType = checkExpr(ix);
  if (targetType.isError() || !ix->base->decl)
    return;
  auto *buf = dyn_cast<BufferLikeDecl>(ix->base->decl);
  if (!buf)
    return;
  if (auto *tp = dyn_cast<TensorParamDecl>(buf); tp && !tp->isOut)
    reportReadOnly(buf, ix->base->getRange());
  if (valueType.isError())
    return;
  if (s->op != AssignOp::Assign && (buf->elemType == DType::Bool || !valueType.isNumeric())) {
    diags.error(s->getRange(), "compound assignment '" + spelling(s->op) +
                                   "' needs numeric operands, got " + dtypeName(buf->elemType) +
                                   " and " + valueType.str());
    return;
  }
  checkConvertible(valueType, buf->elemType, s->value,
                   "an element of '" + buf->getName().str() + "'");
}

void Sema::checkCallStmt(CallStmt *s) {
  CallExpr *call = s->call;
  if (call->calleeKind == CalleeKind::TileOp) {
    checkTileOpPlacement(call);
    checkTileOp(call);
    return;
  }
  Type t = checkExpr(call);
  if (!t.isError())
    diags.error(call->getRange(), "the result of '" + call->callee + "(...)' is unused")
        .hint("assign it to a buffer element or bind it with `let`");
}

// ------------------------------------------------------------------ helpers

bool Sema::expectIntegral(Expr *e, Type t, llvm::StringRef what) {
  if (t.isError())
    return false;
  if (t.isIntegral())
    return true;
  diags.error(e->getRange(), what.str() + " must be an integer, got " + t.str())
      .hint(t.isFloating() ? "convert explicitly: i32(" + toSource(e) + ")"
                           : "use an integer expression");
  return false;
}

bool Sema::expectBool(Expr *e, Type t, llvm::StringRef what) {
  if (t.isError() || t.isBool())
    return !t.isError();
  auto diag = diags.error(e->getRange(), what.str() + " must be bool, got " + t.str());
  if (t.isNumeric())
    diag.hint("compare explicitly: `" + operandText(e) + " != 0`");
  return false;
}

std::optional<int64_t> Sema::expectConstInt(Expr *e, llvm::StringRef what) {
  Type t = e->type;
  if (!expectIntegral(e, t, what))
    return std::nullopt;
  if (!e->constant) {
    auto diag = diags.error(e->getRange(), what.str() + " must be a compile-time constant");
    explainNotConstant(diag, e);
    return std::nullopt;
  }
  return e->constant->getInt();
}

bool Sema::checkConvertible(Type from, DType to, const Expr *value, llvm::StringRef what) {
  if (from.isError())
    return false;
  bool toBool = to == DType::Bool;
  if (from.isBool() == toBool && (from.isNumeric() || from.isBool()))
    return true;
  if (!from.isNumeric() && !from.isBool()) {
    diags.error(value->getRange(), "cannot use a " + from.str() + " as " + what);
    return false;
  }
  diags.error(value->getRange(), "cannot implicitly convert " + from.str() + " to " +
                                     dtypeName(to) + " for " + what)
      .hint(!toBool ? "convert explicitly: " + dtypeName(to).str() + "(" + toSource(value) + ")"
            : isa<IntLitExpr>(value) ? std::string("write true or false")
                                     : "compare explicitly: `" + operandText(value) + " != 0`");
  return false;
}

void Sema::reportReadOnly(BufferLikeDecl *buf, llvm::SMRange range) {
  diags.error(range, "cannot write to '" + buf->getName() + "': it is not declared `out`")
      .note(buf->getRange(), "'" + buf->getName() + "' is declared here")
      .hint("declare it as `" + buf->getName().str() + ": out " + buf->elemTypeName + buf->shape.str() +
            "`");
}

} // namespace tlc
