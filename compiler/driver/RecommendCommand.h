// `tlc recommend FILE.tl --kernel NAME [-D name=value]... --target T [--top N]
//  [--format table|json] [--explain] [--plot FILE.svg]`: the ranked shortlist of configurations for one kernel
// (TileLang paper §4.2's human-in-the-loop recommendation). -D pins knobs and binds shapes;
// the knobs left free are searched.
#pragma once

#include "frontend/Diagnostics.h"
#include "target/TargetInfo.h"

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tlc::driver {

struct RecommendArgs {
  std::string input;
  std::string kernel;                // may be empty when the file has one kernel
  std::vector<std::string> defines;  // -D
  std::vector<std::string> assumed;  // --assume
  std::vector<std::string> values;   // --values
  std::string target = target::kDefaultTargetName.str();
  size_t top = 10;
  std::string format = "table";
  bool explain = false;
  bool showIllegal = false;
  bool onlyAuto = false;
  bool timing = false; // --timing: wall-clock time in the JSON report too
  std::string output = "-";
  std::string plot; // --plot FILE: the ranking as an SVG picture (pictures/RecommendPlot.h)
  bool showColors = false;
  DiagnosticFormat diagnosticFormat = DiagnosticFormat::Text;
  WarningPolicy warnings = WarningPolicy::Report;
};

// Declares the subcommand and its options on `app`, filling `args` (RecommendOptions.cpp: the
// fuzzer links runRecommend without CLI11).
CLI::App *addRecommendCommand(CLI::App &app, RecommendArgs &args);

// Runs it; returns tlc's exit code.
int runRecommend(const RecommendArgs &args);

} // namespace tlc::driver
