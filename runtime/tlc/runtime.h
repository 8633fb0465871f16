// tlc host runtime: the contract between generated launchers and their callers.
//
// Every kernel tlc compiles gets two host entry points in the generated file:
//
//   C++:  tlc::Status NS::KERNEL(const tlc::TensorView &A, ..., float scale, ..., cudaStream_t s);
//   C:    int tlc_KERNEL(const tlc_tensor_view *A, ..., float scale, ...,
//                        void *stream, char *error, size_t error_size);
//
// Tensors and scalars come in the kernel's parameter order. The launcher checks each tensor
// against the kernel's contract (rank, dtype, shape relations between tensors, contiguity of
// the innermost dimension, alignment), binds the shape symbols, picks the grid, raises the
// dynamic shared-memory limit when needed and launches on `stream`. It never aborts: errors
// come back as a Status (C: a non-zero code and a message in `error`).
//
// Header-only and dependency-free apart from the CUDA (or HIP) runtime, so generated files
// and header-only kernel libraries can include it as is.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Element types; the numbering is part of the C ABI (Python/ctypes callers use it).
typedef enum tlc_dtype {
  TLC_F16 = 0, TLC_BF16 = 1, TLC_F32 = 2, TLC_F64 = 3, TLC_F8E4M3 = 4, TLC_F8E5M2 = 5,
  TLC_I4 = 6, TLC_U4 = 7, TLC_I8 = 8, TLC_U8 = 9, TLC_I16 = 10, TLC_I32 = 11, TLC_U32 = 12,
  TLC_I64 = 13, TLC_BOOL = 14,
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
  TLC_ERROR_LAUNCH = 2,           // the CUDA/HIP runtime refused the launch
};

#ifdef __cplusplus
} // extern "C"

#include <cstdio>
#include <cstring>
#include <string>

// Grid sizes of generated launchers.
inline int64_t tlc_ceildiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

namespace tlc {

using DType = tlc_dtype;
using TensorView = tlc_tensor_view;

inline const char *dtypeName(int32_t d) {
  static const char *names[] = {"f16", "bf16", "f32", "f64", "f8e4m3", "f8e5m2", "i4", "u4",
                                "i8",  "u8",   "i16", "i32", "u32", "i64",    "bool"};
  return d >= 0 && d <= TLC_BOOL ? names[d] : "unknown dtype";
}

// Bits per element; i4/u4 are packed.
inline int dtypeBits(int32_t d) {
  switch (d) {
  case TLC_I4: case TLC_U4: return 4;
  case TLC_F8E4M3: case TLC_F8E5M2: case TLC_I8: case TLC_U8: case TLC_BOOL: return 8;
  case TLC_F16: case TLC_BF16: case TLC_I16: return 16;
  case TLC_F64: case TLC_I64: return 64;
  default: return 32;
  }
}

class Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(int code, std::string message) {
    Status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }
  bool isOk() const { return code_ == TLC_OK; }
  explicit operator bool() const { return isOk(); }
  int code() const { return code_; }
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
  return dim >= 0 && dim < t.rank ? t.shape[dim] : 0;
}

// Checks that generated launchers share. Each returns an error Status naming the kernel,
// the parameter and the numbers, or ok.
namespace check {

inline std::string shapeStr(const TensorView &t) {
  std::string s = "[";
  for (int i = 0; i < t.rank; ++i)
    s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

inline Status tensor(const char *kernel, const char *param, const TensorView *t, int rank,
                     int32_t dtype) {
  auto fail = [&](const std::string &what) {
    return Status::error(TLC_ERROR_INVALID_ARGUMENT,
                         std::string(kernel) + ": parameter '" + param + "' " + what);
  };
  if (!t)
    return fail("is null");
  if (t->rank != rank)
    return fail("must have rank " + std::to_string(rank) + ", got rank " + std::to_string(t->rank) +
                " with shape " + shapeStr(*t));
  if (t->dtype != dtype)
    return fail(std::string("must be ") + dtypeName(dtype) + ", got " + dtypeName(t->dtype));
  for (int i = 0; i < rank; ++i)
    if (t->shape[i] < 0)
      return fail("has a negative extent in shape " + shapeStr(*t));
  if (!t->data) {
    for (int i = 0; i < rank; ++i)
      if (t->shape[i] == 0)
        return Status::ok(); // empty tensors may have no storage
    return fail("has a null data pointer");
  }
  // Generated kernels index rows with the given strides but assume a unit-stride innermost
  // dimension (coalescing and vector loads depend on it).
  if (rank > 0 && t->shape[rank - 1] > 1 && t->strides[rank - 1] != 1)
    return fail("must be contiguous in its last dimension (stride " +
                std::to_string(t->strides[rank - 1]) + ")");
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

} // namespace check
} // namespace tlc
#endif
