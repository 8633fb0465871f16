// cumsum(src, dst, dim = 0, reverse = false): inclusive prefix sums of a tile along `dim`
// (suffix sums with reverse), src and dst of one tile shape, possibly the same buffer;
// cummax and cummin, the running maximum and minimum, take the same arguments and differ only
// in the scan's start and step (struct Scan), NaN propagating as in tl::max / tl::min.
//
// Each line along `dim` is scanned by one thread, serially: a line is read before the element
// it writes, so an in-place scan is safe, and the sum of a line is exact in order (float
// tiles add in f32, f64 in f64, integers in 64 bits). Shared tiles are scanned where they are;
// fragments, whose lines are spread over threads by their layout, go through the shared
// scratch area (written by their owners, scanned, read back), a correct first lowering that a
// shuffle scan for lines inside one warp can replace. The destination fragment takes the
// source's layout (COMMON), as a copy does.
#include "ops/Arguments.h"
#include "ops/Lines.h"

#include "ir/TileOp.h"
#include "lower/KernelLowering.h"

namespace tlc::ops {

using namespace lower;
using lower::Stmt; // the loop IR's, not the AST's
using ftg::Node;
using ftg::Operand;

namespace {


// The type a line is scanned in.
std::string accumulatorType(DType t) {
  if (t == DType::F64)
    return "double";
  return isFloat(t) ? "float" : "int64_t";
}

// A scan as data: the accumulator's start and the step that folds element `x` into it.
struct Scan {
  std::string start;
  std::function<std::string(const std::string &acc, const std::string &x)> step;
};

Scan scanOf(Builtin b, const std::string &accType) {
  if (b == Builtin::Cumsum)
    return {"0", [](const std::string &acc, const std::string &x) { return acc + " + " + x; }};
  bool isMax = b == Builtin::Cummax;
  std::string fn = isMax ? "tl::max(" : "tl::min(";
  return {isMax ? "tl::neg_inf<" + accType + ">()" : "tl::inf<" + accType + ">()",
          [fn](const std::string &acc, const std::string &x) { return fn + acc + ", " + x + ")"; }};
}

// Threads stride over the lines of `tile`; each scans its line with `element(coords)` giving
// the source and destination references of an element.
void scanLines(KernelLowering &L, const Node &n, const std::vector<int64_t> &tile, DType srcType,
               DType dstType, const std::function<std::pair<std::string, std::string>(const std::vector<std::string> &)> &element,
               const std::vector<Access> &reads, const std::vector<Access> &writes) {
  size_t dim = size_t(n.dim);
  int64_t lines = 1;
  for (size_t i = 0; i < tile.size(); ++i)
    if (i != dim)
      lines *= tile[i];
  int64_t length = tile[dim];
  std::string line = L.fresh("line"), t = L.fresh("t"), acc = L.fresh("acc");
  std::string at = n.reverse ? "(" + std::to_string(length - 1) + " - " + t + ")" : t;
  std::string accType = accumulatorType(srcType);
  Scan scan = scanOf(n.call->builtin, accType);
  L.nest(makeFor(ForRole::Threads, line, kThreadIndex, std::to_string(lines), std::to_string(L.g.threads)), [&] {
    L.add(makeLet(accType, acc, scan.start, false));
    // (Not a structured binding: C++17 lambdas cannot capture one, and clang says so.)
    std::pair<std::string, std::string> refs = element(lineCoords(tile, dim, line, at));
    const std::string &src = refs.first, &dst = refs.second;
    L.nest(makeFor(ForRole::Registers, t, "0", std::to_string(length)), [&] {
      L.add(withAccess(makeStore(acc, scan.step(acc, "tl::convert<" + accType + ">(" + src + ")")), reads, {}));
      L.add(withAccess(makeStore(dst, "tl::convert<" + cppType(dstType) + ">(" + acc + ")"), {}, writes));
    });
  });
}

void lowerShared(KernelLowering &L, const Node &n, const std::vector<int64_t> &tile) {
  const Operand &src = n.inputs[0], &dst = n.outputs[0];
  std::vector<std::optional<int64_t>> shape(tile.begin(), tile.end());
  TileDims s, d;
  std::vector<Access> reads = L.readsOf([&] {
    s = tileDims(L, src, shape);
    d = tileDims(L, dst, shape);
  });
  if (!s.ok || !d.ok) {
    L.unsupported(n.call->getRange(), "this " + n.call->callee + " (both regions must have the tile's dimensions)");
    return;
  }
  // tileDims numbers the tile's dimensions without its unit ones.
  auto squeeze = [&](const std::vector<std::string> &coords) {
    std::vector<std::string> kept;
    for (size_t i = 0; i < tile.size(); ++i)
      if (tile[i] != 1)
        kept.push_back(coords[i]);
    return kept;
  };
  std::vector<Access> srcReads = reads, writes = {L.access(dst.buffer)};
  srcReads.push_back(L.access(src.buffer));
  scanLines(L, n, tile, src.buffer->dtype, dst.buffer->dtype,
            [&](const std::vector<std::string> &coords) {
              return std::pair{elementAt(L, *src.buffer, s.indices(squeeze(coords))),
                               elementAt(L, *dst.buffer, d.indices(squeeze(coords)))};
            },
            srcReads, writes);
}

void lowerFragment(KernelLowering &L, const Node &n, const std::vector<int64_t> &tile) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  const FragmentLayout &F = *src.fragment;
  auto registersOf = [&](const ftg::Buffer &b, const std::function<StmtPtr(const std::string &, const std::string &)> &leaf) {
    std::string r = L.fresh("r");
    L.nest(makeFor(ForRole::Registers, r, "0", std::to_string(F.registers()), "", 0), [&] {
      std::string at = L.fresh("s");
      L.add(makeLet("const int", at, scratchIndex(F, tile, r), false));
      L.add(leaf(r, "tl_reduce_scratch[" + at + "]"));
    });
  };
  // The scratch has no buffer of its own: the barriers around its use are this protocol's.
  L.add(makeBarrier("the scratch area may still be read"));
  L.add(makeComment("each thread writes its registers of '" + src.name + "' to the scratch"));
  registersOf(src, [&](const std::string &r, const std::string &slot) {
    return withAccess(makeStore(slot, "tl::convert<float>(" + bufferName(src) + "[" + r + "])"),
                      {L.access(&src)}, {});
  });
  L.add(makeBarrier("the tile is in the scratch"));
  L.add(makeComment("one thread scans each line in the scratch"));
  int64_t cols = tile.size() == 2 ? tile[1] : 1;
  scanLines(L, n, tile, DType::F32, DType::F32,
            [&](const std::vector<std::string> &c) {
              std::string flat = tile.size() == 2 ? "(" + c[0] + ") * " + std::to_string(cols) + " + " + c[1] : c[0];
              std::string ref = "tl_reduce_scratch[" + flat + "]";
              return std::pair{ref, ref};
            },
            {}, {});
  L.add(makeBarrier("the scanned lines are visible"));
  L.add(makeComment("each thread reads its registers of '" + dst.name + "' back"));
  registersOf(dst, [&](const std::string &r, const std::string &slot) {
    return withAccess(makeStore(bufferName(dst) + "[" + r + "]", "tl::convert<" + cppType(dst.dtype) + ">(" + slot + ")"),
                      {}, {L.access(&dst)});
  });
  L.add(makeBarrier("the scratch area may be reused"));
}

class CumsumOp : public ftg::TileOp {
public:
  ftg::NodeKind kind() const override { return ftg::NodeKind::Cumsum; }
  bool buildsFrom(Builtin b) const override { return isScan(b); }

