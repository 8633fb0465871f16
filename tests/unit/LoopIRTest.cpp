// The loop IR (lower/LoopIR.h): its verifier, and SyncInsertion (lower/SyncInsertion.cpp) on
// hand-built kernels, so that each barrier rule is checked apart from the lowering.
#include "lower/Lower.h"

#include <catch2/catch.hpp>

using namespace tlc::lower;

namespace {

struct TestKernel {
  Kernel k;
  Buffer *A, *B, *G;

  TestKernel() {
    k.symbol = "t";
    A = addShared("A_s", 0, 1024, 1);
    B = addShared("B_s", 1024, 1024, 1);
    auto g = std::make_unique<Buffer>();
    g->name = g->sourceName = "G";
    G = g.get();
    k.buffers.push_back(std::move(g));
  }
  Buffer *addShared(const std::string &name, int64_t offset, int64_t bytes, int stages) {
    auto b = std::make_unique<Buffer>();
    b->name = b->sourceName = name;
    b->scope = MemScope::Shared;
    b->offset = offset;
    b->bytes = bytes;
    b->stages = stages;
    k.buffers.push_back(std::move(b));
    return k.buffers.back().get();
  }
};

// A tile-operator unit reading `r` and writing `w`.
StmtPtr op(std::vector<Access> r, std::vector<Access> w) {
  auto s = std::make_unique<Stmt>(StmtKind::TileOp);
  s->text = "copy";
  s->reads = std::move(r);
  s->writes = std::move(w);
  return s;
}

Access at(const Buffer *b) { return {b, std::nullopt}; }
Access staged(const Buffer *b, const std::string &var, int64_t offset) {
  return {b, StageRef{var, offset, b->stages}};
}

std::vector<std::string> barriers(const StmtList &list) {
  std::vector<std::string> out;
  for (const StmtPtr &s : list) {
    if (s->kind == StmtKind::Barrier)
      out.push_back(s->text);
    for (const StmtList *l : {&s->body, &s->elseBody})
      for (const std::string &b : barriers(*l))
        out.push_back(b);
  }
  return out;
}

std::string verifyErrors(const Kernel &k) {
  std::string s;
  llvm::raw_string_ostream os(s);
  verify(k, os);
  return os.str();
}

} // namespace

TEST_CASE("loop IR verifier rejects a barrier that not every thread reaches", "[lower]") {
  TestKernel t;
  StmtPtr loop = makeFor(ForRole::Threads, "i", "tid", "64", "128");
  loop->body.push_back(makeBarrier("inside a thread loop"));
  t.k.body.push_back(std::move(loop));
  CHECK_THAT(verifyErrors(t.k), Catch::Contains("__syncthreads where not every thread"));

  TestKernel u;
  StmtPtr branch = makeIf("tid == 0", IfStyle::Braced, /*uniform=*/false);
  branch->body.push_back(makeBarrier("inside a divergent branch"));
  u.k.body.push_back(std::move(branch));
  CHECK_THAT(verifyErrors(u.k), Catch::Contains("__syncthreads where not every thread"));

  TestKernel ok;
  StmtPtr tile = makeFor(ForRole::Tile, "k", "0", "8");
  tile->body.push_back(makeBarrier("in a tile loop"));
  ok.k.body.push_back(std::move(tile));
  CHECK(verifyErrors(ok.k).empty());
}

TEST_CASE("loop IR verifier checks stage references and compact statements", "[lower]") {
  TestKernel t;
  t.k.body.push_back(op({staged(t.A, "k", 1)}, {}));
  CHECK_THAT(verifyErrors(t.k), Catch::Contains("stage reference into 'A_s', which has 1 stage"));

  TestKernel u;
  StmtPtr f = makeFor(ForRole::Registers, "r", "0", "4");
  f->compact = true;
  u.k.body.push_back(std::move(f));
  CHECK_THAT(verifyErrors(u.k), Catch::Contains("compact statement must hold one leaf"));
}

TEST_CASE("SyncInsertion separates a write from the reads of other threads", "[lower]") {
  TestKernel t;
  t.k.body.push_back(op({at(t.G)}, {at(t.A)}));  // copy G -> A_s
  t.k.body.push_back(op({at(t.A)}, {at(t.G)}));  // copy A_s -> G
  t.k.body.push_back(op({at(t.A)}, {at(t.G)}));  // reading again: no barrier
  t.k.body.push_back(op({at(t.G)}, {at(t.A)}));  // overwriting what was read
  insertBarriers(t.k);
  CHECK(barriers(t.k.body) == std::vector<std::string>{
                                  "'A_s' was written by other threads",
                                  "'A_s' is still being read or written by other threads"});
  REQUIRE(t.k.body.size() == 6);
  CHECK(t.k.body[1]->kind == StmtKind::Barrier);
  CHECK(t.k.body[4]->kind == StmtKind::Barrier);
}

