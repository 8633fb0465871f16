// Lowering of fragment reductions over the columns of a 2-d fragment: each thread folds its
// registers of a row, then the lanes that share the row combine by warp shuffles, then the
// warps that share it through shared scratch.
#include "lower/KernelLowering.h"
#include "target/TargetInfo.h"

namespace tlc::lower {

namespace {

std::string opStruct(Builtin b) {
  switch (b) {
  case Builtin::ReduceSum: return "tl::SumOp";
  case Builtin::ReduceMax: return "tl::MaxOp";
  case Builtin::ReduceMin: return "tl::MinOp";
  case Builtin::ReduceAbsSum: return "tl::AbsSumOp";
  default: return "tl::AbsMaxOp";
  }
}

} // namespace

void KernelLowering::reduce(const ftg::Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  if (src.scope != Scope::Fragment || dst.scope != Scope::Fragment || !src.fragment ||
      src.fragment->kind == FragmentLayout::Row || src.shape.size() != 2) {
    unsupported(n.call->getRange(), "reductions other than over the columns of a 2-d fragment "
                                    "into a fragment");
    return;
  }
  const FragmentLayout &L = *src.fragment;
  FragmentLayout R = L.rowLayout();
  std::string op = opStruct(n.reduceOp);
  std::string T = cppType(dst.dtype);
  int rows = R.registers();
  std::string rowsStr = std::to_string(rows);
  std::string red = fresh("red");
  std::string q = red + "[tl_q]";
  auto perRow = [&](StmtPtr s) { return makeCompactFor("tl_q", "0", rowsStr, std::move(s)); };
  tileOp(n, [&] {
    scope([&] {
      Stmt &acc = add(std::make_unique<Stmt>(StmtKind::Decl));
      acc.type = T;
      acc.name = red;
      acc.count = rows;
      add(perRow(makeStore(q, op + "::identity<" + T + ">()")));
      std::string r = fresh("r");
      add(makeComment("each thread folds its own registers of a row"));
      nest(makeFor(ForRole::Registers, r, "0", std::to_string(L.registers()), "", 0), [&] {
        std::string row = red + "[" + L.rowRegister(r) + "]";
        add(withAccess(makeStore(row, op + "::combine(" + row + ", " + op + "::prepare(tl::convert<" + T + ">(" +
                                          cppName(src.name) + "[" + r + "])))"),
                       {access(&src)}, {}));
      });
      // Lanes that share a row (one rule with the planner's scratch size: rowSpread).
      const int warpSize = g.target->warpSize();
      const std::string W = std::to_string(warpSize);
      FragmentLayout::RowSpread spread = L.rowSpread(warpSize);
      int width = spread.lanes;
      if (width > 1) {
        add(makeComment("then the " + std::to_string(width) + " lanes that share each row"));
        auto shuffle = std::make_unique<Stmt>(StmtKind::Shuffle);
        shuffle->op = op;
        shuffle->width = width;
        shuffle->target = q;
        add(perRow(std::move(shuffle)));
      }
      // Warps that share a row combine through shared scratch. The scratch has no buffer of
      // its own: the barriers around its use are part of this protocol.
      int warpsPerRow = spread.warps;
      if (warpsPerRow > 1) {
        std::string wpr = std::to_string(warpsPerRow);
        std::string slot = L.kind == FragmentLayout::MmaC
                               ? "((" + kThreadIndex + " / " + W + ") % " + std::to_string(L.wn) + ")"
                               : "((" + kThreadIndex + " % " + std::to_string(L.tpr) + ") / " + W + ")";
        std::string lead = L.kind == FragmentLayout::MmaC ? "(" + kThreadIndex + " % 4) == 0"
                                                          : "(" + kThreadIndex + " % " + W + ") == 0";
        std::string rowLet = R.rowOf(kThreadIndex, "tl_q");
        add(makeComment("and the " + wpr + " warps that share each row, through shared memory"));
        add(makeBarrier("the reduction scratch is reused"));
        nest(makeFor(ForRole::Registers, "tl_q", "0", rowsStr, "", 0), [&] {
          add(makeLet("const int", "tl_row", rowLet, false));
          add(makeIf(lead, IfStyle::SameLine, false))
              .body.push_back(makeStore("tl_reduce_scratch[tl_row * " + wpr + " + " + slot + "]",
                                        "tl::convert<float>(" + q + ")"));
        });
        add(makeBarrier("partial row results are visible"));
        nest(makeFor(ForRole::Registers, "tl_q", "0", rowsStr, "", 0), [&] {
          add(makeLet("const int", "tl_row", rowLet, false));
          add(makeStore(q, "tl::convert<" + T + ">(tl_reduce_scratch[tl_row * " + wpr + "])"));
          add(makeCompactFor("tl_s", "1", wpr,
                             makeStore(q, op + "::combine(" + q + ", tl::convert<" + T +
                                              ">(tl_reduce_scratch[tl_row * " + wpr + " + tl_s]))")));
        });
        add(makeBarrier("the reduction scratch may be reused"));
      }
      std::vector<Access> reads;
      if (!n.clear)
        reads.push_back(access(&dst));
      add(perRow(withAccess(makeStore(cppName(dst.name) + "[tl_q]",
                                      n.clear ? q : op + "::combine(" + cppName(dst.name) + "[tl_q], " + q + ")"),
                            reads, {access(&dst)})));
    });
  });
}

} // namespace tlc::lower
