// The self-check after inference (ir/InferenceVerifier.h): a plan that would generate wrong
// code is an internal error naming the buffer. Each case takes a correctly inferred kernel,
// breaks one decision the way a bug would, and expects the verifier to say so.
#include "InferTestUtil.h"

#include "infer/Passes.h"
#include "ir/InferenceVerifier.h"
#include "ir/PassManager.h"
#include "target/TargetInfo.h"

#include <catch2/catch.hpp>

using namespace tlc;

namespace {

const char *kGemm = R"(
kernel k(A: f16[M, K], B: f16[K, N], Idx: i32[64], C: out f32[M, N])
  grid(ceildiv(N, 96), ceildiv(M, 64)) threads(128) as (bx, by)
{
  A_s = shared f16[64, 32];
  B_s = shared f16[32, 96];
  I_s = shared i32[64];
  C_f = fragment f32[64, 96];
  copy(Idx[0], I_s);
  clear(C_f);
  for k in serial(ceildiv(K, 32)) {
    copy(A[by * 64, I_s[k] * 32], A_s);
    copy(B[k * 32, bx * 96], B_s);
    gemm(A_s, B_s, C_f);
  }
  copy(C_f, C[by * 64, bx * 96]);
}
)";

struct Inferred : test::InferredKernel {
  Inferred() : InferredKernel(kGemm) {}
  std::string verify() {
    std::string errors;
    llvm::raw_string_ostream es(errors);
    bool ok = ftg::verifyInference(*g, es);
    CHECK(ok == es.str().empty());
    return es.str();
  }
};

// A pass that breaks the plan after inference, as a buggy pass would.
class Corrupt : public ftg::Pass {
public:
  explicit Corrupt(std::function<void(ftg::Graph &)> f) : f(std::move(f)) {}
  llvm::StringRef name() const override { return "corrupt"; }
  bool run(ftg::Graph &g, DiagnosticEngine &) override {
    f(g);
    return true;
  }
  std::function<void(ftg::Graph &)> f;
};

} // namespace

TEST_CASE("inference verifier accepts what inference produced", "[verifier]") {
  Inferred k;
  CHECK(k.verify().empty());
}

TEST_CASE("inference verifier rejects a swizzle that leaves its row", "[verifier]") {
  Inferred k;
  // The old 96-wide layout: chunk ^ (row & 7) on rows of 12 chunks.
  k.buffer("B_s").shared->mask = 7;
  k.buffer("B_s").shared->rowShift = 0;
  std::string e = k.verify();
  CHECK_THAT(e, Catch::Contains("shared buffer 'B_s'"));
  CHECK_THAT(e, Catch::Contains("out of their row"));
}

TEST_CASE("inference verifier rejects a layout of the wrong size", "[verifier]") {
  Inferred k;
  k.buffer("A_s").shared->rows = 32;
  CHECK_THAT(k.verify(), Catch::Contains("shared buffer 'A_s': layout covers 32x32 elements"));
}

TEST_CASE("inference verifier rejects live shared buffers that share bytes", "[verifier]") {
  Inferred k;
  // The table is read by addresses inside the loop, while A_s is live.
  k.buffer("I_s").sharedOffset = k.buffer("A_s").sharedOffset;
  std::string e = k.verify();
  CHECK_THAT(e, Catch::Contains("'I_s'"));
  CHECK_THAT(e, Catch::Contains("overlap 'A_s'"));
  CHECK_THAT(e, Catch::Contains("while both are live"));
}

TEST_CASE("inference verifier rejects a buffer past the planned shared memory", "[verifier]") {
  Inferred k;
  k.buffer("B_s").sharedOffset = k.g->scratchOffset;
  CHECK_THAT(k.verify(), Catch::Contains("shared buffer 'B_s': bytes"));
}

TEST_CASE("inference verifier rejects a fragment layout that misses elements", "[verifier]") {
  Inferred k;
  // A placement over all 128 threads that gives two elements the same register: columns j
  // and j + 4 of a row go to the same thread and register.
  FragmentLayout &C = *k.buffer("C_f").fragment;
  REQUIRE(k.verify() == "");
  auto broken = std::make_shared<FragmentAlgebra>(*C.algebra);
  broken->fragment = Fragment::make({C.rows, C.cols}, [&](llvm::ArrayRef<IntExpr> x, const IntExpr &) {
    return Fragment::Placement{x[0] % 32 * 4 + x[1] % 4, x[0] / 32 * (C.cols / 8) + x[1] / 8};
  });
  C.algebra = broken;
  CHECK_THAT(k.verify(), Catch::Contains("fragment buffer 'C_f': fragment") &&
                             Catch::Contains("is not one-to-one"));
}

TEST_CASE("inference verifier rejects a used fragment without a layout", "[verifier]") {
  Inferred k;
  k.buffer("C_f").fragment.reset();
  CHECK_THAT(k.verify(), Catch::Contains("fragment buffer 'C_f': is used but layout inference gave it no layout"));
}

TEST_CASE("inference verifier rejects a prefetched copy into a single-stage buffer", "[verifier]") {
  Inferred k;
  // Mark the loop's copy into A_s as prefetched, as a pipeline planner bug would without
  // giving A_s its rotating stages.
  bool marked = false;
  k.g->walk([&](ftg::Node &n) {
    for (const ftg::Operand &o : n.outputs)
      if (o.buffer == &k.buffer("A_s") && n.kind == ftg::NodeKind::Copy && !marked)
        n.producer = marked = true;
  });
  REQUIRE(marked);
  REQUIRE(k.buffer("A_s").stages == 1);
  CHECK_THAT(k.verify(), Catch::Contains("shared buffer 'A_s': is written by a prefetched copy but has 1 stage"));
  k.buffer("A_s").stages = 2;
  CHECK_THAT(k.verify(), !Catch::Contains("prefetched"));
}

TEST_CASE("a violation after the passes is an internal error naming the buffer", "[verifier]") {
  test::Frontend fe{kGemm};
  REQUIRE(fe.analyze());
  llvm::SourceMgr sm;
  std::string out;
  llvm::raw_string_ostream os{out};
  DiagnosticEngine diags{sm, os};
  auto g = ftg::buildGraph(fe.kernel(), diags, tlc::target::defaultTarget());
  REQUIRE(g);
  ftg::PassManager pm;
  pm.add(infer::createLayoutInference());
  pm.add(infer::createPipelinePlanner());
  pm.add(infer::createSharedMemoryPlanner());
  pm.add(std::make_unique<Corrupt>([](ftg::Graph &g) {
    for (auto &b : g.buffers)
      if (b->name == "B_s")
        b->shared->mask = 7;
  }));
  CHECK_FALSE(pm.run(*g, diags));
  CHECK_THAT(os.str(), Catch::Contains("internal error in kernel 'k'"));
  CHECK_THAT(os.str(), Catch::Contains("'B_s'"));
}
