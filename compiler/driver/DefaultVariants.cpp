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

#include <numeric>

namespace tlc::driver {

namespace {

// Ranges compiled at most per kernel: each costs a check of the file, and each distinct
// variant a full compilation of the kernel.
constexpr size_t kMaxRanges = 64;

// "block_M=128 persist=true": a kernel's compile-time parameters, for comparing variants. A
// parameter only other defaults name (`few_tiles` in samples/gemm.tl) is left out: its value
// is already in theirs, and two variants that differ in it alone compile to the same kernel.
std::vector<std::string> parameterValues(const KernelDecl &k) {
  std::vector<std::string> values;
  for (const CompileParamDecl *p : k.compileParams)
    if (p->usedOutsideDefaults || p->type.kind() == Type::DTypeValue)
      values.push_back(p->getName().str() + "=" + (p->constant ? p->constant->str() : "?"));
  return values;
}

const KernelDecl *findKernel(const Program &program, const std::string &name) {
  for (const KernelDecl *k : program.kernels)
    if (k->name == name)
      return k;
  return nullptr;
}

// The description of bucket `r` of the cross product of `axes` (row-major, the last fastest)
// and, in `sizes`, the smallest sizes in it: per symbol the first size of its range that meets
// its divisibility tests. False when no size does (`K in [1, 8)` and a multiple of 8): no call
// reaches the bucket.
bool describeBucket(const std::vector<codegen::ShapeDispatch::Axis> &axes, size_t r, std::string &where,
                    std::map<std::string, int64_t> *sizes = nullptr) {
  where.clear();
  struct Wanted {
    int64_t lo = 1, hi = kMaxShapeExtent + 1;
    std::vector<std::pair<int64_t, bool>> multipleOf; // (divisor, whether a multiple)
  };
  std::map<std::string, Wanted> wanted;
  for (size_t i = axes.size(), rest = r; i-- > 0; rest /= axes[i].buckets()) {
    const codegen::ShapeDispatch::Axis &a = axes[i];
    size_t bucket = rest % a.buckets();
    Wanted &w = wanted[a.symbol];
    if (a.divisor) {
      w.multipleOf.push_back({a.divisor, bucket == 1});
    } else {
      w.lo = a.representatives[bucket];
      if (bucket < a.edges.size())
        w.hi = a.edges[bucket];
    }
    where = a.symbol + (a.divisor ? " " : " in ") + a.ranges[bucket] + (where.empty() ? "" : ", ") + where;
  }
  for (const auto &[symbol, w] : wanted) {
    // The sizes that are multiples of every divisor the bucket asks for are the multiples t * L
    // of their least common multiple L; t * L is a multiple of another divisor d exactly where
    // t is a multiple of d / gcd(L, d) (never, where that is 1: no size is in the bucket). Each
    // such quotient is at least 2, so among the first few t past the range's start one avoids
    // them all (at most 6 tests: a bucket table has at most 64 cells); the search is bounded
    // all the same.
    int64_t lcm = 1;
    for (const auto &[divisor, multiple] : w.multipleOf)
      if (multiple && (lcm = std::lcm(lcm, divisor)) > kMaxShapeExtent)
        return false;
    std::vector<int64_t> avoid;
    for (const auto &[divisor, multiple] : w.multipleOf)
      if (!multiple) {
        int64_t q = divisor / std::gcd(lcm, divisor);
        if (q == 1)
          return false;
        avoid.push_back(q);
      }
    std::optional<int64_t> found;
    constexpr int64_t kSearch = 1 << 16;
    for (int64_t t = (w.lo + lcm - 1) / lcm, steps = 0; t * lcm < w.hi && steps < kSearch && !found; ++t, ++steps)
      if (llvm::none_of(avoid, [&](int64_t q) { return t % q == 0; }))
        found = t * lcm;
    if (!found)
      return false;
    if (sizes)
      (*sizes)[symbol] = *found;
  }
  return true;
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
    if ((k->sizeEdges.empty() && k->sizeDivisors.empty()) || k->sizeDependentParams.empty())
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
    // Then an axis per divisibility test: bucket 0 holds the sizes that are not multiples
    // (1 among them, where Sema evaluated variant 0), bucket 1 the multiples.
    for (const auto &[symbol, divisors] : k->sizeDivisors)
      for (int64_t d : divisors) {
        if (ranges > kMaxRanges)
          break;
        codegen::ShapeDispatch::Axis axis{symbol, {}, {"not a multiple of " + std::to_string(d),
                                                        "a multiple of " + std::to_string(d)}, {1, d}, d};
        ranges *= 2;
        axes.push_back(std::move(axis));
      }
    if (ranges > kMaxRanges) {
      std::string counts;
      for (const auto &[symbol, edgeSet] : k->sizeEdges)
        counts += (counts.empty() ? "" : ", ") + symbol + ": " + std::to_string(edgeSet.size() + 1);
      for (const auto &[symbol, divisors] : k->sizeDivisors)
        counts += (counts.empty() ? "" : ", ") + symbol + " by divisibility: " + std::to_string(size_t(1) << divisors.size());
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
    std::vector<std::string> variantRanges(1);
    describeBucket(axes, 0, variantRanges[0]);
    for (size_t r = 1; r < ranges; ++r) {
      std::map<std::string, int64_t> sizes;
      std::string where;
      if (!describeBucket(axes, r, where, &sizes))
        continue; // no size is in it: variant 0 for the table
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
    d.shape.origin = k->sizeDivisors.empty()
                         ? "variants of the defaults that compare its sizes with constants (" + params + "), over " +
                               std::to_string(ranges) + " ranges of sizes"
                         : "variants of the defaults that compare its sizes with constants or test their "
                           "divisibility (" + params + "), over " + std::to_string(ranges) + " buckets of sizes";
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
