#include "ir/TileOp.h"

#include <cassert>
#include <vector>

namespace tlc::ftg {

namespace {

std::vector<const TileOp *> &registry() {
  static std::vector<const TileOp *> ops; // filled before main() by compiler/ops/
  return ops;
}

} // namespace

bool registerTileOp(const TileOp &op) {
  registry().push_back(&op);
  return true;
}

const TileOp *tileOpFor(Builtin b) {
  const TileOp *found = nullptr;
  for (const TileOp *op : registry())
    if (op->buildsFrom(b)) {
      assert(!found && "two tile operators registered for one builtin");
      found = op;
    }
  return found;
}

void LayoutRules::shareLayout(Node &n, const std::string &fromSrc, const std::string &fromDst) {
  if (n.inputs.empty() || n.outputs.empty())
    return;
  Buffer *src = n.inputs[0].buffer, *dst = n.outputs[0].buffer;
  if (src->scope != Scope::Fragment || dst->scope != Scope::Fragment || src->shape != dst->shape)
    return;
  if (src->fragment)
    assign(*dst, *src->fragment, "common: " + fromSrc + " '" + src->name + "'", n.call->getRange());
  else if (dst->fragment)
    assign(*src, *dst->fragment, "common: " + fromDst + " '" + dst->name + "'", n.call->getRange());
}

std::string TileOp::describe(const Node &n) const { return nodeKindName(n.kind).str(); }

void TileOp::lowerPrefetch(const Node &n, lower::KernelLowering &L) const {
  assert(false && "the pipeline planner prefetched an operator that cannot be issued ahead");
  lower(n, L);
}

} // namespace tlc::ftg
