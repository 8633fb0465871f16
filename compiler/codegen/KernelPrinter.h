// The CUDA printer of the loop IR (lower/LoopIR.h): one `__global__` template per kernel
// (over whether every tensor's rows are 16-byte aligned, so that vectorized and scalar paths
// both exist). It spells the decisions of lower/ and makes none; it sees no AST.
#pragma once

#include "codegen/CodeWriter.h"
#include "lower/LoopIR.h"

namespace tlc::codegen {

void printKernel(const lower::Kernel &k, CodeWriter &w);

} // namespace tlc::codegen
