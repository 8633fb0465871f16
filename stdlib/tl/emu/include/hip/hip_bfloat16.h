// hip/hip_bfloat16.h of the CPU emulator (tlc run --emulate --target gfx90a, docs/emulator.md): with this
// directory first on the include path (and -DTL_EMULATE), HIP code gets the emulation layer.
#pragma once
#include "tl/emu/hip.h"
