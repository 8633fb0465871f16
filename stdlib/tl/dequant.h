// tl/dequant.h - the per-thread step of the dequant_i4 tile operator (compiler/ops/Dequant.cpp).
//
//   tl::dequant_i4x8<T, Scaled>(src, scale, dst)
//
// Reads one 32-bit word of packed two's-complement 4-bit weights at `src` (weight 2c in the low
// nibble of byte c, 4-byte aligned), converts the eight weights to T (f16 or bf16), multiplies
// them by `scale` when Scaled, and stores them as one 16-byte vector at `dst` (16-byte
// aligned). On NVIDIA GPUs the conversion is tl::unpack_int4x8's magic-number path (per pair
// of weights one prmt, one lop3 and one packed subtraction) and the scaling one packed
// multiply: both exact but for the product's one rounding, so the result equals
// T(float(q) * float(scale)), which the portable path computes element by element.
//
//   tl::dequant_i4x8_regs<T, Scaled>(bytes, scale, out)
//
// The fragment form (dequant_i4 on register tiles, e.g. a GEMV's weights loaded straight from
// global memory): the same conversion of the four packed bytes bytes[0..3] (u8 or i8) into
// out[0..7], element by element so that both arrays stay in registers (no address is taken
// that would need them 4- or 16-byte aligned in memory).
#pragma once

#include "common.h"
#include "dtypes.h"
#include "memory.h"

namespace tl {

// Eight signed nibbles of `word` as T, times `scale` when Scaled, in out[0..7] (nibble i of
// the word is element i): the one conversion both forms below use.
template <class T, bool Scaled>
TL_DEVICE void dequant_i4x8_word(std::uint32_t word, T scale, T* out) {
#if TL_CUDA
  vec2_t<T> w[4];
  unpack_int4x8<true, T>(word, w);
  if constexpr (Scaled) {
    const vec2_t<T> scale2 = Vec2Ops<T>::splat_same(scale);
#pragma unroll
    for (int k = 0; k < 4; ++k) w[k] = __hmul2(w[k], scale2);
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    out[2 * k] = w[k].x;
    out[2 * k + 1] = w[k].y;
  }
#else
  const float s = Scaled ? convert<float>(scale) : 1.0f;
  for (int i = 0; i < 8; ++i) out[i] = convert<T>(static_cast<float>(extract_int4<true>(word, i)) * s);
#endif
}

template <class T, bool Scaled>
TL_DEVICE void dequant_i4x8(const void* src, T scale, void* dst) {
  static_assert(is_one_of_v<T, f16, bf16>, "dequant_i4x8: T must be f16 or bf16");
  T out[8];
  dequant_i4x8_word<T, Scaled>(load_vec<4>(src), scale, out);
  store_vec<16>(dst, bit_cast<vec_bytes_t<16>>(out));
}

template <class T, bool Scaled, class Byte>
TL_DEVICE void dequant_i4x8_regs(const Byte* bytes, T scale, T* out) {
  static_assert(is_one_of_v<T, f16, bf16>, "dequant_i4x8_regs: T must be f16 or bf16");
  const std::uint32_t word = std::uint32_t(std::uint8_t(bytes[0])) | (std::uint32_t(std::uint8_t(bytes[1])) << 8) |
                             (std::uint32_t(std::uint8_t(bytes[2])) << 16) |
                             (std::uint32_t(std::uint8_t(bytes[3])) << 24);
  dequant_i4x8_word<T, Scaled>(word, scale, out);
}

}  // namespace tl
