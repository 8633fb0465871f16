#include "recommend/Recommender.h"

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
  Search(const CandidateCompiler &compiler, const KnobSpace &space, const Config &shapes,
         const TargetDesc &target, Recommendation &out)
      : compiler(compiler), space(space), shapes(shapes), target(target), out(out) {}

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
    int panel = -1;
    for (size_t k = 0; k < config.size(); ++k) {
      if (space.knobs()[k].modelOnly())
        panel = std::stoi(config[k].value);
      else
        structural.push_back(config[k]);
    }
    if (!current || configStr(structural) != currentKey)
      compileStructure(structural);

    Candidate c;
    c.config = config;
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
                           panel >= 0 ? panel : current->graph->swizzlePanel);
    c.legal = c.prediction.legal;
    c.reason = c.prediction.reason;
    (c.legal ? out.ranked : out.illegal).push_back(std::move(c));
  }

  void compileStructure(const Config &structural) {
    Config all = shapes;
    all.insert(all.end(), structural.begin(), structural.end());
    current = compiler.compile(all);
    currentKey = configStr(structural);
    ++out.compilations;
    grid.reset();
    if (!current->graph)
      return;
    grid = gridOf(*current->kernel);
    if (grid)
      work = analyzeWork(*current->graph, *grid);
  }

  const CandidateCompiler &compiler;
  const KnobSpace &space;
  const Config &shapes;
  const TargetDesc &target;
  Recommendation &out;

  std::unique_ptr<CompiledKernel> current;
  std::string currentKey;
  std::optional<GridShape> grid;
  BlockWork work;
};

} // namespace

llvm::Expected<Recommendation> recommend(llvm::StringRef source, llvm::StringRef fileName,
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

  // The kernel's structure, first to learn its dynamic shape symbols, then with them bound
  // to their buckets so that tile sizes can be trimmed to the problem. Sema may stop on
  // `auto` parameters that have no value yet; names are resolved all the same.
  Config shapes;
  {
    auto probe = (*compiler)->compile({}, /*infer=*/false);
    if (!probe->kernel)
      return failure(fileName + ": " + probe->error);
    for (const ShapeSymbolDecl *s : probe->kernel->shapeSymbols) {
      if (s->constant && s->constant->isInt()) {
        out.shapes.push_back({s->getName().str(), s->constant->getInt(), false});
        continue;
      }
      auto it = opts.assumed.find(s->getName().str());
      int64_t v = it != opts.assumed.end() ? it->second : RecommendOptions::kDefaultBucket;
      out.shapes.push_back({s->getName().str(), v, true});
      shapes.push_back({s->getName().str(), std::to_string(v)});
    }
  }
  auto structure = (*compiler)->compile(shapes, /*infer=*/false);
  out.pinned = pinnedNames(opts.defines, opts.kernel);
  KnobSpaceOptions spaceOpts;
  spaceOpts.onlyAuto = opts.onlyAuto;
  KnobSpace space = KnobSpace::analyze(*structure->kernel, target, out.pinned, spaceOpts);
  out.knobs = space.knobs();
  out.unresolvedAuto = space.unresolvedAuto();
  llvm::erase_if(out.pinned, [&](const std::string &name) {
    return !llvm::any_of(structure->kernel->compileParams,
                         [&](const CompileParamDecl *p) { return p->getName() == name; });
  });

  Search(**compiler, space, shapes, target, out).run();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

} // namespace tlc::recommend
