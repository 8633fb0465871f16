// Runs named passes over a kernel's FTG, with the verifier after each, and optionally prints
// the graph after every pass (--print-after-all) and times them (--time-passes).
#pragma once

#include "ir/FTG.h"

#include "frontend/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <vector>

namespace tlc::ftg {

class Pass {
public:
  virtual ~Pass() = default;
  virtual llvm::StringRef name() const = 0;
  // Returns false after reporting an error through `diags`.
  virtual bool run(Graph &g, DiagnosticEngine &diags) = 0;
};

class PassManager {
public:
  void add(std::unique_ptr<Pass> pass) { passes.push_back(std::move(pass)); }
  void setPrintAfterAll(llvm::raw_ostream *os) { printStream = os; }
  void setTimePasses(llvm::raw_ostream *os) { timeStream = os; }
  bool run(Graph &g, DiagnosticEngine &diags);

private:
  std::vector<std::unique_ptr<Pass>> passes;
  llvm::raw_ostream *printStream = nullptr;
  llvm::raw_ostream *timeStream = nullptr;
};

} // namespace tlc::ftg
