// tl/reduce.h - all-reductions across threads: warp shuffles and shared memory.
//
// Reduction operators (TileLang's reduce_sum / max / min / abssum / absmax, tlc's bitwise
// reduce_and / or / xor, and reduce_argmax / argmin over ArgPair<T> (value, position) pairs):
//   Op::prepare(x)      applied once to each thread's input (abs for the abs* reductions)
//   Op::combine(a, b)   the associative, commutative step
//   Op::identity<T>()   the neutral element, for initializing accumulators (`clear = true`)
//
// A reduction group is a set of threads whose indices differ only in a run of index bits:
//   warp_allreduce<Op, Width, Stride>(x)
//       the Width lanes {l ^ (k * Stride) : k < Width} of one warp (Width * Stride <= warp).
//       Width = 4, Stride = 1 reduces the 4 lanes sharing a row of an mma fragment;
//       Width = 8, Stride = 4 the 8 lanes sharing a column.
//   group_allreduce<Op, Width, Stride, NumThreads>(x, smem)
//       the same across the whole block, for groups that span warps; smem holds NumThreads
//       elements.
//   block_allreduce<Op, NumThreads>(x, smem)
//       all NumThreads threads of a 1-D block; smem holds NumThreads / warp-size elements.
// Every thread of a group receives the same, bitwise identical result (the xor butterfly
// combines the same operands on every lane, and the shared-memory step reads the partials in
// one fixed order). All threads of the warp (warp_allreduce) or block (the others) must call
// the function together; the block-level versions synchronize with __syncthreads() and leave
// `smem` free for reuse on return.
#pragma once

#include "common.h"
#include "math.h"

