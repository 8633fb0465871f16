// tl/math.h - scalar math builtins of TileLang (exp2, exp, log2, log, sqrt, rsqrt, tanh,
// sigmoid, abs, max, min, inf).
//
// The f32 versions are the fast hardware approximations kernels such as softmax and
// attention are written against (flush-to-zero, a few ulp):
//   exp2   ex2.approx.ftz.f32          max rel. error ~2 ulp
//   exp    exp2(x * log2(e))           rel. error grows like |x| * 2^-24 from the product
//   log2   lg2.approx.ftz.f32          max abs. error ~2^-22 near 1
//   log    log2(x) * ln(2)
//   rsqrt  rsqrt.approx.ftz.f32        max rel. error ~2 ulp
//   tanh   tanh.approx.f32 (sm_75+)    max rel. error ~2^-11
//   sigmoid 1 / (1 + exp(-x))          via ex2 and rcp.approx
// sqrt is IEEE-rounded. f16/bf16 arguments are computed in f32 and rounded once; f64
// arguments use the accurate libdevice functions.
//
// max/min propagate NaN (max(NaN, x) = NaN), matching PyTorch, so that a NaN in a row survives
// a reduction instead of silently disappearing as it does with fmaxf.
#pragma once

#include "common.h"
#include "dtypes.h"

