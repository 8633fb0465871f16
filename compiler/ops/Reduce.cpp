// The reduce family (reduce_sum, _max, _min, _abssum, _absmax) over the columns of a 2-d
// fragment: each thread folds its registers of a row, the lanes that share the row combine
// by warp shuffles, the warps that share it through shared scratch. The destination's layout
// is the source's reduced (Fragment::reduce; COMMON), and the scratch is one f32 per row and
// warp of the row.
//
// Every other reduction (any dimension, any rank, shared and local buffers, 1-d fragments)
// takes the general path: one thread folds each output element's line serially. A shared
// source is read where it is; a fragment source is first written to the f32 scratch area (as
// cumsum does), and a fragment destination is read back from it by its owners. A local
// source is its thread's own, so it reduces into its thread's local destination.
#include "ops/Arguments.h"
#include "ops/Lines.h"

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

// The fast path's case: the columns of a 2-d fragment (not a row layout) into a fragment.
bool reducesFragmentRows(const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  return src.scope == Scope::Fragment && dst.scope == Scope::Fragment && src.fragment &&
         src.fragment->kind != FragmentLayout::Row && src.shape.size() == 2 && n.dim == 1;
}

// The shape of a whole buffer as constants, or empty when an extent is not one.
std::vector<int64_t> constantShape(const ftg::Buffer &b) {
  std::vector<int64_t> shape;
  for (const std::optional<int64_t> &e : b.shape) {
    if (!e)
      return {};
    shape.push_back(*e);
  }
  return shape;
}

int64_t product(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t e : v)
    p *= e;
  return p;
}

// The f32 scratch the general path needs: the source tile if it is a fragment, then the
// results if the destination is one.
int64_t generalScratchElements(const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  if (src.scope == Scope::Local)
    return 0;
  int64_t elems = 0;
  if (src.scope == Scope::Fragment)
    elems += src.numElements();
  if (dst.scope == Scope::Fragment)
    elems += dst.numElements();
  return elems;
}

