#include "ASTBuilder.h"
#include "Limits.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

#include <cerrno>
#include <cstdlib>

namespace tlc {

namespace {

constexpr unsigned kMaxExprDepth = 400;

std::optional<BinaryOp> binaryOpFromText(llvm::StringRef op) {
  return llvm::StringSwitch<std::optional<BinaryOp>>(op)
      .Case("*", BinaryOp::Mul).Case("/", BinaryOp::Div).Case("%", BinaryOp::Rem)
      .Case("+", BinaryOp::Add).Case("-", BinaryOp::Sub).Case("<<", BinaryOp::Shl)
      .Case(">>", BinaryOp::Shr).Case("<", BinaryOp::Lt).Case("<=", BinaryOp::Le)
      .Case(">", BinaryOp::Gt).Case(">=", BinaryOp::Ge).Case("==", BinaryOp::Eq)
      .Case("!=", BinaryOp::Ne).Case("&", BinaryOp::BitAnd).Case("^", BinaryOp::BitXor)
      .Case("|", BinaryOp::BitOr).Case("&&", BinaryOp::And).Case("||", BinaryOp::Or)
      .Default(std::nullopt);
}

std::string unescape(llvm::StringRef quoted) {
  llvm::StringRef body = quoted.drop_front().drop_back();
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    char c = body[++i];
    out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
  }
  return out;
}

enum class IntLiteralProblem { None, NoDigits, TooLarge };

// Decodes an INT_LIT token (`12`, `1_000`, `0xFF`) into `value`. Decimal literals are
// always base 10: a leading zero does not mean octal.
IntLiteralProblem parseIntLiteral(llvm::StringRef text, int64_t &value) {
  std::string digits;
  for (char ch : text)
    if (ch != '_')
      digits += ch;
  llvm::StringRef body = digits;
  unsigned radix = 10;
  if (body.startswith("0x")) {
    body = body.drop_front(2);
    radix = 16;
    if (body.empty()) // `0x_` passes the lexer
      return IntLiteralProblem::NoDigits;
  }
  unsigned long long v = 0;
  if (body.getAsInteger(radix, v) || v > static_cast<unsigned long long>(INT64_MAX))
    return IntLiteralProblem::TooLarge;
  value = static_cast<int64_t>(v);
  return IntLiteralProblem::None;
}

} // namespace

bool ASTBuilder::withinLimit(size_t count, size_t limit, llvm::SMRange firstPast,
                             const std::string &what, llvm::StringRef hint) {
  if (count <= limit)
    return true;
  diags.error(firstPast, "too many " + what + ": " + std::to_string(count) +
                             ", more than the limit of " + std::to_string(limit))
      .hint(hint.empty() ? "no real kernel comes near this; split the work into smaller pieces"
                         : hint);
  return false;
}

void ASTBuilder::build(P::ProgramContext *tree) {
  for (P::TopDeclContext *top : tree->topDecl()) {
    if (auto *c = top->constDecl())
      ctx.program.consts.push_back(buildConst(c));
    else if (auto *k = top->kernelDecl())
      ctx.program.kernels.push_back(buildKernel(k));
  }
}

NameExpr *ASTBuilder::buildName(P::NameContext *c) {
  return ctx.make<NameExpr>(range(c), c->getText());
}

ConstDecl *ASTBuilder::buildConst(P::ConstDeclContext *c) {
  auto *d = ctx.make<ConstDecl>(c->name()->getText(), range(c->name()));
  if (c->typeName())
    d->declaredType = c->typeName()->getStart()->getText();
  d->init = buildExpr(c->expr());
  return d;
}

KernelDecl *ASTBuilder::buildKernel(P::KernelDeclContext *c) {
  auto *k = ctx.make<KernelDecl>();
  k->name = c->kernelName()->getText();
  k->range = range(c);
  k->nameRange = range(c->kernelName());
  if (auto *cp = c->compileParams())
    for (auto *p : cp->compileParam())
      k->compileParams.push_back(buildCompileParam(p));
  if (auto *tp = c->tensorParamList())
    for (auto *p : tp->tensorParam())
      k->params.push_back(buildTensorParam(p));
  size_t numCompile = k->compileParams.size(), numRuntime = k->params.size();
  if (numCompile > limits::kMaxCompileParams)
    withinLimit(numCompile, limits::kMaxCompileParams,
                k->compileParams[limits::kMaxCompileParams]->getRange(),
                "compile-time parameters in kernel '" + k->name + "'");
  if (numRuntime > limits::kMaxRuntimeParams)
    withinLimit(numRuntime, limits::kMaxRuntimeParams,
                k->params[limits::kMaxRuntimeParams]->getRange(),
                "run-time parameters in kernel '" + k->name + "'");
  kernelStatements = 0;
  P::LaunchSpecContext *launch = c->launchSpec();
  k->grid = buildExprList(launch->exprList());
  k->gridRange = range(launch->exprList());
  k->threads = buildExpr(launch->expr());
  if (launch->identList())
    k->blockIndices = buildVars(launch->identList(), Decl::DK_BlockIndex);
  k->body = buildBlock(c->block());
  withinLimit(kernelStatements, limits::kMaxStatementsPerKernel, firstPastKernelLimit,
              "statements in kernel '" + k->name + "', nested ones included");
  return k;
}

