// How tlc spells identifiers in the C++ it generates, so that no user name can collide with
// a C++ keyword, a name of the included headers, or a name tlc invents. Two disjoint spaces:
//
//  - Every identifier tlc invents in a scope that user names share starts with `tl_`
//    (`tl_tid`, `tl_stage`, `tl_r3`, `tl_A_stride0`, `tl_gemm_kernel`): generatedName().
//    The public parameter names of the launchers (`stream`, `error`, `error_size`) and the
//    kernel template's `kAligned` keep their names and are reserved instead.
//  - A user name (kernel, tensor, scalar, shape symbol, block index, buffer, let, loop
//    variable) is written as the user wrote it, unless it is reserved in generated C++
//    (isReservedInGeneratedCode, the names above) or starts with `tl_` or `u_`: then it
//    becomes `u_<name>`. The map is one-to-one (a name starting with `u_` is always
//    prefixed, so `u_x` never meets the spelling of `x`), never yields a `tl_` name, and
//    keeps the user's name visible.
//
// Code generation must spell every user name through cppName() and every invented one through
// generatedName(); tests/compile/names.py compiles kernels whose every name is a C++ keyword
// or an identifier found in tlc's own output.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace tlc::ftg {
struct Buffer;
}

namespace tlc::lower {

// True when a user name must not be written as is (see above).
bool isReservedName(llvm::StringRef name);

// The C++ spelling of a user name.
std::string cppName(llvm::StringRef userName);

// An identifier tlc invents: `tl_` + stem. Stems of names derived from a user name put the
// user's (unmangled) name first and end with a fixed suffix (`A_stride0`, `M_bound`), so two
// derived names never meet.
inline std::string generatedName(const llvm::Twine &stem) { return ("tl_" + stem).str(); }

// The C++ spelling of a buffer: cppName() of the name its declaration gives, or, for a buffer
// a pass invented (no declaration: infer/StoreStaging's shared tiles), generatedName() of the
// stem the pass named it with.
std::string bufferName(const ftg::Buffer &b);

// The mbarrier ring on which a warp-specialized pipeline's producer announces each stage's
// bytes (lower/BulkPipeline.cpp) and its consumers wait (lower/PipelineExpansion.cpp).
inline std::string fullBarrierRing() { return generatedName("full"); }
// The mbarrier the lead copies of such a pipeline complete on (one phase, before the loop).
inline std::string leadBarrier() { return generatedName("lead"); }
// The kernel parameter whose bit i says that the rows of Kernel::vectorTensors[i] are 16-byte
// aligned (the launcher's per-tensor check); tensors past the 64th have no bit.
inline std::string alignedRowsParam() { return generatedName("aligned_rows"); }
constexpr size_t kAlignedRowBits = 64;
// A bit mask as a C++ literal: `0x5ull`.
std::string maskLiteral(uint64_t mask);
// The device or launcher expression that holds when every tensor of `mask` (bits of
// alignedRowsParam()) has aligned rows: `(tl_aligned_rows & 0x4ull) != 0` for one bit,
// `(tl_aligned_rows & 0x3ull) == 0x3ull` for several.
std::string alignedRowsTest(uint64_t mask);

// Why `ns` cannot be the C++ namespace of generated code (`a` or `a::b`, each part an
// identifier and not reserved); empty when it can.
std::string checkNamespace(llvm::StringRef ns);

// `ns` with `::` replaced by `_`, for the C entry points' prefix.
std::string flatNamespace(llvm::StringRef ns);

// `text` as the characters of a C/C++ string literal (without the quotes): `"` and `\`
// escaped, bytes outside printable ASCII as octal escapes, and the `?` of `??` escaped (a
// trigraph in strict C++14 modes).
std::string cEscaped(llvm::StringRef text);

} // namespace tlc::lower
