// tl/emu/launch.h - a kernel launch on the emulator: every block of the grid (or a seeded
// random subset, Config::max_blocks), one after another in a seeded random order, as blocks
// may run on a GPU (a kernel that depends on their order, or a last_block branch that assumes
// which block comes last, gives a wrong answer), each with fresh shared memory filled with
// 0xFF bytes (NaN in every float type), so that reading what no thread wrote shows.
#pragma once

#include <algorithm>
#include <numeric>
#include <tuple>

#include "tl/emu/scheduler.h"

namespace tl::emu {

template <class... P, class... A>
void launch(void (*kernel)(P...), dim3 grid, dim3 block, std::size_t smem_bytes, cudaStream_t /*stream*/,
            A&&... args) {
  std::tuple<std::decay_t<P>...> params(static_cast<std::decay_t<P>>(args)...);
  SharedWindow& window = shared_window();
  if (smem_bytes > window.bytes)
    fail("the launch asks for %zu bytes of dynamic shared memory; the emulator has %zu", smem_bytes, window.bytes);
  struct Call {
    void (*kernel)(P...);
    std::tuple<std::decay_t<P>...>* params;
  } call{kernel, &params};
  Block b;
  b.grid_dim = grid;
  b.block_dim = block;
  b.body = [](void* p) {
    auto* c = static_cast<Call*>(p);
    std::apply(c->kernel, *c->params);
  };
  b.body_arg = &call;
  const long total = static_cast<long>(grid.x) * grid.y * grid.z;
  std::vector<long> order(static_cast<std::size_t>(total));
  std::iota(order.begin(), order.end(), 0L);
  std::mt19937_64 pick(config().seed ^ 0x9E3779B97F4A7C15ull);
  std::shuffle(order.begin(), order.end(), pick);
  if (config().max_blocks > 0 && total > config().max_blocks) {
    order.resize(static_cast<std::size_t>(config().max_blocks));
    std::fprintf(stderr, "tl emulator: note: running %ld of the %ld blocks (--max-blocks)\n", config().max_blocks, total);
  }
  for (long i : order) {
    const uint3 index = make_uint3(static_cast<unsigned>(i % grid.x), static_cast<unsigned>((i / grid.x) % grid.y),
                                   static_cast<unsigned>(i / (static_cast<long>(grid.x) * grid.y)));
    std::memset(window.base, 0xFF, window.bytes);
    run_block(b, index, config().seed * 0x100000001B3ull + static_cast<std::uint64_t>(i));
  }
}

}  // namespace tl::emu

// ---- The CUDA runtime calls generated launchers make ----------------------------------------
// One emulated device of compute capability TL_EMU_CAPABILITY (default 8.0).
#ifndef TL_EMU_CAPABILITY
#define TL_EMU_CAPABILITY 80
#endif
inline cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  *value = attr == cudaDevAttrComputeCapabilityMajor ? TL_EMU_CAPABILITY / 10
           : attr == cudaDevAttrComputeCapabilityMinor ? TL_EMU_CAPABILITY % 10
                                                        : 0;
  return cudaSuccess;
}
template <class T>
cudaError_t cudaFuncSetAttribute(T*, cudaFuncAttribute, int) { return cudaSuccess; }
// The untyped form cuda_runtime_api.h declares, which tlc/runtime.h calls (through a `const
// void*`) to raise a kernel's dynamic shared memory above 48 KiB: defined here, or a kernel
// with that much shared memory would not link.
inline cudaError_t cudaFuncSetAttribute(const void*, cudaFuncAttribute, int) { return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline const char* cudaGetErrorName(cudaError_t) { return "cudaEmulated"; }
inline const char* cudaGetErrorString(cudaError_t) { return "error in the emulator"; }
