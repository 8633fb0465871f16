// tl/dequant.h - the per-thread step of the dequant_i4 tile operator (compiler/ops/Dequant.cpp).
//
//   tl::dequant_i4x8<T, Scaled>(src, scale, dst)         signed weights (two's complement, -8..7)
//   tl::dequant_u4x8<T, Scaled>(src, scale, dst)         unsigned weights (0..15)
//   tl::dequant_i4x8<T>(src, scale, zero, dst)           ... with a zero point (GPTQ/AWQ style)
//   tl::dequant_u4x8<T>(src, scale, zero, dst)
//   tl::dequant_fp4x8<T, Scaled>(src, scale, dst)        f4e2m1 weights (FP4: 0, +-0.5 .. +-6)
//
// Reads one 32-bit word of packed 4-bit weights at `src` (weight 2c in the low nibble of byte
// c, 4-byte aligned), converts the eight weights q to T (f16 or bf16), subtracts `zero` when
// given, multiplies by `scale` when Scaled (always, with a zero point) and stores them as one
// 16-byte vector at `dst` (16-byte aligned). On NVIDIA GPUs the conversion is
// tl::unpack_int4x8's magic-number path (per pair of weights one prmt, one lop3 and one packed
// subtraction, exact), the zero point one packed subtraction and the scaling one packed
// multiply, each rounded to T once, so the result is
//   T(float(q) * float(scale))                                   without a zero point (one rounding)
//   T(float(T(float(q) - float(zero))) * float(scale))           with one (two roundings; q - zero
//                                                                is exact for integer zero points)
// which the portable path computes element by element (float is wide enough that rounding
// float's exact-or-once-rounded result to T again equals T's own correctly rounded operation).
//
// f4e2m1 weights convert exactly as well (tl::unpack_fp4x8: bit placement and one packed
// multiply by a power of two), so their result is T(float(q) * float(scale)) too.
//
//   tl::dequant_i4x8_regs / dequant_u4x8_regs / dequant_fp4x8_regs, with the same template
//   and zero arguments
//
// The fragment forms (dequant_i4 on register tiles, e.g. a GEMV's weights loaded straight from
// global memory): the same conversion of the four packed bytes bytes[0..3] (u8 or i8) into
// out[0..7], element by element so that both arrays stay in registers (no address is taken
// that would need them 4- or 16-byte aligned in memory).
#pragma once

#include "common.h"
#include "dtypes.h"
#include "memory.h"

