// Instruction inference for the sm_80+ tensor-core path: how each copy moves data, and the
// resource checks that must fail at compile time (shared memory and registers per block).
// The copy widths and limits are the target's (target/TargetInfo.h); Hopper's own
// instructions (wgmma, TMA) will plug in here from its atoms.
#include "infer/Passes.h"
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
      if (n.kind != NodeKind::Copy || n.inputs.empty() || n.outputs.empty())
        return;
      Scope from = n.inputs[0].buffer->scope, to = n.outputs[0].buffer->scope;
      int bits = int(bitWidth(n.outputs[0].buffer->dtype));
      if (from == Scope::Fragment || to == Scope::Fragment) {
        n.instr = CopyInstr::Fragment;
        const ftg::Buffer *f = from == Scope::Fragment ? n.inputs[0].buffer : n.outputs[0].buffer;
        n.copyVector = f->fragment ? (f->fragment->kind == FragmentLayout::Blocked ? f->fragment->vec
                                      : f->fragment->kind == FragmentLayout::MmaC ? 2 : 1)
                                   : 1;
      } else if (((from == Scope::Global && to == Scope::Shared) ||
                  (from == Scope::Shared && to == Scope::Global)) &&
                 n.inputs[0].buffer->dtype == n.outputs[0].buffer->dtype && bits >= 8) {
        // The target's widest accesses (16 bytes) where the shared tile's rows are whole
        // chunks of them: cp.async into shared memory, vector loads and stores out of it. The
        // launcher falls back to the scalar instantiation when a tensor's rows are not aligned.
        const ftg::Buffer *tile = to == Scope::Shared ? n.outputs[0].buffer : n.inputs[0].buffer;
        int64_t cols = tile->shared ? tile->shared->cols : 0;
        int perAccess = g.target->maxVectorBytes() * 8 / bits;
        bool whole = cols % perAccess == 0;
        n.copyVector = whole ? perAccess : 1;
        n.instr = !whole ? CopyInstr::Scalar
                 : to == Scope::Shared ? CopyInstr::CpAsync16 : CopyInstr::Vector;
      } else {
        n.instr = CopyInstr::Scalar;
        n.copyVector = 1;
      }
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
    return ok;
  }
};

} // namespace

std::unique_ptr<Pass> createInstructionSelection() { return std::make_unique<InstructionSelection>(); }

} // namespace tlc::infer
