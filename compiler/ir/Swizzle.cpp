#include "Swizzle.h"

#include <cassert>

namespace tlc {

namespace {

unsigned exactLog2(int64_t v) {
  assert(v > 0 && (v & (v - 1)) == 0 && "expected a power of two");
  unsigned bits = 0;
  while ((int64_t(1) << bits) < v)
    ++bits;
  return bits;
}

} // namespace

Swizzle Swizzle::forSharedRows(int64_t swizzleBytes, int64_t elementBits) {
  assert((swizzleBytes == 32 || swizzleBytes == 64 || swizzleBytes == 128) &&
         "shared-memory swizzles cover 32-, 64- or 128-byte rows");
  // Chunks are 16 bytes (one ldmatrix row, one cp.async vector); the row field starts at
  // 128 bytes, one full pass over the 32 four-byte banks.
  unsigned chunkUnits = exactLog2(16 * 8 / elementBits);
  return Swizzle{exactLog2(swizzleBytes / 16), chunkUnits, 3};
}

int64_t Swizzle::apply(int64_t offset) const {
  int64_t mask = (int64_t(1) << bits) - 1;
  return offset ^ (((offset >> (base + shift)) & mask) << base);
}

IntExpr Swizzle::apply(const IntExpr &offset) const {
  if (isIdentity())
    return offset;
  IntExpr mask = (int64_t(1) << bits) - 1;
  return offset ^ (((offset >> int64_t(base + shift)) & mask) << int64_t(base));
}

std::string Swizzle::str() const {
  return "Swizzle<" + std::to_string(bits) + "," + std::to_string(base) + "," +
         std::to_string(shift) + ">";
}

} // namespace tlc
