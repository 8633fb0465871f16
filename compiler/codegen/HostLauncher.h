#pragma once

#include "codegen/KernelEmitter.h"

namespace tlc::codegen {

// Host type of a run-time scalar parameter (16-bit floats travel as float).
std::string cppTypeHost(DType t);
void emitLauncher(const KernelEmitter &kernel, const ftg::Graph &g, CodeWriter &w);

} // namespace tlc::codegen
