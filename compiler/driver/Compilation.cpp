#include "driver/Compilation.h"
#include "driver/AutoParams.h"


#include "frontend/ASTPrinter.h"
#include "frontend/Parser.h"
#include "infer/Passes.h"
#include "ir/PassManager.h"
#include "lower/Lower.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

namespace tlc::driver {

int Compilation::addFile(const std::string &path, llvm::raw_ostream &out) {
  auto bufferOrErr = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!bufferOrErr) {
    std::string why = "cannot read '" + path + "': " + bufferOrErr.getError().message();
    if (opts.diagnosticFormat == DiagnosticFormat::Json) {
      llvm::SourceMgr none;
      DiagnosticEngine json(none, llvm::errs());
      json.setFormat(DiagnosticFormat::Json);
      json.errorNoLocation(why);
    } else {
      llvm::WithColor::error(llvm::errs(), "tlc") << why << "\n";
    }
    return kUsageError;
  }
  auto unit = std::make_unique<Unit>();
  Unit &u = *unit;
  units.push_back(std::move(unit));
  u.path = path;
  unsigned bufferId = u.sourceMgr.AddNewSourceBuffer(std::move(*bufferOrErr), llvm::SMLoc());
  u.diags = std::make_unique<DiagnosticEngine>(u.sourceMgr, llvm::errs());
  u.diags->setShowColors(opts.showColors);
  u.diags->setFormat(opts.diagnosticFormat);
  u.diags->setWarningPolicy(opts.warnings);
  DiagnosticEngine &diags = *u.diags;

  if (opts.emit == "tokens")
    return dumpTokens(bufferId, diags, out) ? kSuccess : kInputError;
  if (!parseProgram(bufferId, u.ast, diags))
    return kInputError;
  AutoParams autoParams(opts, defines);
  if (int status = autoParams.choose(u.ast.program, u.sourceMgr.getMemoryBuffer(bufferId)->getBuffer(),
                                     path, diags))
    return status;
  bool ok = false;
  {
    ScopedDefines chosen(defines, autoParams.defines());
    Sema sema = makeSema(u.ast, diags);
    ok = sema.run();
    if (sema.commandLineErrors())
      return kUsageError;
  }
  AutoParams::markChosen(u.ast.program, autoParams.defines());
  if (std::string s = autoParams.summary(); !s.empty())
    autoSummaries.push_back(s);
  if (!ok)
    return kInputError;
  if (opts.emit == "ast") {
    printAST(u.ast.program, u.sourceMgr, out);
    return kSuccess;
  }

  bool ranksOk = true;
  for (KernelDecl *k : u.ast.program.kernels)
    ranksOk &= lower::checkTensorRanks(*k, diags);
  if (!ranksOk)
    return kInputError;
  // Every stage stops once the error cap is passed (DiagnosticEngine::overErrorCap).
  for (KernelDecl *k : u.ast.program.kernels) {
    if (diags.overErrorCap())
      break;
    if (auto g = ftg::buildGraph(*k, diags, opts.targetInfo())) {
      g->sourceName = path;
      u.graphs.push_back(std::move(g));
    }
  }
  if (diags.hasErrors())
    return kInputError;
  if (opts.emit == "ftg") {
    for (auto &g : u.graphs)
      ftg::printGraph(*g, out, /*withInference=*/false);
    return kSuccess;
  }
  for (auto &g : u.graphs)
    if (!diags.overErrorCap() && !runInference(*g, diags))
      noteSizeVariant(*g->kernel, firstRanges(*g->kernel));
  if (diags.hasErrors())
    return kInputError;
  // Dumps show variant 0; only generated code needs the others.
  if (needsCodegen() && (!compileVariants(u, bufferId, autoParams) || !namesDistinctAcrossFiles(u) ||
                         (opts.emit == "torch" && !torchOpsDistinct(u))))
    return kInputError;
  if (opts.emit == "inferred")
    for (auto &g : u.graphs)
      ftg::printGraph(*g, out, /*withInference=*/true);
  if (needsCodegen() || opts.emit == "loops") {
    // Every kernel reports what it cannot lower, not only the first.
    bool lowered = true;
    // The file as diagnostics name it ("<stdin>" for `-`), in comments and #line directives.
    std::string sourceName = u.sourceMgr.getMemoryBuffer(u.sourceMgr.getMainFileID())->getBufferIdentifier().str();
    for (auto &g : u.graphs) {
      u.loops.push_back(lower::lowerKernel(*g, diags, sourceName, opts.printAfterAll ? &llvm::errs() : nullptr));
      lowered &= u.loops.back() != nullptr;
      if (!u.loops.back())
        for (const Dispatch &d : u.dispatches)
          for (size_t v = 0; v < d.graphs.size() && v < d.ranges.size(); ++v)
            if (d.graphs[v] == g.get())
              noteSizeVariant(*g->kernel, d.ranges[v]);
    }
    if (!lowered)
      return kInputError;
  }
  if (opts.emit == "loops")
    for (auto &k : u.loops)
      lower::print(*k, out);
  return kSuccess;
}

