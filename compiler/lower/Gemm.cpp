// Lowering of gemm: a tensor-core tile product by the warps of the block, split
// warpsM x warpsN as instruction selection decided (tl::gemm_ss / tl::gemm_rs).
#include "lower/KernelLowering.h"

namespace tlc::lower {

void KernelLowering::gemm(const ftg::Node &n) {
  const ftg::Buffer &A = *n.inputs[0].buffer, &B = *n.inputs[1].buffer, &C = *n.outputs[0].buffer;
  if (A.dtype != DType::F16 && A.dtype != DType::BF16) {
    unsupported(n.call->getRange(), "gemm on " + dtypeName(A.dtype).str() +
                                        " inputs (this back end has f16 and bf16 tensor-core paths)");
    return;
  }
  if (C.dtype != DType::F32) {
    unsupported(n.call->getRange(), "gemm accumulating in " + dtypeName(C.dtype).str() +
                                        " (use an f32 accumulator)");
    return;
  }
  // A shared operand inside a pipeline is read at its current stage.
  auto ptr = [&](const ftg::Buffer &b) {
    auto staged = stageOf.find(&b);
    return staged == stageOf.end()
               ? cppName(b.name)
               : cppName(b.name) + " + " + staged->second.index + " * " + std::to_string(b.numElements());
  };
  tileOp(n, [&] {
    if (n.clearAccum)
      add(makeCompactFor("tl_q", "0", std::to_string(C.fragment->registers()),
                         withAccess(makeStore(cppName(C.name) + "[tl_q]", "0.0f"), {}, {access(&C)}), -1));
    // C += A @ B: the accumulator is read as well.
    Stmt &mma = accessing(add(std::make_unique<Stmt>(StmtKind::Mma)), {access(&A), access(&B), access(&C)},
                          {access(&C)});
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

} // namespace tlc::lower
