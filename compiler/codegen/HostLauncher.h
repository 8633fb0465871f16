#pragma once

#include "codegen/CodeWriter.h"
#include "lower/LoopIR.h"

namespace tlc::codegen {

// The launcher's parameter lists for kernel `k`; each ends in ", " when not empty.
struct LauncherSignature {
  std::string cpp;       // "const tlc::TensorView& A, float scale, "
  std::string c;         // "const tlc_tensor_view* A, float scale, "
  std::string forward;   // "A, scale, ": calling another launcher with the same parameters
  std::string fromC;     // "*A, scale, ": calling the launcher from the C entry
  std::string nullCheck; // "!A || !B": a null tensor pointer in the C entry
  std::string stream;    // "cudaStream_t", or "hipStream_t" for a HIP launcher
  static LauncherSignature of(const lower::Launch &k);
};

// A CUDA runtime name as the launcher of `k` spells it: the same API under the `hip` prefix
// for HIP launchers ("cudaStream_t" -> "hipStream_t", "cudaFailure" -> "hipFailure"), which
// is how HIP names every runtime call and type the launchers use. One rule, so that the CUDA
// and HIP launchers make the same checks in the same order.
std::string runtimeName(const lower::Launch &k, const std::string &cudaName);

// The launcher's and the C entry's declarations (what --emit=decl prints and the definitions
// open with): `isInline` in header-only libraries, which several translation units include;
// elsewhere ordinary functions that other translation units may call.
std::string launcherDecl(const std::string &name, const LauncherSignature &sig, bool isInline);
std::string cEntryDecl(const std::string &cName, const LauncherSignature &sig, bool isInline);

// The C entry point `cName`, calling the C++ launcher `launcher` (qualified: a parameter may
// have the launcher's name); `inlineC` makes it an
// inline function, as a header included by several translation units needs.
void emitCEntry(const lower::Launch &k, const LauncherSignature &sig, const std::string &launcher,
                const std::string &cName, bool inlineC, CodeWriter &w);

// The typed launcher of one compiled kernel, named cppName(kernel.symbol) in namespace `ns`,
// and its C entry point (cPrefix + the kernel's name; none when cPrefix is empty); both inline
// when `inlineC` (a header-only library); `emulate` launches through the CPU emulator
// (tl::emu::launch) instead of <<<...>>>.
void emitLauncher(const lower::Kernel &kernel, const std::string &ns, const std::string &cPrefix, bool inlineC,
                  CodeWriter &w, bool emulate = false);

} // namespace tlc::codegen
