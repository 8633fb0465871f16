// Fragments: how a tile held in registers is spread over the threads of a block.
//
// A Fragment maps each index of its tile to a (thread, register) pair: `thread` is the
// thread index within the block (or warp, for instruction-level fragments) and `reg` the
// position in that thread's local array of elements. It is TileLang's Fragment (paper
// section 4.3: f : K^n -> K^2), written as two index expressions over the tile's index
// variables.
//
// Replication. A tile may be held by several threads at once (an mma A operand is needed
// by every warp of its row). A replica variable `rep` in [0, replicate) then enters the
// thread expression: element x is held by the threads thread(x, rep) for every rep, in the
// same register. Without replication `replicate` is 1 and rep is always 0.
//
// Like Layout, fragments are value types: every operation returns a new fragment.
#pragma once

#include "Layout.h"

namespace tlc {

enum class RepeatOn {
  Thread,   // copies of the tile go to further threads
  Register, // copies of the tile go to further registers of the same threads
};

class Fragment {
public:
  struct Placement {
    IntExpr thread;
    IntExpr reg;
  };
  struct Location {
    int64_t thread;
    int64_t reg;
    bool operator==(const Location &o) const { return thread == o.thread && reg == o.reg; }
    bool operator!=(const Location &o) const { return !(*this == o); }
  };
  using PlaceFn = llvm::function_ref<Placement(llvm::ArrayRef<IntExpr> index, const IntExpr &rep)>;
  using ThreadFn = llvm::function_ref<IntExpr(llvm::ArrayRef<IntExpr> index, const IntExpr &rep)>;

  // A fragment over `shape` placed by `fn`.
  static Fragment make(llvm::ArrayRef<int64_t> shape, PlaceFn fn, int64_t replicate = 1);
  // A fragment from its thread mapping alone: each thread holds the tile pieces the thread
  // index does not depend on, in row-major order, as TileLang infers fragment indices.
  // nullopt if the thread expression is not an iterator sum (see analysis/IterMap.h).
  static std::optional<Fragment> fromThreadMap(llvm::ArrayRef<int64_t> shape, ThreadFn fn,
                                               int64_t replicate = 1,
                                               std::string *whyNot = nullptr);

  Fragment(llvm::SmallVector<IterVarDomain, 4> inputs, IterVarDomain replica, IntExpr thread,
           IntExpr reg);

  size_t rank() const { return inputVars.size(); }
  Shape shape() const;
  llvm::ArrayRef<IterVarDomain> inputs() const { return inputVars; }
  const IterVarDomain &replica() const { return replicaVar; }
  int64_t replicate() const { return replicaVar.extent; }
  const IntExpr &threadExpr() const { return threadIndex; }
  const IntExpr &regExpr() const { return regIndex; }
  // One past the largest thread / register used.
  int64_t threadExtent() const { return numThreads; }
  // Registers (elements) each thread holds; TileLang's SumFragmentRegisters adds these up.
  int64_t registerCount() const { return numRegisters; }

  Location evaluate(llvm::ArrayRef<int64_t> index, int64_t rep = 0) const;

  // The tile repeated `repeats[d]` times along each dimension, the copies numbered in
  // `order` and placed on further threads or further registers.
  Fragment repeat(llvm::ArrayRef<int64_t> repeats, RepeatOn on,
                  TileOrder order = TileOrder::RowMajor) const;
  // Every element additionally held by `times` groups of threadExtent() threads.
  Fragment replicate(int64_t times) const;
  // The fragment of the tile with dimension `dim` reduced away, as a reduction leaves it:
  // each remaining index is held by every thread that held some element of its line (the
  // reduced index becomes part of the replica), and each thread numbers the pieces of the
  // remaining indices its thread index does not depend on as registers (TileLang's
  // ReduceOp::InferLayout). nullopt, with the reason, when the thread index is not an
  // iterator sum the analysis can read.
  std::optional<Fragment> reduce(size_t dim, std::string *whyNot = nullptr) const;
  // The same placement viewed through a row-major reshape of the tile.
  Fragment reshape(llvm::ArrayRef<int64_t> shape) const;
  // x -> placement of inner(x): a fragment of a re-indexed view (a transpose, a slice).
  Fragment compose(const Layout &inner) const;

  // (index..., rep) -> (thread, reg); rep is present only when replicate() > 1.
  Layout asLayout() const;
  // (thread, reg) -> (index..., [rep]) when every (thread, reg) pair of the box holds
  // exactly one element copy.
  std::optional<Layout> inverse(std::string *whyNot = nullptr) const;

  bool isEqual(const Fragment &other) const;

  // `fragment[16, 8] threads 32 regs 4 (i, j) => thread (i % 8) * 4 + j / 2, reg ...`,
  // with `replicate 2 (i, j, rep)` when replicated.
  void print(llvm::raw_ostream &os) const;
  std::string str() const;

private:
  llvm::SmallVector<IterVarDomain, 4> domainWithReplica() const;

  llvm::SmallVector<IterVarDomain, 4> inputVars;
  IterVarDomain replicaVar;
  IntExpr threadIndex;
  IntExpr regIndex;
  int64_t numThreads = 0;
  int64_t numRegisters = 0;
};

llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const Fragment &fragment);

} // namespace tlc
