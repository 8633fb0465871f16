// Target descriptors: what the recommender knows about one GPU (TileLang paper §4.2 and
// appendix D). Each descriptor is a JSON file under compiler/target/descriptors/, embedded into
// tlc at build time, so the numbers live in data with their sources next to them rather than
// in code. A user may also pass a descriptor file of their own (`--target my-gpu.json`).
// Its `arch` must name a TargetInfo (target/TargetInfo.h), whose architectural limits the
// descriptor repeats for the model.
//
// Rates are aggregate over the whole device. Tensor-core rates are per instruction path
// ("mma_sync", "wgmma", "mfma") and per input dtype with f32 accumulation, because the path
// the back end actually emits bounds what a kernel can reach: on the H100 tlc emits
// mma.sync, whose measured ceiling is a quarter of wgmma's datasheet peak.
#pragma once

#include "frontend/Types.h"
#include "target/TargetInfo.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlc::target {

struct TensorPath {
  std::string name;
  int mmaM = 16, mmaN = 8, mmaK = 16; // instruction shape: tile sizes are multiples of it
  // Independent MMAs each SM sub-partition needs in flight to keep its tensor pipe busy.
  double ilpNeeded = 4;
  // Warps each sub-partition needs resident to hide what a warp's own MMAs cannot: its
  // ldmatrix latency and its barriers (optional; 1 = one warp suffices).
  double warpsNeeded = 1;
  // Warpgroup paths (wgmma; optional, 0 = the per-warp model above): the clocks a warpgroup
  // loses per k-step to the group it waits for, its barriers and the next issue. A warpgroup
  // alone keeps the pipe busy W / (W + step_cycles) of the time, W its tensor clocks per
  // k-step; other warpgroups of the SM, and its own groups left in flight, fill the gaps.
  double stepCycles = 0;
  std::map<DType, double> tflops; // per input dtype, f32 accumulation
};

struct TargetDesc {
  std::string name;        // "h100-sxm"
  std::string description; // "NVIDIA H100 SXM5 80GB (Hopper)"
  std::string vendor;      // "nvidia" | "amd"
  std::string arch;        // the code-generation target: "sm_90a", "gfx942"
  const TargetInfo *info = nullptr; // arch's TargetInfo (never null for a loaded descriptor)
  std::vector<std::string> aliases;
  bool defaultForArch = false;

  int sms = 0; // SMs or CUs
  double clockGHz = 0;
  int warpSize = 32;

  // Per SM (CU) and per block.
  int64_t sharedPerSM = 0, sharedPerBlock = 0, sharedReservedPerBlock = 0;
  int64_t registersPerSM = 0; // 32-bit registers
  int registersPerThread = 255;
  int registerAllocUnit = 256; // registers are allocated per warp in units of this many
  int threadsPerSM = 0, threadsPerBlock = 0, blocksPerSM = 0;

  // Memory (aggregate bytes per second; capacities in bytes; latencies in seconds).
  double hbmBandwidth = 0, l2Bandwidth = 0, sharedBandwidth = 0;
  int64_t l2Bytes = 0;
  double hbmLatency = 0, l2Latency = 0;

  // Compute (aggregate operations per second).
  std::string tensorPathName; // the path tlc's back end emits on this target
  // The path of kernels whose gemms run on the target's warpgroup MMA (wgmma), when it has
  // one; empty otherwise.
  std::string warpgroupPathName;
  std::vector<TensorPath> tensorPaths;
  double cudaCoreRate = 0; // scalar instructions per second over all lanes
  double sfuRate = 0;      // special-function results per second

  double launchOverhead = 0; // seconds
  double barrierCycles = 0;  // one block-wide barrier, in clocks
  // How the roofline terms combine: the L^p norm of their times. A large p is the paper's
  // max() (perfect overlap); a smaller one charges for several resources being busy at once.
  double overlapNorm = 4;

  // The path the back end emits: for a kernel whose gemms run on warpgroup MMA when
  // `warpgroup` (and the descriptor names such a path), else the per-warp one.
  const TensorPath &tensorPath(bool warpgroup = false) const;
  // Tensor-core operations per second for `dtype` on that path; nullopt when the path has no
  // such instruction.
  std::optional<double> tensorRate(DType dtype, bool warpgroup = false) const;
  double cyclesToSeconds(double cycles) const { return cycles / (clockGHz * 1e9); }
};

// Parses one descriptor; errors name the file and the field.
llvm::Expected<TargetDesc> parseTargetDesc(llvm::StringRef json, llvm::StringRef fileName);

// The descriptors built into tlc, in a fixed order (sorted by name).
const std::vector<TargetDesc> &builtinTargets();

// Resolves --target: a descriptor name or alias ("h100", "mi300x"), an architecture
// ("sm_90a": its default descriptor) or a path to a .json descriptor.
llvm::Expected<TargetDesc> resolveTarget(llvm::StringRef spec);

// The descriptor to tune `auto` parameters with for a compilation target that has none of its
// own: the newest one of its family at or below it (sm_86 -> a100-sxm's sm_80, CDNA3's
// gfx940 -> mi300x's gfx942). None for an architecture of no known family.
const TargetDesc *nearestTarget(llvm::StringRef arch);

} // namespace tlc::target
