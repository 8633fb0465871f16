// Lowering of whole kernels (lower/Lower.h) after inference: the decisions PipelineExpansion
// and SyncInsertion make, read from the loop IR rather than from printed CUDA.
#include "InferTestUtil.h"

#include "infer/Passes.h"
#include "ir/PassManager.h"
#include "lower/Lower.h"

#include <catch2/catch.hpp>

using namespace tlc;

namespace {

std::string pipelinedGemm(int stages) {
  return R"(
kernel k(A: f16[M, K], B: f16[K, N], C: out f32[M, N])
  grid(ceildiv(N, 64), ceildiv(M, 64)) threads(128) as (bx, by)
{
  A_s = shared f16[64, 32];
  B_s = shared f16[32, 64];
  C_f = fragment f32[64, 64];
  clear(C_f);
  for k in pipelined(ceildiv(K, 32), stages = )" +
         std::to_string(stages) + R"() {
    copy(A[by * 64, k * 32], A_s);
    copy(B[k * 32, bx * 64], B_s);
    gemm(A_s, B_s, C_f);
  }
  copy(C_f, C[by * 64, bx * 64]);
}
)";
}

struct Lowered : test::InferredKernel {
  std::unique_ptr<lower::Kernel> k;

  explicit Lowered(const std::string &source) : InferredKernel(source) {
    k = lower::lowerKernel(*g, diags, "k.tl");
    REQUIRE(k);
  }
};

// The first statement of `kind` (and loop role) in program order.
const lower::Stmt *find(const lower::StmtList &list, lower::StmtKind kind,
                        std::optional<lower::ForRole> role = std::nullopt) {
  for (const lower::StmtPtr &s : list) {
    if (s->kind == kind && (!role || s->role == *role))
      return s.get();
    for (const lower::StmtList *l : {&s->body, &s->elseBody})
      if (const lower::Stmt *found = find(*l, kind, role))
        return found;
  }
  return nullptr;
}

size_t count(const lower::StmtList &list, lower::StmtKind kind) {
  size_t n = 0;
  for (const lower::StmtPtr &s : list)
    n += (s->kind == kind) + count(s->body, kind) + count(s->elseBody, kind);
  return n;
}

} // namespace

TEST_CASE("PipelineExpansion: prologue bound, wait depth and stages follow the stage count", "[lower]") {
  for (int S : {2, 3, 4}) {
    CAPTURE(S);
    Lowered l(pipelinedGemm(S));
    const lower::Stmt *steady = find(l.k->body, lower::StmtKind::For, lower::ForRole::Tile);
    REQUIRE(steady);
    const lower::Stmt *mma = find(steady->body, lower::StmtKind::Mma);
    REQUIRE(mma);
    // On sm_90a a gemm with 4 or more stages leaves its wgmma group in flight, and the
    // prefetch runs one iteration less ahead so as not to overwrite what the group reads.
    CHECK(mma->pending == (mma->warpgroup && S >= 4 ? 1 : 0));
    const int distance = mma->pending ? S - 2 : S - 1;
    const lower::Stmt *prologue = find(l.k->body, lower::StmtKind::For, lower::ForRole::Stages);
    REQUIRE(prologue);
    CHECK(prologue->hi == std::to_string(distance));
    // One group per prologue iteration.
    CHECK(count(prologue->body, lower::StmtKind::AsyncCommit) == 1);

    REQUIRE(steady->body.size() >= 3);
    CHECK(steady->body[0]->kind == lower::StmtKind::AsyncWait);
    CHECK(steady->body[0]->count == distance - 1);
    CHECK(steady->body[1]->kind == lower::StmtKind::Barrier);
    // The pipeline's barrier is the only one: SyncInsertion adds none to the steady state.
    CHECK(count(steady->body, lower::StmtKind::Barrier) == 1);

    // The prefetch writes stage (k + distance) % S; the gemm reads stage k % S.
    const lower::Stmt *prefetch = find(steady->body, lower::StmtKind::TileOp);
    REQUIRE(prefetch);
    REQUIRE(prefetch->writes.size() == 1);
    REQUIRE(prefetch->writes[0].stage);
    CHECK(prefetch->writes[0].stage->var == "k");
    CHECK(prefetch->writes[0].stage->offset == distance);
    CHECK(prefetch->writes[0].stage->stages == S);
    REQUIRE(mma->reads.size() == 3);
    REQUIRE(mma->reads[0].stage);
    CHECK(mma->reads[0].stage->offset == 0);

    // The epilogue waits for every copy group after the steady state, then drains the wgmma
    // groups left in flight.
    const lower::Stmt *pipeline = find(l.k->body, lower::StmtKind::Scope);
    REQUIRE(pipeline);
    const lower::Stmt *last = pipeline->body.back().get();
    if (mma->pending) {
      REQUIRE(last->kind == lower::StmtKind::Eval);
      CHECK(last->text == "tl::wgmma::drain(C_f)");
      CHECK(last->writes.size() == 1);
      // After the copy wait: the drain's comment, then the drain; no barrier.
      last = pipeline->body[pipeline->body.size() - 3].get();
    }
    CHECK(last->kind == lower::StmtKind::AsyncWait);
    CHECK(last->count == 0);
  }
}

