// What the `tlc` command line asks for, and its exit codes.
#pragma once

#include "frontend/Diagnostics.h"
#include "target/TargetInfo.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tlc::driver {

enum ExitCode { kSuccess = 0, kInputError = 1, kUsageError = 2, kInternalError = 3 };

struct Options {
  std::vector<std::string> inputs;
  std::string output = "-";
  std::string emit = "cuda";
  std::string target = target::kDefaultTargetName.str(); // the --target spelling
  std::vector<std::string> defines;
  std::string cppNamespace;
  bool printAfterAll = false;
  bool timePasses = false;
  bool showColors = false;
  DiagnosticFormat diagnosticFormat = DiagnosticFormat::Text; // --diagnostics-format
  WarningPolicy warnings = WarningPolicy::Report; // -Werror, -w
  std::string commandLine;
  // `auto` parameters: the GPU to tune for (default: the --target's reference GPU), the
  // sizes of dynamic shape symbols to tune for (one size, or one per shape bucket), how
  // many variants a shape dispatch may have, and whether to report the choices.
  std::string device;
  std::map<std::string, std::vector<int64_t>> assumed;
  size_t maxVariants = 6;
  bool verbose = false;

  // The TargetInfo whose passes compile the kernels: the --target's (the command line accepts
  // only targets tlc knows, and refuses those without a back end before code generation).
  const target::TargetInfo &targetInfo() const {
    const target::TargetInfo *t = target::lookupTarget(target);
    return t ? t->codegenTarget() : target::defaultTarget();
  }
};

} // namespace tlc::driver
