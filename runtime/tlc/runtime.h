// tlc host runtime: the contract between generated launchers and their callers.
//
// Every kernel tlc compiles gets two host entry points in the generated file:
//
//   C++:  tlc::Status NS::KERNEL(const tlc::TensorView &A, ..., float scale, ..., cudaStream_t s);
//         (hipStream_t for the AMD targets, whose launchers are HIP)
//   C:    int tlc_KERNEL(const tlc_tensor_view *A, ..., float scale, ...,
//                        void *stream, char *error, size_t error_size);
//
// (tlc_NAMESPACE_KERNEL when tlc ran with --namespace NAMESPACE or --emit=header.)
// Tensors and scalars come in the kernel's parameter order. Before any CUDA call the launcher
// checks each tensor against everything the kernel assumes: rank (0..TLC_MAX_RANK first, so a
// garbage rank is never used as an index), dtype, non-negative extents, shape relations between
// tensors, non-null data aligned to its element type, unit-stride innermost dimension, outputs
// whose elements have distinct addresses (positive, non-overlapping strides) and which share no
// memory with another tensor, and extents within the kernel's 32-bit index arithmetic. Then it
// checks that the current device's compute capability reaches the code's target, binds the
// shape symbols, picks the grid, raises the dynamic shared-memory limit when needed and
// launches on `stream`. It never aborts: errors come back as a Status (C: a non-zero code and
// a message in `error`; runtime failures keep the cudaError_t, named in the message).
//
// Header-only and dependency-free apart from the CUDA (or HIP) runtime, so generated files
// and header-only kernel libraries can include it as is.
//
// The include guard is a macro, not #pragma once: self-contained generated headers carry a copy
// of this file, and the guard lets that copy and this header (or two generated headers) share
// one translation unit without redefining tlc_dtype.
#ifndef TLC_RUNTIME_H
#define TLC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Element types; the numbering is part of the C ABI (Python/ctypes callers use it).
typedef enum tlc_dtype {
  TLC_F16 = 0, TLC_BF16 = 1, TLC_F32 = 2, TLC_F64 = 3, TLC_F8E4M3 = 4, TLC_F8E5M2 = 5,
  TLC_I4 = 6, TLC_U4 = 7, TLC_I8 = 8, TLC_U8 = 9, TLC_I16 = 10, TLC_I32 = 11, TLC_U32 = 12,
  TLC_I64 = 13, TLC_BOOL = 14, TLC_F4E2M1 = 15,
} tlc_dtype;

#define TLC_MAX_RANK 8

// A strided view of device memory. Strides are in elements (for i4/u4: in elements of the
// logical tensor; the innermost dimension must be packed two per byte).
typedef struct tlc_tensor_view {
  void *data;
  int32_t dtype; // tlc_dtype
  int32_t rank;
  int64_t shape[TLC_MAX_RANK];
  int64_t strides[TLC_MAX_RANK];
} tlc_tensor_view;

// Status codes of the C entry points.
enum {
  TLC_OK = 0,
  TLC_ERROR_INVALID_ARGUMENT = 1, // a tensor does not satisfy the kernel's contract
  TLC_ERROR_LAUNCH = 2,           // the CUDA/HIP runtime failed (the message names its error)
  TLC_ERROR_UNSUPPORTED_DEVICE = 3, // the current device is older than the code's target
};

#ifdef __cplusplus
} // extern "C"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

