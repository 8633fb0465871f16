// The reduce family (reduce_sum, _max, _min, _abssum, _absmax) over the columns of a 2-d
// fragment: each thread folds its registers of a row, the lanes that share the row combine
// by warp shuffles, the warps that share it through shared scratch. The destination's layout
// is the source's reduced (Fragment::reduce; COMMON), and the scratch is one f32 per row and
// warp of the row.
#include "ops/Arguments.h"

#include "ir/TileOp.h"
#include "lower/KernelLowering.h"
#include "target/TargetInfo.h"

namespace tlc::ops {

using namespace lower;
using lower::Stmt; // the loop IR's, not the AST's
using ftg::Node;

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

void lowerReduce(KernelLowering &KL, const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  if (src.scope != Scope::Fragment || dst.scope != Scope::Fragment || !src.fragment ||
      src.fragment->kind == FragmentLayout::Row || src.shape.size() != 2) {
    KL.unsupported(n.call->getRange(), "reductions other than over the columns of a 2-d fragment "
                                    "into a fragment");
    return;
  }
  const FragmentLayout &L = *src.fragment;
  FragmentLayout R = L.rowLayout();
  std::string op = opStruct(n.reduceOp);
  std::string T = cppType(dst.dtype);
  int rows = R.registers();
  std::string rowsStr = std::to_string(rows);
  std::string red = KL.fresh("red");
  std::string q = red + "[tl_q]";
  auto perRow = [&](StmtPtr s) { return makeCompactFor("tl_q", "0", rowsStr, std::move(s)); };
  std::optional<Access> scratch; // the slot the warps combine through, if they do
  Stmt &unit = KL.tileOp(n, [&] {
    KL.scope([&] {
      Stmt &acc = KL.add(std::make_unique<Stmt>(StmtKind::Decl));
      acc.type = T;
      acc.name = red;
      acc.count = rows;
      KL.add(perRow(makeStore(q, op + "::identity<" + T + ">()")));
      std::string r = KL.fresh("r");
      KL.add(makeComment("each thread folds its own registers of a row"));
      KL.nest(makeFor(ForRole::Registers, r, "0", std::to_string(L.registers()), "", 0), [&] {
        std::string row = red + "[" + L.rowRegister(r) + "]";
        KL.add(withAccess(makeStore(row, op + "::combine(" + row + ", " + op + "::prepare(tl::convert<" + T + ">(" +
                                          bufferName(src) + "[" + r + "])))"),
                       {KL.access(&src)}, {}));
      });
      // Lanes that share a row (one rule with the planner's scratch size: rowSpread).
      const int warpSize = KL.g.target->warpSize();
      const std::string W = std::to_string(warpSize);
      FragmentLayout::RowSpread spread = L.rowSpread(warpSize);
      int width = spread.lanes;
      if (width > 1) {
        KL.add(makeComment("then the " + std::to_string(width) + " lanes that share each row"));
        auto shuffle = std::make_unique<Stmt>(StmtKind::Shuffle);
        shuffle->op = op;
        shuffle->width = width;
        shuffle->laneStride = spread.laneStride;
        shuffle->target = q;
        KL.add(perRow(std::move(shuffle)));
      }
      // Warps that share a row combine through shared scratch. The scratch has no buffer of
      // its own: the barriers around its use are part of this protocol.
      int warpsPerRow = spread.warps;
      if (warpsPerRow > 1) {
        std::string wpr = std::to_string(warpsPerRow);
        // An MmaC row is held by one issuing group (a warp for mma.sync, a warpgroup for
        // wgmma) of each of the wn groups across N: the slot is the group's column.
        std::string group = std::to_string(L.threads / (L.wm * L.wn));
        std::string slot = L.kind == FragmentLayout::MmaC
                               ? "((" + kThreadIndex + " / " + group + ") % " + std::to_string(L.wn) + ")"
                               : "((" + kThreadIndex + " % " + std::to_string(L.tpr) + ") / " + W + ")";
        // One lane of each warp's row writes the warp's partial: the first of the row's lanes
        // (the butterfly's lane bits zero).
        std::string lead = L.kind != FragmentLayout::MmaC ? "(" + kThreadIndex + " % " + W + ") == 0"
                           : spread.laneStride == 1
                               ? "(" + kThreadIndex + " % 4) == 0"
                               : "((" + kThreadIndex + " / " + std::to_string(spread.laneStride) + ") % " +
                                     std::to_string(width) + ") == 0";
        std::string rowLet = R.rowOf(kThreadIndex, "tl_q");
        // A slot of the scratch, the other one than the previous reduction's: a barrier
        // before the writes only where SyncInsertion finds the slot still being read.
        KernelLowering::ScratchSlot slotOf = KL.nextScratchSlot();
        scratch = slotOf.access;
        std::string at = "tl_reduce_scratch[" +
                         (slotOf.firstElement ? std::to_string(slotOf.firstElement) + " + " : std::string()) +
                         "tl_row * " + wpr;
        KL.add(makeComment("and the " + wpr + " warps that share each row, through shared memory"));
        KL.nest(withAccess(makeFor(ForRole::Registers, "tl_q", "0", rowsStr, "", 0), {}, {slotOf.access}), [&] {
          KL.add(makeLet("const int", "tl_row", rowLet, false));
          KL.add(makeIf(lead, IfStyle::SameLine, false))
              .body.push_back(makeStore(at + " + " + slot + "]", "tl::convert<float>(" + q + ")"));
        });
        KL.add(makeBarrier("partial row results are visible"));
        KL.nest(withAccess(makeFor(ForRole::Registers, "tl_q", "0", rowsStr, "", 0), {slotOf.access}, {}), [&] {
          KL.add(makeLet("const int", "tl_row", rowLet, false));
          KL.add(makeStore(q, "tl::convert<" + T + ">(" + at + "])"));
          KL.add(makeCompactFor("tl_s", "1", wpr,
                             makeStore(q, op + "::combine(" + q + ", tl::convert<" + T + ">(" + at + " + tl_s]))")));
        });
      }
      std::vector<Access> reads;
      if (!n.clear)
        reads.push_back(KL.access(&dst));
      KL.add(perRow(withAccess(makeStore(bufferName(dst) + "[tl_q]",
                                      n.clear ? q : op + "::combine(" + bufferName(dst) + "[tl_q], " + q + ")"),
                            reads, {KL.access(&dst)})));
    });
  });
  if (scratch)
    unit.writes.push_back(*scratch); // written, then read after the barrier
}


class ReduceOp : public ftg::TileOp {
public:
  ftg::NodeKind kind() const override { return ftg::NodeKind::Reduce; }
  bool buildsFrom(Builtin b) const override { return isReduce(b); }

