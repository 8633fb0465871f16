// Tile operators own their rules, as TileLang's TileOperatorNode does (src/op/operator.h):
// how a call becomes an FTG node (operands and attributes), the layouts it fixes or passes on
// at each level of layout inference, its instruction choice, the shared scratch it needs and
// its lowering to the loop IR. The passes are loops that ask each node's operator; adding an
// operator is one file in compiler/ops/ (docs/architecture.md, "Adding a tile operator").
//
// This header is the interface (ir/ is below every pass); compiler/ops/ implements and
// registers the operators. The contexts an operator is handed are interfaces too, each
// implemented by the stage that runs it.
#pragma once

#include "ir/FTG.h"

namespace tlc {

namespace lower {
class KernelLowering;
}

namespace ftg {

// What build() may ask of the graph builder.
class NodeBuilder {
public:
  virtual ~NodeBuilder() = default;
  // The operand a buffer-region argument denotes (nullopt for a scalar or an error).
  virtual std::optional<Operand> operand(const Expr *e) = 0;
  // Reports a construct code generation does not handle.
  virtual void unsupported(llvm::SMRange r, const std::string &what, const std::string &hint = "") = 0;
};

// The levels of layout inference an operator takes part in (infer/LayoutInference.cpp):
// STRICT layouts are fixed by an instruction and run once, first; COMMON layouts follow from
// the operands' layouts and run to a fixed point, before and after FREE gives the remaining
// fragments their layouts.
enum class InferLevel { Strict, Common };

// What an operator's layout rules may do (implemented by infer/LayoutInference.cpp).
class LayoutRules {
public:
  virtual ~LayoutRules() = default;
  virtual const Graph &graph() const = 0;
  // Gives fragment `b` the layout `l`, or reports the conflict with the one it has.
  virtual void assign(Buffer &b, const FragmentLayout &l, const std::string &reason, llvm::SMRange at) = 0;
  // Gives shared buffer `b` the layout `l`; false (after reporting) if it has another.
  virtual bool assignShared(Buffer &b, const SharedLayout &l, const std::string &reason, llvm::SMRange at) = 0;
  virtual void error(llvm::SMRange at, const std::string &msg, const std::string &hint = "") = 0;

  // The rule of operators that move a fragment into one of the same shape (copy, cumsum):
  // whichever of n's first input and first output has a layout gives it to the other. The
  // reason reads "common: <fromSrc> 'src'" or "common: <fromDst> 'dst'".
  void shareLayout(Node &n, const std::string &fromSrc, const std::string &fromDst);
};

class TileOp {
public:
  virtual ~TileOp() = default;
  virtual NodeKind kind() const = 0;
  // Whether calls of `b` build this operator's nodes.
  virtual bool buildsFrom(Builtin b) const = 0;
  // The node's operands and attributes from its (type-checked) call.
  virtual void build(Node &n, const CallExpr &call, NodeBuilder &b) const = 0;
  // Layout inference at `level`.
  virtual void inferLayout(Node &n, InferLevel level, LayoutRules &rules) const {}
  // Instruction selection (after layouts and pipelines are known).
  virtual void selectInstruction(Node &n, const Graph &g) const {}
  // Bytes of shared scratch its lowering uses beyond every buffer (0: none): the whole area
  // from its start, under barriers of its own (scratchBytes), or one slot of it, under barriers
  // SyncInsertion places from the slot's access set (scratchSlotBytes: the slots alternate).
  virtual int64_t scratchBytes(const Node &n, const Graph &g) const { return 0; }
  virtual int64_t scratchSlotBytes(const Node &n, const Graph &g) const { return 0; }
  // What the comment above its lowered code says, e.g. "copy: A[...] -> A_s".
  virtual std::string describe(const Node &n) const;
  // The node's loop IR.
  virtual void lower(const Node &n, lower::KernelLowering &L) const = 0;
  // The node issued ahead as a pipeline stage's producer (only operators whose nodes the
  // pipeline planner marks as producers, i.e. copies, need it).
  virtual void lowerPrefetch(const Node &n, lower::KernelLowering &L) const;
  // Whether the prefetch's element path (the instantiation whose tensor rows are not aligned
  // for cp.async) may be lowered in halves through registers (lower::KernelLowering::
  // RegisterStaging, elementsOnly): the loads where the prefetch is issued, the stores after
  // the iteration's consumers. The pipeline then weighs the tile's registers.
  virtual bool stagesElementsThroughRegisters(const Node &n, const Graph &g) const { return false; }
  // Operators other than copy that a warp-specialized pipeline's producer may issue as bulk
  // tensor copies (im2col): whether node `n` has that form, and its copies into `tile` (its
  // destination or a stage of it) completing on mbarrier `barrier`; false when it has none.
  virtual bool bulkLoadable(const Node &n, const Graph &g) const { return false; }
  virtual bool lowerBulkLoad(const Node &n, lower::KernelLowering &L, const std::string &tile,
                             const std::string &barrier) const {
    return false;
  }
};

// Operators register themselves when the program starts (compiler/ops/ is linked as object
// files for that); registering one twice for a builtin is a programming error.
bool registerTileOp(const TileOp &op);
// The operator that calls of `b` build, or null.
const TileOp *tileOpFor(Builtin b);

} // namespace ftg
} // namespace tlc
