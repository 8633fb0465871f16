// tl/dtypes.h - conversions between TileLang element types.
//
//   tl::convert<To>(x)             scalar conversion (round to nearest even; fp8 saturates to
//                                  the largest finite value, NaN stays NaN)
//   tl::to_f16x2 / to_bf16x2 / to_f8e4m3x2 / to_f8e5m2x2 / to_float2     pair conversions
//   tl::unpack_int4x8<S, T>(w, o)  eight packed 4-bit integers -> four f16x2/bf16x2, fast path
//   tl::unpack_int4x8_ref<S, T>    the same through plain integer arithmetic (reference)
//   tl::extract_int4 / pack_int4x8 single-element access to packed words
//   tl::fp4_to_float / extract_fp4  one f4e2m1 (FP4: 1 sign, 2 exponent, 1 mantissa bits) value
//   tl::unpack_fp4x8<T>(w, o)       eight packed f4e2m1 values -> four f16x2/bf16x2
//
// i4/u4/f4e2m1 storage: two elements per byte, element 2k in the low nibble of byte k, so a
// little-endian u32 holds elements 0..7 with element i in bits [4i, 4i + 4).
#pragma once

#include "common.h"

namespace tl {

// ---- Scalar conversion ----------------------------------------------------------------------
namespace detail {

// Every scalar type converts to and from float; float is the pivot for all other pairs.
TL_HOST_DEVICE float to_float(float x) { return x; }
TL_HOST_DEVICE float to_float(f16 x) { return __half2float(x); }
#if TL_CUDA
TL_HOST_DEVICE float to_float(bf16 x) { return __bfloat162float(x); }
TL_HOST_DEVICE float to_float(f8e4m3 x) { return static_cast<float>(x); }
TL_HOST_DEVICE float to_float(f8e5m2 x) { return static_cast<float>(x); }
#else
TL_HOST_DEVICE float to_float(bf16 x) { return static_cast<float>(x); }
TL_HOST_DEVICE float to_float(f8e4m3 x) { return static_cast<float>(x); }  // FNUZ (tl/fp8_fnuz.h)
TL_HOST_DEVICE float to_float(f8e5m2 x) { return static_cast<float>(x); }
#endif

template <class T>
TL_HOST_DEVICE T from_float(float x) {
  if constexpr (std::is_same_v<T, f16>) {
    return __float2half_rn(x);
  } else if constexpr (std::is_same_v<T, bf16>) {
#if TL_CUDA
    return __float2bfloat16_rn(x);
#else
    return bf16(x);
#endif
  } else if constexpr (is_one_of_v<T, f8e4m3, f8e5m2>) {
    // Round to nearest even, saturating: cuda_fp8.h's __NV_SATFINITE, tl/fp8_fnuz.h on HIP.
    return T(x);
  } else {
    static_assert(std::is_arithmetic_v<T>, "tl::convert: unsupported destination type");
    return static_cast<T>(x);
  }
}

template <class T>
inline constexpr bool is_builtin_v = std::is_arithmetic_v<T>;

}  // namespace detail

// Scalar conversion between any two supported element types. Built-in arithmetic types use
// C++ conversion (float -> int truncates, as a TileLang cast does); everything else goes
// through float, which is exact for every 16- and 8-bit float format.
template <class To, class From>
TL_HOST_DEVICE To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (detail::is_builtin_v<To> && detail::is_builtin_v<From>) {
    return static_cast<To>(x);
  } else if constexpr (std::is_same_v<To, float>) {
    return detail::to_float(x);
  } else if constexpr (std::is_same_v<To, double> || std::is_integral_v<To>) {
    return static_cast<To>(detail::to_float(x));
  } else if constexpr (std::is_same_v<From, double>) {
    // Double rounding (f64 -> f32 -> 16 bit) can differ from direct rounding only at ties
    // below f32 resolution; accepted for the rare f64 -> f16 cast.
    return detail::from_float<To>(static_cast<float>(x));
  } else if constexpr (detail::is_builtin_v<From>) {
    return detail::from_float<To>(static_cast<float>(x));
  } else {
    return detail::from_float<To>(detail::to_float(x));
  }
}

