// tl/emu/cp_async.h - cp.async (PTX ISA "cp.async", "cp.async.commit_group",
// "cp.async.wait_group") on the emulator.
//
// A copy reads its source when issued (src-size bytes; the rest of cp-size is zero) but
// writes shared memory only when a cp.async.wait_group of the issuing thread covers its group:
// so code that reads a stage before waiting for it, or that another thread reads before a
// barrier after the wait, sees stale bytes, as it may on the GPU.
#pragma once

#include <algorithm>

#include "tl/emu/builtins.h"
#include "tl/emu/scheduler.h"

namespace tl::emu {

inline void cp_async(void* smem_dst, const void* gmem_src, int cp_bytes, int src_bytes) {
  Thread& t = self();
  if (cp_bytes != 4 && cp_bytes != 8 && cp_bytes != 16) fail("cp.async copies 4, 8 or 16 bytes, not %d", cp_bytes);
  if (src_bytes < 0 || src_bytes > cp_bytes) fail("cp.async: src-size %d is not in 0..%d", src_bytes, cp_bytes);
  const std::uint32_t offset = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_dst));
  if (offset % static_cast<std::uint32_t>(cp_bytes) != 0 ||
      reinterpret_cast<std::uintptr_t>(gmem_src) % static_cast<std::uintptr_t>(cp_bytes) != 0)
    fail("cp.async of %d bytes: misaligned address (shared offset 0x%x, global %p)", cp_bytes, offset, gmem_src);
  PendingCopy c{};
  c.dst = shared_pointer(offset, static_cast<std::size_t>(cp_bytes), "cp.async");
  c.bytes = cp_bytes;
  if (src_bytes > 0) std::memcpy(c.data, gmem_src, static_cast<std::size_t>(src_bytes));
  c.group = t.committed_groups;  // the group the next commit closes
  t.pending.push_back(c);
}

inline void cp_async_commit() { ++self().committed_groups; }

// Lands every copy of a committed group older than the newest `n`.
inline void cp_async_wait(int n, bool all = false) {
  Thread& t = self();
  const long limit = all ? t.committed_groups + 1 : t.committed_groups - n;
  auto landed = [&](const PendingCopy& c) {
    if (c.group >= limit) return false;
    std::memcpy(c.dst, c.data, static_cast<std::size_t>(c.bytes));
    return true;
  };
  t.pending.erase(std::remove_if(t.pending.begin(), t.pending.end(), landed), t.pending.end());
}

inline void flush_cp_async(Thread& t) {
  for (const PendingCopy& c : t.pending) std::memcpy(c.dst, c.data, static_cast<std::size_t>(c.bytes));
  t.pending.clear();
}

}  // namespace tl::emu
