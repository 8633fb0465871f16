// The state of lowering one kernel, and the builder API the tile operators' lowerings use
// (compiler/ops/, through ir/TileOp.h). Split over KernelLowering.cpp (kernel, structure,
// loops, branches, pipelined loops left for PipelineExpansion), ScalarExpr.cpp (scalar
// expressions and statements), Parallel.cpp and Regions.cpp (region addressing). The passes
// that run on the result (PipelineExpansion.cpp, SyncInsertion.cpp) see only the loop IR.
#pragma once

#include "lower/Lower.h"
#include "infer/BulkPipelinePlan.h"
#include "lower/Naming.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

namespace tlc::lower {

// The kernel's thread index within its block (every lowering addresses threads by it).
inline const std::string kThreadIndex = generatedName("tid");

// The kernel parameter carrying stride `d` of tensor `tensor` (its source name).
inline std::string strideName(llvm::StringRef tensor, size_t d) {
  return generatedName(tensor + "_stride" + llvm::Twine(d));
}

class KernelLowering {
public:
  KernelLowering(ftg::Graph &g, DiagnosticEngine &diags, std::string sourceName);
  std::unique_ptr<Kernel> run(llvm::raw_ostream *printAfterAll);

  // ---- building (statements go to the current list, from the current source line)
  Stmt &add(StmtPtr s) {
    if (!s->line)
      s->line = currentLine;
    cur->push_back(std::move(s));
    return *cur->back();
  }
  // Runs `f` with the source line of `loc` (node `n`'s statement) as the line of the
  // statements it adds.
  void atLine(llvm::SMLoc loc, const std::function<void()> &f);
  void atLineOf(const ftg::Node &n, const std::function<void()> &f) {
    atLine(n.stmt ? n.stmt->getRange().Start : llvm::SMLoc(), f);
  }
  // Runs `f` with `list` as the current list.
  void within(StmtList &list, const std::function<void()> &f) {
    StmtList *saved = cur;
    cur = &list;
    f();
    cur = saved;
  }
  // Adds `s` and builds its body with `f`.
  Stmt &nest(StmtPtr s, const std::function<void()> &f) {
    Stmt &r = add(std::move(s));
    within(r.body, f);
    return r;
  }
  Stmt &scope(const std::function<void()> &f) { return nest(std::make_unique<Stmt>(StmtKind::Scope), f); }
  // The statements of tile-level node `n`, with its access sets, as one unit for barriers.
  Stmt &tileOp(const ftg::Node &n, const std::function<void()> &f);
  // `// what (file:line)` naming the node's source line.
  void sourceComment(const ftg::Node &n, const std::string &what);
  // `stmt` under `if (cond)` (a bounds predicate), or alone when cond is empty.
  void guarded(const std::string &cond, StmtPtr stmt);
  // `aligned()` where the rows of every tensor in `tensors` (global buffers the aligned path
  // accesses with 16-byte vectors) are 16-byte aligned, `otherwise()` in the else. The
  // kernel's aligned instantiation has them all aligned; its ordinary one decides per tensor
  // at run time, from the launcher's bit mask (alignedRowsParam()), so that one tensor with odd
  // rows does not put the others on scalar copies. No tensors: `if constexpr (kAligned)`.
  void ifAligned(llvm::ArrayRef<const ftg::Buffer *> tensors, const std::function<void()> &aligned,
                 const std::function<void()> &otherwise);
  // Threads take the `chunks` accesses of a tile in turn. With a whole number per thread, a
  // loop over this thread's share, unrolled fully when it has at most 8 (or `unrollFully`),
  // else by `partialUnroll`: every address becomes tid-based plus constants; otherwise a
  // thread-strided loop (unrolled by `partialUnroll`, or fully). `body(c, it)` runs inside with the access's index bound to `c`
  // and `it` the share's loop variable (empty in the strided loop).
  void forEachChunk(int64_t chunks, bool unrollFully,
                    const std::function<void(const std::string &c, const std::string &it)> &body,
                    int partialUnroll = 4);
  // A fresh local: generatedName(stem + a number unique in the kernel); stems have no '_'.
  std::string fresh(const std::string &stem) { return generatedName(stem + std::to_string(tempCounter++)); }

