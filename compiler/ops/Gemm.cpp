// gemm: C += A @ B on tensor cores by the warps of the block. The operator chooses the
// instruction (the target's warpgroup atom, wgmma, when every gemm of the kernel fits it;
// otherwise its warp atom, mma.sync), fixes the accumulator's layout (the atom's accumulator
// over the split of the block; STRICT), register A and B operands', and the shared operands'
// layouts (wgmma's swizzled panels, or the swizzle that makes ldmatrix bank-conflict free);
// its lowering is one tensor-core call (tl::wgmma::gemm_ss/rs, or tl::gemm_ss/rs/sr/rr).
#include "ops/Arguments.h"
#include "ops/Dequant.h"

#include "infer/WarpSplit.h"
#include "ir/TileOp.h"
#include "lower/KernelLowering.h"
#include "target/TargetInfo.h"

namespace tlc::ops {

using namespace lower;
using lower::Stmt; // the loop IR's, not the AST's
using ftg::Node;

namespace {

int64_t dim(const ftg::Buffer &b, size_t i) { return b.shape.size() > i ? b.shape[i].value_or(1) : 1; }

struct GemmShape {
  int64_t M, N, K;
};

GemmShape shapeOf(const Node &n) {
  const ftg::Buffer &A = *n.inputs[0].buffer, &C = *n.inputs[2].buffer;
  return {dim(C, 0), dim(C, 1), n.transA ? dim(A, 0) : dim(A, 1)};
}

// The threads the gemm runs on: the block's first `threads = T`, or all of them.
int gemmThreads(const Node &n, const ftg::Graph &g) { return n.gemmThreads ? n.gemmThreads : g.threads; }

// How a gemm runs on the target's warpgroup atom (wgmma), or why it cannot.
struct WarpgroupPlan {
  bool ok = false;
  std::string whyNot;
  infer::WarpSplit split;
  int instrN = 0;
  std::optional<SharedLayout> a, b; // the layouts of shared operands
};

// Whether every instruction [col0, col0 + ni) of every warpgroup column stays inside one
// panel of an MN-major B or starts at a panel boundary and covers whole panels (the
// descriptor steps between panels only at their boundaries).
bool panelsFit(int64_t wtn, int wgn, int64_t ni, int64_t panel) {
  for (int g = 0; g < wgn; ++g)
    for (int64_t col = g * wtn; col < (g + 1) * wtn; col += ni) {
      bool inside = col / panel == (col + ni - 1) / panel;
      bool whole = col % panel == 0 && ni % panel == 0;
      if (!inside && !whole)
        return false;
    }
  return true;
}

WarpgroupPlan planWarpgroupMma(const Node &n, const ftg::Graph &g) {
  WarpgroupPlan p;
  if (!g.target->warpgroupMma() || n.inputs.size() != 3) {
    p.whyNot = "the target has no warpgroup MMA";
    return p;
  }
  const ftg::Buffer &A = *n.inputs[0].buffer, &B = *n.inputs[1].buffer, &C = *n.inputs[2].buffer;
  // The first reason: no other knob changes it.
  if (B.scope == Scope::Fragment) { // PTX ISA: wgmma's B operand is a shared-memory descriptor only
    p.whyNot = "wgmma reads B only from shared memory, and B is in registers";
    return p;
  }
  auto [M, N, K] = shapeOf(n);
  const target::MmaAtom *atom = g.target->warpgroupMma(A.dtype);
  if (!atom || A.dtype != B.dtype || !atom->supports(A.dtype, C.dtype)) {
    p.whyNot = "wgmma has no " + dtypeName(A.dtype).str() + " -> " + dtypeName(C.dtype).str() + " form here";
    return p;
  }
  const int threads = gemmThreads(n, g);
  if (threads % atom->threads != 0) {
    p.whyNot = n.gemmThreads ? "threads = " + std::to_string(threads) + " is not whole warpgroups of " +
                                   std::to_string(atom->threads) + " threads"
                             : "the block is not whole warpgroups of " + std::to_string(atom->threads) + " threads";
    return p;
  }
  if (B.scope != Scope::Shared || (A.scope != Scope::Shared && A.scope != Scope::Fragment) ||
      (A.scope == Scope::Fragment && n.transA)) {
    p.whyNot = "wgmma reads B from shared memory and A from shared memory or untransposed registers";
    return p;
  }
  p.split = infer::splitWarpgroups(M, N, threads / atom->threads, n.policy, *atom);
  if (!p.split.fits || K % atom->k != 0 || (A.scope == Scope::Fragment && p.split.n != 1)) {
    p.whyNot = "the tile does not split into m64 x n8 x k" + std::to_string(atom->k) + " pieces per warpgroup";
    return p;
  }
  int bits = int(bitWidth(A.dtype));
  // PTX ISA: wgmma reads operands of other than 16 bits only K-major (no imm-trans).
  if (bits != 16 && (A.scope != Scope::Shared || n.transA || !n.transB)) {
    p.whyNot = "wgmma reads " + dtypeName(A.dtype).str() +
               " operands only K-major from shared memory (A [M, K], B [N, K] with transpose_B = true)";
    return p;
  }
  if (A.scope == Scope::Shared) {
    p.a = n.transA ? SharedLayout::wgmmaOperand(K, M, bits) : SharedLayout::wgmmaOperand(M, K, bits);
    if (!p.a) {
      p.whyNot = "A's rows are not a multiple of 32 bytes";
      return p;
    }
  }
  p.b = n.transB ? SharedLayout::wgmmaOperand(N, K, bits) : SharedLayout::wgmmaOperand(K, N, bits);
  if (!p.b) {
    p.whyNot = "B's rows are not a multiple of 32 bytes";
    return p;
  }
  // wgmma reads shared operands through its own swizzle: an annotation must spell it out.
  for (auto [buf, layout] : {std::pair{&A, &p.a}, std::pair{&B, &p.b}})
    if (buf->scope == Scope::Shared && buf->shared && buf->shared->isAnnotated() &&
        !buf->shared->sameOffsets(**layout)) {
      p.whyNot = "'" + buf->name + "' has an annotated layout that wgmma cannot read";
      return p;
    }
  // The widest instruction (N up to 256) that divides a warpgroup's columns and, for an
  // MN-major B, respects its panels; n = 8 always does.
  int64_t wtn = N / p.split.n;
  for (int64_t ni = std::min<int64_t>(wtn, 256) / 8 * 8; ni >= 8; ni -= 8)
    if (wtn % ni == 0 && (n.transB || panelsFit(wtn, p.split.n, ni, p.b->panelCols))) {
      p.instrN = int(ni);
      break;
    }
  p.ok = p.instrN != 0;
  return p;
}

// The kernel uses wgmma when every gemm fits it: gemms that share fragments (attention's
// S = Q K^T feeding P V) need the same accumulator family on both sides. Decided once per
// graph: asked by every gemm, it would plan every gemm again (quadratic in their number).
bool kernelUsesWarpgroupMma(const ftg::Graph &g) {
  if (!g.gemmsOnWarpgroupMma) {
    bool all = true, any = false;
    g.walk([&](const Node &m) {
      if (m.kind != ftg::NodeKind::Gemm)
        return;
      any = true;
      all = all && planWarpgroupMma(m, g).ok;
    });
    g.gemmsOnWarpgroupMma = any && all;
  }
  return *g.gemmsOnWarpgroupMma;
}

// How the gemms of the kernel read shared tile `tile` through warp atom `atom` (gfx9's bank
// analysis, ir/LdsBanks.h): per gemm and operand, which rows (columns) each wave reads.
std::vector<lds::MfmaOperandUse> mfmaUses(const ftg::Graph &g, const ftg::Buffer &tile, const target::MmaAtom &atom) {
  std::vector<lds::MfmaOperandUse> uses;
  g.walk([&](const Node &m) {
    if (m.kind != ftg::NodeKind::Gemm || m.inputs.size() != 3)
      return;
    auto [M, N, K] = shapeOf(m);
    infer::WarpSplit split = infer::splitWarps(M, N, gemmThreads(m, g) / g.target->warpSize(), m.policy, atom);
    if (!split.fits)
      return;
    for (int operand = 0; operand < 2; ++operand) {
      if (m.inputs[size_t(operand)].buffer != &tile)
        continue;
      int64_t mn = operand == 0 ? M : N, parts = operand == 0 ? split.m : split.n;
      bool kMajor = operand == 0 ? !m.transA : m.transB;
      lds::MfmaOperandUse use{kMajor, atom.m, atom.k, {}, mn / parts, K};
      for (int64_t w = 0; w < parts; ++w)
        use.mnBases.push_back(w * (mn / parts));
      uses.push_back(std::move(use));
    }
  });
  return uses;
}

// Whether a gemm's tile splits over the warps into whole tiles of `atom` with whole k steps
// (and, for an A or B in registers, whole accumulator columns of K).
bool fitsWarpAtom(const Node &n, const ftg::Graph &g, const target::MmaAtom &atom) {
  auto [M, N, K] = shapeOf(n);
  bool inRegisters = n.inputs[0].buffer->scope == Scope::Fragment || n.inputs[1].buffer->scope == Scope::Fragment;
  return infer::splitWarps(M, N, gemmThreads(n, g) / g.target->warpSize(), n.policy, atom).fits && K % atom.k == 0 &&
         (!inRegisters || K % atom.n == 0);
}

// The warp atom every gemm of the kernel takes, as an index in TargetInfo::warpMmas: gemms whose
// results are combined (attention's row statistics and P @ V) need one accumulator family, so
// the kernel takes the first atom all of its gemms fit (gfx9: the 32x32 MFMA, else the 16x16
// one); 0 when none fits them all (the gemm that does not fit then says why). Decided once per
// graph, as kernelUsesWarpgroupMma is.
size_t kernelWarpAtom(const ftg::Graph &g) {
  if (!g.gemmsWarpAtom) {
    size_t chosen = 0;
    for (size_t i = 0;; ++i) {
      bool all = true, any = false;
      g.walk([&](const Node &m) {
        if (m.kind != ftg::NodeKind::Gemm || m.inputs.size() != 3)
          return;
        std::vector<const target::MmaAtom *> atoms = g.target->warpMmas(m.inputs[0].buffer->dtype);
        any = any || i < atoms.size();
        all = all && i < atoms.size() && fitsWarpAtom(m, g, *atoms[i]);
      });
      if (!any)
        break;
      if (all) {
        chosen = i;
        break;
      }
    }
    g.gemmsWarpAtom = chosen;
  }
  return *g.gemmsWarpAtom;
}

// The back-end targets whose warp atom takes `input` ("sm_89 or sm_90a"), for the error on
// target `on`, which has none: those of its own vendor where there are any (fp8 on gfx90a:
// "gfx940 or gfx942"), else all.
std::string targetsWithWarpMma(DType input, const target::TargetInfo &on) {
  std::vector<std::string> names, sameVendor;
  for (const target::TargetInfo *t : target::allTargets())
    if (t->hasBackEnd() && t->warpMma(input)) {
      names.push_back(t->name().str());
      if (t->vendor() == on.vendor())
        sameVendor.push_back(t->name().str());
    }
  if (!sameVendor.empty())
    names = sameVendor;
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return list;
}

// The instruction's input-type suffix as --emit=inferred shows it: none for the 16-bit types
// (m16n8k16 takes both), PTX's spelling for the others.
std::string inputSuffix(DType t) {
  switch (t) {
  case DType::I8: return ".s8";
  case DType::F8E4M3: return ".e4m3";
  case DType::F8E5M2: return ".e5m2";
  case DType::F32: return ".tf32";
  default: return "";
  }
}

// How tl::gemm reads the shared operands of a warp atom (stdlib/tl/gemm.h): one in an
// annotated layout other than the swizzle element by element through that layout (named);
// the others with ldmatrix, transposing 16-bit elements where K is not contiguous. Other
// element sizes cannot be transposed by ldmatrix, so such an operand is gathered from the
// swizzle element by element. The text keeps the short forms of the common cases
// ("ldmatrix.trans for B", "ldmatrix for A, B gathered").
std::string operandLoads(const Node &n, DType input) {
  std::string text;
  auto add = [&](const std::string &part) { text += (text.empty() ? "" : ", ") + part; };
  if (n.inputs[1].buffer->scope == Scope::Fragment) { // B in registers: only A is loaded
    if (n.inputs[0].buffer->scope == Scope::Fragment)
      return "A and B in registers";
    if (n.bKRun) {
      add(n.elementwiseA ? n.inputs[0].buffer->name + " element by element in K runs"
                         : "A in 16-byte runs of K");
      add("B in registers in K runs of " + std::to_string(n.bKRun));
      return text;
    }
    add(n.elementwiseA ? n.inputs[0].buffer->name + " element by element"
        : bitWidth(input) != 16 && n.transA ? "A gathered"
                                            : "ldmatrix for A");
    add("B in registers");
    return text;
  }
  if (n.elementwiseA)
    add(n.inputs[0].buffer->name + " element by element");
  if (n.elementwiseB)
    add(n.inputs[1].buffer->name + " element by element");
  bool wide = bitWidth(input) == 16;
  bool gatherA = !n.elementwiseA && !wide && n.transA, gatherB = !n.elementwiseB && !wide && !n.transB;
  bool ldmatrixA = !n.elementwiseA && !gatherA, ldmatrixB = !n.elementwiseB && !gatherB;
  if (gatherA && gatherB)
    add("A and B gathered");
  else if (gatherA)
    add(ldmatrixB ? "A gathered, ldmatrix for B" : "A gathered");
  else if (gatherB)
    add(ldmatrixA ? "ldmatrix for A, B gathered" : "B gathered");
  else if (ldmatrixA || ldmatrixB)
    add(ldmatrixB && !n.transB ? "ldmatrix.trans for B" : "ldmatrix");
  return text;
}

class GemmOp : public ftg::TileOp {
public:
  ftg::NodeKind kind() const override { return ftg::NodeKind::Gemm; }
  bool buildsFrom(Builtin b) const override { return b == Builtin::Gemm; }

