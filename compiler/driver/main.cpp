// The `tlc` command. Exit codes: 0 success, 1 errors in the input, 2 bad command line.
#include "frontend/ASTPrinter.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "codegen/CudaEmitter.h"
#include "infer/Passes.h"
#include "ir/FTG.h"
#include "ir/PassManager.h"

#include <CLI/CLI.hpp>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <pthread.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

enum ExitCode { kSuccess = 0, kInputError = 1, kUsageError = 2, kInternalError = 3 };

struct Options {
  std::vector<std::string> inputs;
  std::string output = "-";
  std::string emit = "cuda";
  std::string target = "sm_90a";
  std::vector<std::string> defines;
  std::string color = "auto";
  bool printAfterAll = false;
  bool timePasses = false;
  std::string commandLine;
};

const char *kExamples = R"(
Examples:
  tlc samples/gemm.tl -o gemm.cu                    compile to CUDA C++ (target sm_90a)
  tlc samples/gemm.tl --emit=ast                    print the typed AST
  tlc samples/gemm.tl --emit=tokens                 print the token stream
  tlc samples/gemm.tl -D block_M=64 -D M=4096       override a parameter, bind a shape
  tlc samples/gemm.tl -D gemm.stages=4              override one kernel's parameter
  tlc samples/gemm.tl --target sm_80 -o gemm.cu     compile for Ampere

Exit status: 0 success, 1 errors in the input, 2 bad command line.
)";

// Emit kinds that later pipeline stages produce; listed so that asking for one gives a
// clear "not implemented yet" rather than "invalid value".
const std::vector<std::string> kEmitKinds = {"tokens", "ast",  "ftg", "inferred", "loops",
                                             "cuda",   "hip",  "header"};
const std::vector<std::string> kTargets = {"sm_80", "sm_86", "sm_89", "sm_90a", "gfx90a", "gfx940"};

int compileFile(const std::string &path, const Options &opts, std::vector<tlc::Define> &defines,
                llvm::raw_ostream &out, bool showColors) {
  auto bufferOrErr = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!bufferOrErr) {
    llvm::WithColor::error(llvm::errs(), "tlc")
        << "cannot read '" << path << "': " << bufferOrErr.getError().message() << "\n";
    return kUsageError;
  }
  llvm::SourceMgr sourceMgr;
  unsigned bufferId = sourceMgr.AddNewSourceBuffer(std::move(*bufferOrErr), llvm::SMLoc());
  tlc::DiagnosticEngine diags(sourceMgr, llvm::errs());
  diags.setShowColors(showColors);

  if (opts.emit == "tokens")
    return tlc::dumpTokens(bufferId, diags, out) ? kSuccess : kInputError;

  tlc::ASTContext ctx;
  if (!tlc::parseProgram(bufferId, ctx, diags))
    return kInputError;
  tlc::Sema sema(ctx, diags, defines);
  bool ok = sema.run();
  if (sema.commandLineErrors())
    return kUsageError;
  if (!ok)
    return kInputError;

  if (opts.emit == "ast") {
    tlc::printAST(ctx.program, sourceMgr, out);
    return kSuccess;
  }
  if (opts.emit == "loops" || opts.emit == "hip" || opts.emit == "header") {
    llvm::WithColor::error(llvm::errs(), "tlc")
        << "--emit=" << opts.emit << " is not implemented yet; available: tokens, ast, ftg, "
        << "inferred, cuda\n";
    return kUsageError;
  }
  if (opts.target.rfind("gfx", 0) == 0) {
    llvm::WithColor::error(llvm::errs(), "tlc")
        << "--target " << opts.target << " is not implemented yet (the HIP back end comes later); "
        << "use sm_80, sm_86, sm_89 or sm_90a\n";
    return kUsageError;
  }

  // Tile level: FTG, then inference.
  std::vector<std::unique_ptr<tlc::ftg::Graph>> graphs;
  for (tlc::KernelDecl *k : ctx.program.kernels)
    if (auto g = tlc::ftg::buildGraph(*k, diags, opts.target))
      graphs.push_back(std::move(g));
  if (diags.hasErrors())
    return kInputError;
  if (opts.emit == "ftg") {
    for (auto &g : graphs)
      tlc::ftg::printGraph(*g, out, /*withInference=*/false);
    return kSuccess;
  }
  for (auto &g : graphs) {
    tlc::ftg::PassManager pm;
    pm.add(tlc::infer::createLayoutInference());
    pm.add(tlc::infer::createPipelinePlanner());
    pm.add(tlc::infer::createSharedMemoryPlanner());
    pm.add(tlc::infer::createInstructionSelection());
    if (opts.printAfterAll)
      pm.setPrintAfterAll(&llvm::errs());
    if (opts.timePasses)
      pm.setTimePasses(&llvm::errs());
    pm.run(*g, diags);
  }
  if (diags.hasErrors())
    return kInputError;
  if (opts.emit == "inferred") {
    for (auto &g : graphs)
      tlc::ftg::printGraph(*g, out, /*withInference=*/true);
    return kSuccess;
  }
  tlc::codegen::EmitOptions emitOptions;
  emitOptions.sourceName = path;
  emitOptions.target = opts.target;
  emitOptions.commandLine = opts.commandLine;
  std::vector<tlc::ftg::Graph *> raw;
  for (auto &g : graphs)
    raw.push_back(g.get());
  return tlc::codegen::emitCuda(raw, emitOptions, diags, out) ? kSuccess : kInputError;
}

