// The candidate space (knob roles and values), quick checks against the passes they
// anticipate, and the ranking.
#include "recommend/Knobs.h"
#include "recommend/Recommender.h"
#include "recommend/Report.h"

#include "FrontendTestUtil.h"

#include "llvm/Support/JSON.h"

#include <catch2/catch.hpp>

using namespace tlc;
using namespace tlc::recommend;

namespace {

const char *kAttentionLike = R"(
kernel k<block_M = 64, block_N = auto, bk: int = auto(32, 64), stages = 2, threads = 128,
         policy = full_row, panel = 4, dim = 64, unused: int = auto, causal: bool = false,
         dt: dtype = f16>(
    Q: dt[S, dim], K: dt[S, dim], O: out dt[S, dim])
  grid(ceildiv(S, block_M), ceildiv(S, block_N)) threads(threads) as (bx, by)
{
  swizzle_blocks(panel);
  Q_s = shared dt[block_M, dim];
  K_s = shared dt[block_N, dim];
  W_s = shared dt[bk, dim];
  acc = fragment f32[block_M, block_N];
  clear(acc);
  copy(Q[bx * block_M, 0], Q_s);
  for k in pipelined(ceildiv(dim, bk), stages = stages) {
    copy(K[by * block_N, 0], K_s);
    copy(K[k * bk, 0], W_s);
    gemm(Q_s, K_s, acc, transpose_B = true, policy = policy);
  }
}
)";

tlc::target::TargetDesc h100() { return *tlc::target::resolveTarget("h100-sxm"); }

const Knob *knobNamed(const KnobSpace &s, llvm::StringRef name) {
  for (const Knob &k : s.knobs())
    if (k.name == name)
      return &k;
  return nullptr;
}

} // namespace

TEST_CASE("knob roles come from where the kernel uses each parameter", "[recommend][knobs]") {
  test::Frontend fe(kAttentionLike, {"S=4096"});
  fe.analyze(); // stops on `auto` parameters; names are resolved all the same
  KnobSpace s = KnobSpace::analyze(fe.kernel(), h100(), {}, {}, ExprEvaluator());
  std::vector<std::string> names;
  for (const Knob &k : s.knobs())
    names.push_back(k.name);
  // dim is in the tensors' shapes, causal and dt change what is computed, unused is never
  // mentioned: none of them is a knob. panel, the only model-only knob, comes last.
  CHECK(names == std::vector<std::string>{"block_M", "block_N", "bk", "stages", "threads", "policy", "panel"});
  CHECK(knobNamed(s, "threads")->role == KnobRole::Threads);
  CHECK(knobNamed(s, "stages")->role == KnobRole::Stages);
  CHECK(knobNamed(s, "policy")->role == KnobRole::Policy);
  CHECK(knobNamed(s, "panel")->role == KnobRole::Panel);
  CHECK(knobNamed(s, "panel")->modelOnly());
  CHECK(knobNamed(s, "block_M")->role == KnobRole::Tile);
  // Tile sizes: powers of two from the MMA shape; the default is always among the values.
  CHECK(knobNamed(s, "block_M")->values == std::vector<std::string>{"32", "64", "128", "256"});
  CHECK(knobNamed(s, "threads")->values == std::vector<std::string>{"64", "128", "256"});
  CHECK(knobNamed(s, "stages")->values == std::vector<std::string>{"1", "2", "3", "4"});
  CHECK(knobNamed(s, "panel")->values == std::vector<std::string>{"1", "4", "8", "16"});
  // `auto(32, 64)` is used as written.
  CHECK(knobNamed(s, "bk")->values == std::vector<std::string>{"32", "64"});
  CHECK(knobNamed(s, "bk")->isAuto);
  CHECK(s.unresolvedAuto().empty());
  CHECK(s.size() == 4 * 4 * 2 * 4 * 3 * 3 * 4);
  // The last knob varies fastest.
  CHECK(configStr(s.at(1)) == "block_M=32 block_N=32 bk=32 stages=1 threads=64 policy=full_row panel=4");
}

TEST_CASE("pinned knobs, auto-only search and trimmed tile sizes", "[recommend][knobs]") {
  test::Frontend fe(kAttentionLike, {"S=100"});
  fe.analyze();
  KnobSpaceOptions onlyAuto;
  onlyAuto.onlyAuto = true;
  KnobSpace s = KnobSpace::analyze(fe.kernel(), h100(), {"bk"}, onlyAuto, ExprEvaluator());
  REQUIRE(s.knobs().size() == 1);
  // block_N tiles S = 100 (`ceildiv(S, block_N)` in the grid): past 128 a tile is padding.
  CHECK(s.knobs()[0].name == "block_N");
  CHECK(s.knobs()[0].values == std::vector<std::string>{"16", "32", "64", "128"});
}

