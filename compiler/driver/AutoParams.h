// `auto` compile-time parameters: before Sema, every `auto` parameter that -D leaves unbound
// is filled with the recommender's choice. The choices are bound exactly like -D options
// (`-D kernel.name=value`) for the duration of the file's Sema, so the rest of the compiler
// sees ordinary constants; afterwards the parameters are marked as chosen by the recommender
// (CompileParamDecl::Source::Auto with a value).
//
// Shapes: symbols -D binds are tuned for exactly. Dynamic ones get shape buckets
// (recommend/ShapeBuckets.h: 16, 256, 1024 and 4096 per symbol unless --assume lists sizes); the
// recommender ranks every bucket and picks up to --max-variants configurations that serve
// them all. One configuration means an ordinary kernel; several mean variants of the kernel
// behind a host-side dispatch on the sizes of each call (codegen::ShapeDispatch).
#pragma once

#include "driver/Options.h"

#include "recommend/Recommender.h"
#include "recommend/ShapeBuckets.h"
#include "target/Descriptor.h"

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/Sema.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlc::driver {

// Parses --assume options (name=size or name=size,size,...; positive integers); reports as
// `tool`. With `single`, a list is an error (tlc recommend ranks for one shape).
bool parseAssumptions(const std::vector<std::string> &args,
                      std::map<std::string, std::vector<int64_t>> &out, llvm::StringRef tool,
                      bool single);

// Names in generated code of a kernel compiled in variants behind a shape dispatch (of its
// `auto` parameters or of defaults that depend on sizes): the variants ("gemm_v0", ...) and
// the function that picks one.
inline std::string variantName(const std::string &kernel, size_t v) { return kernel + "_v" + std::to_string(v); }
inline std::string selectorName(const std::string &kernel) { return kernel + "_variant"; }

// A kernel whose `auto` parameters got several variants.
struct KernelVariants {
  std::string kernel;
  recommend::BucketGrid grid;
  recommend::VariantChoice choice;
  std::string variantName(size_t v) const { return driver::variantName(kernel, v); }
  std::string selectorName() const { return driver::selectorName(kernel); }
};

class AutoParams {
public:
  AutoParams(const Options &opts, std::vector<Define> &userDefines)
      : opts(opts), userDefines(userDefines) {}

  // Runs the recommender for every kernel of `program` with unbound `auto` parameters.
  // Returns an exit code; errors are reported through `diags` or as usage errors.
  int choose(const Program &program, llvm::StringRef source, llvm::StringRef fileName,
             DiagnosticEngine &diags);

  // The chosen values, as kernel-qualified -D options (variant 0 of kernels with variants).
  const std::vector<Define> &defines() const { return chosen; }
  // The same with `kernel` set to variant `v` of its choice.
  std::vector<Define> definesFor(const KernelVariants &k, size_t v) const;
  const std::vector<KernelVariants> &variants() const { return multi; }
  // Marks the parameters bound from `bound` as chosen by the recommender.
  static void markChosen(Program &program, const std::vector<Define> &bound);
  // "-D gemm.block_M=128 -D gemm.block_N=256 (for h100-sxm)": for the generated code's banner;
  // empty when nothing was chosen.
  std::string summary() const;
  const std::string &targetName() const;

private:
  std::optional<target::TargetDesc> targetFor(DiagnosticEngine &diags);
  // The buckets of the kernel's dynamic symbols (the sizes --assume gives, else the kernel's
  // tune_for, else the default representatives); single-size ones go to `fixed`.
  recommend::BucketGrid bucketsFor(const KernelDecl &k, const std::vector<std::string> &dynamic,
                                   const std::map<std::string, std::vector<int64_t>> &tuned,
                                   std::map<std::string, int64_t> &fixed) const;
  void record(const KernelDecl &k, const recommend::Config &config);
  void reportChoice(const KernelDecl &k, const recommend::Recommendation &rec,
                    const std::map<std::string, std::vector<int64_t>> &tuned) const; // --verbose
  void reportVariants(const KernelVariants &kv, double seconds) const;
  void reportNoLegal(const KernelDecl &k, const recommend::Recommendation &rec) const;
  bool needsChoice(const KernelDecl &k, const CompileParamDecl &p) const;

  const Options &opts;
  std::vector<Define> &userDefines; // marked used when choose() stops the compilation
  std::optional<target::TargetDesc> target;
  std::vector<Define> chosen;
  std::vector<KernelVariants> multi;
};

// Appends `extra` to `defines` and removes it again when it goes out of scope.
class ScopedDefines {
public:
  ScopedDefines(std::vector<Define> &defines, const std::vector<Define> &extra)
      : defines(defines), size(defines.size()) {
    defines.insert(defines.end(), extra.begin(), extra.end());
  }
  ~ScopedDefines() { defines.resize(size); }
  ScopedDefines(const ScopedDefines &) = delete;
  ScopedDefines &operator=(const ScopedDefines &) = delete;

private:
  std::vector<Define> &defines;
  size_t size;
};

} // namespace tlc::driver