CompileParamDecl *ASTBuilder::buildCompileParam(P::CompileParamContext *c) {
  auto *d = ctx.make<CompileParamDecl>(c->name()->getText(), range(c->name()));
  if (c->typeName()) {
    d->declaredType = c->typeName()->getText();
    d->declaredTypeRange = range(c->typeName());
  }
  if (auto *def = c->paramDefault()) {
    if (auto *a = dynamic_cast<P::AutoDefaultContext *>(def)) {
      d->isAuto = true;
      d->autoRange = range(a);
      for (auto *e : a->expr())
        d->autoCandidates.push_back(buildExpr(e));
    } else if (auto *e = dynamic_cast<P::ExprDefaultContext *>(def)) {
      d->defaultValue = buildExpr(e->expr());
    }
  }
  return d;
}

TensorParamDecl *ASTBuilder::buildTensorParam(P::TensorParamContext *c) {
  auto *d = ctx.make<TensorParamDecl>(c->name()->getText(), range(c->name()));
  for (auto *child : c->children)
    if (auto *t = dynamic_cast<antlr4::tree::TerminalNode *>(child))
      if (t->getText() == "out")
        d->isOut = true;
  d->elemTypeName = c->elemType()->getText();
  d->elemTypeRange = range(c->elemType());
  if (c->exprList()) {
    d->hasShape = true;
    d->shape.dims = buildExprList(c->exprList());
  }
  return d;
}

std::vector<SimpleDecl *> ASTBuilder::buildVars(P::IdentListContext *c, Decl::Kind kind) {
  std::vector<SimpleDecl *> vars;
  for (auto *n : c->name())
    vars.push_back(ctx.make<SimpleDecl>(kind, n->getText(), range(n)));
  return vars;
}

void ASTBuilder::checkRank(const std::vector<Expr *> &dims, const std::string &what) {
  if (dims.size() > limits::kMaxRank)
    withinLimit(dims.size(), limits::kMaxRank, dims[limits::kMaxRank]->getRange(), what,
                "on-chip buffers have at most 8 dimensions, like tensors");
}

BlockStmt *ASTBuilder::buildBlock(P::BlockContext *c) {
  auto *b = ctx.make<BlockStmt>(range(c));
  std::vector<P::StmtContext *> stmts = c->stmt();
  if (stmts.size() > limits::kMaxStatementsPerBlock)
    withinLimit(stmts.size(), limits::kMaxStatementsPerBlock,
                range(stmts[limits::kMaxStatementsPerBlock]), "statements in one block");
  for (auto *s : stmts) {
    if (++kernelStatements == limits::kMaxStatementsPerKernel + 1)
      firstPastKernelLimit = range(s);
    if (Stmt *stmt = buildStmt(s))
      b->body.push_back(stmt);
  }
  return b;
}

Stmt *ASTBuilder::buildStmt(P::StmtContext *c) {
  if (auto *s = c->allocStmt())
    return buildAlloc(s);
  if (auto *s = c->letStmt())
    return buildLet(s);
  if (auto *s = c->forStmt())
    return buildFor(s);
  if (auto *s = c->ifStmt())
    return buildIf(s);
  if (auto *s = c->assignStmt())
    return buildAssign(s);
  if (auto *s = c->callStmt())
    return ctx.make<CallStmt>(range(s), buildCall(s->callExpr()));
  if (auto *s = c->block())
    return buildBlock(s);
  return nullptr; // empty statement
}

Stmt *ASTBuilder::buildAlloc(P::AllocStmtContext *c) {
  auto *d = ctx.make<BufferDecl>(c->name()->getText(), range(c->name()));
  std::string scope = c->scopeName()->getText();
  d->scope = scope == "shared" ? Scope::Shared : scope == "fragment" ? Scope::Fragment : Scope::Local;
  d->elemTypeName = c->elemType()->getText();
  d->elemTypeRange = range(c->elemType());
  d->shape.dims = buildExprList(c->exprList());
  checkRank(d->shape.dims, "dimensions in buffer '" + d->getName().str() + "'");
  return ctx.make<AllocStmt>(range(c), d);
}