namespace tl {

// ---- Operators ------------------------------------------------------------------------------
struct SumOp {
  template <class T>
  static TL_DEVICE T prepare(T x) { return x; }
  template <class T>
  static TL_DEVICE T combine(T a, T b) { return a + b; }
  template <class T>
  static TL_DEVICE T identity() { return convert<T>(0.0f); }
};

struct MaxOp {
  template <class T>
  static TL_DEVICE T prepare(T x) { return x; }
  template <class T>
  static TL_DEVICE T combine(T a, T b) { return tl::max(a, b); }
  template <class T>
  static TL_DEVICE T identity() { return neg_inf<T>(); }
};

struct MinOp {
  template <class T>
  static TL_DEVICE T prepare(T x) { return x; }
  template <class T>
  static TL_DEVICE T combine(T a, T b) { return tl::min(a, b); }
  template <class T>
  static TL_DEVICE T identity() { return inf<T>(); }
};

// Sum of absolute values: abs is applied once on entry, so combining partial sums stays a sum.
struct AbsSumOp : SumOp {
  template <class T>
  static TL_DEVICE T prepare(T x) { return tl::abs(x); }
};

struct AbsMaxOp : MaxOp {
  template <class T>
  static TL_DEVICE T prepare(T x) { return tl::abs(x); }
  template <class T>
  static TL_DEVICE T identity() { return convert<T>(0.0f); }
};

// Bitwise reductions of integers: all-ones is and's identity, zero or's and xor's.
struct AndOp {
  template <class T>
  static TL_DEVICE T prepare(T x) { return x; }
  template <class T>
  static TL_DEVICE T combine(T a, T b) { return static_cast<T>(a & b); }
  template <class T>
  static TL_DEVICE T identity() { return static_cast<T>(~T(0)); }
};

struct OrOp {
  template <class T>
  static TL_DEVICE T prepare(T x) { return x; }
  template <class T>
  static TL_DEVICE T combine(T a, T b) { return static_cast<T>(a | b); }
  template <class T>
  static TL_DEVICE T identity() { return T(0); }
};

struct XorOp : OrOp {
  template <class T>
  static TL_DEVICE T combine(T a, T b) { return static_cast<T>(a ^ b); }
};

// A value and its position along the reduced dimension, as argmax/argmin carry them through
// the folds, the shuffles and the shared-memory step.
template <class T>
struct ArgPair {
  T value;
  int index;
};

namespace detail {

template <class T>
TL_DEVICE bool arg_is_nan(T x) {
  if constexpr (std::is_integral_v<T>) {
    return false;
  } else {
    float f = convert<float>(x);
    return f != f;
  }
}

// Whether `a` orders before `b`: `Greater` (argmax) puts larger values first, else smaller
// ones; NaN comes before every number (torch: NaN is both the maximum and the minimum), and
// equal values (NaN and NaN included) go by the smaller position, so the result is the first
// occurrence whatever order the combines run in.
template <bool Greater, class T>
TL_DEVICE bool arg_before(const ArgPair<T>& a, const ArgPair<T>& b) {
  const bool an = arg_is_nan(a.value), bn = arg_is_nan(b.value);
  if (an || bn) return an && (!bn || a.index < b.index);
  if constexpr (std::is_integral_v<T> || std::is_same_v<T, double>) {
    if (a.value != b.value) return Greater ? a.value > b.value : a.value < b.value;
  } else {
    const float x = convert<float>(a.value), y = convert<float>(b.value);
    if (x != y) return Greater ? x > y : x < y;
  }
  return a.index < b.index;
}

}  // namespace detail

template <bool Greater>
struct ArgOp {
  template <class P>
  static TL_DEVICE P prepare(P x) { return x; }
  template <class P>
  static TL_DEVICE P combine(P a, P b) { return detail::arg_before<Greater>(a, b) ? a : b; }
  // The identity loses to every element: the far end of the order at the last position.
  template <class P>
  static TL_DEVICE P identity() {
    using T = decltype(P::value);
    return P{Greater ? neg_inf<T>() : inf<T>(), 0x7FFFFFFF};
  }
};
using ArgMaxOp = ArgOp<true>;
using ArgMinOp = ArgOp<false>;

// ---- Warp level ---------------------------------------------------------------------------
template <class T>
TL_DEVICE T shfl_xor(T x, int lane_mask) {
#if TL_HIP
  return __shfl_xor(x, lane_mask);
#else
  return __shfl_xor_sync(0xFFFFFFFFu, x, lane_mask);
#endif
}

// A pair travels as its two members.
template <class T>
TL_DEVICE ArgPair<T> shfl_xor(ArgPair<T> x, int lane_mask) {
  return ArgPair<T>{shfl_xor(x.value, lane_mask), shfl_xor(x.index, lane_mask)};
}

namespace detail {

// Combines values that already went through Op::prepare.
template <class Op, int Width, int Stride, class T>
TL_DEVICE T warp_combine(T x) {
  static_assert(is_pow2(Width) && is_pow2(Stride), "reduction Width and Stride are powers of two");
  static_assert(Width * Stride <= TL_WARP_SIZE, "warp reduction group exceeds a warp");
#pragma unroll
  for (int mask = Stride; mask < Width * Stride; mask <<= 1) {
    x = Op::combine(x, shfl_xor(x, mask));
  }
  return x;
}

}  // namespace detail

template <class Op, int Width = TL_WARP_SIZE, int Stride = 1, class T>
TL_DEVICE T warp_allreduce(T x) {
  return detail::warp_combine<Op, Width, Stride>(Op::prepare(x));
}

// Convenience spellings of the full-warp reductions.
template <class T>
TL_DEVICE T warp_sum(T x) { return warp_allreduce<SumOp>(x); }
template <class T>
TL_DEVICE T warp_max(T x) { return warp_allreduce<MaxOp>(x); }
template <class T>
TL_DEVICE T warp_min(T x) { return warp_allreduce<MinOp>(x); }
template <class T>
TL_DEVICE T warp_abssum(T x) { return warp_allreduce<AbsSumOp>(x); }
template <class T>
TL_DEVICE T warp_absmax(T x) { return warp_allreduce<AbsMaxOp>(x); }

// ---- Block level --------------------------------------------------------------------------
template <class Op, int Width, int Stride, int NumThreads, class T>
TL_DEVICE T group_allreduce(T x, T* smem) {
  static_assert(is_pow2(Width) && is_pow2(Stride), "reduction Width and Stride are powers of two");
  static_assert(Width * Stride <= NumThreads, "reduction group exceeds the block");
  static_assert(NumThreads % TL_WARP_SIZE == 0, "block size must be a multiple of the warp size");
  // Split the group's index bits into the part inside a warp (shuffles) and the part across
  // warps (shared memory).
  constexpr int kInStride = Stride < TL_WARP_SIZE ? Stride : TL_WARP_SIZE;
  constexpr int kInEnd = Width * Stride < TL_WARP_SIZE ? Width * Stride : TL_WARP_SIZE;
  constexpr int kInWidth = Stride < TL_WARP_SIZE ? kInEnd / kInStride : 1;
  constexpr int kOutWidth = Width / kInWidth;
  constexpr int kOutStride = Stride < TL_WARP_SIZE ? TL_WARP_SIZE : Stride;

  x = detail::warp_combine<Op, kInWidth, kInStride>(Op::prepare(x));
  if constexpr (kOutWidth == 1) {
    (void)smem;
    return x;
  } else {
    const int tid = static_cast<int>(threadIdx.x);
    smem[tid] = x;
    __syncthreads();
    // Partials of the group sit at base + k * kOutStride, read in the same order by all.
    const int base = tid & ~((kOutWidth - 1) * kOutStride);
    T r = smem[base];
#pragma unroll
    for (int k = 1; k < kOutWidth; ++k) r = Op::combine(r, smem[base + k * kOutStride]);
    __syncthreads();
    return r;
  }
}

template <class Op, int NumThreads, class T>
TL_DEVICE T block_allreduce(T x, T* smem) {
  static_assert(NumThreads % TL_WARP_SIZE == 0 && NumThreads <= 1024,
                "block size must be a multiple of the warp size, at most 1024");
  constexpr int kWarps = NumThreads / TL_WARP_SIZE;
  x = detail::warp_combine<Op, TL_WARP_SIZE, 1>(Op::prepare(x));
  if constexpr (kWarps == 1) {
    (void)smem;
    return x;
  } else {
    const int tid = static_cast<int>(threadIdx.x);
    if (tid % TL_WARP_SIZE == 0) smem[tid / TL_WARP_SIZE] = x;
    __syncthreads();
    T r = smem[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) r = Op::combine(r, smem[w]);
    __syncthreads();
    return r;
  }
}

}  // namespace tl
