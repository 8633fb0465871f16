#include "recommend/Recommender.h"
#include "recommend/QuickCheck.h"

#include <algorithm>
#include <chrono>

namespace tlc::recommend {

namespace {

// The errors Sema reported about -D values ("tlc: error: -D x=y: ..."), without the source
// errors that follow from them.
std::string commandLineErrorsOf(llvm::StringRef diagnostics) {
  std::string out;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  diagnostics.split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (line.startswith("tlc: error: -D "))
      out += line.str() + "\n";
  return out;
}

// The names -D binds for `kernel` (plain or qualified with this kernel's name).
std::vector<std::string> pinnedNames(const std::vector<Define> &defines, llvm::StringRef kernel) {
  std::vector<std::string> names;
  for (const Define &d : defines)
    if (d.kernel.empty() || d.kernel == kernel)
      names.push_back(d.name);
  return names;
}

// Compiled structural configurations (the knobs Sema sees). With `keep`, every compilation
// is kept for later rankings of the same Recommender; otherwise only the latest, which is
// all one ranking needs since candidates enumerate model-only knobs last.
class StructureCache {
public:
  struct Entry {
    std::optional<std::string> quickReason;
    std::unique_ptr<CompiledKernel> compiled; // null when quick-rejected
  };

  StructureCache(const CandidateCompiler &compiler, const KernelDecl &structure,
                 const target::TargetDesc &target, bool keep)
      : compiler(compiler), quick(structure, target), keep(keep) {}

  const Entry &get(const Config &structural, const std::string &key) {
    auto it = entries.find(key);
    if (it != entries.end())
      return *it->second;
    if (!keep)
      entries.clear();
    auto e = std::make_unique<Entry>();
    e->quickReason = quick.reject(structural);
    if (!e->quickReason)
      e->compiled = compiler.compile(structural);
    return *(entries[key] = std::move(e));
  }

private:
  const CandidateCompiler &compiler;
  QuickCheck quick;
  bool keep;
  std::map<std::string, std::unique_ptr<Entry>> entries;
};

// Whether rendered diagnostics hold an error with a source location (not only
// "tlc: error: ..." lines).
bool hasLocatedError(llvm::StringRef diagnostics) {
  llvm::SmallVector<llvm::StringRef, 16> lines;
  diagnostics.split(lines, '\n');
  return llvm::any_of(lines, [](llvm::StringRef line) {
    return line.contains(": error: ") && !line.startswith("tlc: ");
  });
}

// The source text the first located error of `diagnostics` underlines (its caret line
// under its source line), or "" when there is none.
std::string firstErrorSubject(llvm::StringRef diagnostics) {
  llvm::SmallVector<llvm::StringRef, 16> lines;
  diagnostics.split(lines, '\n');
  for (size_t i = 0; i + 2 < lines.size(); ++i) {
    if (!lines[i].contains(": error: ") || lines[i].startswith("tlc: "))
      continue;
    llvm::StringRef source = lines[i + 1], caret = lines[i + 2];
    size_t begin = caret.find_first_not_of(' ');
    if (begin == llvm::StringRef::npos || begin >= source.size())
      return "";
    return source.substr(begin, caret.size() - begin).str();
  }
  return "";
}

// The notes that say where an illegal candidate's values come from: the knobs the first
// error underlines (`threads(threads)` with threads = 0), or every knob when it names none
// and not `onlyNamed` (shared memory over the budget is every tile's doing).
std::vector<CandidateCompiler::Note> valueNotes(const KernelDecl &k, const Config &config,
                                                llvm::StringRef diagnostics, bool onlyNamed) {
  std::string subject = firstErrorSubject(diagnostics);
  auto named = [&](llvm::StringRef name) {
    for (size_t at = subject.find(name.str()); at != std::string::npos;
         at = subject.find(name.str(), at + 1)) {
      auto isIdent = [](char ch) { return llvm::isAlnum(ch) || ch == '_'; };
      bool startOk = at == 0 || !isIdent(subject[at - 1]);
      size_t after = at + name.size();
      if (startOk && (after >= subject.size() || !isIdent(subject[after])))
        return true;
    }
    return false;
  };
  bool any = llvm::any_of(config, [&](const Binding &b) { return named(b.name); });
  // When every candidate fails alike, the values are not to blame unless the error points
  // at one; nor are they when it names a parameter the candidate does not set (-D pins it).
  if (!any && onlyNamed)
    return {};
  if (!any && llvm::any_of(k.compileParams, [&](const CompileParamDecl *p) {
        return named(p->getName());
      }))
    return {};
  std::vector<CandidateCompiler::Note> notes;
  for (const Binding &b : config) {
    if (any && !named(b.name))
      continue;
    for (const CompileParamDecl *p : k.compileParams) {
      if (p->getName() != b.name)
        continue;
      std::string value = "with '" + b.name + " = " + b.value + "', ";
      if (p->isAuto && !p->autoCandidates.empty())
        notes.push_back({p->autoRange, value + "a candidate of this `auto(...)`"});
      else if (p->isAuto)
        notes.push_back({p->autoRange, value + "a value the recommender tried for this `auto`"});
      else
        notes.push_back({p->getRange(), value + "a value the recommender tried instead of the "
                                        "default"});
    }
  }
  return notes;
}

class Search {
public:
  // `shapes`: values of the dynamic shape symbols, for the model only. They are not bound
  // for Sema, which would then check tiles against one particular size that the compiled
  // kernel does not have.
  Search(StructureCache &cache, const CandidateCompiler &compiler, const KernelDecl &structure,
         const KnobSpace &space, const std::map<std::string, int64_t> &shapes,
         const target::TargetDesc &target, Recommendation &out)
      : cache(cache), compiler(compiler), structure(structure), space(space), shapes(shapes),
        target(target), out(out) {}

