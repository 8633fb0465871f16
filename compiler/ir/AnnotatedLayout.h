// annotate_layout(buf, (i, j) => [p, q]): the layout function as a shared layout of the
// layout algebra (ir/Layout.h), and the proof that it is a bijection of the buffer's index
// space, which the language promises (docs/language.md 9.7).
//
// The proof is symbolic where the iterator-map analysis (analysis/IterMap.h) can invert the
// map onto exactly the buffer's box, as it can for every XOR swizzle, permutation of digits
// and transposition written on whole digits; otherwise every element is evaluated, which is
// exact and bounded (kAnnotateEnumerationLimit). Errors name the indices and the numbers.
#pragma once

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "ir/TileLayout.h"

#include <optional>

namespace tlc {

// The most elements the element-by-element check evaluates: 2^18 = 262144, more than any
// GPU's shared memory holds even in 1-byte elements (228 KB on the H100). A larger buffer
// whose map the analysis cannot invert is an error; it could not be allocated anyway.
constexpr int64_t kAnnotateEnumerationLimit = int64_t(1) << 18;

// The layout `annotate_layout(<name>, layout)` gives a shared buffer of `shape` and
// `elemBits`-bit elements, whose leading dimensions fold into the rows of its [rows, cols]
// view; nullopt, after reporting at the layout function, when the function uses anything
// but its indices and compile-time constants, is not a bijection of the index space, or
// needs more than 32-bit arithmetic.
std::optional<SharedLayout> buildAnnotatedLayout(const LambdaExpr &layout, llvm::StringRef name,
                                                 llvm::ArrayRef<int64_t> shape, int elemBits,
                                                 unsigned line, DiagnosticEngine &diags);

} // namespace tlc
