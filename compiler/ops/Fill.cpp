// fill and clear: registers are set whole by each thread; shared and global regions by
// threads striding over the region.
#include "ops/Arguments.h"

#include "ir/TileOp.h"
#include "lower/KernelLowering.h"

namespace tlc::ops {

using namespace lower;
using lower::Stmt; // the loop IR's, not the AST's
using ftg::Node;

namespace {

void lowerFill(KernelLowering &L, const Node &n) {
  const ftg::Operand &dst = n.outputs[0];
  ftg::Buffer &b = *dst.buffer;
  std::string value;
  std::vector<Access> valueReads;
  if (n.call->builtin == Builtin::Clear) {
    value = "tl::convert<" + cppType(b.dtype) + ">(0.0f)";
  } else {
    const CallArg *v = n.call->keywordArg("value");
    valueReads = L.readsOf([&] { value = L.exprAs(v ? v->value : n.call->positional()[1], b.dtype); });
  }
  L.tileOp(n, [&] {
    std::string r = L.fresh("r");
    if (b.scope == Scope::Fragment || b.scope == Scope::Local) {
      int64_t count = b.scope == Scope::Fragment ? b.fragment->registers() : b.numElements();
      // Registers are filled whole; a part of them would need the element-to-register map.
      if (!ftg::coversWholeBuffer(dst.region, b)) {
        L.unsupported(n.call->getRange(), "filling part of a " + scopeName(b.scope).str() +
                                            " buffer (fill the whole buffer, or assign the "
                                            "elements one by one)");
        return;
      }
      L.add(makeCompactFor(r, "0", std::to_string(count),
                         withAccess(makeStore(bufferName(b) + "[" + r + "]", value), valueReads, {L.access(&b)})));
      return;
    }
    // Shared or global: threads stride over the region.
    std::vector<std::optional<int64_t>> shape = dst.region.tileShape();
    TileDims d;
    for (const Access &a : L.readsOf([&] { d = tileDims(L, dst, shape); }))
      valueReads.push_back(a);
    if (!d.ok) {
      L.unsupported(n.call->getRange(), "this fill (the region extent must be a compile-time constant)");
      return;
    }
    int64_t total = 1;
    for (int64_t x : d.extents)
      total *= x;
    L.nest(makeFor(ForRole::Threads, r, kThreadIndex, std::to_string(total), std::to_string(L.g.threads)), [&] {
      std::vector<std::string> coords(d.extents.size());
      std::string rest = r;
      for (size_t i = d.extents.size(); i-- > 0;) {
        coords[i] = i == 0 ? rest : rest + " % " + std::to_string(d.extents[i]);
        rest = "(" + rest + " / " + std::to_string(d.extents[i]) + ")";
      }
      auto idx = d.indices(coords);
      std::string pred = inBounds(L, b, idx, d);
      L.guarded(pred, withAccess(makeStore(elementAt(L, b, idx), value), valueReads, {L.access(&b)}));
    });
  });
}


class FillOp : public ftg::TileOp {
public:
  ftg::NodeKind kind() const override { return ftg::NodeKind::Fill; }
  bool buildsFrom(Builtin b) const override { return b == Builtin::Fill || b == Builtin::Clear; }

  void build(Node &n, const CallExpr &c, ftg::NodeBuilder &b) const override {
    if (auto dst = b.operand(argument(c, 0, "dst")))
      n.outputs.push_back(*dst);
  }

  std::string describe(const Node &n) const override {
    return n.call->callee + "(" + n.outputs[0].buffer->name + ")";
  }
  void lower(const Node &n, KernelLowering &L) const override { lowerFill(L, n); }
};

const FillOp fillOp;
const bool registered = ftg::registerTileOp(fillOp);

} // namespace

} // namespace tlc::ops