namespace tl {

namespace detail {

#if TL_CUDA
// The last part of every word conversion: the four pairs times `scale` when Scaled (one packed
// multiply each), stored to out[0..7].
template <class T, bool Scaled>
TL_DEVICE void scale_pairs(vec2_t<T> (&w)[4], T scale, T* out) {
  if constexpr (Scaled) {
    const vec2_t<T> scale2 = Vec2Ops<T>::splat_same(scale);
#pragma unroll
    for (int k = 0; k < 4; ++k) w[k] = __hmul2(w[k], scale2);
  }
  // As whole 32-bit pairs: a register tile keeps them packed for the mma that reads them.
#pragma unroll
  for (int k = 0; k < 4; ++k) std::memcpy(out + 2 * k, &w[k], 4);
}
#endif

// Four packed bytes held in registers (u8 or i8) as one little-endian word.
template <class Byte>
TL_DEVICE std::uint32_t word_of_bytes(const Byte* bytes) {
  static_assert(sizeof(Byte) == 1, "word_of_bytes: 8-bit elements");
  std::uint32_t word;
  std::memcpy(&word, bytes, 4);  // one 32-bit access where the fragment holds its bytes as words
  return word;
}

// Eight nibbles of `word` as T (sign-extended when Signed), minus `zero` when Zeroed, times
// `scale` when Scaled, in out[0..7] (nibble i of the word is element i): the one conversion all
// the forms below use.
template <bool Signed, class T, bool Scaled, bool Zeroed>
TL_DEVICE void dequant_int4x8_word(std::uint32_t word, T scale, T zero, T* out) {
  static_assert(is_one_of_v<T, f16, bf16>, "dequant_i4x8: T must be f16 or bf16");
#if TL_CUDA
  vec2_t<T> w[4];
  unpack_int4x8<Signed, T>(word, w);
  if constexpr (Zeroed) {
    const vec2_t<T> zero2 = Vec2Ops<T>::splat_same(zero);
#pragma unroll
    for (int k = 0; k < 4; ++k) w[k] = Vec2Ops<T>::sub(w[k], zero2);
  }
  scale_pairs<T, Scaled>(w, scale, out);
#else
  const float s = Scaled ? convert<float>(scale) : 1.0f;
  for (int i = 0; i < 8; ++i) {
    const float q = static_cast<float>(extract_int4<Signed>(word, i));
    out[i] = convert<T>((Zeroed ? convert<float>(convert<T>(q - convert<float>(zero))) : q) * s);
  }
#endif
}

// The same for f4e2m1 weights (no zero point: FP4 formats quantize symmetrically).
template <class T, bool Scaled>
TL_DEVICE void dequant_fp4x8_word(std::uint32_t word, T scale, T* out) {
  static_assert(is_one_of_v<T, f16, bf16>, "dequant_fp4x8: T must be f16 or bf16");
#if TL_CUDA
  vec2_t<T> w[4];
  unpack_fp4x8<T>(word, w);
  scale_pairs<T, Scaled>(w, scale, out);
#else
  const float s = Scaled ? convert<float>(scale) : 1.0f;
  for (int i = 0; i < 8; ++i) out[i] = convert<T>(fp4_to_float(static_cast<int>((word >> (4 * i)) & 0xFu)) * s);
#endif
}

template <bool Signed, class T, bool Scaled, bool Zeroed>
TL_DEVICE void dequant_int4x8(const void* src, T scale, T zero, void* dst) {
  T out[8];
  dequant_int4x8_word<Signed, T, Scaled, Zeroed>(load_vec<4>(src), scale, zero, out);
  store_vec<16>(dst, bit_cast<vec_bytes_t<16>>(out));
}

template <bool Signed, class T, bool Scaled, bool Zeroed, class Byte>
TL_DEVICE void dequant_int4x8_regs(const Byte* bytes, T scale, T zero, T* out) {
  dequant_int4x8_word<Signed, T, Scaled, Zeroed>(word_of_bytes(bytes), scale, zero, out);
}

}  // namespace detail

// The names the generated code calls (the weights' signedness in the name, a zero point as an
// extra argument; see the top of the file).
template <class T, bool Scaled>
TL_DEVICE void dequant_i4x8(const void* src, T scale, void* dst) {
  detail::dequant_int4x8<true, T, Scaled, false>(src, scale, scale, dst);
}
template <class T, bool Scaled>
TL_DEVICE void dequant_u4x8(const void* src, T scale, void* dst) {
  detail::dequant_int4x8<false, T, Scaled, false>(src, scale, scale, dst);
}
template <class T>
TL_DEVICE void dequant_i4x8(const void* src, T scale, T zero, void* dst) {
  detail::dequant_int4x8<true, T, true, true>(src, scale, zero, dst);
}
template <class T>
TL_DEVICE void dequant_u4x8(const void* src, T scale, T zero, void* dst) {
  detail::dequant_int4x8<false, T, true, true>(src, scale, zero, dst);
}

template <class T, bool Scaled>
TL_DEVICE void dequant_fp4x8(const void* src, T scale, void* dst) {
  T out[8];
  detail::dequant_fp4x8_word<T, Scaled>(load_vec<4>(src), scale, out);
  store_vec<16>(dst, bit_cast<vec_bytes_t<16>>(out));
}
template <class T, bool Scaled, class Byte>
TL_DEVICE void dequant_fp4x8_regs(const Byte* bytes, T scale, T* out) {
  detail::dequant_fp4x8_word<T, Scaled>(detail::word_of_bytes(bytes), scale, out);
}

template <class T, bool Scaled, class Byte>
TL_DEVICE void dequant_i4x8_regs(const Byte* bytes, T scale, T* out) {
  detail::dequant_int4x8_regs<true, T, Scaled, false>(bytes, scale, scale, out);
}
template <class T, bool Scaled, class Byte>
TL_DEVICE void dequant_u4x8_regs(const Byte* bytes, T scale, T* out) {
  detail::dequant_int4x8_regs<false, T, Scaled, false>(bytes, scale, scale, out);
}
template <class T, class Byte>
TL_DEVICE void dequant_i4x8_regs(const Byte* bytes, T scale, T zero, T* out) {
  detail::dequant_int4x8_regs<true, T, true, true>(bytes, scale, zero, out);
}
template <class T, class Byte>
TL_DEVICE void dequant_u4x8_regs(const Byte* bytes, T scale, T zero, T* out) {
  detail::dequant_int4x8_regs<false, T, true, true>(bytes, scale, zero, out);
}

}  // namespace tl
