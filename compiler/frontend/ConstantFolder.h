// Folding of compile-time constants. Sema decides types; these functions only compute.
#pragma once

#include "AST.h"

#include <optional>
#include <string>
#include <vector>

namespace tlc {

struct FoldResult {
  std::optional<ConstValue> value;
  std::string error; // non-empty: the operation is invalid on these constants
};

FoldResult foldUnary(UnaryOp op, const ConstValue &v);
FoldResult foldBinary(BinaryOp op, const ConstValue &a, const ConstValue &b);
// Scalar builtins (exp, max, ceildiv, ...) on constant arguments.
FoldResult foldBuiltin(Builtin b, llvm::ArrayRef<ConstValue> args);
// Value conversion for casts and typed bindings: the value the device holds after the
// conversion (floats rounded to nearest even in the target format, FP8 saturating; integers
// wrapped to the target width; floats to integers truncated and saturated).
ConstValue castConstant(const ConstValue &v, DType to);

// The values of an integer expression built from constants, warpgroup_id(), lets of those,
// arithmetic and scalar builtins, in each warpgroup of a block of `threads` threads (at least
// one; named-barrier ids); nullopt for anything else (a parameter, a tensor element).
std::optional<std::vector<int64_t>> valuesPerWarpgroup(const Expr *e, int64_t threads);

} // namespace tlc
