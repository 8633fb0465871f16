#include "driver/AutoParams.h"

#include "recommend/Recommender.h"
#include "recommend/Report.h"

#include "llvm/Support/WithColor.h"

namespace tlc::driver {

bool parseAssumptions(const std::vector<std::string> &args, std::map<std::string, int64_t> &out,
                      llvm::StringRef tool) {
  for (const std::string &text : args) {
    auto [name, value] = llvm::StringRef(text).split('=');
    int64_t v = 0;
    if (name.empty() || value.trim().getAsInteger(0, v) || v <= 0) {
      llvm::WithColor::error(llvm::errs(), tool)
          << "--assume " << text << ": expected name=value with a positive integer value\n";
      return false;
    }
    out[name.trim().str()] = v;
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

std::optional<recommend::TargetDesc> AutoParams::targetFor(DiagnosticEngine &diags) {
  if (target)
    return target;
  std::string spec = opts.device.empty() ? opts.target : opts.device;
  auto t = recommend::resolveTarget(spec);
  if (!t) {
    diags.errorNoLocation("cannot choose `auto` parameters: " + llvm::toString(t.takeError()) +
                          (opts.device.empty() ? "; name the GPU to tune for with --device" : ""));
    return std::nullopt;
  }
  target = std::move(*t);
  return target;
}

int AutoParams::choose(const Program &program, llvm::StringRef source, llvm::StringRef fileName,
                       DiagnosticEngine &diags) {
  for (const KernelDecl *k : program.kernels) {
    if (!llvm::any_of(k->compileParams, [&](const CompileParamDecl *p) { return needsChoice(*k, *p); }))
      continue;
    std::optional<recommend::TargetDesc> t = targetFor(diags);
    if (!t)
      return kUsageError;
    recommend::RecommendOptions ro;
    ro.kernel = k->name;
    ro.defines = userDefines;
    ro.onlyAuto = true;
    ro.assumed = opts.assumed;
    auto rec = recommend::rank(source, fileName, ro, *t);
    if (!rec) {
      diags.errorNoLocation("cannot choose `auto` parameters of kernel '" + k->name +
                            "': " + llvm::toString(rec.takeError()));
      return kInputError;
    }
    const recommend::Candidate *pick = rec->ranked.empty() ? nullptr : &rec->ranked.front();
    if (!pick && rec->illegal.empty())
      continue;
    // With no legal configuration, the first one is compiled anyway: its errors show with
    // their locations.
    const recommend::Config &config = pick ? pick->config : rec->illegal.front().config;
    for (const recommend::Binding &b : config)
      chosen.push_back({k->name, b.name, b.value, false});
    if (pick && opts.verbose)
      reportChoice(*k, *rec);
    else if (!pick)
      reportNoLegal(*k, *rec);
  }
  return kSuccess;
}

void AutoParams::reportChoice(const KernelDecl &k, const recommend::Recommendation &rec) const {
  const recommend::Candidate &pick = rec.ranked.front();
  const recommend::Prediction &p = pick.prediction;
  std::string shapes, assumed;
  for (const recommend::ShapeBinding &s : rec.shapes) {
    shapes += (shapes.empty() ? "" : ", ") + s.name + "=" + std::to_string(s.value);
    if (s.assumed)
      assumed += (assumed.empty() ? "" : ", ") + s.name;
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
        << "dynamic shapes " << assumed << " were tuned for a representative bucket; pass "
        << "--assume NAME=VALUE (or bind them with -D) to tune for the sizes you run\n";
}

void AutoParams::reportNoLegal(const KernelDecl &k, const recommend::Recommendation &rec) const {
  // When every candidate fails alike, the kernel itself is wrong and its errors speak for
  // themselves; when the failures depend on the values (resources), say where the values
  // in the errors came from.
  bool alike = llvm::all_of(rec.illegal, [&](const recommend::Candidate &c) {
    return c.reason == rec.illegal.front().reason;
  });
  if (alike && !opts.verbose)
    return;
  llvm::WithColor::note(llvm::errs(), "tlc")
      << "no configuration of the `auto` parameters of kernel '" << k.name << "' compiles for "
      << rec.target.name << "; the errors of " << recommend::configStr(rec.illegal.front().config)
      << " follow (tlc recommend --show-illegal lists every candidate)\n";
}

void AutoParams::markChosen(Program &program) const {
  for (KernelDecl *k : program.kernels)
    for (CompileParamDecl *p : k->compileParams)
      for (const Define &d : chosen)
        if (d.kernel == k->name && d.name == p->getName() && p->constant)
          p->source = CompileParamDecl::Source::Auto;
}

std::string AutoParams::summary() const {
  if (chosen.empty())
    return "";
  std::string s;
  for (const Define &d : chosen)
    s += (s.empty() ? "" : " ") + std::string("-D ") + d.kernel + "." + d.name + "=" + d.value;
  return s + " (chosen by the recommender for " + (target ? target->name : "?") + ")";
}

} // namespace tlc::driver
