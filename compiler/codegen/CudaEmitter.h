// CUDA C++ generation from inferred FTGs: one __global__ kernel per TileLang kernel (a
// template over whether every tensor's rows are 16-byte aligned, so vectorized and scalar
// copy paths both exist), and a typed host launcher with a C entry point (runtime/tlc/runtime.h).
#pragma once

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "ir/FTG.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tlc::codegen {

struct EmitOptions {
  std::string target = "sm_90a";
  std::string cppNamespace;  // C++ namespace of the launchers ("tlc_kernels" by default)
  std::string commandLine;   // recorded in the banner
  // Inline the device library and the runtime header instead of including them: the output
  // then needs only the CUDA toolkit (header-only libraries, `tlc -c`).
  bool selfContained = false;
  // A header-only library: #pragma once, inline C entry points named tlc_<namespace>_<kernel>.
  bool header = false;
};

// One kernel to emit, with the diagnostics engine of the file it came from.
struct KernelInput {
  ftg::Graph *graph;
  DiagnosticEngine *diags;
  std::string sourceName;
};

// Returns false after reporting constructs the back end cannot lower; writes nothing then.
bool emitCuda(const std::vector<KernelInput> &kernels, const EmitOptions &options,
              llvm::raw_ostream &os);

// The device-library and runtime text that `code` needs (the closure of the headers whose
// functions it calls), each behind its own include guard so that two generated headers can
// share one translation unit.
std::string inlineLibrary(const std::string &code);

} // namespace tlc::codegen
