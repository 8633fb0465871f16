// The candidate space of one kernel: which compile-time parameters the recommender may set
// (knobs), what each one does, and which values it tries.
//
// A parameter's role comes from where the kernel uses it: in `threads(...)` it is the block
// size, in `pipelined(..., stages = s)` the pipeline depth, in `swizzle_blocks(p)` the panel
// of the block order, as a gemm policy the warp partition, in the shape of a shared,
// fragment or local buffer a tile size. A parameter that appears in a tensor parameter's
// shape (FlashAttention's `dim`) is part of the problem, and dtype, bool and float
// parameters change what the kernel computes: neither is ever searched.
//
// Values: an `auto(a, b, ...)` list is used as written. Otherwise tile sizes are powers of
// two that are multiples of the tensor-core instruction shape (16..256 for M and N, 16..128
// for a gemm's K), trimmed to the problem size when the tile divides a known extent
// (`ceildiv(M, block_M)`); block sizes are 64, 128 and 256 threads; stages 1 to 4; panels 1
// (row-major), 4, 8 and 16; policies full_row, full_col and square. A parameter's default is
// always among its values, so `tlc recommend` shows where the author's choice ranks.
// Parameters the kernel never mentions are not knobs: they cannot change anything.
#pragma once

#include "recommend/CandidateCompiler.h"
#include "recommend/ExprEval.h"
#include "target/Descriptor.h"

#include "frontend/AST.h"

#include <map>
#include <string>
#include <vector>

namespace tlc::recommend {

enum class KnobRole { Tile, Threads, Stages, Policy, Panel };
llvm::StringRef knobRoleName(KnobRole r);

struct Knob {
  std::string name;
  KnobRole role = KnobRole::Tile;
  std::vector<std::string> values; // in the order candidates enumerate them
  std::string defaultValue;        // empty for `auto`
  bool isAuto = false;
  bool gemmK = false; // a tile size along a gemm's reduction dimension
  // Only the cost model reads it: candidates that differ in it share one compilation.
  bool modelOnly() const { return role == KnobRole::Panel; }
};

struct KnobSpaceOptions {
  // Search only `auto` parameters (compiling a kernel) or every tunable parameter that
  // -D does not pin (`tlc recommend`).
  bool onlyAuto = false;
  // Values to try instead of the usual ones, per knob (`tlc recommend --values stages=2,3`).
  std::map<std::string, std::vector<std::string>> values;
};

class KnobSpace {
public:
  // Analyses the kernel in `structure` (the kernel after Sema; Sema may have stopped on
  // unbound `auto` parameters). `shapes` binds its dynamic shape symbols to the shapes being
  // tuned for; `pinned` are the names -D sets for this kernel.
  static KnobSpace analyze(const KernelDecl &structure, const target::TargetDesc &target,
                           const std::vector<std::string> &pinned, const KnobSpaceOptions &opts,
                           const ExprEvaluator &shapes);

  const std::vector<Knob> &knobs() const { return all; }
  // `auto` parameters the kernel uses in ways the recommender cannot tune (not as a tile
  // size, thread count, pipeline depth, policy or panel) and with no `auto(...)` values:
  // left unbound, so Sema reports any place that needs them as constants.
  const std::vector<std::string> &unresolvedAuto() const { return unresolved; }

  // The number of configurations (SIZE_MAX if it does not fit) and the i-th one
  // (mixed-radix over knobs(), the first knob varying slowest).
  size_t size() const;
  Config at(size_t index) const;

private:
  std::vector<Knob> all;
  std::vector<std::string> unresolved;
};

} // namespace tlc::recommend
