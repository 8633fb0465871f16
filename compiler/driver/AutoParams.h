// `auto` compile-time parameters: before Sema, every `auto` parameter that -D leaves unbound
// is filled with the recommender's first choice for the shapes -D binds (dynamic shapes:
// the --assume bucket, else 4096). The choices are bound exactly like -D options
// (`-D kernel.name=value`) for the duration of the file's Sema, so the rest of the compiler
// sees ordinary constants; afterwards the parameters are marked as chosen by the recommender
// (CompileParamDecl::Source::Auto with a value).
#pragma once

#include "driver/Compilation.h"

#include "recommend/Recommender.h"
#include "recommend/Target.h"

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/Sema.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlc::driver {

// Parses --assume options (name=value, value a positive integer); reports as `tool`.
bool parseAssumptions(const std::vector<std::string> &args, std::map<std::string, int64_t> &out,
                      llvm::StringRef tool);

class AutoParams {
public:
  AutoParams(const Options &opts, const std::vector<Define> &userDefines)
      : opts(opts), userDefines(userDefines) {}

  // Runs the recommender for every kernel of `program` with unbound `auto` parameters.
  // Returns an exit code; errors are reported through `diags` or as usage errors.
  int choose(const Program &program, llvm::StringRef source, llvm::StringRef fileName,
             DiagnosticEngine &diags);

  // The chosen values, as kernel-qualified -D options.
  const std::vector<Define> &defines() const { return chosen; }
  // Marks the parameters bound from defines() as chosen by the recommender.
  void markChosen(Program &program) const;
  // "-D gemm.block_M=128 -D gemm.block_N=256 (for h100-sxm)": for the generated code's banner;
  // empty when nothing was chosen.
  std::string summary() const;

private:
  std::optional<recommend::TargetDesc> targetFor(DiagnosticEngine &diags);
  void reportChoice(const KernelDecl &k, const recommend::Recommendation &rec) const; // --verbose
  void reportNoLegal(const KernelDecl &k, const recommend::Recommendation &rec) const;
  bool needsChoice(const KernelDecl &k, const CompileParamDecl &p) const;

  const Options &opts;
  const std::vector<Define> &userDefines;
  std::optional<recommend::TargetDesc> target;
  std::vector<Define> chosen;
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
