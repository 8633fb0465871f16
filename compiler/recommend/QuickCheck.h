// Cheap necessary conditions a configuration must meet, checked on the kernel's AST with the
// knob values substituted (ExprEvaluator) before it is compiled. They reject what the
// compiler would reject anyway, only sooner: a candidate that passes is still compiled and
// judged by the passes, so a quick check may be weaker than the pass it anticipates but
// never stricter.
//
//   registers  the largest 2-d fragment or local array alone (a fragment's elements spread
//              over the block's threads, as every fragment layout does) plus instruction
//              selection's scalar registers (infer/RegisterEstimate.h) exceed the registers a
//              thread may have
//   warps      a gemm's accumulator cannot be split over the warps as its policy demands:
//              each warp needs a multiple of the MMA atom's m x n tile (infer/WarpSplit.h,
//              as LayoutInference::strictGemm)
//   threads    not a multiple of the warp size, or more than a block may have
#pragma once

#include "recommend/CandidateCompiler.h"
#include "recommend/ExprEval.h"
#include "target/Descriptor.h"

#include <optional>
#include <string>

namespace tlc::recommend {

class QuickCheck {
public:
  QuickCheck(const KernelDecl &structure, const target::TargetDesc &target)
      : k(structure), target(target) {}

  // Why `config` cannot compile, or nullopt when it may.
  std::optional<std::string> reject(const Config &config);

private:
  std::optional<std::string> checkRegisters(int64_t threads);
  std::optional<std::string> checkGemms(int64_t threads);

  const KernelDecl &k;
  const target::TargetDesc &target;
  ExprEvaluator eval;
};

} // namespace tlc::recommend