void lowerGeneral(KernelLowering &L, const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  std::vector<int64_t> tile = constantShape(src), out = constantShape(dst);
  const size_t dim = size_t(n.dim);
  if (tile.empty() || out.empty() || dim >= tile.size()) {
    L.unsupported(n.call->getRange(), "a reduction of a buffer whose extents are not constants");
    return;
  }
  int64_t outputs = product(tile) / tile[dim];
  if (src.scope == Scope::Local && dst.scope != Scope::Local) {
    L.unsupported(n.call->getRange(), "a reduction of a local buffer into a " + scopeName(dst.scope).str() +
                                          " buffer (each thread's local buffer is its own; reduce into a local buffer)");
    return;
  }
  if ((src.scope == Scope::Fragment && (!src.fragment || tile.size() > 2)) ||
      (dst.scope == Scope::Fragment && (!dst.fragment || out.size() > 2))) {
    L.unsupported(n.call->getRange(), "a reduction between fragments without an inferred layout");
    return;
  }
  const std::string op = opStruct(n.reduceOp), T = cppType(dst.dtype);
  const int64_t dstBase = src.scope == Scope::Fragment ? product(tile) : 0;
  // The registers of a 1-d or 2-d fragment, with the scratch index each one's element has.
  auto eachRegister = [&](const ftg::Buffer &b, const std::vector<int64_t> &shape, int64_t base,
                          const std::function<StmtPtr(const std::string &, const std::string &)> &leaf) {
    const FragmentLayout &f = *b.fragment;
    std::string r = L.fresh("r");
    L.nest(makeFor(ForRole::Registers, r, "0", std::to_string(f.registers()), "", 0), [&] {
      std::string at = L.fresh("s");
      L.add(makeLet("const int", at, (base ? std::to_string(base) + " + " : std::string()) + scratchIndex(f, shape, r),
                    false));
      L.add(leaf(r, "tl_reduce_scratch[" + at + "]"));
    });
  };
  L.tileOp(n, [&] {
    L.scope([&] {
      bool scratch = generalScratchElements(n) > 0;
      // The scratch has no buffer of its own: the barriers around its use are this protocol's.
      if (scratch)
        L.add(makeBarrier("the scratch area may still be read"));
      if (src.scope == Scope::Fragment) {
        L.add(makeComment("each thread writes its registers of '" + src.name + "' to the scratch"));
        eachRegister(src, tile, 0, [&](const std::string &r, const std::string &slot) {
          return withAccess(makeStore(slot, "tl::convert<float>(" + bufferName(src) + "[" + r + "])"),
                            {L.access(&src)}, {});
        });
        L.add(makeBarrier("the tile is in the scratch"));
      }
      // One output element: its line folded along `dim`, then stored (or combined with what
      // `dst` holds when clear = false).
      auto fold = [&](const std::string &o) {
        std::string acc = L.fresh("acc"), t = L.fresh("t");
        L.add(makeLet(T, acc, op + "::identity<" + T + ">()", false));
        std::vector<std::string> coords = lineCoords(tile, dim, o, t);
        std::string element;
        std::vector<Access> reads;
        if (src.scope == Scope::Fragment) {
          std::string flat = coords[0];
          for (size_t d = 1; d < coords.size(); ++d)
            flat = "(" + flat + ") * " + std::to_string(tile[d]) + " + " + coords[d];
          element = "tl_reduce_scratch[" + flat + "]";
        } else {
          element = elementAt(L, src, coords);
          reads.push_back(L.access(&src));
        }
        L.nest(makeFor(ForRole::Registers, t, "0", std::to_string(tile[dim])), [&] {
          L.add(withAccess(makeStore(acc, op + "::combine(" + acc + ", " + op + "::prepare(tl::convert<" + T + ">(" +
                                              element + ")))"),
                           reads, {}));
        });
        if (dst.scope == Scope::Fragment) {
          L.add(makeStore("tl_reduce_scratch[" + std::to_string(dstBase) + " + " + o + "]", "tl::convert<float>(" + acc + ")"));
          return;
        }
        // The output's coordinates: the line's without `dim` (or with it at 0 where dst keeps
        // it as extent 1).
        std::vector<std::string> at;
        for (size_t d = 0; d < coords.size(); ++d)
          if (d != dim)
            at.push_back(coords[d]);
          else if (out.size() == tile.size())
            at.push_back("0");
        if (at.empty())
          at.push_back("0"); // a rank-1 source reduces into [1]
        std::string ref = elementAt(L, dst, at);
        std::vector<Access> dstReads;
        if (!n.clear)
          dstReads.push_back(L.access(&dst));
        L.add(withAccess(makeStore(ref, n.clear ? acc : op + "::combine(" + ref + ", " + acc + ")"), dstReads,
                         {L.access(&dst)}));
      };
      std::string o = L.fresh("o");
      if (dst.scope == Scope::Local) {
        // Every thread computes each output for its own local buffer.
        L.add(makeComment("each thread folds every line of '" + src.name + "' into its own '" + dst.name + "'"));
        L.nest(makeFor(ForRole::Registers, o, "0", std::to_string(outputs)), [&] { fold(o); });
      } else {
        L.add(makeComment("the threads share out the " + std::to_string(outputs) + " lines of '" + src.name +
                          "'; each folds its lines serially"));
        L.nest(makeFor(ForRole::Threads, o, kThreadIndex, std::to_string(outputs), std::to_string(L.g.threads)),
               [&] { fold(o); });
      }
      if (dst.scope == Scope::Fragment) {
        L.add(makeBarrier("the reduced lines are visible"));
        L.add(makeComment("each thread reads its registers of '" + dst.name + "' back"));
        eachRegister(dst, out, dstBase, [&](const std::string &r, const std::string &slot) {
          std::string reg = bufferName(dst) + "[" + r + "]", v = "tl::convert<" + T + ">(" + slot + ")";
          return withAccess(makeStore(reg, n.clear ? v : op + "::combine(" + reg + ", " + v + ")"),
                            n.clear ? std::vector<Access>{} : std::vector<Access>{L.access(&dst)}, {L.access(&dst)});
        });
      }
      if (scratch)
        L.add(makeBarrier("the scratch area may be reused"));
    });
  });
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
  }

  void inferLayout(Node &n, ftg::InferLevel level, ftg::LayoutRules &rules) const override {
    if (level != ftg::InferLevel::Common)
      return;
    ftg::Buffer *src = n.inputs[0].buffer, *dst = n.outputs[0].buffer;
    // The rows of a reduction along the columns; other reductions leave dst's layout to the
    // rest of inference (the general path reads it back from the scratch whatever it is).
    if (src->scope == Scope::Fragment && dst->scope == Scope::Fragment && src->fragment &&
        src->shape.size() == 2 && n.dim == 1)
      rules.assign(*dst, src->fragment->rowLayout(), "common: rows of reduced '" + src->name + "'",
                   n.call->getRange());
  }

  int64_t scratchBytes(const Node &n, const ftg::Graph &) const override {
    return reducesFragmentRows(n) ? 0 : generalScratchElements(n) * 4;
  }

  int64_t scratchSlotBytes(const Node &n, const ftg::Graph &g) const override {
    if (!reducesFragmentRows(n))
      return 0;
    const FragmentLayout &l = *n.inputs[0].buffer->fragment;
    // One f32 partial result per row and warp of the row.
    FragmentLayout::RowSpread spread = l.rowSpread(g.target->warpSize());
    return spread.warps > 1 ? l.rows * spread.warps * 4 : 0;
  }

  std::string describe(const Node &n) const override {
    return n.call->callee + ": " + n.inputs[0].buffer->name + " -> " + n.outputs[0].buffer->name;
  }
  void lower(const Node &n, KernelLowering &L) const override {
    if (reducesFragmentRows(n))
      lowerReduce(L, n);
    else
      lowerGeneral(L, n);
  }
};

const ReduceOp reduceOp;
const bool registered = ftg::registerTileOp(reduceOp);

} // namespace

} // namespace tlc::ops
