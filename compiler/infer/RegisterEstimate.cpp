#include "infer/RegisterEstimate.h"

#include "ir/FTG.h"

namespace tlc::infer {

// Registers are 32 bits wide on every target tlc knows (NVIDIA registers, AMD VGPRs).
constexpr int64_t kRegisterBits = 32;

int64_t registersFor(int64_t elements, DType dtype) {
  return (elements * int64_t(bitWidth(dtype)) + kRegisterBits - 1) / kRegisterBits;
}

int bufferRegisters(const ftg::Graph &g) {
  int64_t regs = 0;
  for (const auto &b : g.buffers) {
    if (b->scope == Scope::Fragment && b->fragment)
      regs += registersFor(b->fragment->registers(), b->dtype);
    else if (b->scope == Scope::Local)
      regs += registersFor(b->numElements(), b->dtype);
  }
  return int(regs);
}

} // namespace tlc::infer