// Grid sizes and tensor dimensions of generated launchers (compiler/lower/Launch.cpp) with
// TileLang's rounding: integer / and % floor, and ceildiv rounds up, for every sign, as the
// device code and the compiler's constant folder compute them (stdlib tl/intmath.h). A zero
// divisor (a shape symbol bound from an empty tensor) gives 0 and sets `zero`: the launcher
// returns an error instead of trapping.
inline int64_t tlc_floordiv(int64_t a, int64_t b, bool& zero) {
  if (b == 0) return zero = true, 0;
  const int64_t q = a / b, r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? q - 1 : q;
}
inline int64_t tlc_floormod(int64_t a, int64_t b, bool& zero) {
  if (b == 0) return zero = true, 0;
  const int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
inline int64_t tlc_ceildiv(int64_t a, int64_t b, bool& zero) {
  if (b == 0) return zero = true, 0;
  const int64_t q = a / b, r = a % b;
  return r != 0 && ((r < 0) == (b < 0)) ? q + 1 : q;
}
inline int64_t tlc_ceildiv(int64_t a, int64_t b) {
  bool zero = false;
  return tlc_ceildiv(a, b, zero);
}
inline int64_t tlc_abs(int64_t a) { return a < 0 ? -a : a; }

namespace tlc {

using DType = tlc_dtype;
using TensorView = tlc_tensor_view;

// The table is a plain local, not a static one: a static local of an inline function is one
// object per process (STB_GNU_UNIQUE), shared by every library built with this header, so a
// library built with a newer header (more dtypes) would index an older one's shorter table.
inline const char *dtypeName(int32_t d) {
  const char *const names[] = {"f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2", "i4", "u4",
                               "i8",  "u8",   "i16", "i32", "u32", "i64",    "bool", "f4e2m1"};
  return d >= 0 && d <= TLC_F4E2M1 ? names[d] : "unknown dtype";
}

// Bits per element; i4/u4/f4e2m1 are packed.
inline int dtypeBits(int32_t d) {
  switch (d) {
  case TLC_I4: case TLC_U4: case TLC_F4E2M1: return 4;
  case TLC_F8E4M3: case TLC_F8E5M2: case TLC_I8: case TLC_U8: case TLC_BOOL: return 8;
  case TLC_F16: case TLC_BF16: case TLC_I16: return 16;
  case TLC_F64: case TLC_I64: return 64;
  default: return 32;
  }
}

// Whether a tensor of dtype `d` holds two elements per byte (i4, u4, f4e2m1).
inline bool isPacked(int32_t d) { return dtypeBits(d) == 4; }

// A launcher's result. [[nodiscard]]: a launch whose Status is dropped fails silently.
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(int code, std::string message) {
    Status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }
  // A failure of the CUDA/HIP runtime: the code stays TLC_ERROR_LAUNCH for C callers, the
  // runtime's own error value is kept (cudaError()) and named in the message.
  static Status runtimeError(std::string message, int runtimeCode) {
    Status s = error(TLC_ERROR_LAUNCH, std::move(message));
    s.runtimeCode_ = runtimeCode;
    return s;
  }
  bool isOk() const { return code_ == TLC_OK; }
  explicit operator bool() const { return isOk(); }
  int code() const { return code_; }
  // The cudaError_t (hipError_t) value behind a TLC_ERROR_LAUNCH; 0 otherwise.
  int cudaError() const { return runtimeCode_; }
  const std::string &message() const { return message_; }

  // Copies the message into a C caller's buffer and returns the code.
  int toC(char *buffer, size_t size) const {
    if (buffer && size) {
      std::strncpy(buffer, message_.c_str(), size - 1);
      buffer[size - 1] = '\0';
    }
    return code_;
  }

private:
  int code_ = TLC_OK;
  int runtimeCode_ = 0;
  std::string message_;
};

// Shape dispatch of kernels compiled in several variants: the bucket of `size` is the
// number of bucket edges at or below it.
template <size_t N> constexpr int bucketOf(int64_t size, const int64_t (&edges)[N]) {
  int bucket = 0;
  for (size_t i = 0; i < N; ++i)
    bucket += size >= edges[i];
  return bucket;
}

// A tensor's size along `dim`, or 0 when it has fewer dimensions (the launcher it is passed
// on to reports that).
inline int64_t dimOrZero(const TensorView &t, int dim) {
  return dim >= 0 && dim < t.rank && dim < TLC_MAX_RANK ? t.shape[dim] : 0;
}

// Checks that generated launchers share. Each returns an error Status naming the kernel,
// the parameter and the numbers, or ok. They read only the view (never device memory) and
// call no runtime function, so a caller without a GPU sees every one of them.
namespace check {

inline Status fail(const char *kernel, const char *param, const std::string &what) {
  return Status::error(TLC_ERROR_INVALID_ARGUMENT,
                       std::string(kernel) + ": parameter '" + param + "' " + what);
}

// The shape as far as the rank is valid (a garbage rank must not make the message read past
// the 8-entry arrays).
inline std::string shapeStr(const TensorView &t) {
  std::string s = "[";
  for (int i = 0; i < t.rank && i < TLC_MAX_RANK; ++i)
    s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

inline bool isEmpty(const TensorView &t) {
  for (int i = 0; i < t.rank; ++i)
    if (t.shape[i] == 0)
      return true;
  return false;
}

// Rank (first: everything else reads shape[0, rank)), dtype, extents, data pointer and its
// alignment to the element size, and the unit-stride innermost dimension generated kernels
// assume (coalescing and vector loads depend on it).
inline Status tensor(const char *kernel, const char *param, const TensorView *t, int rank,
                     int32_t dtype) {
  if (!t)
    return fail(kernel, param, "is null");
  if (t->rank < 0 || t->rank > TLC_MAX_RANK)
    return fail(kernel, param, "has rank " + std::to_string(t->rank) + ", outside 0.." +
                                   std::to_string(TLC_MAX_RANK) + " (TLC_MAX_RANK)");
  if (t->rank != rank)
    return fail(kernel, param, "must have rank " + std::to_string(rank) + ", got rank " +
                                   std::to_string(t->rank) + " with shape " + shapeStr(*t));
  if (t->dtype != dtype)
    return fail(kernel, param,
                std::string("must be ") + dtypeName(dtype) + ", got " + dtypeName(t->dtype));
  for (int i = 0; i < rank; ++i)
    if (t->shape[i] < 0)
      return fail(kernel, param, "has a negative extent in shape " + shapeStr(*t));
  if (isEmpty(*t))
    return Status::ok(); // empty tensors may have no storage and are never accessed
  if (!t->data)
    return fail(kernel, param, "has a null data pointer");
  int bytes = dtypeBits(dtype) >= 8 ? dtypeBits(dtype) / 8 : 1;
  if (reinterpret_cast<uintptr_t>(t->data) % bytes != 0)
    return fail(kernel, param, std::string("has data at an address not aligned to its ") +
                                   dtypeName(dtype) + " elements (" + std::to_string(bytes) +
                                   " bytes)");
  if (rank > 0 && t->shape[rank - 1] > 1 && t->strides[rank - 1] != 1)
    return fail(kernel, param, "must be contiguous in its last dimension (stride " +
                                   std::to_string(t->strides[rank - 1]) + ")");
  return Status::ok();
}

// An i4/u4 tensor (packed two per byte along its innermost dimension, element 2c in the low
// nibble of byte c): the kernel moves whole bytes, so its innermost extent and every other
// stride (counted in 4-bit elements, as all of a view's strides) must be even.
inline Status packed(const char *kernel, const char *param, const TensorView &t) {
  if (t.rank < 1 || isEmpty(t))
    return Status::ok();
  if (t.shape[t.rank - 1] % 2 != 0)
    return fail(kernel, param, std::string("is ") + dtypeName(t.dtype) + " (packed two per byte) but its "
                                   "innermost extent " + std::to_string(t.shape[t.rank - 1]) +
                                   " is odd (shape " + shapeStr(t) + ")");
  for (int i = 0; i + 1 < t.rank; ++i)
    if (t.shape[i] > 1 && t.strides[i] % 2 != 0)
      return fail(kernel, param, std::string("is ") + dtypeName(t.dtype) + " (packed two per byte) but "
                                     "dimension " + std::to_string(i) + " has the odd stride " +
                                     std::to_string(t.strides[i]) + " (rows must start on a byte)");
  return Status::ok();
}

// An output: every element has its own address, so that no two threads write one location
// (a zero, negative or overlapping stride would race). Strides sorted by size must each step
// over the whole extent of the previous one.
inline Status writable(const char *kernel, const char *param, const TensorView &t) {
  if (isEmpty(t))
    return Status::ok();
  int order[TLC_MAX_RANK], n = 0;
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] <= 1)
      continue;
    if (t.strides[i] <= 0)
      return fail(kernel, param, "is an output but dimension " + std::to_string(i) +
                                     " has stride " + std::to_string(t.strides[i]) +
                                     " (outputs need positive strides)");
    int j = n++;
    for (; j > 0 && t.strides[order[j - 1]] > t.strides[i]; --j)
      order[j] = order[j - 1];
    order[j] = i;
  }
  for (int j = 1; j < n; ++j) {
    int inner = order[j - 1], outer = order[j];
    int64_t span;
    if (__builtin_mul_overflow(t.strides[inner], t.shape[inner], &span) ||
        t.strides[outer] < span)
      return fail(kernel, param, "is an output but its dimensions overlap: stride " +
                                     std::to_string(t.strides[outer]) + " of dimension " +
                                     std::to_string(outer) + " is less than extent " +
                                     std::to_string(t.shape[inner]) + " x stride " +
                                     std::to_string(t.strides[inner]) + " of dimension " +
                                     std::to_string(inner));
  }
  return Status::ok();
}