  void run() {
    size_t n = space.size();
    for (size_t i = 0; i < n; ++i)
      evaluate(space.at(i));
    std::stable_sort(out.ranked.begin(), out.ranked.end(), [](const Candidate &a, const Candidate &b) {
      return a.prediction.seconds < b.prediction.seconds;
    });
    if (out.illegal.empty())
      return;
    const Candidate &first = out.illegal.front();
    bool alike = llvm::all_of(out.illegal, [&](const Candidate &c) { return c.reason == first.reason; });
    if (hasLocatedError(firstErrors))
      out.firstIllegalDiagnostics =
          firstErrors + compiler.renderNotes(valueNotes(structure, first.config, firstErrors, alike));
    else
      out.firstIllegalDiagnostics = compiler.renderError(
          structure.nameRange,
          "configuration " + configStr(first.config) + " of kernel '" + structure.name +
              "' is illegal: " + first.reason,
          valueNotes(structure, first.config, "", alike));
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
      useStructure(structural, key);

    Candidate c;
    c.config = config;
    if (badPanel) {
      c.reason = "swizzle_blocks panel must be a positive integer";
      return reject(std::move(c));
    }
    if (current->quickReason) {
      c.reason = *current->quickReason;
      c.quickReject = true;
      ++out.quickRejects;
      return reject(std::move(c));
    }
    const CompiledKernel &compiled = *current->compiled;
    if (!compiled.graph) {
      c.reason = compiled.error;
      c.compileError = true;
      return reject(std::move(c));
    }
    if (!grid) {
      c.reason = "the grid's size is not known at compile time";
      return reject(std::move(c));
    }
    c.prediction = predict(*compiled.graph, *grid, work, target,
                           panel.value_or(compiled.graph->swizzlePanel), traffic);
    c.legal = c.prediction.legal;
    c.reason = c.prediction.reason;
    if (!c.legal)
      return reject(std::move(c));
    out.ranked.push_back(std::move(c));
  }

  void reject(Candidate c) {
    if (out.illegal.empty() && c.compileError)
      firstErrors = current->compiled->diagnostics; // the cache may drop it before run() ends
    out.illegal.push_back(std::move(c));
  }

  void useStructure(const Config &structural, const std::string &key) {
    currentKey = key;
    grid.reset();
    current = &cache.get(structural, key);
    if (current->quickReason)
      return;
    ++out.compilations;
    const CompiledKernel &compiled = *current->compiled;
    if (!compiled.graph)
      return;
    ExprEvaluator env = shapeEnvironment(*compiled.kernel, shapes);
    grid = gridOf(*compiled.kernel, env);
    if (grid)
      work = analyzeWork(*compiled.graph, *grid, env);
  }

  StructureCache &cache;
  const CandidateCompiler &compiler;
  const KernelDecl &structure;
  const KnobSpace &space;
  const std::map<std::string, int64_t> &shapes;
  const target::TargetDesc &target;
  Recommendation &out;

