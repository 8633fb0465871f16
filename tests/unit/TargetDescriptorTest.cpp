// Target descriptors: every built-in one loads and is self-consistent; --target names resolve;
// malformed descriptors are rejected with the field at fault.
#include "target/Descriptor.h"

#include <catch2/catch.hpp>

using namespace tlc;
using namespace tlc::target;

namespace {

std::string errorOf(llvm::StringRef json) {
  auto t = tlc::target::parseTargetDesc(json, "bad.json");
  REQUIRE(!t);
  return llvm::toString(t.takeError());
}

// A minimal valid descriptor, with `replace` substituted for `of` to break one field.
std::string descriptor(llvm::StringRef of = "", llvm::StringRef replace = "") {
  std::string s = R"({
    "name": "toy", "description": "a toy GPU", "vendor": "nvidia", "arch": "sm_80",
    "aliases": ["t"], "default_for_arch": false, "sms": 2, "clock_ghz": 1.0, "warp_size": 32,
    "limits": {"shared_bytes_per_sm": 1000, "shared_bytes_per_block": 900,
               "shared_bytes_reserved_per_block": 0, "registers_per_sm": 65536,
               "registers_per_thread": 255, "register_alloc_unit": 256, "threads_per_sm": 2048,
               "threads_per_block": 1024, "blocks_per_sm": 32},
    "memory": {"hbm_tbps": 1, "l2_tbps": 2, "shared_tbps": 3, "l2_bytes": 4096,
               "hbm_latency_ns": 500, "l2_latency_ns": 200},
    "compute": {"tensor_path": "mma_sync",
                "tensor": {"mma_sync": {"mma": [16, 8, 16], "ilp_needed": 4, "tflops": {"f16": 100}}},
                "cuda_core_tops": 10, "sfu_tops": 1},
    "overheads": {"launch_us": 2, "barrier_cycles": 40, "overlap_norm": 4}
  })";
  if (!of.empty()) {
    size_t at = s.find(of.str());
    REQUIRE(at != std::string::npos);
    s.replace(at, of.size(), replace.str());
  }
  return s;
}

} // namespace

TEST_CASE("every built-in target descriptor loads", "[recommend][target]") {
  const auto &all = tlc::target::builtinTargets();
  std::vector<std::string> names;
  for (const tlc::target::TargetDesc &t : all)
    names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"a100-sxm", "h100-sxm", "h200", "mi250x", "mi300x", "rtx4090"});
  for (const tlc::target::TargetDesc &t : all) {
    INFO(t.name);
    CHECK(t.sms > 0);
    CHECK(t.sharedPerBlock <= t.sharedPerSM);
    CHECK(t.hbmBandwidth < t.l2Bandwidth);
    CHECK(t.l2Bandwidth < t.sharedBandwidth);
    CHECK(t.tensorRate(DType::F16).has_value());
    CHECK(t.tensorRate(DType::F64) == std::nullopt);
  }
}

TEST_CASE("the H100 models mma.sync and wgmma at their measured ceilings", "[recommend][target]") {
  auto h100 = tlc::target::resolveTarget("h100");
  REQUIRE(bool(h100));
  CHECK(h100->name == "h100-sxm");
  CHECK(h100->tensorPathName == "mma_sync");
  // The measured anchors, not the datasheet: 3.02 TB/s copy, ~263 TFLOP/s mma.sync GEMM.
  CHECK(h100->hbmBandwidth == Approx(3.02e12));
  CHECK(*h100->tensorRate(DType::F16) == Approx(380e12));
  auto wgmma = llvm::find_if(h100->tensorPaths, [](const tlc::target::TensorPath &p) { return p.name == "wgmma"; });
  REQUIRE(wgmma != h100->tensorPaths.end());
  // wgmma kernels: the path's measured ceiling, between mma.sync's and the datasheet's 989.
  CHECK(h100->warpgroupPathName == "wgmma");
  CHECK(&h100->tensorPath(/*warpgroup=*/true) == &*wgmma);
  CHECK(*h100->tensorRate(DType::F16, true) > 1.5 * 380e12);
  CHECK(*h100->tensorRate(DType::F16, true) < 989e12);
  CHECK(tlc::target::resolveTarget("a100")->warpgroupPathName.empty());
  CHECK(h100->tensorPath().mmaM == 16);
  CHECK(h100->tensorPath().mmaK == 16);
}

TEST_CASE("target names, aliases, architectures and files resolve", "[recommend][target]") {
  CHECK(tlc::target::resolveTarget("sm_90a")->name == "h100-sxm");
  CHECK(tlc::target::resolveTarget("H200")->name == "h200");
  CHECK(tlc::target::resolveTarget("sm_80")->name == "a100-sxm");
  CHECK(tlc::target::resolveTarget("sm_89")->name == "rtx4090");
  CHECK(tlc::target::resolveTarget("gfx942")->name == "mi300x");
  CHECK(tlc::target::resolveTarget("gfx90a")->name == "mi250x");
  auto none = tlc::target::resolveTarget("sm_86");
  REQUIRE(!none);
  std::string why = llvm::toString(none.takeError());
  CHECK_THAT(why, Catch::Contains("no target descriptor for 'sm_86'"));
  CHECK_THAT(why, Catch::Contains("h100-sxm (sm_90a)"));
  auto missing = tlc::target::resolveTarget("/nonexistent/gpu.json");
  REQUIRE(!missing);
  CHECK_THAT(llvm::toString(missing.takeError()), Catch::Contains("cannot read target descriptor"));
}

