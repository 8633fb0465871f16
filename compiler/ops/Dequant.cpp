// dequant_i4(src, dst, scales?): unpacks a shared tile of signed 4-bit weights, two per byte
// (weight 2c in the low nibble of byte c of its row), into a shared f16/bf16 tile, each weight
// times its row's scale of its group of columns when `scales` is given:
//   dst[r, c] = T(q(src[r, c / 2], c % 2)) * scales[r, c / (C / G)]      (dst [R, C], scales [R, G])
//
// Why an operator rather than a parallel loop: a loop unpacks one nibble per element (a byte
// load, shifts, a conversion, a 2-byte store), which costs W4A16 GEMMs most of their time. Here
// each thread takes whole 32-bit words (eight weights, one scale: Sema requires the groups to
// be multiples of 8 columns), converts them with tl::dequant_i4x8 (stdlib/tl/dequant.h: the
// magic-number conversion, a few lop3/prmt/packed-half operations per eight weights) and
// stores 16 bytes. Where a layout splits those vectors (an annotated layout, gfx9's 8-byte
// swizzle units) it falls back to element by element, with the same rounding.
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

constexpr int64_t kWeightsPerWord = 8; // one 32-bit word of packed weights

// Whether a shared buffer's layout keeps `v` consecutive columns at consecutive offsets.
bool keepsRun(const ftg::Buffer &b, int64_t v) { return !b.shared || b.shared->vectorRun(v) == v; }

void lowerDequant(KernelLowering &L, const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  const ftg::Buffer *scales = n.inputs.size() > 1 ? n.inputs[1].buffer : nullptr;
  std::vector<int64_t> tile = constantTile(n.outputs[0]);
  if (tile.size() != 2) {
    L.unsupported(n.call->getRange(), "this dequant_i4 (dst must be a 2-d tile of constant extents)");
    return;
  }
  const int64_t rows = tile[0], cols = tile[1];
  const int64_t group = scales && scales->shape.size() == 2 && scales->shape[1] ? cols / *scales->shape[1] : cols;
  const std::string T = cppType(dst.dtype);
  // Eight weights per step where both tiles keep the word and the 16-byte vector whole.
  const bool vectorized = keepsRun(src, kWeightsPerWord / 2) && keepsRun(dst, kWeightsPerWord);
  const int64_t perStep = vectorized ? kWeightsPerWord : 1;
  const int64_t steps = rows * cols / perStep, threads = L.g.threads;

  std::vector<Access> reads = {L.access(&src)};
  if (scales)
    reads.push_back(L.access(scales));
  const std::vector<Access> writes = {L.access(&dst)};

  L.tileOp(n, [&] {
    std::string c = L.fresh("c"), it;
    StmtPtr loop;
    if (steps % threads == 0) {
      // A fixed trip count: every address is tid-based plus constants.
      it = L.fresh("it");
      loop = makeFor(ForRole::Threads, it, "0", std::to_string(steps / threads), "", steps / threads <= 8 ? 0 : 4);
    } else {
      loop = makeFor(ForRole::Threads, c, kThreadIndex, std::to_string(steps), std::to_string(threads), 4);
    }
    L.nest(std::move(loop), [&] {
      if (!it.empty())
        L.add(makeLet("const int", c, kThreadIndex + " + " + it + " * " + std::to_string(threads), false));
      std::string row = L.fresh("row"), col = L.fresh("col");
      int64_t perRow = cols / perStep;
      L.add(makeLet("const int", row, c + " / " + std::to_string(perRow), false));
      L.add(makeLet("const int", col, "(" + c + " % " + std::to_string(perRow) + ")" +
                                          (perStep > 1 ? " * " + std::to_string(perStep) : ""), false));
      std::string byte = elementAt(L, src, {row, col + " / 2"});
      std::string scale = scales ? elementAt(L, *scales, {row, col + " / " + std::to_string(group)})
                                 : "tl::convert<" + T + ">(1.0f)";
      if (vectorized) {
        L.add(withAccess(makeEval("tl::dequant_i4x8<" + T + ", " + (scales ? "true" : "false") + ">(&" + byte +
                                  ", " + scale + ", &" + elementAt(L, dst, {row, col}) + ")"),
                         reads, writes));
        return;
      }
      // Element by element: the nibble sign-extended, then the product rounded once, as the
      // vector path rounds it.
      std::string q = "((((int)" + byte + " >> (" + col + " % 2 * 4)) & 0xF) ^ 8) - 8";
      std::string value = "tl::convert<" + T + ">((float)(" + q + ")" +
                           (scales ? " * tl::convert<float>(" + scale + ")" : std::string()) + ")";
      L.add(withAccess(makeStore(elementAt(L, dst, {row, col}), value), reads, writes));
    });
  });
}

class DequantI4Op : public ftg::TileOp {
public:
  ftg::NodeKind kind() const override { return ftg::NodeKind::DequantI4; }
  bool buildsFrom(Builtin b) const override { return b == Builtin::DequantI4; }

  void build(Node &n, const CallExpr &c, ftg::NodeBuilder &b) const override {
    auto src = b.operand(argument(c, 0, "src"));
    auto dst = b.operand(argument(c, 1, "dst"));
    if (!src || !dst)
      return;
    n.inputs.push_back(*src);
    if (const Expr *s = argument(c, 2, "scales"))
      if (auto scales = b.operand(s))
        n.inputs.push_back(*scales);
    n.outputs.push_back(*dst);
  }

  std::string describe(const Node &n) const override {
    std::string s = "dequant_i4: " + n.inputs[0].buffer->name;
    if (n.inputs.size() > 1)
      s += " * " + n.inputs[1].buffer->name;
    return s + " -> " + n.outputs[0].buffer->name;
  }

  void lower(const Node &n, KernelLowering &L) const override { lowerDequant(L, n); }
};

const DequantI4Op dequantI4Op;
const bool registered = ftg::registerTileOp(dequantI4Op);

} // namespace

} // namespace tlc::ops