TEST_CASE("a gemm's reduction dimension gets its own tile sizes", "[recommend][knobs]") {
  test::Frontend fe(test::kernelWith(R"(
  A_s = shared f16[BM, BK];
  B_s = shared f16[BK, BN];
  C_f = fragment f32[BM, BN];
  for k in pipelined(ceildiv(K, BK), stages = 2) {
    copy(A[by * BM, k * BK], A_s);
    copy(B[k * BK, bx * BN], B_s);
    gemm(A_s, B_s, C_f);
  })"), {"M=8192", "N=8192", "K=8192"});
  REQUIRE(fe.analyze());
  KnobSpace s = KnobSpace::analyze(fe.kernel(), h100(), {}, {}, ExprEvaluator());
  CHECK(knobNamed(s, "BK")->gemmK);
  CHECK(knobNamed(s, "BK")->values == std::vector<std::string>{"32", "64", "128"});
  CHECK(!knobNamed(s, "BM")->gemmK);
  CHECK(knobNamed(s, "BM")->values.back() == "256");
}

TEST_CASE("quick checks never reject what the compiler accepts", "[recommend][search]") {
  RecommendOptions opts;
  opts.kernel = "k";
  opts.defines = {*parseDefine("S=2048"), *parseDefine("panel=4")};
  auto r = rank(kAttentionLike, "test.tl", opts, h100());
  REQUIRE(bool(r));
  REQUIRE(r->quickRejects > 0);
  auto cc = CandidateCompiler::create(kAttentionLike, "test.tl", "k", opts.defines, *tlc::target::lookupTarget("sm_90a"));
  REQUIRE(bool(cc));
  size_t checked = 0;
  for (const Candidate &c : r->illegal) {
    if (!c.quickReject)
      continue;
    INFO(configStr(c.config) << ": " << c.reason);
    CHECK(!(*cc)->compile(c.config)->graph);
    ++checked;
  }
  CHECK(checked > 0);
}

TEST_CASE("ranking: legal candidates by predicted time, illegal ones with reasons", "[recommend][search]") {
  RecommendOptions opts;
  opts.kernel = "k";
  opts.defines = {*parseDefine("S=4096")};
  opts.assumed = {{"S", 1}}; // ignored: S is bound by -D
  auto r = rank(kAttentionLike, "test.tl", opts, h100());
  REQUIRE(bool(r));
  REQUIRE(r->ranked.size() > 10);
  REQUIRE(!r->illegal.empty());
  for (size_t i = 1; i < r->ranked.size(); ++i)
    CHECK(r->ranked[i - 1].prediction.seconds <= r->ranked[i].prediction.seconds);
  for (const Candidate &c : r->illegal)
    CHECK(!c.reason.empty());
  CHECK(r->shapes.size() == 1);
  CHECK(!r->shapes[0].assumed);
  CHECK(r->compilations < r->ranked.size() + r->illegal.size());
  // Shared memory over the budget is among the reasons: 256-row tiles of 64 f16 columns,
  // with 4 stages of K_s, still fit, but the fragments of 256x256 do not.
  CHECK(llvm::any_of(r->illegal, [](const Candidate &c) {
    return c.reason.find("registers") != std::string::npos;
  }));

  std::string json;
  llvm::raw_string_ostream os(json);
  printJson(*r, ReportOptions{}, os);
  auto parsed = llvm::json::parse(os.str());
  REQUIRE(bool(parsed));
  const llvm::json::Array *ranked = parsed->getAsObject()->getArray("ranked");
  REQUIRE(ranked);
  CHECK(ranked->size() == 10);
}

TEST_CASE("dynamic shapes are tuned for the assumed bucket", "[recommend][search]") {
  RecommendOptions opts;
  opts.kernel = "k";
  opts.onlyAuto = true;
  opts.assumed = {{"S", 100}};
  auto r = rank(kAttentionLike, "test.tl", opts, h100());
  REQUIRE(bool(r));
  REQUIRE(r->shapes.size() == 1);
  CHECK(r->shapes[0].assumed);
  CHECK(r->shapes[0].value == 100);
  // The bucket trims tile sizes like a bound shape does...
  REQUIRE(r->knobs.size() == 2);
  CHECK(r->knobs[0].name == "block_N");
  CHECK(r->knobs[0].values == std::vector<std::string>{"16", "32", "64", "128"});
  // ...and sizes the grid the model sees, but Sema never sees it: a 128-row tile of a
  // 100-row tensor is legal (the kernel takes any S), and so is every other value.
  CHECK(r->illegal.empty());
  REQUIRE(!r->ranked.empty());
  for (const Candidate &c : r->ranked) {
    int64_t bn = std::stoi(c.config[0].value);
    CHECK(c.prediction.blocks == 2 * ((100 + bn - 1) / bn));
  }
}