  void build(Node &n, const CallExpr &c, ftg::NodeBuilder &b) const override {
    for (auto [i, kw] : {std::pair<size_t, const char *>{0, "A"}, {1, "B"}})
      if (auto op = b.operand(argument(c, i, kw)))
        n.inputs.push_back(*op);
    if (auto op = b.operand(argument(c, 2, "C"))) {
      n.inputs.push_back(*op);
      n.outputs.push_back(*op);
    }
    n.transA = boolArgument(c, "transpose_A", false);
    n.transB = boolArgument(c, "transpose_B", false);
    n.clearAccum = boolArgument(c, "clear_accum", false);
    if (const CallArg *p = c.keywordArg("policy"); p && p->value->constant)
      n.policy = p->value->constant->getPolicy();
    if (const CallArg *t = c.keywordArg("threads"); t && t->value->constant)
      n.gemmThreads = int(std::min<int64_t>(t->value->constant->getInt(), int64_t(1) << 30));
  }

  void inferLayout(Node &n, ftg::InferLevel level, ftg::LayoutRules &rules) const override {
    if (level != ftg::InferLevel::Strict)
      return;
    const ftg::Graph &g = rules.graph();
    ftg::Buffer *A = n.inputs[0].buffer, *B = n.inputs[1].buffer, *C = n.inputs[2].buffer;
    auto [M, N, K] = shapeOf(n);
    if (!checkThreads(n, rules))
      return;
    if (kernelUsesWarpgroupMma(g))
      return inferWarpgroup(n, planWarpgroupMma(n, g), rules);
    llvm::SMRange at = n.call->getRange();
    const int threads = gemmThreads(n, g);
    int warps = threads / g.target->warpSize();
    // The kernel's warp atom (gfx9: the 32x32 MFMA where every gemm fits it, else the 16x16).
    std::vector<const target::MmaAtom *> candidates = g.target->warpMmas(A->dtype);
    size_t pick = kernelWarpAtom(g);
    const target::MmaAtom *warpAtom = candidates.empty() ? nullptr : candidates[std::min(pick, candidates.size() - 1)];
    if (!warpAtom) {
      std::string others = targetsWithWarpMma(A->dtype, *g.target);
      std::string in = dtypeName(A->dtype).str();
      if (others.empty())
        rules.error(at, "gemm on " + in + " inputs has no tensor-core instruction on " + g.target->name().str(),
                    "use f16 or bf16 inputs");
      else if (g.target->vendor() == target::Vendor::Amd && bitWidth(A->dtype) == 8 && isFloat(A->dtype))
        // CDNA2 has no fp8 MFMA; CDNA3's reads AMD's FNUZ fp8 (docs/language.md, 9.2).
        rules.error(at, "gemm on " + in + " inputs needs " + others + ": " + g.target->name().str() +
                            " (CDNA2) has no fp8 MFMA",
                    "compile with --target gfx942 (MI300, CDNA3: v_mfma_f32_*_fp8_fp8 on FNUZ fp8), or "
                    "convert the tiles to f16 or bf16");
      else
        rules.error(at, "gemm on " + in + " inputs needs " + others + ": " + g.target->name().str() +
                            " has no tensor-core instruction for them",
                    "compile with --target " + others + ", or convert the tiles to f16 or bf16");
      return;
    }
    const target::MmaAtom &atom = *warpAtom;
    n.warpAtom = warpAtom;
    // B dequantized in registers over 16 weight rows per warp: the weights go in as the mma's
    // A operand (inferTransposedRuns); it decides C's layout itself. With fewer weight rows
    // than 16 (8) per warp, whole warp groups of 16 (8) rows each split K (inferSplitRuns).
    if (B->scope == Scope::Fragment && A->scope == Scope::Shared && n.transB && !n.transA &&
        g.target->vendor() == target::Vendor::Nvidia && atom.m == 16 && atom.n == 8 &&
        bitWidth(B->dtype) == 16 && n.policy == WarpPolicy::FullCol && writtenByRegisterDequant(g, *B)) {
      // In order: the whole of K per warp (transposed, then untransposed where M is whole m16
      // tiles), then split (transposed where M is whole n8 tiles).
      int64_t w = warps;
      bool untransposed = N == 8 * w && M % 16 == 0;
      if (N == 16 * w && M % 8 == 0 && K % 32 == 0)
        return inferTransposedRuns(n, *A, *B, *C, {M, N, K}, 1, rules);
      if (!untransposed && N < 16 * w && N % 16 == 0 && (16 * w) % N == 0 && M % 8 == 0)
        return inferSplitRuns(n, *A, *B, *C, {M, N, K}, true, int(16 * w / N), rules);
      if (!untransposed && N < 8 * w && N % 8 == 0 && (8 * w) % N == 0)
        return inferSplitRuns(n, *A, *B, *C, {M, N, K}, false, int(8 * w / N), rules);
    }
    infer::WarpSplit split = infer::splitWarps(M, N, warps, n.policy, atom);
    int wm = split.m, wn = split.n;
    if (!split.fits) {
      rules.error(at, "gemm tile " + std::to_string(M) + "x" + std::to_string(N) + " cannot be split over " +
                          std::to_string(wm) + "x" + std::to_string(wn) + " warps (policy " +
                          policyName(n.policy).str() + "): each warp needs a multiple of " +
                          std::to_string(atom.m) + "x" + std::to_string(atom.n),
                  "change the tile size, the thread count or the policy");
      return;
    }
    std::string shape = "m" + std::to_string(atom.m) + "n" + std::to_string(atom.n) + "k" + std::to_string(atom.k);
    // How messages and --emit=inferred name the instruction: PTX's shape, or AMD's mnemonic.
    std::string instr = g.target->vendor() == target::Vendor::Amd ? atom.name : "mma." + shape;
    if (K % atom.k != 0) {
      rules.error(at, "gemm K = " + std::to_string(K) + " is not a multiple of " + std::to_string(atom.k) +
                          " (the K of " + instr + " for " + dtypeName(A->dtype).str() + " inputs)",
                  "make the K extent of the tiles a multiple of " + std::to_string(atom.k));
      return;
    }
    n.warpsM = wm;
    n.warpsN = wn;
    rules.assign(*C, FragmentLayout::mmaC(M, N, threads, wm, wn, *atom.c),
                 "gemm accumulator, policy " + policyName(n.policy).str() + subsetText(n), at);
    if (A->scope == Scope::Fragment && B->scope == Scope::Fragment && warps != 1) {
      // A's rows would be needed by every warp column and B's columns by every warp row.
      std::string warp = g.target->vendor() == target::Vendor::Amd ? "wave" : "warp";
      rules.error(at, "gemm with A and B in registers needs a single " + warp + " (the block has " +
                          std::to_string(warps) + ")",
                  "keep A or B in shared memory, or run the block as one " + warp + " (threads = " +
                      std::to_string(g.target->warpSize()) + ")");
      return;
    }
    if (B->scope == Scope::Fragment && n.gemmThreads && n.gemmThreads != g.threads) {
      rules.error(at, "not supported yet: gemm with B in registers on part of the block (threads = " +
                          std::to_string(n.gemmThreads) + " of " + std::to_string(g.threads) + ")",
                  "keep B in shared memory, or run the gemm on the whole block");
      return;
    }
    if (B->scope == Scope::Fragment)
      inferRegisterB(n, *B, {M, N, K}, wm, wn, atom, instr, rules);
    if (A->scope == Scope::Fragment) {
      if (n.transA)
        rules.error(at, "not supported yet: a transposed A operand in registers");
      else if (bitWidth(A->dtype) != 16)
        rules.error(at, "not supported yet: gemm with A in registers on " + dtypeName(A->dtype).str() + " inputs",
                    "keep A in shared memory (A in registers takes f16 or bf16)");
      else if (wn != 1)
        rules.error(at, "gemm with A in registers needs every warp to own whole rows",
                    "pass policy = full_row to this gemm (and to the gemm that produced A)");
      else if (K % atom.n != 0) // A is an accumulator tile: whole atom columns
        rules.error(at, "gemm with A in registers needs K = " + std::to_string(K) + " to be a multiple of " +
                            std::to_string(atom.n) + " (the accumulator columns of " + instr + ")",
                    "make the K extent of the tiles a multiple of " + std::to_string(atom.n));
      else
        rules.assign(*A, FragmentLayout::mmaC(M, K, threads, wm, 1, *atom.c), "gemm A operand in registers" + subsetText(n), at);
    }
    // A shared operand whose annotated layout (annotate_layout) is not the swizzle keeps it and
    // is read element by element through it; the others take the swizzle, which every other
    // path reads: ldmatrix, and the gathers of operands whose K is not contiguous where
    // ldmatrix cannot transpose (see operandLoads): one layout per operand order.
    bool wide = bitWidth(A->dtype) == 16;
    for (auto [buf, rows, cols, kMajor, elementwise] :
         {std::tuple{A, n.transA ? K : M, n.transA ? M : K, !n.transA, &n.elementwiseA},
          std::tuple{B, n.transB ? N : K, n.transB ? K : N, n.transB, &n.elementwiseB}}) {
      if (buf->scope != Scope::Shared)
        continue;
      SharedLayout swizzled = SharedLayout::swizzled(rows, cols, int(bitWidth(buf->dtype)));
      std::string reason = wide || kMajor ? "strict: gemm operand, bank-conflict-free for ldmatrix"
                                          : "strict: gemm operand, gathered element-wise";
      if (const lds::BankModel *banks = g.target->operandBanks()) {
        // gfx9: the swizzle whose MFMA reads (by every gemm of the kernel that reads the
        // tile, so that they agree) and copy stores the bank analysis proves conflict-free,
        // or the one with the fewest conflicts.
        lds::LdsChoice choice = lds::chooseMfmaOperandLayout(*banks, rows, cols, int(bitWidth(buf->dtype)),
                                                             mfmaUses(g, *buf, atom), g.threads);
        swizzled = choice.layout;
        reason = "strict: gemm operand read by MFMA lanes; " + choice.text;
      }
      placeSharedOperand(*buf, swizzled, reason, *elementwise, rules, at);
    }
    // After the operands: the text says which of them are read element by element.
    std::string runs = std::to_string(atom.m * atom.k / atom.threads) + "-element runs";
    n.mmaText = g.target->vendor() == target::Vendor::Amd
                    ? "waves " + std::to_string(wm) + "x" + std::to_string(wn) + ", " + instr + ", " +
                          (n.elementwiseA || n.elementwiseB ? "annotated operands element by element, " : "") +
                          (B->scope != Scope::Fragment   ? "operands from LDS in " + runs
                           : A->scope == Scope::Fragment ? std::string("A and B in registers")
                                                         : "B in registers, A from LDS in " + runs)
                    : "warps " + std::to_string(wm) + "x" + std::to_string(wn) + ", mma." + shape +
                          inputSuffix(A->dtype) + ", " + operandLoads(n, A->dtype);
    // Where the target has a warpgroup atom, say why this kernel's gemms do not take it.
    if (g.target->warpgroupMma()) {
      WarpgroupPlan wg = planWarpgroupMma(n, g);
      n.mmaText += "; not wgmma: " + (wg.ok ? std::string("another gemm of the kernel does not fit it") : wg.whyNot);
    }
  }

