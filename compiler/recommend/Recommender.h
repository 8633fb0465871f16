// Tile recommendation for one kernel: enumerate the knob space, compile each configuration
// up to the inferred FTG (illegal ones keep the passes' reason), predict each legal one with
// the cost model, and rank by predicted time.
//
// Shapes: shape symbols bound by -D are used as given. Dynamic ones are tuned for the sizes
// a ranking is asked for (Recommender::rank), else --assume NAME=VALUE, else 4096; the
// compiled kernel still takes any size. Several buckets of sizes, each ranked by one
// Recommender, become variants behind a shape dispatch (ShapeBuckets.h).
#pragma once

#include "recommend/CandidateCompiler.h"
#include "recommend/CostModel.h"
#include "recommend/Knobs.h"
#include "target/Descriptor.h"

#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tlc::recommend {

struct RecommendOptions {
  std::string kernel;
  std::vector<Define> defines;              // -D: shapes and pinned knobs
  std::map<std::string, int64_t> assumed;   // --assume: buckets for dynamic shape symbols
  bool onlyAuto = false;                    // search `auto` parameters only
  // Keep every compiled candidate for further rankings of the same Recommender (shape
  // buckets); otherwise only the latest is kept.
  bool reuseCompilations = false;
  std::map<std::string, std::vector<std::string>> values; // --values: a knob's values to try
  static constexpr int64_t kDefaultBucket = 4096;
  // Ranking takes ~0.1 ms per configuration: beyond this the space must be narrowed.
  static constexpr size_t kMaxCandidates = 100000;
};

struct Candidate {
  Config config;     // the searched knobs, in KnobSpace order
  bool legal = false;
  std::string reason; // when illegal: the compiler's or the model's first objection
  bool quickReject = false; // rejected by a QuickCheck before compiling
  bool compileError = false; // rejected by the compiler (its errors are the reason)
  Prediction prediction;
};

struct ShapeBinding {
  std::string name;
  int64_t value;
  bool assumed; // a representative bucket, not bound by -D
};

struct Recommendation {
  std::string kernel, file;
  target::TargetDesc target;
  std::vector<Knob> knobs;
  std::vector<std::string> pinned;          // knobs -D fixed
  std::vector<std::string> unresolvedAuto;  // `auto` parameters with no values to try
  std::vector<ShapeBinding> shapes;
  std::vector<Candidate> ranked;   // legal, fastest first
  std::vector<Candidate> illegal;  // in enumeration order
  // Why illegal.front() is illegal, as located diagnostics: the compiler's errors (or, for
  // a quick or model rejection, an error at the kernel's name), then a note at the
  // declaration of each knob saying which value the candidate gave it (`auto(...)` lists
  // are where such values come from). Empty when every candidate is legal.
  std::string firstIllegalDiagnostics;
  size_t compilations = 0;         // candidates share one when only model-only knobs differ
  size_t quickRejects = 0;         // candidates rejected before compiling
  double seconds = 0;              // wall time of the whole recommendation (not reproducible:
                                   // reports show it only when asked to)
};

// Ranks one kernel's space for several assignments of its dynamic shape symbols (the
// shape buckets of a host-side dispatch). Candidates are compiled once and kept: with
// dynamic shapes nothing before the cost model depends on the sizes, so each further bucket
// costs only the model's evaluation.
class Recommender {
public:
  // Fails when the source does not parse or the kernel does not exist.
  static llvm::Expected<std::unique_ptr<Recommender>>
  create(llvm::StringRef source, llvm::StringRef fileName, const RecommendOptions &opts,
         const target::TargetDesc &target);
  ~Recommender();

  // The dynamic shape symbols (not bound by -D), in declaration order.
  std::vector<std::string> dynamicSymbols() const;
  // The sizes the kernel's tune_for statements give its shape symbols.
  const std::map<std::string, std::vector<int64_t>> &tunedSizes() const;
  // Ranks for `shapes` (dynamic symbols it leaves out: --assume, else the largest size
  // tune_for gives, else kDefaultBucket).
  // Fails when a shape the grid needs cannot be bound or the space is too large.
  llvm::Expected<Recommendation> rank(const std::map<std::string, int64_t> &shapes);

private:
  struct State;
  explicit Recommender(std::unique_ptr<State> state);
  std::unique_ptr<State> state;
};

// One ranking for the --assume shapes (a Recommender used once).
llvm::Expected<Recommendation> rank(llvm::StringRef source, llvm::StringRef fileName,
                                    const RecommendOptions &opts, const target::TargetDesc &target);

} // namespace tlc::recommend
