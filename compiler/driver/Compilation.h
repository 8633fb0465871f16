// One run of tlc over its input files: each file goes through the front end and, where the
// requested output needs it, through the FTG and tile inference. The units stay alive so that
// all kernels of all files can be emitted together (one header-only library, one object).
#pragma once

#include "codegen/CudaEmitter.h"
#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/Sema.h"
#include "ir/FTG.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tlc::driver {

enum ExitCode { kSuccess = 0, kInputError = 1, kUsageError = 2, kInternalError = 3 };

struct Options {
  std::vector<std::string> inputs;
  std::string output = "-";
  std::string emit = "cuda";
  std::string target = "sm_90a";
  std::vector<std::string> defines;
  std::string cppNamespace;
  bool printAfterAll = false;
  bool timePasses = false;
  bool showColors = false;
  std::string commandLine;
  // `auto` parameters: the GPU to tune for (default: the --target's reference GPU), buckets
  // for dynamic shape symbols, and whether to report the choices.
  std::string device;
  std::map<std::string, int64_t> assumed;
  bool verbose = false;
};

class Compilation {
public:
  Compilation(const Options &opts, std::vector<Define> &defines) : opts(opts), defines(defines) {}

  // Runs the stages the emit kind needs; dumps (tokens, ast, ftg, inferred) go to `out`.
  int addFile(const std::string &path, llvm::raw_ostream &out);
  // Whether kernels() must still be turned into code (cuda, header, -c).
  bool needsCodegen() const { return opts.emit == "cuda" || opts.emit == "header"; }
  std::vector<codegen::KernelInput> kernels() const;
  // The values the recommender chose for `auto` parameters, as -D options with the GPU they
  // were chosen for; empty when there were none.
  std::string autoSummary() const;

private:
  struct Unit {
    std::string path;
    llvm::SourceMgr sourceMgr;
    std::unique_ptr<DiagnosticEngine> diags;
    ASTContext ast;
    std::vector<std::unique_ptr<ftg::Graph>> graphs;
  };
  bool runInference(Unit &unit);

  const Options &opts;
  std::vector<Define> &defines;
  std::vector<std::unique_ptr<Unit>> units;
  std::vector<std::string> autoSummaries;
};

} // namespace tlc::driver
