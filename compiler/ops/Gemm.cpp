// gemm: C += A @ B on tensor cores by the warps of the block. The operator fixes the
// accumulator's layout (the target's accumulator atom over the warp split; STRICT), a register
// A operand's, and the bank-conflict-free swizzle of shared operands; its lowering is one
// tensor-core call (tl::gemm_ss / tl::gemm_rs) split warpsM x warpsN.
#include "ops/Arguments.h"

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
    if (n.inputs.size() == 3 && n.inputs[1].buffer->scope == Scope::Fragment)
      b.unsupported(argument(c, 1, "B")->getRange(), "gemm with B in registers",
                    "keep B in shared memory; A may be a fragment");
  }

  void inferLayout(Node &n, ftg::InferLevel level, ftg::LayoutRules &rules) const override {
    if (level != ftg::InferLevel::Strict)
      return;
    const ftg::Graph &g = rules.graph();
    ftg::Buffer *A = n.inputs[0].buffer, *B = n.inputs[1].buffer, *C = n.inputs[2].buffer;
    int64_t M = dim(*C, 0), N = dim(*C, 1);
    int64_t K = n.transA ? dim(*A, 0) : dim(*A, 1);
    const target::MmaAtom &atom = g.target->gemmAtom();
    int warps = g.threads / g.target->warpSize();
    llvm::SMRange at = n.call->getRange();
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
    if (K % atom.k != 0) {
      rules.error(at, "gemm K = " + std::to_string(K) + " is not a multiple of " + std::to_string(atom.k) +
                          " (the mma.m16n8k16 K)");
      return;
    }
    n.warpsM = wm;
    n.warpsN = wn;
    rules.assign(*C, FragmentLayout::mmaC(M, N, g.threads, wm, wn, *atom.c),
                 "gemm accumulator, policy " + policyName(n.policy).str(), at);
    if (A->scope == Scope::Fragment) {
      if (n.transA)
        rules.error(at, "not supported yet: a transposed A operand in registers");
      else if (wn != 1)
        rules.error(at, "gemm with A in registers needs every warp to own whole rows",
                    "pass policy = full_row to this gemm (and to the gemm that produced A)");
      else
        rules.assign(*A, FragmentLayout::mmaC(M, K, g.threads, wm, 1, *atom.c), "gemm A operand in registers", at);
    }
    for (auto [buf, rows, cols] : {std::tuple{A, n.transA ? K : M, n.transA ? M : K},
                                   std::tuple{B, n.transB ? N : K, n.transB ? K : N}}) {
      if (buf->scope != Scope::Shared)
        continue;
      rules.assignShared(*buf, SharedLayout::swizzled(rows, cols, int(bitWidth(buf->dtype))),
                         "strict: gemm operand, bank-conflict-free for ldmatrix", at);
    }
  }

  std::string describe(const Node &n) const override {
    return "gemm: " + n.outputs[0].buffer->name + " += " + n.inputs[0].buffer->name + " @ " +
           n.inputs[1].buffer->name;
  }

  void lower(const Node &n, KernelLowering &L) const override {
    const ftg::Buffer &A = *n.inputs[0].buffer, &B = *n.inputs[1].buffer, &C = *n.outputs[0].buffer;
    if (A.dtype != DType::F16 && A.dtype != DType::BF16) {
      L.unsupported(n.call->getRange(), "gemm on " + dtypeName(A.dtype).str() +
                                            " inputs (this back end has f16 and bf16 tensor-core paths)");
      return;
    }
    if (C.dtype != DType::F32) {
      L.unsupported(n.call->getRange(), "gemm accumulating in " + dtypeName(C.dtype).str() +
                                            " (use an f32 accumulator)");
      return;
    }
    // A shared operand inside a pipeline is read at its current stage.
    auto ptr = [&](const ftg::Buffer &b) {
      auto staged = L.stageOf.find(&b);
      return staged == L.stageOf.end()
                 ? cppName(b.name)
                 : cppName(b.name) + " + " + staged->second.index + " * " + std::to_string(b.numElements());
    };
    L.tileOp(n, [&] {
      if (n.clearAccum)
        L.add(makeCompactFor("tl_q", "0", std::to_string(C.fragment->registers()),
                             withAccess(makeStore(cppName(C.name) + "[tl_q]", "0.0f"), {}, {L.access(&C)}), -1));
      // C += A @ B: the accumulator is read as well.
      Stmt &mma = KernelLowering::accessing(L.add(std::make_unique<Stmt>(StmtKind::Mma)),
                                            {L.access(&A), L.access(&B), L.access(&C)}, {L.access(&C)});
      mma.m = *C.shape[0];
      mma.n = *C.shape[1];
      mma.k = n.transA ? *A.shape[0] : *A.shape[1];
      mma.warpsM = n.warpsM;
      mma.warpsN = n.warpsN;
      mma.transA = n.transA;
      mma.transB = n.transB;
      mma.aInRegisters = A.scope == Scope::Fragment;
      mma.a = mma.aInRegisters ? cppName(A.name) : ptr(A);
      mma.b = ptr(B);
      mma.c = cppName(C.name);
    });
  }
};

const GemmOp gemmOp;
const bool registered = ftg::registerTileOp(gemmOp);

} // namespace

} // namespace tlc::ops