  // B in registers, the mirror of A's rule: B^T ([N, K], transpose_B) in the accumulator layout
  // of an [N, K] tile over wn x 1 warps. For 16-bit inputs m16n8k16's B operand of n8 tiles 2p
  // and 2p + 1 is exactly the accumulator of rows 16p..16p + 15 (thread (g, t) holds B^T[g][2t,
  // 2t + 1] and B^T[g][2t + 8, 2t + 9], rows g + 8 for tile 2p + 1); on gfx9 the MFMA reads
  // SrcA = B^T as it reads SrcB = A^T, so the same holds there. mmaC numbers warps row-major,
  // so warp w then owns B rows (C columns) w * N/wn..: the accumulator's, when wm == 1.
  void inferRegisterB(Node &n, ftg::Buffer &B, GemmShape s, int wm, int wn, const target::MmaAtom &atom,
                      const std::string &instr, ftg::LayoutRules &rules) const {
    const ftg::Graph &g = rules.graph();
    llvm::SMRange at = n.call->getRange();
    std::string warp = g.target->vendor() == target::Vendor::Amd ? "wave" : "warp";
    int64_t perWarp = s.N / wn;
    int64_t rows = atom.c->shape()[0];
    if (!n.transB)
      rules.error(at, "gemm with B in registers needs transpose_B = true (B as an [N, K] fragment)",
                  "declare the fragment as [N, K] (K contiguous, as a PyTorch Linear weight) and pass "
                  "transpose_B = true");
    else if (bitWidth(B.dtype) != 16)
      rules.error(at, "not supported yet: gemm with B in registers on " + dtypeName(B.dtype).str() + " inputs",
                  "keep B in shared memory (B in registers takes f16 or bf16)");
    else if (writtenByRegisterDequant(g, B))
      inferRegisterBRuns(n, B, s, wm, wn, atom, instr, rules);
    else if (wm != 1)
      rules.error(at, "gemm with B in registers needs every " + warp + " to own whole columns",
                  "pass policy = full_col to this gemm");
    else if (perWarp % rows != 0)
      rules.error(at, "gemm with B in registers needs the N columns of each " + warp + " (" +
                          std::to_string(perWarp) + ") to be a multiple of " + std::to_string(rows) +
                          " (the accumulator rows of " + instr + ")",
                  "make C's N extent a multiple of " + std::to_string(rows * wn) + " (" + std::to_string(rows) +
                      " per " + warp + "), or use fewer threads");
    else if (s.K % atom.n != 0)
      rules.error(at, "gemm with B in registers needs K = " + std::to_string(s.K) + " to be a multiple of " +
                          std::to_string(atom.n) + " (the accumulator columns of " + instr + ")",
                  "make the K extent of the tiles a multiple of " + std::to_string(atom.n));
    else
      rules.assign(B, FragmentLayout::mmaC(s.N, s.K, g.threads, wn, 1, *atom.c), "gemm B operand in registers", at);
  }

