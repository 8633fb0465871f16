// The naming scheme of generated C++ (lower/Naming.h, frontend/CppNames.h).
#include "frontend/CppNames.h"
#include "lower/Naming.h"

#include <catch2/catch.hpp>

#include <set>

using namespace tlc;
using namespace tlc::lower;

TEST_CASE("reserved names of generated C++", "[naming]") {
  for (const char *n : {"class", "new", "double", "this", "int", "template", "auto", "and", "or",
                        "not", "xor_eq", "co_await", "char8_t", "final", "import", "typeof"})
    CHECK(isReservedInGeneratedCode(n));
  for (const char *n : {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "main", "tl",
                        "tlc", "std", "int64_t", "size_t", "cudaStream_t", "cudaGetLastError",
                        "dim3", "float4", "uint2", "tlc_ceildiv", "INT32_MAX", "NULL", "EOF",
                        "NAN", "EINVAL", "TLC_F16", "M_PI", "M_PIf", "errno", "assert", "stdin",
                        "_Bool", "__syncthreads", "a__b", "linux"})
    CHECK(isReservedInGeneratedCode(n));
  // Ordinary names, upper-case ones included, stay as written.
  for (const char *n : {"A", "M", "K", "QK", "A_s", "C_f", "row_max", "x", "bx", "scale", "s",
                        "next", "tid", "valid", "Q_shared", "W1"})
    CHECK_FALSE(isReservedInGeneratedCode(n));
}

TEST_CASE("cppName keeps user names visible and out of the generated space", "[naming]") {
  CHECK(cppName("A") == "A");
  CHECK(cppName("next") == "next");
  CHECK(cppName("class") == "u_class");
  CHECK(cppName("tl_tid") == "u_tl_tid");
  CHECK(cppName("u_class") == "u_u_class");
  CHECK(cppName("stream") == "u_stream");
  CHECK(cppName("kAligned") == "u_kAligned");
  // One-to-one, and never a generated name.
  std::set<std::string> seen;
  for (const char *n : {"class", "u_class", "u_u_class", "x", "u_x", "tl_x", "stream", "u_stream"}) {
    std::string c = cppName(n);
    CHECK(seen.insert(c).second);
    CHECK_FALSE(llvm::StringRef(c).startswith("tl_"));
    CHECK_FALSE(isReservedInGeneratedCode(c));
  }
}

TEST_CASE("qualified C++ names", "[naming]") {
  CHECK(checkQualifiedName("fn", false).empty());
  CHECK(checkQualifiedName("a::b::fn", false).empty());
  CHECK(checkQualifiedName("::fn", true).empty());
  CHECK(checkQualifiedName("__expf", true).empty());
  CHECK_FALSE(checkQualifiedName("::fn", false).empty());
  CHECK_FALSE(checkQualifiedName("", true).empty());
  CHECK_FALSE(checkQualifiedName("a::", true).empty());
  CHECK_FALSE(checkQualifiedName("a:::b", true).empty());
  CHECK_FALSE(checkQualifiedName("f(); x", true).empty());
  CHECK_FALSE(checkQualifiedName("1f", true).empty());
  CHECK(checkQualifiedName("a::new", true) == "'new' is a C++ keyword");
}

TEST_CASE("namespaces of generated code", "[naming]") {
  CHECK(checkNamespace("kernels").empty());
  CHECK(checkNamespace("a::b").empty());
  CHECK_FALSE(checkNamespace("bad-name").empty());
  CHECK_FALSE(checkNamespace("class").empty());
  CHECK_FALSE(checkNamespace("a::tl").empty());
  CHECK_FALSE(checkNamespace("std").empty());
  CHECK_FALSE(checkNamespace("a::").empty());
  CHECK(flatNamespace("a::b") == "a_b");
  CHECK(flatNamespace("kernels") == "kernels");
}
