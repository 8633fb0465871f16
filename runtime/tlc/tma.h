// tlc/tma.h - bulk-copy tensor maps built on the host, without linking the driver library.
//
// cuTensorMapEncodeTiled is a driver API function; the runtime hands out its address
// (cudaGetDriverEntryPointByVersion), so programs that launch tlc kernels link only cudart.
// Every failure is a `false` the launcher turns into a status: an unaligned base or stride, a
// driver without the entry point, a box the hardware cannot describe.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace tlc {
namespace tma {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver entry point `name` (ABI of CUDA 12.0) through the runtime, so that users need not
// link libcuda; null where the driver lacks it.
inline void* driver_entry(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return p;
}

// The driver's cuTensorMapEncodeTiled, or null.
inline EncodeTiledFn encoder() {
  static const EncodeTiledFn fn = reinterpret_cast<EncodeTiledFn>(driver_entry("cuTensorMapEncodeTiled"));
  return fn;
}

// The map of a tensor of `rank` (2..5) dimensions given outermost first as tlc's tensor views
// hold them (shape, strides in elements, the innermost stride 1), whose copies move boxes of
// `box` elements per dimension (outermost first; 1 for a dimension a copy holds fixed).
inline bool encode(CUtensorMap* map, const void* base, CUtensorMapDataType type, int elem_bytes, int rank,
                   const std::int64_t* shape, const std::int64_t* strides, const std::uint32_t* box,
                   CUtensorMapSwizzle swizzle) {
  EncodeTiledFn fn = encoder();
  if (!fn || rank < 2 || rank > 5 || reinterpret_cast<std::uintptr_t>(base) % 16 != 0 || strides[rank - 1] != 1)
    return false;
  cuuint64_t dims[5], byte_strides[4];
  cuuint32_t boxes[5], element_strides[5];
  for (int i = 0; i < rank; ++i) {  // the driver's order: innermost first
    const int d = rank - 1 - i;
    if (shape[d] <= 0)
      return false;
    dims[i] = static_cast<cuuint64_t>(shape[d]);
    boxes[i] = box[d];
    element_strides[i] = 1;
    if (i > 0) {
      byte_strides[i - 1] = static_cast<cuuint64_t>(strides[d]) * static_cast<cuuint64_t>(elem_bytes);
      if (byte_strides[i - 1] % 16 != 0)
        return false;
    }
  }
  return fn(map, type, static_cast<cuuint32_t>(rank), const_cast<void*>(base), dims, byte_strides, boxes,
            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The map of a row-major [rows][cols] tensor (row stride in bytes) whose copies move
// [box_rows][box_cols] boxes, zero-filling outside the tensor. The bulk copy needs the base
// 16-byte aligned, the row stride a multiple of 16 bytes, and with a swizzle a box row of at
// most the swizzle span (128 bytes for CU_TENSOR_MAP_SWIZZLE_128B).
inline bool encode_2d(CUtensorMap* map, const void* base, CUtensorMapDataType type, std::uint64_t rows,
                      std::uint64_t cols, std::uint64_t row_stride_bytes, std::uint32_t box_rows,
                      std::uint32_t box_cols, CUtensorMapSwizzle swizzle) {
  EncodeTiledFn fn = encoder();
  if (!fn || reinterpret_cast<std::uintptr_t>(base) % 16 != 0 || row_stride_bytes % 16 != 0)
    return false;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {row_stride_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  return fn(map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

using EncodeIm2colFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                    const cuuint64_t*, const int*, const int*, cuuint32_t, cuuint32_t,
                                    const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                    CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's cuTensorMapEncodeIm2col, or null.
inline EncodeIm2colFn im2col_encoder() {
  static const EncodeIm2colFn fn = reinterpret_cast<EncodeIm2colFn>(driver_entry("cuTensorMapEncodeIm2col"));
  return fn;
}

// The im2col-mode map of an NHWC tensor (shape and strides in elements, outermost first as tlc's
// views hold them, channels innermost with stride 1) whose copies move `pixels` pixels of
// `channels` channels each, zero-filled outside the tensor. A copy's anchors run over the box
// [lower, extent - 1 + upper] (inclusive) of H and of W, `stride` apart, row by row and image by
// image; the copy adds its filter tap to each. Fails (false) where the map cannot describe it:
// a base or row stride not a multiple of 16 bytes, corners outside [-128, 127] (the range of a
// 4-d map), a stride over 8, more than 256 channels or 1024 pixels, no encoder in the driver.
inline bool encode_im2col(CUtensorMap* map, const void* base, CUtensorMapDataType type, int elem_bytes,
                          const std::int64_t* shape, const std::int64_t* strides, std::uint32_t pixels,
                          std::uint32_t channels, int lower_h, int lower_w, int upper_h, int upper_w, int stride,
                          CUtensorMapSwizzle swizzle) {
  EncodeIm2colFn fn = im2col_encoder();
  if (!fn || reinterpret_cast<std::uintptr_t>(base) % 16 != 0 || strides[3] != 1 || stride < 1 || stride > 8 ||
      channels < 1 || channels > 256 || pixels < 1 || pixels > 1024)
    return false;
  for (int corner : {lower_h, lower_w, upper_h, upper_w})
    if (corner < -128 || corner > 127)
      return false;
  cuuint64_t dims[4], byte_strides[3];
  for (int i = 0; i < 4; ++i) {  // the driver's order: C, W, H, N
    const int d = 3 - i;
    if (shape[d] <= 0)
      return false;
    dims[i] = static_cast<cuuint64_t>(shape[d]);
    if (i > 0) {
      byte_strides[i - 1] = static_cast<cuuint64_t>(strides[d]) * static_cast<cuuint64_t>(elem_bytes);
      if (byte_strides[i - 1] % 16 != 0)
        return false;
    }
  }
  const int lower[2] = {lower_w, lower_h}, upper[2] = {upper_w, upper_h};  // W, H
  const cuuint32_t element_strides[4] = {1, static_cast<cuuint32_t>(stride), static_cast<cuuint32_t>(stride), 1};
  return fn(map, type, 4, const_cast<void*>(base), dims, byte_strides, lower, upper, channels, pixels,
            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace tma
}  // namespace tlc