  // Whether dequant_i4 writes `B` from a fragment of packed weights (weights loaded into
  // registers 16 bytes at a time, as a decode GEMV does).
  static bool writtenByRegisterDequant(const ftg::Graph &g, const ftg::Buffer &B) {
    bool found = false;
    g.walk([&](const Node &m) {
      if (m.kind == ftg::NodeKind::DequantI4 && !m.outputs.empty() && m.outputs[0].buffer == &B &&
          m.inputs[0].buffer->scope == Scope::Fragment)
        found = true;
    });
    return found;
  }

  // B dequantized in registers: B^T [N, K] in the blocked layout of 4 threads per row and V
  // columns per thread, the layout dequant_i4 unpacks from bytes loaded 16 (8, 4) at a time,
  // instead of the accumulator layout, whose 2-column pieces would need byte loads and a
  // shuffle of nibbles. A sum over K may take K in any order as long as A and B take the same
  // one: lane t of an n8 tile supplies its mma slots from its own run of V columns, and
  // tl::gemm_sr_runs reads A's rows at those columns (stdlib/tl/gemm.h). One n8 tile per
  // warp (the blocked layout's rows of a warp are the tile's 8 columns).
  void inferRegisterBRuns(Node &n, ftg::Buffer &B, GemmShape s, int wm, int wn, const target::MmaAtom &atom,
                          const std::string &instr, ftg::LayoutRules &rules) const {
    const ftg::Graph &g = rules.graph();
    llvm::SMRange at = n.call->getRange();
    const ftg::Buffer &A = *n.inputs[0].buffer;
    int warps = g.threads / g.target->warpSize();
    std::string why = "gemm with B dequantized in registers (dequant_i4 into '" + B.name + "')";
    if (g.target->vendor() != target::Vendor::Nvidia || atom.m != 16 || atom.n != 8) {
      rules.error(at, "not supported yet: " + why + " on " + g.target->name().str(),
                  "dequantize into a shared buffer and pass that as B");
      return;
    }
    if (A.scope != Scope::Shared || n.transA) {
      rules.error(at, why + " reads A from shared memory, untransposed ([M, K])",
                  "keep A in a shared [M, K] tile");
      return;
    }
    if (wm != 1) {
      rules.error(at, why + " needs every warp to own whole columns", "pass policy = full_col to this gemm");
      return;
    }
    if (s.K % 32 != 0) {
      rules.error(at, why + " needs K = " + std::to_string(s.K) + " to be a multiple of 32 (4 threads per row, " +
                          "16-byte runs of A)",
                  "make the K extent of the tiles a multiple of 32");
      return;
    }
    if (wn != warps || s.N != 8 * int64_t(warps)) {
      // (16 columns per warp with M a multiple of 8 took inferTransposedRuns before the split,
      // and fewer columns dividing 8 x warps inferSplitRuns.)
      rules.error(at, why + " needs 8 or 16 columns per warp, or a divisor of 8 x warps: N = " +
                          std::to_string(s.N) + " over " + std::to_string(warps) + " warps",
                  "make the N extent of B and C " + std::to_string(8 * warps) + " or " + std::to_string(16 * warps) +
                      " (8 or 16 x warps; 16 computes it transposed, with M a multiple of 8), or a multiple of 8 " +
                      "dividing " + std::to_string(8 * warps) + " (the warps then split K)");
      return;
    }
    std::optional<FragmentLayout> runs = kRunLayout(s, 1, rules, at);
    if (!runs)
      return;
    n.bKRun = runs->vec;
    rules.assign(B, *runs, "gemm B operand in registers, K in runs of " + std::to_string(runs->vec) +
                               " per thread (" + instr + " reads A in the same order)", at);
  }

