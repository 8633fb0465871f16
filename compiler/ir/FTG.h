// The fused tile-level dataflow graph (FTG) of one kernel (TileLang paper §3): tile-operator
// nodes connected by the buffers they read and write, nested in loop and branch regions.
//
// The FTG is built from the typed AST and keeps pointers into it: scalar code (the bodies of
// parallel loops, `let` bindings, index expressions) stays in AST form, as TileLang keeps
// TIR inside T.Parallel. What the FTG adds is the tile-level structure that inference works
// on: every buffer as a value with scope, dtype, shape and (once inferred) a layout; every
// tile operator as a node with its operand regions; data-dependency edges between nodes.
#pragma once

#include "frontend/AST.h"
#include "frontend/Sema.h"
#include "ir/TileLayout.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tlc::target {
struct MmaAtom;
}

namespace tlc::target {
class TargetInfo;
}

namespace tlc::ftg {

// A buffer value: a kernel tensor, a shared/fragment/local allocation.
struct Buffer {
  // Null for a buffer a pass invented (its name is then a stem: lower::bufferName).
  const BufferLikeDecl *decl = nullptr;
  std::string name;
  Scope scope = Scope::Global;
  DType dtype = DType::F32;
  std::vector<std::optional<int64_t>> shape; // nullopt: dynamic (tensors only)
  bool isParam = false;
  bool isOut = false;
  // A buffer the kernel declared `i4`/`u4` (that dtype; nullopt for any other). The graph
  // holds it as its bytes: `dtype` is u8 and the innermost extent is half the declared one
  // (element 2c is the low nibble of byte c, 2c + 1 the high one), so that copies, layouts,
  // pipelines and dequant_i4 move and address bytes and no pass needs a sub-byte rule. The
  // operands' innermost origins and extents are halved to match (GraphBuilder::operand);
  // element reads in scalar code extract the nibble (lower/ScalarExpr.cpp).
  std::optional<DType> packed;

  // Filled by inference.
  std::optional<SharedLayout> shared;     // shared buffers
  std::optional<FragmentLayout> fragment; // fragment buffers
  int stages = 1;                          // multi-buffering of shared buffers in pipelines
  int64_t sharedOffset = -1;               // bytes into the block's dynamic shared memory
  std::string layoutReason;                // which rule fixed the layout (for --emit=inferred)
  bool unused = false;                     // no node reads or writes it: not declared in the code

  int64_t numElements() const; // of on-chip buffers (constant shape)
  int64_t bytes() const;       // per stage
};

enum class NodeKind {
  Copy, Gemm, Reduce, Fill, AtomicAdd, Cumsum, DequantI4, Im2col, Parallel, Let, Scalar, Extern, Barrier,
  AnnotateLayout, SwizzleBlocks, Loop, If,
};
llvm::StringRef nodeKindName(NodeKind k);

// How a copy moves data, decided by instruction selection.
enum class CopyInstr { None, CpAsync16, Vector, Scalar, Fragment };
llvm::StringRef copyInstrName(CopyInstr c);

struct Operand {
  Buffer *buffer = nullptr;
  Region region; // from Sema: extents, origins, points
  const Expr *expr = nullptr; // the argument it was built from (null for access summaries)
};

class TileOp;

// A parallel loop recognized as a gathered copy (infer/GatherCopy.cpp), as TileLang's
// inject_ptx_async_copy recognizes one: its body is lets and one store of a global tensor's
// element into a shared tile indexed by the loop variables, optionally zero where a condition
// fails (`if c { S[..] = X[..] } else { S[..] = 0 }` or `select(c, X[..], 0)`). It is lowered
// to cp.async zero-filled where the condition fails, and a pipelined loop prefetches it.
struct GatherCopy {
  Buffer *src = nullptr, *dst = nullptr;
  const IndexExpr *load = nullptr;  // X[...]
  const IndexExpr *store = nullptr; // S[i, j]
  const Expr *cond = nullptr;       // null: always X[...]
  bool negated = false;             // the zero is stored where `cond` holds
  std::vector<const LetStmt *> lets; // the body's lets, in order, before the store
  // Bytes per cp.async (4, 8 or 16) and elements per access; 0 bytes: element by element.
  int bytes = 0;
  int vector = 1;
  // The cp.async path needs the aligned instantiation (vector > 1: the launcher proved every
  // row of `src` 16-byte aligned and its last extent whole 16-byte chunks); the other one
  // stores element by element.
  bool needsAligned = false;
};

struct Node {
  NodeKind kind;
  // The tile operator that owns this node's rules (ir/TileOp.h); null for scalar code,
  // parallel loops, loops and branches.
  const TileOp *op = nullptr;
  unsigned id = 0;
  const Stmt *stmt = nullptr;   // the statement this node lowers
  const CallExpr *call = nullptr;
  // Tile operands (for scalar code, loops and branches: the buffers they access).
  std::vector<Operand> inputs, outputs;
  // Every buffer the node reads or writes, including reads inside index expressions and,
  // for loops and branches, inside their bodies (ir/AccessAnalysis.h). What dependencies,
  // shared-memory lifetimes and barriers are computed from.
  std::vector<Buffer *> reads, writes;
  std::vector<Node *> deps;     // latest earlier conflicting nodes of the region (older ones implied)

