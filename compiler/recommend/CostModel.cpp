#include "recommend/CostModel.h"
#include "infer/RegisterEstimate.h"

#include <algorithm>
#include <cmath>

namespace tlc::recommend {

using namespace ftg;

const Term *Prediction::bound() const {
  const Term *best = nullptr;
  for (const Term &t : terms)
    if (!best || t.seconds > best->seconds)
      best = &t;
  return best;
}

namespace {

// An SM has four schedulers (NVIDIA sub-partitions, AMD SIMDs).
constexpr double kSchedulersPerSM = 4;
// A warpgroup (wgmma's issuing group) is four warps, one per scheduler.
constexpr double kWarpsPerWarpgroup = 4;
// Warps per scheduler that keep the scalar pipes busy through their latencies.
constexpr double kScalarWarpsPerScheduler = 2;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Instruction selection's estimate plus what its compile-time check does not count: one
// k-step's gemm operands as ldmatrix leaves them (BlockWork).
int registerEstimate(const Graph &g, const BlockWork &work) {
  return infer::estimateRegisters(g) + work.gemmOperandRegisters;
}

} // namespace

Occupancy occupancyOf(const Graph &g, const BlockWork &work, const target::TargetDesc &t) {
  Occupancy o;
  // The warp-specialized variant adds producer threads to the block and asks __launch_bounds__
  // for its minimum of blocks per SM; with a producer warpgroup, setmaxnreg then moves the
  // registers of the whole launch allocation to the consumers.
  const infer::BulkPipelinePlan &bulk = work.bulk;
  const int64_t threads = bulk ? bulk.threads() : g.threads;
  const int minBlocks = bulk ? bulk.minBlocksPerSM : 1;
  int warps = int(ceilDiv(threads, t.warpSize));
  int granularity = std::max(1, t.registerAllocUnit / t.warpSize);
  int wanted = registerEstimate(g, work);
  // __launch_bounds__(threads, minBlocks) makes the compiler fit that many blocks per SM,
  // spilling the rest.
  int launchCap = int(std::min<int64_t>(t.registersPerThread,
                                        t.registersPerSM / std::max<int64_t>(1, minBlocks * warps * t.warpSize)));
  launchCap = launchCap / granularity * granularity;
  int cap = bulk.consumerRegisters > 0 ? bulk.consumerRegisters : launchCap;
  o.registersWanted = wanted;
  o.registersSpill = wanted > cap;
  o.registersPerThread = int(std::min<int64_t>(ceilDiv(wanted, granularity) * granularity, cap));

  int perThreadAtLaunch = bulk.consumerRegisters > 0 ? launchCap : o.registersPerThread;
  int64_t regsPerBlock = int64_t(warps) * ceilDiv(int64_t(perThreadAtLaunch) * t.warpSize,
                                                  t.registerAllocUnit) * t.registerAllocUnit;
  struct Limit {
    const char *name;
    int64_t blocks;
  };
  int64_t blockShared = bulk ? bulk.sharedBytes : g.sharedBytes;
  int64_t shared = blockShared > 0 ? blockShared + t.sharedReservedPerBlock : 0;
  Limit limits[] = {
      {"shared memory", shared > 0 ? t.sharedPerSM / shared : t.blocksPerSM},
      {"registers", regsPerBlock > 0 ? t.registersPerSM / regsPerBlock : t.blocksPerSM},
      {"threads", t.threadsPerSM / std::max(1, warps * t.warpSize)},
      {"blocks", t.blocksPerSM},
  };
  const Limit *tightest = &limits[0];
  for (const Limit &l : limits)
    if (l.blocks < tightest->blocks)
      tightest = &l;
  o.blocksPerSM = int(std::max<int64_t>(0, tightest->blocks));
  o.limitedBy = tightest->name;
  o.warpsPerSM = o.blocksPerSM * warps;
  o.fraction = double(o.warpsPerSM * t.warpSize) / double(t.threadsPerSM);
  return o;
}

Prediction predict(const Graph &g, const GridShape &grid, const BlockWork &work,
                   const target::TargetDesc &t, int panel, TrafficModel &trafficModel) {
  Prediction p;
  p.blocks = grid.blocks();
  p.sharedBytes = g.sharedBytes;
  p.occupancy = occupancyOf(g, work, t);
  auto illegal = [&](std::string why) {
    p.legal = false;
    p.reason = std::move(why);
    return p;
  };
  if (g.threads > t.threadsPerBlock)
    return illegal(std::to_string(g.threads) + " threads per block, but " + t.name + " allows " +
                   std::to_string(t.threadsPerBlock));
  if (g.sharedBytes > t.sharedPerBlock)
    return illegal(std::to_string(g.sharedBytes) + " bytes of shared memory per block, but " +
                   t.name + " allows " + std::to_string(t.sharedPerBlock));
  if (p.occupancy.blocksPerSM == 0)
    return illegal("no block fits on an SM (limited by " + p.occupancy.limitedBy + ")");
  if (p.blocks <= 0 || g.threads <= 0)
    return illegal("the grid has " + std::to_string(p.blocks) + " blocks of " +
                   std::to_string(g.threads) + " threads");

  const double S = t.sms;
  const int64_t blocks = p.blocks;
  const int64_t slots = int64_t(S) * p.occupancy.blocksPerSM;
  const double perSM = double(ceilDiv(blocks, int64_t(S)));
  // Blocks an SM actually holds at once: small grids leave slots empty.
  const double resident = std::min<double>(p.occupancy.blocksPerSM, perSM);
  const double warps = std::ceil(double(g.threads) / t.warpSize);
  const double residentWarps = resident * warps;
  p.waves = ceilDiv(blocks, slots);
  int64_t tail = blocks % slots;
  p.lastWaveFill = tail == 0 ? 1.0 : double(tail) / double(slots);

  // Compute units, charged to the busiest SM.
  const double schedulerFill = std::min(1.0, residentWarps / kSchedulersPerSM);
  const double warpsPerScheduler = residentWarps / kSchedulersPerSM;
  const target::TensorPath &path = t.tensorPath(work.warpgroupMma);
  if (!work.tensorFlops.empty())
    p.tensorPath = path.name;
  p.producerThreads = work.bulk.producers;
  double tensorSeconds = 0;
  for (const auto &[dtype, flops] : work.tensorFlops) {
    std::optional<double> rate = t.tensorRate(dtype, work.warpgroupMma);
    if (!rate)
      return illegal("the " + path.name + " tensor-core path of " + t.name + " has no " +
                     dtypeName(dtype).str() + " instruction");
    double fill;
    if (work.warpgroupMma && path.stepCycles > 0 && work.warpgroupStepFlops > 0) {
      // A warpgroup keeps the pipe busy W / (W + step) of its time; the SM's other
      // warpgroups, and its own groups left in flight, fill the gaps.
      double W = work.warpgroupStepFlops / (*rate / S) * t.clockGHz * 1e9;
      double groups = residentWarps / kWarpsPerWarpgroup * (work.groupsInFlight ? 2 : 1);
      fill = std::min(1.0, groups * W / (W + path.stepCycles));
    } else {
      double ilp = std::min(1.0, warpsPerScheduler * work.mmaPerWarpStep / path.ilpNeeded);
      double warpFill = std::min(1.0, warpsPerScheduler / path.warpsNeeded);
      fill = schedulerFill * ilp * warpFill;
    }
    tensorSeconds += perSM * flops / (*rate / S * std::max(fill, 1e-3));
    p.tensorFlops += flops * double(blocks);
  }
  const double scalarFill = std::min(1.0, residentWarps / (kSchedulersPerSM * kScalarWarpsPerScheduler));
  p.cudaOps = work.cudaOps * double(blocks);
  p.sfuOps = work.sfuOps * double(blocks);
  double spillBytes = p.occupancy.registersSpill
                          ? double(p.occupancy.registersWanted - p.occupancy.registersPerThread) * 4 *
                                g.threads * 2 * std::max(1.0, work.barriers)
                          : 0.0;
  const double sharedPerBlock = work.sharedBytes + spillBytes;
  p.sharedBytesMoved = sharedPerBlock * double(blocks);
  p.registerBytes = work.registerBytes * double(blocks);

  // Memory levels.
  p.traffic = trafficModel.traffic(work, grid, slots, panel);
  double hit = p.traffic.l2ReadBytes > 0
                   ? std::clamp(1.0 - p.traffic.hbmReadBytes / p.traffic.l2ReadBytes, 0.0, 1.0)
                   : 0.0;
  double latency = hit * t.l2Latency + (1 - hit) * t.hbmLatency;
  double activeSMs = std::min<double>(S, double(blocks));
  double inflightRate = activeSMs * resident * std::max(work.bytesInFlight, 1.0) / latency;

  p.terms = {
      {"HBM", "memory", p.traffic.hbmBytes / t.hbmBandwidth, p.traffic.hbmBytes},
      {"L2", "memory", p.traffic.l2Bytes / t.l2Bandwidth, p.traffic.l2Bytes},
      {"in-flight", "latency", p.traffic.l2ReadBytes / inflightRate, p.traffic.l2ReadBytes},
      {"shared", "memory", perSM * sharedPerBlock / (t.sharedBandwidth / S), p.sharedBytesMoved},
      {"tensor core", "compute", tensorSeconds, p.tensorFlops},
      {"CUDA cores", "compute", perSM * work.cudaOps / (t.cudaCoreRate / S * std::max(scalarFill, 1e-3)),
       p.cudaOps},
      {"SFU", "compute", perSM * work.sfuOps / (t.sfuRate / S * std::max(scalarFill, 1e-3)), p.sfuOps},
  };

  // Stalls a block cannot overlap with its own work, shared among the blocks resident on
  // its SM: the first fetch of a pipeline, unpipelined loads, barriers.
  double fills = work.bytesInFlight > 0 ? 1.0 : 0.0;
  double stalls = (fills + work.exposedLoads) * latency + work.barriers * t.cyclesToSeconds(t.barrierCycles);
  p.intrinsic = t.launchOverhead + perSM * stalls / resident;

  // The paper's max() over the terms, softened: an L^p norm equals the max when one term
  // dominates and grows when several resources are busy at once (their overlap is never
  // perfect: they share issue slots, registers and the memory pipeline).
  const Term *b = p.bound();
  double norm = 0;
  if (b && b->seconds > 0) {
    for (const Term &term : p.terms)
      norm += std::pow(term.seconds / b->seconds, t.overlapNorm);
    norm = b->seconds * std::pow(norm, 1.0 / t.overlapNorm);
  }
  p.overlapped = norm;
  p.seconds = norm + p.intrinsic;
  double ops = p.tensorFlops + p.cudaOps + p.sfuOps;
  p.arithmeticIntensity = p.traffic.hbmBytes > 0 ? ops / p.traffic.hbmBytes : 0;
  // Descriptors are validated when loaded, but extreme sizes can still overflow a double:
  // a prediction that is not a finite positive time ranks nothing (NaN breaks every sort).
  if (!std::isfinite(p.seconds) || !(p.seconds > 0))
    return illegal("the cost model cannot predict this configuration (its predicted time is " +
                   std::to_string(p.seconds) + " s)");
  return p;
}

} // namespace tlc::recommend