  // B^T [N, K] in the blocked layout of 4 threads per row and a run of 32 columns per thread
  // (16 where K is a multiple of 64 but not 128, 8 where only of 32): the 16-, 8- or 4-byte
  // loads of its packed bytes. One pass over the rows for 8 per warp, two for 16. Split over
  // `kSplit` warp groups, K is cut into as many slices, each group's own blocked tile.
  static std::optional<FragmentLayout> kRunLayout(GemmShape s, int kSplit, ftg::LayoutRules &rules,
                                                  llvm::SMRange at) {
    int64_t slice = s.K / kSplit;
    int run = slice % 128 == 0 ? 32 : slice % 64 == 0 ? 16 : 8;
    bool ok = false;
    FragmentLayout runs = FragmentLayout::blockedWith(s.N, s.K, rules.graph().threads, 4, run, ok, 1, kSplit);
    if (!ok) { // unreachable: the callers' N is 8 or 16 x warps / kSplit and K / kSplit a multiple of 32
      rules.error(at, "gemm with B dequantized in registers: no blocked layout of " + std::to_string(s.N) + "x" +
                          std::to_string(s.K) + " with 4 threads per row");
      return std::nullopt;
    }
    return runs;
  }

  // A shared operand in the layout `swizzled` its reads need, or, where annotate_layout gave
  // it another one, in that layout and read element by element through it (`elementwise`).
  static void placeSharedOperand(ftg::Buffer &buf, const SharedLayout &swizzled, const std::string &reason,
                                 bool &elementwise, ftg::LayoutRules &rules, llvm::SMRange at) {
    if (buf.shared && buf.shared->isAnnotated() && !buf.shared->sameOffsets(swizzled)) {
      elementwise = true;
      return;
    }
    rules.assignShared(buf, swizzled, reason, at);
  }

