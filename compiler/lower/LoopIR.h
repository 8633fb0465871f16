// The loop IR: the thread-level program of one kernel, between the tile-level FTG (ir/FTG.h)
// and the CUDA text (codegen/KernelPrinter.h). Lowering (lower/Lower.h) decides here what
// each thread does: loops over threads, registers and pipeline stages, async copies and their
// group waits, barriers, tensor-core calls and warp shuffles. The CUDA printer only spells
// these decisions; `tlc --emit=loops` shows them.
//
// Every statement records the buffers it reads and writes (for a tile operator: its exact
// access set, index reads included, from ir/AccessAnalysis.h), so that passes such as
// SyncInsertion reason about the IR instead of about the printing order.
//
// Scalar expressions are still C++ text produced by lower/ScalarExpr.cpp (the intermediate
// step of issue 10: the structure is IR, expression trees come next).
#pragma once

#include "lower/Launch.h"
#include "target/PipelineStyle.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tlc::lower {

enum class MemScope { Global, Shared, Fragment, Local };

// A buffer as thread-level code sees it.
struct Buffer {
  std::string name;       // C++ spelling (lower/Naming.h)
  std::string sourceName; // as written in the .tl file (barrier reasons, dumps)
  MemScope scope = MemScope::Global;
  std::string elemType; // C++ element type
  std::string dtype;    // TileLang dtype ("f16"), for comments
  // Shared: bytes [offset, offset + bytes * stages) of the block's dynamic shared memory.
  int64_t offset = -1, bytes = 0;
  int stages = 1;
  // Elements per thread: registers of a fragment, elements of a local array.
  int64_t elements = 0;
  int align = 0;      // a fragment's alignas (0: its element type's)
  std::string layout; // layout description (declaration comment); empty: not declared
  // Shared bytes the generated code addresses through a name of its own (a slot of the
  // reduction scratch, `tl_reduce_scratch`): tracked for barrier placement, not declared.
  bool implicit = false;
  bool overlaps(const Buffer &o) const;
};

// Which stage of a multi-buffered shared buffer an access touches: stage (var + offset) % stages.
// Two accesses to the same buffer at different offsets of the same loop variable touch
// different bytes.
struct StageRef {
  std::string var;
  int64_t offset = 0;
  int stages = 1;
};

struct Access {
  const Buffer *buffer = nullptr;
  std::optional<StageRef> stage;
  // True when the two accesses may touch the same bytes.
  bool mayAlias(const Access &o) const;
};

enum class StmtKind {
  Seq,         // statements in order
  Scope,       // `{ ... }`
  TileOp,      // the statements of one tile operator: one unit for barrier placement
  For,
  If,
  Let,         // an immutable scalar
  Decl,        // a per-thread array
  Store,       // target = value
  AtomicAdd,   // tl::atomic_add(&target, value)
  Eval,        // a call for its effect (tl::swizzle_blocks, call_extern)
  AsyncCopy,   // cp.async of `bytes`, zero-filled when !valid
  AsyncCommit, // close the current cp.async group
  AsyncWait,   // wait until at most `count` groups are in flight
  VectorCopy,  // one `bytes`-wide load and store
  Mma,         // a warp-level tensor-core gemm on shared/register tiles (tl::gemm_ss/_rs)
  Shuffle,     // target = combine over `width` lanes (tl::detail::warp_combine)
  Barrier,     // __syncthreads (or, barrierThreads > 0, bar.sync barrierId over those threads)
  NamedBarrier, // the kernel's barrier_arrive / barrier_wait: bar.arrive / bar.sync `value`
  Comment,
  // A pipelined loop before PipelineExpansion: body = [the copies issued for one iteration
  // (stage slot `slots[0]`), the same for another iteration (`slots[1]`), the consumers
  // (`slots[2]`)]; var = the loop variable, hi = the trip count, count = the stages.
  Pipeline,
};
llvm::StringRef stmtKindName(StmtKind k);

