// Variants of defaults that depend on sizes (frontend/SemaSizeDefaults.cpp). Sema evaluated a
// kernel's defaults with every symbol at its first range and recorded where the comparisons
// split the sizes; here each further range of the cross product is checked again with its
// first sizes, ranges whose compile-time parameters come out equal share a variant, and the
// kernel becomes a shape dispatch over the ranges (codegen::ShapeDispatch): a call runs the
// variant its defaults name for its sizes. A -D value for a parameter replaces its default,
// and a -D value for a symbol fixes it, so neither makes variants.
#include "driver/Compilation.h"

#include "frontend/Parser.h"
#include "recommend/ShapeBuckets.h"

#include "llvm/Support/WithColor.h"

namespace tlc::driver {

namespace {

// Ranges compiled at most per kernel: each costs a check of the file, and each distinct
// variant a full compilation of the kernel.
constexpr size_t kMaxRanges = 64;

// "block_M=128 persist=true": a kernel's compile-time parameters, for comparing variants.
std::vector<std::string> parameterValues(const KernelDecl &k) {
  std::vector<std::string> values;
  for (const CompileParamDecl *p : k.compileParams)
    values.push_back(p->getName().str() + "=" + (p->constant ? p->constant->str() : "?"));
  return values;
}

const KernelDecl *findKernel(const Program &program, const std::string &name) {
  for (const KernelDecl *k : program.kernels)
    if (k->name == name)
      return k;
  return nullptr;
}

// The description of range `r` of the cross product of `axes` (row-major, the last fastest)
// and the sizes it starts at.
std::string describeRange(const std::vector<codegen::ShapeDispatch::Axis> &axes, size_t r,
                          std::map<std::string, int64_t> *sizes = nullptr) {
  std::string where;
  for (size_t i = axes.size(), rest = r; i-- > 0; rest /= axes[i].representatives.size()) {
    size_t bucket = rest % axes[i].representatives.size();
    if (sizes)
      (*sizes)[axes[i].symbol] = axes[i].representatives[bucket];
    where = axes[i].symbol + " in " + axes[i].ranges[bucket] + (where.empty() ? "" : ", ") + where;
  }
  return where;
}

std::string dependentParams(const KernelDecl &k) {
  std::string params;
  for (const CompileParamDecl *p : k.sizeDependentParams)
    params += (params.empty() ? "" : ", ") + p->getName().str();
  return params;
}

} // namespace

std::string Compilation::firstRanges(const KernelDecl &k) {
  std::string where;
  for (const auto &[symbol, edges] : k.sizeEdges)
    if (!edges.empty())
      where += (where.empty() ? "" : ", ") + symbol + " in " + recommend::rangeStr({edges.begin(), edges.end()}, 0);
  return where;
}

void Compilation::noteSizeVariant(const KernelDecl &k, const std::string &where) {
  if (k.sizeDependentParams.empty() || where.empty())
    return;
  llvm::WithColor::note(llvm::errs(), "tlc")
      << "in the variant of kernel '" << k.name << "' for " << where << ", where the defaults of "
      << dependentParams(k) << " depend on the sizes; -D on all of them compiles one kernel (a -D on "
      << "some leaves the others varying with the sizes)\n";
}

bool Compilation::compileDefaultVariants(Unit &u, unsigned bufferId, const AutoParams &autoParams) {
  DiagnosticEngine &diags = *u.diags;
  for (const KernelDecl *k : u.ast.program.kernels) {
    if (k->sizeEdges.empty() || k->sizeDependentParams.empty())
      continue;
    std::string params = dependentParams(*k);
    if (llvm::any_of(u.dispatches, [&](const Dispatch &d) { return d.kernel == k->name; })) {
      diags.error(k->nameRange, "the defaults of " + params + " depend on the sizes of kernel '" + k->name +
                                    "', and so do its `auto` parameters; tlc dispatches on one of them")
          .hint("pin the `auto` parameters with -D, or pass --max-variants 1");
      return false;
    }

    // The ranges: per symbol, split at its edges; their cross product, row-major.
    std::vector<codegen::ShapeDispatch::Axis> axes;
    size_t ranges = 1;
    for (const auto &[symbol, edgeSet] : k->sizeEdges) {
      codegen::ShapeDispatch::Axis axis{symbol, {edgeSet.begin(), edgeSet.end()}, {}, {1}};
      axis.representatives.insert(axis.representatives.end(), axis.edges.begin(), axis.edges.end());
      for (size_t r = 0; r <= axis.edges.size(); ++r)
        axis.ranges.push_back(recommend::rangeStr(axis.edges, r));
      ranges *= axis.representatives.size();
      axes.push_back(std::move(axis));
      if (ranges > kMaxRanges)
        break;
    }
    if (ranges > kMaxRanges) {
      std::string counts;
      for (const auto &[symbol, edgeSet] : k->sizeEdges)
        counts += (counts.empty() ? "" : ", ") + symbol + ": " + std::to_string(edgeSet.size() + 1);
      diags.error(k->sizeDependentParams.front()->defaultValue->getRange(),
                  "the defaults of kernel '" + k->name + "' split its sizes into more than " +
                      std::to_string(kMaxRanges) + " ranges (" + counts + ")")
          .hint("compare each size with fewer constants, or pin " + params + " with -D");
      return false;
    }

    // Variant 0 is the unit's own kernel: Sema evaluated it with every symbol at 1.
    std::vector<std::vector<std::string>> variants = {parameterValues(*k)};
    std::vector<std::unique_ptr<ASTContext>> asts(1);
    std::vector<size_t> variantOfRange(ranges, 0);
    std::vector<std::string> variantRanges = {describeRange(axes, 0)};
    for (size_t r = 1; r < ranges; ++r) {
      std::map<std::string, int64_t> sizes;
      std::string where = describeRange(axes, r, &sizes);
      auto ast = std::make_unique<ASTContext>();
      if (!parseProgram(bufferId, *ast, diags))
        return false;
      bool ok;
      {
        ScopedDefines chosen(defines, autoParams.defines());
        Sema sema = makeSema(*ast, diags);
        sema.evaluateDefaultsAt({{k->name, sizes}});
        ok = sema.run();
      }
      AutoParams::markChosen(ast->program, autoParams.defines());
      const KernelDecl *variant = findKernel(ast->program, k->name);
      if (!ok || !variant) {
        noteSizeVariant(*k, where);
        return false;
      }
      std::vector<std::string> values = parameterValues(*variant);
      auto same = llvm::find(variants, values);
      variantOfRange[r] = same - variants.begin();
      if (same == variants.end()) {
        variants.push_back(std::move(values));
        asts.push_back(std::move(ast));
        variantRanges.push_back(where);
      }
    }
    if (variants.size() == 1)
      continue; // every range gives the same values

    if (!dispatchNamesFree(u, k->name, variants.size(), "rename it, or pin " + params + " with -D"))
      return false;
    Dispatch d;
    d.kernel = k->name;
    d.shape.selector = selectorName(k->name);
    d.shape.origin = "variants of the defaults that compare its sizes with constants (" + params + "), over " +
                     std::to_string(ranges) + " ranges of sizes";
    d.shape.representativeIs = "evaluated at";
    d.shape.fallbackServesMost = false;
    d.shape.axes = std::move(axes);
    d.shape.variantOfBucket = variantOfRange;
    // A variant's configuration: the parameters whose values differ between variants.
    for (size_t v = 0; v < variants.size(); ++v) {
      std::string config;
      for (size_t p = 0; p < variants[v].size(); ++p)
        if (llvm::any_of(variants, [&](const auto &other) { return other[p] != variants[v][p]; }))
          config += (config.empty() ? "" : " ") + variants[v][p];
      d.shape.variants.push_back(variantName(k->name, v));
      d.shape.configs.push_back(config);
    }
    for (auto &g : u.graphs)
      if (g->kernel->name == k->name) {
        g->symbol = variantName(k->name, 0);
        d.graphs.push_back(g.get());
      }
    d.ranges = variantRanges;
    for (size_t v = 1; v < variants.size(); ++v)
      if (!addVariant(u, d, std::move(asts[v]), v)) {
        noteSizeVariant(*k, variantRanges[v]);
        return false;
      }
    u.dispatches.push_back(std::move(d));
  }
  return true;
}

} // namespace tlc::driver
