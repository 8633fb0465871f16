// The one header a CPU-only libtorch-dev (Debian's) lacks for compiling CUDA extensions: the
// file PyTorch's CMake generates into CUDA builds, with the one macro it defines there. Used
// only where that file is missing (tests/compile/torch_ext.sh).
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