TEST_CASE("SyncInsertion: buffers sharing bytes conflict, disjoint ones do not", "[lower]") {
  TestKernel t;
  Buffer *C = t.addShared("C_s", 512, 1024, 1); // overlaps A_s and B_s
  t.k.body.push_back(op({}, {at(t.A)}));
  t.k.body.push_back(op({at(t.B)}, {}));  // disjoint from A_s: no barrier
  t.k.body.push_back(op({at(C)}, {}));    // overlaps A_s: barrier
  insertBarriers(t.k);
  CHECK(barriers(t.k.body) == std::vector<std::string>{"'A_s' was written by other threads"});
}

TEST_CASE("SyncInsertion: different stages of a pipelined buffer do not conflict", "[lower]") {
  TestKernel t;
  Buffer *P = t.addShared("P_s", 4096, 1024, 3);
  StmtPtr loop = makeFor(ForRole::Tile, "k", "0", "n");
  loop->body.push_back(makeBarrier("stage k landed"));
  loop->body.push_back(op({}, {staged(P, "k", 2)})); // prefetch into (k + 2) % 3
  loop->body.push_back(op({staged(P, "k", 0)}, {})); // consume k % 3
  loop->body.push_back(op({staged(P, "k", 3)}, {})); // (k + 3) % 3 == k % 3: still no conflict
  loop->body.push_back(op({staged(P, "k", 2)}, {})); // the prefetched stage: conflict
  t.k.body.push_back(std::move(loop));
  insertBarriers(t.k);
  // The body starts with a barrier: no back-edge barrier.
  CHECK(barriers(t.k.body) == std::vector<std::string>{"stage k landed", "'P_s' was written by other threads"});
}

TEST_CASE("SyncInsertion: loop back edge", "[lower]") {
  TestKernel t;
  StmtPtr loop = makeFor(ForRole::Tile, "k", "0", "n");
  loop->body.push_back(op({at(t.G)}, {at(t.A)}));
  loop->body.push_back(op({at(t.A)}, {at(t.G)}));
  t.k.body.push_back(std::move(loop));
  insertBarriers(t.k);
  const StmtList &body = t.k.body[0]->body;
  CHECK(barriers(body) == std::vector<std::string>{
                              "'A_s' was written by other threads",
                              "loop back-edge: 'A_s' is written again in the next iteration"});
  CHECK(body.back()->kind == StmtKind::Barrier);
}

TEST_CASE("SyncInsertion: a barrier for what precedes a loop goes before the loop", "[lower]") {
  // The body's first unit reads A_s, written before the loop: the barrier for it goes before
  // the loop, once. In the body, A_s's rewrite and the read after it need one each; the
  // read pending at the end of the body meets only a read at the start of the next
  // iteration: nothing on the back edge.
  TestKernel t;
  t.k.body.push_back(op({at(t.G)}, {at(t.A)}));
  StmtPtr loop = makeFor(ForRole::Tile, "k", "0", "n");
  loop->body.push_back(op({at(t.A)}, {at(t.G)}));
  loop->body.push_back(op({at(t.G)}, {at(t.A)}));
  loop->body.push_back(op({at(t.A)}, {at(t.G)}));
  t.k.body.push_back(std::move(loop));
  insertBarriers(t.k);
  REQUIRE(t.k.body.size() == 3);
  CHECK(t.k.body[1]->kind == StmtKind::Barrier);
  REQUIRE(t.k.body[2]->kind == StmtKind::For);
  const StmtList &body = t.k.body[2]->body;
  CHECK(barriers(body) == std::vector<std::string>{"'A_s' is still being read or written by other threads",
                                                   "'A_s' was written by other threads"});
  CHECK(body.front()->kind != StmtKind::Barrier);
  CHECK(body.back()->kind != StmtKind::Barrier);
}

