// Overflow-checked sizes and power-of-two helpers, shared by every stage that multiplies
// shapes or rounds extents to powers of two. Each rule is written once here so that no
// stage computes a wrapped byte count or loops forever doubling past 2^62.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/MathExtras.h"

#include <cstdint>
#include <optional>

namespace tlc {

// Whether v is a (positive) power of two.
inline bool isPowerOfTwo(int64_t v) { return v > 0 && llvm::isPowerOf2_64(uint64_t(v)); }

// The largest power of two an int64_t holds.
constexpr int64_t kMaxPowerOf2 = int64_t(1) << 62;

// The product of `values`, or nullopt when it does not fit in an int64_t.
inline std::optional<int64_t> checkedProduct(llvm::ArrayRef<int64_t> values) {
  int64_t product = 1;
  for (int64_t v : values)
    if (llvm::MulOverflow(product, v, product))
      return std::nullopt;
  return product;
}

// Bytes of `elements` values of `bits` bits each (rounded up to whole bytes), or nullopt
// when the bit count does not fit in an int64_t.
inline std::optional<int64_t> checkedBytes(int64_t elements, unsigned bits) {
  int64_t totalBits = 0;
  if (llvm::MulOverflow(elements, int64_t(bits), totalBits) ||
      totalBits > INT64_MAX - 7)
    return std::nullopt;
  return (totalBits + 7) / 8;
}

// The smallest power of two >= x (1 for x <= 1), saturating at kMaxPowerOf2: a caller that
// compares it with a tile size needs no larger value, and a doubling loop would never end.
inline int64_t powerOf2Ceil(int64_t x) {
  if (x <= 1)
    return 1;
  if (x > kMaxPowerOf2)
    return kMaxPowerOf2;
  return static_cast<int64_t>(llvm::PowerOf2Ceil(static_cast<uint64_t>(x)));
}

// ceil(log2(x)) for x >= 1 (0 for x <= 1): at most 63, computed without a loop.
inline unsigned log2Ceil(int64_t x) {
  return x <= 1 ? 0 : llvm::Log2_64_Ceil(static_cast<uint64_t>(x));
}

} // namespace tlc
