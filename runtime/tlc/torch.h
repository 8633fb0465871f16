// tlc/torch.h - what the PyTorch extensions tlc writes (`tlc --emit=torch`) share: torch
// tensors as the launchers' tlc::TensorView, the launchers' Status as a TORCH_CHECK, the
// device and stream of a call, and output allocation.
//
// The generated ops do no checking of their own beyond what a TensorView cannot express (the
// device, a dtype tlc has no code for): rank, dtype, shapes, strides, alignment and overlap are
// the launcher's checks (tlc/runtime.h), and its message becomes the RuntimeError Python sees.
// Nothing here synchronizes or allocates outside PyTorch's caching allocator, so the ops can be
// captured into CUDA graphs.
#pragma once

#include "tlc/runtime.h"

#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>
#include <torch/version.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace tlc {
namespace torch_ops {

// The tlc dtype code of a torch dtype; -1 when tlc has none (i4/u4 have no torch dtype).
inline int32_t dtypeOf(c10::ScalarType t) {
  switch (t) {
  case c10::ScalarType::Half: return TLC_F16;
  case c10::ScalarType::BFloat16: return TLC_BF16;
  case c10::ScalarType::Float: return TLC_F32;
  case c10::ScalarType::Double: return TLC_F64;
  case c10::ScalarType::Char: return TLC_I8;
  case c10::ScalarType::Byte: return TLC_U8;
  case c10::ScalarType::Short: return TLC_I16;
  case c10::ScalarType::Int: return TLC_I32;
  case c10::ScalarType::Long: return TLC_I64;
  case c10::ScalarType::Bool: return TLC_BOOL;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  case c10::ScalarType::Float8_e4m3fn: return TLC_F8E4M3;
  case c10::ScalarType::Float8_e5m2: return TLC_F8E5M2;
#endif
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  case c10::ScalarType::UInt32: return TLC_U32;
#endif
  default: return -1;
  }
}

// The torch dtype of a tlc dtype code, for outputs the op allocates; none for i4/u4 (and for
// the fp8 and u32 types before the PyTorch versions that have them).
inline std::optional<c10::ScalarType> scalarTypeOf(int32_t d) {
  for (int8_t i = 0; i < static_cast<int8_t>(c10::ScalarType::NumOptions); ++i)
    if (dtypeOf(static_cast<c10::ScalarType>(i)) == d)
      return static_cast<c10::ScalarType>(i);
  return std::nullopt;
}

// One call of a generated op: the kernel's name (messages), the device of its first tensor
// (every tensor must be there), a guard making that device current (the launcher queries and
// launches on the current device) and its current stream.
class Call {
public:
  Call(const char *kernel, const char *firstParam, const at::Tensor &first)
      : kernel_(kernel), firstParam_(firstParam), device_(first.device()) {
    TORCH_CHECK(device_.is_cuda(), kernel_, ": parameter '", firstParam_,
                "' must be a CUDA tensor, got one on ", device_);
    guard_.emplace(device_);
  }
  // A call with no tensor parameters: the current device.
  explicit Call(const char *kernel)
      : kernel_(kernel), firstParam_(""), device_(c10::DeviceType::CUDA, c10::cuda::current_device()) {}

  // `t` as the launcher sees it. The rank goes in as it is: the launcher rejects one above
  // TLC_MAX_RANK before it reads the shape, of which only the first TLC_MAX_RANK are copied.
  // An i4/u4 parameter (`packed` its tlc dtype) takes the packed bytes, a uint8 or int8 tensor
  // [..., K / 2]: its view is the logical [..., K] tensor, strides counted in 4-bit elements
  // (tlc/runtime.h), so the innermost extent and the other strides double.
  TensorView view(const char *param, const at::Tensor &t, int32_t packed = -1) const {
    TORCH_CHECK(t.device() == device_, kernel_, ": parameter '", param, "' is on ", t.device(),
                " but '", firstParam_, "' is on ", device_, " (every tensor must be on the same CUDA device)");
    TensorView v{};
    v.dtype = dtypeOf(t.scalar_type());
    TORCH_CHECK(v.dtype >= 0, kernel_, ": parameter '", param, "' has dtype ", t.scalar_type(),
                ", which no tlc kernel parameter takes");
    if (packed >= 0) {
      TORCH_CHECK(v.dtype == TLC_U8 || v.dtype == TLC_I8, kernel_, ": parameter '", param, "' is ",
                  dtypeName(packed), ": pass its packed bytes as a uint8 or int8 tensor [..., K / 2], got ",
                  t.scalar_type());
      v.dtype = packed;
    }
    v.data = t.data_ptr();
    v.rank = static_cast<int32_t>(t.dim());
    for (int64_t i = 0; i < t.dim() && i < TLC_MAX_RANK; ++i) {
      const bool inner = i + 1 == t.dim();
      v.shape[i] = packed >= 0 && inner ? t.size(i) * 2 : t.size(i);
      v.strides[i] = packed >= 0 && !(inner && t.stride(i) == 1) ? t.stride(i) * 2 : t.stride(i);
    }
    return v;
  }

  // A scalar argument in the launcher's type: Python ints arrive as int64_t and must fit.
  template <class T> T integer(const char *param, int64_t value) const {
    TORCH_CHECK(value >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                    static_cast<uint64_t>(value) <= static_cast<uint64_t>(std::numeric_limits<T>::max()),
                kernel_, ": scalar parameter '", param, "' is ", value, ", outside the range of its type [",
                static_cast<int64_t>(std::numeric_limits<T>::min()), ", ", std::numeric_limits<T>::max(), "]");
    return static_cast<T>(value);
  }

  // An uninitialized output of tlc dtype `dtype` on the call's device, from the caching
  // allocator (capture-safe). A negative extent (inputs the launcher will reject) becomes 0,
  // so that the launcher, not the allocator, reports the problem.
  // An i4/u4/f4e2m1 output is allocated as its packed bytes, uint8 [..., K / 2] (see view()).
  at::Tensor empty(const char *param, c10::IntArrayRef shape, int32_t dtype) const {
    if (isPacked(dtype)) {
      TORCH_CHECK(!shape.empty() && shape.back() % 2 == 0, kernel_, ": output '", param, "' is ", dtypeName(dtype),
                  " (packed two per byte) and needs an even innermost extent, got ", shape);
      std::vector<int64_t> bytes(shape.begin(), shape.end());
      bytes.back() /= 2;
      return empty(param, bytes, TLC_U8);
    }
    std::optional<c10::ScalarType> type = scalarTypeOf(dtype);
    TORCH_CHECK(type.has_value(), kernel_, ": output '", param, "' is ", dtypeName(dtype),
                ", which has no torch dtype in this PyTorch; pass the output to the op that takes it");
    std::vector<int64_t> sizes(shape.begin(), shape.end());
    for (int64_t &s : sizes)
      s = s < 0 ? 0 : s;
    return at::empty(sizes, at::TensorOptions().dtype(*type).device(device_));
  }

  cudaStream_t stream() const { return at::cuda::getCurrentCUDAStream(device_.index()).stream(); }

  // The launcher's result: an error becomes a RuntimeError with the launcher's message.
  void check(const Status &status) const { TORCH_CHECK(status.isOk(), status.message()); }

private:
  const char *kernel_;
  const char *firstParam_;
  c10::Device device_;
  std::optional<c10::cuda::CUDAGuard> guard_;
};

} // namespace torch_ops
} // namespace tlc
