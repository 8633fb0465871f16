// Front door of the front end: source text -> tokens -> parse tree -> AST.
#pragma once

#include "AST.h"
#include "Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

namespace tlc {

class SourceFile;

// Parses the buffer `bufferId` of the diagnostics' SourceMgr into `ctx.program`.
// Returns false when any lexical or syntax error was reported; the AST is then incomplete
// and must not be analysed.
bool parseProgram(unsigned bufferId, ASTContext &ctx, DiagnosticEngine &diags);

// `--emit=tokens`: one token per line as `line:col KIND 'text'`.
bool dumpTokens(unsigned bufferId, DiagnosticEngine &diags, llvm::raw_ostream &os);

} // namespace tlc