  // The buffers read by the expressions `f` lowers, for the access sets of the statements
  // built from them (every element read goes through expr(), which logs it).
  std::vector<Access> readsOf(const std::function<void()> &f);
  // `s` with the given access sets.
  static Stmt &accessing(Stmt &s, std::vector<Access> reads, std::vector<Access> writes) {
    s.reads = std::move(reads);
    s.writes = std::move(writes);
    return s;
  }

  // ---- scalar expressions (ScalarExpr.cpp)
  std::string expr(const Expr *e);
  std::string exprAs(const Expr *e, DType t); // converted to t
  // print(...) as a printf call (without the thread it is guarded to: lowerNode's Extern case).
  std::string printCall(const CallExpr *c);
  std::string globalOffset(const ftg::Buffer &b, const std::vector<std::string> &idx) const;
  std::string sharedElement(const ftg::Buffer &b, const std::string &row, const std::string &col);
  std::string dimExpr(const ftg::Buffer &b, size_t d); // tensor extent as C++
  std::string elementRef(const IndexExpr *ix);
  // `a op b` on scalars of type `t`; integer `/` and `%` floor unless `nonNegative` says both
  // operands are >= 0, where C's operators agree and are cheaper.
  std::string arithmetic(BinaryOp op, DType t, const std::string &a, const std::string &b,
                         bool nonNegative);
  // True when `e` is >= 0 at run time: constants, block indices, shape symbols, loop
  // variables from a non-negative start, and what +, *, /, %, >>, &, max, ... make of them.
  // Memoized, so that chains of lets stay linear.
  bool provablyNonNegative(const Expr *e);
  // Nodes of `e` with every let it names expanded, saturating past kMaxConstLetExpansion; a
  // let past it is emitted without `const` (ScalarExpr.cpp says why). Memoized.
  static constexpr int64_t kMaxConstLetExpansion = 4096;
  int64_t letExpansion(const Expr *e);
  llvm::DenseMap<const Expr *, int64_t> letExpansionMemo;
  void scalarStmt(const tlc::Stmt *s); // at s's source line:
  void scalarStmtHere(const tlc::Stmt *s);