// How the iterations of a loop are distributed, which decides where barriers may go.
enum class ForRole {
  Tile,      // every thread runs every iteration (a loop of the program): barriers inside
  Stages,    // the pipeline prologue over stages: every thread, one unit for barriers
  Threads,   // threads stride over elements: never holds a barrier
  Registers, // each thread over its own registers or elements: never holds a barrier
};

// How an `if` is spelled (readability only; `uniform` says whether every thread of the block
// takes the same branch, which barriers inside need).
enum class IfStyle { Braced, NextLine, SameLine };

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

struct Stmt {
  explicit Stmt(StmtKind k) : kind(k) {}
  StmtKind kind;
  StmtList body, elseBody;
  std::vector<Access> reads, writes;
  // The line of the kernel's .tl file this statement comes from, for the CUDA printer's
  // #line directives; 0: that of the statement around it (none at the top of a kernel body:
  // code no source line stands for, such as a barrier between two loops).
  unsigned line = 0;

  std::string text; // Comment, Eval, Barrier (its reason), TileOp (the operator's name)
  bool proxyFence = false; // Barrier: preceded by fence.proxy.async (ProxyFences)
  bool asyncProxyRead = false; // reads shared memory through the async proxy (bulk tensor stores)
  int barrierThreads = 0;  // Barrier: a named barrier over this many threads (0: the block)
  int barrierId = 0;       // ... its id; NamedBarrier: `value` holds the id expression
  // Barrier split between the threads below `splitThreads` (the statements on part of the
  // threads before and after it, Stmt::threadSubset) and the others (SplitBarriers.cpp): each
  // side waits for the block at named barrier `splitId` (over all of them: `barrierThreads`,
  // else the block) or only arrives there; a subset that does not wait for the block but must
  // see its own writes first waits for itself at barrier `subsetId` (0: it does not).
  int splitThreads = 0;
  bool subsetWaits = true, restWaits = true;
  int splitId = 0, subsetId = 0;
  bool arriveOnly = false; // NamedBarrier: barrier_arrive (bar.arrive), else barrier_wait

  // For: `for (int var = lo; var < hi; step.empty() ? ++var : var += step)`.
  std::string var, lo, hi, step;
  ForRole role = ForRole::Tile;
  int unroll = -1;      // -1: no pragma, 0: `#pragma unroll`, n: `#pragma unroll n`
  bool compact = false; // For/If printed on one line with their single leaf statement

  // If
  std::string cond;
  IfStyle style = IfStyle::Braced;
  bool uniform = true;
  bool isConstexpr = false;
  // A choice between two lowerings of the same accesses (ifAligned: vectors or scalars, per
  // the launch's alignment): barriers treat it as one unit, like a constexpr if.
  bool variants = false;
  // TileOp: the load half of a copy staged through registers in a cp.async pipeline
  // (KernelLowering::RegisterStaging::elementsOnly), whose cp.async path writes the stage that
  // the store half writes after the consumers. SyncInsertion takes the store half's write for
  // both: the two write the same values, and only one of them runs.
  bool writesRepeated = false;
  bool elseIf = false; // the else branch is a single If written as `else if`
  bool warpSpecialized = false; // the producer warpgroup's branch (count: the consumer threads)
  // The statements of a tile operator over fragments on the block's first threads only (a
  // gemm with `threads = T`): `if (tid < T)` (KernelLowering::onThreadSubset).
  bool threadSubset = false;

  // Let: `[[maybe_unused]] const type name = value;  // note`; Decl: `alignas type name[count];`
  // Barrier with a name: it also ORs the bool `value` over the threads it synchronizes and
  // defines `const bool name` to the result (bar.red.or; __syncthreads_or): last_block's vote.
  // AtomicAdd: count > 1 adds `count` consecutive f32 elements from target, `value` listing them.
  std::string type, name, value, note;
  bool maybeUnused = false, isConstexprLet = false;
  int64_t count = 0;
  int align = 0;

  // Store, AtomicAdd, Shuffle: target; VectorCopy/AsyncCopy: dst and src addresses.
  std::string target, dst, src, srcBase, valid;
  int bytes = 0;