  void build(Node &n, const CallExpr &c, ftg::NodeBuilder &b) const override {
    const Expr *srcArg = argument(c, 0, "src"), *dstArg = argument(c, 1, "dst");
    auto src = b.operand(srcArg);
    auto dst = b.operand(dstArg ? dstArg : srcArg); // without dst: in place
    if (!src || !dst)
      return;
    n.inputs.push_back(*src);
    n.outputs.push_back(*dst);
    int64_t rank = int64_t(src->region.tileShape().size());
    int64_t d = intArgument(c, "dim", 0);
    n.dim = int(d < 0 ? d + rank : d);
    n.reverse = boolArgument(c, "reverse", false);
    Scope from = src->buffer->scope, to = dst->buffer->scope;
    if (from != to)
      b.unsupported(c.calleeRange, c.callee + " between a " + scopeName(from).str() + " and a " +
                                       scopeName(to).str() + " buffer",
                    "scan within one kind of buffer, and copy the result");
    else if (from == Scope::Fragment && (!isFloat(src->buffer->dtype) || src->buffer->dtype == DType::F64 ||
                                         !isFloat(dst->buffer->dtype) || dst->buffer->dtype == DType::F64))
      b.unsupported(c.calleeRange, c.callee + " of " + dtypeName(src->buffer->dtype).str() + " fragments (f16, "
                                   "bf16 and f32 fragments scan in f32)",
                    "scan in a shared buffer, which keeps integers exact");
  }

  void inferLayout(Node &n, ftg::InferLevel level, ftg::LayoutRules &rules) const override {
    if (level == ftg::InferLevel::Common)
      rules.shareLayout(n, "cumsum of", "cumsum into");
  }

  int64_t scratchBytes(const Node &n, const ftg::Graph &) const override {
    const ftg::Buffer &src = *n.inputs[0].buffer;
    return src.scope == Scope::Fragment ? src.numElements() * 4 : 0; // the tile in f32
  }

  std::string describe(const Node &n) const override {
    return n.call->callee + (n.reverse ? " (reverse)" : "") + " along dim " + std::to_string(n.dim) +
           ": " + n.inputs[0].buffer->name + " -> " + n.outputs[0].buffer->name;
  }

  void lower(const Node &n, KernelLowering &L) const override {
    const Operand &src = n.inputs[0], &dst = n.outputs[0];
    std::vector<int64_t> tile = constantTile(src);
    if (tile.empty() || constantTile(dst) != tile) {
      L.unsupported(n.call->getRange(), "this " + n.call->callee + " (src and dst need one tile shape of constant extents)");
      return;
    }
    if (n.dim < 0 || size_t(n.dim) >= tile.size()) {
      L.unsupported(n.call->getRange(), n.call->callee + " along dim " + std::to_string(n.dim) + " of a " +
                                            std::to_string(tile.size()) + "-d tile");
      return;
    }
    L.tileOp(n, [&] {
      L.scope([&] {
        if (src.buffer->scope == Scope::Fragment) {
          auto whole = [&](const ftg::Buffer &b) {
            return b.shape.size() == tile.size() &&
                   std::equal(tile.begin(), tile.end(), b.shape.begin(),
                              [](int64_t t, const std::optional<int64_t> &e) { return e && *e == t; });
          };
          if (!src.buffer->fragment || !dst.buffer->fragment || *src.buffer->fragment != *dst.buffer->fragment ||
              !whole(*src.buffer) || !whole(*dst.buffer)) {
            L.unsupported(n.call->getRange(), n.call->callee + " of part of a fragment, or between fragments of "
                                              "different layouts");
            return;
          }
          lowerFragment(L, n, tile);
        } else {
          lowerShared(L, n, tile);
        }
      });
    });
  }
};

const CumsumOp cumsumOp;
const bool registered = ftg::registerTileOp(cumsumOp);

} // namespace

} // namespace tlc::ops