TEST_CASE("SyncInsertion: one barrier at the start of a loop body serves what precedes the loop and the back edge", "[lower]") {
  // A_s written before the loop and rewritten at the end of the body, read at its start: the
  // first iteration's read waits for the write before the loop, every other's for the
  // previous iteration's write. One barrier at the start of the body does both; none before
  // the loop, none at the end of the body.
  TestKernel t;
  t.k.body.push_back(op({at(t.G)}, {at(t.A)}));
  StmtPtr loop = makeFor(ForRole::Tile, "k", "0", "n");
  loop->body.push_back(op({at(t.A)}, {at(t.G)}));
  loop->body.push_back(op({at(t.G)}, {at(t.A)}));
  t.k.body.push_back(std::move(loop));
  insertBarriers(t.k);
  REQUIRE(t.k.body.size() == 2);
  REQUIRE(t.k.body[1]->kind == StmtKind::For);
  const StmtList &body = t.k.body[1]->body;
  REQUIRE(!body.empty());
  CHECK(body.front()->kind == StmtKind::Barrier);
  CHECK(body.back()->kind != StmtKind::Barrier);
}

TEST_CASE("SyncInsertion: each branch of an if starts from the state before it", "[lower]") {
  // A barrier in the then-branch does not order the else-branch: the read of A_s there needs
  // its own barrier.
  TestKernel t;
  t.k.body.push_back(op({}, {at(t.A)}));
  StmtPtr branch = makeIf("b == 0");
  branch->body.push_back(op({at(t.A)}, {}));
  branch->elseBody.push_back(op({at(t.A)}, {}));
  t.k.body.push_back(std::move(branch));
  t.k.body.push_back(op({}, {at(t.A)})); // after the if: the reads of either branch pending
  insertBarriers(t.k);
  const Stmt &i = *t.k.body[1];
  REQUIRE(i.body.size() == 2);
  CHECK(i.body[0]->kind == StmtKind::Barrier);
  REQUIRE(i.elseBody.size() == 2);
  CHECK(i.elseBody[0]->kind == StmtKind::Barrier);
  REQUIRE(t.k.body.size() == 4);
  CHECK(t.k.body[2]->kind == StmtKind::Barrier);
}

TEST_CASE("SyncInsertion never places a barrier inside a unit", "[lower]") {
  // A reduction's own barriers clear what precedes them; the unit's later accesses stay.
  TestKernel t;
  t.k.body.push_back(op({}, {at(t.A)}));
  auto unit = std::make_unique<Stmt>(StmtKind::TileOp);
  unit->body.push_back(makeBarrier("scratch"));
  unit->body.push_back(op({}, {at(t.B)}));
  t.k.body.push_back(std::move(unit));
  t.k.body.push_back(op({at(t.A)}, {})); // ordered by the unit's barrier
  t.k.body.push_back(op({at(t.B)}, {})); // written after it: needs one
  insertBarriers(t.k);
  CHECK(barriers(t.k.body) == std::vector<std::string>{"scratch", "'B_s' was written by other threads"});
  CHECK(t.k.body.size() == 5);
}

TEST_CASE("loop IR verifier: a tile operator's access set covers its statements", "[lower]") {
  // The trust issue's bug: a gather whose address reads the table T_s, with an access set
  // that lacks it (no barrier would separate the table's writer from the gather).
  TestKernel t;
  Buffer *T = t.addShared("T_s", 4096, 32, 1);
  StmtPtr gather = op({at(t.G)}, {at(t.A)});
  auto cp = std::make_unique<Stmt>(StmtKind::AsyncCopy);
  cp->reads = {at(t.G), at(T)};
  cp->writes = {at(t.A)};
  gather->body.push_back(std::move(cp));
  t.k.body.push_back(std::move(gather));
  CHECK_THAT(verifyErrors(t.k), Catch::Contains("'copy' reads 'T_s', which its access set lacks"));

  // Reading what the operator writes is covered by the write.
  TestKernel u;
  StmtPtr acc = op({}, {at(u.A)});
  acc->body.push_back(makeStore("A_s[0]", "A_s[0] + 1"));
  acc->body.back()->reads = {at(u.A)};
  acc->body.back()->writes = {at(u.A)};
  u.k.body.push_back(std::move(acc));
  CHECK(verifyErrors(u.k).empty());
}

