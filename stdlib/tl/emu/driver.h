// tl/emu/driver.h - the program `tlc run --emulate` builds around one kernel's C entry point:
// it makes the tensors (random, seeded, or read from files), runs the kernel on the emulator
// and writes every tensor to the output directory (docs/emulator.md).
//
//   ./emulated [--shape NAME=N]... [--seed S] [--input NAME=FILE]... [--output-dir DIR] [--max-blocks N]
//              [--init-outputs nan|zero] [--arg NAME=VALUE]...
//
// Files are raw little-endian elements, row-major, contiguous (i4/u4: two per byte). The output
// directory gets NAME.bin for every tensor (inputs as used, outputs as the kernel left them)
// and manifest.json naming their dtypes and shapes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tl/emu/emulate.h"
#include "tlc/runtime.h"

namespace tl::emu {

struct TensorSpec {
  const char* name;
  int dtype;  // tlc_dtype
  bool out;
  std::vector<std::int64_t> shape;
};
struct ScalarSpec {
  const char* name;
  double value;  // default; --arg NAME=VALUE replaces it
};

// The size `--shape NAME=N` gives a dynamic shape symbol.
inline std::int64_t shape_value(int argc, char** argv, const char* name) {
  const std::string prefix = std::string(name) + "=";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--shape" && std::string(argv[i + 1]).rfind(prefix, 0) == 0)
      return std::strtoll(argv[i + 1] + prefix.size(), nullptr, 10);
  std::fprintf(stderr, "tl emulator: error: shape symbol %s needs a size: --shape %s=N\n", name, name);
  std::exit(2);
}

using EntryCall = std::function<int(tlc_tensor_view* views, const double* scalars, char* error, std::size_t size)>;

// Makes the tensors, runs `call` (the kernel's C entry point) on the emulator and writes every
// tensor to the output directory; returns the program's exit status. Compiled once per host
// compiler and flags (tl/emu/driver.cpp, kept in tlc's cache), not with every kernel.
int run_main(int argc, char** argv, unsigned char* smem, std::size_t smem_bytes, const char* kernel,
             const std::vector<TensorSpec>& tensors, std::vector<ScalarSpec> scalars, const EntryCall& call);

}  // namespace tl::emu