  void build(Node &n, const CallExpr &c, ftg::NodeBuilder &b) const override {
    n.reduceOp = c.builtin;
    auto src = b.operand(argument(c, 0, "src"));
    auto dst = b.operand(argument(c, 1, "dst"));
    if (src)
      n.inputs.push_back(*src);
    if (dst) {
      n.outputs.push_back(*dst);
      n.inputs.push_back(*dst);
    }
    n.clear = boolArgument(c, "clear", true);
    int64_t rank = src ? int64_t(src->buffer->shape.size()) : 1;
    int64_t d = intArgument(c, "dim", rank - 1);
    n.dim = int(d < 0 ? d + rank : d);
    if (src && (n.dim != rank - 1 || rank > 2))
      b.unsupported(c.calleeRange, "reductions over any but the last dimension of a 1-d or 2-d buffer");
  }

  void inferLayout(Node &n, ftg::InferLevel level, ftg::LayoutRules &rules) const override {
    if (level != ftg::InferLevel::Common)
      return;
    ftg::Buffer *src = n.inputs[0].buffer, *dst = n.outputs[0].buffer;
    if (src->scope == Scope::Fragment && dst->scope == Scope::Fragment && src->fragment &&
        src->shape.size() == 2)
      rules.assign(*dst, src->fragment->rowLayout(), "common: rows of reduced '" + src->name + "'",
                   n.call->getRange());
  }

  int64_t scratchSlotBytes(const Node &n, const ftg::Graph &g) const override {
    if (!n.inputs[0].buffer->fragment)
      return 0;
    const FragmentLayout &l = *n.inputs[0].buffer->fragment;
    // One f32 partial result per row and warp of the row.
    FragmentLayout::RowSpread spread = l.rowSpread(g.target->warpSize());
    return spread.warps > 1 ? l.rows * spread.warps * 4 : 0;
  }

  std::string describe(const Node &n) const override {
    return n.call->callee + ": " + n.inputs[0].buffer->name + " -> " + n.outputs[0].buffer->name;
  }
  void lower(const Node &n, KernelLowering &L) const override { lowerReduce(L, n); }
};

const ReduceOp reduceOp;
const bool registered = ftg::registerTileOp(reduceOp);

} // namespace

} // namespace tlc::ops
