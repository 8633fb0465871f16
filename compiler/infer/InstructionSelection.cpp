// Instruction inference for the sm_80+ tensor-core path: each tile operator chooses how it
// moves data (ir/TileOp.h), then the resource checks that must fail at compile time (shared
// memory and registers per block).
// The copy widths and limits are the target's (target/TargetInfo.h); Hopper's own
// instructions (wgmma, TMA) will plug in here from its atoms.
#include "infer/Passes.h"
#include "ir/TileOp.h"
#include "infer/RegisterEstimate.h"
#include "target/TargetInfo.h"

#include "llvm/Support/Format.h"

namespace tlc::infer {

using namespace ftg;

namespace {

class InstructionSelection : public Pass {
public:
  llvm::StringRef name() const override { return "instruction-selection"; }

  bool run(Graph &g, DiagnosticEngine &diags) override {
    g.walk([&](Node &n) {
      if (n.op)
        n.op->selectInstruction(n, g);
    });
    return checkResources(g, diags);
  }

private:
  bool checkResources(Graph &g, DiagnosticEngine &diags) {
    const target::Limits &limits = g.target->limits();
    std::string targetName = g.target->name().str();
    int64_t shared = g.sharedBytes;
    std::string breakdown;
    for (auto &b : g.buffers)
      if (b->scope == Scope::Shared)
        breakdown += (breakdown.empty() ? "" : ", ") + b->name + " " +
                     (b->stages > 1 ? std::to_string(b->stages) + " x " : "") +
                     std::to_string(b->bytes()) + " at " + std::to_string(b->sharedOffset);
    if (g.sharedBytes > g.scratchOffset)
      breakdown += ", reduction scratch " + std::to_string(g.sharedBytes - g.scratchOffset);
    const KernelDecl &k = *g.kernel;
    bool ok = true;
    if (shared > limits.sharedBytesPerBlock) {
      diags.error(k.nameRange, "kernel '" + k.name + "' needs " + std::to_string(shared) +
                                   " bytes of shared memory (" + breakdown + ") but " + targetName +
                                   " allows " + std::to_string(limits.sharedBytesPerBlock) +
                                   " per block")
          .hint("use smaller tiles or fewer pipeline stages");
      ok = false;
    }
    int registers = bufferRegisters(g), estimate = kScalarRegisters + registers;
    if (estimate > limits.registersPerThread) {
      diags.error(k.nameRange, "kernel '" + k.name + "' needs about " + std::to_string(estimate) +
                                   " registers per thread (" + std::to_string(registers) +
                                   " for fragments) but " + targetName + " allows " +
                                   std::to_string(limits.registersPerThread))
          .hint("use more threads, smaller tiles, or keep large tiles in shared memory");
      ok = false;
    }
    // ptxas cannot compile a wgmma whose accumulator alone does not fit the registers the
    // block's size leaves a thread (C7602: a 256x256 tile on four warpgroups leaves 128 for
    // m64n256's 154); with fewer, it spills. Warp specialization (BulkPipelinePlan) adds
    // producer threads only where the instruction still fits.
    const Node *widest = nullptr;
    int need = wgmmaInstructionRegisters(g, &widest);
    int64_t ceiling = launchBoundRegisters(limits, g.threads);
    if (widest && need > ceiling) {
      diags.error(widest->call->getRange(),
                  "gemm: one wgmma.m64n" + std::to_string(widest->instrN) + " instruction needs about " +
                      std::to_string(need) + " registers per thread (" + std::to_string(need - kWgmmaOverhead) +
                      " for its accumulator and operands) but " + std::to_string(g.threads) +
                      " threads per block leave each thread " + std::to_string(ceiling) + " of the " +
                      std::to_string(limits.registersPerSM) + " per SM")
          .hint("use fewer threads per block, fewer columns per warpgroup (block_N, or a policy that splits N "
                "over the warpgroups), or an f16 accumulator");
      ok = false;
    }
    return ok;
  }
};

} // namespace

std::unique_ptr<Pass> createInstructionSelection() { return std::make_unique<InstructionSelection>(); }

} // namespace tlc::infer