Stmt *ASTBuilder::buildLet(P::LetStmtContext *c) {
  auto *d = ctx.make<LetDecl>(c->name()->getText(), range(c->name()));
  if (c->dtypeName())
    d->declaredType = parseDType(c->dtypeName()->getText());
  d->init = buildExpr(c->expr());
  return ctx.make<LetStmt>(range(c), d);
}

Stmt *ASTBuilder::buildFor(P::ForStmtContext *c) {
  std::string kindText = c->loopKind()->getText();
  LoopKind kind = llvm::StringSwitch<LoopKind>(kindText)
                      .Case("parallel", LoopKind::Parallel)
                      .Case("pipelined", LoopKind::Pipelined)
                      .Case("serial", LoopKind::Serial)
                      .Case("unroll", LoopKind::Unroll)
                      .Default(LoopKind::Vectorized);
  auto *f = ctx.make<ForStmt>(range(c), kind, range(c->loopKind()));
  f->vars = buildVars(c->identList(), Decl::DK_LoopVar);
  if (f->vars.size() > limits::kMaxRank)
    withinLimit(f->vars.size(), limits::kMaxRank, f->vars[limits::kMaxRank]->getRange(),
                "variables in one loop", "a parallel loop binds one variable per dimension");
  if (c->argList())
    f->args = buildArgs(c->argList());
  f->body = buildBlock(c->block());
  return f;
}

IfStmt *ASTBuilder::buildIf(P::IfStmtContext *c) {
  auto *s = ctx.make<IfStmt>(range(c), buildExpr(c->expr()));
  auto blocks = c->block();
  s->thenBody = buildBlock(blocks[0]);
  if (c->ifStmt())
    s->elseBody = buildIf(c->ifStmt());
  else if (blocks.size() > 1)
    s->elseBody = buildBlock(blocks[1]);
  return s;
}

Stmt *ASTBuilder::buildAssign(P::AssignStmtContext *c) {
  P::LvalueContext *lv = c->lvalue();
  NameExpr *base = buildName(lv->name());
  Expr *target = base;
  if (lv->exprList()) {
    auto *idx = ctx.make<IndexExpr>(range(lv), base);
    for (Expr *e : buildExprList(lv->exprList())) {
      IndexItem item;
      item.lo = e;
      item.range = e->getRange();
      idx->indices.push_back(item);
    }
    target = idx;
  }
  std::string op = c->assignOp()->getText();
  AssignOp aop = op == "+=" ? AssignOp::Add : op == "-=" ? AssignOp::Sub
               : op == "*=" ? AssignOp::Mul : op == "/=" ? AssignOp::Div : AssignOp::Assign;
  return ctx.make<AssignStmt>(range(c), target, aop, buildExpr(c->expr()));
}

std::vector<Expr *> ASTBuilder::buildExprList(P::ExprListContext *c) {
  std::vector<Expr *> out;
  if (c)
    for (auto *e : c->expr())
      out.push_back(buildExpr(e));
  return out;
}

std::vector<CallArg> ASTBuilder::buildArgs(P::ArgListContext *c) {
  std::vector<CallArg> args;
  for (auto *a : c->arg()) {
    CallArg arg;
    if (auto *kw = dynamic_cast<P::KeywordArgContext *>(a)) {
      arg.keyword = kw->argName()->getText();
      arg.keywordRange = range(kw->argName());
      arg.value = buildExpr(kw->expr());
    } else if (auto *pos = dynamic_cast<P::PositionalArgContext *>(a)) {
      arg.value = buildExpr(pos->expr());
    }
    if (arg.value)
      args.push_back(arg);
  }
  return args;
}

Expr *ASTBuilder::buildExpr(P::ExprContext *c) {
  struct DepthGuard {
    unsigned &d;
    explicit DepthGuard(unsigned &d) : d(d) { ++d; }
    ~DepthGuard() { --d; }
  } guard(exprDepth);
  if (exprDepth == 1)
    depthReported = false; // a new top-level expression
  if (exprDepth >= kMaxExprDepth) {
    // Every subtree that reaches the limit ends here; one error per expression is enough.
    if (!depthReported)
      diags.error(range(c), "expression is nested too deeply (more than " +
                                std::to_string(kMaxExprDepth) + " levels)")
          .hint("split it with `let` bindings");
    depthReported = true;
    return ctx.make<IntLitExpr>(range(c), 0);
  }

  if (auto *p = dynamic_cast<P::PrimaryExprContext *>(c))
    return buildPrimary(p->primary());
  if (auto *u = dynamic_cast<P::UnaryExprContext *>(c)) {
    std::string op = u->op->getText();
    UnaryOp uop = op == "-" ? UnaryOp::Neg : op == "!" ? UnaryOp::Not : UnaryOp::BitNot;
    return ctx.make<UnaryExpr>(range(c), uop, buildExpr(u->expr()));
  }
  auto *b = dynamic_cast<P::BinaryExprContext *>(c);
  BinaryOp op = binaryOpFromText(b->op->getText()).value_or(BinaryOp::Add);
  Expr *lhs = buildExpr(b->expr(0));
  Expr *rhs = buildExpr(b->expr(1));
  return ctx.make<BinaryExpr>(range(c), op, lhs, rhs, source.rangeOf(b->op));
}

