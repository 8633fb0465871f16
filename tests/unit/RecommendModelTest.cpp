// The cost model's arithmetic on hand-computed cases: the work of a GEMM tile configuration
// (FLOPs, bytes per level, reuse within a wave), occupancy, the block order of
// swizzle_blocks, and the roofline terms.
#include "recommend/BlockOrder.h"
#include "recommend/CandidateCompiler.h"
#include "recommend/CostModel.h"
#include "target/Descriptor.h"
#include "recommend/Work.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace tlc;
using namespace tlc::recommend;

namespace {

// gemm.tl without swizzle_blocks, so that blocks run in plain row-major order.
const char *kGemm = R"(
kernel gemm<block_M = 128, block_N = 128, block_K = 32, stages = 3, threads = 128,
            policy = square, accum: dtype = f32>(A: f16[M, K], B: f16[K, N], C: out f16[M, N])
  grid(ceildiv(N, block_N), ceildiv(M, block_M)) threads(threads) as (bx, by)
{
  A_s = shared f16[block_M, block_K];
  B_s = shared f16[block_K, block_N];
  C_f = fragment accum[block_M, block_N];
  clear(C_f);
  for k in pipelined(ceildiv(K, block_K), stages = stages) {
    copy(A[by * block_M, k * block_K], A_s);
    copy(B[k * block_K, bx * block_N], B_s);
    gemm(A_s, B_s, C_f, policy = policy);
  }
  copy(C_f, C[by * block_M, bx * block_N]);
}
)";

// The mma.sync accounting below is the sm_80 path's (what an H100 runs for --target sm_80);
// on sm_90a the same GEMM takes wgmma, checked by its own test.
std::unique_ptr<CandidateCompiler> compilerFor(const char *source, const char *kernel,
                                               std::vector<std::string> defines,
                                               const char *target = "sm_80") {
  std::vector<Define> ds;
  for (const std::string &d : defines)
    ds.push_back(*parseDefine(d));
  auto cc = CandidateCompiler::create(source, "test.tl", kernel, ds, *tlc::target::lookupTarget(target));
  REQUIRE(bool(cc));
  return std::move(*cc);
}

const GlobalAccess &accessTo(const BlockWork &w, llvm::StringRef tensor) {
  auto it = llvm::find_if(w.global, [&](const GlobalAccess &a) { return a.tensor->name == tensor; });
  REQUIRE(it != w.global.end());
  return *it;
}

} // namespace

TEST_CASE("work of a 128x128x32 GEMM tile on 1024^3", "[recommend][model]") {
  auto cc = compilerFor(kGemm, "gemm", {"M=1024", "N=1024", "K=1024"});
  auto c = cc->compile({});
  INFO(c->diagnostics);
  REQUIRE(c->graph);
  std::optional<GridShape> grid = gridOf(*c->kernel, ExprEvaluator());
  REQUIRE(grid);
  CHECK(grid->dims[0] == 8);
  CHECK(grid->dims[1] == 8);
  CHECK(grid->blocks() == 64);

  BlockWork w = analyzeWork(*c->graph, *grid, ExprEvaluator());
  // 2 * 128 * 128 * 32 per k-step, 1024 / 32 = 32 k-steps.
  CHECK(w.tensorFlops.at(DType::F16) == 2.0 * 128 * 128 * 1024);
  CHECK(w.tensorFlopsTotal() * 64 == 2.0 * 1024 * 1024 * 1024);
  // A: a 128x32 f16 tile per k-step, at the block's row of tiles (by is block index 1).
  const GlobalAccess &a = accessTo(w, "A");
  CHECK(a.bytes == 128.0 * 32 * 2 * 32);
  CHECK(a.blockDims == 2u);
  CHECK(!a.write);
  const GlobalAccess &b = accessTo(w, "B");
  CHECK(b.bytes == 32.0 * 128 * 2 * 32);
  CHECK(b.blockDims == 1u);
  const GlobalAccess &cOut = accessTo(w, "C");
  CHECK(cOut.write);
  CHECK(cOut.bytes == 128.0 * 128 * 2);
  CHECK(cOut.blockDims == 3u);
  // Shared: both tiles written once per k-step; the square policy splits 4 warps 2x2, so
  // each warp reads half of A and half of B and each tile is read twice.
  CHECK(w.sharedBytes == 32.0 * (2 * 8192 + 2 * 8192 + 2 * 8192));
  CHECK(w.cudaOps == 128.0 * 128); // clear(C_f)
  CHECK(w.barriers == 32);
  // Two k-steps (32 KiB) prefetched ahead with three stages.
  CHECK(w.bytesInFlight == 2.0 * 16384);
  CHECK(w.exposedLoads == 0);
  // Warp tile 64x64: 4 x 8 m16n8 tiles; ldmatrix'd operands 4 x 4 + 8 x 2 registers.
  CHECK(w.mmaPerWarpStep == 32);
  CHECK(w.gemmOperandRegisters == 32);
}

