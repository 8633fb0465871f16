// How a software-pipelined loop gets its prefetched tiles: the target's choice
// (TargetInfo::pipelineStyle), which the loop IR carries to PipelineExpansion. A header of its
// own, with no includes, so that the loop IR (and the printer that reads it) can name it
// without seeing the layout algebra TargetInfo.h brings.
#pragma once

namespace tlc::target {

enum class PipelineStyle {
  AsyncGroups,    // cp.async commit groups; wait_group<stages - 2> then a block barrier
  MbarrierBulk,   // one bulk tensor copy per tile, each stage's mbarrier counts its bytes
  RegisterStaged, // no asynchronous copy into shared memory: load to registers, then store
};

// LDS buffers of a tile a RegisterStaged pipeline fills: iteration k + 1's tile is stored into
// one while iteration k's consumers read the other (double buffering, whatever `stages` says).
constexpr int kRegisterStagedBuffers = 2;

} // namespace tlc::target
