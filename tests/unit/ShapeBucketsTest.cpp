// Shape buckets of `auto` parameters with dynamic shapes: bucket edges, the bucket grid, the
// choice of variants, and ranking several buckets with one Recommender.
#include "recommend/ShapeBuckets.h"

#include "FrontendTestUtil.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace tlc;
using namespace tlc::recommend;

namespace {

const char *kGemm = R"(
kernel g<bm = auto, bn = auto, bk = auto(32, 64), stages = auto(2, 3), threads = auto(128, 256)>(
    A: f16[M, K], B: f16[K, N], C: out f16[M, N])
  grid(ceildiv(N, bn), ceildiv(M, bm)) threads(threads) as (bx, by)
{
  A_s = shared f16[bm, bk];
  B_s = shared f16[bk, bn];
  C_f = fragment f32[bm, bn];
  clear(C_f);
  for k in pipelined(ceildiv(K, bk), stages = stages) {
    copy(A[by * bm, k * bk], A_s);
    copy(B[k * bk, bx * bn], B_s);
    gemm(A_s, B_s, C_f);
  }
  copy(C_f, C[by * bm, bx * bn]);
}
)";

tlc::target::TargetDesc h100() { return *tlc::target::resolveTarget("h100-sxm"); }

// A ranking with the given predicted seconds per configuration name ("a", "b", ...).
Recommendation ranking(std::vector<std::pair<std::string, double>> times) {
  Recommendation r;
  std::sort(times.begin(), times.end(), [](auto &x, auto &y) { return x.second < y.second; });
  for (auto &[name, seconds] : times) {
    Candidate c;
    c.config = {{"tile", name}};
    c.legal = true;
    c.prediction.seconds = seconds;
    r.ranked.push_back(c);
  }
  return r;
}

std::string nameOf(const Config &c) { return c.front().value; }

} // namespace

TEST_CASE("bucket edges are geometric means of neighbouring sizes", "[recommend][buckets]") {
  BucketAxis m{"M", {16, 256, 4096}};
  CHECK(m.edges() == std::vector<int64_t>{64, 1024});
  CHECK(m.bucketOf(0) == 0); // an empty problem still has a bucket
  CHECK(m.bucketOf(1) == 0);
  CHECK(m.bucketOf(63) == 0);
  CHECK(m.bucketOf(64) == 1);
  CHECK(m.bucketOf(1023) == 1);
  CHECK(m.bucketOf(1024) == 2);
  CHECK(m.bucketOf(int64_t(1) << 40) == 2);
  CHECK(m.rangeStr(0) == "[1, 64)");
  CHECK(m.rangeStr(2) == "[1024, inf)");
  // Each representative stays inside its own bucket, also for neighbours 1 apart.
  for (std::vector<int64_t> reps : {std::vector<int64_t>{1, 2}, {100, 101}, {3, 5, 1000}}) {
    BucketAxis a{"N", reps};
    for (size_t i = 0; i < reps.size(); ++i)
      CHECK(a.bucketOf(reps[i]) == i);
  }
  CHECK(defaultRepresentatives() == std::vector<int64_t>{16, 256, 1024, 4096});
}

TEST_CASE("a bucket grid indexes the cross product, the last axis fastest", "[recommend][buckets]") {
  BucketGrid grid({{"M", {16, 256, 4096}}, {"N", {128, 8192}}});
  REQUIRE(grid.size() == 6);
  for (size_t i = 0; i < grid.size(); ++i) {
    std::map<std::string, int64_t> rep = grid.representative(i);
    CHECK(grid.indexOf({rep["M"], rep["N"]}) == i);
  }
  CHECK(grid.representative(1) == std::map<std::string, int64_t>{{"M", 16}, {"N", 8192}});
  CHECK(grid.indexOf({5000, 10}) == 4);
  CHECK(grid.describe(5) == "M in [1024, inf), N in [1024, inf)");
}

TEST_CASE("variants: each bucket runs its best chosen configuration", "[recommend][buckets]") {
  // Three buckets, each with its own specialist (a, b, c) and a compromise (d).
  std::vector<Recommendation> buckets = {
      ranking({{"a", 1.0}, {"b", 3.0}, {"c", 3.0}, {"d", 1.3}}),
      ranking({{"a", 3.0}, {"b", 1.0}, {"c", 3.0}, {"d", 1.3}}),
      ranking({{"a", 3.0}, {"b", 3.0}, {"c", 1.0}, {"d", 1.2}}),
  };
  SECTION("one variant: the best worst case") {
    VariantChoice v = chooseVariants(buckets, 1, 0.03);
    REQUIRE(v.variants.size() == 1);
    CHECK(nameOf(v.variants[0]) == "d");
    CHECK(v.variantOfBucket == std::vector<size_t>{0, 0, 0});
    CHECK(v.slowdown[0] == Approx(1.3));
    CHECK(v.slowdown[2] == Approx(1.2));
  }
  SECTION("enough variants: every bucket at its best") {
    VariantChoice v = chooseVariants(buckets, 4, 0.03);
    REQUIRE(v.variants.size() == 3); // d would not improve any bucket
    for (size_t b = 0; b < 3; ++b) {
      CHECK(v.slowdown[b] == Approx(1.0));
      CHECK(nameOf(v.variants[v.variantOfBucket[b]]) == std::string(1, char('a' + b)));
    }
  }
  SECTION("two variants: a specialist and the compromise for the rest") {
    VariantChoice v = chooseVariants(buckets, 2, 0.03);
    REQUIRE(v.variants.size() == 2);
    // The compromise serves two buckets, so it comes first (the fallback).
    CHECK(nameOf(v.variants[0]) == "d");
    double worst = *std::max_element(v.slowdown.begin(), v.slowdown.end());
    CHECK(worst == Approx(1.3));
  }
}

