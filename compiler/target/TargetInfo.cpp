// The targets tlc knows: the sm_80 family (sm_80, sm_86, sm_89), sm_90a and gfx9 (gfx90a,
// gfx940, gfx942). Limits are the CUDA C Programming Guide's "Technical Specifications per
// Compute Capability" and AMD's CDNA2/CDNA3 ISA guides; the descriptors of the GPUs built on
// each (target/descriptors/*.json) repeat them, and a unit test keeps the two equal.
#include "target/TargetInfo.h"
#include "target/MmaAtoms.h"

#include "llvm/ADT/STLExtras.h"

namespace tlc::target {

bool MmaAtom::supports(DType input, DType accumulator) const {
  return llvm::any_of(dtypes, [&](DTypes d) { return d.input == input && d.accumulator == accumulator; });
}

bool MmaAtom::takesInput(DType input) const {
  return llvm::any_of(dtypes, [&](DTypes d) { return d.input == input; });
}

std::string MmaAtom::dtypesText() const {
  std::string text;
  for (DTypes d : dtypes)
    text += (text.empty() ? "" : ", ") + dtypeName(d.input).str() + " -> " + dtypeName(d.accumulator).str();
  return text;
}

TargetInfo::~TargetInfo() = default;

const MmaAtom *TargetInfo::findMmaAtom(llvm::StringRef name) const {
  for (const MmaAtom &a : mmaAtoms_)
    if (a.name == name)
      return &a;
  return nullptr;
}

const MmaAtom *TargetInfo::warpgroupMma() const {
  // Issued by more threads than a warp: wgmma (4 warps). Only a target with a back end emits it.
  for (const MmaAtom &a : mmaAtoms_)
    if (a.threads > warpSize_ && hasBackEnd())
      return &a;
  return nullptr;
}

const MmaAtom *TargetInfo::warpgroupMma(DType input) const {
  for (const MmaAtom &a : mmaAtoms_)
    if (a.threads > warpSize_ && hasBackEnd() && a.takesInput(input))
      return &a;
  return nullptr;
}

const MmaAtom *TargetInfo::warpMma(DType input) const {
  std::vector<const MmaAtom *> all = warpMmas(input);
  return all.empty() ? nullptr : all.front();
}

std::vector<const MmaAtom *> TargetInfo::warpMmas(DType input) const {
  std::vector<const MmaAtom *> atoms;
  for (const MmaAtom &a : mmaAtoms_)
    if (a.threads == warpSize_ && a.takesInput(input))
      atoms.push_back(&a);
  return atoms;
}

const CopyAtom *TargetInfo::copyAtom(CopyKind kind) const {
  for (const CopyAtom &a : copyAtoms_)
    if (a.kind == kind)
      return &a;
  return nullptr;
}

int TargetInfo::maxVectorBytes() const {
  const CopyAtom *v = copyAtom(CopyKind::Vector);
  return v ? v->bytes : 1;
}

bool TargetInfo::hasBarrier(BarrierKind kind) const { return llvm::is_contained(barriers_, kind); }

namespace {

// Ampere and Ada: mma.sync, cp.async, async-group pipelines. The three differ only in limits.
class Sm80Family : public TargetInfo {
public:
  Sm80Family(llvm::StringRef name, int capability, int64_t sharedPerSM, int threadsPerSM,
             int blocksPerSM) {
    name_ = name.str();
    vendor_ = Vendor::Nvidia;
    warpSize_ = 32;
    computeCapability_ = capability;
    // 1 KiB of every SM's shared memory is the runtime's per block, so a block may opt in to
    // all but 1 KiB.
    limits_.sharedBytesPerSM = sharedPerSM;
    limits_.sharedReservedPerBlock = 1024;
    limits_.sharedBytesPerBlock = sharedPerSM - 1024;
    limits_.registersPerThread = 255;
    limits_.registersPerSM = 65536;
    limits_.registerAllocUnit = 256;
    limits_.threadsPerBlock = 1024;
    limits_.threadsPerSM = threadsPerSM;
    limits_.blocksPerSM = blocksPerSM;
    // The f16/bf16 atom first (gemmAtom()); s8 (and from sm_89 on fp8) and tf32 after it.
    mmaAtoms_.push_back(makeMmaSyncM16N8K16());
    mmaAtoms_.push_back(makeMmaSyncM16N8K32(/*fp8=*/capability >= 89));
    mmaAtoms_.push_back(makeMmaSyncM16N8K8Tf32());
    copyAtoms_ = {
        {CopyKind::CpAsync, "cp.async.cg.shared.global", 16, /*globalToShared=*/true, /*async=*/true},
        {CopyKind::Vector, "ld.global.v4.u32 / st.global.v4.u32", 16, false, false},
    };
    // mbarrier exists since sm_80; the sm_80 pipelines wait on async groups instead.
    barriers_ = {BarrierKind::Block, BarrierKind::AsyncGroupWait, BarrierKind::NamedBarrier,
                 BarrierKind::Mbarrier};
    pipelineStyle_ = PipelineStyle::AsyncGroups;
    // Element copies (rows cp.async cannot move) staged through registers: as on gfx9, a
    // quarter of the 255 registers a thread may have.
    stagingRegisterBudget_ = 64;
  }
};

// Hopper: gemms that fit a warpgroup run on wgmma (warpgroupMma()), the others on mma.sync
// (gemmAtom()); the bulk tensor copy (TMA) is declared, pipelines still use async groups.
class Sm90a : public Sm80Family {
public:
  Sm90a() : Sm80Family("sm_90a", 90, 233472, 2048, 32) {
    mmaAtoms_.push_back(makeWgmmaM64N8K16());
    mmaAtoms_.push_back(makeWgmmaM64N8K32());
    // A bulk copy moves a whole box; a box row must be a multiple of 16 bytes.
    copyAtoms_.push_back({CopyKind::BulkTensor,
                          "cp.async.bulk.tensor.shared::cluster.global.mbarrier::complete_tx::bytes",
                          16, true, true});
    atomicVectorBytes_ = 16;
  }
};

// CDNA2/3 (MI250X, MI300X): wave64, MFMA, 64 KiB of LDS, no asynchronous global->LDS copy of
// 16 bytes, so pipelines stage through registers. Code generation: HIP C++ (--emit=hip).
// Debian's hipcc 5.2 knows CDNA3 as gfx940 (gfx942 is the MI300X's name in later ROCm).
class Gfx9 : public TargetInfo {
public:
  explicit Gfx9(llvm::StringRef name) {
    name_ = name.str();
    vendor_ = Vendor::Amd;
    warpSize_ = 64;
    limits_.sharedBytesPerSM = 65536;
    limits_.sharedBytesPerBlock = 65536;
    limits_.sharedReservedPerBlock = 0;
    // 512 VGPRs per lane (architectural + accumulation registers), 4 SIMDs of 512 x 64.
    limits_.registersPerThread = 512;
    limits_.registersPerSM = 131072;
    limits_.registerAllocUnit = 512;
    limits_.threadsPerBlock = 1024;
    limits_.threadsPerSM = 2048;
    limits_.blocksPerSM = 32;
    // The 32x32 atoms first (warpMma: fewer instructions per tile); gemms whose wave tiles
    // are not whole 32x32 tiles take the 16x16 ones (warpMmas).
    for (int size : {32, 16})
      for (DType input : {DType::F16, DType::BF16})
        mmaAtoms_.push_back(makeMfma(size, input));
    // CDNA3 (gfx940/gfx942) adds fp8 MFMA on its FNUZ formats; CDNA2 (gfx90a) has none.
    if (name != "gfx90a")
      for (int size : {32, 16})
        for (DType input : {DType::F8E4M3, DType::F8E5M2})
          mmaAtoms_.push_back(makeMfma(size, input));
    copyAtoms_ = {
        {CopyKind::BufferLoad, "buffer_load_dwordx4", 16, false, false},
        {CopyKind::Vector, "global_load_dwordx4 / global_store_dwordx4", 16, false, false},
    };
    barriers_ = {BarrierKind::Block};
    pipelineStyle_ = PipelineStyle::RegisterStaged;
    // A quarter of the 256 architectural VGPRs a lane addresses: the staged tiles stay live
    // across the gemm beside its operands and addresses (the accumulators may live in the
    // accumulation registers).
    stagingRegisterBudget_ = 64;
    // 32 banks of 4 bytes, 128 bytes per cycle (CDNA2/3 LDS).
    operandBanks_ = lds::BankModel{32, 4, 128, warpSize_};
  }
};

struct Registry {
  Sm80Family sm80{"sm_80", 80, 167936, 2048, 32};
  Sm80Family sm86{"sm_86", 86, 102400, 1536, 16};
  Sm80Family sm89{"sm_89", 89, 102400, 1536, 24};
  Sm90a sm90a;
  Gfx9 gfx90a{"gfx90a"}, gfx940{"gfx940"}, gfx942{"gfx942"};
  const TargetInfo *all[7] = {&sm80, &sm86, &sm89, &sm90a, &gfx90a, &gfx940, &gfx942};
};

const Registry &registry() {
  static const Registry r;
  return r;
}

} // namespace

llvm::ArrayRef<const TargetInfo *> allTargets() { return registry().all; }

const TargetInfo *lookupTarget(llvm::StringRef name) {
  for (const TargetInfo *t : allTargets())
    if (t->name() == name)
      return t;
  return nullptr;
}

const TargetInfo &defaultTarget() { return *lookupTarget(kDefaultTargetName); }

std::string backEndTargetList() {
  std::vector<llvm::StringRef> names;
  for (const TargetInfo *t : allTargets())
    if (t->hasBackEnd())
      names.push_back(t->name());
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i].str();
  return list;
}

} // namespace tlc::target