TEST_CASE("work of a 128x128x32 GEMM tile on wgmma (sm_90a)", "[recommend][model]") {
  auto cc = compilerFor(kGemm, "gemm", {"M=1024", "N=1024", "K=1024"}, "sm_90a");
  auto c = cc->compile({});
  REQUIRE(c->graph);
  GridShape grid = *gridOf(*c->kernel, ExprEvaluator());
  BlockWork w = analyzeWork(*c->graph, grid, ExprEvaluator());
  CHECK(w.tensorFlops.at(DType::F16) == 2.0 * 128 * 128 * 1024);
  // Per k-step the copies write A_s and B_s (8 KiB each); one warpgroup owns the whole tile
  // and issues two m64n128k16 per 16-deep step, one per 64-row block: each reads its A rows
  // (A once in all) and the whole of B (B twice).
  // The 128x128 f16 output tile leaves through shared memory (infer/StoreStaging): written
  // once, read once.
  CHECK(w.sharedBytes == 32.0 * (8192 + 8192 + 8192 + 2 * 8192) + 2 * 32768);
  // Each warp's share: 16 rows of each of the two 64-row blocks, 16 n8 columns.
  CHECK(w.mmaPerWarpStep == 32);
  CHECK(w.gemmOperandRegisters == 0);
  bool sawWgmma = false;
  c->graph->walk([&](const tlc::ftg::Node &n) {
    if (n.kind == tlc::ftg::NodeKind::Gemm) {
      sawWgmma = n.warpgroupMma;
      CHECK(n.instrN == 128);
      CHECK(n.warpsM == 1);
      CHECK(n.warpsN == 1);
    }
  });
  CHECK(sawWgmma);
}