  // ---- structure
  void lowerNodes(const std::vector<std::unique_ptr<ftg::Node>> &nodes);
  // Siblings in program order; a wgmma gemm's wait may move past the ones that follow it
  // (infer::deferredGemmWaits).
  void lowerSiblings(const std::vector<const ftg::Node *> &siblings);
  // The C++ condition producer `c` is prefetched under (its prefetch guard, negated for an
  // else branch), for the iteration the prefetch loads: the loop variable is bound to it there.
  std::string prefetchCondition(const ftg::Node &c);
  // Runs `issue` (a producer's prefetch) under the producer's prefetch guard, if it has one.
  void guardedPrefetch(const ftg::Node &c, const std::function<void()> &issue);
  void lowerNode(const ftg::Node &n); // at n's source line:
  void lowerNodeHere(const ftg::Node &n);
  void lowerLoop(const ftg::Node &n);
  void lowerIf(const ftg::Node &n);
  void lowerLastBlock(const ftg::Node &n); // `if last_block(...)` (LastBlock.cpp)
  void lowerParallel(const ftg::Node &n);      // Parallel.cpp
  // Its body over the elements (the statements of the tile op lowerParallel makes).
  void parallelElements(const ftg::Node &n);
  // ---- comparisons the same at every element of a parallel loop's tile (TileConditions.cpp)
  struct TileVersions {
    struct Condition {
      std::string name;          // the block-uniform bool that holds its test
      std::optional<bool> value; // set: its value wherever the version runs
      unsigned line = 0;
    };
    struct Test {
      std::string name, value;
    };
    std::vector<Test> tests;                              // `const bool`s before the loop
    llvm::DenseMap<const Expr *, Condition> conditions; // comparisons in selects' and ifs' conditions
    // Every comparison decided for the whole tile: the version without per-element tests
    // ("true": decided at compile time, the only version).
    std::string taken;
    std::vector<unsigned> lines; // the comparisons' source lines, ascending
  };
  // The comparisons in the conditions of parallel loop `n`'s selects and ifs that a test before
  // the loop can decide for its whole tile (linear in the loop's variables, the rest
  // block-uniform), or nothing when there are none.
  std::optional<TileVersions> tileVersions(const ftg::Node &n);
  // Inside the version of a parallel loop without per-element tests: comparison `cmp`'s value,
  // "true"/"false" or the name of its block-uniform bool; otherwise nothing.
  std::optional<std::string> uniformComparison(const Expr *cmp);
  // A C++ test, evaluated before parallel loop `n`, that `cond` is `value` at every element of
  // its tile ("true"/"false" when known now), or nothing.
  std::optional<std::string> conditionEverywhere(const ftg::Node &n, const Expr *cond, bool value);
  struct TileTestBuilder;
  // ---- a wgmma accumulator's fill that is 0 on whole tiles, folded into the gemm after it
  // (AccumulatorInit.cpp): the gemm -> the name of its block-uniform overwrite flag.
  llvm::SmallDenseMap<const ftg::Node *, std::string, 2> overwriteFlags;
  // If `siblings[i]` is such a fill, lowers it under its test and records the flag.
  bool lowerAccumulatorInit(const std::vector<const ftg::Node *> &siblings, size_t i);
  // A gathered copy (GatherCopy.cpp): cp.async per element or vector; `prefetch`: issued by its
  // pipeline (which commits and waits), otherwise committed and waited for at once.
  void lowerGather(const ftg::Node &n, bool prefetch);
  void lowerPipelined(const ftg::Node &n);
  // The register-staged form (gfx9): each producer lowered as a load into registers and a
  // store from them, for the prologue and the steady state (PipelineExpansion.cpp).
  void lowerRegisterStaged(const ftg::Node &n, const std::vector<const ftg::Node *> &producers);
  std::vector<bool> stagedThroughRegisters(const ftg::Node &n, const std::vector<const ftg::Node *> &producers,
                                           bool consumersInFlight) const;
  // The per-thread array a tile staged through registers passes through (either form), its
  // name and its declaration (another name: a temporary array of the same kind).
  static std::string stagingArrayName(const ftg::Buffer &tile);
  static StmtPtr stagingArray(const ftg::Buffer &tile, int64_t elements, const std::string &name = "");
  // Registers per thread the kernel's estimate (infer::estimateRegisters) leaves out, kept
  // free of staged element copies (stagedThroughRegisters).
  static constexpr int64_t kStagingMargin = 48;
  // The warp-specialized variant (BulkPipeline.cpp): the loop lowered with bulk copies by the
  // producer threads.
  void lowerBulkPipelined(const ftg::Node &n);
  // The kernel's body for the variant: fills and copies before the loop that write memory run
  // on the consumers only.
  void lowerBulkBody();
  // Bulk tensor copies between a global region and a shared tile in wgmma panels: the tensor
  // map (added to the kernel's parameters) and, per panel, its element offset in the tile and
  // its coordinates in the tensor (innermost first, each after ", "). A comment names them.
  struct BulkPanel {
    int64_t offset = 0;
    std::string coords;
  };
  struct BulkPanels {
    std::string map;
    int rank = 2;
    std::vector<BulkPanel> panels;
  };
  std::optional<BulkPanels> bulkPanels(const ftg::Node &c, const ftg::Operand &global, const ftg::Buffer &tile);
  // Load copy `c` as one bulk tensor copy per panel into `tile` (its destination, or a stage of
  // it), completing on mbarrier `barrier`; false (reported) when it has no bulk form.
  bool addBulkLoads(const ftg::Node &c, const std::string &tile, const std::string &barrier);
  // Whether copy `c` (a shared tile in wgmma panels to a global region that a tensor map can
  // describe) goes out as bulk tensor stores: in the warp-specialized variant, whose launcher
  // has encoded every tensor map before choosing it.
  bool bulkStorable(const ftg::Node &c) const;
  // Copy `c` as one bulk tensor store per panel, issued by one thread.
  void lowerBulkStore(const ftg::Node &c, const std::function<void()> &ordinary);
  // Whether atomic_add `c` from a shared tile can be one bulk tensor reduction per panel
  // (cp.reduce.async.bulk.tensor .add) in the warp-specialized variant: an f32, f16, bf16, i32
  // or u32 tile in a layout a tensor map describes, into a tensor that no other node of the
  // kernel reads or writes (its adds complete asynchronously). lowerBulkStore issues it.
  bool bulkReducible(const ftg::Node &c) const;
  // The drains of the accumulators of gemms left in flight, in the pipeline's part 3.
  void prefetchLets(const ftg::Node &loop);
  void drainAfter(Stmt &pipeline, const std::vector<const ftg::Node *> &inFlight);
  // The consumers of pipelined loop `n` into part 2 of `p` (reading the producers' buffers at
  // stage slot 2), the drains, and `p` added.
  void finishPipeline(const ftg::Node &n, StmtPtr p, const std::vector<const ftg::Node *> &producers,
                      const std::vector<const ftg::Node *> &inFlight);
  // While the bulk variant is lowered: its plan (its pipelined loop, producer threads,
  // register split); empty otherwise.
  infer::BulkPipelinePlan bulkPlan;
  // ... and the tensors its producer loads with bulk copies: the launcher takes the variant
  // only when their rows are aligned (their tensor maps encode). Other tensors are decided per
  // tensor there too (ifAligned), and a bulk store falls back to an ordinary copy when its
  // tensor's rows are not aligned.
  std::vector<const ftg::Buffer *> bulkLoaded;
  // Tensors whose rows the code being lowered knows are not aligned (the fallback of a bulk
  // store): ifAligned takes the scalar path alone.
  std::vector<const ftg::Buffer *> knownUnaligned;

