// cuda_runtime.h of the CPU emulator (tlc run --emulate, docs/emulator.md): generated code
// includes <cuda_runtime.h> first, and with this directory on the include path (and
// -DTL_EMULATE) that brings in the emulation layer instead of the CUDA runtime.
#pragma once
#include "tl/emu/emulate.h"
