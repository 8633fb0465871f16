// The `tlc` command. Exit codes: 0 success, 1 errors in the input (or from nvcc with -c),
// 2 bad command line.
#include "driver/AutoParams.h"
#include "driver/Compilation.h"
#include "driver/DeviceCompiler.h"
#include "driver/EmulateCommand.h"
#include "driver/LargeStack.h"
#include "driver/OutputFile.h"
#include "driver/RecommendCommand.h"
#include "GitRevision.h" // generated at build time: TLC_GIT_REVISION

#include "codegen/CudaEmitter.h"
#include "lower/Naming.h"
#include "pictures/LayoutSvg.h"

#include <CLI/CLI.hpp>

#include "RuntimeMetaData.h" // antlr4::RuntimeMetaData::VERSION
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using tlc::driver::kInputError;
using tlc::driver::kInternalError;
using tlc::driver::kSuccess;
using tlc::driver::kUsageError;

const char *kExamples = R"(
Examples:
  tlc samples/gemm.tl -o gemm.cu                    CUDA C++ and a host launcher (target sm_90a)
  tlc -c samples/gemm.tl -o gemm.o                  the same, compiled by nvcc into an object
  tlc samples/gemm.tl --emit=decl -o gemm.h         its launchers' declarations, for g++/clang++ code
  tlc -c gemm.tl -o gemm.o -v -Xnvcc -lineinfo --save-temps
                                                    show the nvcc command, pass it -lineinfo, keep gemm.cu
  tlc --emit=header --namespace kern -o kern.cuh a.tl b.tl
                                                    a self-contained header-only kernel library
  tlc --emit=torch --namespace kern -o kern.cu a.tl b.tl
                                                    a PyTorch extension: torch.ops.kern.<kernel>
  tlc -Werror samples/gemm.tl -o gemm.cu            warnings are errors (-w: no warnings)
  tlc samples/gemm.tl --emit=inferred               layouts, pipeline and instructions per buffer
  tlc samples/gemm.tl --emit=layout-svg -o gemm.svg  a picture of each fragment's and shared tile's layout
  tlc samples/gemm.tl --emit=loops                  the thread-level loop IR (barriers, pipeline)
  tlc samples/gemm.tl --emit=ast                    the typed AST
  tlc samples/gemm.tl -D block_M=64 -D M=4096       override a parameter, bind a shape symbol
  tlc samples/gemm.tl -D gemm.stages=4              override one kernel's parameter
  tlc samples/gemm.tl --target sm_80 -o gemm.cu     compile for Ampere
  tlc samples/gemm.tl --target gfx90a -o gemm.hip   HIP C++ for MI200 (gfx940: MI300, as hipcc 5.2 names it)
  tlc samples/gemm_auto.tl --verbose -o gemm.cu     fill `auto` knobs with the recommender's choice
                                                    (variants per shape bucket, dispatched at launch)
  tlc recommend samples/gemm.tl -D M=8192 -D N=8192 -D K=8192 --explain
                                                    rank configurations with the cost model
  tlc run --emulate samples/gemm.tl -D M=100 -D N=72 -D K=40 -D block_M=64 --output-dir out
                                                    run it without a GPU, on the CPU emulator

Exit status: 0 success, 1 errors in the input (or from nvcc with -c), 2 bad command line.
)";

// What --emit and --target accept. --help lists only what this build produces; the later
// stages are still recognised so that asking for one gets a usage error saying it is not
// implemented yet (below) instead of "not in {...}".
const std::vector<std::string> kEmitKinds = {"tokens", "ast", "ftg", "inferred", "loops", "cuda", "hip", "header", "decl", "torch", "layout-svg"};
const std::vector<std::string> kLaterEmitKinds = {};
// The targets come from target/ (the one list): those with a back end, then the others.
std::vector<std::string> targetNames(bool withBackEnd) {
  std::vector<std::string> names;
  for (const tlc::target::TargetInfo *t : tlc::target::allTargets())
    if (t->hasBackEnd() == withBackEnd)
      names.push_back(t->name().str());
  return names;
}

// A CLI11 check that accepts `listed` and `later`, and names only `listed`, in --help and in
// the error for anything else.
CLI::Validator oneOf(const std::vector<std::string> &listed, const std::vector<std::string> &later) {
  std::string names;
  for (const std::string &n : listed)
    names += (names.empty() ? "" : ",") + n;
  names = "{" + names + "}";
  return CLI::Validator(
      [=](std::string &value) -> std::string {
        if (llvm::is_contained(listed, value) || llvm::is_contained(later, value))
          return "";
        return value + " not in " + names;
      },
      names);
}

void usageError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tlc") << message << "\n";
}

