// The reduce family (reduce_sum, _max, _min, _abssum, _absmax, the bitwise _and, _or, _xor,
// and _argmax, _argmin) over the columns of a 2-d fragment: each thread folds its registers of
// a row, the lanes that share the row combine by warp shuffles, the warps that share it through
// shared scratch. The destination's layout is the source's reduced (Fragment::reduce; COMMON),
// and the scratch is one accumulator per row and warp of the row.
//
// Every reduction is data (struct Reduction): an operator of tl/reduce.h (identity, combine),
// the accumulator's type, how an element enters the fold and how the result leaves it. argmax
// and argmin fold tl::ArgPair (value, position) pairs, so one lowering serves them all.
//
// Every other reduction (any dimension, any rank, shared and local buffers, 1-d fragments)
// takes the general path: one thread folds each output element's line serially. A shared
// source is read where it is; a fragment source is first written to the f32 scratch area (as
// cumsum does), and a fragment destination is read back from it by its owners. A local
// source is its thread's own, so it reduces into its thread's local destination.
//
// The scratch holds float reductions as f32 (exact for f16, bf16 and f32) and every other
// accumulator as itself: an f32 would round integers past 2^24, and a pair is two values.
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
  case Builtin::ReduceAnd: return "tl::AndOp";
  case Builtin::ReduceOr: return "tl::OrOp";
  case Builtin::ReduceXor: return "tl::XorOp";
  case Builtin::ReduceArgmax: return "tl::ArgMaxOp";
  case Builtin::ReduceArgmin: return "tl::ArgMinOp";
  default: return "tl::AbsMaxOp";
  }
}

int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// What a reduction combines and how its elements enter and its results leave the fold.
struct Reduction {
  std::string op;    // the operator struct of tl/reduce.h
  std::string value; // the C++ type values are combined in: dst's dtype (argmax: values', else src's)
  std::string acc;   // the accumulator's: `value`, or tl::ArgPair<value> for argmax/argmin
  bool arg = false;
  // Whether the scratch holds accumulators as they are (integers, pairs) rather than as f32.
  bool exact = false;
  int64_t valueBytes = 4; // one value in the scratch (the general path's copy of the source)
  int64_t accBytes = 4;   // one accumulator in the scratch
  const ftg::Buffer *values = nullptr; // argmax/argmin's values destination, if any

  std::string identity() const { return op + "::identity<" + acc + ">()"; }
  std::string combine(const std::string &a, const std::string &b) const {
    return op + "::combine(" + a + ", " + b + ")";
  }
  // Source element `x` at position `index` along the reduced dimension, ready to fold.
  std::string entry(const std::string &x, const std::string &index) const {
    std::string v = "tl::convert<" + value + ">(" + x + ")";
    return arg ? acc + "{" + v + ", " + index + "}" : op + "::prepare(" + v + ")";
  }
  // An accumulator as the scratch holds it, and back.
  std::string toScratch(const std::string &a) const { return exact ? a : "tl::convert<float>(" + a + ")"; }
  std::string fromScratch(const std::string &s) const { return exact ? s : "tl::convert<" + acc + ">(" + s + ")"; }
};

Reduction reductionOf(const Node &n) {
  Reduction r;
  r.arg = isArgReduce(n.reduceOp);
  if (r.arg && n.outputs.size() > 1)
    r.values = n.outputs[1].buffer;
  DType v = r.values ? r.values->dtype : r.arg ? n.inputs[0].buffer->dtype : n.outputs[0].buffer->dtype;
  r.op = opStruct(n.reduceOp);
  r.value = cppType(v);
  r.acc = r.arg ? "tl::ArgPair<" + r.value + ">" : r.value;
  r.exact = r.arg || isInteger(v);
  int64_t bytes = std::max<int64_t>(bitWidth(v) / 8, 1);
  r.valueBytes = r.exact ? bytes : 4;
  r.accBytes = r.arg ? (bytes == 8 ? 16 : 8) : r.valueBytes;
  return r;
}

// argmax/argmin's offset (added to every position), a constant or an expression the lowering
// evaluates once; empty when there is none.
std::string positionOffset(KernelLowering &L, const Node &n, std::vector<Access> &reads) {
  const CallArg *a = n.call->keywordArg("offset");
  if (!isArgReduce(n.reduceOp) || !a)
    return "";
  std::string name = L.fresh("offset"), value;
  reads = L.readsOf([&] { value = L.exprAs(a->value, DType::I32); });
  L.add(withAccess(makeLet("const int", name, value, false), reads, {}));
  return name;
}

std::string plus(const std::string &offset, const std::string &position) {
  return offset.empty() ? position : offset + " + " + position;
}

