// Sema tests for sizes that must not overflow: -D integers, shape symbols and tensor
// dimensions (i32), on-chip buffer sizes, loop bounds; and the overflow-checked helpers of
// analysis/CheckedMath.h that later stages use.
#include "FrontendTestUtil.h"

#include "analysis/CheckedMath.h"

#include <catch2/catch.hpp>

using namespace tlc;
using tlc::test::Frontend;
using tlc::test::kernelWith;

namespace {

// Sema on `source` with `defines` gives exactly one error containing `message`.
void rejectsWith(const std::string &source, llvm::StringRef message,
                 std::vector<std::string> defines = {}) {
  Frontend fe(source, std::move(defines));
  bool ok = fe.analyze();
  INFO(source << "\n" << fe.messages());
  CHECK_FALSE(ok);
  CHECK(fe.errors() == 1);
  CHECK(fe.says(message));
}

} // namespace

TEST_CASE("command-line integers are decimal or 0x hexadecimal", "[sema][params][limits]") {
  CHECK(parseIntegerOption("010") == 10); // not octal, as in the language
  CHECK(parseIntegerOption("0x10") == 16);
  CHECK(parseIntegerOption("-7") == -7);
  CHECK(parseIntegerOption(" 42 ") == 42);
  CHECK(parseIntegerOption("9223372036854775807") == INT64_MAX);
  CHECK(parseIntegerOption("-9223372036854775808") == INT64_MIN);
  for (const char *bad : {"", "-", "0x", "0b10", "0o7", "1_000", "--1", "+-1", "1e3", "0X10",
                          "9223372036854775808", "12abc"}) {
    INFO(bad);
    CHECK_FALSE(parseIntegerOption(bad));
  }
  const std::string source = "kernel k<BM = 64>() grid(1) threads(32) { let x = BM; }";
  Frontend fe(source, {"BM=010"});
  REQUIRE(fe.analyze());
  CHECK(fe.kernel().compileParams[0]->constant->getInt() == 10);
  rejectsWith(source, "-D BM=0b10: compile-time parameter 'BM' of kernel 'k' expects an integer",
              {"BM=0b10"});
}

TEST_CASE("shape symbols and tensor dimensions fit in i32", "[sema][shapes][limits]") {
  const std::string source = "kernel k(A: f16[M, 8]) grid(1) threads(32) { }";
  Frontend max(source, {"M=2147483647"});
  CHECK(max.analyze());
  rejectsWith(source, "tlc: error: -D M=2147483648: shape symbols are i32 and must be in 1..2147483647",
              {"M=2147483648"});
  rejectsWith(source, "-D M=4611686018427387905: shape symbols are i32", {"M=4611686018427387905"});
  rejectsWith("kernel k(A: f16[4611686018427387905]) grid(1) threads(32) { }",
              "test.tl:1:17: error: tensor dimension 4611686018427387905 does not fit in i32 "
              "(at most 2147483647)");
  rejectsWith("const D = 65536 * 65536;\nkernel k(A: f16[D]) grid(1) threads(32) { }",
              "test.tl:2:17: error: tensor dimension 4294967296 does not fit in i32");
}

TEST_CASE("on-chip buffer sizes are checked, with the numbers", "[sema][limits]") {
  // The products wrap to 0 (2^64 bytes... of f16) and to 0 bits: both were accepted before.
  rejectsWith(kernelWith("X_s = shared f16[4294967296, 4294967296];"),
              "test.tl:5:1: error: shared buffer 'X_s' [4294967296, 4294967296] has more than "
              "2^63 elements; on-chip buffers are limited to 16777216 bytes");
  rejectsWith(kernelWith("X_s = shared f32[2147483648, 8589934592];"),
              "shared buffer 'X_s' [2147483648, 8589934592] has more than 2^63 elements");
  rejectsWith(kernelWith("X_f = fragment f32[1073741824, 1073741824];"),
              "fragment buffer 'X_f' [1073741824, 1073741824] has 1152921504606846976 elements "
              "of 32 bits = more than 2^63 bits");
  rejectsWith(kernelWith("X_l = local f32[4096, 4096];"),
              "local buffer 'X_l' [4096, 4096] has 16777216 elements of 32 bits = 67108864 "
              "bytes; on-chip buffers are limited to 16777216 bytes");
  Frontend fits(kernelWith("X_s = shared i8[4096, 4096];"));
  CHECK(fits.analyze());
}

TEST_CASE("constant loop bounds fit the i32 loop index", "[sema][limits]") {
  rejectsWith(kernelWith("for k in serial(4611686018427387905) { }"),
              "test.tl:5:17: error: loop extent 4611686018427387905 does not fit in i32");
  rejectsWith(kernelWith("for k in serial(-4611686018427387905, 0) { }"),
              "loop start -4611686018427387905 does not fit in i32");
  rejectsWith(kernelWith("for i, j in parallel(65536, 65536) { C[i, j] = 0.0; }"),
              "test.tl:5:22: error: the parallel loop's element count 4294967296 does not fit in i32");
  Frontend fits(kernelWith("for k in serial(2147483647) { }"));
  CHECK(fits.analyze());
}

TEST_CASE("checked sizes and powers of two never overflow or loop", "[analysis][limits]") {
  CHECK(checkedProduct({4294967296, 4294967296}) == std::nullopt);
  CHECK(checkedProduct({2147483648, 8589934592}) == std::nullopt);
  CHECK(checkedProduct({64, 32, 2}) == 4096);
  CHECK(checkedBytes(3, 4) == 2);
  CHECK(checkedBytes(INT64_MAX / 8, 16) == std::nullopt);
  CHECK(powerOf2Ceil(0) == 1);
  CHECK(powerOf2Ceil(96) == 128);
  CHECK(powerOf2Ceil(kMaxPowerOf2) == kMaxPowerOf2);
  CHECK(powerOf2Ceil(kMaxPowerOf2 + 1) == kMaxPowerOf2); // a doubling loop never ended here
  CHECK(powerOf2Ceil(INT64_MAX) == kMaxPowerOf2);
  CHECK(log2Ceil(1) == 0);
  CHECK(log2Ceil(96) == 7);
  CHECK(log2Ceil(INT64_MAX) == 63);
}
