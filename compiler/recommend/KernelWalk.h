// Walks over a kernel's AST for the recommender's analyses (knob roles, quick checks): every
// statement, every expression, and the operands of tile-operator calls.
#pragma once

#include "frontend/AST.h"

#include <functional>
#include <vector>

namespace tlc::recommend {

// Calls `f` on `s` and every statement nested in it, outermost first.
void forEachStmt(const Stmt *s, const std::function<void(const Stmt *)> &f);
// Calls `f` on `e` and every sub-expression, outermost first.
void forEachExpr(const Expr *e, const std::function<void(const Expr *)> &f);
// The expressions a statement owns directly (not those of nested statements).
std::vector<const Expr *> exprsOf(const Stmt *s);

// A tile operator's argument given by position or keyword (`gemm(A_s, B_s, C = acc)`).
const Expr *tileOpArg(const CallExpr *call, size_t position, llvm::StringRef keyword);
// The buffer an operand names (`A_s`, `A[i, j]`), or null.
const BufferLikeDecl *operandBuffer(const Expr *e);

} // namespace tlc::recommend