TEST_CASE("loop IR verifier: one-line ifs and else-if chains have their shape", "[lower]") {
  TestKernel t;
  StmtPtr i = makeIf("p", IfStyle::NextLine, false);
  i->body.push_back(makeStore("x", "1"));
  i->body.push_back(makeStore("y", "2"));
  t.k.body.push_back(std::move(i));
  CHECK_THAT(verifyErrors(t.k), Catch::Contains("a one-line if must hold one leaf"));

  TestKernel u;
  StmtPtr chain = makeIf("a");
  chain->elseIf = true;
  chain->elseBody.push_back(makeStore("x", "1"));
  u.k.body.push_back(std::move(chain));
  CHECK_THAT(verifyErrors(u.k), Catch::Contains("else-if whose else is not a single braced if"));

  TestKernel ok;
  StmtPtr same = makeIf("p", IfStyle::SameLine, false);
  same->body.push_back(makeStore("x", "1"));
  same->elseBody.push_back(makeCompactFor("v", "0", "4", makeStore("t[v]", "0")));
  ok.k.body.push_back(std::move(same));
  CHECK(verifyErrors(ok.k).empty());
}

// (No ';' in test names: ctest's per-test filter stops at it and then runs no test.)
TEST_CASE("PipelineExpansion fills every stage slot, and an unexpanded pipeline fails verification", "[lower]") {
  TestKernel t;
  Buffer *P = t.addShared("P_s", 4096, 1024, 2);
  auto pipeline = std::make_unique<Stmt>(StmtKind::Pipeline);
  pipeline->var = pipeline->text = "k";
  pipeline->hi = "n";
  pipeline->count = 2;
  for (int part = 0; part < 3; ++part) {
    std::string slot = "\x01s" + std::to_string(part) + "\x01";
    pipeline->slots.push_back(slot);
    auto seq = std::make_unique<Stmt>(StmtKind::Seq);
    StmtPtr use = part < 2 ? op({at(t.G)}, {staged(P, slot, 0)}) : op({staged(P, slot, 0)}, {at(t.G)});
    use->body.push_back(makeStore("P_s[" + slot + " * 512 + i]", "0"));
    seq->body.push_back(std::move(use));
    pipeline->body.push_back(std::move(seq));
  }
  pipeline->body.push_back(std::make_unique<Stmt>(StmtKind::Seq)); // part 3: after the loop (drains)
  // Before expansion: the verifier refuses it (codegen cannot print it).
  Kernel &k = t.k;
  k.body.push_back(std::move(pipeline));
  CHECK_THAT(verifyErrors(k), Catch::Contains("left unexpanded"));

  expandPipelines(k);
  CHECK(verifyErrors(k).empty());
  std::string dump;
  llvm::raw_string_ostream os(dump);
  print(k, os);
  CHECK(os.str().find('\x01') == std::string::npos);
  CHECK_THAT(os.str(), Catch::Contains("store P_s[tl_stage * 512 + i] = 0"));
  CHECK_THAT(os.str(), Catch::Contains("store P_s[(tl_next % 2) * 512 + i] = 0"));
  CHECK_THAT(os.str(), Catch::Contains("store P_s[(k % 2) * 512 + i] = 0"));
  CHECK_THAT(os.str(), Catch::Contains("writes P_s@(k+1)%2"));
  CHECK_THAT(os.str(), Catch::Contains("reads P_s@(k)%2"));
  CHECK_THAT(os.str(), Catch::Contains("cp.async.wait 0"));
}

TEST_CASE("loop IR verifier: a tile operator's cp.async is waited for, unless it prefetches", "[lower]") {
  auto copyUnit = [](Access write, bool complete) {
    StmtPtr unit = op({}, {write});
    auto scope = std::make_unique<Stmt>(StmtKind::Scope);
    scope->body.push_back(std::make_unique<Stmt>(StmtKind::AsyncCopy));
    if (complete) {
      scope->body.push_back(std::make_unique<Stmt>(StmtKind::AsyncCommit));
      scope->body.push_back(std::make_unique<Stmt>(StmtKind::AsyncWait));
    }
    unit->body.push_back(std::move(scope));
    return unit;
  };
  TestKernel t;
  t.k.body.push_back(copyUnit(at(t.A), /*complete=*/false));
  CHECK_THAT(verifyErrors(t.k), Catch::Contains("issues cp.async without committing and waiting"));

  TestKernel u;
  u.k.body.push_back(copyUnit(at(u.A), /*complete=*/true));
  CHECK(verifyErrors(u.k).empty());

  TestKernel p;
  Buffer *P = p.addShared("P_s", 4096, 1024, 2);
  p.k.body.push_back(copyUnit(staged(P, "k", 1), /*complete=*/false)); // the pipeline waits
  CHECK(verifyErrors(p.k).empty());
}