// The bytes a view can touch, relative to its data pointer: [lo, hi). False when that does not
// fit in 64 bits.
inline bool byteSpan(const TensorView &t, int64_t &lo, int64_t &hi) {
  int bits = dtypeBits(t.dtype);
  lo = 0;
  hi = 0;
  for (int i = 0; i < t.rank; ++i) {
    int64_t last;
    if (__builtin_mul_overflow(t.shape[i] - 1, t.strides[i], &last))
      return false;
    if (__builtin_add_overflow(last < 0 ? lo : hi, last, last < 0 ? &lo : &hi))
      return false;
  }
  // Elements to bytes (i4/u4: half a byte each, rounded outwards), plus the last element.
  int64_t loBits, hiBits;
  if (__builtin_mul_overflow(lo, bits, &loBits) || __builtin_mul_overflow(hi, bits, &hiBits) ||
      __builtin_sub_overflow(loBits, 7, &loBits) || __builtin_add_overflow(hiBits, 7 + bits, &hiBits))
    return false;
  lo = loBits / 8;
  hi = hiBits / 8;
  return true;
}

// Sizes the kernel's 32-bit index arithmetic can hold. Generated kernels form indices as a tile
// origin plus an offset within the tile, and ceildiv(extent, tile) as extent + tile - 1, so
// every value stays below extent + `headroom` (the largest tile extent of the kernel), and
// element offsets are 64-bit but must not overflow that either.
inline Status indexRange(const char *kernel, const char *param, const TensorView &t,
                         int64_t headroom) {
  const int64_t limit = INT32_MAX - headroom + 1;
  for (int i = 0; i < t.rank; ++i)
    if (t.shape[i] > limit)
      return fail(kernel, param,
                  "has extent " + std::to_string(t.shape[i]) + " in dimension " + std::to_string(i) +
                      ": the kernel's 32-bit index arithmetic reaches extent + " +
                      std::to_string(headroom - 1) + " (tiles of up to " + std::to_string(headroom) +
                      "), above 2^31 - 1; the largest extent it takes is " + std::to_string(limit));
  int64_t lo, hi;
  if (!isEmpty(t) && !byteSpan(t, lo, hi))
    return fail(kernel, param, "spans more than 2^63 bytes (shape " + shapeStr(t) + ")");
  return Status::ok();
}

