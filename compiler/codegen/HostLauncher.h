#pragma once

#include "codegen/KernelEmitter.h"

namespace tlc::codegen {

// Host type of a run-time scalar parameter (16-bit floats travel as float).
std::string cppTypeHost(DType t);
// `cPrefix` names the C entry point (cPrefix + kernel); `inlineC` makes it an inline
// function, as a header included by several translation units needs.
void emitLauncher(const KernelEmitter &kernel, const ftg::Graph &g, const std::string &cPrefix,
                  bool inlineC, CodeWriter &w);

} // namespace tlc::codegen