namespace tl {

namespace detail {
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
}  // namespace detail

// ---- f32 primitives ---------------------------------------------------------------------
TL_DEVICE float exp2(float x) {
#if TL_CUDA_ARCH > 0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return ::exp2f(x);
#endif
}

TL_DEVICE float log2(float x) {
#if TL_CUDA_ARCH > 0
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return ::log2f(x);
#endif
}

TL_DEVICE float rsqrt(float x) {
#if TL_CUDA_ARCH > 0
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return ::rsqrtf(x);
#endif
}

// 1/x, approximate (rel. error ~1 ulp); rcp(inf) = 0, rcp(0) = inf.
TL_DEVICE float rcp(float x) {
#if TL_CUDA_ARCH > 0
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / x;
#endif
}

TL_DEVICE float tanh(float x) {
#if TL_ARCH_SM75
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return ::tanhf(x);
#endif
}

TL_DEVICE float exp(float x) { return tl::exp2(x * detail::kLog2e); }
TL_DEVICE float log(float x) { return tl::log2(x) * detail::kLn2; }
TL_DEVICE float sqrt(float x) { return ::sqrtf(x); }
// exp(-x) overflows to inf for x < -88, and rcp(inf) = 0 gives the right limit.
TL_DEVICE float sigmoid(float x) { return tl::rcp(1.0f + tl::exp(-x)); }
TL_DEVICE float abs(float x) { return ::fabsf(x); }

// ---- f64: accurate library versions ------------------------------------------------------
TL_DEVICE double exp2(double x) { return ::exp2(x); }
TL_DEVICE double exp(double x) { return ::exp(x); }
TL_DEVICE double log2(double x) { return ::log2(x); }
TL_DEVICE double log(double x) { return ::log(x); }
TL_DEVICE double sqrt(double x) { return ::sqrt(x); }
TL_DEVICE double rsqrt(double x) { return ::rsqrt(x); }
TL_DEVICE double tanh(double x) { return ::tanh(x); }
TL_DEVICE double sigmoid(double x) { return 1.0 / (1.0 + ::exp(-x)); }
TL_DEVICE double abs(double x) { return ::fabs(x); }

// ---- 16-bit floats: compute in f32, round once ---------------------------------------------
// One template per builtin; `f` is the f32 overload above.
#define TL_MATH_VIA_F32(name)                                                     \
  template <class T, std::enable_if_t<is_one_of_v<T, f16, bf16>, int> = 0>        \
  TL_DEVICE T name(T x) {                                                         \
    return convert<T>(tl::name(convert<float>(x)));                               \
  }
TL_MATH_VIA_F32(exp2)
TL_MATH_VIA_F32(exp)
TL_MATH_VIA_F32(log2)
TL_MATH_VIA_F32(log)
TL_MATH_VIA_F32(sqrt)
TL_MATH_VIA_F32(rsqrt)
TL_MATH_VIA_F32(tanh)
TL_MATH_VIA_F32(sigmoid)
TL_MATH_VIA_F32(abs)
#undef TL_MATH_VIA_F32

template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
TL_DEVICE T abs(T x) {
  return x < 0 ? T(-x) : x;
}

// ---- max / min ----------------------------------------------------------------------------
// f32: one FMNMX with the NaN flag on sm_80+; the portable form picks `a` when a is NaN and
// otherwise the comparison, which returns b (NaN) when b is NaN.
TL_DEVICE float max(float a, float b) {
#if TL_ARCH_SM80
  float d;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#else
  return (a > b || a != a) ? a : b;
#endif
}

TL_DEVICE float min(float a, float b) {
#if TL_ARCH_SM80
  float d;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
  return d;
#else
  return (a < b || a != a) ? a : b;
#endif
}

TL_DEVICE double max(double a, double b) { return (a > b || a != a) ? a : b; }
TL_DEVICE double min(double a, double b) { return (a < b || a != a) ? a : b; }

#if TL_CUDA
// cuda_fp16.h / cuda_bf16.h: max.NaN.{f16,bf16}{,x2} on sm_80+, emulated below.
TL_DEVICE f16 max(f16 a, f16 b) { return __hmax_nan(a, b); }
TL_DEVICE f16 min(f16 a, f16 b) { return __hmin_nan(a, b); }
TL_DEVICE f16x2 max(f16x2 a, f16x2 b) { return __hmax2_nan(a, b); }
TL_DEVICE f16x2 min(f16x2 a, f16x2 b) { return __hmin2_nan(a, b); }
TL_DEVICE bf16 max(bf16 a, bf16 b) { return __hmax_nan(a, b); }
TL_DEVICE bf16 min(bf16 a, bf16 b) { return __hmin_nan(a, b); }
TL_DEVICE bf16x2 max(bf16x2 a, bf16x2 b) { return __hmax2_nan(a, b); }
TL_DEVICE bf16x2 min(bf16x2 a, bf16x2 b) { return __hmin2_nan(a, b); }
#else
template <class T, std::enable_if_t<is_one_of_v<T, f16, bf16>, int> = 0>
TL_DEVICE T max(T a, T b) {
  return convert<T>(tl::max(convert<float>(a), convert<float>(b)));
}
template <class T, std::enable_if_t<is_one_of_v<T, f16, bf16>, int> = 0>
TL_DEVICE T min(T a, T b) {
  return convert<T>(tl::min(convert<float>(a), convert<float>(b)));
}
#endif

template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
TL_HOST_DEVICE T max(T a, T b) {
  return a > b ? a : b;
}
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
TL_HOST_DEVICE T min(T a, T b) {
  return a < b ? a : b;
}

// ---- inf(dtype) -------------------------------------------------------------------------
// The largest value of T: +infinity where the format has one; for formats without infinity
// (f8e4m3, integers) the largest finite value, which is what an identity of max/min needs.
template <class T>
TL_HOST_DEVICE T inf() {
  if constexpr (std::is_same_v<T, float>) {
    return bit_cast<float>(0x7F800000u);
  } else if constexpr (std::is_same_v<T, double>) {
    return bit_cast<double>(0x7FF0000000000000ull);
  } else if constexpr (std::is_same_v<T, f16>) {
    return bit_cast<f16>(std::uint16_t{0x7C00});
  } else if constexpr (std::is_same_v<T, bf16>) {
    return bit_cast<bf16>(std::uint16_t{0x7F80});
#if TL_CUDA
  } else if constexpr (std::is_same_v<T, f8e5m2>) {
    return bit_cast<f8e5m2>(std::uint8_t{0x7C});
  } else if constexpr (std::is_same_v<T, f8e4m3>) {
    return bit_cast<f8e4m3>(std::uint8_t{0x7E});  // 448, e4m3 has no infinity
#else
  } else if constexpr (is_one_of_v<T, f8e4m3, f8e5m2>) {
    return bit_cast<T>(std::uint8_t{0x7F});  // FNUZ has no infinity: 240 (e4m3), 57344 (e5m2)
#endif
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<T>(~std::make_unsigned_t<T>(0) >> 1);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(~T(0));
  } else {
    static_assert(dependent_false_v<T>, "tl::inf: unsupported type");
  }
}

// The smallest value of T: -inf, or the lowest finite value where there is no infinity.
template <class T>
TL_HOST_DEVICE T neg_inf() {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<T>(-inf<T>() - 1);
  } else if constexpr (std::is_integral_v<T>) {
    return T(0);
  } else {
    // Every float format here is sign-magnitude: flip the top bit of inf<T>().
    using Bits = std::conditional_t<sizeof(T) == 1, std::uint8_t,
                 std::conditional_t<sizeof(T) == 2, std::uint16_t,
                 std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
    Bits bits = bit_cast<Bits>(inf<T>());
    return bit_cast<T>(static_cast<Bits>(bits | (Bits{1} << (8 * sizeof(T) - 1))));
  }
}

}  // namespace tl
