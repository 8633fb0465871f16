#include "driver/RecommendCommand.h"
#include "driver/AutoParams.h"
#include "driver/Compilation.h"
#include "driver/OutputFile.h"

#include "frontend/Parser.h"
#include "pictures/RecommendPlot.h"
#include "recommend/Recommender.h"
#include "recommend/Report.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

namespace tlc::driver {

namespace {

int recommendUsage(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tlc recommend") << message << "\n";
  return kUsageError;
}

// Errors of the recommender: located diagnostics print as they are (a -D value Sema
// rejects is a usage error); anything else is about the input as a whole.
int recommendError(llvm::Error e) {
  int status = kInputError;
  llvm::handleAllErrors(
      std::move(e),
      [&](const recommend::LocatedError &l) {
        llvm::errs() << l.text;
        if (l.commandLine)
          status = kUsageError;
      },
      [&](const llvm::ErrorInfoBase &other) {
        llvm::WithColor::error(llvm::errs(), "tlc recommend") << other.message() << "\n";
      });
  return status;
}

// A --values list must hold values the knob can take: integers, or warp policies for a
// policy knob (otherwise every candidate would fail as a bad -D binding).
std::optional<std::string> badValue(const recommend::Knob &k) {
  for (const std::string &v : k.values) {
    int64_t i;
    bool ok = k.role == recommend::KnobRole::Policy
                  ? (v == "full_row" || v == "full_col" || v == "square")
                  : !llvm::StringRef(v).getAsInteger(10, i);
    if (!ok)
      return v;
  }
  return std::nullopt;
}

} // namespace

int runRecommend(const RecommendArgs &args) {
  auto target = target::resolveTarget(args.target);
  if (!target)
    return recommendUsage(llvm::toString(target.takeError()));
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(args.input, /*IsText=*/true);
  if (!buffer)
    return recommendUsage("cannot read '" + args.input + "': " + buffer.getError().message());

  recommend::RecommendOptions opts;
  opts.kernel = args.kernel;
  opts.onlyAuto = args.onlyAuto;
  for (const std::string &text : args.defines) {
    std::optional<Define> d = parseDefine(text);
    if (!d)
      return recommendUsage("-D " + text + ": expected name=value or kernel.name=value");
    opts.defines.push_back(*d);
  }
  std::map<std::string, std::vector<int64_t>> assumed;
  if (!parseAssumptions(args.assumed, assumed, "tlc recommend", /*single=*/true))
    return kUsageError;
  for (const auto &[name, sizes] : assumed)
    opts.assumed[name] = sizes.front();
  for (const std::string &text : args.values) {
    auto [name, list] = llvm::StringRef(text).split('=');
    llvm::SmallVector<llvm::StringRef, 8> items;
    list.split(items, ',', -1, /*KeepEmpty=*/false);
    if (name.trim().empty() || items.empty())
      return recommendUsage("--values " + text + ": expected name=v1,v2,...");
    auto &into = opts.values[name.trim().str()];
    for (llvm::StringRef v : items)
      into.push_back(v.trim().str());
  }

  // The front end's diagnostics for a file that does not parse, and the kernel to tune.
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy((*buffer)->getBuffer(), args.input), llvm::SMLoc());
  DiagnosticEngine diags(sourceMgr, llvm::errs());
  diags.setShowColors(args.showColors);
  diags.setFormat(args.diagnosticFormat);
  diags.setWarningPolicy(args.warnings);
  ASTContext ast;
  if (!parseProgram(id, ast, diags))
    return kInputError;
  if (ast.program.kernels.empty())
    return recommendUsage(args.input + " has no kernel to tune");
  if (opts.kernel.empty()) {
    if (ast.program.kernels.size() != 1) {
      std::string names;
      for (const KernelDecl *k : ast.program.kernels)
        names += (names.empty() ? "" : ", ") + k->name;
      return recommendUsage(args.input + " has " + std::to_string(ast.program.kernels.size()) +
                   " kernels; choose one with --kernel (" + names + ")");
    }
    opts.kernel = ast.program.kernels[0]->name;
  } else if (!llvm::any_of(ast.program.kernels,
                           [&](const KernelDecl *k) { return k->name == opts.kernel; })) {
    std::string names;
    for (const KernelDecl *k : ast.program.kernels)
      names += (names.empty() ? "" : ", ") + k->name;
    return recommendUsage("--kernel " + opts.kernel + ": " + args.input + " has no kernel named '" +
                 opts.kernel + "'" + (names.empty() ? "" : " (its kernels: " + names + ")"));
  }

