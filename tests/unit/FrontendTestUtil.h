// Helpers shared by the front-end unit tests: a source buffer, a diagnostics engine that
// writes into a string, and the parse/sema entry points run on them.
#pragma once

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "target/TargetInfo.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tlc::test {

// One source file run through the front end. Diagnostics are captured in `messages()`.
class Frontend {
public:
  explicit Frontend(llvm::StringRef text, std::vector<std::string> defineArgs = {})
      : diags(sm, os) {
    bufferId = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "test.tl"),
                                     llvm::SMLoc());
    for (const std::string &arg : defineArgs)
      if (std::optional<Define> d = parseDefine(arg))
        defines.push_back(*d);
  }

  bool parse() { return parseProgram(bufferId, ctx, diags); }

  // Parses and, if that succeeded, runs Sema. True when no error was reported.
  bool analyze() {
    if (!parse())
      return false;
    Sema sema(ctx, diags, defines);
    // What the driver does: max_shared_bytes() is the target's (here tlc's default target).
    sema.setTarget(target::lookupTarget(target::kDefaultTargetName)->limits().sharedBytesPerBlock);
    return sema.run();
  }

  std::string tokens() {
    std::string out;
    llvm::raw_string_ostream tos(out);
    dumpTokens(bufferId, diags, tos);
    return tos.str();
  }

  std::string messages() { return os.str(); }
  unsigned errors() const { return diags.errorCount(); }
  // How many diagnostics carry `text` in their message (one "error:" line each).
  unsigned count(llvm::StringRef text) {
    std::string all = messages();
    unsigned n = 0;
    for (size_t at = all.find(text.str()); at != std::string::npos;
         at = all.find(text.str(), at + text.size()))
      ++n;
    return n;
  }
  bool says(llvm::StringRef text) { return count(text) != 0; }

  Program &program() { return ctx.program; }
  KernelDecl &kernel(size_t i = 0) { return *ctx.program.kernels.at(i); }
  llvm::SourceMgr &sourceMgr() { return sm; }
  // "line:col" of a location in this buffer (columns count bytes, as SourceMgr does).
  std::string lineCol(llvm::SMLoc loc) const {
    auto [line, col] = sm.getLineAndColumn(loc, bufferId);
    return std::to_string(line) + ":" + std::to_string(col);
  }

  std::vector<Define> defines;

private:
  llvm::SourceMgr sm;
  std::string out;
  llvm::raw_string_ostream os{out};
  DiagnosticEngine diags;
  ASTContext ctx;
  unsigned bufferId = 0;
};

// A kernel around `body` with two shape-symbol tensors and common compile-time params:
//   kernel k<BM = 64, BN = 64, BK = 32, threads = 128, acc_t: dtype = f32>(
//       A: f16[M, K], B: f16[K, N], C: out f16[M, N], scale: f32)
//     grid(ceildiv(N, BN), ceildiv(M, BM)) threads(threads) as (bx, by)
//   {
//   body                                           <- line 5
//   }
inline std::string kernelWith(llvm::StringRef body, llvm::StringRef extraParams = "") {
  return "kernel k<BM = 64, BN = 64, BK = 32, threads = 128, acc_t: dtype = f32>(\n"
         "    A: f16[M, K], B: f16[K, N], C: out f16[M, N], scale: f32" +
         (extraParams.empty() ? std::string() : ", " + extraParams.str()) +
         ")\n"
         "  grid(ceildiv(N, BN), ceildiv(M, BM)) threads(threads) as (bx, by)\n{\n" +
         body.str() + "\n}\n";
}

// The statements of the first kernel's body.
inline std::vector<Stmt *> &bodyOf(Frontend &fe) { return fe.kernel().body->body; }

} // namespace tlc::test
