// Bridges ANTLR's view of the input (UTF-32 code point indices) and LLVM's (byte pointers
// into the SourceMgr buffer), and rejects input that is not valid UTF-8 before ANTLR's
// converter sees it (it would throw).
#pragma once

#include "Diagnostics.h"

#include "llvm/Support/SMLoc.h"

#include <string>
#include <vector>

namespace antlr4 {
class Token;
class ParserRuleContext;
} // namespace antlr4

namespace tlc {

class SourceText {
public:
  SourceText(llvm::SourceMgr &sm, unsigned bufferId);

  // Reports the first invalid UTF-8 sequence; true if the text is valid.
  bool validateUtf8(DiagnosticEngine &diags) const;

  const std::string &utf8() const { return text; }
  llvm::SMLoc locAt(size_t codePointIndex) const;
  llvm::SMRange rangeOf(const antlr4::Token *tok) const;
  llvm::SMRange rangeOf(antlr4::ParserRuleContext *ctx) const;
  // A zero-width location just after `tok` (where a missing ';' belongs).
  llvm::SMRange after(const antlr4::Token *tok) const;

private:
  const char *bufferStart;
  std::string text;
  // Byte offset of each code point; empty when the input is pure ASCII.
  std::vector<size_t> byteOffsets;
};

} // namespace tlc
