#include "ir/PassManager.h"

#include "ir/InferenceVerifier.h"

#include "llvm/Support/Format.h"

#include <chrono>

namespace tlc::ftg {

bool PassManager::run(Graph &g, DiagnosticEngine &diags) {
  struct Timing {
    llvm::StringRef name;
    double ms;
  };
  std::vector<Timing> timings;
  bool ok = true;
  for (auto &pass : passes) {
    auto start = std::chrono::steady_clock::now();
    ok = pass->run(g, diags);
    auto end = std::chrono::steady_clock::now();
    timings.push_back({pass->name(), std::chrono::duration<double, std::milli>(end - start).count()});
    if (!ok)
      break;
    std::string problems;
    llvm::raw_string_ostream errs(problems);
    if (!verifyGraph(g, errs)) {
      diags.errorNoLocation("internal: the FTG is invalid after pass '" + pass->name() + "':\n" +
                            errs.str());
      ok = false;
      break;
    }
    if (printStream) {
      *printStream << "// ----- FTG of '" << g.kernel->name << "' after " << pass->name() << "\n";
      printGraph(g, *printStream, /*withInference=*/true);
    }
  }
  // The self-check of what the passes decided, once at the end (ir/InferenceVerifier.h).
  if (ok) {
    std::string problems;
    llvm::raw_string_ostream errs(problems);
    if (!verifyInference(g, errs)) {
      diags.errorNoLocation("internal error in kernel '" + g.kernel->name +
                            "': inference produced an inconsistent plan (a tlc bug; please "
                            "report it):\n" + errs.str());
      ok = false;
    }
  }
  if (timeStream) {
    double total = 0;
    for (const Timing &t : timings)
      total += t.ms;
    *timeStream << "===-- pass timing: kernel '" << g.kernel->name << "' --===\n";
    for (const Timing &t : timings)
      *timeStream << llvm::format("  %9.3f ms  %5.1f%%  ", t.ms, total > 0 ? 100.0 * t.ms / total : 0.0)
                  << t.name << "\n";
    *timeStream << llvm::format("  %9.3f ms  total\n", total);
  }
  return ok;
}

} // namespace tlc::ftg
