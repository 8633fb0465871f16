// dequant_i4(src, dst, scales?, zeros = ?): unpacks a shared tile of 4-bit weights, two per
// byte (weight 2c in the low nibble of byte c of its row; signed unless src is declared u4),
// into a shared f16/bf16 tile, each weight minus its group's zero point and times its group's
// scale when given (dst [R, C], scales and zeros [R, G], g = c / (C / G)):
//   dst[r, c] = T(q * scales[r, g])                              without zeros (one rounding)
//   dst[r, c] = T(T(q - zeros[r, g]) * scales[r, g])             with zeros (two roundings)
//
// Why an operator rather than a parallel loop: a loop unpacks one nibble per element (a byte
// load, shifts, a conversion, a 2-byte store), which costs W4A16 GEMMs most of their time. Here
// each thread takes whole 32-bit words (eight weights, one scale: Sema requires the groups to
// be multiples of 8 columns), converts them with tl::dequant_i4x8 (stdlib/tl/dequant.h: the
// magic-number conversion, a few lop3/prmt/packed-half operations per eight weights) and
// stores 16 bytes. Where a layout splits those vectors (an annotated layout, gfx9's 8-byte
// swizzle units) it falls back to element by element, with the same rounding.
#include "ops/Dequant.h"
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

// The operands past src and dst: scales and zero points (Sema: zeros only with scales).
struct Params {
  const ftg::Buffer *scales = nullptr, *zeros = nullptr;
  // src's weights: two's complement (i4, and u8/i8 bytes), unsigned (u4) or FP4 (f4e2m1).
  DType weights = DType::I4;
  // Scales and zeros [G, R] (transpose_scales) rather than [R, G].
  bool transposed = false;
  // The scales are the gemm's to apply (infer/ScaleFolding.cpp): the weights convert unscaled.
  bool unscaled = false;
  explicit Params(const Node &n)
      : scales(n.inputs.size() > 1 ? n.inputs[1].buffer : nullptr),
        zeros(n.inputs.size() > 2 ? n.inputs[2].buffer : nullptr),
        weights(n.inputs[0].buffer->packed.value_or(DType::I4)), transposed(n.scalesTransposed),
        unscaled(n.scalesFolded) {}
  bool scaled() const { return scales && !unscaled; }

  // The groups per row of dst (C columns): scales' [R, G] or, transposed, [G, R].
  int64_t groupColumns(int64_t cols) const {
    if (!scales || scales->shape.size() != 2)
      return cols;
    const auto &g = scales->shape[transposed ? 0 : 1];
    return g && *g ? cols / *g : cols;
  }
  // The index of (row, group) in scales and zeros.
  std::vector<std::string> at(const std::string &row, const std::string &group) const {
    return transposed ? std::vector<std::string>{group, row} : std::vector<std::string>{row, group};
  }
  std::string scaleAt(KernelLowering &L, const std::string &row, const std::string &group) const {
    return elementAt(L, *scales, at(row, group));
  }

  // What the operator reads: src, and the scales (unless the gemm applies them) and zero
  // points given.
  std::vector<Access> reads(KernelLowering &L, const ftg::Buffer &src) const {
    std::vector<Access> out = {L.access(&src)};
    for (const ftg::Buffer *b : {scaled() ? scales : nullptr, zeros})
      if (b)
        out.push_back(L.access(b));
    return out;
  }
  // The scale without scales: one, which the unscaled steps ignore.
  static std::string one(const std::string &T) { return "tl::convert<" + T + ">(1.0f)"; }