  TrafficModel traffic;
  std::string firstErrors; // the compiler's diagnostics for out.illegal.front()
  const StructureCache::Entry *current = nullptr;
  std::optional<std::string> currentKey;
  std::optional<GridShape> grid;
  BlockWork work;
};

} // namespace

struct Recommender::State {
  RecommendOptions opts;
  target::TargetDesc target;
  std::string file;
  std::unique_ptr<CandidateCompiler> compiler;
  std::unique_ptr<CompiledKernel> structure; // the kernel after Sema, no values bound
  std::unique_ptr<StructureCache> cache;
};

Recommender::Recommender(std::unique_ptr<State> state) : state(std::move(state)) {}
Recommender::~Recommender() = default;

llvm::Expected<std::unique_ptr<Recommender>>
Recommender::create(llvm::StringRef source, llvm::StringRef fileName, const RecommendOptions &opts,
                    const target::TargetDesc &target) {
  auto compiler = CandidateCompiler::create(source.str(), fileName.str(), opts.kernel,
                                            opts.defines, target.info->codegenTarget());
  if (!compiler)
    return compiler.takeError();
  auto state = std::make_unique<State>();
  state->opts = opts;
  state->target = target;
  state->file = fileName.str();
  state->compiler = std::move(*compiler);
  // The kernel's structure: its shape symbols and where it uses each parameter. Sema may
  // stop on `auto` parameters that have no value yet; names are resolved all the same.
  state->structure = state->compiler->compile({}, /*infer=*/false);
  if (state->structure->commandLineErrors)
    return llvm::make_error<LocatedError>(commandLineErrorsOf(state->structure->diagnostics),
                                          /*commandLine=*/true);
  if (!state->structure->kernel)
    return llvm::make_error<LocatedError>(state->structure->diagnostics);
  // The cache's quick checks keep references: to the state's copies, which live as long.
  state->cache = std::make_unique<StructureCache>(*state->compiler, *state->structure->kernel,
                                                  state->target, opts.reuseCompilations);
  return std::unique_ptr<Recommender>(new Recommender(std::move(state)));
}

std::vector<std::string> Recommender::dynamicSymbols() const {
  std::vector<std::string> names;
  for (const ShapeSymbolDecl *s : state->structure->kernel->shapeSymbols)
    if (!(s->constant && s->constant->isInt()))
      names.push_back(s->getName().str());
  return names;
}

const std::map<std::string, std::vector<int64_t>> &Recommender::tunedSizes() const {
  return state->structure->kernel->tunedSizes;
}

llvm::Expected<Recommendation> Recommender::rank(const std::map<std::string, int64_t> &given) {
  auto start = std::chrono::steady_clock::now();
  const RecommendOptions &opts = state->opts;
  const KernelDecl &kernel = *state->structure->kernel;
  Recommendation out;
  out.kernel = opts.kernel;
  out.file = state->file;
  out.target = state->target;

  std::map<std::string, int64_t> shapes;
  for (const ShapeSymbolDecl *s : kernel.shapeSymbols) {
    if (s->constant && s->constant->isInt()) {
      out.shapes.push_back({s->getName().str(), s->constant->getInt(), false});
      continue;
    }
    std::string name = s->getName().str();
    int64_t v = RecommendOptions::kDefaultBucket;
    if (auto it = given.find(name); it != given.end())
      v = it->second;
    else if (auto it = opts.assumed.find(name); it != opts.assumed.end())
      v = it->second;
    else if (auto it = kernel.tunedSizes.find(name); it != kernel.tunedSizes.end())
      v = it->second.back();
    out.shapes.push_back({name, v, true});
    shapes[name] = v;
  }
  out.pinned = pinnedNames(opts.defines, opts.kernel);
  KnobSpaceOptions spaceOpts;
  spaceOpts.onlyAuto = opts.onlyAuto;
  spaceOpts.values = opts.values;
  KnobSpace space = KnobSpace::analyze(kernel, state->target, out.pinned, spaceOpts,
                                       shapeEnvironment(kernel, shapes));
  out.knobs = space.knobs();
  if (space.size() > RecommendOptions::kMaxCandidates)
    return llvm::make_error<LocatedError>(state->compiler->renderError(
        kernel.nameRange,
        "kernel '" + opts.kernel + "' has " +
            (space.size() == SIZE_MAX ? std::string("too many") : std::to_string(space.size())) +
            " configurations to rank (at most " +
            std::to_string(RecommendOptions::kMaxCandidates) +
            "); pin some knobs with -D, or list fewer values with auto(...) or --values"));
  out.unresolvedAuto = space.unresolvedAuto();
  llvm::erase_if(out.pinned, [&](const std::string &name) {
    return !llvm::any_of(kernel.compileParams,
                         [&](const CompileParamDecl *p) { return p->getName() == name; });
  });

  Search(*state->cache, *state->compiler, kernel, space, shapes, state->target, out).run();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

llvm::Expected<Recommendation> rank(llvm::StringRef source, llvm::StringRef fileName,
                                    const RecommendOptions &opts, const target::TargetDesc &target) {
  auto start = std::chrono::steady_clock::now();
  auto recommender = Recommender::create(source, fileName, opts, target);
  if (!recommender)
    return recommender.takeError();
  auto out = (*recommender)->rank({});
  if (out) // the whole recommendation, parsing included
    out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

} // namespace tlc::recommend
