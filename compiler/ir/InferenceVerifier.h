// The compile-time self-check after inference (run by the PassManager once its passes have
// succeeded): what inference decided must be consistent before code is generated from it.
//
//   - every shared layout maps its tile one-to-one into the buffer's allocation;
//   - shared buffers that are live at the same time never share bytes, and every buffer
//     lies inside the planned shared memory;
//   - every fragment layout covers its tile exactly (each element held by one thread and
//     register; a row layout holds every row).
//
// A violation is a compiler bug; it is reported as an internal error naming the buffer
// instead of generating code that would compute wrong results.
#pragma once

#include "ir/FTG.h"

#include "llvm/Support/raw_ostream.h"

namespace tlc::ftg {

// Checks whatever inference has filled in so far (layouts, offsets); returns false after
// writing one line per violation to `errors`.
bool verifyInference(const Graph &g, llvm::raw_ostream &errors);

// Tiles up to this many elements are checked by enumeration, larger ones algebraically.
constexpr int64_t kVerifyEnumerationLimit = int64_t(1) << 22;

} // namespace tlc::ftg
