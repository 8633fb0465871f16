// Builds the AST from a parse tree that has no syntax errors.
#pragma once

#include "AST.h"
#include "Diagnostics.h"
#include "SourceText.h"
#include "TileLangParser.h"

namespace tlc {

class ASTBuilder {
public:
  ASTBuilder(ASTContext &ctx, DiagnosticEngine &diags, const SourceText &source)
      : ctx(ctx), diags(diags), source(source) {}

  void build(grammar::TileLangParser::ProgramContext *tree);

private:
  using P = grammar::TileLangParser;

  ConstDecl *buildConst(P::ConstDeclContext *c);
  KernelDecl *buildKernel(P::KernelDeclContext *c);
  CompileParamDecl *buildCompileParam(P::CompileParamContext *c);
  TensorParamDecl *buildTensorParam(P::TensorParamContext *c);

  BlockStmt *buildBlock(P::BlockContext *c);
  Stmt *buildStmt(P::StmtContext *c);
  Stmt *buildAlloc(P::AllocStmtContext *c);
  Stmt *buildLet(P::LetStmtContext *c);
  Stmt *buildFor(P::ForStmtContext *c);
  IfStmt *buildIf(P::IfStmtContext *c);
  Stmt *buildAssign(P::AssignStmtContext *c);

  Expr *buildExpr(P::ExprContext *c);
  Expr *buildPrimary(P::PrimaryContext *c);
  CallExpr *buildCall(P::CallExprContext *c);
  Expr *buildLiteral(P::LiteralContext *c);
  std::vector<Expr *> buildExprList(P::ExprListContext *c);
  std::vector<CallArg> buildArgs(P::ArgListContext *c);
  NameExpr *buildName(P::NameContext *c);
  // Limits.h: an error with the numbers at `firstPast` when `count` exceeds `limit`.
  bool withinLimit(size_t count, size_t limit, llvm::SMRange firstPast, const std::string &what,
                   llvm::StringRef hint = "");
  void checkRank(const std::vector<Expr *> &dims, const std::string &what);
  std::vector<SimpleDecl *> buildVars(P::IdentListContext *c, Decl::Kind kind);

  llvm::SMRange range(antlr4::ParserRuleContext *c) const { return source.rangeOf(c); }
  llvm::SMRange range(antlr4::tree::TerminalNode *t) const { return source.rangeOf(t->getSymbol()); }

  ASTContext &ctx;
  DiagnosticEngine &diags;
  const SourceText &source;
  // Guards recursion on pathological nesting (the driver also runs on a large stack).
  unsigned exprDepth = 0;
  size_t kernelStatements = 0; // statements of the current kernel so far, nested ones too
  llvm::SMRange firstPastKernelLimit;
  bool depthReported = false; // the current top-level expression hit the depth limit
};

} // namespace tlc
