// tl/tl.h - the whole device library of tlc.
//
// Generated code may include single headers instead; each one includes what it needs. The
// NVIDIA-only headers (mma, ldmatrix, barrier, wgmma) are empty under HIP; wgmma's
// instructions exist only in sm_90a builds (elsewhere they trap).
#pragma once

#include "common.h"
#include "dtypes.h"
#include "dequant.h"
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
#include "wgmma.h"
#include "mbarrier.h"
#include "tma.h"