  // Loop / If regions.
  const ForStmt *loop = nullptr;
  std::vector<std::unique_ptr<Node>> body;     // loop body or then-branch
  std::vector<std::unique_ptr<Node>> elseBody; // if statements

  // Copy: one half of a copy that infer/StoreStaging routed through a shared tile (the call
  // is the original copy's).
  bool staged = false;

  // Pipelined loop lowered as an ordinary loop (infer/PipelinePlanner.cpp: on gfx9, when no
  // copy can be staged through registers within the budget), and, on gfx9, what the planner
  // chose and why (--emit=inferred); empty on the cp.async targets.
  bool plannedAsOrdinaryLoop = false;
  std::string pipelineNote;
  // Gemm.
  bool transA = false, transB = false, clearAccum = false;
  WarpPolicy policy = WarpPolicy::Square;
  // `threads = T`: the gemm runs on the block's first T threads (0: all of them); its
  // accumulator, and every fragment computed from it, lives on those threads alone, and the
  // tile operators over such fragments run there (lower/KernelLowering: subsetGuard).
  int gemmThreads = 0;
  int warpsM = 0, warpsN = 0; // inferred partition over the atom's issuing groups (warps or warpgroups)
  // The tensor-core instruction chosen (the target's warpgroup atom, wgmma, or its warp
  // atom, mma.sync), and for wgmma the N of one instruction.
  bool warpgroupMma = false;
  int instrN = 0;
  // The warp atom chosen among the target's (gfx9: the 32x32 or the 16x16 MFMA); null for wgmma.
  const target::MmaAtom *warpAtom = nullptr;
  // mma.sync: a shared operand whose annotated layout (annotate_layout) is not the swizzle
  // ldmatrix reads, so the gemm reads it element by element through that layout.
  bool elementwiseA = false, elementwiseB = false;
  // mma.sync with B in registers written by dequant_i4 from packed registers: B's layout is
  // the blocked one of 4 threads per row and `bKRun` columns per thread (0: the accumulator
  // layout), and the gemm reads A in the same permuted K order (tl::gemm_sr_runs).
  int bKRun = 0;
  // ... and, with 16 weight rows per warp, the product computed transposed (the weights as the
  // mma's A operand, C in FragmentLayout::mmaTransposedRuns).
  bool bRunsTransposed = false;
  // ... and with fewer weight rows than 8 (16) per warp, the warps split K in this many groups
  // of consecutive warps, each summing its slice of K's runs (C holds each group's partial
  // sums: FragmentLayout::partialSums).
  int bKSplit = 1;
  // ... computed transposed, the dequant_i4 that wrote B, whose group scales this gemm applies
  // to each K chunk's f32 sums (infer/ScaleFolding.cpp); that dequant has scalesFolded.
  const Node *foldedScales = nullptr;
  // The instruction and how its operands are read, as --emit=inferred shows it ("warps 2x2,
  // mma.m16n8k32.s8, ldmatrix for A, B gathered"); ops/Gemm.cpp, which chose them, writes it.
  std::string mmaText;
  // DequantI4: scales and zeros are [groups, rows] (transpose_scales = true).
  bool scalesTransposed = false;
  // DequantI4: converts without its scales, which the gemm reading dst applies (ScaleFolding).
  bool scalesFolded = false;
  // Reduce / cumsum.
  Builtin reduceOp = Builtin::None;
  int dim = 0;
  bool clear = true;
  bool reverse = false; // cumsum: suffix sums
  // Parallel: the fragment that drives thread binding (inferred), vector width.
  Buffer *driver = nullptr;
  int vectorWidth = 1;
  // A gathered copy (see GatherCopy), and what --emit=inferred says about a parallel loop that
  // stores global elements into a shared tile: the instruction chosen and why, or why the loop
  // stays element by element.
  std::optional<GatherCopy> gather;
  std::string gatherNote;
  // Copy.
  CopyInstr instr = CopyInstr::None;
  int copyVector = 1; // elements per access
  bool producer = false; // a pipelined loop's prefetched global->shared copy (or gathered copy)
  // A producer under an `if` of the loop body: the prefetch issues it when this condition
  // (negated for the else branch) holds for the iteration it loads (infer/PipelinePlanner).
  const Expr *prefetchGuard = nullptr;
  bool prefetchGuardNegated = false;
  // Im2col (ops/Im2col.cpp): the call's positions (expressions of the kernel) and its filter
  // geometry (constants). `note`: how it moves data, for --emit=inferred. `column` (then
  // channel, r and s are null): the folded form, whose columns run over taps and channels.
  struct Im2colArgs {
    const Expr *pixel = nullptr, *channel = nullptr, *r = nullptr, *s = nullptr, *column = nullptr;
    int64_t kh = 1, kw = 1, stride = 1, pad = 0;
    std::string note;
  };
  std::optional<Im2colArgs> im2col;
  // Loop.
  int stages = 1;
  // Pipelined loops: lets of the loop body that prefetched copies use, in program order;
  // the prefetch recomputes them for the iteration it loads.
  std::vector<const LetStmt *> prefetchLets;
};

// Whether a region is its whole buffer: every dimension from 0 over its full extent (a point
// only in a dimension of extent 1). A sliced region such as `F[0:32, :]` is not.
bool coversWholeBuffer(const Region &r, const Buffer &b);

// For an `if` whose condition is a compile-time constant, the branch it takes (lowering
// generates only that one); null for any other node.
const std::vector<std::unique_ptr<Node>> *takenBranch(const Node &n);

// The nodes of `list` that run, in program order, with each `if` whose condition is a
// compile-time constant replaced by the live nodes of the branch it takes.
std::vector<Node *> liveNodes(const std::vector<std::unique_ptr<Node>> &list);

// The nodes of `list` as one sequence of siblings: each compile-time `if` whose taken branch
// declares nothing (no lets or scalar variables, which lowering keeps in a scope of their own)
// and holds no pipeline producer replaced by that branch's nodes, recursively. Lowering emits
// such a branch without a scope, so a pipelined loop under a knob's switch (`if fold { for ...
// pipelined ... }`) is a top-level loop for warp specialization as it is without the switch,
// and a wgmma group stays in flight across the switch as across the nodes it holds.
std::vector<const Node *> flattenedSiblings(const std::vector<std::unique_ptr<Node>> &list);

// The child lists of `n` that may run: both branches of an `if`, only the one a compile-time
// condition takes, or a loop's body.
std::vector<const std::vector<std::unique_ptr<Node>> *> liveChildren(const Node &n);

// The producers of pipelined loop `loop` (Node::producer) in program order: its body's, and
// those under the `if`s of its body.
std::vector<const Node *> producersOf(const Node &loop);

class Graph {
public:
  const KernelDecl *kernel = nullptr;
  std::string sourceName; // the .tl file it came from
  // The name of this compiled instance in generated code: the kernel's name, or
  // `<kernel>_v<i>` for a variant behind a shape-bucket dispatch (driver/AutoParams).
  std::string symbol;
  std::string symbolName() const { return symbol.empty() ? kernel->name : symbol; }
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<std::unique_ptr<Node>> body;
  int threads = 128;
  int swizzlePanel = 0;
  // warp_specialize(false): no warp-specialized variant (infer/BulkPipelinePlan).
  bool warpSpecialize = true;
  // persistent(): at most as many blocks as fit on the GPU at once, each running the body for
  // one block index after another (lower/PersistentTiles).
  bool persistent = false;
  llvm::SMRange persistentRange;
  // Whether a persistent kernel's tiles may run overlapped: in its warp-specialized variant
  // the producer loads the next tile's stages while the consumers still finish the last one,
  // so every buffer lives through the whole body (ir/AccessAnalysis' topLevelLifetimes) and
  // none shares bytes. Where no such variant can exist, infer/StoreStaging clears it: tiles
  // then run one after another, and buffers share bytes as in any kernel, SyncInsertion
  // ordering each tile's accesses after the last one's as in any loop.
  bool tilesOverlap = true;
  // What the passes ask about the GPU (target/TargetInfo.h); set by buildGraph, never null
  // after it. Declared here only: ir/ sits beside target/, not above it.
  const target::TargetInfo *target = nullptr;
  // Shared-memory plan (SharedMemoryPlanner): total bytes, and where the scratch area of
  // cross-warp reductions starts: `scratchSlots` slots of `scratchSlotBytes` each (two when
  // they fit, so that consecutive reductions alternate and need one barrier each, not three).
  int64_t sharedBytes = 0;
  int64_t scratchOffset = 0;
  int64_t scratchSlotBytes = 0;
  int scratchSlots = 0;
  // Whether the kernel's gemms take the target's warpgroup MMA: decided once by ops/Gemm.cpp
  // from what graph building fixed (shapes, dtypes, scopes, threads), when the first gemm's
  // layout is inferred, and remembered so that the others do not decide again.
  mutable std::optional<bool> gemmsOnWarpgroupMma;
  // Likewise which of the target's warp atoms (its index in TargetInfo::warpMmas: gfx9's 32x32
  // or 16x16 MFMA) every gemm of the kernel takes.
  mutable std::optional<size_t> gemmsWarpAtom;

