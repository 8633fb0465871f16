// tl/emu/hip.h - the CPU emulator for tlc's HIP (gfx9: gfx90a, gfx940, gfx942) lowering.
//
// tlc run --emulate --target gfx90a compiles the generated HIP as ordinary C++ with
// -DTL_EMULATE -D__HIPCC__ -D__HIP_PLATFORM_AMD__ -DTL_EMU_WARP_SIZE=64 and
// stdlib/tl/emu/include first on the include path, so that <hip/hip_runtime.h> (and hip_fp16.h,
// hip_bfloat16.h) bring in this header: the CUDA emulator (emulate.h: fibers, barriers, shared
// memory, atomics) with 64-lane waves, HIP's wave-wide intrinsics, the MFMA builtins (mfma.h,
// from AMD's ISA documents), the HIP runtime calls a generated launcher makes, and HIP's half
// and bfloat16 types mapped onto the CUDA toolkit's host types (same bits, same rounding).
// LDS is the emulator's shared memory.
#pragma once

#if !defined(__HIPCC__) || !defined(__HIP_PLATFORM_AMD__) || !defined(TL_EMU_WARP_SIZE) || TL_EMU_WARP_SIZE != 64
#error "tl/emu/hip.h emulates HIP for CDNA: compile with -D__HIPCC__ -D__HIP_PLATFORM_AMD__ -DTL_EMU_WARP_SIZE=64"
#endif

#include "tl/emu/emulate.h"
#include "tl/emu/mfma.h"

// The CUDA toolkit's headers define CUDART_VERSION; tlc/runtime.h must take its HIP half only.
#undef CUDART_VERSION

// ---- Types (hip_fp16.h, hip_bfloat16.h) -----------------------------------------------------
// __half and __half2 are cuda_fp16.h's. hip_bfloat16 rounds a float to nearest even and widens
// exactly, as __nv_bfloat16 does; tlc's library uses only those conversions and arithmetic
// through float.
using hip_bfloat16 = __nv_bfloat16;

// ---- Wave-wide intrinsics (HIP's amd_warp_functions.h semantics) ---------------------------
// HIP's shuffles and votes have no mask: every active lane takes part. The emulator takes the
// wave's lanes that have not exited; lanes that branch around a shuffle the others reach show
// as a deadlock (tl emulator: error), as code that relies on divergent shuffles has no
// portable meaning.
inline int __lane_id() { return ::tl::emu::self().lane; }

// __shfl(var, src, width): lane l reads lane src of its width-aligned segment (src modulo 64,
// as ds_bpermute takes a lane address modulo the wave).
template <class T>
T __shfl(T var, int src_lane, int width = 64) {
  const int lane = ::tl::emu::self().lane;
  const int seg = lane & ~(width - 1);
  // The CUDA-semantics helper computes seg + (arg & (width - 1)); HIP adds src to the
  // segment's first lane without masking it: the same for 0 <= src < width, and an index
  // past the segment wraps modulo the wave.
  const int index = (seg + src_lane) & 63;
  return ::tl::emu::shfl(::tl::emu::Shfl::Idx, ::tl::emu::live_lanes(), var, index, 64, "__shfl");
}
template <class T>
T __shfl_up(T var, unsigned delta, int width = 64) {
  return ::tl::emu::shfl(::tl::emu::Shfl::Up, ::tl::emu::live_lanes(), var, static_cast<int>(delta), width, "__shfl_up");
}
template <class T>
T __shfl_down(T var, unsigned delta, int width = 64) {
  return ::tl::emu::shfl(::tl::emu::Shfl::Down, ::tl::emu::live_lanes(), var, static_cast<int>(delta), width,
                         "__shfl_down");
}
template <class T>
T __shfl_xor(T var, int lane_mask, int width = 64) {
  return ::tl::emu::shfl(::tl::emu::Shfl::Xor, ::tl::emu::live_lanes(), var, lane_mask, width, "__shfl_xor");
}
// __ballot: bit l of the 64-bit result is lane l's predicate.
inline unsigned long long __ballot(int predicate) {
  return ::tl::emu::vote(::tl::emu::live_lanes(), predicate != 0, "__ballot");
}
inline int __any(int predicate) { return ::tl::emu::vote(::tl::emu::live_lanes(), predicate != 0, "__any") != 0; }
inline int __all(int predicate) {
  const ::tl::emu::LaneMask live = ::tl::emu::live_lanes();
  return ::tl::emu::vote(live, predicate != 0, "__all") == live;
}

// ---- The HIP runtime calls of generated launchers and tlc/runtime.h --------------------------
// One emulated device whose gcnArchName is TL_EMU_GCN_ARCH (tlc passes the target's name), with
// 64 KiB of LDS per block.
#ifndef TL_EMU_GCN_ARCH
#define TL_EMU_GCN_ARCH "gfx90a"
#endif
using hipStream_t = cudaStream_t;
enum hipError_t { hipSuccess = 0, hipErrorInvalidValue = 1 };
enum hipFuncAttribute { hipFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum hipDeviceAttribute_t { hipDeviceAttributeMultiprocessorCount = 63 };
struct hipDeviceProp_t {
  char name[256];
  char gcnArchName[256];
  int multiProcessorCount;
  std::size_t sharedMemPerBlock;
};
inline hipError_t hipGetDevice(int* device) {
  *device = 0;
  return hipSuccess;
}
inline hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int) {
  std::memset(prop, 0, sizeof *prop);
  std::snprintf(prop->name, sizeof prop->name, "tl emulator");
  std::snprintf(prop->gcnArchName, sizeof prop->gcnArchName, "%s:sramecc+:xnack-", TL_EMU_GCN_ARCH);
  prop->multiProcessorCount = 1;
  prop->sharedMemPerBlock = 64 * 1024;
  return hipSuccess;
}
inline hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attr, int) {
  *value = attr == hipDeviceAttributeMultiprocessorCount ? 1 : 0;
  return hipSuccess;
}
// The emulator has no occupancy: a persistent grid is sized by the emulating launcher itself.
template <class T>
hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, T*, int, std::size_t) {
  *blocks = 1;
  return hipSuccess;
}
inline hipError_t hipFuncSetAttribute(const void*, hipFuncAttribute, int bytes) {
  // A CDNA block has at most 64 KiB of LDS; tlc refuses larger kernels, so this is a check of
  // the launcher, not of the user's kernel.
  return bytes <= 64 * 1024 ? hipSuccess : hipErrorInvalidValue;
}
inline hipError_t hipGetLastError() { return hipSuccess; }
inline const char* hipGetErrorName(hipError_t e) { return e == hipSuccess ? "hipSuccess" : "hipErrorInvalidValue"; }
inline const char* hipGetErrorString(hipError_t e) { return e == hipSuccess ? "no error" : "invalid argument (emulated)"; }
