// AMD's FNUZ fp8 formats (stdlib/tl/fp8_fnuz.h: tlc's f8e4m3/f8e5m2 on the HIP targets) against
// their definition in the CDNA3 ISA: value = (-1)^s 2^(e - bias) (1 + m / 2^M), subnormal at
// e = 0, bias 8 (e4m3) or 16 (e5m2), 0x80 the only NaN, no infinity and no negative zero. The
// encoder must round to nearest even and saturate, as cuda_fp8.h's __NV_SATFINITE does.
#include "tl/fp8_fnuz.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

namespace {

double definition(int b, int expBits) {
  const int mant = 7 - expBits, bias = expBits == 4 ? 8 : 16;
  if (b == 0x80)
    return NAN;
  const int e = (b >> mant) & ((1 << expBits) - 1), m = b & ((1 << mant) - 1);
  const double v = e == 0 ? std::ldexp(m, 1 - bias - mant) : std::ldexp(1.0 + std::ldexp(m, -mant), e - bias);
  return (b & 0x80) ? -v : v;
}

// The byte nearest to x (ties to the even byte), saturating; NaN -> 0x80; zero is +0.
template <int E>
std::uint8_t reference(float x) {
  if (std::isnan(x))
    return 0x80;
  int best = 0;
  for (int b = 0; b < 256; ++b) {
    if (b == 0x80)
      continue;
    double d = std::fabs(definition(b, E) - x), bd = std::fabs(definition(best, E) - x);
    if (d < bd || (d == bd && (b & 1) == 0 && (best & 1) == 1))
      best = b;
  }
  const double max = definition(0x7F, E);
  if (std::fabs(x) >= max)
    best = x < 0 ? 0xFF : 0x7F;
  return definition(best, E) == 0 ? 0 : std::uint8_t(best);
}

template <int E>
void checkFormat() {
  using F = tl::fp8_fnuz<E>;
  for (int b = 0; b < 256; ++b) {
    INFO("byte " << b);
    double want = definition(b, E);
    float got = F::decode(std::uint8_t(b));
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
    } else {
      CHECK(double(got) == want);
      CHECK(F::encode(got) == (want == 0 ? 0 : b)); // exact values round-trip (no -0)
    }
  }
  // Between every pair of neighbours, at the midpoint (a tie) and just either side of it.
  for (int b = 0; b < 0x7F; ++b) {
    for (float sign : {1.0f, -1.0f}) {
      double lo = definition(b, E), hi = definition(b + 1, E), mid = (lo + hi) / 2;
      for (double x : {mid, std::nextafter(mid, lo), std::nextafter(mid, hi)}) {
        float fx = sign * float(x);
        INFO("x = " << fx);
        CHECK(F::encode(fx) == reference<E>(fx));
      }
    }
  }
  CHECK(F::encode(1e30f) == 0x7F);
  CHECK(F::encode(-INFINITY) == 0xFF);
  CHECK(F::encode(NAN) == 0x80);
  CHECK(F::encode(-0.0f) == 0);
  CHECK(F::encode(1e-30f) == 0);
}

} // namespace

TEST_CASE("FNUZ e4m3: bias 8, largest 240, 0x80 NaN", "[fp8]") {
  CHECK(definition(0x7F, 4) == 240.0);
  CHECK(tl::fp8_fnuz<4>::decode(0x40) == 1.0f); // OCP e4m3's 0x40 is 2
  CHECK(tl::fp8_fnuz<4>::encode(1.0f) == 0x40);
  checkFormat<4>();
}

TEST_CASE("FNUZ e5m2: bias 16, largest 57344, 0x80 NaN", "[fp8]") {
  CHECK(definition(0x7F, 5) == 57344.0);
  CHECK(tl::fp8_fnuz<5>::decode(0x40) == 1.0f); // OCP e5m2's 0x40 is 2
  checkFormat<5>();
}
