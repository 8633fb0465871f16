#include "recommend/Recommender.h"
#include "recommend/QuickCheck.h"

#include <algorithm>
#include <chrono>

namespace tlc::recommend {

namespace {

llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

// The names -D binds for `kernel` (plain or qualified with this kernel's name).
std::vector<std::string> pinnedNames(const std::vector<Define> &defines, llvm::StringRef kernel) {
  std::vector<std::string> names;
  for (const Define &d : defines)
    if (d.kernel.empty() || d.kernel == kernel)
      names.push_back(d.name);
  return names;
}

class Search {
public:
  // `assumed`: values of the dynamic shape symbols, for the model only. They are not bound
  // for Sema, which would then check tiles against one particular size that the compiled
  // kernel does not have.
  Search(const CandidateCompiler &compiler, const KnobSpace &space,
         const std::map<std::string, int64_t> &assumed, const KernelDecl &structure,
         const TargetDesc &target, Recommendation &out)
      : compiler(compiler), space(space), assumed(assumed), target(target), out(out),
        quick(structure, target) {}

  void run() {
    size_t n = space.size();
    for (size_t i = 0; i < n; ++i)
      evaluate(space.at(i));
    std::stable_sort(out.ranked.begin(), out.ranked.end(), [](const Candidate &a, const Candidate &b) {
      return a.prediction.seconds < b.prediction.seconds;
    });
  }

private:
  void evaluate(const Config &config) {
    Config structural;
    std::optional<int> panel;
    bool badPanel = false;
    for (size_t k = 0; k < config.size(); ++k) {
      if (!space.knobs()[k].modelOnly()) {
        structural.push_back(config[k]);
        continue;
      }
      // Sema never sees a model-only knob, so its value is checked here, as Sema would.
      int v = 0;
      badPanel = llvm::StringRef(config[k].value).getAsInteger(10, v) || v <= 0;
      panel = v;
    }
    std::string key = configStr(structural);
    if (key != currentKey)
      compileStructure(structural, key);

    Candidate c;
    c.config = config;
    if (badPanel) {
      c.reason = "swizzle_blocks panel must be a positive integer";
      out.illegal.push_back(std::move(c));
      return;
    }
    if (quickReason) {
      c.reason = *quickReason;
      c.quickReject = true;
      ++out.quickRejects;
      out.illegal.push_back(std::move(c));
      return;
    }
    if (!current->graph) {
      c.reason = current->error;
      out.illegal.push_back(std::move(c));
      return;
    }
    if (!grid) {
      c.reason = "the grid's size is not known at compile time";
      out.illegal.push_back(std::move(c));
      return;
    }
    c.prediction = predict(*current->graph, *grid, work, target,
                           panel.value_or(current->graph->swizzlePanel), traffic);
    c.legal = c.prediction.legal;
    c.reason = c.prediction.reason;
    (c.legal ? out.ranked : out.illegal).push_back(std::move(c));
  }

  void compileStructure(const Config &structural, const std::string &key) {
    currentKey = key;
    current.reset();
    grid.reset();
    quickReason = quick.reject(structural);
    if (quickReason)
      return;
    current = compiler.compile(structural);
    ++out.compilations;
    if (!current->graph)
      return;
    ExprEvaluator shapes = shapeEnvironment(*current->kernel, assumed);
    grid = gridOf(*current->kernel, shapes);
    if (grid)
      work = analyzeWork(*current->graph, *grid, shapes);
  }

  const CandidateCompiler &compiler;
  const KnobSpace &space;
  const std::map<std::string, int64_t> &assumed;
  const TargetDesc &target;
  Recommendation &out;

  QuickCheck quick;
  TrafficModel traffic;
  std::unique_ptr<CompiledKernel> current;
  std::optional<std::string> quickReason;
  std::optional<std::string> currentKey;
  std::optional<GridShape> grid;
  BlockWork work;
};

} // namespace

llvm::Expected<Recommendation> rank(llvm::StringRef source, llvm::StringRef fileName,
                                         const RecommendOptions &opts, const TargetDesc &target) {
  auto start = std::chrono::steady_clock::now();
  auto compiler = CandidateCompiler::create(source.str(), fileName.str(), opts.kernel,
                                            opts.defines, target.arch);
  if (!compiler)
    return compiler.takeError();

  Recommendation out;
  out.kernel = opts.kernel;
  out.file = fileName.str();
  out.target = target;

  // The kernel's structure: its shape symbols and where it uses each parameter. Sema may
  // stop on `auto` parameters that have no value yet; names are resolved all the same.
  auto structure = (*compiler)->compile({}, /*infer=*/false);
  if (!structure->kernel)
    return failure(fileName + ": " + structure->error);
  std::map<std::string, int64_t> assumed;
  for (const ShapeSymbolDecl *s : structure->kernel->shapeSymbols) {
    if (s->constant && s->constant->isInt()) {
      out.shapes.push_back({s->getName().str(), s->constant->getInt(), false});
      continue;
    }
    auto it = opts.assumed.find(s->getName().str());
    int64_t v = it != opts.assumed.end() ? it->second : RecommendOptions::kDefaultBucket;
    out.shapes.push_back({s->getName().str(), v, true});
    assumed[s->getName().str()] = v;
  }
  out.pinned = pinnedNames(opts.defines, opts.kernel);
  KnobSpaceOptions spaceOpts;
  spaceOpts.onlyAuto = opts.onlyAuto;
  spaceOpts.values = opts.values;
  KnobSpace space = KnobSpace::analyze(*structure->kernel, target, out.pinned, spaceOpts,
                                       shapeEnvironment(*structure->kernel, assumed));
  out.knobs = space.knobs();
  if (space.size() > RecommendOptions::kMaxCandidates)
    return failure("kernel '" + opts.kernel + "' has " +
                   (space.size() == SIZE_MAX ? std::string("too many")
                                             : std::to_string(space.size())) +
                   " configurations to rank (at most " +
                   std::to_string(RecommendOptions::kMaxCandidates) +
                   "); pin some knobs with -D, or list fewer values with auto(...) or --values");
  out.unresolvedAuto = space.unresolvedAuto();
  llvm::erase_if(out.pinned, [&](const std::string &name) {
    return !llvm::any_of(structure->kernel->compileParams,
                         [&](const CompileParamDecl *p) { return p->getName() == name; });
  });

  Search(**compiler, space, assumed, *structure->kernel, target, out).run();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

} // namespace tlc::recommend