// An output must not share memory with another tensor: kernels read inputs and write outputs
// in any order (and through __restrict__ pointers).
inline Status disjoint(const char *kernel, const char *output, const TensorView &out,
                       const char *other, const TensorView &t, bool otherIsOutput) {
  int64_t outLo, outHi, lo, hi;
  if (isEmpty(out) || isEmpty(t) || !byteSpan(out, outLo, outHi) || !byteSpan(t, lo, hi))
    return Status::ok(); // empty (no memory), or already rejected by indexRange
  __int128 a = static_cast<__int128>(reinterpret_cast<uintptr_t>(out.data));
  __int128 b = static_cast<__int128>(reinterpret_cast<uintptr_t>(t.data));
  if (a + outLo < b + hi && b + lo < a + outHi)
    return fail(kernel, output, std::string("is an output that overlaps ") +
                                    (otherIsOutput ? "output '" : "input '") + other +
                                    "' in memory (bytes [" + std::to_string(int64_t(outLo)) + ", " +
                                    std::to_string(int64_t(outHi)) + ") of it and [" +
                                    std::to_string(static_cast<long long>(b + lo - a)) + ", " +
                                    std::to_string(static_cast<long long>(b + hi - a)) +
                                    ") relative to its data pointer)");
  return Status::ok();
}

// Binds a shape symbol on first use and checks every later use against it.
inline Status bindSymbol(const char *kernel, const char *symbol, int64_t &slot, bool &bound,
                         int64_t value, const char *param, int dim) {
  if (!bound) {
    slot = value;
    bound = true;
    return Status::ok();
  }
  if (slot != value)
    return Status::error(TLC_ERROR_INVALID_ARGUMENT,
                         std::string(kernel) + ": shape symbol '" + symbol + "' is " +
                             std::to_string(slot) + " but dimension " + std::to_string(dim) +
                             " of '" + param + "' is " + std::to_string(value));
  return Status::ok();
}

