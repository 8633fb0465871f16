// Which buffers a node of the FTG reads and writes: the one read/write-set computation that
// dependency edges (FTG building), the shared-memory planner (lifetimes), the pipeline
// planner (what a prefetch may not depend on) and barrier insertion (code generation) use.
//
// Reads include every buffer read inside an index expression: a copy whose address reads a
// block table (`copy(K[T_s[j] * 64, 0], K_s)`, paged KV, MoE gathers) reads `T_s` as surely
// as it reads `K`. Missing that once put a tile on top of the table and left no barrier
// between the copy into the table and the threads reading it.
#pragma once

#include "frontend/AST.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>
#include <vector>

namespace tlc::ftg {

class Graph;
struct Buffer;
struct Node;

// Calls `f` for every declaration `e` reads: names, indexed buffers and everything inside
// their indices (slice bounds included).
void forEachRead(const Expr *e, llvm::function_ref<void(const Decl *)> f);

// Buffers read and written, each once, in first-access order.
struct AccessSet {
  std::vector<Buffer *> reads, writes;
  void addRead(Buffer *b);
  void addWrite(Buffer *b);
  void merge(const AccessSet &o);
};

// The accesses of scalar code (lets, element assignments, ifs, blocks, parallel bodies).
AccessSet statementAccesses(const Graph &g, const Stmt *s);

// Fills n.reads and n.writes: the node's operands, every buffer read in their index
// expressions or other arguments, and for loops and branches the accesses of their bodies
// plus what their bounds and conditions read. Children must be analysed first.
void computeAccesses(const Graph &g, Node &n);

// When each buffer is live, in top-level nodes of the kernel body: the first and last index
// of a top-level node that accesses it (a loop counts as one node, so a buffer used anywhere
// in a loop lives through all of it). Buffers no node accesses are absent. In a persistent
// kernel whose tiles may overlap (Graph::tilesOverlap) every buffer lives through all of it.
struct Lifetime {
  size_t first, last;
  bool overlaps(const Lifetime &o) const { return !(last < o.first || o.last < first); }
};
llvm::DenseMap<const Buffer *, Lifetime> topLevelLifetimes(const Graph &g);

// RAW, WAR and WAW edges from each node to the latest earlier nodes of the same region it
// conflicts with (older conflicts are implied through those).
void linkDependencies(std::vector<std::unique_ptr<Node>> &nodes);

} // namespace tlc::ftg