  // B dequantized in registers, 16 weight rows per warp (N = 16 x warps): the product is
  // computed transposed, C^T = W @ A^T, with the weights as the mma's A operand and A's rows
  // (activations) as its B operand, 8 per n8 tile. B keeps the blocked K-run layout, now over
  // two passes, so that lane (g, t) holds weight rows 8w + g and 8w + g + N / 2: rows g and
  // g + 8 of its warp's m16 tile (a sum over K and the rows of a tile may be numbered in any
  // order the gemm chooses). Against the untransposed form each mma takes 8 weights per
  // thread instead of 4, the dequantized pairs are the A operand's registers as they are, and
  // the activations' two registers come from one 8-byte shared load. C takes the transposed
  // accumulator layout (FragmentLayout::mmaTransposedRuns).
  void inferTransposedRuns(Node &n, ftg::Buffer &A, ftg::Buffer &B, ftg::Buffer &C, GemmShape s, int kSplit,
                           ftg::LayoutRules &rules) const {
    const ftg::Graph &g = rules.graph();
    llvm::SMRange at = n.call->getRange();
    std::optional<FragmentLayout> runs = kRunLayout(s, kSplit, rules, at);
    if (!runs)
      return;
    int run = runs->vec;
    n.bKRun = run;
    n.bRunsTransposed = true;
    n.bKSplit = kSplit;
    n.warpsM = 1;
    n.warpsN = g.threads / g.target->warpSize() / kSplit;
    FragmentLayout acc = FragmentLayout::mmaTransposedRuns(s.M, s.N, g.threads / kSplit, g.target->warpSize());
    rules.assign(C, kSplit > 1 ? FragmentLayout::partialSums(acc, kSplit) : acc,
                 "gemm accumulator, computed transposed (weights as the mma's A operand)" + splitText(kSplit), at);
    rules.assign(B, *runs, "gemm B operand in registers, K in runs of " + std::to_string(run) +
                               " per thread, as the mma's A operand (two weight rows per thread)" + splitText(kSplit),
                 at);
    placeSharedOperand(A, SharedLayout::swizzled(s.M, s.K, int(bitWidth(A.dtype))),
                       "strict: gemm operand, read 8 bytes at a time", n.elementwiseA, rules, at);
    n.mmaText = "warps 1x" + std::to_string(n.warpsN) + (kSplit > 1 ? " x " + std::to_string(kSplit) + " along K" : "") +
                ", mma.m16n8k16 transposed (weights as A), " +
                (n.elementwiseA ? A.name + " element by element in K runs" : std::string("A in 8-byte runs of K")) +
                ", B in registers in K runs of " + std::to_string(run) +
                "; not wgmma: wgmma reads B only from shared memory, and B is in registers";
  }

  static std::string splitText(int kSplit) {
    return kSplit > 1 ? "; K split over " + std::to_string(kSplit) + " warp groups" : "";
  }

