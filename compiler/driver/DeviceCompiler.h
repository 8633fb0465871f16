// `tlc -c`: hands the self-contained CUDA to nvcc and reports what nvcc says.
#pragma once

#include <string>

namespace tlc::driver {

// Compiles `source` for `target` into the object `output`. `nvcc` may be empty: then
// $CUDA_HOME/bin/nvcc, nvcc on PATH, /usr/local/cuda/bin/nvcc, in that order. Returns an exit
// code (0, 1 when nvcc fails, 2 when it cannot be found or run).
int compileWithNvcc(const std::string &source, const std::string &target,
                    const std::string &output, const std::string &nvcc);

} // namespace tlc::driver