TEST_CASE("the H100 models wgmma kernels on the warpgroup path, warp-specialized", "[recommend][model]") {
  tlc::target::TargetDesc h100 = *tlc::target::resolveTarget("h100-sxm");
  const tlc::target::TensorPath &wg = h100.tensorPath(/*warpgroup=*/true);
  REQUIRE(wg.name == "wgmma");
  REQUIRE(wg.stepCycles > 0);
  const double rate = wg.tflops.at(DType::F16) * 1e12;

  SECTION("one consumer warpgroup and a producer warp, two blocks per SM") {
    auto cc = compilerFor(kGemm, "gemm", {"M=4096", "N=4096", "K=4096"}, "sm_90a");
    auto c = cc->compile({});
    REQUIRE(c->graph);
    GridShape grid = *gridOf(*c->kernel, ExprEvaluator());
    BlockWork w = analyzeWork(*c->graph, grid, ExprEvaluator());
    CHECK(w.warpgroupMma);
    // One warpgroup owns the 128x128 tile: per k-step 2 * 128 * 128 * 32 FLOPs.
    CHECK(w.warpgroupStepFlops == 2.0 * 128 * 128 * 32);
    // The warp-specialized loop waits for each group (its producer runs ahead).
    CHECK(!w.groupsInFlight);
    REQUIRE(w.bulk);
    CHECK(w.bulk.producers == 32);
    CHECK(w.bulk.minBlocksPerSM == 2);
    CHECK(w.bulk.sharedBytes == 3 * (8192 + 8192) + 16 * 3);

    Occupancy o = occupancyOf(*c->graph, w, h100);
    // __launch_bounds__(160, 2): 65536 / 320 = 204 registers, 200 in units of 8; the 128
    // accumulator registers and 32 for addresses fit.
    CHECK(o.registersPerThread == 160);
    CHECK(!o.registersSpill);
    CHECK(o.blocksPerSM == 2);
    CHECK(o.warpsPerSM == 2 * 5);

    TrafficModel traffic;
    Prediction p = predict(*c->graph, grid, w, h100, 0, traffic);
    REQUIRE(p.legal);
    // 1024 blocks: the busiest SM runs 8, two at a time; each warpgroup is busy W / (W + step)
    // of its time, and the SM's two warpgroups add up.
    double W = 2.0 * 128 * 128 * 32 / (rate / 132) * 1.83e9;
    double fill = std::min(1.0, 2 * W / (W + wg.stepCycles));
    auto it = llvm::find_if(p.terms, [](const Term &t) { return t.name == "tensor core"; });
    REQUIRE(it != p.terms.end());
    CHECK(it->seconds == Approx(8 * 2.0 * 128 * 128 * 4096 / (rate / 132 * fill)));
  }

  SECTION("two consumer warpgroups and a producer warpgroup that gives them registers") {
    auto cc = compilerFor(kGemm, "gemm",
                          {"M=4096", "N=4096", "K=4096", "block_N=256", "block_K=64", "stages=4", "threads=256"},
                          "sm_90a");
    auto c = cc->compile({});
    REQUIRE(c->graph);
    GridShape grid = *gridOf(*c->kernel, ExprEvaluator());
    BlockWork w = analyzeWork(*c->graph, grid, ExprEvaluator());
    CHECK(w.warpgroupStepFlops == 2.0 * 64 * 256 * 64); // warpgroups split M
    CHECK(!w.groupsInFlight);
    REQUIRE(w.bulk);
    CHECK(w.bulk.producers == 128);
    CHECK(w.bulk.producerRegisters == 40);
    CHECK(w.bulk.consumerRegisters == 232); // (65536 - 128 * 40) / 256, in units of 8
    Occupancy o = occupancyOf(*c->graph, w, h100);
    CHECK(o.blocksPerSM == 1);
    CHECK(o.warpsPerSM == 12);
    CHECK(!o.registersSpill);
  }

  SECTION("without wgmma (the sm_80 path) the per-warp path stays") {
    auto cc = compilerFor(kGemm, "gemm", {"M=4096", "N=4096", "K=4096"});
    auto c = cc->compile({});
    REQUIRE(c->graph);
    GridShape grid = *gridOf(*c->kernel, ExprEvaluator());
    BlockWork w = analyzeWork(*c->graph, grid, ExprEvaluator());
    CHECK(!w.warpgroupMma);
    CHECK(!w.bulk);
  }
}

TEST_CASE("an f16 accumulator holds half the registers of an f32 one", "[recommend][model]") {
  // f16 elements pack in pairs into 32-bit registers: 64 accumulator registers + 32 operand +
  // 32 addresses = 128 per thread, where f32 needs 192 (below); three blocks fit.
  auto cc = compilerFor(kGemm, "gemm", {"M=1024", "N=1024", "K=1024", "accum=f16"});
  auto c = cc->compile({});
  REQUIRE(c->graph);
  GridShape grid = *gridOf(*c->kernel, ExprEvaluator());
  BlockWork w = analyzeWork(*c->graph, grid, ExprEvaluator());
  Occupancy o = occupancyOf(*c->graph, w, *tlc::target::resolveTarget("h100-sxm"));
  CHECK(o.registersPerThread == 128);
  CHECK(!o.registersSpill);
}

