// What the host side of a kernel needs to know (its launcher, C entry point and shape
// dispatch, codegen/HostLauncher.h), taken from the kernel declaration here so that codegen/
// never sees the AST.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
}
namespace tlc {
class DiagnosticEngine;
class KernelDecl;
namespace ftg {
class Graph;
}
} // namespace tlc

namespace tlc::lower {

// The most dimensions a tensor parameter may have: TLC_MAX_RANK of runtime/tlc/runtime.h,
// the size of tlc_tensor_view's shape and stride arrays.
constexpr size_t kMaxTensorRank = 8;

struct HostParam {
  std::string name;     // as declared (messages)
  std::string cpp;      // C++ spelling (lower/Naming.h)
  bool scalar = false;
  std::string hostType; // scalars: the host type they travel as
  std::string dtype;    // tensors: the runtime dtype code (TLC_F16)
  bool isOut = false;
  // A tensor of 4-bit elements packed two per byte (i4, u4, f4e2m1): the caller passes bytes.
  bool packed() const { return !scalar && (dtype == "TLC_I4" || dtype == "TLC_U4" || dtype == "TLC_F4E2M1"); }
  // Per dimension: the shape symbol it names (bound by the first such dimension, checked at
  // the others), or empty and the extent as a host expression (checked).
  std::vector<std::string> symbol, extent;
};

struct HostShapeSymbol {
  std::string name, cpp;
  std::string constant; // bound by -D at compile time; empty: bound from the tensors
};

// The launcher's flag that launch arithmetic sets on a zero divisor (runtime/tlc/runtime.h's
// tlc_floordiv, tlc_floormod, tlc_ceildiv): declared wherever host expressions are evaluated.
inline constexpr const char *kZeroDivisorFlag = "tl_zero_divisor";
// ... and the size checks' own flag, which no error follows (SizeCheck).
inline constexpr const char *kSizeCheckZeroFlag = "tl_size_zero";

// A 32-bit value the kernel computes from the call's sizes alone (a `let` or a loop count of
// the kernel's top level: `ceildiv(kh * kw * C, block_K)`), which the launcher evaluates in 64
// bits and refuses the call where it leaves the i32 range (tlc::check::int32Range): where the
// device would wrap, the host says so with the numbers.
struct SizeCheck {
  std::string where; // file:line:col of the sub-expression
  std::string text;  // its source text
  std::string value; // host expression (int64_t; its operands are checked before it)
};

struct Launch {
  std::string kernel;    // the kernel's declared name (messages, C entry)
  std::vector<HostParam> params;
  std::vector<HostShapeSymbol> symbols;
  std::vector<std::string> grid; // host expressions of the grid extents
  // The largest tile extent: generated indices are a tile origin plus an offset within the
  // tile, and ceildiv(extent, tile) adds tile - 1, so every 32-bit value the kernel forms
  // from an extent stays below extent + this (tlc::check::indexRange).
  int64_t headroom = 1;
  std::string target;    // the --target the code was generated for
  int capability = 80;   // the compute capability it needs, major * 10 + minor (0: AMD)
  bool hip = false;      // an AMD target: the launcher calls the HIP runtime (hipStream_t, ...)
  std::string compileParams; // "block_M = 128, ..." for the banner
  std::vector<SizeCheck> sizeChecks; // innermost first (addSizeChecks)
};

Launch describeLaunch(const ftg::Graph &g);
// The sizes' i32 arithmetic of `g`'s top level (compile-time branches taken): every sum,
// difference, product, negation and shift by a constant of a `let` or a loop count whose
// operands the host knows (shape symbols, integer scalar parameters, constants, such lets; not
// through a `select`, whose arms may be what a condition guards). `sourceName` names the file
// in the checks' messages.
void addSizeChecks(Launch &launch, const ftg::Graph &g, const llvm::SourceMgr &sm, const std::string &sourceName);

// Reports tensor parameters of `k` with more dimensions than the launcher ABI carries.
bool checkTensorRanks(const KernelDecl &k, DiagnosticEngine &diags);

} // namespace tlc::lower