TEST_CASE("variants: tolerance, absent configurations and greedy traps", "[recommend][buckets]") {
  SECTION("a configuration within tolerance everywhere needs no second variant") {
    std::vector<Recommendation> buckets = {ranking({{"a", 1.0}, {"b", 1.02}}),
                                           ranking({{"a", 1.02}, {"b", 1.0}})};
    CHECK(chooseVariants(buckets, 4, 0.03).variants.size() == 1);
    CHECK(chooseVariants(buckets, 4, 0.01).variants.size() == 2);
  }
  SECTION("a configuration missing from a bucket never serves it") {
    std::vector<Recommendation> buckets = {ranking({{"a", 1.0}, {"b", 1.5}}), ranking({{"b", 1.0}})};
    VariantChoice v = chooseVariants(buckets, 1, 0.03);
    REQUIRE(v.variants.size() == 1);
    CHECK(nameOf(v.variants[0]) == "b");
  }
  SECTION("buckets with no legal configuration run the fallback") {
    std::vector<Recommendation> buckets = {ranking({{"a", 1.0}}), Recommendation()};
    VariantChoice v = chooseVariants(buckets, 2, 0.03);
    CHECK(v.variantOfBucket == std::vector<size_t>{0, 0});
    CHECK(v.slowdown[1] == 0); // unknown
  }
  SECTION("the local search escapes ties for the worst bucket") {
    // Greedy picks the compromise c first (worst 1.5); no single addition then lowers the
    // worst (buckets 0 and 1 both sit at 1.5), but {a, b} has worst 1.1.
    std::vector<Recommendation> buckets = {
        ranking({{"a", 1.0}, {"b", 3.0}, {"c", 1.5}}),
        ranking({{"a", 3.0}, {"b", 1.0}, {"c", 1.5}}),
        ranking({{"a", 1.1}, {"b", 1.1}, {"c", 1.0}}),
    };
    VariantChoice v = chooseVariants(buckets, 2, 0.03);
    REQUIRE(v.variants.size() == 2);
    std::vector<std::string> names = {nameOf(v.variants[0]), nameOf(v.variants[1])};
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"a", "b"});
    CHECK(*std::max_element(v.slowdown.begin(), v.slowdown.end()) == Approx(1.1));
  }
}

TEST_CASE("variants: NaN predictions still give one variant", "[recommend][buckets]") {
  // No set improves on the worst score when every loss is NaN: the choice used to be empty,
  // and its callers took variants.front().
  double nan = std::nan("");
  std::vector<Recommendation> buckets = {ranking({{"a", nan}, {"b", nan}}),
                                         ranking({{"a", nan}, {"b", 1.0}})};
  VariantChoice v = chooseVariants(buckets, 4, 0.03);
  REQUIRE(v.variants.size() >= 1);
  CHECK(v.variantOfBucket.size() == 2);
}

TEST_CASE("one Recommender ranks several buckets like separate rankings", "[recommend][buckets]") {
  RecommendOptions opts;
  opts.kernel = "g";
  opts.onlyAuto = true;
  opts.reuseCompilations = true;
  auto rec = Recommender::create(kGemm, "test.tl", opts, h100());
  REQUIRE(bool(rec));
  CHECK((*rec)->dynamicSymbols() == std::vector<std::string>{"M", "K", "N"});
  for (int64_t m : {4096, 16, 4096}) { // the third ranking reuses every compilation
    std::map<std::string, int64_t> shapes = {{"M", m}, {"N", 2048}, {"K", 1024}};
    auto shared = (*rec)->rank(shapes);
    RecommendOptions alone = opts;
    alone.reuseCompilations = false;
    alone.assumed = shapes;
    auto fresh = rank(kGemm, "test.tl", alone, h100());
    REQUIRE(bool(shared));
    REQUIRE(bool(fresh));
    INFO("M=" << m);
    REQUIRE(shared->ranked.size() == fresh->ranked.size());
    CHECK(shared->illegal.size() == fresh->illegal.size());
    for (size_t i = 0; i < shared->ranked.size(); ++i) {
      CHECK(configStr(shared->ranked[i].config) == configStr(fresh->ranked[i].config));
      CHECK(shared->ranked[i].prediction.seconds == fresh->ranked[i].prediction.seconds);
    }
  }
}

TEST_CASE("tiny problems keep a tile the warps can split", "[recommend][buckets]") {
  // At M = N = K = 16 tiles are trimmed to the problem, but 16x16 cannot be split over four
  // warps: the two smallest tile sizes stay in the space.
  RecommendOptions opts;
  opts.kernel = "g";
  opts.onlyAuto = true;
  opts.assumed = {{"M", 16}, {"N", 16}, {"K", 16}};
  auto r = rank(kGemm, "test.tl", opts, h100());
  REQUIRE(bool(r));
  REQUIRE(r->knobs.size() >= 2);
  CHECK(r->knobs[0].values == std::vector<std::string>{"16", "32"});
  CHECK(!r->ranked.empty());
}
