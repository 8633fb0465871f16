// CUDA C++ generation from inferred FTGs: one __global__ kernel per TileLang kernel (a
// template over whether every tensor's rows are 16-byte aligned, so vectorized and scalar
// copy paths both exist), and a typed host launcher with a C entry point (runtime/tlc/runtime.h).
#pragma once

#include "lower/LoopIR.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tlc::codegen {

class CodeWriter;

struct EmitOptions {
  std::string target;        // the --target spelling, for the banner (set by the driver)
  std::string cppNamespace;  // C++ namespace of the launchers ("tlc_kernels" by default)
  std::string commandLine;   // recorded in the banner
  // Inline the device library and the runtime header instead of including them: the output
  // then needs only the CUDA toolkit (header-only libraries, `tlc -c`).
  bool selfContained = false;
  // A header-only library: #pragma once, inline C entry points named tlc_<namespace>_<kernel>.
  bool header = false;
  // #line directives: a kernel's statements name the .tl line they come from, the rest of
  // the code its own line in `outputName` (the generated file as the compiler will see it).
  bool lineDirectives = false;
  std::string outputName;
  // For the CPU emulator (tlc run --emulate, docs/emulator.md): the launchers call
  // tl::emu::launch instead of the <<<...>>> syntax that only nvcc parses; the kernels are
  // the same text.
  bool emulate = false;
  // HIP C++ for an AMD target (--emit=hip): the same kernels and launchers over the HIP
  // runtime and the device library's HIP half (stdlib/tl/hip/).
  bool hip = false;
  // A PyTorch extension: the CUDA, then torch ops calling the launchers (TorchEmitter.cpp).
  bool torch = false;
};

// One lowered kernel to emit (lower/Lower.h).
struct KernelInput {
  const lower::Kernel *kernel;
  std::string sourceName;
  bool cEntry = true; // false for the variants behind a ShapeDispatch
};

// A kernel compiled in several variants, each for some buckets of its dynamic sizes: of its
// `auto` parameters (the recommender's choice per bucket) or of defaults that compare sizes
// with constants (one bucket per range, driver/DefaultVariants.h). The launcher named after
// the kernel reads the sizes of the call, finds their bucket and runs that bucket's variant.
// Every variant takes any size; the bucket decides only which one runs.
struct ShapeDispatch {
  // An axis splits one symbol's sizes into ranges at `edges`, or, with a `divisor`, into the
  // sizes that are not multiples of it (bucket 0) and those that are (bucket 1). A symbol may
  // have several axes.
  struct Axis {
    std::string symbol;
    std::vector<int64_t> edges;           // the first size of buckets 1, 2, ...
    std::vector<std::string> ranges;      // per bucket, "[64, 1024)" (comments)
    std::vector<int64_t> representatives; // per bucket, the size it was tuned or evaluated at (comments)
    int64_t divisor = 0;
    size_t buckets() const { return divisor ? 2 : edges.size() + 1; }
  };
  const lower::Launch *kernel = nullptr;  // the kernel (every variant has its signature)
  std::string selector;                   // the function that maps sizes to a variant
  std::vector<std::string> variants;      // launcher names; [0] is the fallback
  std::vector<std::string> configs;       // per variant, "block_M=128 block_N=64 ..."
  std::vector<Axis> axes;
  std::vector<size_t> variantOfBucket;    // row-major over the axes, the last fastest
  // Comments: where the variants come from ("variants of its `auto` parameters, chosen by
  // the cost model for h100-sxm over 16 buckets of its dynamic sizes") and what a bucket's
  // representative is ("tuned at").
  std::string origin;
  std::string representativeIs = "tuned at";
  bool fallbackServesMost = true; // variant 0 serves the most buckets (the recommender's)
};

// Dispatchers come after all kernels, so their variants are declared.
void emitCuda(const std::vector<KernelInput> &kernels, const std::vector<ShapeDispatch> &dispatches,
              const EmitOptions &options, llvm::raw_ostream &os);

// What emitCuda and emitDeclarations share: the launchers' C++ namespace, the C entries' name
// prefix, and the banner (the sources, the target and the command line).
std::string launcherNamespace(const EmitOptions &options);
std::string cEntryPrefix(const EmitOptions &options);
void writeBanner(const std::vector<KernelInput> &kernels, const EmitOptions &options, llvm::raw_ostream &os);

// The declarations of the host entry points that emitCuda defines for the same kernels and
// options (--emit=decl; DeclEmitter.cpp), for translation units a host compiler builds.
void emitDeclarations(const std::vector<KernelInput> &kernels, const std::vector<ShapeDispatch> &dispatches,
                      const EmitOptions &options, llvm::raw_ostream &os);

// The public launchers, in the order they are emitted: every kernel but the variants behind a
// dispatch, then the dispatchers (which carry their kernel's name).
std::vector<const lower::Launch *> publicLaunches(const std::vector<KernelInput> &kernels,
                                                  const std::vector<ShapeDispatch> &dispatches);

// --emit=torch (TorchEmitter.cpp): the torch library the ops go in (the launchers' namespace,
// `::` as `_`); the op of a kernel (its name, `_` appended to a Python keyword) and the op that
// allocates its outputs (the kernel's name + `_alloc`); the ops themselves, after the launchers.
std::string torchNamespace(const EmitOptions &options);
std::string torchName(llvm::StringRef kernel);
std::string torchAllocName(llvm::StringRef kernel);
void emitTorchOps(const std::vector<KernelInput> &kernels, const std::vector<ShapeDispatch> &dispatches,
                  const EmitOptions &options, CodeWriter &w);

// The device-library and runtime text that `code` needs (the closure of the headers whose
// functions it calls), each behind its own include guard so that two generated headers can
// share one translation unit.
std::string inlineLibrary(const std::string &code, bool hip);

} // namespace tlc::codegen
