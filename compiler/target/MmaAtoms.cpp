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

// PTX ISA "Register fragments for wgmma .m64nNk32" (s8/u8 and e4m3/e5m2 inputs): the D layout of
// .m64nNk16, and per warp A laid out as mma.m16n8k32's (4 bytes of K per register), warp w of
// the warpgroup on rows 16w..16w+15: ((4,256),(8,1),(4,16)) threads, ((4,64),(2,8),(2,1024))
// values on (M=64, K=32). The instruction reads 8-bit operands only K-major from shared memory
// (no imm-trans), which planWarpgroupMma requires; tlc never gives it A in registers.
MmaAtom makeWgmmaM64N8K32() {
  MmaAtom atom;
  atom.name = "wgmma.mma_async.sync.aligned.m64n8k32";
  atom.m = 64, atom.n = 8, atom.k = 32;
  atom.threads = 128;
  // The accumulators tlc uses: s32 for s8 (PTX ISA also has u8 and .satfinite), f32 for fp8
  // (PTX ISA also has an f16 accumulator).
  atom.dtypes = {{DType::I8, DType::I32}, {DType::F8E4M3, DType::F32}, {DType::F8E5M2, DType::F32}};
  atom.a = fragmentFromCute(
      makeCuteLayout({{{4, 256}, {8, 1}, {4, 16}}, {{4, 64}, {2, 8}, {2, 1024}}}), 64, 32);
  atom.b = std::nullopt; // read from shared memory through a wgmma matrix descriptor
  atom.c = makeWgmmaM64N8K16().c;
  return atom;
}

// MFMA (CDNA2 gfx90a, CDNA3 gfx940/gfx942; AMD "CDNA3 Instruction Set Architecture", section
// 7.1 "Matrix Core instructions: dependency and layout of operands", and the AMD matrix
// instruction calculator). One wave of 64 lanes computes D[i][j] = sum_k SrcA[i][k] SrcB[k][j]
// + C[i][j] with f32 accumulation; each lane gives 4 input elements (two VGPRs) per operand:
//   v_mfma_f32_32x32x8{f16,bf16_1k}:  lane l, v < 4:  SrcA[l % 32][4 * (l / 32) + v],
//     SrcB[4 * (l / 32) + v][l % 32];  v < 16:  D[8 * (v / 4) + 4 * (l / 32) + v % 4][l % 32]
//   v_mfma_f32_16x16x16{f16,bf16_1k}: lane l, v < 4:  SrcA[l % 16][4 * (l / 16) + v],
//     SrcB[4 * (l / 16) + v][l % 16];  D[4 * (l / 16) + v][l % 16]
// The bf16 "_1k" forms (gfx90a+) read 4 bf16 per lane in the f16 forms' layout. CDNA3's fp8
// forms (gfx940+, ISA section 7.1 and the calculator's CDNA3 tables) read 8 elements per lane,
// one 64-bit register pair, in the same pattern with twice the K:
//   v_mfma_f32_32x32x16_{fp8_fp8,bf8_bf8}:  lane l, v < 8:  SrcA[l % 32][8 * (l / 32) + v],
//     SrcB[8 * (l / 32) + v][l % 32];  D as 32x32x8's
//   v_mfma_f32_16x16x32_{fp8_fp8,bf8_bf8}:  lane l, v < 8:  SrcA[l % 16][8 * (l / 16) + v],
//     SrcB[8 * (l / 16) + v][l % 16];  D as 16x16x16's
// tlc's f8e4m3 is fp8 and f8e5m2 bf8 there, both FNUZ (tl/fp8_fnuz.h); the mixed fp8 x bf8
// forms are not used, since a tlc gemm's A and B share one dtype.
//
// tlc issues the instruction with its operands swapped, SrcA = B^T and SrcB = A^T, so that
// D = C^T: tlc's accumulator C[m][n] sits in lane m (+ a lane half or quarter chosen by n) and
// its registers run along n. That makes an accumulator tile the A operand of the next gemm
// as it is (attention's P @ V: k step s of a 32-column accumulator block is registers 4s..4s+3),
// and rows of C lie in lanes as rows of A do. A and B keep the ISA's operand layout (SrcA and
// SrcB are laid out alike):
//   32x32x8:   A[m][k] in lane m + 32 (k / 4), register k % 4;  B[k][n] in lane n + 32 (k / 4);
//              C[m][n] in lane m + 32 ((n / 4) % 2), register n % 4 + 4 (n / 8)
//   16x16x16:  A[m][k] in lane m + 16 (k / 4), register k % 4;  B[k][n] in lane n + 16 (k / 4);
//              C[m][n] in lane m + 16 (n / 4), register n % 4
// As CuTe TV layouts (lane digits first, column-major positions m + M * k of A, n + N * k of B,
// m + M * n of C):
//   32x32x8:   A, B ((32,2),4):((1,128),32);  C ((32,2),(4,4)):((1,128),(32,256))
//   16x16x16:  A, B, C ((16,4),4):((1,64),16)
//   fp8, P = 8 elements per lane: A, B ((S,64/S),8):((1,8S),S); C as the 16-bit forms'
MmaAtom makeMfma(int size, DType input) {
  bool fp8 = input == DType::F8E4M3 || input == DType::F8E5M2;
  assert((size == 32 || size == 16) && (input == DType::F16 || input == DType::BF16 || fp8));
  int perLane = fp8 ? 8 : 4; // 8 bytes of K per lane and operand
  MmaAtom atom;
  atom.m = atom.n = size;
  atom.k = 64 * perLane / size;
  std::string shape = std::to_string(size) + "x" + std::to_string(size) + "x" + std::to_string(atom.k);
  atom.name = "v_mfma_f32_" + shape +
              (input == DType::BF16     ? "bf16_1k"
               : input == DType::F16    ? "f16"
               : input == DType::F8E4M3 ? "_fp8_fp8"
                                        : "_bf8_bf8");
  atom.threads = 64;
  atom.dtypes = {{input, DType::F32}};
  int lanes = size, halves = 64 / size; // lanes along M (or N), lane groups along K
  Layout operand = makeCuteLayout({{{lanes, 1}, {halves, perLane * size}}, {{perLane, size}}});
  atom.a = fragmentFromCute(operand, size, atom.k);
  atom.b = fragmentFromCute(operand, atom.k, size, /*transposed=*/true);
  atom.c = size == 32 ? fragmentFromCute(makeCuteLayout({{{32, 1}, {2, 128}}, {{4, 32}, {4, 256}}}), 32, 32)
                      : fragmentFromCute(makeCuteLayout({{{16, 1}, {4, 64}}, {{4, 16}}}), 16, 16);
  // Test hook (tests/emulator, as for m16n8k16): registers 1 and 2 of the accumulator
  // exchanged, which the CPU emulator (its own tables, from the CDNA ISA) must catch.
  if (std::getenv("TLC_TEST_WRONG_MMA_LAYOUT"))
    atom.c = size == 32 ? fragmentFromCute(makeCuteLayout({{{32, 1}, {2, 128}}, {{2, 64}, {2, 32}, {4, 256}}}), 32, 32)
                        : fragmentFromCute(makeCuteLayout({{{16, 1}, {4, 64}}, {{2, 32}, {2, 16}}}), 16, 16);
  return atom;
}

} // namespace tlc::target
