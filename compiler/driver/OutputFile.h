// Writing tlc's results: whole files or nothing, never over an input, and every write error
// reported as an error instead of LLVM's "IO failure" abort at exit.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>
#include <vector>

namespace tlc::driver {

// Whether `output` is one of `inputs` (the same file under any name: links, ./a.tl); reports
// a usage error then. "-" (stdout/stdin) never clashes.
bool outputClobbersInput(llvm::StringRef output, const std::vector<std::string> &inputs,
                         llvm::StringRef tool);

// Writes `text` to `path` ("-": stdout). A regular file is replaced atomically: the text goes
// to a temporary file beside it that is renamed over `path` only once complete, so that an
// error leaves no empty or truncated file behind (make would take it as up to date).
// Devices and pipes (/dev/null, /dev/full, a FIFO) are written in place. Returns false after
// reporting a write error.
bool writeOutput(llvm::StringRef path, llvm::StringRef text, llvm::StringRef tool);

// Runs `produce(tempPath)`, which writes a file at tempPath (e.g. nvcc -o) and returns an exit
// status, and renames the result over `path` when that status is 0; otherwise removes it.
// Returns produce's status, or 1 after reporting that the file could not be created or moved.
int produceAtomically(llvm::StringRef path, llvm::StringRef tool,
                      const std::function<int(const std::string &tempPath)> &produce);

// At exit: flushes stdout and reports a failed write to it; a failed write to stderr (closed)
// cannot be reported and only makes the exit status non-zero. Clears both streams' errors so
// that LLVM does not abort in their destructors. Returns the exit status to use.
int finishStandardStreams(int status, llvm::StringRef tool);

} // namespace tlc::driver