  // The per-thread step of tl/dequant.h, eight weights: `tl::dequant_i4x8<T, Scaled>(` (or
  // u4x8, fp4x8), and with zero points `tl::dequant_i4x8<T>(`, whose arguments the caller
  // completes.
  std::string step(const std::string &T, const char *suffix) const {
    const char *form = weights == DType::U4 ? "u4x8" : weights == DType::F4E2M1 ? "fp4x8" : "i4x8";
    std::string name = std::string("tl::dequant_") + form + suffix;
    return name + "<" + T + (zeros ? "" : scaled() ? ", true" : ", false") + ">(";
  }
  // The zero point of group `group` of row `row`, in T: an element of `zeros`, or, with zero
  // points packed as u4 (as GPTQ and AWQ store them), the nibble of group g in byte g / 2.
  std::string zeroAt(KernelLowering &L, const std::string &T, const std::string &row,
                     const std::string &group) const {
    if (!zeros->packed)
      return elementAt(L, *zeros, at(row, group));
    return "tl::convert<" + T + ">(" + packedElementAt(L, *zeros, at(row, group)) + ")";
  }
  // The scale (zero point) of register `reg` of a fragment dst in layout `l`, at the register's
  // row and its column's group of `group` columns: one without scales, "" without zeros.
  std::string registerScale(KernelLowering &L, const FragmentLayout &l, const std::string &reg, int64_t group,
                            const std::string &T) const {
    return scaled() ? scaleAt(L, l.rowOf(kThreadIndex, reg), registerGroup(l, reg, group)) : one(T);
  }
  std::string registerZero(KernelLowering &L, const FragmentLayout &l, const std::string &reg, int64_t group,
                           const std::string &T) const {
    return zeros ? zeroAt(L, T, l.rowOf(kThreadIndex, reg), registerGroup(l, reg, group)) : std::string();
  }
  static std::string registerGroup(const FragmentLayout &l, const std::string &reg, int64_t group) {
    return "(" + l.colOf(kThreadIndex, reg) + ") / " + std::to_string(group);
  }
  // Its scale and zero-point arguments: "scale, " or "scale, zero, ".
  std::string scaleArgs(const std::string &scale, const std::string &zero) const {
    return scale + ", " + (zeros ? zero + ", " : std::string());
  }

  // Element by element (the steps' fallback): nibble `shift` of `byte` extended, then the
  // same roundings as tl/dequant.h's steps.
  std::string element(const std::string &T, const std::string &byte, const std::string &shift,
                      const std::string &scale, const std::string &zero) const {
    std::string q = "(((int)" + byte + " >> " + shift + ") & 0xF)";
    std::string value = weights == DType::F4E2M1 ? "tl::fp4_to_float(" + q + ")"
                        : weights == DType::U4   ? "(float)" + q
                                                 : "(float)((" + q + " ^ 8) - 8)";
    if (zeros)
      value = "tl::convert<float>(tl::convert<" + T + ">(" + value + " - tl::convert<float>(" + zero + ")))";
    return "tl::convert<" + T + ">(" + value + (scaled() ? " * tl::convert<float>(" + scale + ")" : std::string()) +
           ")";
  }
};

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
                                                 packed.vec * 2, ok, packed.replicas, packed.colSplit);
  return ok ? std::optional<FragmentLayout>(l) : std::nullopt;
}

std::optional<FragmentLayout> packedLayout(const FragmentLayout &unpacked) {
  if (unpacked.kind != FragmentLayout::Blocked || unpacked.vec % 2 != 0)
    return std::nullopt;
  bool ok = false;
  FragmentLayout l = FragmentLayout::blockedWith(unpacked.rows, unpacked.cols / 2, unpacked.threads, unpacked.tpr,
                                                 unpacked.vec / 2, ok, unpacked.replicas, unpacked.colSplit);
  return ok ? std::optional<FragmentLayout>(l) : std::nullopt;
}

// Fragments: each thread unpacks its own registers. Where the packed vector holds whole 32-bit
// words (4 bytes, 4-aligned registers) eight weights at a time with the magic-number
// conversion (tl::dequant_i4x8_regs), else nibble by nibble with the same results.
void lowerDequantFragments(KernelLowering &L, const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  std::optional<FragmentLayout> want = src.fragment ? unpackedLayout(*src.fragment) : std::nullopt;
  if (!want || !dst.fragment || !(*dst.fragment == *want)) {
    // Typically dst's layout was fixed by another operator (a gemm's B in registers).
    L.unsupported(n.call->getRange(),
                  "this dequant_i4 on fragments (dst must hold the columns of src's bytes in the same threads: "
                  "both blocked layouts, dst's derived from src's)",
                  "where another operator fixes dst's layout (a gemm operand in registers), dequantize into a "
                  "shared buffer and copy that into the fragment");
    return;
  }
  const Params p(n);
  const std::string T = cppType(dst.dtype), in = bufferName(src), out = bufferName(dst);
  const int64_t bytes = src.fragment->registers();
  const int64_t cols = dst.fragment->cols;
  const int64_t group = p.groupColumns(cols);
  // A word's eight columns share one scale (Sema: groups are multiples of 8 columns).
  const bool words = src.fragment->vec % 4 == 0;
  const std::vector<Access> reads = p.reads(L, src);
  const std::vector<Access> writes = {L.access(&dst)};
  auto scaleOf = [&](const std::string &reg) { return p.registerScale(L, *dst.fragment, reg, group, T); };
  auto zeroOf = [&](const std::string &reg) { return p.registerZero(L, *dst.fragment, reg, group, T); };
  L.tileOp(n, [&] {
    std::string r = L.fresh("r");
    L.add(makeComment(words ? "each thread converts its own registers, one 32-bit word (eight weights) at a time"
                            : "each thread converts its own registers, one nibble at a time"));
    L.nest(makeFor(ForRole::Registers, r, "0", std::to_string(bytes), words ? "4" : "", 0), [&] {
      if (words) {
        std::string first = "2 * " + r;
        L.add(withAccess(makeEval(p.step(T, "_regs") + "&" + in + "[" + r + "], " +
                                  p.scaleArgs(scaleOf(first), zeroOf(first)) + "&" + out + "[" + first + "])"),
                         reads, writes));
        return;
      }
      for (int half = 0; half < 2; ++half) {
        std::string reg = "2 * " + r + " + " + std::to_string(half);
        L.add(withAccess(makeStore(out + "[" + reg + "]", p.element(T, in + "[" + r + "]", std::to_string(half * 4),
                                                                    scaleOf(reg), zeroOf(reg))),
                         reads, writes));
      }
    });
  });
}

} // namespace

