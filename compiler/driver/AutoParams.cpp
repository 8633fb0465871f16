#include "driver/AutoParams.h"

#include "recommend/Recommender.h"
#include "recommend/Report.h"

#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <chrono>

namespace tlc::driver {

namespace {

// Beyond this many buckets (four default sizes of three symbols make 64) the last symbols
// keep one size: each bucket costs a ranking (the model only; compilations are shared).
constexpr size_t kMaxBuckets = 81;
// A further variant is added only while some bucket is more than this far from its best.
constexpr double kVariantTolerance = 0.03;

std::string percent(double slowdown) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", (slowdown - 1) * 100);
  return buf;
}

} // namespace

bool parseAssumptions(const std::vector<std::string> &args,
                      std::map<std::string, std::vector<int64_t>> &out, llvm::StringRef tool,
                      bool single) {
  for (const std::string &text : args) {
    auto [name, list] = llvm::StringRef(text).split('=');
    llvm::SmallVector<llvm::StringRef, 4> items;
    list.split(items, ',', -1, /*KeepEmpty=*/true);
    std::vector<int64_t> sizes;
    bool ok = !name.trim().empty() && !list.trim().empty();
    for (llvm::StringRef item : items) {
      std::optional<int64_t> v = parseIntegerOption(item);
      ok = ok && v && *v > 0 && *v <= kMaxShapeExtent;
      sizes.push_back(v.value_or(0));
    }
    if (!ok || (single && sizes.size() != 1)) {
      llvm::WithColor::error(llvm::errs(), tool)
          << "--assume " << text << ": expected "
          << (single ? "name=size with a positive integer size (this command ranks for one shape)"
                     : "name=size or name=size,size,... with positive integer sizes")
          << " (shape symbols are i32: 1.." << kMaxShapeExtent << ")\n";
      return false;
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    out[name.trim().str()] = sizes;
  }
  return true;
}

bool AutoParams::needsChoice(const KernelDecl &k, const CompileParamDecl &p) const {
  if (!p.isAuto)
    return false;
  for (const Define &d : userDefines)
    if (d.name == p.getName() && (d.kernel.empty() || d.kernel == k.name))
      return false; // pinned by -D
  return true;
}

std::optional<target::TargetDesc> AutoParams::targetFor(DiagnosticEngine &diags) {
  if (target)
    return target;
  std::string spec = opts.device.empty() ? opts.target : opts.device;
  auto t = target::resolveTarget(spec);
  if (!t && opts.device.empty()) {
    if (const target::TargetDesc *near = target::nearestTarget(spec)) {
      llvm::consumeError(t.takeError());
      if (opts.verbose)
        llvm::WithColor::note(llvm::errs(), "tlc")
            << "`auto` parameters are chosen for " << near->name << " (" << near->arch
            << "), the nearest target descriptor to " << spec << "; --device names another\n";
      target = *near;
      return target;
    }
  }
  if (!t) {
    diags.errorNoLocation("cannot choose `auto` parameters: " + llvm::toString(t.takeError()) +
                          (opts.device.empty() ? "; name the GPU to tune for with --device" : ""));
    return std::nullopt;
  }
  target = std::move(*t);
  return target;
}

const std::string &AutoParams::targetName() const {
  static const std::string unknown = "?";
  return target ? target->name : unknown;
}

recommend::BucketGrid
AutoParams::bucketsFor(const KernelDecl &k, const std::vector<std::string> &dynamic,
                       const std::map<std::string, std::vector<int64_t>> &tuned,
                       std::map<std::string, int64_t> &fixed) const {
  std::vector<recommend::BucketAxis> axes;
  for (const std::string &symbol : dynamic) {
    auto assumed = opts.assumed.find(symbol);
    auto inKernel = tuned.find(symbol);
    const std::vector<int64_t> &sizes = assumed != opts.assumed.end() ? assumed->second
                                        : inKernel != tuned.end()      ? inKernel->second
                                                                       : recommend::defaultRepresentatives();
    if (sizes.size() == 1)
      fixed[symbol] = sizes.front();
    else
      axes.push_back({symbol, sizes});
  }
  auto product = [&] {
    size_t n = 1;
    for (const recommend::BucketAxis &a : axes)
      n *= a.representatives.size();
    return n;
  };
  while (product() > kMaxBuckets) {
    const recommend::BucketAxis &last = axes.back();
    if (opts.verbose)
      llvm::WithColor::note(llvm::errs(), "tlc")
          << "kernel '" << k.name << "': more than " << kMaxBuckets << " shape buckets; "
          << last.symbol << " is tuned for " << last.representatives.back()
          << " only (tune_for(" << last.symbol << ", ...) or --assume " << last.symbol
          << "=... chooses its sizes)\n";
    fixed[last.symbol] = last.representatives.back();
    axes.pop_back();
  }
  return recommend::BucketGrid(std::move(axes));
}

void AutoParams::record(const KernelDecl &k, const recommend::Config &config) {
  for (const recommend::Binding &b : config)
    chosen.push_back({k.name, b.name, b.value, false});
}

int AutoParams::choose(const Program &program, llvm::StringRef source, llvm::StringRef fileName,
                       DiagnosticEngine &diags) {
  for (const KernelDecl *k : program.kernels) {
    if (!llvm::any_of(k->compileParams, [&](const CompileParamDecl *p) { return needsChoice(*k, *p); }))
      continue;
    std::optional<target::TargetDesc> t = targetFor(diags);
    if (!t)
      return kUsageError;
    auto start = std::chrono::steady_clock::now();
    recommend::RecommendOptions ro;
    ro.kernel = k->name;
    ro.defines = userDefines;
    ro.onlyAuto = true;
    ro.reuseCompilations = true;
    auto failed = [&](llvm::Error e) {
      int status = kInputError;
      llvm::handleAllErrors(
          std::move(e),
          [&](const recommend::LocatedError &l) {
            llvm::errs() << l.text; // located already (or the user's -D errors)
            if (l.commandLine)
              status = kUsageError;
          },
          [&](const llvm::ErrorInfoBase &other) {
            diags.errorNoLocation("cannot choose `auto` parameters of kernel '" + k->name +
                                  "': " + other.message());
          });
      return status;
    };
    auto recommender = recommend::Recommender::create(source, fileName, ro, *t);
    if (!recommender)
      return failed(recommender.takeError());
    std::map<std::string, int64_t> fixed;
    recommend::BucketGrid grid = bucketsFor(*k, (*recommender)->dynamicSymbols(), (*recommender)->tunedSizes(), fixed);
    std::vector<recommend::Recommendation> perBucket;
    for (size_t b = 0; b < grid.size(); ++b) {
      std::map<std::string, int64_t> shapes = fixed;
      for (auto &[symbol, size] : grid.representative(b))
        shapes[symbol] = size;
      auto rec = (*recommender)->rank(shapes);
      if (!rec)
        return failed(rec.takeError());
      perBucket.push_back(std::move(*rec));
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    if (llvm::all_of(perBucket, [](const auto &r) { return r.ranked.empty(); })) {
      const recommend::Recommendation &last = perBucket.back();
      if (last.illegal.empty())
        continue;
      // The compiler rejects every configuration: its errors for the first one, with notes
      // at the `auto` each value came from. Compiling that configuration again would say
      // the same without the notes (and blame the recommender's bindings as -D options).
      if (last.illegal.front().compileError) {
        reportNoLegal(*k, last);
        // Sema does not run, so it cannot tell which -D options the file uses: none is
        // reported as unused on top of the errors.
        for (Define &d : userDefines)
          d.used = true;
        return kInputError;
      }
      // Only the cost model objects (no block fits its occupancy model, say): the first
      // configuration is compiled anyway, since the compiler accepts it.
      record(*k, last.illegal.front().config);
      continue;
    }
    if (grid.size() == 1) {
      perBucket.front().seconds = seconds;
      record(*k, perBucket.front().ranked.front().config);
      if (opts.verbose)
        reportChoice(*k, perBucket.front(), (*recommender)->tunedSizes());
      continue;
    }
    KernelVariants kv{k->name, std::move(grid),
                      recommend::chooseVariants(perBucket, opts.maxVariants, kVariantTolerance)};
    record(*k, kv.choice.variants.front());
    if (opts.verbose)
      reportVariants(kv, seconds);
    if (kv.choice.variants.size() > 1)
      multi.push_back(std::move(kv));
  }
  return kSuccess;
}

std::vector<Define> AutoParams::definesFor(const KernelVariants &k, size_t v) const {
  std::vector<Define> out;
  for (const Define &d : chosen)
    if (d.kernel != k.kernel)
      out.push_back(d);
  for (const recommend::Binding &b : k.choice.variants[v])
    out.push_back({k.kernel, b.name, b.value, false});
  return out;
}

void AutoParams::reportChoice(const KernelDecl &k, const recommend::Recommendation &rec,
                              const std::map<std::string, std::vector<int64_t>> &tunedSizes) const {
  const recommend::Candidate &pick = rec.ranked.front();
  const recommend::Prediction &p = pick.prediction;
  std::string shapes, assumed, tuned;
  for (const recommend::ShapeBinding &s : rec.shapes) {
    shapes += (shapes.empty() ? "" : ", ") + s.name + "=" + std::to_string(s.value);
    std::string *list = opts.assumed.count(s.name)  ? &assumed
                        : tunedSizes.count(s.name) ? &tuned
                                                   : nullptr;
    if (s.assumed && list)
      *list += (list->empty() ? "" : ", ") + s.name;
  }
  llvm::WithColor::note(llvm::errs(), "tlc")
      << "kernel '" << k.name << "': the recommender chose " << recommend::configStr(pick.config)
      << " for " << rec.target.name << " (" << (shapes.empty() ? "no shapes" : shapes)
      << "): predicted " << recommend::formatSeconds(p.seconds) << " (bound by "
      << (p.bound() ? p.bound()->name : "?") << "); " << rec.ranked.size() << " of "
      << rec.ranked.size() + rec.illegal.size() << " candidates legal, ranked in "
      << recommend::formatSeconds(rec.seconds) << "\n";
  if (!assumed.empty())
    llvm::WithColor::note(llvm::errs(), "tlc")
        << "dynamic shapes " << assumed << " were tuned for the sizes --assume gives; the "
        << "kernel still takes any size\n";
  if (!tuned.empty())
    llvm::WithColor::note(llvm::errs(), "tlc")
        << "dynamic shapes " << tuned << " were tuned for the sizes the kernel's tune_for gives; "
        << "the kernel still takes any size\n";
}

void AutoParams::reportVariants(const KernelVariants &kv, double seconds) const {
  const recommend::BucketGrid &grid = kv.grid;
  const recommend::VariantChoice &choice = kv.choice;
  std::string symbols;
  for (const recommend::BucketAxis &a : grid.axes())
    symbols += (symbols.empty() ? "" : ", ") + a.symbol;
  size_t worst = 0;
  for (size_t b = 1; b < grid.size(); ++b)
    if (choice.slowdown[b] > choice.slowdown[worst])
      worst = b;
  auto &os = llvm::WithColor::note(llvm::errs(), "tlc");
  os << "kernel '" << kv.kernel << "': ";
  if (choice.variants.size() == 1)
    os << "one configuration serves all " << grid.size() << " shape buckets of " << symbols
       << " on " << targetName() << ": " << recommend::configStr(choice.variants.front());
  else
    os << "the recommender chose " << choice.variants.size() << " variants for "
       << grid.size() << " shape buckets of " << symbols << " on " << targetName()
       << ", dispatched at launch by the sizes of each call";
  os << " (ranked in " << recommend::formatSeconds(seconds) << ")\n";
  for (size_t v = 0; choice.variants.size() > 1 && v < choice.variants.size(); ++v) {
    size_t count = 0, example = 0;
    for (size_t b = 0; b < grid.size(); ++b)
      if (choice.variantOfBucket[b] == v && count++ == 0)
        example = b;
    llvm::errs() << "    " << kv.variantName(v) << ": " << recommend::configStr(choice.variants[v])
                 << "; " << count << " bucket" << (count == 1 ? "" : "s") << ", e.g. "
                 << grid.describe(example) << "\n";
  }
  llvm::errs() << "    worst bucket " << grid.describe(worst) << ": predicted "
               << percent(choice.slowdown[worst]) << " slower than its own best configuration\n";
}

void AutoParams::reportNoLegal(const KernelDecl &k, const recommend::Recommendation &rec) const {
  llvm::errs() << rec.firstIllegalDiagnostics;
  // When every candidate fails alike, the kernel itself is wrong and its errors speak for
  // themselves; when the failures depend on the values, say whose errors these are.
  bool alike = llvm::all_of(rec.illegal, [&](const recommend::Candidate &c) {
    return c.reason == rec.illegal.front().reason;
  });
  if (alike && !opts.verbose)
    return;
  llvm::WithColor::note(llvm::errs(), "tlc")
      << "no configuration of the `auto` parameters of kernel '" << k.name << "' compiles for "
      << rec.target.name << "; above: the errors of the first one, "
      << recommend::configStr(rec.illegal.front().config)
      << " (tlc recommend --only-auto --show-illegal lists every candidate)\n";
}

void AutoParams::markChosen(Program &program, const std::vector<Define> &bound) {
  for (KernelDecl *k : program.kernels)
    for (CompileParamDecl *p : k->compileParams)
      for (const Define &d : bound)
        if (d.kernel == k->name && d.name == p->getName() && p->constant)
          p->source = CompileParamDecl::Source::Auto;
}

std::string AutoParams::summary() const {
  if (chosen.empty())
    return "";
  std::string s;
  for (const Define &d : chosen)
    s += (s.empty() ? "" : " ") + std::string("-D ") + d.kernel + "." + d.name + "=" + d.value;
  s += " (chosen by the recommender for " + targetName() + ")";
  for (const KernelVariants &k : multi)
    s += "; " + k.kernel + " has " + std::to_string(k.choice.variants.size()) +
         " variants behind a shape dispatch (" + k.selectorName() + "), the values above are " +
         k.variantName(0) + "'s";
  return s;
}

} // namespace tlc::driver
