// TargetInfo: what every pass asks about the GPU it compiles for (Triton's TargetInfoBase,
// TileLang's target attributes). One object per --target spelling, built once and looked up
// in one place (lookupTarget); passes never compare target names or hard-code a warp size.
//
// What it describes, all as data:
//  - the warp (wave) size and the architectural limits of one block and one SM;
//  - tensor-core MMA atoms: instruction shape, (input, accumulator) dtypes, and where each thread holds
//    the A, B and C elements, as Fragments of the layout algebra (the way CuTe's MMA_Traits
//    describe an instruction by its ALayout/BLayout/CLayout);
//  - copy atoms (cp.async, vector loads, bulk tensor copies, AMD buffer loads);
//  - the barriers the target has and how a software pipeline waits for its copies.
// The sm_80 family and sm_90a drive CUDA generation (sm_90a's gemms on wgmma where they fit
// it), gfx9 (gfx90a, gfx940, gfx942) HIP generation (wave64, MFMA).
//
// The per-GPU descriptors of target/Descriptor.h (rates, SM counts) are a different thing:
// many GPUs share one TargetInfo (an A100 and an A30 are both sm_80), and a descriptor names
// its TargetInfo by its `arch`.
#pragma once

#include "frontend/Types.h"
#include "ir/Fragment.h"
#include "ir/LdsBanks.h"
#include "target/PipelineStyle.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace tlc::target {

// The --target tlc compiles for when none is given. The one place this default is written.
constexpr llvm::StringLiteral kDefaultTargetName = "sm_90a";
// The lowering `tlc run --emulate` runs by default: the CPU emulator (stdlib/tl/emu/) has the
// sm_80 instructions (mma.sync, ldmatrix, cp.async), not wgmma or TMA.
constexpr llvm::StringLiteral kEmulatedTargetName = "sm_80";

enum class Vendor { Nvidia, Amd };

// Block-level resource limits (CUDA C Programming Guide, "Technical Specifications per
// Compute Capability"; AMD CDNA ISA guides).
struct Limits {
  int64_t sharedBytesPerBlock = 0;    // opt-in maximum of one block's shared memory (LDS)
  int64_t sharedBytesPerSM = 0;
  int64_t sharedReservedPerBlock = 0; // the runtime's own bytes per resident block
  int registersPerThread = 0;         // 32-bit registers (VGPRs)
  int64_t registersPerSM = 0;
  int registerAllocUnit = 0;          // registers are allocated per warp in units of this many
  int threadsPerBlock = 0;
  int threadsPerSM = 0;
  int blocksPerSM = 0;
};

// A tensor-core instruction: D[m, n] = A[m, k] * B[k, n] + C[m, n], issued together by
// `threads` threads (a warp, a warpgroup or a wave).
struct MmaAtom {
  std::string name;  // the instruction, "mma.sync.aligned.m16n8k16.row.col"
  int m = 0, n = 0, k = 0;
  int threads = 0;
  // The (input, accumulator) dtype pairs the instruction has; A and B share the input dtype.
  struct DTypes {
    DType input, accumulator;
  };
  std::vector<DTypes> dtypes;
  // Thread layouts over the instruction's tiles: A is [m, k], B is [k, n], C is [m, n];
  // `thread` counts the issuing threads from 0. An operand the instruction reads from
  // shared memory through a descriptor (wgmma's B) has no thread layout; C always has one,
  // the same for every accumulator dtype (PTX: f16 accumulators pack elements 2i and 2i + 1
  // into one 32-bit register, in the order of the f32 ones).
  std::optional<Fragment> a, b, c;

  bool supports(DType input, DType accumulator) const;
  bool takesInput(DType input) const;
  // The pairs for messages: "f16 -> f32, bf16 -> f32, f16 -> f16".
  std::string dtypesText() const;
};

enum class CopyKind {
  Vector,     // ld/st of up to 16 bytes per thread through registers
  CpAsync,    // cp.async.cg: global -> shared without registers, 16 bytes per thread
  BulkTensor, // cp.async.bulk.tensor (TMA): a whole tile per instruction, one issuing thread
  BufferLoad, // AMD buffer_load: a bounds-checked vector load through a resource descriptor
};

struct CopyAtom {
  CopyKind kind;
  std::string name;    // the instruction
  int bytes;           // bytes one thread moves per instruction (per tile row for bulk copies)
  bool globalToShared; // writes shared memory without going through registers
  bool async;          // completes later; a barrier of the pipeline style waits for it
};

enum class BarrierKind {
  Block,          // __syncthreads / s_barrier: every thread of the block
  AsyncGroupWait, // cp.async.wait_group N: all but the newest N groups of this thread's copies
  Mbarrier,       // mbarrier arrive / expect_tx / try_wait: a transaction-counting barrier
  NamedBarrier,   // bar.sync id, count: a subset of the block's warps (warp specialization)
};

class TargetInfo {
public:
  virtual ~TargetInfo();

