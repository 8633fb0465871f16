#pragma once

#include "codegen/CodeWriter.h"
#include "ir/FTG.h"
#include "lower/LoopIR.h"

namespace tlc::codegen {

// The most dimensions a tensor parameter may have: TLC_MAX_RANK of runtime/tlc/runtime.h,
// the size of tlc_tensor_view's shape and stride arrays.
constexpr size_t kMaxTensorRank = 8;

// Reports tensor parameters of `k` with more dimensions than the launcher ABI carries.
bool checkTensorRanks(const KernelDecl &k, DiagnosticEngine &diags);

// Host type of a run-time scalar parameter (16-bit floats travel as float).
std::string cppTypeHost(DType t);

// The launcher's parameter lists for kernel `k`; each ends in ", " when not empty.
struct LauncherSignature {
  std::string cpp;       // "const tlc::TensorView& A, float scale, "
  std::string c;         // "const tlc_tensor_view* A, float scale, "
  std::string forward;   // "A, scale, ": calling another launcher with the same parameters
  std::string fromC;     // "*A, scale, ": calling the launcher from the C entry
  std::string nullCheck; // "!A || !B": a null tensor pointer in the C entry
  static LauncherSignature of(const KernelDecl &k);
};

// The C entry point `cName`, calling the C++ launcher `launcher` (qualified: a parameter may
// have the launcher's name); `inlineC` makes it an
// inline function, as a header included by several translation units needs.
void emitCEntry(const KernelDecl &k, const LauncherSignature &sig, const std::string &launcher,
                const std::string &cName, bool inlineC, CodeWriter &w);

// The typed launcher of one compiled kernel, named cppName(g.symbolName()) in namespace `ns`,
// and its C entry point (cPrefix + the kernel's name; none when cPrefix is empty).
void emitLauncher(const lower::Kernel &kernel, const ftg::Graph &g, const std::string &ns,
                  const std::string &cPrefix, bool inlineC, CodeWriter &w);

} // namespace tlc::codegen
