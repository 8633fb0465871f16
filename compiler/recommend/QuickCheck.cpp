#include "recommend/QuickCheck.h"
#include "recommend/KernelWalk.h"
#include "infer/RegisterEstimate.h"
#include "infer/WarpSplit.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

namespace tlc::recommend {

using llvm::dyn_cast;

namespace {

std::optional<ConstValue> parseValue(llvm::StringRef text) {
  int64_t i;
  if (!text.getAsInteger(10, i))
    return ConstValue{i};
  if (text == "full_row")
    return ConstValue{WarpPolicy::FullRow};
  if (text == "full_col")
    return ConstValue{WarpPolicy::FullCol};
  if (text == "square")
    return ConstValue{WarpPolicy::Square};
  return std::nullopt;
}

} // namespace

std::optional<std::string> QuickCheck::reject(const Config &config) {
  for (const Binding &b : config)
    for (const CompileParamDecl *p : k.compileParams)
      if (p->getName() == b.name) {
        if (std::optional<ConstValue> v = parseValue(b.value))
          eval.bind(p, *v);
        else
          eval.unbind(p);
      }
  std::optional<int64_t> threads = eval.evalInt(k.threads);
  // Not positive: Sema rejects it with its location (threads(0)); nothing here divides by it.
  if (!threads || *threads <= 0)
    return std::nullopt;
  if (*threads % target.warpSize != 0 || *threads > target.threadsPerBlock)
    return std::to_string(*threads) + " threads per block: " + target.name + " needs a multiple of " +
           std::to_string(target.warpSize) + ", at most " + std::to_string(target.threadsPerBlock);
  if (auto why = checkRegisters(*threads))
    return why;
  return checkGemms(*threads);
}

// Before inference there are no fragment layouts, so this is a lower bound of
// infer::estimateRegisters (never stricter than the compile, see QuickCheck.h): the same
// scalar registers and per-element rounding, and the largest local array or 2-d fragment
// spread evenly over the threads (a layout holds at least that many per thread). The
// estimate counts the buffers live at once, and every buffer is live somewhere.
std::optional<std::string> QuickCheck::checkRegisters(int64_t threads) {
  int64_t largest = 0;
  for (const Stmt *s : k.body->body) {
    // A 1-d fragment may be a row vector, replicated over the threads of a row: skipped.
    auto *a = dyn_cast<AllocStmt>(s);
    if (!a || !(a->buffer->scope == Scope::Local ||
                (a->buffer->scope == Scope::Fragment && a->buffer->shape.rank() == 2)))
      continue;
    int64_t elems = 1;
    for (const Expr *d : a->buffer->shape.dims) {
      std::optional<int64_t> v = eval.evalInt(d);
      if (!v)
        return std::nullopt;
      // Not positive or overflowing: Sema and the planners report it with its location.
      if (*v <= 0 || llvm::MulOverflow(elems, *v, elems))
        return std::nullopt;
    }
    int64_t bits = 0;
    if (llvm::MulOverflow(elems, int64_t(bitWidth(a->buffer->elemType)), bits))
      return std::nullopt;
    largest = std::max(largest, infer::minRegistersFor(elems, a->buffer->scope == Scope::Local, threads,
                                                        a->buffer->elemType));
  }
  int64_t regs = infer::kScalarRegisters + largest;
  if (regs > target.registersPerThread)
    return "a fragment needs at least " + std::to_string(regs) + " registers per thread, but " +
           target.name + " allows " + std::to_string(target.registersPerThread);
  return std::nullopt;
}

std::optional<std::string> QuickCheck::checkGemms(int64_t threads) {
  std::optional<std::string> why;
  // The candidate compiles through the passes of the descriptor's code-generation target
  // (the sm_80 path for a GPU without a back end), so its warps and MMA atom decide.
  const target::TargetInfo &compiled = target.info->codegenTarget();
  int warps = int(threads / compiled.warpSize());
  forEachStmt(k.body, [&](const Stmt *s) {
    auto *cs = dyn_cast<CallStmt>(s);
    if (why || !cs || cs->call->builtin != Builtin::Gemm)
      return;
    const CallExpr *c = cs->call;
    const BufferLikeDecl *C = operandBuffer(tileOpArg(c, 2, "C"));
    if (!C || C->shape.rank() != 2)
      return;
    std::optional<int64_t> M = eval.evalInt(C->shape.dims[0]), N = eval.evalInt(C->shape.dims[1]);
    WarpPolicy policy = WarpPolicy::Square;
    if (const CallArg *p = c->keywordArg("policy")) {
      std::optional<ConstValue> v = eval.eval(p->value);
      if (!v || !v->isPolicy())
        return;
      policy = v->getPolicy();
    }
    if (!M || !N)
      return;
    // The compiler takes the warpgroup atom (wgmma) where every gemm fits it and a warp
    // atom otherwise: a tile any split fits is not rejected here.
    const target::MmaAtom *group = compiled.warpgroupMma();
    bool groupFits = group && threads % group->threads == 0 &&
                     infer::splitWarpgroups(*M, *N, int(threads / group->threads), policy, *group).fits;
    // Any warp atom (gfx9 falls back from the 32x32 MFMA to the 16x16 one).
    bool warpFits = llvm::any_of(compiled.mmaAtoms(), [&](const target::MmaAtom &a) {
      return a.threads == compiled.warpSize() && infer::splitWarps(*M, *N, warps, policy, a).fits;
    });
    if (!groupFits && !warpFits)
      why = "gemm tile " + std::to_string(*M) + "x" + std::to_string(*N) + " cannot be split over " +
            std::to_string(warps) + " warps with policy " + policyName(policy).str();
  });
  return why;
}

} // namespace tlc::recommend
