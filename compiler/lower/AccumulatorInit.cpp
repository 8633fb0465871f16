// A wgmma accumulator's fill that is 0 on whole tiles, folded into the gemm that follows it.
//
// Attention starts its scores at `select(visible, 0, -inf)` and lets `Q @ K^T` accumulate on
// top (MLA decoding and the other masked kernels do the same). On most tiles every key is
// visible, and the fill then writes 0 to each of a thread's accumulator registers: 64
// instructions per thread and step at D64, in loops bound by instruction issue
// (docs/benchmarks.md, run 148). wgmma can ignore the accumulator instead (its scale-d
// operand). So where a test before the fill, built like the tile tests of TileConditions.cpp,
// shows that every element it writes is 0, the fill is skipped and the gemm overwrites
// (tl::wgmma::Overwrite{flag}); on the other tiles the fill runs as written and the gemm
// accumulates on top of it. tl::wgmma::discard first ends the registers' earlier values (an
// empty asm that defines them): otherwise, with no fill on the common path, they stayed alive
// until the gemm's asm read them, and the kernels ran 4-8% slower (run 150) instead of up to
// 9% faster (run 151).
//
// The pattern: a parallel loop over the whole accumulator (its loop variables index it in
// order) whose body is lets and one assignment of `select(cond, 0, other)` (or of
// `select(cond, other, 0)`), followed by a gemm on wgmma into that accumulator, with no node
// in between that touches it.
#include "lower/KernelLowering.h"

namespace tlc::lower {

using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

bool isZero(const Expr *e) {
  if (!e || !e->constant)
    return false;
  const ConstValue &v = *e->constant;
  return (v.isInt() && v.getInt() == 0) || (v.isFloat() && v.getFloat() == 0.0);
}

// The fill's assignment `acc[i, j] = select(...)` when `fill` is the pattern above for
// accumulator `acc`.
const CallExpr *zeroOrSelect(const ftg::Node &fill, const ftg::Buffer &acc) {
  if (fill.kind != ftg::NodeKind::Parallel || !fill.loop || fill.driver != &acc || fill.writes.size() != 1 ||
      fill.writes[0] != &acc || fill.loop->vars.size() != acc.shape.size())
    return nullptr;
  for (size_t d = 0; d < acc.shape.size(); ++d) {
    const Expr *e = fill.loop->extents[d];
    if (!acc.shape[d] || !e->constant || !e->constant->isInt() || e->constant->getInt() != *acc.shape[d])
      return nullptr;
  }
  const AssignStmt *assign = nullptr;
  for (const tlc::Stmt *s : fill.loop->body->body) {
    if (llvm::isa<LetStmt>(s) && !assign)
      continue;
    assign = dyn_cast<AssignStmt>(s);
    if (!assign || assign != fill.loop->body->body.back())
      return nullptr;
  }
  if (!assign || assign->op != AssignOp::Assign)
    return nullptr;
  auto *target = dyn_cast<IndexExpr>(assign->target);
  if (!target || target->indices.size() != acc.shape.size())
    return nullptr;
  for (size_t d = 0; d < target->indices.size(); ++d) {
    auto *v = dyn_cast_or_null<NameExpr>(target->indices[d].lo);
    if (!v || target->indices[d].hi || v->decl != fill.loop->vars[d])
      return nullptr;
  }
  auto *call = dyn_cast<CallExpr>(assign->value);
  if (!call || call->builtin != Builtin::Select || call->positional().size() != 3)
    return nullptr;
  return call;
}

} // namespace

bool KernelLowering::lowerAccumulatorInit(const std::vector<const ftg::Node *> &siblings, size_t i) {
  const ftg::Node &fill = *siblings[i];
  if (fill.kind != ftg::NodeKind::Parallel || !fill.driver || fill.driver->scope != Scope::Fragment)
    return false;
  const ftg::Buffer &acc = *fill.driver;
  // The gemm that next touches the accumulator.
  const ftg::Node *gemm = nullptr;
  for (size_t j = i + 1; j < siblings.size() && !gemm; ++j) {
    const ftg::Node &n = *siblings[j];
    if (llvm::is_contained(n.reads, &acc) || llvm::is_contained(n.writes, &acc)) {
      if (n.kind != ftg::NodeKind::Gemm || !n.warpgroupMma || n.clearAccum || n.outputs.empty() ||
          n.outputs[0].buffer != &acc || n.inputs[0].buffer == &acc || n.inputs[1].buffer == &acc)
        return false;
      gemm = &n;
    }
  }
  const CallExpr *select = gemm ? zeroOrSelect(fill, acc) : nullptr;
  if (!select)
    return false;
  std::vector<Expr *> args = select->positional();
  // 0 where the condition holds (or where it fails): the test that it does on the whole tile.
  bool zeroWhere = isZero(args[1]);
  if (!zeroWhere && !isZero(args[2]))
    return false;
  std::optional<std::string> test = conditionEverywhere(fill, args[0], zeroWhere);
  if (!test || *test == "false")
    return false;
  std::string flag = fresh("overwrite");
  atLineOf(fill, [&] {
    sourceComment(fill, "fill of '" + acc.name + "': where every element it writes is 0 (a test for the " +
                            "whole tile), the gemm into it overwrites it instead (wgmma's scale-d)");
    // Decided at compile time: no test, no fill.
    bool always = *test == "true";
    if (!always)
      add(makeLet("const bool", flag, *test, /*maybeUnused=*/false));
    // Without a fill on every path the registers' previous values would stay alive until the
    // gemm reads them (measured 4-8% slower, run 150): end them here.
    accessing(add(makeEval("tl::wgmma::discard(" + bufferName(acc) + ")")), {}, {access(&acc)});
    if (!always) {
      Stmt &guard = add(makeIf("!" + flag));
      within(guard.body, [&] { lowerNodeHere(fill); });
    }
    overwriteFlags[gemm] = always ? "true" : flag;
  });
  return true;
}

} // namespace tlc::lower