  // Mma
  int64_t m = 0, n = 0, k = 0;
  int warpsM = 0, warpsN = 0;
  bool transA = false, transB = false, aInRegisters = false, bInRegisters = false;
  bool warpgroup = false; // wgmma over warpsM x warpsN warpgroups, instrN columns per instruction
  int instrN = 0;
  int mfmaSize = 0; // gfx9: the MFMA tl::gemm issues, 32 (32x32x8) or 16 (16x16x16); 0 elsewhere
  int bKRun = 0;    // B in registers in K runs of this many columns per thread (tl::gemm_sr_runs)
  bool bRunsTransposed = false; // ... computed transposed (tl::gemm_sr_runs_t)
  int bKSplit = 1;  // ... over this many warp groups, each summing a slice of K
  std::string bScales; // ... with B unscaled: {{pass 0's scale per K chunk}, {pass 1's}} (ScaleFolding)
  std::string a, b, c;
  // mma.sync operands read through an offset functor (a C++ name; "" for the default,
  // tl::SwizzledLayout read by ldmatrix): annotated shared layouts.
  std::string aOffset, bOffset;

  // Shuffle
  std::string op;
  int width = 0;
  int laneStride = 1; // Shuffle: the lanes combined are lane ^ k * laneStride, k < width

  // Pipeline: placeholders of the stage index in the issued copies and the consumers, in
  // text and in StageRef::var, that PipelineExpansion replaces. inFlight: a consumer leaves
  // an asynchronous group (wgmma) in flight into the next iteration.
  std::vector<std::string> slots;
  bool inFlight = false;
  // A warp-specialized pipeline (bulk copies by a producer warpgroup onto mbarrier rings):
  // the consumer threads (those below), the bytes one iteration's copies move, and where the
  // rings start in shared memory.
  bool bulk = false;
  // A register-staged pipeline (gfx9, PipelineExpansion.cpp): body = [the prologue (loads and
  // stores of iteration 0, stores at slots[0]), the loads of iteration k + 1, the consumers
  // (slots[2]), what follows, the stores of iteration k + 1 (slots[1]), the per-thread arrays
  // the tiles pass through]; count = the LDS buffers.
  bool registerStaged = false;
  int consumers = 0, producers = 0;
  int producerRegisters = 0, consumerRegisters = 0; // setmaxnreg's counts; 0: not moved
  int64_t txBytes = 0, barrierOffset = 0;
  // Lead copies (infer::BulkPipelinePlan::leads): their bulk copies, issued by the producer
  // before the loop onto a barrier of their own (`leadBarrier`, null: none), and their bytes.
  StmtPtr leads;
  int64_t leadBytes = 0;
  // Mma: wgmma groups left pending when the call returns (0: it waits for its own).
  int pending = 0;
  // Mma on wgmma: a block-uniform C++ bool under which the gemm ignores the accumulator's
  // registers and overwrites them (clear_accum: "true"); empty: it accumulates.
  std::string overwrite;
};

// Statement factories.
StmtPtr makeComment(std::string text);
StmtPtr makeBarrier(std::string why);
StmtPtr makeLet(std::string type, std::string name, std::string value, bool maybeUnused = true);
StmtPtr makeStore(std::string target, std::string value);
StmtPtr makeEval(std::string call);
StmtPtr makeFor(ForRole role, std::string var, std::string lo, std::string hi, std::string step = "",
                int unroll = -1);
// `for (int var = lo; var < hi; ++var) body;` on one line: each thread over its registers.
StmtPtr makeCompactFor(std::string var, std::string lo, std::string hi, StmtPtr body, int unroll = 0);
StmtPtr makeIf(std::string cond, IfStyle style = IfStyle::Braced, bool uniform = true);

struct Param {
  std::string type, name, host; // C++ type, name, the launcher's argument
};