TEST_CASE("a malformed descriptor names the field at fault", "[recommend][target]") {
  auto toy = tlc::target::parseTargetDesc(descriptor(), "toy.json");
  REQUIRE(bool(toy));
  CHECK(toy->aliases == std::vector<std::string>{"t"});
  CHECK_THAT(errorOf("[1, 2]"), Catch::Contains("the top level must be an object"));
  CHECK_THAT(errorOf("{"), Catch::Contains("bad.json: target descriptor:"));
  CHECK_THAT(errorOf(descriptor("\"sms\": 2", "\"sms\": -2")), Catch::Contains("'sms' must be an integer from 1 to 1048576 (got -2)"));
  CHECK_THAT(errorOf(descriptor("\"hbm_tbps\": 1,", "")), Catch::Contains("'memory.hbm_tbps' must be a number from 0.001 to 1e+07 (missing)"));
  CHECK_THAT(errorOf(descriptor("\"tensor_path\": \"mma_sync\",", "\"tensor_path\": \"mma_sync\", \"warpgroup_path\": \"wg\",")),
             Catch::Contains("'compute.warpgroup_path' names 'wg', which is not a key of 'compute.tensor'"));
  CHECK_THAT(errorOf(descriptor("\"tensor_path\": \"mma_sync\"", "\"tensor_path\": \"wgmma\"")),
             Catch::Contains("'compute.tensor_path' names 'wgmma', which is not a key of 'compute.tensor'"));
  CHECK_THAT(errorOf(descriptor("{\"f16\": 100}", "{\"f17\": 100}")),
             Catch::Contains("'compute.tensor.mma_sync.tflops.f17' must be a rate for a dtype"));
  CHECK_THAT(errorOf(descriptor("[16, 8, 16]", "[16, 8]")),
             Catch::Contains("'compute.tensor.mma_sync.mma' must be [M, N, K]"));
  CHECK_THAT(errorOf(descriptor("\"shared_bytes_per_block\": 900", "\"shared_bytes_per_block\": 9000")),
             Catch::Contains("exceeds 'limits.shared_bytes_per_sm'"));
}

// Integers above 2^31 used to be truncated into an int (0 SMs: a division by zero in the
// cost model) and tiny or huge rates made predictions NaN, which crashed chooseVariants.
TEST_CASE("descriptor numbers are range-checked when loaded", "[recommend][target]") {
  CHECK_THAT(errorOf(descriptor("\"sms\": 2", "\"sms\": 4294967296")),
             Catch::Contains("'sms' must be an integer from 1 to 1048576 (got 4294967296)"));
  CHECK_THAT(errorOf(descriptor("\"threads_per_sm\": 2048", "\"threads_per_sm\": 8589934592")),
             Catch::Contains("'limits.threads_per_sm' must be an integer"));
  CHECK_THAT(errorOf(descriptor("\"registers_per_sm\": 65536", "\"registers_per_sm\": 2147483648")),
             Catch::Contains("'limits.registers_per_sm' must be an integer from 1 to 2147483647"));
  CHECK_THAT(errorOf(descriptor("\"clock_ghz\": 1.0", "\"clock_ghz\": 1e-300")),
             Catch::Contains("'clock_ghz' must be a number from 0.001 to 1000 (got 1e-300)"));
  CHECK_THAT(errorOf(descriptor("\"hbm_tbps\": 1", "\"hbm_tbps\": 1e-320")),
             Catch::Contains("'memory.hbm_tbps' must be a number"));
  CHECK_THAT(errorOf(descriptor("\"sfu_tops\": 1", "\"sfu_tops\": 1e308")),
             Catch::Contains("'compute.sfu_tops' must be a number from 0.001 to 1e+07"));
  CHECK_THAT(errorOf(descriptor("\"overlap_norm\": 4", "\"overlap_norm\": 0.5")),
             Catch::Contains("'overheads.overlap_norm' must be a number from 1 to 100"));
  CHECK_THAT(errorOf(descriptor("{\"f16\": 100}", "{\"f16\": 1e-30}")),
             Catch::Contains("'compute.tensor.mma_sync.tflops.f16' must be a rate"));
  CHECK_THAT(errorOf(descriptor("[16, 8, 16]", "[16, 8, 4294967312]")),
             Catch::Contains("'compute.tensor.mma_sync.mma' must be [M, N, K] of integers from 1 to 256"));
  CHECK_THAT(errorOf(descriptor("\"warp_size\": 32", "\"warp_size\": 48")),
             Catch::Contains("'limits.threads_per_sm' must be a multiple of 'warp_size'"));
  // An error outside a tensor path is not attributed to it.
  CHECK_THAT(errorOf(descriptor("\"sms\": 2", "\"sms\": 0")), !Catch::Contains("(in compute"));
}