// ---- Two-element conversions ----------------------------------------------------------------
// One instruction on recent hardware (cvt.rn.f16x2.f32, cvt.rn.satfinite.e4m3x2.f32, ...),
// the unit generated code uses to convert fragments.
TL_HOST_DEVICE f16x2 to_f16x2(float2 v) { return __float22half2_rn(v); }
TL_HOST_DEVICE float2 to_float2(f16x2 v) { return __half22float2(v); }
TL_HOST_DEVICE f16x2 make_f16x2(f16 lo, f16 hi) { return __halves2half2(lo, hi); }

#if TL_CUDA
TL_HOST_DEVICE bf16x2 to_bf16x2(float2 v) { return __float22bfloat162_rn(v); }
TL_HOST_DEVICE float2 to_float2(bf16x2 v) { return __bfloat1622float2(v); }
TL_HOST_DEVICE bf16x2 make_bf16x2(bf16 lo, bf16 hi) { return __halves2bfloat162(lo, hi); }

// fp8 pairs. Encoding saturates to the largest finite value (448 for e4m3, 57344 for e5m2).
TL_HOST_DEVICE f8e4m3x2 to_f8e4m3x2(float2 v) { return f8e4m3x2(v); }
TL_HOST_DEVICE f8e5m2x2 to_f8e5m2x2(float2 v) { return f8e5m2x2(v); }
TL_HOST_DEVICE float2 to_float2(f8e4m3x2 v) { return static_cast<float2>(v); }
TL_HOST_DEVICE float2 to_float2(f8e5m2x2 v) { return static_cast<float2>(v); }
// fp8 -> f16 is exact, and a single cvt.rn.f16x2.e4m3x2 on sm_89+.
TL_HOST_DEVICE f16x2 to_f16x2(f8e4m3x2 v) { return static_cast<f16x2>(v); }
TL_HOST_DEVICE f16x2 to_f16x2(f8e5m2x2 v) { return static_cast<f16x2>(v); }
#endif

// ---- Packed pair arithmetic used by the conversions ---------------------------------------
template <class T>
struct Vec2Ops;
template <>
struct Vec2Ops<f16> {
  static TL_HOST_DEVICE f16x2 from_floats(float lo, float hi) { return __floats2half2_rn(lo, hi); }
  static TL_HOST_DEVICE f16x2 splat(float x) { return __float2half2_rn(x); }
  // A value already of the element type into both halves: no conversion (a float splat costs
  // a conversion to f32 and one back, twice an instruction per use in dequant_i4's scaling).
  static TL_HOST_DEVICE f16x2 splat_same(f16 x) { return __half2half2(x); }
  static TL_DEVICE f16x2 sub(f16x2 a, f16x2 b) { return __hsub2(a, b); }
};
#if TL_CUDA
template <>
struct Vec2Ops<bf16> {
  static TL_HOST_DEVICE bf16x2 from_floats(float lo, float hi) {
    return __floats2bfloat162_rn(lo, hi);
  }
  static TL_HOST_DEVICE bf16x2 splat(float x) { return __float2bfloat162_rn(x); }
  static TL_HOST_DEVICE bf16x2 splat_same(bf16 x) { return __bfloat162bfloat162(x); }
  static TL_DEVICE bf16x2 sub(bf16x2 a, bf16x2 b) { return __hsub2(a, b); }
};
#endif

// ---- Packed 4-bit integers --------------------------------------------------------------------
// lop3.b32: an arbitrary bitwise function of three words, selected by an 8-bit truth table
// `Lut` over the operands' canonical patterns a = 0xF0, b = 0xCC, c = 0xAA. The portable
// branch evaluates the same truth table; the compiler folds it for a constant Lut.
template <std::uint8_t Lut>
TL_HOST_DEVICE std::uint32_t lop3(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#if TL_CUDA_ARCH > 0
  std::uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(Lut));
  return d;