TEST_CASE("occupancy and roofline terms of the 1024^3 GEMM on the H100", "[recommend][model]") {
  auto cc = compilerFor(kGemm, "gemm", {"M=1024", "N=1024", "K=1024"});
  auto c = cc->compile({});
  REQUIRE(c->graph);
  GridShape grid = *gridOf(*c->kernel, ExprEvaluator());
  BlockWork w = analyzeWork(*c->graph, grid, ExprEvaluator());
  tlc::target::TargetDesc h100 = *tlc::target::resolveTarget("h100-sxm");

  Occupancy o = occupancyOf(*c->graph, w, h100);
  // 128 accumulator registers + 32 operand + 32 addresses = 192 per thread, 24576 per
  // block: two blocks in 65536 registers (shared memory would allow four).
  CHECK(o.registersPerThread == 192);
  CHECK(!o.registersSpill);
  CHECK(o.blocksPerSM == 2);
  CHECK(o.limitedBy == "registers");
  CHECK(c->graph->sharedBytes == 2 * 3 * 8192);

  TrafficModel traffic;
  Prediction p = predict(*c->graph, grid, w, h100, 0, traffic);
  REQUIRE(p.legal);
  // All 64 blocks are resident at once: each A and B tile leaves HBM once (the whole of A
  // and B), C is written once.
  CHECK(p.traffic.hbmReadBytes == 2.0 * 1024 * 1024 * 2);
  CHECK(p.traffic.hbmBytes == 3.0 * 1024 * 1024 * 2);
  CHECK(p.traffic.l2Bytes == 64.0 * (2 * 262144 + 32768));
  CHECK(p.waves == 1);
  CHECK(p.lastWaveFill == Approx(64.0 / 264));
  auto term = [&](llvm::StringRef name) {
    auto it = llvm::find_if(p.terms, [&](const Term &t) { return t.name == name; });
    REQUIRE(it != p.terms.end());
    return it->seconds;
  };
  // 64 blocks on 132 SMs: the busiest SM runs one block, alone, at 1/132 of the rate; its
  // four warps are one per sub-partition, short of the descriptor's warps_needed (1.5).
  CHECK(h100.tensorPath().warpsNeeded == 1.5);
  CHECK(term("tensor core") == Approx(2.0 * 128 * 128 * 1024 / (380e12 / 132 / 1.5)));
  CHECK(term("HBM") == Approx(3.0 * 1024 * 1024 * 2 / 3.02e12));
  CHECK(term("shared") == Approx(32.0 * 6 * 8192 / (30.92e12 / 132)));
  CHECK(p.bound()->name == "tensor core");
  CHECK(p.seconds > term("tensor core"));
  CHECK(p.arithmeticIntensity == Approx((2.0 * 1024 * 1024 * 1024 + 64 * 16384) / (6.0 * 1024 * 1024)));
}

TEST_CASE("swizzle_blocks renumbers blocks like tl::swizzle_blocks", "[recommend][model]") {
  GridShape g;
  g.dims[0] = 4;
  g.dims[1] = 4;
  // Row-major: ids run along x.
  CHECK(blockIndexOf(5, g, 0) == std::array<int64_t, 3>{1, 1, 0});
  // Panels of two rows, column by column: 0 -> (0,0), 1 -> (0,1), 2 -> (1,0), 9 -> (0,3).
  CHECK(blockIndexOf(1, g, 2) == std::array<int64_t, 3>{0, 1, 0});
  CHECK(blockIndexOf(2, g, 2) == std::array<int64_t, 3>{1, 0, 0});
  CHECK(blockIndexOf(9, g, 2) == std::array<int64_t, 3>{0, 3, 0});
  // A last panel with fewer rows than the panel.
  GridShape odd;
  odd.dims[0] = 2;
  odd.dims[1] = 3;
  CHECK(blockIndexOf(4, odd, 2) == std::array<int64_t, 3>{0, 2, 0});
  CHECK(blockIndexOf(5, odd, 2) == std::array<int64_t, 3>{1, 2, 0});
}

TEST_CASE("L2 reuse within a wave depends on the block order", "[recommend][model]") {
  // A 4x4 grid, 4 blocks per wave, one byte of "A" per row of blocks and of "B" per column.
  GridShape g;
  g.dims[0] = 4;
  g.dims[1] = 4;
  ftg::Buffer A, B;
  A.name = "A";
  B.name = "B";
  BlockWork w;
  w.global.push_back({&A, false, false, /*blockDims=*/2u, 1.0});
  w.global.push_back({&B, false, false, /*blockDims=*/1u, 1.0});
  TrafficModel m;
  // Row-major: a wave is one row of blocks, 1 A tile and 4 B tiles, four times.
  Traffic rows = m.traffic(w, g, 4, 0);
  CHECK(rows.hbmReadBytes == 4 * (1 + 4));
  CHECK(rows.l2ReadBytes == 2 * 16);
  // Panels of two rows: a wave is a 2x2 patch, 2 A tiles and 2 B tiles.
  Traffic panels = m.traffic(w, g, 4, 2);
  CHECK(panels.hbmReadBytes == 4 * (2 + 2));
  // Every block resident at once: each tile once.
  CHECK(m.traffic(w, g, 16, 0).hbmReadBytes == 4 + 4);
  // Waves of 3 blocks in row-major order: ids 0-2 touch rows {0} and columns {0,1,2}, 3-5
  // rows {0,1} and columns {3,0,1}, and so on; the partial last wave (id 15) is one block.
  Traffic partial = m.traffic(w, g, 3, 0);
  CHECK(partial.hbmReadBytes == (1 + 3) + (2 + 3) + (2 + 3) + (1 + 3) + (1 + 3) + (1 + 1));
}

