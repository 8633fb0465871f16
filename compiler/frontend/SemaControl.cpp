// Sema for where tile operators may stand: every thread of the block must reach a tile
// operator together, so the conditions around it must be block-uniform and no per-thread loop
// may enclose it; named barriers (barrier_arrive, barrier_wait) count whole warps, so theirs
// must be the same in each warp; and pipelined loops do not nest.
#include "Sema.h"

namespace tlc {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

std::string describeNonUniform(const Expr *e, const Decl *d) {
  if (auto *c = dyn_cast<CallExpr>(e); c && c->builtin == Builtin::WarpgroupId)
    return "warpgroup_id() differs between the warpgroups of the block";
  if (isa<IndexExpr>(e)) {
    auto *b = llvm::dyn_cast_or_null<BufferDecl>(d);
    return "an element of " + (b ? scopeName(b->scope).str() + " buffer" : std::string("buffer")) +
           " '" + (d ? d->getName().str() : std::string()) + "', which each thread reads on its own";
  }
  if (!d)
    return "a value computed per thread";
  if (isa<LetDecl>(d))
    return "'" + d->getName().str() + "' is computed from values that differ between threads";
  return "'" + d->getName().str() + "' is a " + d->kindName() + " that differs between threads";
}

} // namespace

namespace {

const Expr *firstNotOnHost(const Expr *e) {
  if (!e || (e->constant && (e->constant->isInt() || e->constant->isBool())))
    return nullptr;
  if (isa<NameExpr>(e))
    return nullptr; // shape symbols and scalar parameters: the launcher's locals and arguments
  if (const auto *b = dyn_cast<BinaryExpr>(e)) {
    const Expr *bad = firstNotOnHost(b->lhs);
    return bad ? bad : firstNotOnHost(b->rhs);
  }
  if (const auto *u = dyn_cast<UnaryExpr>(e))
    return firstNotOnHost(u->operand);
  if (const auto *c = dyn_cast<CallExpr>(e)) {
    const bool rendered =
        (c->calleeKind == CalleeKind::Builtin &&
         (c->builtin == Builtin::CeilDiv || c->builtin == Builtin::Min || c->builtin == Builtin::Max ||
          c->builtin == Builtin::Abs || c->builtin == Builtin::Select)) ||
        (c->calleeKind == CalleeKind::Cast && isInteger(c->castType));
    if (!rendered || llvm::any_of(c->args, [](const CallArg &a) { return !a.keyword.empty(); }))
      return e;
    for (const Expr *a : c->positional())
      if (const Expr *bad = firstNotOnHost(a))
        return bad;
    return nullptr;
  }
  return e;
}

} // namespace

bool Sema::checkHostComputable(const Expr *e, llvm::StringRef what) {
  const Expr *bad = firstNotOnHost(e);
  if (!bad)
    return true;
  diags.error(bad->getRange(), what.str() + " is computed by the launcher on the host, which cannot evaluate '" +
                                   toSource(bad) + "'")
      .hint("use integer arithmetic, comparisons, ceildiv, min, max, abs, select and integer casts of shape "
            "symbols, parameters and constants");
  return false;
}

const Expr *Sema::firstNonUniform(const Expr *e, bool withinWarp, bool sharedUniform) const {
  if (!e || e->constant)
    return nullptr;
  auto first = [&](const Expr *part) { return firstNonUniform(part, withinWarp, sharedUniform); };
  switch (e->getKind()) {
  case Expr::EK_Name: {
    const Decl *d = cast<NameExpr>(e)->decl;
    if (!d)
      return nullptr;
    if (isa<LetDecl>(d)) {
      auto it = letVariance.find(d);
      unsigned mode = 2 * unsigned(withinWarp) + unsigned(sharedUniform);
      return it != letVariance.end() && (it->second >> mode & 1u) ? e : nullptr;
    }
    if (d->getKind() == Decl::DK_LoopVar)
      return parallelVars.count(d) ? e : nullptr;
    // Constants, parameters, shape symbols, block indices: the same in every thread.
    return nullptr;
  }
  case Expr::EK_Index: {
    auto *ix = cast<IndexExpr>(e);
    // Elements of global tensors at uniform indices are uniform; on-chip buffers are read
    // per thread (a local buffer is per thread, a fragment element lives in one thread),
    // shared ones the same in every thread where the caller allows it.
    auto *onChip = llvm::dyn_cast_or_null<BufferDecl>(ix->base->decl);
    bool sameBytes = llvm::isa_and_nonnull<TensorParamDecl>(ix->base->decl) ||
                     (sharedUniform && onChip && onChip->scope == Scope::Shared);
    if (!sameBytes)
      return e;
    for (const IndexItem &item : ix->indices)
      for (const Expr *part : {item.lo, item.hi})
        if (const Expr *n = part ? first(part) : nullptr)
          return n;
    return nullptr;
  }
  case Expr::EK_Unary:
    return first(cast<UnaryExpr>(e)->operand);
  case Expr::EK_Binary: {
    auto *b = cast<BinaryExpr>(e);
    if (const Expr *n = first(b->lhs))
      return n;
    return first(b->rhs);
  }
  case Expr::EK_Call: {
    auto *c = cast<CallExpr>(e);
    if (c->builtin == Builtin::CallExtern)
      return e; // any device function: nothing says it returns the same in every thread
    if (c->builtin == Builtin::WarpgroupId)
      return withinWarp ? nullptr : e;
    for (const CallArg &a : c->args)
      if (const Expr *n = first(a.value))
        return n;
    return nullptr;
  }
  default:
    return nullptr;
  }
}

