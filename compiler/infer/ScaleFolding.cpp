// ScaleFolding: a W4A16 gemm's group scales applied to its f32 sums instead of to every weight.
//
//   dequant_i4(B_f, W_f, S_s);                        W_f = q * s        (one HMUL2 per pair)
//   gemm(A_s, W_f, acc, transpose_B = true, ...);     acc += A @ W_f^T
//
// With B in registers computed transposed (tl::gemm_sr_runs_t, ops/Gemm.cpp), each thread's
// mma steps walk K in chunks of 4V columns (4 threads per row, runs of V), and a chunk lies in
// one group of the scales whenever the group size is a multiple of 4V (V = 32: groups of 128,
// GPTQ's and AWQ's). Then a chunk's products share one scale per weight row, and
//
//   sum_k a_k (q_k s) = s * sum_k a_k q_k
//
// so the dequant converts without scaling and the gemm multiplies each chunk's sums by its
// row's scale once: per thread and chunk, 4 f32 multiply-adds instead of V packed multiplies
// per row (the 64 of a 1024-column step of samples/dequant_gemv_w4a16_tcs.tl: H200 GPU run
// 200, 3-6% faster at one and 16 rows of A). It is also more exact: q times the activation is
// exact in the f32 sums, where q * s was rounded to 16 bits first.
//
// Conditions: the dequant goes from packed registers to registers (each thread converts its own
// bytes), has scales but no zero points (q - z would still need its own subtraction first), its
// destination is read by that gemm alone, as its B operand, the gemm sums in f32, and nothing
// between the two writes the scales (the gemm reads them where it runs). --emit=inferred says so
// at the gemm.
#include "infer/Passes.h"

#include "ir/AccessAnalysis.h"

namespace tlc::infer {

using namespace ftg;

namespace {

// The gemm that folds `dequant`'s scales, or null: the first later sibling that touches its
// destination, under the conditions above.
Node *foldingGemm(const Graph &g, const std::vector<std::unique_ptr<Node>> &siblings, size_t at) {
  const Node &d = *siblings[at];
  if (d.kind != NodeKind::DequantI4 || d.inputs.size() != 2 || d.outputs.size() != 1)
    return nullptr;
  const Buffer &src = *d.inputs[0].buffer, &scales = *d.inputs[1].buffer, &dst = *d.outputs[0].buffer;
  if (src.scope != Scope::Fragment || dst.scope != Scope::Fragment || !dst.fragment || dst.shape.size() != 2 ||
      !dst.shape[1])
    return nullptr;
  Node *gemm = nullptr;
  for (size_t i = at + 1; i < siblings.size() && !gemm; ++i) {
    Node &n = *siblings[i];
    auto touches = [&](const std::vector<Buffer *> &list, const Buffer &b) { return llvm::is_contained(list, &b); };
    if (touches(n.reads, dst) || touches(n.writes, dst)) {
      // (f32 sums: a 16-bit accumulator would round each chunk's scaled sum once more.)
      if (n.kind != NodeKind::Gemm || n.inputs.size() < 3 || n.inputs[1].buffer != &dst || !n.bRunsTransposed ||
          n.bKRun <= 0 || touches(n.writes, dst) || n.inputs[2].buffer->dtype != DType::F32)
        return nullptr;
      gemm = &n;
    } else if (touches(n.writes, scales)) {
      return nullptr;
    }
  }
  if (!gemm)
    return nullptr;
  // The destination feeds nothing else anywhere in the kernel.
  int readers = 0;
  g.walk([&](const Node &n) {
    if (n.kind != NodeKind::Loop && n.kind != NodeKind::If && llvm::is_contained(n.reads, &dst))
      ++readers;
  });
  if (readers != 1)
    return nullptr;
  // Each chunk of 4V columns inside one group (the slices of a split K are whole chunks).
  const std::optional<int64_t> &groups = scales.shape.size() == 2 ? scales.shape[d.scalesTransposed ? 0 : 1]
                                                                  : std::optional<int64_t>();
  if (!groups || *groups <= 0 || *dst.shape[1] % *groups != 0)
    return nullptr;
  const int64_t group = *dst.shape[1] / *groups, chunk = 4 * int64_t(gemm->bKRun);
  return group % chunk == 0 ? gemm : nullptr;
}

void foldIn(const Graph &g, const std::vector<std::unique_ptr<Node>> &siblings) {
  for (size_t i = 0; i < siblings.size(); ++i) {
    Node &n = *siblings[i];
    foldIn(g, n.body);
    foldIn(g, n.elseBody);
    if (Node *gemm = foldingGemm(g, siblings, i)) {
      n.scalesFolded = true;
      gemm->foldedScales = &n;
      // The gemm reads the scales where it runs (dependencies on their writers come through
      // the dequant, which stays before it).
      if (!llvm::is_contained(gemm->reads, n.inputs[1].buffer))
        gemm->reads.push_back(n.inputs[1].buffer);
      gemm->mmaText += "; " + n.inputs[1].buffer->name + " applied per K group to the f32 sums (dequant_i4 into " +
                       n.outputs[0].buffer->name + " unscaled)";
    }
  }
}

class ScaleFolding : public Pass {
public:
  llvm::StringRef name() const override { return "scale-folding"; }
  bool run(Graph &g, DiagnosticEngine &) override {
    foldIn(g, g.body);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createScaleFolding() { return std::make_unique<ScaleFolding>(); }

} // namespace tlc::infer