TEST_CASE("a copy moves the slice it names, not the whole tile", "[recommend][model]") {
  const char *source = R"(
kernel rows<bm = 64>(X: f16[N], Y: out f16[N]) grid(1) threads(128) as (bx) {
  S = shared f16[bm, 1024];
  copy(X[0], S[0, :]);
  copy(S[0, :], Y[0]);
}
)";
  auto cc = compilerFor(source, "rows", {"N=1024"});
  auto c = cc->compile({});
  INFO(c->diagnostics);
  REQUIRE(c->graph);
  BlockWork w = analyzeWork(*c->graph, *gridOf(*c->kernel, ExprEvaluator()), ExprEvaluator());
  // One row of 1024 f16 in and out, not the 64 rows of S.
  CHECK(accessTo(w, "X").bytes == 2048);
  CHECK(accessTo(w, "Y").bytes == 2048);
  CHECK(w.sharedBytes == 2 * 2048);
  // The load is not in a pipelined loop: the block waits for it.
  CHECK(w.exposedLoads == 1);
}

// A descriptor built in code (not parsed, so not range-checked) with a rate of 0: the terms
// divide by it. The prediction must make the candidate illegal, never rank a NaN or an
// infinity (NaN breaks every sort and, before, crashed chooseVariants).
TEST_CASE("a prediction is finite or the candidate is illegal", "[recommend][model]") {
  auto cc = compilerFor(kGemm, "gemm", {"M=1024", "N=1024", "K=1024"});
  auto c = cc->compile({});
  REQUIRE(c->graph);
  std::optional<GridShape> grid = gridOf(*c->kernel, ExprEvaluator());
  REQUIRE(grid);
  BlockWork w = analyzeWork(*c->graph, *grid, ExprEvaluator());
  for (double tlc::target::TargetDesc::*field : {&tlc::target::TargetDesc::hbmBandwidth, &tlc::target::TargetDesc::l2Bandwidth,
                                    &tlc::target::TargetDesc::sharedBandwidth, &tlc::target::TargetDesc::hbmLatency,
                                    &tlc::target::TargetDesc::cudaCoreRate, &tlc::target::TargetDesc::clockGHz}) {
    tlc::target::TargetDesc t = *tlc::target::resolveTarget("h100-sxm");
    t.*field = 0;
    TrafficModel traffic;
    Prediction p = predict(*c->graph, *grid, w, t, 0, traffic);
    INFO(p.seconds);
    CHECK((!p.legal || (std::isfinite(p.seconds) && p.seconds > 0)));
  }
}

TEST_CASE("an operator without a formula is counted from its access sets (cumsum)",
          "[recommend][model]") {
  // 4 scans of a 64x64 f32 shared tile in place: each reads and writes 16 KiB of shared
  // memory and does one addition per element.
  const char *source = R"(
kernel scans(A: f32[M, 64], C: out f32[M, 64])
  grid(ceildiv(M, 64)) threads(128) as (bx)
{
  X_s = shared f32[64, 64];
  copy(A[bx * 64, 0], X_s);
  for t in serial(4) {
    cumsum(X_s, X_s, dim = 1);
  }
  copy(X_s, C[bx * 64, 0]);
}
)";
  auto cc = compilerFor(source, "scans", {"M=1024"});
  auto c = cc->compile({});
  INFO(c->diagnostics);
  REQUIRE(c->graph);
  BlockWork w = analyzeWork(*c->graph, *gridOf(*c->kernel, ExprEvaluator()), ExprEvaluator());
  // The two copies move the tile through shared memory once each.
  CHECK(w.sharedBytes == 2 * 16384.0 + 4 * 2 * 16384.0);
  CHECK(w.cudaOps == 4 * 4096.0);
}