bool Compilation::namesDistinctAcrossFiles(Unit &u) {
  // All files' kernels share one namespace and one set of C entry points. The namespace-scope
  // names of a unit: each kernel's launcher (and C entry, tlc_<name>), and the selector and
  // variants of its shape dispatch.
  auto generatedNames = [](const Unit &unit) {
    std::vector<std::pair<std::string, const KernelDecl *>> names;
    for (const KernelDecl *k : unit.ast.program.kernels)
      names.push_back({k->name, k});
    for (const Dispatch &d : unit.dispatches) {
      const KernelDecl *k = d.graphs.front()->kernel;
      names.push_back({d.shape.selector, k});
      for (const std::string &v : d.shape.variants)
        names.push_back({v, k});
    }
    return names;
  };
  auto mine = generatedNames(u);
  for (const auto &other : units) {
    if (other.get() == &u)
      break;
    for (const auto &[name, first] : generatedNames(*other))
      for (const auto &[same, k] : mine) {
        if (same != name)
          continue;
        std::string what = same == k->name ? "kernel '" + same + "'"
                                           : "'" + same + "' (generated for kernel '" + k->name + "')";
        std::string firstWhat = name == first->name ? "" : " as a name generated for it";
        u.diags->error(k->nameRange, what + " is also defined in " + other->path +
                                         "; the kernels of all input files share one namespace")
            .note(*other->diags, first->nameRange, "kernel '" + first->name + "' is defined here" + firstWhat)
            .hint("rename one of them, or compile the files separately with different --namespace");
        return false;
      }
  }
  return true;
}

bool Compilation::runInference(ftg::Graph &g, DiagnosticEngine &diags) {
  ftg::PassManager pm;
  infer::addInferencePasses(pm);
  if (opts.printAfterAll)
    pm.setPrintAfterAll(&llvm::errs());
  if (opts.timePasses)
    pm.setTimePasses(&llvm::errs());
  return pm.run(g, diags);
}

Sema Compilation::makeSema(ASTContext &ast, DiagnosticEngine &diags) const {
  Sema sema(ast, diags, defines);
  sema.setTarget(opts.targetInfo().limits().sharedBytesPerBlock);
  return sema;
}

bool Compilation::dispatchNamesFree(Unit &u, const std::string &kernel, size_t variants, llvm::StringRef hint) {
  std::vector<std::string> generated = {selectorName(kernel)};
  for (size_t v = 0; v < variants; ++v)
    generated.push_back(variantName(kernel, v));
  for (const KernelDecl *other : u.ast.program.kernels)
    for (const std::string &name : generated)
      if (other->name == name) {
        u.diags->error(other->nameRange, "kernel '" + name + "' has the name tlc gives to the shape "
                       "dispatch of kernel '" + kernel + "'")
            .hint(hint);
        return false;
      }
  return true;
}

bool Compilation::addVariant(Unit &u, Dispatch &d, std::unique_ptr<ASTContext> ast, size_t v) {
  const std::string &kernel = d.kernel;
  auto it = llvm::find_if(ast->program.kernels, [&](const KernelDecl *k) { return k->name == kernel; });
  std::unique_ptr<ftg::Graph> g = it == ast->program.kernels.end()
                                      ? nullptr
                                      : ftg::buildGraph(**it, *u.diags, opts.targetInfo());
  if (!g || !runInference(*g, *u.diags))
    return false;
  g->sourceName = u.path;
  g->symbol = variantName(kernel, v);
  d.graphs.push_back(g.get());
  u.graphs.push_back(std::move(g));
  u.variantASTs.push_back(std::move(ast));
  return true;
}

