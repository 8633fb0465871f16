// Reading a tile operator's call arguments (after Sema checked them) in build().
#pragma once

#include "frontend/AST.h"

namespace tlc::ops {

// The argument named `keyword`, else the positional one at `pos`, else null.
inline const Expr *argument(const CallExpr &c, size_t pos, llvm::StringRef keyword) {
  if (const CallArg *a = c.keywordArg(keyword))
    return a->value;
  auto p = c.positional();
  return pos < p.size() ? p[pos] : nullptr;
}

// A constant boolean keyword argument, or `otherwise`.
inline bool boolArgument(const CallExpr &c, llvm::StringRef keyword, bool otherwise) {
  const CallArg *a = c.keywordArg(keyword);
  return a && a->value->constant ? a->value->constant->getBool() : otherwise;
}

// A constant integer keyword argument, or `otherwise`.
inline int64_t intArgument(const CallExpr &c, llvm::StringRef keyword, int64_t otherwise) {
  const CallArg *a = c.keywordArg(keyword);
  return a && a->value->constant ? a->value->constant->getInt() : otherwise;
}

} // namespace tlc::ops