  auto result = recommend::rank((*buffer)->getBuffer(), args.input, opts, *target);
  if (!result)
    return recommendError(result.takeError());
  for (const auto &entry : opts.values) {
    const std::string &name = entry.first; // not a structured binding: lambdas capture it
    auto knob = llvm::find_if(result->knobs, [&](const recommend::Knob &k) { return k.name == name; });
    if (knob != result->knobs.end()) {
      if (std::optional<std::string> bad = badValue(*knob))
        return recommendUsage("--values " + name + "=...: '" + *bad + "' is not a value of " +
                     (knob->role == recommend::KnobRole::Policy
                          ? "a warp policy knob (full_row, full_col or square)"
                          : "an integer knob"));
      continue;
    }
      return recommendUsage("--values " + name + "=...: '" + name + "' is not a knob of kernel '" + opts.kernel +
                   "' (knobs are compile-time parameters the kernel uses as tile sizes, thread "
                   "counts, stages, policies or panels, and -D does not pin)");
  }
  for (const Define &d : opts.defines) {
    bool known = llvm::is_contained(result->pinned, d.name) ||
                 llvm::any_of(ast.program.consts, [&](const ConstDecl *c) { return c->getName() == d.name; }) ||
                 llvm::any_of(result->shapes, [&](const recommend::ShapeBinding &s) {
                   return s.name == d.name && !s.assumed;
                 });
    if (!known && (d.kernel.empty() || d.kernel == opts.kernel))
      return recommendUsage("-D " + d.name + "=" + d.value + " does not name a compile-time parameter or "
                   "shape symbol of kernel '" + opts.kernel + "'");
  }

  if (!args.plot.empty() && outputClobbersInput(args.plot, {args.input}, "tlc recommend"))
    return kUsageError;
  std::error_code ec;
  llvm::raw_fd_ostream out(args.output, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return recommendUsage("cannot open output '" + args.output + "': " + ec.message());
  recommend::ReportOptions report;
  report.top = args.top;
  report.showIllegal = args.showIllegal;
  report.timing = args.timing;
  if (args.format == "json")
    recommend::printJson(*result, report, out);
  else
    recommend::printTable(*result, report, out);
  if (args.explain) {
    if (args.format == "table")
      out << "\n";
    recommend::printExplanation(*result, args.format == "json" ? llvm::errs() : out);
  }
  out.flush(); // the report first, then any error about it
  if (!args.plot.empty()) {
    std::string svg;
    llvm::raw_string_ostream svgStream(svg);
    pictures::writeRecommendPlot(*result, args.top, svgStream);
    if (!writeOutput(args.plot, svgStream.str(), "tlc recommend"))
      return kInputError;
  }
  if (result->ranked.empty()) {
    // Located errors: the first candidate's, with notes at the values it tried.
    llvm::errs() << result->firstIllegalDiagnostics;
    llvm::WithColor::note(llvm::errs(), "tlc recommend")
        << "no legal configuration of kernel '" << opts.kernel << "'"
        << (result->illegal.empty()
                ? std::string(" (no candidate)")
                : "; above: why the first candidate, " +
                      (result->illegal.front().config.empty()
                           ? std::string("the kernel as written")
                           : recommend::configStr(result->illegal.front().config)) +
                      ", fails" + (args.showIllegal ? "" : " (--show-illegal lists every candidate)"))
        << "\n";
    return kInputError;
  }
  return kSuccess;
}

} // namespace tlc::driver
