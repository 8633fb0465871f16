// tl/fp8_fnuz.h - tlc's f8e4m3 and f8e5m2 on AMD targets: the FNUZ formats of CDNA3's fp8
// MFMA (AMD "CDNA3 Instruction Set Architecture", the FP8/BF8 data formats), which hipcc 5.2
// has no header for.
//
//   e4m3fnuz: 1 sign, 4 exponent bits (bias 8), 3 mantissa bits; largest 240
//   e5m2fnuz: 1 sign, 5 exponent bits (bias 16), 2 mantissa bits; largest 57344
//   both: subnormals at exponent field 0, no infinities, no negative zero; 0x80 is the only NaN.
//
// They are not the OCP formats NVIDIA's e4m3/e5m2 are (bias 7/15, -0, 0x7F/0xFF NaN, e5m2
// infinities): the same byte is half the value. Conversion from float rounds to nearest even
// and saturates to the largest finite value (as cuda_fp8.h's __NV_SATFINITE does for the CUDA
// types), NaN becomes 0x80, and a value that rounds to zero is +0. Plain C++ (integer
// arithmetic only), so that the same code runs in hipcc's device pass, on the host and in
// tests/unit/Fp8FnuzTest.cpp.
#pragma once

#include <cstdint>
#include <cstring>

#include "host_device.h"

namespace tl {

template <int ExpBits>
struct fp8_fnuz {
  static_assert(ExpBits == 4 || ExpBits == 5, "tl::fp8_fnuz: e4m3fnuz or e5m2fnuz");
  static constexpr int kMantBits = 7 - ExpBits;
  static constexpr int kBias = ExpBits == 4 ? 8 : 16;
  static constexpr std::uint8_t kNaN = 0x80, kMaxBits = 0x7F;

  std::uint8_t bits;

  fp8_fnuz() = default;
  TL_HOST_DEVICE explicit fp8_fnuz(float x) : bits(encode(x)) {}
  TL_HOST_DEVICE explicit operator float() const { return decode(bits); }

  TL_HOST_DEVICE static float decode(std::uint8_t b) {
    if (b == kNaN) return __builtin_nanf("");
    const int e = (b >> kMantBits) & ((1 << ExpBits) - 1), m = b & ((1 << kMantBits) - 1);
    // value = significand * 2^(exponent - kMantBits), built as an exact float.
    const int significand = e == 0 ? m : (m | (1 << kMantBits));
    const int exponent = (e == 0 ? 1 : e) - kBias - kMantBits;
    std::uint32_t scale_bits = static_cast<std::uint32_t>(exponent + 127) << 23;
    float scale;
    std::memcpy(&scale, &scale_bits, 4);
    const float v = static_cast<float>(significand) * scale;
    return (b & 0x80) ? -v : v;
  }

  TL_HOST_DEVICE static std::uint8_t encode(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    const std::uint32_t sign = u >> 31;
    u &= 0x7FFFFFFFu;
    if (u > 0x7F800000u) return kNaN;
    const int fexp = static_cast<int>(u >> 23) - 127;
    if (fexp < -64) return 0;  // far below the smallest subnormal (float subnormals included)
    // The quantum of the fp8 binade of |x|: normals keep kMantBits bits below the leading one,
    // subnormals share the smallest normal binade's quantum.
    const int min_exp = 1 - kBias;
    const int quantum = (fexp < min_exp ? min_exp : fexp) - kMantBits;
    const std::uint32_t significand = (u & 0x7FFFFFu) | 0x800000u;  // |x| = significand * 2^(fexp - 23)
    const int shift = 23 + quantum - fexp;                             // >= 23 - kMantBits > 0
    std::uint32_t q = shift >= 32 ? 0 : significand >> shift;
    if (shift < 32) {
      const std::uint32_t rest = significand & ((1u << shift) - 1), half = 1u << (shift - 1);
      if (rest > half || (rest == half && (q & 1))) ++q;  // to nearest, ties to even
    }
    int qexp = quantum;
    if (q >> (kMantBits + 1)) q >>= 1, ++qexp;  // rounded up into the next binade
    if (q == 0) return 0;                        // no negative zero
    std::uint32_t out;
    if (q < (1u << kMantBits)) {
      out = q;  // subnormal
    } else {
      const int field = qexp + kMantBits - min_exp + 1;
      out = field >= (1 << ExpBits) ? kMaxBits
                                    : (static_cast<std::uint32_t>(field) << kMantBits) | (q - (1u << kMantBits));
      if (out > kMaxBits) out = kMaxBits;  // saturate
    }
    return static_cast<std::uint8_t>(out | (sign << 7));
  }
};

}  // namespace tl
