// tl/intmath.h - integer division helpers with TileLang's rounding.
//
// TileLang's integer `/` and `%` round toward negative infinity (floordiv/floormod, the
// remainder has the sign of the divisor, as in Python), while C++'s truncate toward zero.
// The compiler folds constants with floor semantics and emits calls to these helpers wherever
// an operand may be negative, so the helpers must be exact for every sign combination of
// both operands. Each costs one hardware division (the quotient and remainder of `a / b`,
// `a % b` come from the same instruction) plus a compare and a select.
//
// Plain C++ (no CUDA dependencies), so that tests/unit/IntMathTest.cpp can check them on the
// host against a reference; tl/common.h includes it for device code.
//
// As with C++'s operators, b == 0 is undefined, and so is the one quotient that does not fit
// in T (the minimum value divided by -1).
#pragma once

#include <type_traits>

#include "host_device.h"

namespace tl {

namespace detail {
// True when C++'s truncated quotient of a / b (remainder r) lies above the exact quotient,
// i.e. the remainder is non-zero and its sign differs from the divisor's.
template <class T>
TL_HOST_DEVICE constexpr bool truncated_above_floor(T r, T b) {
  if constexpr (std::is_signed_v<T>)
    return r != 0 && ((r < 0) != (b < 0));
  else
    return false;
}
} // namespace detail

// floor(a / b) for every sign of a and b.
template <class T>
TL_HOST_DEVICE constexpr T floordiv(T a, T b) {
  static_assert(std::is_integral_v<T>, "tl::floordiv needs integers");
  T q = a / b;
  return detail::truncated_above_floor<T>(a % b, b) ? T(q - 1) : q;
}

// a - b * floordiv(a, b): zero or of the sign of b, |result| < |b|.
template <class T>
TL_HOST_DEVICE constexpr T floormod(T a, T b) {
  static_assert(std::is_integral_v<T>, "tl::floormod needs integers");
  T r = a % b;
  return detail::truncated_above_floor<T>(r, b) ? T(r + b) : r;
}

// ceil(a / b) for every sign of a and b (the `ceildiv` builtin, folded the same way by the
// compiler). Unlike (a + b - 1) / b it cannot overflow for a near the top of T's range.
template <class T>
TL_HOST_DEVICE constexpr T ceildiv(T a, T b) {
  static_assert(std::is_integral_v<T>, "tl::ceildiv needs integers");
  T q = a / b;
  T r = a % b;
  // The truncated quotient lies below the exact one when the remainder is non-zero and has
  // the divisor's sign (for unsigned T: whenever it is non-zero).
  bool below = r != 0;
  if constexpr (std::is_signed_v<T>)
    below = below && ((r < 0) == (b < 0));
  return below ? T(q + 1) : q;
}

// Round `a` up to a multiple of `b` (b > 0, a >= 0: sizes).
template <class T>
TL_HOST_DEVICE constexpr T round_up(T a, T b) {
  return ceildiv(a, b) * b;
}

// Where column `k` of a convolution's implicit GEMM lies when taps and channels share the K
// dimension (im2col's folded form, compiler/ops/Im2col.cpp): k = (r * kw + s) * C + c, filter
// tap (r, s), channel c < C. Placing the cursor divides once; next() steps to column k + 1
// with a compare and an add, so a thread's run of consecutive columns costs one division, not
// one per element. Negative columns place (r, s) before the filter's first tap, consistently
// with next(): the caller tests 0 <= k < kh * kw * C before using r, s and c.
struct TapCursor {
  int k, r, s, c;
  TL_HOST_DEVICE constexpr TapCursor(int column, int channels, int kw)
      : k(column), r(0), s(0), c(0) {
    if (channels <= 0 || kw <= 0) // no column is valid (K = 0): nothing to divide by
      return;
    const int tap = floordiv(column, channels);
    c = column - tap * channels;
    r = floordiv(tap, kw);
    s = tap - r * kw;
  }
  // Steps `step` columns (1, or a divisor of `channels` that c is a multiple of: the columns
  // of a vector access lie in one tap).
  TL_HOST_DEVICE constexpr void next(int channels, int kw, int step = 1) {
    k += step;
    c += step;
    if (c == channels) {
      c = 0;
      if (++s == kw) {
        s = 0;
        ++r;
      }
    }
  }
};

} // namespace tl
