// Evaluates AST expressions under a binding of declarations to values: the recommender asks
// "how many blocks does the grid have", "how many iterations does this loop run for block
// (bx, by)", "how large is this tile if block_M were 256" without running Sema again.
//
// Bound declarations win over what Sema folded, so the same AST answers for other knob
// values than the ones it was analysed with. `let` bindings are evaluated from their
// initialisers; everything else unbound must have a constant from Sema.
#pragma once

#include "frontend/AST.h"

#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>

#include <optional>

namespace tlc::recommend {

class ExprEvaluator {
public:
  void bind(const Decl *d, ConstValue v) { bindings[d] = v; }
  void unbind(const Decl *d) { bindings.erase(d); }
  bool isBound(const Decl *d) const { return bindings.count(d); }

  // nullopt when the value depends on something unbound and not constant (a loop
  // variable, a run-time scalar) or the operation fails (division by zero).
  std::optional<ConstValue> eval(const Expr *e) const;
  std::optional<int64_t> evalInt(const Expr *e) const;

private:
  std::optional<ConstValue> evalName(const Decl *d) const;
  std::optional<ConstValue> evalCall(const CallExpr *c) const;

  llvm::DenseMap<const Decl *, ConstValue> bindings;
};

// Whether `e` mentions `d`, directly or through `let` initialisers.
bool mentions(const Expr *e, const Decl *d);

// An evaluator with the kernel's dynamic shape symbols bound by name to `values` (the
// representative bucket the recommender tunes for). Symbols -D bound are constants already.
ExprEvaluator shapeEnvironment(const KernelDecl &k, const std::map<std::string, int64_t> &values);

} // namespace tlc::recommend