int run(int argc, char **argv) {
  Options opts;
  CLI::App app{"tlc: ahead-of-time compiler for TileLang (.tl) GPU kernels"};
  app.footer(kExamples);
  app.set_version_flag("--version", std::string("tlc ") + TLC_VERSION);
  app.add_option("files", opts.inputs, "TileLang source files")->required();
  app.add_option("-o,--output", opts.output, "output file ('-' for stdout)");
  app.add_option("--emit", opts.emit, "what to produce")
      ->check(CLI::IsMember(kEmitKinds))
      ->default_str("cuda");
  app.add_option("--target", opts.target, "GPU architecture")
      ->check(CLI::IsMember(kTargets))
      ->default_str("sm_90a");
  app.add_option("-D", opts.defines,
                 "set a compile-time parameter or bind a shape symbol: name=value or "
                 "kernel.name=value")
      ->allow_extra_args(false);
  app.add_flag("--print-after-all", opts.printAfterAll, "print the FTG after every pass (stderr)");
  app.add_flag("--time-passes", opts.timePasses, "time every pass (stderr)");
  app.add_option("--color", opts.color, "colored diagnostics")
      ->check(CLI::IsMember({"auto", "always", "never"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return kUsageError;
  }

  opts.commandLine = "tlc";
  for (int i = 1; i < argc; ++i)
    opts.commandLine += std::string(" ") + argv[i];
  std::vector<tlc::Define> defines;
  for (const std::string &text : opts.defines) {
    auto d = tlc::parseDefine(text);
    if (!d) {
      llvm::WithColor::error(llvm::errs(), "tlc")
          << "-D " << text << ": expected name=value or kernel.name=value\n";
      return kUsageError;
    }
    defines.push_back(*d);
  }

  bool showColors = opts.color == "always" ||
                    (opts.color == "auto" && llvm::errs().has_colors() && !std::getenv("NO_COLOR"));

  std::error_code ec;
  llvm::raw_fd_ostream out(opts.output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::WithColor::error(llvm::errs(), "tlc")
        << "cannot open output '" << opts.output << "': " << ec.message() << "\n";
    return kUsageError;
  }

  int status = kSuccess;
  for (const std::string &input : opts.inputs)
    status = std::max(status, compileFile(input, opts, defines, out, showColors));
  if (status == kSuccess || status == kInputError) {
    for (const tlc::Define &d : defines) {
      if (d.used)
        continue;
      llvm::WithColor::error(llvm::errs(), "tlc")
          << "-D " << (d.kernel.empty() ? "" : d.kernel + ".") << d.name << "=" << d.value
          << " does not name a constant, compile-time parameter or shape symbol"
          << (d.kernel.empty() ? "" : " of kernel '" + d.kernel + "'") << "\n";
      status = kUsageError;
    }
  }
  return status;
}

struct MainArgs {
  int argc;
  char **argv;
  int status;
};

void *runOnLargeStack(void *p) {
  auto *args = static_cast<MainArgs *>(p);
  try {
    args->status = run(args->argc, args->argv);
  } catch (const std::exception &e) {
    llvm::errs() << "tlc: internal error: " << e.what() << "\n";
    args->status = kInternalError;
  }
  return nullptr;
}

} // namespace

int main(int argc, char **argv) {
  // Parsing and the AST walkers recurse; a big stack keeps pathological nesting (already
  // bounded by the front end) far from the limit.
  MainArgs args{argc, argv, kInternalError};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256u << 20);
  pthread_t thread;
  if (pthread_create(&thread, &attr, runOnLargeStack, &args) != 0)
    runOnLargeStack(&args);
  else
    pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  llvm::outs().flush();
  return args.status;
}