  Buffer *bufferOf(const Decl *d) const { return byDecl.lookup(d); }
  Buffer *addBuffer(const BufferLikeDecl *d);
  // Expressions the graph builder made (the byte origins `lo / 2` of packed operands), owned
  // here because the AST is complete by then.
  std::vector<std::unique_ptr<Expr>> madeExprs;
  // Visits every node, depth first, in program order.
  template <typename F> void walk(F &&f) { walkNodes(body, f); }
  template <typename F> void walk(F &&f) const {
    auto visit = [&f](const Node &n) { f(n); }; // a const graph hands out const nodes
    walkNodes(body, visit);
  }

private:
  template <typename F> static void walkNodes(const std::vector<std::unique_ptr<Node>> &nodes, F &f) {
    for (auto &n : nodes) {
      f(*n);
      walkNodes(n->body, f);
      walkNodes(n->elseBody, f);
    }
  }
  llvm::DenseMap<const Decl *, Buffer *> byDecl;
};

// Builds the FTG of a kernel that passed Sema. Constructs the back end cannot lower yet are
// reported as "not supported yet" errors at the construct; returns null then.
std::unique_ptr<Graph> buildGraph(const KernelDecl &kernel, DiagnosticEngine &diags,
                                  const target::TargetInfo &target);

// Textual dumps: `--emit=ftg` (structure) and `--emit=inferred` (with layouts, bindings,
// stages and instructions).
void printGraph(const Graph &g, llvm::raw_ostream &os, bool withInference);

// Structural invariants; returns false and reports through `diags` on violation.
bool verifyGraph(const Graph &g, llvm::raw_ostream &errors);

} // namespace tlc::ftg