// A dimension fixed at compile time (a constant or a compile-time parameter).
inline Status fixedDim(const char *kernel, const char *param, const TensorView &t, int dim,
                       int64_t expected) {
  if (t.shape[dim] != expected)
    return Status::error(TLC_ERROR_INVALID_ARGUMENT,
                         std::string(kernel) + ": dimension " + std::to_string(dim) + " of '" +
                             param + "' must be " + std::to_string(expected) + ", got " +
                             std::to_string(t.shape[dim]) + " (shape " + shapeStr(t) + ")");
  return Status::ok();
}

// A grid extent or tensor dimension whose launch arithmetic divided by zero (a shape symbol
// bound from an empty tensor: runtime.h's tlc_floordiv and friends).
// A value the kernel computes in 32-bit integers from the call's sizes (`what`, at `where` in
// its .tl source), evaluated here in 64 bits: a call where it leaves the i32 range would make
// the kernel wrap, so it is refused with the value.
inline Status int32Range(const char *kernel, const char *where, const char *what, int64_t value) {
  if (value >= INT32_MIN && value <= INT32_MAX)
    return Status::ok();
  return Status::error(TLC_ERROR_INVALID_ARGUMENT,
                       std::string(kernel) + ": " + where + ": '" + what + "' is " + std::to_string(value) +
                           " for these sizes, outside the 32-bit integers the kernel computes it in "
                           "(-2147483648 to 2147483647)");
}

inline Status zeroDivisor(const char *kernel) {
  return Status::error(TLC_ERROR_INVALID_ARGUMENT,
                       std::string(kernel) + ": a grid extent or tensor dimension divides by zero (a shape "
                                             "symbol it divides by is 0: an empty tensor)");
}

// True when every row start is aligned to `bytes` (base pointer and outer strides), which is
// what the vectorized (16-byte) paths need.
inline bool rowsAligned(const TensorView &t, int bytes) {
  if (reinterpret_cast<uintptr_t>(t.data) % bytes != 0)
    return false;
  int bits = dtypeBits(t.dtype);
  for (int i = 0; i + 1 < t.rank; ++i)
    if ((t.strides[i] * bits / 8) % bytes != 0)
      return false;
  return true;
}

#ifdef CUDART_VERSION
// A failed runtime call, with the runtime's error name and value kept.
inline Status cudaFailure(const char *kernel, const std::string &what, cudaError_t e) {
  return Status::runtimeError(std::string(kernel) + ": " + what + ": " + cudaGetErrorName(e) +
                                  " (" + std::to_string(static_cast<int>(e)) + "): " +
                                  cudaGetErrorString(e),
                              static_cast<int>(e));
}

// The current device can run code generated for compute capability `required` (major * 10 +
// minor, e.g. 90 for sm_90a). Called after the argument checks: the first runtime calls.
inline Status device(const char *kernel, int required, const char *target) {
  int dev = 0, major = 0, minor = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (e != cudaSuccess)
    return cudaFailure(kernel, "cannot query the current device", e);
  if (major * 10 + minor < required)
    return Status::error(TLC_ERROR_UNSUPPORTED_DEVICE,
                         std::string(kernel) + ": compiled for " + target + " (compute capability " +
                             std::to_string(required / 10) + "." + std::to_string(required % 10) +
                             "), but device " + std::to_string(dev) + " has compute capability " +
                             std::to_string(major) + "." + std::to_string(minor));
  return Status::ok();
}

// The grid of a persistent kernel (`persistent()`): as many blocks of `kernel` as are resident
// on the current device at once (its SMs times the blocks per SM its threads, registers and
// `smem` bytes of dynamic shared memory allow), at most `tiles`, each looping over the tiles.
// Called after the kernel's shared-memory limit is raised: the occupancy depends on it.
template <typename Kernel>
inline Status persistentBlocks(const char *kernel, Kernel *fn, int threads, size_t smem, int64_t tiles,
                               int *blocks) {
  int dev = 0, sms = 0, perSM = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, fn, threads, smem);
  if (e != cudaSuccess)
    return cudaFailure(kernel, "cannot size the persistent grid", e);
  if (perSM <= 0)
    return Status::error(TLC_ERROR_LAUNCH, std::string(kernel) + ": a block of " + std::to_string(threads) +
                                               " threads with " + std::to_string(smem) +
                                               " bytes of shared memory does not fit on an SM of device " +
                                               std::to_string(dev));
  const int64_t resident = int64_t(sms) * perSM;
  *blocks = static_cast<int>(tiles < resident ? tiles : resident);
  return Status::ok();
}
#endif