  // The --target spelling and nvcc/hipcc architecture: "sm_90a", "gfx942".
  llvm::StringRef name() const { return name_; }
  Vendor vendor() const { return vendor_; }
  // Threads that execute in lock step and share shuffles: 32 (NVIDIA warp) or 64 (AMD wave).
  int warpSize() const { return warpSize_; }
  const Limits &limits() const { return limits_; }
  // NVIDIA compute capability as major * 10 + minor (90 for sm_90a); 0 for AMD.
  int computeCapability() const { return computeCapability_; }

  // Whether tlc's back end generates code for this target. A target without one is still a
  // TargetInfo (descriptors and the recommender's model use it) and compiles its candidate
  // kernels through `stand-in`'s passes.
  bool hasBackEnd() const { return standIn_ == nullptr; }
  const TargetInfo &codegenTarget() const { return standIn_ ? *standIn_ : *this; }

  llvm::ArrayRef<MmaAtom> mmaAtoms() const { return mmaAtoms_; }
  // The atom the back end emits for GEMMs (the first one; the sm_80 path on sm_90a until the
  // Hopper back end).
  const MmaAtom &gemmAtom() const { return mmaAtoms_.front(); }
  const MmaAtom *findMmaAtom(llvm::StringRef name) const;
  // The warpgroup atom (wgmma on sm_90a: operands from shared memory through descriptors,
  // asynchronous) that gemms use when they fit it, or null: ops/Gemm.cpp decides per kernel.
  const MmaAtom *warpgroupMma() const;
  // The warpgroup atom that takes `input` operands, or null.
  const MmaAtom *warpgroupMma(DType input) const;
  // The warp-level atom (mma.sync) that takes `input` operands (m16n8k16 for f16/bf16,
  // m16n8k32 for i8 and fp8, m16n8k8 for f32 as tf32), or null where the target has none
  // (fp8 before sm_89).
  const MmaAtom *warpMma(DType input) const;
  // Every warp-level atom that takes `input`, in the order gemms try them (gfx9: the 32x32
  // MFMA, then the 16x16 one for wave tiles that are not whole 32x32 tiles).
  std::vector<const MmaAtom *> warpMmas(DType input) const;

  llvm::ArrayRef<CopyAtom> copyAtoms() const { return copyAtoms_; }
  const CopyAtom *copyAtom(CopyKind kind) const;
  // The widest vector access of one thread, in bytes (16: ld.global.v4.u32, buffer_load_dwordx4).
  int maxVectorBytes() const;

  // The bytes of consecutive f32 elements one atomic add to global memory takes (each element
  // added atomically): 16 on sm_90 (red.global.add.v4.f32), 4 elsewhere.
  int atomicVectorBytes() const { return atomicVectorBytes_; }

  llvm::ArrayRef<BarrierKind> barriers() const { return barriers_; }
  bool hasBarrier(BarrierKind kind) const;
  PipelineStyle pipelineStyle() const { return pipelineStyle_; }
  // The 32-bit registers per thread the tiles of one pipelined loop staged through registers
  // may hold (they stay live across the gemm of the iteration): every copy of a RegisterStaged
  // pipeline, the element copies of an AsyncGroups one (lower/PipelineExpansion.cpp).
  int stagingRegisterBudget() const { return stagingRegisterBudget_; }
  // The shared-memory banks that choose the layouts of gemm operand tiles (ir/LdsBanks.h:
  // gfx9's LDS, read by MFMA lanes in 8-byte runs), or null where the operand layout is the
  // instruction's (ldmatrix's and wgmma's swizzles).
  const lds::BankModel *operandBanks() const { return operandBanks_ ? &*operandBanks_ : nullptr; }

  // Warps of `threads` threads, rounded up.
  int warpsOf(int64_t threads) const { return int((threads + warpSize_ - 1) / warpSize_); }

protected:
  TargetInfo() = default;

  std::string name_;
  Vendor vendor_ = Vendor::Nvidia;
  int warpSize_ = 0;
  Limits limits_;
  int computeCapability_ = 0;
  const TargetInfo *standIn_ = nullptr;
  std::vector<MmaAtom> mmaAtoms_;
  std::vector<CopyAtom> copyAtoms_;
  std::vector<BarrierKind> barriers_;
  PipelineStyle pipelineStyle_ = PipelineStyle::AsyncGroups;
  int stagingRegisterBudget_ = 0;
  int atomicVectorBytes_ = 4;
  std::optional<lds::BankModel> operandBanks_;
};

// Every target tlc knows, in the order --help lists them: those with a back end first.
llvm::ArrayRef<const TargetInfo *> allTargets();
// The TargetInfo of a --target spelling; null for an unknown one. The one lookup.
const TargetInfo *lookupTarget(llvm::StringRef name);
const TargetInfo &defaultTarget();
// "sm_80, sm_86, sm_89 or sm_90a": the targets with a back end, for messages.
std::string backEndTargetList();

} // namespace tlc::target