  void unsupported(llvm::SMRange r, const std::string &what, const std::string &hint = "");
  // Reports (and returns false) when tl::atomic_add has no overload for `t`.
  bool checkAtomicType(llvm::SMRange r, DType t);
  // The loop IR buffer of `b`, with the stage the current pipeline step accesses.
  Access access(const ftg::Buffer *b) const;
  // The reduction scratch slot the next cross-warp combine uses (the slots alternate): its
  // access and its first f32 element in `tl_reduce_scratch`.
  struct ScratchSlot {
    Access access;
    int64_t firstElement = 0;
  };
  ScratchSlot nextScratchSlot();
  // The tensor's index in Kernel::vectorTensors (its bit of alignedRowsParam()), added if new.
  size_t noteVectorTensor(const ftg::Buffer *b);

  ftg::Graph &g;
  const KernelDecl &k;
  DiagnosticEngine &diags;
  std::string sourceName;
  unsigned currentLine = 0; // the .tl line of the node being lowered (Stmt::line)
  bool ok = true;
  std::unique_ptr<Kernel> out;
  StmtList *cur = nullptr;
  llvm::DenseMap<const ftg::Buffer *, Buffer *> bufferOf;

  // Multi-buffered shared buffers inside a pipelined loop: the stage index and what it
  // denotes, both a placeholder slot that PipelineExpansion.cpp fills in.
  struct Staging {
    std::string index;
    StageRef ref;
  };
  llvm::DenseMap<const ftg::Buffer *, Staging> stageOf;
  // While a register-staged pipeline's producers are lowered (gfx9): which half of each copy
  // to emit, and the per-thread array the tile passes through (the copy lowering names the
  // elements it needs in `elements`, for the array's declaration).
  //
  // In a pipeline of asynchronous copies (NVIDIA), `elementsOnly`: only the element path of a
  // copy from global into shared memory goes through the array (its rows are not aligned for
  // cp.async); the vector path stays cp.async, issued by the load half, and another copy is
  // issued whole by the load half.
  struct RegisterStaging {
    enum Half { Load, Store } half = Load;
    std::string array;
    int64_t elements = 0;
    bool elementsOnly = false;
  };
  std::optional<RegisterStaging> registerStaging;

