// tl/hip/tl.h - the whole device library of tlc for HIP (gfx90a, gfx940, gfx942).
//
// The portable headers of tl/ (dtypes, math, memory, reductions at wave size 64, atomics,
// swizzle) serve HIP as they are; the NVIDIA-only ones are empty under hipcc. This directory
// adds what differs on AMD: the MFMA gemm (gemm.h).
#pragma once

#include "../tl.h"
#include "gemm.h"
