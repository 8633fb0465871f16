// XOR swizzles for bank-conflict-free shared memory, with CuTe's Swizzle<B, M, S> meaning:
//
//   offset ^ (((offset >> (M + S)) & (2^B - 1)) << M)
//
// The B bits starting at M + S (the row, in the usual use) are XORed into the B bits
// starting at M (which 2^M-unit chunk of the row). M keeps 2^M consecutive units together
// (a 16-byte vector for ldmatrix and cp.async), S is the distance between the two fields.
// With S >= B the fields do not overlap and the swizzle is its own inverse.
//
// The 128-byte swizzle of CUTLASS is Swizzle<3,4,3> on byte offsets: 8 rows of 128 bytes
// whose 16-byte chunks are permuted by the row index, so the 8 rows one ldmatrix phase
// reads land in 8 different 16-byte bank groups. On f16 element offsets the same swizzle
// is Swizzle<3,3,3>.
#pragma once

#include "analysis/IntExpr.h"

#include <cstdint>
#include <string>

namespace tlc {

struct Swizzle {
  unsigned bits = 0;  // B
  unsigned base = 0;  // M
  unsigned shift = 0; // S

  // The shared-memory swizzle for rows of `swizzleBytes` (32, 64 or 128) bytes on offsets
  // counted in elements of `elementBits` bits (8, 16, 32, 64; sub-byte types as well).
  static Swizzle forSharedRows(int64_t swizzleBytes, int64_t elementBits);

  bool isIdentity() const { return bits == 0; }
  int64_t apply(int64_t offset) const;
  IntExpr apply(const IntExpr &offset) const;
  // "Swizzle<3,4,3>".
  std::string str() const;
  bool operator==(const Swizzle &o) const {
    return bits == o.bits && base == o.base && shift == o.shift;
  }
};

} // namespace tlc
