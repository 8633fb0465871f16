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

// One value per pair of a word's eight weights (pair k: nibbles 2k and 2k + 1, byte k), the
// scales or zero points of the pairs form, whose pairs lie in different rows of the tile.
template <class T>
struct Quad {
  T v[4];
};
template <class T>
TL_DEVICE Quad<T> quad(T a, T b, T c, T d) { return Quad<T>{{a, b, c, d}}; }
template <class T>
TL_DEVICE Quad<T> quad(T a) { return Quad<T>{{a, a, a, a}}; }

#if TL_CUDA
// The last part of every word conversion: pair k minus zero.v[k] when Zeroed (one packed
// subtraction), times scale.v[k] when Scaled (one packed multiply), stored to out[2k..2k+1].
template <class T, bool Scaled, bool Zeroed>
TL_DEVICE void finish_pairs(vec2_t<T> (&w)[4], const Quad<T>& scale, const Quad<T>& zero, T* out) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    if constexpr (Zeroed) w[k] = Vec2Ops<T>::sub(w[k], Vec2Ops<T>::splat_same(zero.v[k]));
    if constexpr (Scaled) w[k] = __hmul2(w[k], Vec2Ops<T>::splat_same(scale.v[k]));
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

// Eight nibbles of `word` as T (sign-extended when Signed), pair k minus zero.v[k] when Zeroed,
// times scale.v[k] when Scaled, in out[0..7] (nibble i of the word is element i): the one
// conversion all the forms below use.
template <bool Signed, class T, bool Scaled, bool Zeroed>
TL_DEVICE void dequant_int4x8_word(std::uint32_t word, const Quad<T>& scale, const Quad<T>& zero, T* out) {
  static_assert(is_one_of_v<T, f16, bf16>, "dequant_i4x8: T must be f16 or bf16");
#if TL_CUDA
  vec2_t<T> w[4];
  unpack_int4x8<Signed, T>(word, w);
  finish_pairs<T, Scaled, Zeroed>(w, scale, zero, out);
#else
  for (int i = 0; i < 8; ++i) {
    const float q = static_cast<float>(extract_int4<Signed>(word, i));
    const float s = Scaled ? convert<float>(scale.v[i / 2]) : 1.0f;
    out[i] = convert<T>((Zeroed ? convert<float>(convert<T>(q - convert<float>(zero.v[i / 2]))) : q) * s);
  }
#endif
}

// The same for f4e2m1 weights (no zero point: FP4 formats quantize symmetrically).
template <class T, bool Scaled>
TL_DEVICE void dequant_fp4x8_word(std::uint32_t word, const Quad<T>& scale, T* out) {
  static_assert(is_one_of_v<T, f16, bf16>, "dequant_fp4x8: T must be f16 or bf16");
#if TL_CUDA
  vec2_t<T> w[4];
  unpack_fp4x8<T>(word, w);
  finish_pairs<T, Scaled, false>(w, scale, scale, out);
#else
  for (int i = 0; i < 8; ++i) {
    const float s = Scaled ? convert<float>(scale.v[i / 2]) : 1.0f;
    out[i] = convert<T>(fp4_to_float(static_cast<int>((word >> (4 * i)) & 0xFu)) * s);
  }
#endif
}

template <bool Signed, class T, bool Scaled, bool Zeroed>
TL_DEVICE void dequant_int4x8(const void* src, T scale, T zero, void* dst) {
  T out[8];
  dequant_int4x8_word<Signed, T, Scaled, Zeroed>(load_vec<4>(src), quad(scale), quad(zero), out);
  store_vec<16>(dst, bit_cast<vec_bytes_t<16>>(out));
}

template <bool Signed, class T, bool Scaled, bool Zeroed, class Byte>
TL_DEVICE void dequant_int4x8_regs(const Byte* bytes, T scale, T zero, T* out) {
  dequant_int4x8_word<Signed, T, Scaled, Zeroed>(word_of_bytes(bytes), quad(scale), quad(zero), out);
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
  detail::dequant_fp4x8_word<T, Scaled>(load_vec<4>(src), detail::quad(scale), out);
  store_vec<16>(dst, bit_cast<vec_bytes_t<16>>(out));
}
template <class T, bool Scaled, class Byte>
TL_DEVICE void dequant_fp4x8_regs(const Byte* bytes, T scale, T* out) {
  detail::dequant_fp4x8_word<T, Scaled>(detail::word_of_bytes(bytes), detail::quad(scale), out);
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

// The pairs form (dequant_i4 from a shared tile into a fragment whose layout another operator
// fixed, such as a wgmma's A operand): the word's four bytes come from four places of the tile
// (tl::bytes_word), byte k holding the weights of out[2k] and out[2k + 1], and each pair has its
// own scale and zero point (tl::detail::quad), since the pairs of one thread's word may lie in
// different rows and groups.
TL_DEVICE std::uint32_t bytes_word(unsigned b0, unsigned b1, unsigned b2, unsigned b3) {
  return (b0 & 0xFFu) | (b1 & 0xFFu) << 8 | (b2 & 0xFFu) << 16 | (b3 & 0xFFu) << 24;
}
template <class T, bool Scaled>
TL_DEVICE void dequant_i4x8_pairs(std::uint32_t word, const detail::Quad<T>& scale, T* out) {
  detail::dequant_int4x8_word<true, T, Scaled, false>(word, scale, scale, out);
}
template <class T, bool Scaled>
TL_DEVICE void dequant_u4x8_pairs(std::uint32_t word, const detail::Quad<T>& scale, T* out) {
  detail::dequant_int4x8_word<false, T, Scaled, false>(word, scale, scale, out);
}
template <class T>
TL_DEVICE void dequant_i4x8_pairs(std::uint32_t word, const detail::Quad<T>& scale, const detail::Quad<T>& zero,
                                  T* out) {
  detail::dequant_int4x8_word<true, T, true, true>(word, scale, zero, out);
}
template <class T>
TL_DEVICE void dequant_u4x8_pairs(std::uint32_t word, const detail::Quad<T>& scale, const detail::Quad<T>& zero,
                                  T* out) {
  detail::dequant_int4x8_word<false, T, true, true>(word, scale, zero, out);
}
template <class T, bool Scaled>
TL_DEVICE void dequant_fp4x8_pairs(std::uint32_t word, const detail::Quad<T>& scale, T* out) {
  detail::dequant_fp4x8_word<T, Scaled>(word, scale, out);
}

}  // namespace tl