#else
  std::uint32_t d = 0;
  for (int m = 0; m < 8; ++m) {
    if ((Lut >> m) & 1) {
      d |= ((m & 4) ? a : ~a) & ((m & 2) ? b : ~b) & ((m & 1) ? c : ~c);
    }
  }
  return d;
#endif
}

// prmt.b32 (default mode): byte i of the result is byte sel.nibble[i] of the 8-byte value
// {hi:lo}. Maps onto __byte_perm on both vendors.
TL_DEVICE std::uint32_t byte_perm(std::uint32_t lo, std::uint32_t hi, std::uint32_t sel) {
  return __byte_perm(lo, hi, sel);
}

// Element i (0..7) of a packed word, sign-extended when Signed.
template <bool Signed>
TL_HOST_DEVICE int extract_int4(std::uint32_t word, int i) {
  int nibble = static_cast<int>((word >> (4 * i)) & 0xFu);
  return Signed ? (nibble ^ 8) - 8 : nibble;
}

// Packs eight values (taken modulo 16) into one word; the inverse of extract_int4.
TL_HOST_DEVICE std::uint32_t pack_int4x8(const int (&v)[8]) {
  std::uint32_t word = 0;
  for (int i = 0; i < 8; ++i) word |= (static_cast<std::uint32_t>(v[i]) & 0xFu) << (4 * i);
  return word;
}

namespace detail {

// Constants of the magic-number unpacking for one 16-bit float format. OR-ing a 4-bit value
// u into the low mantissa bits of `kMagic` (a power of two whose ulp is 1) yields exactly
// kMagic + u, so one subtraction finishes the conversion. Signed values are first biased by
// 8 (flipping the nibble's top bit), so the subtrahend is kMagic + 8.
template <class T>
struct Int4Magic;
template <>
struct Int4Magic<f16> {
  static constexpr std::uint32_t kMagic = 0x64006400u;  // 1024.0 in both halves
};
#if TL_CUDA
template <>
struct Int4Magic<bf16> {
  static constexpr std::uint32_t kMagic = 0x43004300u;  // 128.0 in both halves
};
#endif

}  // namespace detail

// Unpacks the eight 4-bit integers of `word` into out[k] = (element 2k, element 2k + 1), as
// T pairs (T = f16 or bf16). Per pair: one prmt moves byte k of `word` into the low half and
// byte k of `word >> 4` into the high half (so both target nibbles sit in bits [0, 4) of their
// half), one lop3 masks the nibbles and ORs in the magic exponent (flipping the sign bit too
// when Signed), and one packed subtraction removes the magic offset. All values are exact.
template <bool Signed, class T>
TL_DEVICE void unpack_int4x8(std::uint32_t word, vec2_t<T> (&out)[4]) {
  static_assert(is_one_of_v<T, f16, bf16>, "unpack_int4x8: T must be f16 or bf16");
  using Magic = detail::Int4Magic<T>;
  constexpr std::uint32_t kNibbles = 0x000F000Fu;
  // Unsigned: (x & mask) | magic. Signed: mask ? x ^ c : c, where c carries the magic outside
  // the mask and the sign-flip bit (0x8) inside it.
  constexpr std::uint8_t kLut = Signed ? 0x6A : 0xEA;
  constexpr std::uint32_t kOr = Signed ? (Magic::kMagic | 0x00080008u) : Magic::kMagic;
  // The subtrahend, kMagic + 8 when Signed, is kOr's own bits (the 8 sits in the mantissa's
  // ulp-1 bits): a constant, not a float converted on every call (cvt is no constant to ptxas).
  const vec2_t<T> bias = bit_cast<vec2_t<T>>(kOr);
  const std::uint32_t shifted = word >> 4;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const std::uint32_t sel = k | (k << 4) | ((k + 4) << 8) | ((k + 4) << 12);
    std::uint32_t v = lop3<kLut>(byte_perm(word, shifted, sel), kNibbles, kOr);
    out[k] = Vec2Ops<T>::sub(bit_cast<vec2_t<T>>(v), bias);
  }
}