  // B dequantized in registers with fewer weight rows than a warp's 16 (transposed) or 8 per
  // warp: N / 16 (N / 8) warps hold the rows and `kSplit` groups of them split K, each summing
  // its slice's runs into partial sums of the whole C (FragmentLayout::partialSums); a copy of
  // C adds them (Copy.cpp, throughScratch). A GEMV whose N gives too few warps for the GPU
  // (N = 4096: 512 warps of 8 rows) gets more warps per weight row.
  void inferSplitRuns(Node &n, ftg::Buffer &A, ftg::Buffer &B, ftg::Buffer &C, GemmShape s, bool transposed,
                      int kSplit, ftg::LayoutRules &rules) const {
    const ftg::Graph &g = rules.graph();
    llvm::SMRange at = n.call->getRange();
    if (s.K % (32 * int64_t(kSplit)) != 0) {
      rules.error(at, "gemm with B dequantized in registers (dequant_i4 into '" + B.name + "') splits K over " +
                          std::to_string(kSplit) + " warp groups (N = " + std::to_string(s.N) + " over " +
                          std::to_string(g.threads / g.target->warpSize()) + " warps): K = " + std::to_string(s.K) +
                          " must be a multiple of " + std::to_string(32 * kSplit) + " (32 per group)",
                  "make the K extent of the tiles a multiple of " + std::to_string(32 * kSplit) +
                      ", or use fewer threads");
      return;
    }
    if (transposed)
      return inferTransposedRuns(n, A, B, C, s, kSplit, rules);
    if (s.M % 16 != 0) {
      rules.error(at, "gemm with B dequantized in registers over " + std::to_string(s.N) +
                          " weight rows needs M = " + std::to_string(s.M) + " to be a multiple of 16 (mma.m16n8k16's rows)",
                  "make the M extent of A and C a multiple of 16");
      return;
    }
    std::optional<FragmentLayout> runs = kRunLayout(s, kSplit, rules, at);
    if (!runs)
      return;
    const target::MmaAtom &atom = *n.warpAtom;
    n.bKRun = runs->vec;
    n.bKSplit = kSplit;
    n.warpsM = 1;
    n.warpsN = int(s.N / 8);
    rules.assign(C, FragmentLayout::partialSums(FragmentLayout::mmaC(s.M, s.N, g.threads / kSplit, 1, n.warpsN, *atom.c), kSplit),
                 "gemm accumulator" + splitText(kSplit), at);
    rules.assign(B, *runs, "gemm B operand in registers, K in runs of " + std::to_string(runs->vec) +
                               " per thread (mma.m16n8k16 reads A in the same order)" + splitText(kSplit), at);
    placeSharedOperand(A, SharedLayout::swizzled(s.M, s.K, int(bitWidth(A.dtype))),
                       "strict: gemm operand, read in 16-byte runs of K", n.elementwiseA, rules, at);
    n.mmaText = "warps 1x" + std::to_string(n.warpsN) + " x " + std::to_string(kSplit) + " along K, mma.m16n8k16, " +
                operandLoads(n, A.dtype) + "; not wgmma: wgmma reads B only from shared memory, and B is in registers";
  }

  // The layouts of a gemm on the warpgroup atom: the accumulator is the atom's over the
  // warpgroup split, a register A the same family over A's shape (its k16 steps are the
  // atom's A fragment), shared operands wgmma's swizzled panels.
  void inferWarpgroup(Node &n, const WarpgroupPlan &p, ftg::LayoutRules &rules) const {
    const ftg::Graph &g = rules.graph();
    ftg::Buffer *A = n.inputs[0].buffer, *B = n.inputs[1].buffer, *C = n.inputs[2].buffer;
    auto [M, N, K] = shapeOf(n);
    const target::MmaAtom &atom = *g.target->warpgroupMma(A->dtype);
    llvm::SMRange at = n.call->getRange();
    n.warpgroupMma = true;
    n.warpsM = p.split.m;
    n.warpsN = p.split.n;
    n.instrN = p.instrN;
    n.mmaText = "warpgroups " + std::to_string(p.split.m) + "x" + std::to_string(p.split.n) + ", wgmma.m64n" +
                std::to_string(p.instrN) + "k" + std::to_string(atom.k) + inputSuffix(A->dtype) + ", " +
                (A->scope == Scope::Fragment ? "A in registers" : n.transA ? "A MN-major" : "A K-major") +
                ", B " + (n.transB ? "K-major" : "MN-major");
    const int threads = gemmThreads(n, g);
    rules.assign(*C, FragmentLayout::mmaC(M, N, threads, p.split.m, p.split.n, *atom.c),
                 "gemm accumulator (wgmma), policy " + policyName(n.policy).str() + subsetText(n), at);
    if (A->scope == Scope::Fragment)
      rules.assign(*A, FragmentLayout::mmaC(M, K, threads, p.split.m, 1, *atom.c),
                   "gemm A operand in registers (wgmma)" + subsetText(n), at);
    else
      rules.assignShared(*A, *p.a, "strict: gemm operand read by wgmma", at);
    rules.assignShared(*B, *p.b, "strict: gemm operand read by wgmma", at);
  }

  // `threads = T`: at most the block, whole warps (wgmma: whole warpgroups, planWarpgroupMma).
  static bool checkThreads(const Node &n, ftg::LayoutRules &rules) {
    const ftg::Graph &g = rules.graph();
    if (!n.gemmThreads)
      return true;
    const CallArg *t = n.call->keywordArg("threads");
    llvm::SMRange at = t ? t->value->getRange() : n.call->getRange();
    int warp = g.target->warpSize();
    if (n.gemmThreads > g.threads || n.gemmThreads % warp != 0) {
      rules.error(at, "gemm threads = " + std::to_string(n.gemmThreads) + " must be whole " +
                          (g.target->vendor() == target::Vendor::Amd ? "waves of " : "warps of ") +
                          std::to_string(warp) + " threads, at most the block's " + std::to_string(g.threads),
                  "threads = T runs the gemm on the block's first T threads");
      return false;
    }
    return true;
  }
  static std::string subsetText(const Node &n) {
    return n.gemmThreads ? ", on threads 0.." + std::to_string(n.gemmThreads - 1) : std::string();
  }

  std::string describe(const Node &n) const override {
    return "gemm: " + n.outputs[0].buffer->name + " += " + n.inputs[0].buffer->name + " @ " +
           n.inputs[1].buffer->name;
  }

