// One run of tlc over its input files: each file goes through the front end and, where the
// requested output needs it, through the FTG and tile inference. The units stay alive so that
// all kernels of all files can be emitted together (one header-only library, one object).
#pragma once

#include "codegen/CudaEmitter.h"
#include "driver/AutoParams.h"
#include "driver/Options.h"
#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/Sema.h"
#include "ir/FTG.h"
#include "lower/LoopIR.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tlc::driver {

class Compilation {
public:
  Compilation(const Options &opts, std::vector<Define> &defines) : opts(opts), defines(defines) {}

  // Runs the stages the emit kind needs; dumps (tokens, ast, ftg, inferred) go to `out`.
  int addFile(const std::string &path, llvm::raw_ostream &out);
  // Whether kernels() must still be turned into code (cuda, header, -c).
  bool needsCodegen() const {
    return opts.emit == "cuda" || opts.emit == "hip" || opts.emit == "header" || opts.emit == "decl" || opts.emit == "torch";
  }
  std::vector<codegen::KernelInput> kernels() const;
  // Every kernel's inferred FTG, in input order (--emit=layout-svg).
  std::vector<const ftg::Graph *> graphs() const;
  // Kernels compiled in several variants of their `auto` parameters (emitted after kernels()).
  std::vector<codegen::ShapeDispatch> dispatches() const;
  // The values the recommender chose for `auto` parameters, as -D options with the GPU they
  // were chosen for; empty when there were none.
  std::string autoSummary() const;

private:
  // A kernel compiled in variants: the dispatch's description (its `kernel` is set by
  // dispatches(), once the kernels are lowered) and each variant's graph.
  struct Dispatch {
    std::string kernel;
    codegen::ShapeDispatch shape;
    std::vector<const ftg::Graph *> graphs; // per variant
    std::vector<std::string> ranges;        // per variant of defaults that depend on sizes: its first range
  };
  struct Unit {
    std::string path;
    llvm::SourceMgr sourceMgr;
    std::unique_ptr<DiagnosticEngine> diags;
    ASTContext ast;
    std::vector<std::unique_ptr<ASTContext>> variantASTs; // variants 1, 2, ... of dispatches
    std::vector<std::unique_ptr<ftg::Graph>> graphs;
    std::vector<std::unique_ptr<lower::Kernel>> loops; // per graph, when code is generated
    std::vector<Dispatch> dispatches;
  };
  bool runInference(ftg::Graph &g, DiagnosticEngine &diags);
  // A Sema over `ast` with the -D options and the target's limits (max_shared_bytes()).
  Sema makeSema(ASTContext &ast, DiagnosticEngine &diags) const;
  // Compiles variants 1, 2, ... of every kernel with several (variant 0 is the unit's own):
  // of its `auto` parameters, and of defaults that compare sizes with constants
  // (DefaultVariants.cpp).
  bool compileVariants(Unit &u, unsigned bufferId, const AutoParams &autoParams);
  bool compileDefaultVariants(Unit &u, unsigned bufferId, const AutoParams &autoParams);
  // Reports a kernel of `u` named like the selector or a variant of kernel `k`'s dispatch.
  bool dispatchNamesFree(Unit &u, const std::string &kernel, size_t variants, llvm::StringRef hint);
  // Infers variant `v` of a dispatch from its own AST (parsed and checked by the caller).
  bool addVariant(Unit &u, Dispatch &d, std::unique_ptr<ASTContext> ast, size_t v);
  // After an error in a kernel whose defaults depend on sizes: a note naming the range of
  // sizes the failing variant was compiled for (`where`: "C in [1, 65), H in [1, 8)").
  static void noteSizeVariant(const KernelDecl &k, const std::string &where);
  // "C in [1, 65), H in [1, 8)": the first range of every size the defaults of `k` compare.
  static std::string firstRanges(const KernelDecl &k);
  // Reports a kernel of `u` whose generated names a kernel of an earlier file already has.
  bool namesDistinctAcrossFiles(Unit &u);
  // With --emit=torch: reports a kernel of `u` whose torch op another kernel's ops already name.
  bool torchOpsDistinct(Unit &u);

  const Options &opts;
  std::vector<Define> &defines;
  std::vector<std::unique_ptr<Unit>> units;
  std::vector<std::string> autoSummaries;
};

} // namespace tlc::driver
