// tl/emu/emulate.h - the CPU emulator of tlc's generated CUDA (docs/emulator.md).
//
// The CUDA tlc prints for --target sm_80 is compiled as ordinary C++ (g++/clang++) with
// -DTL_EMULATE and stdlib/tl/emu/include first on the include path. This header maps the CUDA
// keywords and builtins onto the emulator: every thread of a block is a fiber (scheduler.h),
// warp-collective instructions rendezvous the lanes of a warp and compute from all of them
// (instructions.h, written from the PTX ISA's fragment tables), cp.async copies land only at
// the wait that covers them (cp_async.h). The vendor half/bfloat16/fp8 types come from the
// CUDA toolkit's headers, which have host paths (no GPU or driver is needed).
#pragma once

#if !defined(TL_EMULATE)
#error "tl/emu/emulate.h is the CPU emulator: compile with -DTL_EMULATE"
#endif

// CUDA's execution-space and memory-space keywords mean nothing on the host. Defined before
// the toolkit's host_defines.h, which keeps definitions it finds.
#define __global__
#define __device__
#define __host__
#define __shared__
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#define __grid_constant__

#include <cuda_runtime_api.h>  // the runtime's types and declarations (defined in runtime.h)
#include <vector_types.h>
#include <vector_functions.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "tl/emu/scheduler.h"
#include "tl/emu/builtins.h"
#include "tl/emu/cp_async.h"
#include "tl/emu/instructions.h"
#include "tl/emu/launch.h"
