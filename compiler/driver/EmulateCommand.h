// `tlc run --emulate FILE --kernel K -D ...`: generates a kernel's CUDA, builds it with the
// host C++ compiler against the CPU emulator (stdlib/tl/emu/, docs/emulator.md) and runs it on
// random or given inputs, writing every tensor to an output directory.
#pragma once

#include "driver/Options.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace tlc::driver {

struct RunArgs {
  bool emulate = false;
  std::string input;
  std::string kernel;
  std::string target = target::kEmulatedTargetName.str();
  std::vector<std::string> defines;
  std::vector<std::string> shapes;  // NAME=N: dynamic shape symbols' sizes at run time
  std::string seed = "1";
  std::vector<std::string> inputs;  // NAME=FILE
  std::vector<std::string> scalars; // NAME=VALUE
  std::string outputDir = "emulated";
  std::string cxx;                  // host compiler; default $CXX, then c++, g++, clang++
  std::string cudaInclude;          // where cuda_fp16.h is; default $CUDA_HOME/include, ...
  std::string buildDir;             // keep the generated program here (default: a temporary)
  std::string maxBlocks;
  std::string initOutputs;
  std::vector<std::string> extraCxxArgs; // --cxx-arg ARG
  std::string cacheDir;             // compiled emulator drivers; default $TLC_CACHE_DIR, ~/.cache/tlc
  bool verbose = false;
  // tlc's own options that apply (--color, -Werror, ...).
  Options base;
};

CLI::App *addRunCommand(CLI::App &app, RunArgs &args);
int runEmulated(RunArgs &args);

} // namespace tlc::driver
