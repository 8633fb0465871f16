// Compiles candidate configurations of one kernel up to the inferred FTG: the candidate's
// knob values bound like `-D kernel.name=value`, Sema, FTG construction and the
// tile-inference passes. The passes are the judges of legality: a candidate they reject (a
// warp split that does not tile, shared memory over the budget, a layout conflict) is
// illegal, and the first error message is the reason.
//
// Parsing is most of the cost of compiling a small kernel (ANTLR takes ~1 ms where Sema and
// inference take ~0.1 ms), and Sema writes its results into the AST, so the source is
// parsed once and each candidate gets a fresh AST built from the same parse tree.
//
// Only the kernel being tuned is analysed; the other kernels of the file are dropped from
// each candidate's program so that their own `auto` parameters cannot fail this one.
#pragma once

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/Sema.h"
#include "ir/FTG.h"
#include "target/TargetInfo.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>
#include <vector>

namespace tlc::recommend {

// One knob value: what `-D name=value` would say.
struct Binding {
  std::string name;
  std::string value;
};
using Config = std::vector<Binding>;
std::string configStr(const Config &c); // "block_M=128 block_N=64"

// An error whose text is already rendered diagnostics (`file:line:col: error: ...`, the
// source line and caret, notes): drivers print it as it is. `commandLine` marks errors in
// the user's -D options, which are usage errors (exit 2), not errors in the source.
class LocatedError : public llvm::ErrorInfo<LocatedError> {
public:
  static char ID;
  explicit LocatedError(std::string text, bool commandLine = false)
      : text(std::move(text)), commandLine(commandLine) {}
  void log(llvm::raw_ostream &os) const override { os << text; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

  std::string text;
  bool commandLine;
};

// A compiled candidate. Owns the AST its graph points into; lives no longer than the
// CandidateCompiler that made it (it shares its source buffer).
struct CompiledKernel {
  std::string diagnostics;
  std::unique_ptr<DiagnosticEngine> diags;
  ASTContext ast;
  KernelDecl *kernel = nullptr;
  std::unique_ptr<ftg::Graph> graph; // null when illegal
  std::string error;                 // the first error, when illegal
  bool semaOk = false;               // Sema passed: the AST is typed and folded
  bool commandLineErrors = false;    // Sema rejected a -D value (the user's, or a binding)
};

class CandidateCompiler {
public:
  // Parses `source`; fails with the first syntax error or when `kernelName` is not in it.
  // `defines` are the user's -D options (shape bindings and pinned knobs); `target` the
  // code-generation target whose passes compile and check the candidates.
  static llvm::Expected<std::unique_ptr<CandidateCompiler>>
  create(std::string source, std::string fileName, std::string kernelName,
         std::vector<Define> defines, const target::TargetInfo &target);
  ~CandidateCompiler();

  // Stops after Sema when `infer` is false (to analyse the kernel's structure).
  std::unique_ptr<CompiledKernel> compile(const Config &config, bool infer = true) const;

  // Renders an error at `at` with notes, as the compiler prints them (no colours).
  struct Note {
    llvm::SMRange range;
    std::string message;
  };
  std::string renderError(llvm::SMRange at, const std::string &message,
                          const std::vector<Note> &notes = {}) const;
  // Renders notes alone (`file:line:col: note: ...` with the source line and caret).
  std::string renderNotes(const std::vector<Note> &notes) const;

  const std::string &kernelName() const { return kernel; }
  const std::string &fileName() const { return file; }

private:
  struct ParsedSource;
  CandidateCompiler(std::string fileName, std::string kernelName, std::vector<Define> defines,
                    const target::TargetInfo &target);

  std::unique_ptr<ParsedSource> parsed;
  std::string file, kernel;
  const target::TargetInfo &target;
  std::vector<Define> defines;
};

} // namespace tlc::recommend
