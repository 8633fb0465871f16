#include "target/MmaAtoms.h"

#include <cassert>
#include <cstdlib>

namespace tlc::target {

Fragment fragmentFromCute(const Layout &tv, int64_t rows, int64_t cols, bool transposed) {
  // The TV layout is a bijection from (thread, value) onto the tile's positions; its inverse
  // says where each position lives, which is what a Fragment records.
  std::optional<Layout> where = tv.inverse();
  assert(where && "an MMA atom's TV layout covers its tile exactly once");
  int64_t cuteRows = transposed ? cols : rows;
  return Fragment::make({rows, cols}, [&](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
    const IntExpr &r = transposed ? idx[1] : idx[0], &c = transposed ? idx[0] : idx[1];
    IndexList tvIndex = where->apply({r + c * cuteRows});
    return Fragment::Placement{tvIndex[0], tvIndex[1]};
  });
}

// CuTe's SM80_16x8x16_F32F16F16F32_TN traits (thread digits first, fastest first):
//   ALayout ((4,8),(2,2,2)):((32,1),(16,8,128))  on (M=16, K=16)
//   BLayout ((4,8),(2,2))  :((16,1),(8,64))      on (N=8,  K=16)
//   CLayout ((4,8),(2,2))  :((32,1),(16,8))      on (M=16, N=8)
MmaAtom makeMmaSyncM16N8K16() {
  MmaAtom atom;
  atom.name = "mma.sync.aligned.m16n8k16.row.col";
  atom.m = 16, atom.n = 8, atom.k = 16;
  atom.threads = 32;
  // PTX ISA: bf16 inputs accumulate only in f32.
  atom.dtypes = {{DType::F16, DType::F32}, {DType::BF16, DType::F32}, {DType::F16, DType::F16}};
  atom.a = fragmentFromCute(makeCuteLayout({{{4, 32}, {8, 1}}, {{2, 16}, {2, 8}, {2, 128}}}), 16, 16);
  atom.b = fragmentFromCute(makeCuteLayout({{{4, 16}, {8, 1}}, {{2, 8}, {2, 64}}}), 16, 8,
                            /*transposed=*/true);
  atom.c = fragmentFromCute(makeCuteLayout({{{4, 32}, {8, 1}}, {{2, 16}, {2, 8}}}), 16, 8);
  // Test hook (tests/emulator): a deliberately wrong accumulator table, registers 1 and 2
  // exchanged, which the CPU emulator (its own table, from the PTX ISA) must catch.
  if (std::getenv("TLC_TEST_WRONG_MMA_LAYOUT"))
    atom.c = fragmentFromCute(makeCuteLayout({{{4, 32}, {8, 1}}, {{2, 8}, {2, 16}}}), 16, 8);
  return atom;
}

// CuTe's SM80_16x8x32_S32S8S8S32_TN traits (and SM89_16x8x32_F32E4M3E4M3F32_TN, the same
// layouts with fp8 elements): a register holds 4 consecutive K elements.
//   ALayout ((4,8),(4,2,2)):((64,1),(16,8,256))  on (M=16, K=32)
//   BLayout ((4,8),(4,2))  :((32,1),(8,128))     on (N=8,  K=32)
//   CLayout                                      as m16n8k16's
MmaAtom makeMmaSyncM16N8K32(bool fp8) {
  MmaAtom atom;
  atom.name = "mma.sync.aligned.m16n8k32.row.col";
  atom.m = 16, atom.n = 8, atom.k = 32;
  atom.threads = 32;
  // PTX ISA: s8 accumulates in s32; e4m3 and e5m2 (sm_89+) in f32.
  atom.dtypes = {{DType::I8, DType::I32}};
  if (fp8)
    atom.dtypes.push_back({DType::F8E4M3, DType::F32}), atom.dtypes.push_back({DType::F8E5M2, DType::F32});
  atom.a = fragmentFromCute(makeCuteLayout({{{4, 64}, {8, 1}}, {{4, 16}, {2, 8}, {2, 256}}}), 16, 32);
  atom.b = fragmentFromCute(makeCuteLayout({{{4, 32}, {8, 1}}, {{4, 8}, {2, 128}}}), 32, 8,
                            /*transposed=*/true);
  atom.c = makeMmaSyncM16N8K16().c;
  return atom;
}

// CuTe's SM80_16x8x8_F32TF32TF32F32_TN traits: one 32-bit element per register.
//   ALayout ((4,8),(2,2)):((16,1),(8,64))  on (M=16, K=8)
//   BLayout ((4,8),2)    :((8,1),32)       on (N=8,  K=8)
//   CLayout                                as m16n8k16's
MmaAtom makeMmaSyncM16N8K8Tf32() {
  MmaAtom atom;
  atom.name = "mma.sync.aligned.m16n8k8.row.col";
  atom.m = 16, atom.n = 8, atom.k = 8;
  atom.threads = 32;
  // f32 operands are rounded to tf32 (cvt.rna.tf32.f32) and accumulate in f32.
  atom.dtypes = {{DType::F32, DType::F32}};
  atom.a = fragmentFromCute(makeCuteLayout({{{4, 16}, {8, 1}}, {{2, 8}, {2, 64}}}), 16, 8);
  atom.b = fragmentFromCute(makeCuteLayout({{{4, 8}, {8, 1}}, {{2, 32}}}), 8, 8, /*transposed=*/true);
  atom.c = makeMmaSyncM16N8K16().c;
  return atom;
}

// PTX ISA "Register fragments for wgmma .m64nNk16": warp w of the warpgroup holds rows
// 16w..16w+15 of A and D, each warp laid out as mma.m16n8k16's A and C. CuTe's
// CLayout_64xN<8> is ((4,8,4),(2,2)):((128,1,16),(64,8)) on (M=64, N=8); A in registers is
// ((4,8,4),(2,2,2)):((128,1,16),(64,8,512)) on (M=64, K=16).
MmaAtom makeWgmmaM64N8K16() {
  MmaAtom atom;
  atom.name = "wgmma.mma_async.sync.aligned.m64n8k16";
  atom.m = 64, atom.n = 8, atom.k = 16;
  atom.threads = 128;
  // PTX ISA: bf16 inputs accumulate only in f32.
  atom.dtypes = {{DType::F16, DType::F32}, {DType::BF16, DType::F32}, {DType::F16, DType::F16}};
  atom.a = fragmentFromCute(
      makeCuteLayout({{{4, 128}, {8, 1}, {4, 16}}, {{2, 64}, {2, 8}, {2, 512}}}), 64, 16);
  atom.b = std::nullopt; // read from shared memory through a wgmma matrix descriptor
  atom.c = fragmentFromCute(makeCuteLayout({{{4, 128}, {8, 1}, {4, 16}}, {{2, 64}, {2, 8}}}), 64, 8);
  return atom;
}

// AMD CDNA3 ISA, "Dependency and layout of MFMA operands" (and the AMD matrix instruction
// calculator) for v_mfma_f32_32x32x8f16: lane l holds A[l % 32][4 * (l / 32) + v] and
// B[4 * (l / 32) + v][l % 32] for v < 4, and D[8 * (v / 4) + 4 * (l / 32) + v % 4][l % 32]
// for v < 16. As CuTe TV layouts (lane digits first):
//   A ((32,2),4):((1,128),32) on (M=32, K=8); B the same on (N=32, K=8);
//   C ((32,2),(4,4)):((32,4),(1,8)) on (M=32, N=32).
MmaAtom makeMfmaF32x32x32x8() {
  MmaAtom atom;
  atom.name = "v_mfma_f32_32x32x8f16";
  atom.m = 32, atom.n = 32, atom.k = 8;
  atom.threads = 64;
  atom.dtypes = {{DType::F16, DType::F32}, {DType::BF16, DType::F32}};
  Layout operand = makeCuteLayout({{{32, 1}, {2, 128}}, {{4, 32}}});
  atom.a = fragmentFromCute(operand, 32, 8);
  atom.b = fragmentFromCute(operand, 8, 32, /*transposed=*/true);
  atom.c = fragmentFromCute(makeCuteLayout({{{32, 32}, {2, 4}}, {{4, 1}, {4, 8}}}), 32, 32);
  return atom;
}

} // namespace tlc::target