bool Compilation::compileVariants(Unit &u, unsigned bufferId, const AutoParams &autoParams) {
  DiagnosticEngine &diags = *u.diags;
  for (const KernelVariants &kv : autoParams.variants()) {
    if (!dispatchNamesFree(u, kv.kernel, kv.choice.variants.size(),
                           "rename it, or pass --max-variants 1 to compile '" + kv.kernel + "' once"))
      return false;
    Dispatch d;
    d.kernel = kv.kernel;
    d.shape.selector = kv.selectorName();
    d.shape.origin = "variants of its `auto` parameters, chosen by the cost model for " + autoParams.targetName() +
                     " over " + std::to_string(kv.grid.size()) + " buckets of its dynamic sizes";
    for (size_t v = 0; v < kv.choice.variants.size(); ++v) {
      d.shape.variants.push_back(kv.variantName(v));
      d.shape.configs.push_back(recommend::configStr(kv.choice.variants[v]));
    }
    for (const recommend::BucketAxis &a : kv.grid.axes()) {
      codegen::ShapeDispatch::Axis axis{a.symbol, a.edges(), {}, a.representatives};
      for (size_t b = 0; b < a.representatives.size(); ++b)
        axis.ranges.push_back(a.rangeStr(b));
      d.shape.axes.push_back(std::move(axis));
    }
    d.shape.variantOfBucket = kv.choice.variantOfBucket;
    for (auto &g : u.graphs)
      if (g->kernel->name == kv.kernel) {
        g->symbol = kv.variantName(0);
        d.graphs.push_back(g.get());
      }
    for (size_t v = 1; v < kv.choice.variants.size(); ++v) {
      auto ast = std::make_unique<ASTContext>();
      if (!parseProgram(bufferId, *ast, diags))
        return false;
      std::vector<Define> bound = autoParams.definesFor(kv, v);
      {
        ScopedDefines chosen(defines, bound);
        if (!makeSema(*ast, diags).run())
          return false;
      }
      AutoParams::markChosen(ast->program, bound);
      if (!addVariant(u, d, std::move(ast), v))
        return false;
    }
    u.dispatches.push_back(std::move(d));
  }
  return compileDefaultVariants(u, bufferId, autoParams);
}

std::string Compilation::autoSummary() const {
  std::string all;
  for (const std::string &s : autoSummaries)
    all += (all.empty() ? "" : "; ") + s;
  return all;
}

std::vector<codegen::KernelInput> Compilation::kernels() const {
  std::vector<codegen::KernelInput> all;
  for (const auto &u : units)
    for (size_t i = 0; i < u->graphs.size(); ++i)
      all.push_back({u->loops[i].get(), u->path, /*cEntry=*/u->graphs[i]->symbol.empty()});
  return all;
}

std::vector<const ftg::Graph *> Compilation::graphs() const {
  std::vector<const ftg::Graph *> all;
  for (const auto &u : units)
    for (const auto &g : u->graphs)
      all.push_back(g.get());
  return all;
}

std::vector<codegen::ShapeDispatch> Compilation::dispatches() const {
  std::vector<codegen::ShapeDispatch> all;
  for (const auto &u : units)
    for (const Dispatch &d : u->dispatches) {
      codegen::ShapeDispatch out = d.shape;
      for (size_t i = 0; i < u->graphs.size(); ++i)
        if (u->graphs[i].get() == d.graphs.front())
          out.kernel = &u->loops[i]->launch;
      all.push_back(std::move(out));
    }
  return all;
}

bool Compilation::torchOpsDistinct(Unit &u) {
  // One torch library holds every kernel's op and its allocating variant (gemm, gemm_alloc),
  // so `gemm_alloc` may not also be a kernel, in this file or an earlier one.
  auto ops = [](const Unit &unit) {
    std::vector<std::pair<std::string, const KernelDecl *>> names;
    for (const KernelDecl *k : unit.ast.program.kernels) {
      names.push_back({codegen::torchName(k->name), k});
      names.push_back({codegen::torchAllocName(k->name), k});
    }
    return names;
  };
  auto mine = ops(u);
  for (const auto &other : units) {
    auto theirs = ops(*other);
    for (size_t i = 0; i < mine.size(); ++i)
      for (size_t j = 0; j < (other.get() == &u ? i : theirs.size()); ++j) {
        const auto &[name, k] = mine[i];
        const auto &[same, first] = theirs[j];
        if (name != same || k == first)
          continue;
        std::string where = other.get() == &u ? "" : " in " + other->path;
        u.diags->error(k->nameRange, "--emit=torch: kernel '" + k->name + "' needs the torch op name '" + name +
                                         "', which kernel '" + first->name + "'" + where + " also needs")
            .note(*other->diags, first->nameRange, "kernel '" + first->name + "' is defined here")
            .hint("each kernel KERNEL gets the ops KERNEL and KERNEL_alloc in one torch library: rename one "
                  "kernel, or build the files into extensions of different --namespace");
        return false;
      }
    if (other.get() == &u)
      break;
  }
  return true;
}

} // namespace tlc::driver
