// The device library's integer division helpers (stdlib/tl/intmath.h) against a reference
// computed with exact rational arithmetic: Python's `//` and `%` (floor) and ceil, for every
// sign combination of dividend and divisor, in the widths generated code uses.
#include "tl/intmath.h"
#include "tlc/runtime.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

// floor(a / b) from its definition, the largest q with q * b <= a (b > 0) or q * b >= a
// (b < 0), searched from C's truncated quotient; ceil from floor. |a|, |b| <= 2^31, so the
// products fit in int64_t.
struct Reference {
  int64_t floorQ, floorR, ceilQ;
};
Reference reference(int64_t a, int64_t b) {
  auto fits = [&](int64_t q) { return b > 0 ? q * b <= a : q * b >= a; };
  int64_t q = a / b;
  while (!fits(q))
    --q;
  while (fits(q + 1))
    ++q;
  return {q, a - q * b, q * b == a ? q : q + 1};
}

template <class T>
void checkAll(const std::vector<int64_t> &values) {
  for (int64_t a : values)
    for (int64_t b : values) {
      if (b == 0)
        continue;
      // The one undefined quotient (as for C++ `/`): the minimum divided by -1.
      if (a == std::numeric_limits<T>::min() && b == -1)
        continue;
      Reference r = reference(a, b);
      INFO("a = " << a << ", b = " << b);
      CHECK(int64_t(tl::floordiv<T>(T(a), T(b))) == r.floorQ);
      CHECK(int64_t(tl::floormod<T>(T(a), T(b))) == r.floorR);
      CHECK(int64_t(tl::ceildiv<T>(T(a), T(b))) == r.ceilQ);
    }
}

} // namespace

TEST_CASE("tl::floordiv/floormod/ceildiv match floor and ceil for every sign", "[intmath]") {
  std::vector<int64_t> small;
  for (int64_t v = -9; v <= 9; ++v)
    small.push_back(v);
  // The examples of docs/language.md.
  CHECK(tl::floordiv(-7, 2) == -4);
  CHECK(tl::floormod(-7, 2) == 1);
  CHECK(tl::floordiv(7, -2) == -4);
  CHECK(tl::floormod(7, -2) == -1);
  CHECK(tl::floordiv(-7, -2) == 3);
  CHECK(tl::floormod(-7, -2) == -1);
  CHECK(tl::ceildiv(-8, 2) == -4);
  CHECK(tl::ceildiv(7, 2) == 4);

  checkAll<int>(small);
  checkAll<long long>(small);
  checkAll<int8_t>(small);
  checkAll<int16_t>(small);

  // Near the ends of the range: ceildiv must not overflow the way (a + b - 1) / b does.
  std::vector<int64_t> edges = {INT32_MIN, INT32_MIN + 1, -65536, -3, -1, 1, 3, 65536,
                                INT32_MAX - 1, INT32_MAX};
  checkAll<int>(edges);
  CHECK(tl::ceildiv(INT32_MAX, 2) == (INT32_MAX / 2) + 1);
}

TEST_CASE("tl::floordiv/floormod/ceildiv on unsigned types are C's", "[intmath]") {
  for (unsigned a = 0; a < 40; ++a)
    for (unsigned b = 1; b < 12; ++b) {
      CHECK(tl::floordiv(a, b) == a / b);
      CHECK(tl::floormod(a, b) == a % b);
      CHECK(tl::ceildiv(a, b) == (a + b - 1) / b);
    }
  CHECK(tl::ceildiv(UINT32_MAX, 2u) == UINT32_MAX / 2 + 1);
}

static_assert(tl::floordiv(-1, 64) == -1 && tl::floormod(-1, 64) == 63,
              "usable in constant expressions");

// The launcher's arithmetic (runtime/tlc/runtime.h: grid extents and tensor dimensions) rounds
// as the device does, and a zero divisor sets the flag and gives 0 instead of trapping.
TEST_CASE("launch arithmetic floors as the device does and survives a zero divisor", "[intmath]") {
  for (int64_t a = -9; a <= 9; ++a)
    for (int64_t b = -9; b <= 9; ++b) {
      bool zero = false;
      INFO("a = " << a << ", b = " << b);
      if (b == 0) {
        CHECK(tlc_floordiv(a, b, zero) == 0);
        CHECK(zero);
        zero = false;
        CHECK(tlc_floormod(a, b, zero) == 0);
        CHECK(zero);
        zero = false;
        CHECK(tlc_ceildiv(a, b, zero) == 0);
        CHECK(zero);
        continue;
      }
      CHECK(tlc_floordiv(a, b, zero) == tl::floordiv(a, b));
      CHECK(tlc_floormod(a, b, zero) == tl::floormod(a, b));
      CHECK(tlc_ceildiv(a, b, zero) == tl::ceildiv(a, b));
      CHECK(!zero);
    }
}

TEST_CASE("tl::TapCursor places and steps through folded im2col columns", "[intmath]") {
  // Every start column (negative ones included) and run, for several channel counts and filter
  // widths: after any number of steps the cursor is where placing it afresh puts it, and
  // (r, s, c) recompose the column.
  for (int channels : {1, 2, 3, 7, 8, 20})
    for (int kw : {1, 2, 3, 7})
      for (int start = -2 * kw * channels - 3; start <= 3 * kw * channels; ++start) {
        tl::TapCursor cur(start, channels, kw);
        for (int step = 0; step < 2 * kw * channels + 5; ++step) {
          INFO("C = " << channels << ", kw = " << kw << ", start " << start << ", step " << step);
          const int k = start + step;
          REQUIRE(cur.k == k);
          REQUIRE(cur.c >= 0);
          REQUIRE(cur.c < channels);
          REQUIRE(cur.s >= 0);
          REQUIRE(cur.s < kw);
          REQUIRE((cur.r * kw + cur.s) * channels + cur.c == k);
          tl::TapCursor fresh(k, channels, kw);
          REQUIRE(fresh.r == cur.r);
          REQUIRE(fresh.s == cur.s);
          REQUIRE(fresh.c == cur.c);
          cur.next(channels, kw);
        }
      }
}

TEST_CASE("tl::TapCursor steps by a divisor of the channels", "[intmath]") {
  // A vector access of `step` columns: C a multiple of step, the cursor at a multiple of it.
  for (int channels : {2, 4, 6, 8, 12, 20})
    for (int step : {2, 4})
      for (int kw : {1, 3, 7}) {
        if (channels % step != 0)
          continue;
        for (int start = -2 * kw * channels; start <= 2 * kw * channels; start += step) {
          tl::TapCursor cur(start, channels, kw);
          for (int k = start; k < start + 3 * kw * channels; k += step) {
            INFO("C = " << channels << ", step " << step << ", kw = " << kw << ", start " << start << ", k " << k);
            tl::TapCursor fresh(k, channels, kw);
            REQUIRE(cur.k == k);
            REQUIRE(cur.r == fresh.r);
            REQUIRE(cur.s == fresh.s);
            REQUIRE(cur.c == fresh.c);
            REQUIRE(cur.c + step <= channels); // the access stays in one tap
            cur.next(channels, kw, step);
          }
        }
      }
}

TEST_CASE("tl::TapCursor of a tensor without channels divides by nothing", "[intmath]") {
  // C = 0 (an empty tensor): K = kh * kw * C = 0 columns, every access invalid; placing and
  // stepping the cursor must not divide by zero.
  tl::TapCursor cur(5, 0, 3);
  CHECK(cur.k == 5);
  cur.next(0, 3);
  CHECK(cur.k == 6);
}
