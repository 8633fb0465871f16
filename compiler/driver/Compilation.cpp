#include "driver/Compilation.h"
#include "driver/AutoParams.h"

#include "frontend/ASTPrinter.h"
#include "frontend/Parser.h"
#include "infer/Passes.h"
#include "ir/PassManager.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

namespace tlc::driver {

int Compilation::addFile(const std::string &path, llvm::raw_ostream &out) {
  auto bufferOrErr = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!bufferOrErr) {
    llvm::WithColor::error(llvm::errs(), "tlc")
        << "cannot read '" << path << "': " << bufferOrErr.getError().message() << "\n";
    return kUsageError;
  }
  auto unit = std::make_unique<Unit>();
  Unit &u = *unit;
  units.push_back(std::move(unit));
  u.path = path;
  unsigned bufferId = u.sourceMgr.AddNewSourceBuffer(std::move(*bufferOrErr), llvm::SMLoc());
  u.diags = std::make_unique<DiagnosticEngine>(u.sourceMgr, llvm::errs());
  u.diags->setShowColors(opts.showColors);
  DiagnosticEngine &diags = *u.diags;

  if (opts.emit == "tokens")
    return dumpTokens(bufferId, diags, out) ? kSuccess : kInputError;
  if (!parseProgram(bufferId, u.ast, diags))
    return kInputError;
  AutoParams autoParams(opts, defines);
  if (int status = autoParams.choose(u.ast.program, u.sourceMgr.getMemoryBuffer(bufferId)->getBuffer(),
                                     path, diags))
    return status;
  bool ok = false;
  {
    ScopedDefines chosen(defines, autoParams.defines());
    Sema sema(u.ast, diags, defines);
    ok = sema.run();
    if (sema.commandLineErrors())
      return kUsageError;
  }
  autoParams.markChosen(u.ast.program);
  if (std::string s = autoParams.summary(); !s.empty())
    autoSummaries.push_back(s);
  if (!ok)
    return kInputError;
  if (opts.emit == "ast") {
    printAST(u.ast.program, u.sourceMgr, out);
    return kSuccess;
  }

  for (KernelDecl *k : u.ast.program.kernels)
    if (auto g = ftg::buildGraph(*k, diags, opts.target)) {
      g->sourceName = path;
      u.graphs.push_back(std::move(g));
    }
  if (diags.hasErrors())
    return kInputError;
  if (opts.emit == "ftg") {
    for (auto &g : u.graphs)
      ftg::printGraph(*g, out, /*withInference=*/false);
    return kSuccess;
  }
  if (!runInference(u))
    return kInputError;
  if (opts.emit == "inferred")
    for (auto &g : u.graphs)
      ftg::printGraph(*g, out, /*withInference=*/true);
  return kSuccess;
}

bool Compilation::runInference(Unit &u) {
  for (auto &g : u.graphs) {
    ftg::PassManager pm;
    pm.add(infer::createLayoutInference());
    pm.add(infer::createPipelinePlanner());
    pm.add(infer::createSharedMemoryPlanner());
    pm.add(infer::createInstructionSelection());
    if (opts.printAfterAll)
      pm.setPrintAfterAll(&llvm::errs());
    if (opts.timePasses)
      pm.setTimePasses(&llvm::errs());
    pm.run(*g, *u.diags);
  }
  return !u.diags->hasErrors();
}

std::string Compilation::autoSummary() const {
  std::string all;
  for (const std::string &s : autoSummaries)
    all += (all.empty() ? "" : "; ") + s;
  return all;
}

std::vector<codegen::KernelInput> Compilation::kernels() const {
  std::vector<codegen::KernelInput> all;
  for (const auto &u : units)
    for (const auto &g : u->graphs)
      all.push_back({g.get(), u->diags.get(), u->path});
  return all;
}

} // namespace tlc::driver
