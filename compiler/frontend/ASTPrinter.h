// `--emit=ast`: the typed AST as an indented tree. Expressions print in source form with
// their type and, where folding found one, their constant value.
#pragma once

#include "AST.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace tlc {

void printAST(const Program &program, llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os);

} // namespace tlc