void Sema::checkTileOpPlacement(CallExpr *call) {
  // Per-element code (a parallel loop body) is checked by the tile operator itself.
  if (llvm::any_of(loops, [](ForStmt *f) { return f->loopKind == LoopKind::Parallel; }))
    return;
  if (call->builtin == Builtin::CallExtern || call->builtin == Builtin::Print)
    return; // a per-thread call, not a tile operator
  for (ForStmt *f : loops)
    if (f->loopKind == LoopKind::Vectorized) {
      diags.error(call->calleeRange, "tile operator '" + call->callee +
                                         "' cannot be used inside a vectorized loop")
          .note(f->kindRange, "inside this vectorized loop")
          .hint("a vectorized loop is per-thread code; use a serial or unroll loop");
      return;
    }
  // A named barrier is one instruction per warp: the threads of a warp must agree, the
  // warpgroups need not (that is what the barriers are for).
  bool barrier = call->builtin == Builtin::BarrierArrive || call->builtin == Builtin::BarrierWait;
  // Every thread runs the same iterations of the loops around it.
  for (ForStmt *f : loops) {
    std::vector<const Expr *> bounds(f->extents.begin(), f->extents.end());
    bounds.push_back(f->start);
    for (const Expr *b : bounds) {
      const Expr *bad = firstNonUniform(b, /*withinWarp=*/barrier, /*sharedUniform=*/true);
      if (!bad || !reportedLoops.insert(f).second)
        continue;
      auto diag = diags.error(call->calleeRange, "'" + call->callee + "' inside a loop whose bounds can differ between " +
                                                     (barrier ? "the threads of a warp" : "threads"));
      noteNonUniform(diag, bad);
      diag.hint("build the loop's bounds from constants, parameters, block indices, outer loop variables "
                "and shared or global elements at such indices");
      break;
    }
  }
  for (IfStmt *i : conditions) {
    const Expr *bad = firstNonUniform(i->cond, /*withinWarp=*/barrier);
    if (!bad || !reportedConditions.insert(i).second)
      continue;
    if (barrier) {
      auto diag = diags.error(call->calleeRange, "'" + call->callee +
                                                     "' under a condition that can differ between the threads of a warp");
      noteNonUniform(diag, bad);
      diag.hint("a named barrier counts whole warps: build the condition from constants, parameters, "
                "block indices, serial/pipelined/unroll loop variables and warpgroup_id()");
      continue;
    }
    auto diag = diags.error(call->calleeRange, "tile operator '" + call->callee +
                                                   "' under a condition that can differ between threads");
    noteNonUniform(diag, bad);
    diag.hint("every thread of the block must reach a tile operator: build the condition from "
              "constants, parameters, block indices, serial/pipelined/unroll loop variables "
              "and global tensor elements at such indices");
  }
}

void Sema::noteNonUniform(DiagnosticEngine::Builder &diag, const Expr *bad) const {
  const Decl *d = nullptr;
  if (auto *n = dyn_cast<NameExpr>(bad))
    d = n->decl;
  else if (auto *ix = dyn_cast<IndexExpr>(bad))
    d = ix->base->decl;
  diag.note(bad->getRange(), describeNonUniform(bad, d));
}

void Sema::checkUniformRegion(const Expr *region, llvm::StringRef role) {
  if (llvm::any_of(loops, [](ForStmt *f) { return f->loopKind == LoopKind::Parallel; }))
    return; // per-element code: each thread addresses its own elements
  auto *ix = dyn_cast<IndexExpr>(region);
  if (!ix)
    return;
  for (const IndexItem &item : ix->indices)
    for (const Expr *part : {item.lo, item.hi})
      if (const Expr *bad = part ? firstNonUniform(part, false, /*sharedUniform=*/true) : nullptr) {
        auto diag = diags.error(part->getRange(), role.str() + ": the tile of '" + ix->base->name +
                                                      "' must be the same in every thread of the block");
        noteNonUniform(diag, bad);
        diag.hint("a tile operator works on one tile for the whole block: build its indices from constants, "
                  "parameters, block indices, serial/pipelined/unroll loop variables and shared or global "
                  "elements at such indices");
        return;
      }
}