#if defined(__HIP_PLATFORM_AMD__)
// The same for HIP (launchers generated for gfx90a, gfx940, gfx942): a failed runtime call,
// with the hipError_t kept.
inline Status hipFailure(const char *kernel, const std::string &what, hipError_t e) {
  return Status::runtimeError(std::string(kernel) + ": " + what + ": " + hipGetErrorName(e) + " (" +
                                  std::to_string(static_cast<int>(e)) + "): " + hipGetErrorString(e),
                              static_cast<int>(e));
}

// AMD code objects hold one ISA: the current device's architecture (gcnArchName up to its
// feature list, "gfx90a" of "gfx90a:sramecc+:xnack-") must be `target`. `required` (a compute
// capability) is 0 for AMD targets and not used.
inline Status device(const char *kernel, int required, const char *target) {
  (void)required;
  int dev = 0;
  hipDeviceProp_t prop;
  hipError_t e = hipGetDevice(&dev);
  if (e == hipSuccess)
    e = hipGetDeviceProperties(&prop, dev);
  if (e != hipSuccess)
    return hipFailure(kernel, "cannot query the current device", e);
  std::string arch = prop.gcnArchName;
  arch = arch.substr(0, arch.find(':'));
  if (arch != target)
    return Status::error(TLC_ERROR_UNSUPPORTED_DEVICE,
                         std::string(kernel) + ": compiled for " + target + ", but device " +
                             std::to_string(dev) + " is " + arch);
  return Status::ok();
}
// persistentBlocks of the CUDA half, on the HIP runtime (compute units for SMs).
template <typename Kernel>
inline Status persistentBlocks(const char *kernel, Kernel *fn, int threads, size_t smem, int64_t tiles,
                               int *blocks) {
  int dev = 0, cus = 0, perCU = 0;
  hipError_t e = hipGetDevice(&dev);
  if (e == hipSuccess)
    e = hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, dev);
  if (e == hipSuccess)
    e = hipOccupancyMaxActiveBlocksPerMultiprocessor(&perCU, fn, threads, smem);
  if (e != hipSuccess)
    return hipFailure(kernel, "cannot size the persistent grid", e);
  if (perCU <= 0)
    return Status::error(TLC_ERROR_LAUNCH, std::string(kernel) + ": a block of " + std::to_string(threads) +
                                               " threads with " + std::to_string(smem) +
                                               " bytes of LDS does not fit on a compute unit of device " +
                                               std::to_string(dev));
  const int64_t resident = int64_t(cus) * perCU;
  *blocks = static_cast<int>(tiles < resident ? tiles : resident);
  return Status::ok();
}
#endif

} // namespace check

#if defined(CUDART_VERSION) || defined(__HIP_PLATFORM_AMD__)
// The dynamic shared-memory (LDS) limit of one kernel instantiation, raised to what it needs
// once per device rather than at every launch: launches stay cheap, and a launch captured into
// a CUDA or HIP graph (after a first, eager one on that device) makes no call besides the
// launch itself. Devices past the table's end are raised every time (harmless, only slower).
// Concurrent first launches may both raise it; the attribute call is idempotent.
class SharedMemoryLimit {
public:
  Status raise(const char *kernel, const void *function, size_t bytes) {
    int dev = 0;
#if defined(__HIP_PLATFORM_AMD__)
    hipError_t e = hipGetDevice(&dev);
    if (e != hipSuccess)
      return check::hipFailure(kernel, "cannot query the current device", e);
#else
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
      return check::cudaFailure(kernel, "cannot query the current device", e);
#endif
    bool cached = dev >= 0 && dev < kDevices;
    if (cached && raised_[dev].load(std::memory_order_acquire) >= bytes)
      return Status::ok();
#if defined(__HIP_PLATFORM_AMD__)
    e = hipFuncSetAttribute(function, hipFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (e != hipSuccess)
      return check::hipFailure(kernel, "cannot reserve " + std::to_string(bytes) + " bytes of shared memory", e);
#else
    e = cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (e != cudaSuccess)
      return check::cudaFailure(kernel, "cannot reserve " + std::to_string(bytes) + " bytes of shared memory", e);
#endif
    if (cached)
      raised_[dev].store(bytes, std::memory_order_release);
    return Status::ok();
  }

private:
  static constexpr int kDevices = 64;
  std::atomic<size_t> raised_[kDevices] = {};
};
#endif

} // namespace tlc
#endif // __cplusplus
#endif // TLC_RUNTIME_H