struct Kernel {
  std::string symbol;      // the compiled instance (`gemm`, `gemm_v1`)
  std::string sourceName;  // its .tl file, as named on the command line (Stmt::line's file)
  std::string name;        // the __global__ function
  std::string threadIndex; // the local holding threadIdx.x
  int threads = 128;
  int64_t sharedBytes = 0;
  int64_t scratchOffset = 0; // where cross-warp reduction scratch starts (sharedBytes: none)
  // How PipelineExpansion expands pipelined loops: the target's style.
  target::PipelineStyle pipelineStyle = target::PipelineStyle::AsyncGroups;
  std::vector<Param> params;
  std::vector<std::string> blockIndices;                       // C++ names, x, y, z
  std::vector<std::pair<std::string, std::string>> constants;  // shape symbols bound by -D
  std::vector<std::unique_ptr<Buffer>> buffers;
  // Tensors (source names) the aligned instantiation accesses with vectors.
  std::vector<std::string> vectorTensors;
  Launch launch; // the host side's view of the kernel
  StmtList body;
  // The warp-specialized variant (the kAligned instantiation on sm_90a when every producer of
  // its pipelined loop is a bulk tensor copy): its body, its block size (the consumers and a
  // producer warpgroup), and the tensor maps the launcher builds for its copies.
  StmtList bulkBody;
  int bulkThreads = 0;
  int bulkMinBlocks = 1; // __launch_bounds__'s blocks per SM for it
  int consumerBarrier = 1; // the named barrier its consumers synchronize on
  int64_t bulkSharedBytes = 0; // its shared memory: the kernel's, then the mbarrier rings
  // The aligned-rows bits of the tensors its producer loads, which it accesses as aligned
  // wherever it copies them (KernelLowering::ifAligned): the launcher requires them.
  uint64_t bulkRowsMask = 0;
  struct TensorMap {
    std::string param;      // the kernel parameter (const __grid_constant__ CUtensorMap)
    std::string tensor;     // the launcher's TensorView
    std::string dataType;   // CU_TENSOR_MAP_DATA_TYPE_...
    int rank = 2;
    std::vector<int64_t> box; // per tensor dimension, outermost first (1 where a copy is a point)
    std::string swizzle;    // CU_TENSOR_MAP_SWIZZLE_...
    // Im2col mode (cuTensorMapEncodeIm2col) of a 4-d NHWC tensor: a copy moves box[0] pixels
    // (pixelsPerColumn) of box[1] channels (channelsPerPixel) from the anchors of the box
    // [lower, dim - 1 + upper] in H and W (inclusive), `stride` apart in both.
    bool im2col = false;
    // A bulk store's map: encoded only when bit alignedRowsBit of the kernel's aligned-rows
    // mask is set (the kernel stores otherwise), else left zero; -1: a load's, which the
    // variant needs.
    int alignedRowsBit = -1;
    int64_t lowerH = 0, lowerW = 0, upperH = 0, upperW = 0, stride = 1;
  };
  std::vector<TensorMap> tensorMaps;
  // persistent(): the launcher starts as many blocks as are resident at once and each runs
  // the body for one block index after another (lower/PersistentTiles).
  struct Persistent {
    bool on = false;
    std::vector<std::string> grid; // device expressions of the grid's extents, x first
    int swizzlePanel = 0;          // swizzle_blocks' panel; 0: row-major order of the tiles
  } persistent;
  bool hasBulk() const { return !bulkBody.empty(); }
};

// Calls `f` on every text field of `s` (not its children): passes that rename or substitute.
void forEachText(Stmt &s, const std::function<void(std::string &)> &f);

// Whether `pred` holds for `s` or a statement nested in it (bodies and else branches), or for
// a statement of `list` or one nested in it.
bool anyStmt(const Stmt &s, const std::function<bool(const Stmt &)> &pred);
bool anyStmt(const StmtList &list, const std::function<bool(const Stmt &)> &pred);

// Structural invariants: barriers only where every thread arrives (under uniform loops and
// branches), compact statements hold one leaf, accesses name buffers of the kernel, stage
// references only multi-buffered shared buffers. Reports to `errors`, returns false.
bool verify(const Kernel &k, llvm::raw_ostream &errors);

// `--emit=loops`: one line per statement with its access sets.
void print(const Kernel &k, llvm::raw_ostream &os);

// Appends every access of `s` and its children (in program order) to reads / writes.
void collectAccesses(const Stmt &s, std::vector<Access> &reads, std::vector<Access> &writes);

} // namespace tlc::lower