// Reference path for tests and for scalar fallbacks: integer extraction, then conversion.
template <bool Signed, class T>
TL_HOST_DEVICE void unpack_int4x8_ref(std::uint32_t word, vec2_t<T> (&out)[4]) {
  for (int k = 0; k < 4; ++k) {
    float lo = static_cast<float>(extract_int4<Signed>(word, 2 * k));
    float hi = static_cast<float>(extract_int4<Signed>(word, 2 * k + 1));
    out[k] = Vec2Ops<T>::from_floats(lo, hi);
  }
}

// ---- Packed FP4 (f4e2m1, OCP MX): s e e m, bias 1, no inf or NaN -------------------------------
// Values: 0, 0.5 (the one subnormal), 1, 1.5, 2, 3, 4, 6 and their negatives.
TL_HOST_DEVICE float fp4_to_float(int nibble) {
  const int em = nibble & 7;
  const float magnitude = em < 2 ? 0.5f * static_cast<float>(em)
                                 : static_cast<float>(2 + (em & 1)) * static_cast<float>(1 << ((em >> 1) - 1)) * 0.5f;
  return (nibble & 8) ? -magnitude : magnitude;
}

// Element `hi` (0: low nibble, 1: high nibble) of a packed byte, as f16 (which holds every
// f4e2m1 value exactly).
TL_HOST_DEVICE f16 extract_fp4(std::uint8_t byte, int hi) {
  return convert<f16>(fp4_to_float(hi ? byte >> 4 : byte & 0xF));
}

namespace detail {

// Where f4e2m1's bits go in a 16-bit float: the sign to bit 15 and the exponent and mantissa
// bits (e1 e0 m) to the bottom of T's exponent field and the top of its mantissa, which makes
// T's value 2^(1 - bias(T)) times f4e2m1's, subnormal 0.5 included; kScale (both halves' bits:
// a constant, where a float splat would be converted on every call) undoes that exactly.
template <class T>
struct Fp4Place;
template <>
struct Fp4Place<f16> {
  static constexpr int kShift = 9;             // mantissa 10 bits: m at bit 9, e at bits 10-11
  static constexpr std::uint32_t kScale = 0x74007400u;  // 2^(15 - 1) = 16384
};
#if TL_CUDA
template <>
struct Fp4Place<bf16> {
  static constexpr int kShift = 6;             // mantissa 7 bits: m at bit 6, e at bits 7-8
  static constexpr std::uint32_t kScale = 0x7E807E80u;  // 2^(127 - 1)
};
#endif

}  // namespace detail

// Unpacks the eight f4e2m1 values of `word` into out[k] = (element 2k, element 2k + 1), as T
// pairs: per pair one prmt (as unpack_int4x8), a few bitwise operations placing the bits, and
// one packed multiply by the power of two, all exact.
template <class T>
TL_DEVICE void unpack_fp4x8(std::uint32_t word, vec2_t<T> (&out)[4]) {
  static_assert(is_one_of_v<T, f16, bf16>, "unpack_fp4x8: T must be f16 or bf16");
  using Place = detail::Fp4Place<T>;
  constexpr std::uint32_t kScaleBits = Place::kScale;  // a local: device code may not bind the member
  const vec2_t<T> scale = bit_cast<vec2_t<T>>(kScaleBits);
  const std::uint32_t shifted = word >> 4;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const std::uint32_t sel = k | (k << 4) | ((k + 4) << 8) | ((k + 4) << 12);
    const std::uint32_t v = byte_perm(word, shifted, sel);
    const std::uint32_t bits = ((v & 0x00070007u) << Place::kShift) | ((v & 0x00080008u) << 12);
    out[k] = __hmul2(bit_cast<vec2_t<T>>(bits), scale);
  }
}

}  // namespace tl