// Stores result `acc` into `dstRef` (and, for argmax/argmin, `valuesRef`): as it is with
// clear, else combined with what the destination holds.
void storeResult(KernelLowering &L, const Node &n, const Reduction &R, const std::string &acc,
                 const std::string &dstRef, const std::string &valuesRef) {
  const ftg::Buffer &dst = *n.outputs[0].buffer;
  std::vector<Access> reads;
  if (!n.clear)
    reads.push_back(L.access(&dst));
  if (!R.arg) {
    L.add(withAccess(makeStore(dstRef, n.clear ? acc : R.combine(dstRef, acc)), reads, {L.access(&dst)}));
    return;
  }
  std::vector<Access> writes = {L.access(&dst)};
  if (R.values)
    writes.push_back(L.access(R.values));
  if (!n.clear) {
    // The running (value, position) of earlier calls first (Sema requires values here).
    reads.push_back(L.access(R.values));
    L.add(withAccess(makeStore(acc, R.combine(R.acc + "{" + valuesRef + ", " + dstRef + "}", acc)), reads, {}));
  }
  L.add(withAccess(makeStore(dstRef, acc + ".index"), {}, {L.access(&dst)}));
  if (R.values)
    L.add(withAccess(makeStore(valuesRef, acc + ".value"), {}, {L.access(R.values)}));
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
  const Reduction Red = reductionOf(n);
  const std::string &op = Red.op, &T = Red.acc;
  int rows = R.registers();
  std::string rowsStr = std::to_string(rows);
  std::string red = KL.fresh("red");
  std::string q = red + "[tl_q]";
  auto perRow = [&](StmtPtr s) { return makeCompactFor("tl_q", "0", rowsStr, std::move(s)); };
  std::optional<Access> scratch; // the slot the warps combine through, if they do
  Stmt &unit = KL.tileOp(n, [&] {
    KL.scope([&] {
      std::vector<Access> offsetReads;
      std::string offset = positionOffset(KL, n, offsetReads);
      Stmt &acc = KL.add(std::make_unique<Stmt>(StmtKind::Decl));
      acc.type = T;
      acc.name = red;
      acc.count = rows;
      KL.add(perRow(makeStore(q, Red.identity())));
      std::string r = KL.fresh("r");
      KL.add(makeComment(Red.arg ? "each thread folds its own registers of a row, with their columns"
                                 : "each thread folds its own registers of a row"));
      KL.nest(makeFor(ForRole::Registers, r, "0", std::to_string(L.registers()), "", 0), [&] {
        std::string row = red + "[" + L.rowRegister(r) + "]";
        std::string element = Red.entry(bufferName(src) + "[" + r + "]", plus(offset, L.colOf(kThreadIndex, r)));
        KL.add(withAccess(makeStore(row, Red.combine(row, element)), {KL.access(&src)}, {}));
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
        std::string first = slotOf.firstElement ? std::to_string(slotOf.firstElement) : std::string();
        std::string at = "tl_reduce_scratch[" + (first.empty() ? first : first + " + ") + "tl_row * " + wpr;
        if (Red.exact) {
          // The slot as an array of accumulators (the planner aligns slots to 16 bytes).
          std::string slots = KL.fresh("slots");
          KL.add(makeLet(T + "* const", slots,
                         "reinterpret_cast<" + T + "*>(tl_reduce_scratch" + (first.empty() ? "" : " + " + first) + ")",
                         false));
          at = slots + "[tl_row * " + wpr;
        }
        KL.add(makeComment("and the " + wpr + " warps that share each row, through shared memory"));
        KL.nest(withAccess(makeFor(ForRole::Registers, "tl_q", "0", rowsStr, "", 0), {}, {slotOf.access}), [&] {
          KL.add(makeLet("const int", "tl_row", rowLet, false));
          KL.add(makeIf(lead, IfStyle::SameLine, false))
              .body.push_back(makeStore(at + " + " + slot + "]", Red.toScratch(q)));
        });
        KL.add(makeBarrier("partial row results are visible"));
        KL.nest(withAccess(makeFor(ForRole::Registers, "tl_q", "0", rowsStr, "", 0), {slotOf.access}, {}), [&] {
          KL.add(makeLet("const int", "tl_row", rowLet, false));
          KL.add(makeStore(q, Red.fromScratch(at + "]")));
          KL.add(makeCompactFor("tl_s", "1", wpr, makeStore(q, Red.combine(q, Red.fromScratch(at + " + tl_s]")))));
        });
      }
      if (Red.arg) {
        KL.add(makeComment(Red.values ? "each row's position and value" : "each row's position"));
        KL.nest(makeFor(ForRole::Registers, "tl_q", "0", rowsStr, "", 0), [&] {
          storeResult(KL, n, Red, q, bufferName(dst) + "[tl_q]",
                      Red.values ? bufferName(*Red.values) + "[tl_q]" : std::string());
        });
        return;
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

// Where the general path keeps things in the scratch: the source tile if it is a fragment
// (as f32, or as values where the reduction is exact), then the results if the destination
// is one (as f32, or as accumulators from a 16-byte boundary).
struct GeneralScratch {
  int64_t dstFirst = 0; // the results' first f32 element
  int64_t bytes = 0;
};

GeneralScratch generalScratch(const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  GeneralScratch g;
  if (src.scope == Scope::Local)
    return g;
  Reduction R = reductionOf(n);
  int64_t srcBytes = src.scope == Scope::Fragment ? src.numElements() * R.valueBytes : 0;
  int64_t dstOffset = R.exact ? alignTo(srcBytes, 16) : srcBytes;
  g.dstFirst = dstOffset / 4;
  g.bytes = dstOffset + (dst.scope == Scope::Fragment ? dst.numElements() * R.accBytes : 0);
  return g;
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
  const Reduction R = reductionOf(n);
  if (R.values && dst.scope == Scope::Fragment && (!R.values->fragment || *R.values->fragment != *dst.fragment)) {
    L.unsupported(n.call->getRange(), "argmax/argmin into fragments of different layouts (values and dst)");
    return;
  }
  const std::string &op = R.op, &T = R.acc;
  const GeneralScratch G = generalScratch(n);
  const int64_t dstBase = G.dstFirst;
  // The scratch's source and result parts: f32 elements, or typed arrays where exact.
  std::string srcPart = "tl_reduce_scratch", dstPart = "tl_reduce_scratch";
  // The registers of a 1-d or 2-d fragment, with the scratch index each one's element has.
  auto eachRegister = [&](const ftg::Buffer &b, const std::vector<int64_t> &shape, const std::string &part,
                          int64_t base,
                          const std::function<void(const std::string &, const std::string &)> &leaf) {
    const FragmentLayout &f = *b.fragment;
    std::string r = L.fresh("r");
    L.nest(makeFor(ForRole::Registers, r, "0", std::to_string(f.registers()), "", 0), [&] {
      std::string at = L.fresh("s");
      L.add(makeLet("const int", at, (base ? std::to_string(base) + " + " : std::string()) + scratchIndex(f, shape, r),
                    false));
      leaf(r, part + "[" + at + "]");
    });
  };
  L.tileOp(n, [&] {
    L.scope([&] {
      bool scratch = G.bytes > 0;
      // The scratch has no buffer of its own: the barriers around its use are this protocol's.
      if (scratch)
        L.add(makeBarrier("the scratch area may still be read"));
      std::vector<Access> offsetReads;
      std::string offset = positionOffset(L, n, offsetReads);
      // Exact reductions see the scratch as arrays of values and of accumulators.
      int64_t resultBase = dstBase;
      if (R.exact && src.scope == Scope::Fragment) {
        srcPart = L.fresh("values");
        L.add(makeLet(R.value + "* const", srcPart, "reinterpret_cast<" + R.value + "*>(tl_reduce_scratch)", false));
      }
      if (R.exact && dst.scope == Scope::Fragment) {
        dstPart = L.fresh("results");
        L.add(makeLet(T + "* const", dstPart,
                      "reinterpret_cast<" + T + "*>(tl_reduce_scratch" +
                          (dstBase ? " + " + std::to_string(dstBase) : std::string()) + ")",
                      false));
        resultBase = 0;
      }
      const std::string toScratch = R.exact ? "tl::convert<" + R.value + ">(" : "tl::convert<float>(";
      if (src.scope == Scope::Fragment) {
        L.add(makeComment("each thread writes its registers of '" + src.name + "' to the scratch"));
        eachRegister(src, tile, srcPart, 0, [&](const std::string &r, const std::string &slot) {
          L.add(withAccess(makeStore(slot, toScratch + bufferName(src) + "[" + r + "])"), {L.access(&src)}, {}));
        });
        L.add(makeBarrier("the tile is in the scratch"));
      }
      // The output coordinates of `b` for a line's coordinates: the line's without `dim` (or
      // with it at 0 where b keeps it as extent 1).
      auto outputAt = [&](const ftg::Buffer &b, const std::vector<std::string> &coords) {
        std::vector<std::string> at;
        for (size_t d = 0; d < coords.size(); ++d)
          if (d != dim)
            at.push_back(coords[d]);
          else if (b.shape.size() == tile.size())
            at.push_back("0");
        if (at.empty())
          at.push_back("0"); // a rank-1 source reduces into [1]
        return elementAt(L, b, at);
      };
      // One output element: its line folded along `dim`, then stored (or combined with what
      // `dst` holds when clear = false).
      auto fold = [&](const std::string &o) {
        std::string acc = L.fresh("acc"), t = L.fresh("t");
        L.add(makeLet(T, acc, R.identity(), false));
        std::vector<std::string> coords = lineCoords(tile, dim, o, t);
        std::string element;
        std::vector<Access> reads;
        if (src.scope == Scope::Fragment) {
          std::string flat = coords[0];
          for (size_t d = 1; d < coords.size(); ++d)
            flat = "(" + flat + ") * " + std::to_string(tile[d]) + " + " + coords[d];
          element = srcPart + "[" + flat + "]";
        } else {
          element = elementAt(L, src, coords);
          reads.push_back(L.access(&src));
        }
        L.nest(makeFor(ForRole::Registers, t, "0", std::to_string(tile[dim])), [&] {
          L.add(withAccess(makeStore(acc, R.combine(acc, R.entry(element, plus(offset, t)))), reads, {}));
        });
        if (dst.scope == Scope::Fragment) {
          L.add(makeStore(dstPart + "[" + (resultBase ? std::to_string(resultBase) + " + " : std::string()) + o + "]",
                          R.toScratch(acc)));
          return;
        }
        storeResult(L, n, R, acc, outputAt(dst, coords), R.values ? outputAt(*R.values, coords) : std::string());
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
        if (R.arg) {
          // dst and values share a layout: register r of each holds one output's position and value.
          eachRegister(dst, out, dstPart, resultBase, [&](const std::string &r, const std::string &slot) {
            std::string acc = L.fresh("acc");
            L.add(makeLet(T, acc, slot, false));
            storeResult(L, n, R, acc, bufferName(dst) + "[" + r + "]",
                        R.values ? bufferName(*R.values) + "[" + r + "]" : std::string());
          });
        } else {
          eachRegister(dst, out, dstPart, resultBase, [&](const std::string &r, const std::string &slot) {
            std::string reg = bufferName(dst) + "[" + r + "]", v = R.fromScratch(slot);
            L.add(withAccess(makeStore(reg, n.clear ? v : op + "::combine(" + reg + ", " + v + ")"),
                             n.clear ? std::vector<Access>{} : std::vector<Access>{L.access(&dst)},
                             {L.access(&dst)}));
          });
        }
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
    if (const CallArg *v = c.keywordArg("values"))
      if (auto values = b.operand(v->value)) {
        n.outputs.push_back(*values);
        n.inputs.push_back(*values);
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
    ftg::Buffer *values = n.outputs.size() > 1 ? n.outputs[1].buffer : nullptr;
    // A layout known only by its fragment has no row structure the reductions' lowering reads.
    // (Nor does a blocked tile whose column slices are on separate warp groups.)
    if (src->scope == Scope::Fragment && src->fragment &&
        (src->fragment->kind == FragmentLayout::Generic || src->fragment->colSplit > 1)) {
      rules.error(n.call->getRange(),
                  "not supported yet: a reduction of '" + src->name + "', which holds " + src->fragment->str(),
                  "copy '" + src->name + "' into a fragment or shared buffer of its own and reduce that");
      return;
    }
    // The rows of a reduction along the columns; other reductions leave dst's layout to the
    // rest of inference (the general path reads it back from the scratch whatever it is).
    if (src->scope == Scope::Fragment && dst->scope == Scope::Fragment && src->fragment &&
        src->shape.size() == 2 && n.dim == 1) {
      rules.assign(*dst, src->fragment->rowLayout(), "common: rows of reduced '" + src->name + "'",
                   n.call->getRange());
      if (values)
        rules.assign(*values, src->fragment->rowLayout(), "common: rows of reduced '" + src->name + "'",
                     n.call->getRange());
      return;
    }
    // argmax/argmin's values hold their outputs where dst holds the positions.
    if (values && values->scope == Scope::Fragment && dst->scope == Scope::Fragment) {
      if (dst->fragment && !values->fragment)
        rules.assign(*values, *dst->fragment, "common: positions in '" + dst->name + "'", n.call->getRange());
      else if (values->fragment && !dst->fragment)
        rules.assign(*dst, *values->fragment, "common: values in '" + values->name + "'", n.call->getRange());
    }
  }

  int64_t scratchBytes(const Node &n, const ftg::Graph &) const override {
    return reducesFragmentRows(n) ? 0 : generalScratch(n).bytes;
  }

  int64_t scratchSlotBytes(const Node &n, const ftg::Graph &g) const override {
    if (!reducesFragmentRows(n))
      return 0;
    const FragmentLayout &l = *n.inputs[0].buffer->fragment;
    // One partial result per row and warp of the row.
    FragmentLayout::RowSpread spread = l.rowSpread(g.target->warpSize());
    return spread.warps > 1 ? l.rows * spread.warps * reductionOf(n).accBytes : 0;
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