std::string foldedScale(KernelLowering &L, const Node &dequant, int64_t reg) {
  const FragmentLayout &l = *dequant.outputs[0].buffer->fragment;
  const Params p(dequant);
  const std::string r = std::to_string(reg);
  return p.scaleAt(L, l.rowOf(kThreadIndex, r), Params::registerGroup(l, r, p.groupColumns(l.cols)));
}

namespace {

// Whether every thread's registers 2p and 2p + 1 hold columns c and c + 1 (c even) of one row,
// so that a pair is one byte of src and four pairs one 32-bit word for the magic-number
// conversion. Decided on the layout's own elements (tiles are small): accumulator and operand
// layouts of the tensor cores, and blocked ones of even vectors, have it.
bool holdsBytePairs(const FragmentLayout &l) {
  const int64_t regs = l.registers();
  if (regs % kWeightsPerWord != 0)
    return false;
  for (int64_t t = 0; t < l.threads; ++t)
    for (int64_t r = 0; r < regs; r += 2) {
      const int64_t c = l.colAt(t, r);
      if (c % 2 != 0 || l.rowAt(t, r + 1) != l.rowAt(t, r) || l.colAt(t, r + 1) != c + 1)
        return false;
    }
  return true;
}

// A shared tile into a fragment: each thread reads the bytes of the elements its registers hold,
// whatever layout another operator gave the fragment (a wgmma's A operand: no shared tile of
// unpacked weights, no barrier between unpacking and the tensor cores). Where the layout pairs
// registers as holdsBytePairs says, four byte loads make a word and the word converts at once,
// each pair with its own row's scale and zero point (tl::dequant_i4x8_pairs); else nibble by
// nibble, with the same results.
void lowerDequantIntoFragment(KernelLowering &L, const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  if (!dst.fragment) {
    L.unsupported(n.call->getRange(), "this dequant_i4 (dst has no fragment layout)");
    return;
  }
  const FragmentLayout &layout = *dst.fragment;
  const Params p(n);
  const std::string T = cppType(dst.dtype), out = bufferName(dst);
  const int64_t regs = layout.registers(), cols = layout.cols;
  const int64_t group = p.groupColumns(cols);
  const bool words = holdsBytePairs(layout);
  const std::vector<Access> reads = p.reads(L, src);
  const std::vector<Access> writes = {L.access(&dst)};
  auto rowOf = [&](const std::string &reg) { return layout.rowOf(kThreadIndex, reg); };
  auto colOf = [&](const std::string &reg) { return "(" + layout.colOf(kThreadIndex, reg) + ")"; };
  auto byteOf = [&](const std::string &reg) { return elementAt(L, src, {rowOf(reg), colOf(reg) + " / 2"}); };
  auto scaleOf = [&](const std::string &reg) { return p.registerScale(L, layout, reg, group, T); };
  auto zeroOf = [&](const std::string &reg) { return p.registerZero(L, layout, reg, group, T); };
  L.tileOp(n, [&] {
    std::string r = L.fresh("r");
    L.add(makeComment(words ? "each thread reads the bytes of its registers' weights, four pairs (one 32-bit word) "
                              "at a time, each pair scaled by its own row's group"
                            : "each thread reads the byte of each of its registers' weights, one nibble at a time"));
    L.nest(makeFor(ForRole::Registers, r, "0", std::to_string(regs), words ? "8" : "", 0), [&] {
      if (words) {
        std::vector<std::string> pair;
        for (int k = 0; k < 4; ++k)
          pair.push_back(r + " + " + std::to_string(2 * k));
        auto quad = [&](auto of) {
          return "tl::detail::quad<" + T + ">(" + of(pair[0]) + ", " + of(pair[1]) + ", " + of(pair[2]) + ", " +
                 of(pair[3]) + ")";
        };
        std::string word = "tl::bytes_word(" + byteOf(pair[0]) + ", " + byteOf(pair[1]) + ", " + byteOf(pair[2]) +
                           ", " + byteOf(pair[3]) + ")";
        L.add(withAccess(makeEval(p.step(T, "_pairs") + word + ", " +
                                  p.scaleArgs(quad(scaleOf), p.zeros ? quad(zeroOf) : std::string()) + "&" + out +
                                  "[" + r + "])"),
                         reads, writes));
        return;
      }
      L.add(withAccess(makeStore(out + "[" + r + "]", p.element(T, byteOf(r), "(" + colOf(r) + " % 2 * 4)",
                                                                scaleOf(r), zeroOf(r))),
                       reads, writes));
    });
  });
}

void lowerDequant(KernelLowering &L, const Node &n) {
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  if (src.scope == Scope::Fragment)
    return lowerDequantFragments(L, n);
  if (dst.scope == Scope::Fragment)
    return lowerDequantIntoFragment(L, n);
  const Params p(n);
  const ftg::Buffer *scales = p.scales;
  std::vector<int64_t> tile = constantTile(n.outputs[0]);
  if (tile.size() != 2) {
    L.unsupported(n.call->getRange(), "this dequant_i4 (dst must be a 2-d tile of constant extents)");
    return;
  }
  const int64_t rows = tile[0], cols = tile[1];
  const int64_t group = p.groupColumns(cols);
  const std::string T = cppType(dst.dtype);
  // Eight weights per step where both tiles keep the word and the 16-byte vector whole.
  const bool vectorized = keepsRun(src, kWeightsPerWord / 2) && keepsRun(dst, kWeightsPerWord);
  const int64_t perStep = vectorized ? kWeightsPerWord : 1;
  const int64_t steps = rows * cols / perStep, threads = L.g.threads;

  const std::vector<Access> reads = p.reads(L, src);
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
      const std::string groupIndex = col + " / " + std::to_string(group);
      std::string scale = scales ? p.scaleAt(L, row, groupIndex) : Params::one(T);
      std::string zero = p.zeros ? p.zeroAt(L, T, row, groupIndex) : std::string();
      if (vectorized) {
        L.add(withAccess(makeEval(p.step(T, "") + "&" + byte + ", " + p.scaleArgs(scale, zero) + "&" +
                                  elementAt(L, dst, {row, col}) + ")"),
                         reads, writes));
        return;
      }
      // Element by element, with the vector path's roundings.
      L.add(withAccess(makeStore(elementAt(L, dst, {row, col}),
                                 p.element(T, byte, "(" + col + " % 2 * 4)", scale, zero)),
                       reads, writes));
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
    // inputs: src, scales, zeros (Sema: zeros only with scales).
    if (const Expr *s = argument(c, 2, "scales"))
      if (auto scales = b.operand(s)) {
        n.inputs.push_back(*scales);
        if (const Expr *z = argument(c, 3, "zeros"))
          if (auto zeros = b.operand(z))
            n.inputs.push_back(*zeros);
      }
    n.outputs.push_back(*dst);
    n.scalesTransposed = boolArgument(c, "transpose_scales", false);
  }

  std::string describe(const Node &n) const override {
    std::string s = "dequant_i4: " + n.inputs[0].buffer->name;
    if (n.inputs.size() > 2)
      s = "dequant_i4: (" + n.inputs[0].buffer->name + " - " + n.inputs[2].buffer->name + ")";
    if (n.inputs.size() > 1 && !n.scalesFolded)
      s += " * " + n.inputs[1].buffer->name + (n.scalesTransposed ? " (transposed)" : "");
    s += " -> " + n.outputs[0].buffer->name;
    return n.scalesFolded ? s + " (" + n.inputs[1].buffer->name + " applied by the gemm)" : s;
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
