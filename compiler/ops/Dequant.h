// What other tile operators need of dequant_i4's lowering.
#pragma once

#include "lower/KernelLowering.h"

namespace tlc::ops {

// The scale of register `reg` of a dequant_i4's fragment destination (a C++ expression in its
// dtype): the register's row's scale for its column's group. For the gemm that applies the
// scales the dequant left out (infer/ScaleFolding.cpp).
std::string foldedScale(lower::KernelLowering &L, const ftg::Node &dequant, int64_t reg);

} // namespace tlc::ops
