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

// The packed and unpacked fragments' layouts, one derived from the other: the unpacked tile
// keeps the packed tile's threads and register order with every register doubled (byte c of a
// thread's vector holds its columns 2c and 2c + 1), so each thread converts the bytes it holds,
// in place, with no data crossing threads. Only blocked layouts (what a copy from global
// memory and the FREE level give) have such a partner.
std::optional<FragmentLayout> unpackedLayout(const FragmentLayout &packed) {
  if (packed.kind != FragmentLayout::Blocked)
    return std::nullopt;
  bool ok = false;
  FragmentLayout l = FragmentLayout::blockedWith(packed.rows, packed.cols * 2, packed.threads, packed.tpr,
                                                 packed.vec * 2, ok, packed.replicas);
  return ok ? std::optional<FragmentLayout>(l) : std::nullopt;
}

std::optional<FragmentLayout> packedLayout(const FragmentLayout &unpacked) {
  if (unpacked.kind != FragmentLayout::Blocked || unpacked.vec % 2 != 0)
    return std::nullopt;
  bool ok = false;
  FragmentLayout l = FragmentLayout::blockedWith(unpacked.rows, unpacked.cols / 2, unpacked.threads, unpacked.tpr,
                                                 unpacked.vec / 2, ok, unpacked.replicas);
  return ok ? std::optional<FragmentLayout>(l) : std::nullopt;
}

// Fragments: each thread unpacks its own registers. Where the packed vector holds whole 32-bit
// words (4 bytes, 4-aligned registers) eight weights at a time with the magic-number
// conversion (tl::dequant_i4x8_regs), else nibble by nibble with the same results.
void lowerDequantFragments(KernelLowering &L, const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  std::optional<FragmentLayout> want = src.fragment ? unpackedLayout(*src.fragment) : std::nullopt;
  if (!want || !dst.fragment || !(*dst.fragment == *want)) {
    L.unsupported(n.call->getRange(), "this dequant_i4 on fragments (dst must hold the columns of src's bytes "
                                      "in the same threads: both blocked layouts, dst's derived from src's)");
    return;
  }
  const ftg::Buffer *scales = n.inputs.size() > 1 ? n.inputs[1].buffer : nullptr;
  const std::string T = cppType(dst.dtype), in = bufferName(src), out = bufferName(dst);
  const int64_t bytes = src.fragment->registers();
  const int64_t cols = dst.fragment->cols;
  const int64_t group = scales && scales->shape.size() == 2 && scales->shape[1] ? cols / *scales->shape[1] : cols;
  // A word's eight columns share one scale (Sema: groups are multiples of 8 columns).
  const bool words = src.fragment->vec % 4 == 0;
  std::vector<Access> reads = {L.access(&src)};
  if (scales)
    reads.push_back(L.access(scales));
  const std::vector<Access> writes = {L.access(&dst)};
  // The scale of dst's register `reg`, read from the shared scales at its row and group.
  auto scaleOf = [&](const std::string &reg) {
    if (!scales)
      return "tl::convert<" + T + ">(1.0f)";
    return elementAt(L, *scales, {dst.fragment->rowOf(kThreadIndex, reg),
                                  "(" + dst.fragment->colOf(kThreadIndex, reg) + ") / " + std::to_string(group)});
  };
  L.tileOp(n, [&] {
    std::string r = L.fresh("r");
    L.add(makeComment(words ? "each thread converts its own registers, one 32-bit word (eight weights) at a time"
                            : "each thread converts its own registers, one nibble at a time"));
    L.nest(makeFor(ForRole::Registers, r, "0", std::to_string(bytes), words ? "4" : "", 0), [&] {
      if (words) {
        L.add(withAccess(makeEval("tl::dequant_i4x8_regs<" + T + ", " + (scales ? "true" : "false") + ">(&" + in +
                                  "[" + r + "], " + scaleOf("2 * " + r) + ", &" + out + "[2 * " + r + "])"),
                         reads, writes));
        return;
      }
      for (int half = 0; half < 2; ++half) {
        std::string reg = "2 * " + r + " + " + std::to_string(half);
        std::string q = "((((int)" + in + "[" + r + "] >> " + std::to_string(half * 4) + ") & 0xF) ^ 8) - 8";
        L.add(withAccess(makeStore(out + "[" + reg + "]",
                                   "tl::convert<" + T + ">((float)(" + q + ")" +
                                       (scales ? " * tl::convert<float>(" + scaleOf(reg) + ")" : std::string()) + ")"),
                         reads, writes));
      }
    });
  });
}

void lowerDequant(KernelLowering &L, const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  if (src.scope == Scope::Fragment)
    return lowerDequantFragments(L, n);
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

  // Fragments: dst's layout is src's with every register doubled, or src's dst's halved
  // (unpackedLayout), whichever is known first.
  void inferLayout(Node &n, ftg::InferLevel level, ftg::LayoutRules &rules) const override {
    if (level != ftg::InferLevel::Common)
      return;
    ftg::Buffer *src = n.inputs[0].buffer, *dst = n.outputs[0].buffer;
    if (src->scope != Scope::Fragment || dst->scope != Scope::Fragment)
      return;
    if (src->fragment && !dst->fragment) {
      if (auto l = unpackedLayout(*src->fragment))
        rules.assign(*dst, *l, "common: unpacked bytes of '" + src->name + "'", n.call->getRange());
    } else if (dst->fragment && !src->fragment) {
      if (auto l = packedLayout(*dst->fragment))
        rules.assign(*src, *l, "common: packed columns of '" + dst->name + "'", n.call->getRange());
    }
  }

  void lower(const Node &n, KernelLowering &L) const override { lowerDequant(L, n); }
};

const DequantI4Op dequantI4Op;
const bool registered = ftg::registerTileOp(dequantI4Op);

} // namespace

} // namespace tlc::ops
