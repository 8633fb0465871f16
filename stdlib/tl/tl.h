// tl/tl.h - the whole device library of tlc.
//
// Generated code may include single headers instead; each one includes what it needs. The
// NVIDIA-only headers (mma, ldmatrix, barrier) are empty under HIP. Hopper additions
// (wgmma.h, tma.h, mbarrier.h) will join this list guarded by TL_ARCH_SM90A.
#pragma once

#include "common.h"
#include "dtypes.h"
#include "math.h"
#include "memory.h"
#include "cp_async.h"
#include "ldmatrix.h"
#include "mma.h"
#include "reduce.h"
#include "atomic.h"
#include "barrier.h"
#include "swizzle.h"
#include "gemm.h"
