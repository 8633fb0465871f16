// tlc recommend's command line (CLI11), apart from RecommendCommand.cpp so that the fuzzer,
// which calls runRecommend directly, does not compile CLI11's templates.
#include "driver/RecommendCommand.h"

#include <CLI/CLI.hpp>

namespace tlc::driver {

CLI::App *addRecommendCommand(CLI::App &app, RecommendArgs &args) {
  CLI::App *cmd = app.add_subcommand(
      "recommend", "rank configurations of a kernel's compile-time knobs with the cost model");
  // tlc's own options (--color, --device, ...) may come after the subcommand's arguments.
  cmd->fallthrough();
  cmd->add_option("file", args.input, "TileLang source file")->required();
  cmd->add_option("--kernel", args.kernel, "the kernel to tune (default: the file's only kernel)");
  cmd->add_option("-D", args.defines,
                  "pin a knob or bind a shape symbol: name=value or kernel.name=value")
      ->allow_extra_args(false);
  cmd->add_option("--assume", args.assumed,
                  "tune for this value of a dynamic shape symbol: name=value (default 4096)")
      ->allow_extra_args(false);
  cmd->add_option("--values", args.values,
                  "try only these values of a knob: name=v1,v2,...")
      ->allow_extra_args(false);
  cmd->add_option("--target", args.target,
                  "GPU: a descriptor name (h100-sxm, h200, a100-sxm, rtx4090, mi300x, mi250x), an "
                  "architecture (sm_90a, sm_80, sm_89, gfx942, gfx90a) or a .json descriptor")
      ->default_str(target::kDefaultTargetName.str());
  cmd->add_option("--top", args.top, "ranked candidates to show")->default_str("10");
  cmd->add_option("--format", args.format, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->default_str("table");
  cmd->add_flag("--explain", args.explain, "say why the first candidate beats the runner-up");
  cmd->add_flag("--show-illegal", args.showIllegal, "also list rejected candidates and why");
  cmd->add_flag("--only-auto", args.onlyAuto,
                "search only `auto` parameters (what compiling the kernel does)");
  cmd->add_flag("--timing", args.timing,
                "also put the ranking's wall-clock time in the JSON report (which is otherwise "
                "the same on every run)");
  cmd->add_option("-o,--output", args.output, "output file ('-' for stdout)");
  cmd->add_option("--plot", args.plot,
                  "also draw the ranking as an SVG picture into this file (every candidate's "
                  "predicted time, coloured by the bound that limits it; the first --top as bars)");
  return cmd;
}

} // namespace tlc::driver