TEST_CASE("lowering: a kernel's loop IR passes the verifier and SyncInsertion is idempotent", "[lower]") {
  Lowered l(pipelinedGemm(3));
  std::string errors;
  llvm::raw_string_ostream es(errors);
  CHECK(lower::verify(*l.k, es));
  CHECK(es.str().empty());
  size_t barriers = count(l.k->body, lower::StmtKind::Barrier);
  lower::insertBarriers(*l.k); // every conflict already has its barrier
  CHECK(count(l.k->body, lower::StmtKind::Barrier) == barriers);
}

TEST_CASE("pipelines expand in the target's pipeline style, or run unpipelined on gfx9", "[lower]") {
  // A pipelined loop of copies (no gemm, so inference runs on any target).
  const char *source = R"(
kernel k(A: f32[M, 256], C: out f32[M])
  grid(ceildiv(M, 64)) threads(256) as (bx)
{
  A_s = shared f32[64, 64];
  X_f = fragment f32[64, 64];
  R_f = fragment f32[64];
  clear(R_f);
  for k in pipelined(4, stages = 2) {
    copy(A[bx * 64, k * 64], A_s);
    copy(A_s, X_f);
    reduce_sum(X_f, R_f, clear = false);
  }
  copy(R_f, C[bx * 64]);
}
)";
  {
    test::InferredKernel cuda(source);
    REQUIRE(cuda.g->target->pipelineStyle() == target::PipelineStyle::AsyncGroups);
    auto k = lower::lowerKernel(*cuda.g, cuda.diags, "k.tl");
    REQUIRE(k);
    CHECK(k->pipelineStyle == target::PipelineStyle::AsyncGroups);
    CHECK(find(k->body, lower::StmtKind::AsyncWait)); // expanded into cp.async groups
  }
  const target::TargetInfo *amd = target::lookupTarget("gfx942");
  REQUIRE(amd);
  REQUIRE(amd->pipelineStyle() == target::PipelineStyle::RegisterStaged);
  // No asynchronous copy into LDS: the pipelined loop is an ordinary loop of synchronous
  // copies (PipelinePlanner), one buffer each, with a barrier on the back edge.
  test::InferredKernel gfx(source, *amd);
  auto k = lower::lowerKernel(*gfx.g, gfx.diags, "k.tl");
  REQUIRE(k);
  CHECK(k->pipelineStyle == target::PipelineStyle::RegisterStaged);
  CHECK_FALSE(find(k->body, lower::StmtKind::AsyncWait));
  CHECK_FALSE(find(k->body, lower::StmtKind::AsyncCopy));
  CHECK_FALSE(find(k->body, lower::StmtKind::Pipeline));
  CHECK(count(k->body, lower::StmtKind::Barrier) >= 2);
}