  // Loop variables whose loop starts at a non-negative value (registered as loops are
  // lowered, before their bodies).
  llvm::SmallPtrSet<const Decl *, 16> nonNegativeVars;
  llvm::DenseMap<const Expr *, bool> nonNegativeMemo;
  // Inside a parallel loop driven by a fragment: its register variable.
  const ftg::Node *parallelNode = nullptr;
  std::string parallelReg;
  // Shared reads of the parallel loop being lowered that a thread makes as vectors: each
  // IndexExpr's element of the array its vector went into (Parallel.cpp).
  llvm::DenseMap<const IndexExpr *, std::string> vectorReads;
  // While a tile test is emitted (TileConditions.cpp): the loop's variables at a corner of
  // its box, and its lets, which are inlined (the test is evaluated before the loop).
  llvm::DenseMap<const Decl *, std::string> nameOverrides;
  const llvm::SmallPtrSet<const Decl *, 8> *inlinedLets = nullptr;
  // While the version of a parallel loop without per-element tests is emitted.
  const TileVersions *uniformConditions = nullptr;
  unsigned tempCounter = 0;
  unsigned pipelineCounter = 0; // numbers the stage slots of pipelined loops
  std::vector<Buffer *> scratchSlots; // the reduction scratch's slots (implicit buffers)
  unsigned scratchUses = 0;
  // Gemms of the pipelined loop being lowered whose wgmma group stays in flight into the next
  // iteration (lowerPipelined decides; ops/Gemm.cpp prints the deferred wait).
  llvm::SmallDenseMap<const ftg::Node *, int, 2> gemmsInFlight; // gemm -> groups pending on its return
  // Fragments of a gemm with `threads = T` live on threads [0, T) (FragmentLayout::threads
  // below the block's): the T of the fragments tile-level node `n` touches, 0 when it runs on
  // the whole block. A node that touches fragments of two different subsets is an error.
  int threadSubset(const ftg::Node &n);
  // `f`'s statements under `if (tid < threads)`, a unit for barrier placement (SyncInsertion
  // puts none inside; a statement that needs one, such as a reduction across warps, is an error).
  // Within one list of siblings, consecutive nodes on the same threads share one such `if`
  // (ptxas schedules instructions within a basic block: a guard per node cost MLA 5-10%), up
  // to a node that writes shared memory (a barrier may have to precede it: it starts a guard
  // of its own) or reads what the guard wrote.
  struct SubsetGroup {
    Stmt *guard = nullptr;
    int threads = 0;
    std::vector<const ftg::Buffer *> sharedWrites;
  };
  void onThreadSubset(const ftg::Node &n, int threads, const std::function<void()> &f,
                      SubsetGroup *group = nullptr);
  bool inThreadSubset = false;
  std::vector<std::vector<Access> *> readLogs; // the open readsOf() calls, innermost last

private:
  bool computeNonNegative(const Expr *e);
};

// `s` with the given access sets.
inline StmtPtr withAccess(StmtPtr s, std::vector<Access> reads, std::vector<Access> writes) {
  KernelLowering::accessing(*s, std::move(reads), std::move(writes));
  return s;
}

// A tensor map's element type (f16 or bf16) and the swizzle of a shared tile in wgmma panels
// (one panel per box row: 128, 64 or 32 bytes), for every bulk copy (BulkPipeline.cpp).
std::string tensorMapDataType(DType t);
std::string tensorMapSwizzle(const SharedLayout &panels);

// Region addressing (Regions.cpp), shared by the operators that move or write regions: how a
// region's elements map to buffer coordinates, element references and bounds predicates.
struct TileDims {
  std::vector<int64_t> extents;    // the tile, outermost first (unit dims dropped)
  std::vector<std::string> origin; // per buffer dim
  std::vector<int> tileDim;        // per buffer dim: index into extents, -1 for a point
  std::vector<bool> mayBeNegative; // per buffer dim: the origin is not provably >= 0
  bool ok = true;
  std::vector<std::string> indices(const std::vector<std::string> &coords) const;
};
TileDims tileDims(KernelLowering &L, const ftg::Operand &op,
                  const std::vector<std::optional<int64_t>> &tile);
// Element access of a non-fragment operand at buffer indices `idx`.
std::string elementAt(KernelLowering &L, const ftg::Buffer &b, const std::vector<std::string> &idx);
// The value of element `idx` of a packed (i4/u4/f4e2m1) tensor or shared buffer, its innermost
// index counting 4-bit elements: the nibble of byte idx.back() / 2 (ftg::Buffer::packed), as
// the i8 (i4, sign-extended), u8 (u4) or f16 (f4e2m1) that Sema types an element read.
std::string packedElementAt(KernelLowering &L, const ftg::Buffer &b, std::vector<std::string> idx);
// Element `ref` of `b` (elementAt) as C++ type `type`, or zero where `valid` (a bounds
// predicate; empty: always) fails. From global memory a predicated load without a branch
// (tl::load_or_zero), so that a thread's element loads are in flight together.
std::string elementOrZero(const ftg::Buffer &b, const std::string &ref, const std::string &valid,
                          const std::string &type);
// Bounds predicate of a global access at `idx` = `t.indices(...)` (empty when always in
// bounds): below each extent, and >= 0 where the origin may be negative (a halo, padding).
std::string inBounds(KernelLowering &L, const ftg::Buffer &b, const std::vector<std::string> &idx,
                     const TileDims &t);

} // namespace tlc::lower