// A C++ identifier from a file name, for the default header namespace.
std::string identifierFrom(llvm::StringRef path) {
  std::string id;
  for (char c : llvm::sys::path::stem(path))
    id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0])))
    id = "k_" + id;
  return tlc::lower::cppName(id); // `class.cuh` gets namespace u_class
}

int run(int argc, char **argv) {
  tlc::driver::Options opts;
  bool compileOnly = false;
  bool saveTemps = false;
  tlc::driver::NvccOptions nvccOptions;
  std::string &nvcc = nvccOptions.nvcc;
  // -Xnvcc ARG (or -Xnvcc=ARG) passes ARG to nvcc; -Werror makes warnings errors, -w hides
  // them. CLI11 takes no multi-letter single-dash options, so they are taken out of the
  // command line before it parses the rest.
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (i > 0 && a == "-Werror") {
      opts.warnings = tlc::WarningPolicy::AsErrors;
    } else if (i > 0 && a == "-w") {
      opts.warnings = tlc::WarningPolicy::Ignore;
    } else if (i > 0 && a == "-Xnvcc") {
      if (i + 1 == argc) {
        usageError("-Xnvcc needs an argument for nvcc\n(run tlc --help for usage)");
        return kUsageError;
      }
      nvccOptions.extraArgs.push_back(argv[++i]);
    } else if (i > 0 && a.consume_front("-Xnvcc=")) {
      nvccOptions.extraArgs.push_back(a.str());
    } else {
      args.push_back(argv[i]);
    }
  }
  std::string color = "auto";
  CLI::App app{"tlc: ahead-of-time compiler for TileLang (.tl) GPU kernels"};
  app.footer(kExamples);
  app.set_version_flag("--version", std::string("tlc ") + TLC_VERSION + "\ngit revision " + TLC_GIT_REVISION +
                                        "\nLLVM " + LLVM_VERSION_STRING + ", ANTLR runtime " +
                                        antlr4::RuntimeMetaData::VERSION);
  // Not required here: `tlc recommend FILE` takes its file itself (checked after parsing).
  app.add_option("files", opts.inputs, "TileLang source files");
  app.add_option("-o,--output", opts.output, "output file ('-' for stdout)");
  app.add_option("--emit", opts.emit, "what to produce (cuda for NVIDIA targets, hip for AMD ones)")
      ->check(oneOf(kEmitKinds, kLaterEmitKinds))
      ->default_str("cuda, or hip for gfx targets");
  app.add_option("--target", opts.target, "GPU architecture")
      ->check(oneOf(targetNames(true), targetNames(false)))
      ->default_str(tlc::target::kDefaultTargetName.str());
  app.add_option("-D", opts.defines,
                 "set a compile-time parameter or bind a shape symbol: name=value or "
                 "kernel.name=value")
      ->allow_extra_args(false);
  app.add_option("--namespace", opts.cppNamespace,
                 "C++ namespace of the generated launchers, also naming their C entry points "
                 "tlc_<namespace>_<kernel> (default: namespace tlc_kernels, C entries tlc_<kernel>; "
                 "for --emit=header, the output file's name; for --emit=torch also the torch library, "
                 "torch.ops.<namespace with :: as _>)")
      ->check(CLI::Validator(
          // Pasted into the generated C++ (and, with `::` as `_`, into the C entry names).
          [](std::string &ns) { return tlc::lower::checkNamespace(ns); }, "NAME[::NAME...]"));
  app.add_flag("-c", compileOnly, "compile the generated code with nvcc (hipcc for gfx targets) into an object file");
  app.add_option("--nvcc", nvcc, "the nvcc to use with -c (default: $CUDA_HOME/bin/nvcc, then PATH)");
  app.add_option("--hipcc", nvccOptions.hipcc,
                 "the hipcc to use with -c for gfx targets (default: $ROCM_PATH/bin/hipcc, then PATH)");
  app.add_flag("-v", nvccOptions.verbose, "with -c: print the nvcc command line (stderr)");
  app.add_flag("--save-temps", saveTemps,
               "with -c: keep the generated CUDA next to the object (gemm.o -> gemm.cu) and "
               "compile it from there, so that nvcc's messages point at a file that exists");
  bool noLineDirectives = false;
  app.add_flag("--no-line-directives", noLineDirectives,
               "write no #line directives (by default the code of a kernel's statements names the "
               ".tl line it comes from, for nvcc's errors, cuda-gdb and compute-sanitizer)");
  app.add_flag("--print-after-all", opts.printAfterAll, "print the FTG and the loop IR after every pass (stderr)");
  app.add_flag("--time-passes", opts.timePasses, "time every pass (stderr)");
  app.add_option("--color", color, "colored diagnostics")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  std::string diagnosticsFormat = "text";
  app.add_option("--diagnostics-format", diagnosticsFormat,
                 "text, or json: one JSON object per diagnostic and line (docs/diagnostics.schema.json)")
      ->check(CLI::IsMember({"text", "json"}));
  std::vector<std::string> assumed;
  app.add_option("--device", opts.device,
                 "the GPU `auto` parameters are tuned for (a descriptor name such as h200, or a "
                 ".json file; default: the --target's reference GPU)");
  app.add_option("--assume", assumed,
                 "tune `auto` parameters for these sizes of a dynamic shape symbol: name=size, or "
                 "name=size,size,... for one shape bucket per size (default 16,256,1024,4096; the code "
                 "still takes any size)")
      ->allow_extra_args(false);
  app.add_option("--max-variants", opts.maxVariants,
                 "at most this many variants of a kernel with `auto` parameters and dynamic "
                 "shapes, dispatched by size at launch (1: one configuration for all sizes)")
      ->check(CLI::Range(1, 16))
      ->default_str("6");
  app.add_flag("--verbose", opts.verbose, "report the values chosen for `auto` parameters (stderr)");
  tlc::driver::RecommendArgs recommendArgs;
  CLI::App *recommendCmd = tlc::driver::addRecommendCommand(app, recommendArgs);
  tlc::driver::RunArgs runArgs;
  CLI::App *runCmd = tlc::driver::addRunCommand(app, runArgs);

  try {
    app.parse(int(args.size()), args.data());
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    usageError(std::string(e.what()) + "\n(run tlc --help for usage)");
    return kUsageError;
  }
  opts.commandLine = "tlc";
  for (int i = 1; i < argc; ++i)
    opts.commandLine += std::string(" ") + argv[i];
  opts.showColors = color == "always" ||
                    (color == "auto" && llvm::errs().has_colors() && !std::getenv("NO_COLOR"));
  // LLVM's diagnostics printer colors only what its own `color` option allows (by default, a
  // terminal): --color=always sets it, so that colors reach a pipe or a file too.
  if (color == "always")
    if (auto found = llvm::cl::getRegisteredOptions().find("color"); found != llvm::cl::getRegisteredOptions().end())
      found->second->addOccurrence(1, "color", "true");
  opts.diagnosticFormat = diagnosticsFormat == "json" ? tlc::DiagnosticFormat::Json : tlc::DiagnosticFormat::Text;
  if (opts.diagnosticFormat == tlc::DiagnosticFormat::Json)
    opts.showColors = false;
  if (recommendCmd->parsed()) {
    recommendArgs.showColors = opts.showColors;
    recommendArgs.diagnosticFormat = opts.diagnosticFormat;
    recommendArgs.warnings = opts.warnings;
    return tlc::driver::runRecommend(recommendArgs);
  }
  if (runCmd->parsed()) {
    runArgs.base = opts;
    return tlc::driver::runEmulated(runArgs);
  }
  if (opts.inputs.empty()) {
    usageError("no input files\n(run tlc --help for usage)");
    return kUsageError;
  }
  if (!tlc::driver::parseAssumptions(assumed, opts.assumed, "tlc", /*single=*/false))
    return kUsageError;

  if (!compileOnly && (nvccOptions.verbose || saveTemps || !nvccOptions.extraArgs.empty())) {
    usageError(std::string(saveTemps ? "--save-temps" : nvccOptions.verbose ? "-v" : "-Xnvcc") +
               " is for -c (compiling the generated code with nvcc)");
    return kUsageError;
  }
  const tlc::target::TargetInfo *target = tlc::target::lookupTarget(opts.target);
  // The source language follows the target's vendor: CUDA for NVIDIA, HIP for AMD.
  bool amd = target && target->vendor() == tlc::target::Vendor::Amd;
  std::string language = amd ? "hip" : "cuda";
  if (!app.count("--emit"))
    opts.emit = language;
  if ((opts.emit == "cuda" || opts.emit == "hip") && opts.emit != language) {
    usageError("--emit=" + opts.emit + " is for " + (amd ? "NVIDIA" : "AMD") + " targets; --target " + opts.target +
               " takes --emit=" + language);
    return kUsageError;
  }
  if (compileOnly && opts.emit != language) {
    usageError("-c compiles the generated " + std::string(amd ? "HIP" : "CUDA") +
               "; it cannot be combined with --emit=" + opts.emit);
    return kUsageError;
  }
  if (opts.emit == "torch" && amd) {
    usageError("--emit=torch writes a CUDA extension for PyTorch; --target " + opts.target + " takes --emit=hip");
    return kUsageError;
  }
  nvccOptions.hip = amd;
  if (target && !target->hasBackEnd() && opts.emit != "tokens" && opts.emit != "ast") {
    usageError("--target " + opts.target + " is not implemented yet (it has no back end); use " +
               tlc::target::backEndTargetList());
    return kUsageError;
  }
  if (opts.emit == "header" && opts.cppNamespace.empty())
    opts.cppNamespace = opts.output == "-" ? identifierFrom(opts.inputs[0]) : identifierFrom(opts.output);

  std::vector<tlc::Define> defines;
  for (const std::string &text : opts.defines) {
    auto d = tlc::parseDefine(text);
    if (!d) {
      usageError("-D " + text + ": expected name=value or kernel.name=value");
      return kUsageError;
    }
    defines.push_back(*d);
  }

  // -c writes an object; everything else text (stdout by default).
  std::string output = opts.output;
  if (compileOnly && output == "-")
    output = llvm::sys::path::stem(opts.inputs[0]).str() + ".o";
  if (tlc::driver::outputClobbersInput(output, opts.inputs, "tlc"))
    return kUsageError;
  if (saveTemps) {
    llvm::SmallString<256> kept(output);
    llvm::sys::path::replace_extension(kept, amd ? "hip" : "cu");
    if (kept == output)
      kept += amd ? ".hip" : ".cu";
    nvccOptions.savedSource = std::string(kept);
    if (tlc::driver::outputClobbersInput(nvccOptions.savedSource, opts.inputs, "tlc"))
      return kUsageError;
  }

  // Text goes to a buffer and reaches the output only when the whole run succeeded.
  std::string text;
  llvm::raw_string_ostream textStream(text);
  tlc::driver::Compilation compilation(opts, defines);
  int status = kSuccess;
  for (const std::string &input : opts.inputs)
    status = std::max(status, compilation.addFile(input, textStream));
  if (status == kSuccess || status == kInputError) {
    for (const tlc::Define &d : defines) {
      if (d.used)
        continue;
      usageError("-D " + (d.kernel.empty() ? "" : d.kernel + ".") + d.name + "=" + d.value +
                 " does not name a constant, compile-time parameter or shape symbol" +
                 (d.kernel.empty() ? "" : " of kernel '" + d.kernel + "'"));
      status = kUsageError;
    }
  }
  auto writeText = [&](int success) {
    return tlc::driver::writeOutput(output, textStream.str(), "tlc") ? success : kInputError;
  };
  if (status != kSuccess) {
    // A token dump is a debugging aid: it is shown even for input with lexical errors.
    if (status == kInputError && opts.emit == "tokens" && !compileOnly)
      return writeText(status);
    return status;
  }
  if (opts.emit == "layout-svg")
    tlc::pictures::writeLayoutSvg(compilation.graphs(), textStream);
  if (!compilation.needsCodegen())
    return writeText(status);

  tlc::codegen::EmitOptions emit;
  emit.target = opts.targetInfo().name().str();
  emit.cppNamespace = opts.cppNamespace;
  emit.commandLine = opts.commandLine;
  if (std::string chosen = compilation.autoSummary(); !chosen.empty())
    emit.commandLine += "  [auto: " + chosen + "]";
  emit.header = opts.emit == "header";
  emit.hip = amd;
  emit.torch = opts.emit == "torch";
  emit.selfContained = emit.header || compileOnly;
  // Declarations hold no code from the .tl files: no directives.
  emit.lineDirectives = !noLineDirectives && opts.emit != "decl";
  // The generated text, for the file its #line directives name.
  auto generate = [&](const std::string &generatedFile) {
    emit.outputName = generatedFile;
    std::string cuda;
    llvm::raw_string_ostream cudaStream(cuda);
    if (opts.emit == "decl")
      tlc::codegen::emitDeclarations(compilation.kernels(), compilation.dispatches(), emit, cudaStream);
    else
      tlc::codegen::emitCuda(compilation.kernels(), compilation.dispatches(), emit, cudaStream);
    return cudaStream.str();
  };
  if (!compileOnly) {
    // On stdout the name is bison's and flex's, "<stdout>": the file it will be saved in is
    // not known.
    textStream << generate(output == "-" ? "<stdout>" : output);
    return writeText(kSuccess);
  }
  return tlc::driver::produceAtomically(output, "tlc", [&](const std::string &objectPath) {
    return tlc::driver::compileWithNvcc(generate, opts.target, objectPath, nvccOptions);  // or hipcc
  });
}

struct MainArgs {
  int argc;
  char **argv;
  int status;
};

void *runDriver(void *p) {
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
  // On a large stack (driver/LargeStack.h says why).
  MainArgs args{argc, argv, kInternalError};
  tlc::driver::runOnLargeStack(runDriver, &args);
  return tlc::driver::finishStandardStreams(args.status, "tlc");
}
