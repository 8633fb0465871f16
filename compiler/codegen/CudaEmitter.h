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
  std::string sourceName;    // for the banner
  std::string target = "sm_90a";
  std::string cppNamespace;  // C++ namespace of the launchers ("tlc_kernels" by default)
  std::string commandLine;   // recorded in the banner
};

// Returns false after reporting constructs the back end cannot lower.
bool emitCuda(const std::vector<ftg::Graph *> &kernels, const EmitOptions &options,
              DiagnosticEngine &diags, llvm::raw_ostream &os);

} // namespace tlc::codegen