void Sema::checkNestedPipeline(ForStmt *s) {
  if (s->loopKind != LoopKind::Pipelined)
    return;
  for (ForStmt *outer : loops)
    if (outer->loopKind == LoopKind::Pipelined) {
      diags.error(s->kindRange, "pipelined loops cannot be nested")
          .note(outer->kindRange, "inside this pipelined loop")
          .hint("pipeline one of them and make the other `serial`");
      return;
    }
}

// `if last_block(Done[by], splits) { ... }`: every block that reaches it counts one arrival on
// the counter and the last of `arrivals` takes the branch (KernelLowering::lowerLastBlock). The
// threads of a block must reach it together and at most once per launch: outside loops, under
// block-uniform conditions only. The counter is the construct's alone, an element of an `out`
// i32/u32 tensor.
void Sema::checkLastBlock(IfStmt *s, CallExpr *call) {
  std::vector<Expr *> args = call->positional();
  for (const CallArg &a : call->args)
    if (!a.keyword.empty())
      diags.error(a.keywordRange, "'last_block' takes no keyword arguments")
          .hint("write last_block(Counter[...], arrivals)");
  std::vector<Type> types;
  for (Expr *a : args)
    types.push_back(checkExpr(a));
  call->type = Type::scalar(DType::Bool);
  if (!loops.empty()) {
    diags.error(call->getRange(), "last_block counts one arrival per block and cannot be inside a loop")
        .note(loops.back()->kindRange, "inside this loop")
        .hint("move the `if last_block(...)` after the loop: each block must arrive at most once per launch");
    return;
  }
  for (IfStmt *i : conditions)
    if (const Expr *bad = firstNonUniform(i->cond)) {
      auto diag = diags.error(call->getRange(), "last_block under a condition that can differ between the "
                                                "threads of a block");
      noteNonUniform(diag, bad);
      diag.hint("the threads of a block arrive together: build the conditions around it from constants, "
                "parameters, shape symbols and block indices");
      return;
    }
  if (args.size() != call->args.size())
    return; // reported: keyword arguments
  if (args.size() != 2) {
    diags.error(call->getRange(), "'last_block' takes 2 arguments (a counter element and the number of "
                                    "arrivals), got " + std::to_string(args.size()))
        .hint("write last_block(Counter[...], arrivals)");
    return;
  }
  if (llvm::any_of(types, [](const Type &t) { return t.isError(); }))
    return;
  auto *ix = dyn_cast<IndexExpr>(args[0]);
  auto *tensor = ix ? llvm::dyn_cast_or_null<TensorParamDecl>(ix->base->decl) : nullptr;
  if (!tensor || tensor->isScalar()) {
    diags.error(args[0]->getRange(), "last_block's counter must be an element of a tensor parameter")
        .hint("declare a counter tensor, e.g. `Done: out i32[groups]`, zero-filled by the caller, and pass "
              "`Done[by]`");
    return;
  }
  if (tensor->elemType != DType::I32 && tensor->elemType != DType::U32) {
    diags.error(args[0]->getRange(), "last_block's counter must be an i32 or u32 element, '" + tensor->getName().str() +
                                         "' holds " + dtypeName(tensor->elemType))
        .note(tensor->getRange(), "'" + tensor->getName().str() + "' is declared here");
    return;
  }
  if (!tensor->isOut) {
    reportReadOnly(tensor, args[0]->getRange());
    return;
  }
  if (ix->hasSlice() || ix->indices.size() != tensor->shape.rank()) {
    diags.error(args[0]->getRange(), "last_block's counter is one element: index every dimension of '" +
                                         tensor->getName().str() + "' with a point")
        .note(tensor->getRange(), "'" + tensor->getName().str() + "' has " + std::to_string(tensor->shape.rank()) +
                                      " dimension" + (tensor->shape.rank() == 1 ? "" : "s"));
    return;
  }
  if (!expectIntegral(args[1], types[1], "last_block's arrival count"))
    return;
  for (Expr *e : {static_cast<Expr *>(ix), args[1]})
    if (const Expr *bad = firstNonUniform(e)) {
      auto diag = diags.error(e->getRange(), std::string(e == args[1] ? "last_block's arrival count" : "last_block's counter") +
                                                 " must be the same in every thread of the block");
      noteNonUniform(diag, bad);
      diag.hint("build it from constants, parameters, shape symbols and block indices");
      return;
    }
  if (args[1]->constant && args[1]->constant->isInt() && args[1]->constant->getInt() < 1)
    diags.error(args[1]->getRange(), "last_block's arrival count must be at least 1, got " +
                                         std::to_string(args[1]->constant->getInt()));
  s->lastBlock = true;
}

} // namespace tlc
