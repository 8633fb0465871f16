// tl/host_device.h - TL_HOST_DEVICE for the headers that are plain C++ (swizzle.h,
// intmath.h): the compiler's unit tests include them without CUDA, where the attribute is
// just `inline`. Under nvcc/hipcc it is what tl/common.h defines.
#pragma once

#ifndef TL_HOST_DEVICE
#if defined(__CUDACC__) || defined(__HIPCC__)
#define TL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TL_HOST_DEVICE inline
#endif
#endif
