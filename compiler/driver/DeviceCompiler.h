// `tlc -c`: hands the self-contained CUDA to nvcc (HIP to hipcc for the AMD targets) and
// reports what the compiler says.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tlc::driver {

// How `tlc -c` runs nvcc.
struct NvccOptions {
  // The nvcc to run; empty: $CUDA_HOME/bin/nvcc, nvcc on PATH, /usr/local/cuda/bin/nvcc.
  std::string nvcc;
  // Arguments passed through (-Xnvcc ARG), after tlc's own.
  std::vector<std::string> extraArgs;
  // Print the nvcc command line to stderr before running it (-v).
  bool verbose = false;
  // Write the generated CUDA to this file and compile it from there, keeping it (--save-temps),
  // instead of a temporary file that is deleted: nvcc's messages then point at a file that
  // exists. Empty: a temporary file.
  std::string savedSource;
  // HIP for an AMD target: hipcc compiles it (--offload-arch=TARGET) instead of nvcc.
  bool hip = false;
  // The hipcc to run; empty: $ROCM_PATH/bin/hipcc, hipcc on PATH, /opt/rocm/bin/hipcc.
  std::string hipcc;
};

// Compiles the CUDA that `generate` returns, given the path nvcc reads it from (which its
// #line directives name), for `target` into the object `output`. Returns an exit code (0, 1
// when nvcc fails, 2 when it cannot be found or run).
int compileWithNvcc(const std::function<std::string(const std::string &sourcePath)> &generate,
                    const std::string &target, const std::string &output, const NvccOptions &options);

} // namespace tlc::driver