  void lower(const Node &n, KernelLowering &L) const override {
    const ftg::Buffer &A = *n.inputs[0].buffer, &B = *n.inputs[1].buffer, &C = *n.outputs[0].buffer;
    const target::TargetInfo &t = *L.g.target;
    const target::MmaAtom *chosen = n.warpgroupMma ? t.warpgroupMma(A.dtype) : n.warpAtom ? n.warpAtom : t.warpMma(A.dtype);
    if (!chosen) { // layout inference rejects this first; kept so that lowering never guesses
      L.diags.error(n.call->getRange(), "gemm on " + dtypeName(A.dtype).str() +
                                            " inputs has no tensor-core instruction on " + t.name().str());
      L.ok = false;
      return;
    }
    const target::MmaAtom &atom = *chosen;
    if (!atom.supports(A.dtype, C.dtype)) {
      L.diags.error(n.call->getRange(), "gemm of " + dtypeName(A.dtype).str() + " inputs cannot accumulate in " +
                                            dtypeName(C.dtype).str() + " on " + t.name().str() + "'s " +
                                            atom.name + ", which takes (input -> accumulator) " +
                                            atom.dtypesText())
          .hint("declare the accumulator in a dtype it takes (an f32 one for 16-bit inputs) and copy it into a "
                "fragment of " + dtypeName(C.dtype).str() + " for the result");
      L.ok = false;
      return;
    }
    // The stdlib reads a 16-bit accumulator as 32-bit registers of element pairs in place
    // (wgmma may still be writing them after the call returns).
    if (bitWidth(C.dtype) == 16)
      L.bufferOf[&C]->align = 4;
    // A shared operand inside a pipeline is read at its current stage.
    auto ptr = [&](const ftg::Buffer &b) {
      auto staged = L.stageOf.find(&b);
      return staged == L.stageOf.end()
                 ? bufferName(b)
                 : bufferName(b) + " + " + staged->second.index + " * " + std::to_string(b.numElements());
    };
    L.tileOp(n, [&] {
      // An operand in an annotated layout: its offset functor, named after the buffer.
      auto offsetFunctor = [&](const ftg::Buffer &b) {
        std::string name = L.fresh(b.name + "_offset");
        L.add(makeComment(b.name + " is read element by element through its annotated layout (" +
                          b.layoutReason + "), not by ldmatrix"));
        L.add(makeLet("const auto", name,
                      "[](int tl_row, int tl_col) { return " + b.shared->offsetExpr("tl_row", "tl_col") + "; }",
                      false));
        return name;
      };
      // gfx9's XOR swizzle of 8-byte units (ir/LdsBanks.h) as tl/hip/gemm.h's functor, which
      // reads its K-major runs of 4 elements as one 8-byte access.
      auto unitFunctor = [&](const ftg::Buffer &b) -> std::string {
        const SharedLayout *l = b.scope == Scope::Shared && b.shared ? &*b.shared : nullptr;
        if (!l || l->isAnnotated() || !l->isSwizzled() || l->unitBytes == 16)
          return "";
        return "tl::mfma::XorUnits<" + std::to_string(l->cols) + ", " + std::to_string(l->unitBytes * 8 / l->elemBits) +
               ", " + std::to_string(l->rowShift) + ", " + std::to_string(l->mask) +
               (l->unitFlipBit > 0 ? ", " + std::to_string(l->unitFlipBit) : "") + ">{}";
      };
      std::string aOffset = n.elementwiseA ? offsetFunctor(A) : unitFunctor(A);
      std::string bOffset = n.elementwiseB ? offsetFunctor(B) : unitFunctor(B);
      // wgmma overwrites instead (its scale-d operand, mma.overwrite below): no loop writes
      // the registers, and tl::wgmma::discard ends their earlier values here rather than at
      // the gemm.
      if (n.clearAccum && n.warpgroupMma) {
        L.accessing(L.add(makeEval("tl::wgmma::discard(" + bufferName(C) + ")")), {}, {L.access(&C)});
      } else if (n.clearAccum) {
        std::string zero = C.dtype == DType::F32 ? "0.0f" : "tl::convert<" + cppType(C.dtype) + ">(0.0f)";
        L.add(makeCompactFor("tl_q", "0", std::to_string(C.fragment->registers()),
                             withAccess(makeStore(bufferName(C) + "[tl_q]", zero), {}, {L.access(&C)}), -1));
      }
      // C += A @ B: the accumulator is read as well, and scales a dequant_i4 left out.
      std::vector<Access> reads = {L.access(&A), L.access(&B), L.access(&C)};
      if (n.foldedScales)
        reads.push_back(L.access(n.foldedScales->inputs[1].buffer));
      Stmt &mma = KernelLowering::accessing(L.add(std::make_unique<Stmt>(StmtKind::Mma)), reads, {L.access(&C)});
      mma.m = *C.shape[0];
      mma.n = *C.shape[1];
      mma.k = n.transA ? *A.shape[0] : *A.shape[1];
      mma.warpsM = n.warpsM;
      mma.warpsN = n.warpsN;
      mma.transA = n.transA;
      mma.transB = n.transB;
      mma.aInRegisters = A.scope == Scope::Fragment;
      mma.bInRegisters = B.scope == Scope::Fragment;
      mma.warpgroup = n.warpgroupMma;
      mma.instrN = n.instrN;
      mma.mfmaSize = t.vendor() == target::Vendor::Amd ? atom.m : 0;
      mma.bKRun = n.bKRun;
      mma.bRunsTransposed = n.bRunsTransposed;
      mma.bKSplit = n.bKSplit;
      if (n.foldedScales) {
        // scales[pass][chunk]: the scale of the chunk's first register in each pass of B's
        // runs (tl::gemm_sr_runs_t: pass p, chunk c start at register p * Pass + c * V).
        const int64_t run = n.bKRun, chunks = mma.k / n.bKSplit / (4 * run);
        std::string list;
        for (int64_t pass = 0; pass < 2; ++pass) {
          std::string row;
          for (int64_t c = 0; c < chunks; ++c)
            row += (c ? ", " : "") + foldedScale(L, *n.foldedScales, pass * chunks * run + c * run);
          list += (pass ? ", {" : "{") + row + "}";
        }
        mma.bScales = "{" + list + "}";
      }
      auto inFlight = L.gemmsInFlight.find(&n);
      mma.pending = inFlight == L.gemmsInFlight.end() ? 0 : inFlight->second;
      if (n.warpgroupMma && n.clearAccum)
        mma.overwrite = "true";
      // A fill of the accumulator folded into this gemm (lower/AccumulatorInit.cpp).
      if (auto flag = L.overwriteFlags.find(&n); flag != L.overwriteFlags.end()) {
        mma.overwrite = flag->second;
        L.overwriteFlags.erase(flag);
      }
      mma.a = mma.aInRegisters ? bufferName(A) : ptr(A);
      mma.b = mma.bInRegisters ? bufferName(B) : ptr(B);
      mma.c = bufferName(C);
      mma.aOffset = aOffset;
      mma.bOffset = bOffset;
    });
  }
};

const GemmOp gemmOp;
const bool registered = ftg::registerTileOp(gemmOp);

} // namespace

} // namespace tlc::ops