Expr *ASTBuilder::buildPrimary(P::PrimaryContext *c) {
  if (auto *l = dynamic_cast<P::LiteralPrimaryContext *>(c))
    return buildLiteral(l->literal());
  if (auto *call = dynamic_cast<P::CallPrimaryContext *>(c))
    return buildCall(call->callExpr());
  if (auto *n = dynamic_cast<P::NamePrimaryContext *>(c))
    return buildName(n->name());
  if (auto *d = dynamic_cast<P::DtypePrimaryContext *>(c))
    return ctx.make<DTypeRefExpr>(range(c), *parseDType(d->getText()));
  if (auto *p = dynamic_cast<P::PolicyPrimaryContext *>(c)) {
    std::string t = p->getText();
    WarpPolicy policy = t == "full_row" ? WarpPolicy::FullRow
                      : t == "full_col" ? WarpPolicy::FullCol : WarpPolicy::Square;
    return ctx.make<PolicyRefExpr>(range(c), policy);
  }
  if (auto *p = dynamic_cast<P::ParenPrimaryContext *>(c))
    return buildExpr(p->expr());
  if (auto *l = dynamic_cast<P::LambdaPrimaryContext *>(c)) {
    auto *lambda = ctx.make<LambdaExpr>(range(c));
    lambda->params = buildVars(l->identList(), Decl::DK_LambdaParam);
    lambda->results = buildExprList(l->exprList());
    return lambda;
  }
  auto *ix = dynamic_cast<P::IndexPrimaryContext *>(c);
  auto *idx = ctx.make<IndexExpr>(range(c), buildName(ix->name()));
  for (P::IndexContext *i : ix->indexList()->index()) {
    IndexItem item;
    item.range = range(i);
    if (auto *s = dynamic_cast<P::SliceIndexContext *>(i)) {
      item.isSlice = true;
      item.lo = s->lo ? buildExpr(s->lo) : nullptr;
      item.hi = s->hi ? buildExpr(s->hi) : nullptr;
    } else if (auto *p = dynamic_cast<P::PointIndexContext *>(i)) {
      item.lo = buildExpr(p->expr());
    }
    idx->indices.push_back(item);
  }
  return idx;
}

CallExpr *ASTBuilder::buildCall(P::CallExprContext *c) {
  P::CalleeContext *callee = c->callee();
  auto *call = ctx.make<CallExpr>(range(c), callee->getText(), range(callee));
  if (callee->tileOpName() || callee->builtinName()) {
    call->builtin = parseBuiltin(call->callee);
    call->calleeKind = callee->tileOpName() ? CalleeKind::TileOp : CalleeKind::Builtin;
  } else if (callee->dtypeName()) {
    call->calleeKind = CalleeKind::Cast;
    call->castType = *parseDType(call->callee);
  }
  if (c->argList())
    call->args = buildArgs(c->argList());
  return call;
}

Expr *ASTBuilder::buildLiteral(P::LiteralContext *c) {
  // Own the text: getText() returns a temporary.
  std::string text = c->getText();
  llvm::SMRange r = range(c);
  if (c->INT_LIT()) {
    int64_t value = 0;
    switch (parseIntLiteral(text, value)) {
    case IntLiteralProblem::None:
      break;
    case IntLiteralProblem::NoDigits:
      diags.error(r, "integer literal " + text + " has no digits")
          .hint("write hexadecimal digits after 0x, e.g. 0xFF");
      break;
    case IntLiteralProblem::TooLarge:
      diags.error(r, "integer literal " + text + " is too large")
          .hint("integer constants must fit in a signed 64-bit integer");
      break;
    }
    return ctx.make<IntLitExpr>(r, value);
  }
  if (c->FLOAT_LIT()) {
    errno = 0;
    double v = std::strtod(text.c_str(), nullptr);
    if (errno == ERANGE && (v > 1.0 || v < -1.0))
      diags.error(r, "floating-point literal " + text + " is out of range");
    return ctx.make<FloatLitExpr>(r, v, text);
  }
  if (c->STRING_LIT())
    return ctx.make<StringLitExpr>(r, unescape(text));
  return ctx.make<BoolLitExpr>(r, text == "true");
}

} // namespace tlc
