// target/TargetInfo: the one description of each target that passes ask. The MMA atoms are
// data (CuTe TV layouts turned into Fragments); these tests check them element by element
// against the PTX/ISA formulas, and the limits against the descriptors the recommender uses.
#include "ir/TensorCoreLayouts.h"
#include "target/Descriptor.h"
#include "target/TargetInfo.h"

#include <catch2/catch.hpp>

#include <set>

using namespace tlc;
using namespace tlc::target;

namespace {

// Every element of the fragment's tile lives in exactly one (thread, register), threads and
// registers stay inside the atom's extents, and every (thread, register) slot is used.
void requireBijection(const Fragment &f, int64_t threads) {
  Shape shape = f.shape();
  REQUIRE(shape.size() == 2);
  REQUIRE(f.threadExtent() == threads);
  std::set<std::pair<int64_t, int64_t>> slots;
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      Fragment::Location at = f.evaluate({i, j});
      REQUIRE(at.thread >= 0);
      REQUIRE(at.thread < threads);
      REQUIRE(at.reg >= 0);
      REQUIRE(at.reg < f.registerCount());
      REQUIRE(slots.insert({at.thread, at.reg}).second);
    }
  REQUIRE(int64_t(slots.size()) == threads * f.registerCount());
}

void requireSameElements(const Fragment &a, const Fragment &b) {
  REQUIRE(a.shape() == b.shape());
  Shape shape = a.shape();
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      INFO("element (" << i << ", " << j << ")");
      REQUIRE(a.evaluate({i, j}) == b.evaluate({i, j}));
    }
}

} // namespace

TEST_CASE("every target's MMA atoms are bijections onto their tiles", "[target][mma]") {
  for (const TargetInfo *t : allTargets())
    for (const MmaAtom &atom : t->mmaAtoms()) {
      INFO(t->name().str() << " " << atom.name);
      REQUIRE(atom.c);
      REQUIRE(atom.c->shape() == Shape{atom.m, atom.n});
      requireBijection(*atom.c, atom.threads);
      if (atom.a) {
        REQUIRE(atom.a->shape() == Shape{atom.m, atom.k});
        requireBijection(*atom.a, atom.threads);
      }
      if (atom.b) {
        REQUIRE(atom.b->shape() == Shape{atom.k, atom.n});
        requireBijection(*atom.b, atom.threads);
      }
    }
}

TEST_CASE("sm_80's mma.sync atom is the layout the back end emits", "[target][mma]") {
  // ir/TensorCoreLayouts transcribes the PTX ISA tables; the generated gemm follows it.
  const TargetInfo *sm80 = lookupTarget("sm_80");
  REQUIRE(sm80);
  const MmaAtom &atom = sm80->gemmAtom();
  REQUIRE(atom.m == 16);
  REQUIRE(atom.n == 8);
  REQUIRE(atom.k == 16);
  REQUIRE(atom.threads == sm80->warpSize());
  requireSameElements(*atom.a, makeMmaM16N8K16FragmentA());
  requireSameElements(*atom.b, makeMmaM16N8K16FragmentB());
  requireSameElements(*atom.c, makeMmaM16N8K16FragmentC());
  // sm_90a emits the same instruction until the Hopper back end.
  REQUIRE(lookupTarget("sm_90a")->gemmAtom().name == atom.name);
}

TEST_CASE("the s8/fp8 and tf32 mma.sync atoms match the PTX fragment tables", "[target][mma]") {
  // PTX ISA "Matrix Fragments for mma.m16n8k32" / "mma.m16n8k8" (.tf32): lane (g, t) = (l / 4,
  // l % 4) holds A register r, element i at (g + 8 (r % 2), (r / 2) K/2 + t E + i) and B
  // register j, element i at (j K/2 + t E + i, g), E = elements per register; the atom's
  // registers count elements, register r's element i being E r + i.
  const TargetInfo *sm80 = lookupTarget("sm_80"), *sm89 = lookupTarget("sm_89");
  REQUIRE(sm80);
  REQUIRE(sm89);
  const MmaAtom *s8 = sm80->warpMma(DType::I8), *tf32 = sm80->warpMma(DType::F32);
  REQUIRE(s8);
  REQUIRE(tf32);
  CHECK(s8->name == "mma.sync.aligned.m16n8k32.row.col");
  CHECK(s8->supports(DType::I8, DType::I32));
  CHECK(tf32->supports(DType::F32, DType::F32));
  // fp8 mma.sync is sm_89's: the same m16n8k32 layouts.
  CHECK_FALSE(sm80->warpMma(DType::F8E4M3));
  const MmaAtom *f8 = sm89->warpMma(DType::F8E4M3);
  REQUIRE(f8);
  CHECK(f8->supports(DType::F8E5M2, DType::F32));
  CHECK(lookupTarget("sm_90a")->warpMma(DType::F8E5M2));
  CHECK(sm80->warpMma(DType::F16) == &sm80->gemmAtom());
  for (const MmaAtom *atom : {s8, f8, tf32}) {
    INFO(atom->name);
    int64_t e = atom->k / 8, half = atom->k / 2; // elements per register, K of two registers
    for (int64_t lane = 0; lane < 32; ++lane) {
      int64_t g = lane / 4, t = lane % 4;
      for (int64_t i = 0; i < e; ++i) {
        for (int64_t r = 0; r < 4; ++r)
          REQUIRE(atom->a->evaluate({g + 8 * (r % 2), (r / 2) * half + t * e + i}) ==
                  Fragment::Location{lane, e * r + i});
        for (int64_t j = 0; j < 2; ++j)
          REQUIRE(atom->b->evaluate({j * half + t * e + i, g}) == Fragment::Location{lane, e * j + i});
      }
    }
    requireSameElements(*atom->c, makeMmaM16N8K16FragmentC());
  }
}

TEST_CASE("wgmma's accumulator is four warps of mma.sync accumulators", "[target][mma]") {
  // PTX ISA: warp w of the warpgroup holds rows 16w..16w+15 laid out as m16n8k16's C.
  const MmaAtom *wgmma = lookupTarget("sm_90a")->findMmaAtom("wgmma.mma_async.sync.aligned.m64n8k16");
  REQUIRE(wgmma);
  Fragment c16 = makeMmaM16N8K16FragmentC();
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      Fragment::Location in = wgmma->c->evaluate({i, j}), warp = c16.evaluate({i % 16, j});
      REQUIRE(in.thread == 32 * (i / 16) + warp.thread);
      REQUIRE(in.reg == warp.reg);
    }
}

TEST_CASE("MMA atoms list the (input, accumulator) dtypes of their ISA", "[target][mma]") {
  // PTX ISA: mma.sync m16n8k16 and wgmma m64nNk16 take f16 into f32 or f16, bf16 into f32 only.
  for (const MmaAtom *atom : {&lookupTarget("sm_80")->gemmAtom(), lookupTarget("sm_90a")->warpgroupMma()}) {
    REQUIRE(atom);
    INFO(atom->name);
    CHECK(atom->supports(DType::F16, DType::F32));
    CHECK(atom->supports(DType::F16, DType::F16));
    CHECK(atom->supports(DType::BF16, DType::F32));
    CHECK_FALSE(atom->supports(DType::BF16, DType::F16));
    CHECK_FALSE(atom->supports(DType::BF16, DType::BF16));
    CHECK_FALSE(atom->takesInput(DType::F8E4M3));
    CHECK(atom->dtypesText() == "f16 -> f32, bf16 -> f32, f16 -> f16");
  }
  // CDNA ISA: the f16 and bf16_1k MFMAs accumulate in f32 only.
  const TargetInfo *gfx = lookupTarget("gfx942");
  REQUIRE(gfx->warpMma(DType::BF16));
  CHECK(gfx->warpMma(DType::BF16)->name == "v_mfma_f32_32x32x8bf16_1k");
  CHECK(gfx->warpMma(DType::BF16)->supports(DType::BF16, DType::F32));
  CHECK(gfx->warpMma(DType::F16)->supports(DType::F16, DType::F32));
  CHECK_FALSE(gfx->warpMma(DType::F16)->supports(DType::F16, DType::F16));
  CHECK_FALSE(gfx->warpMma(DType::I8));
  // CDNA3's fp8 MFMA (FNUZ e4m3 = fp8, e5m2 = bf8) into f32; CDNA2 (gfx90a) has none.
  REQUIRE(gfx->warpMma(DType::F8E4M3));
  CHECK(gfx->warpMma(DType::F8E4M3)->name == "v_mfma_f32_32x32x16_fp8_fp8");
  CHECK(gfx->warpMma(DType::F8E5M2)->name == "v_mfma_f32_32x32x16_bf8_bf8");
  CHECK(gfx->warpMma(DType::F8E4M3)->supports(DType::F8E4M3, DType::F32));
  CHECK_FALSE(gfx->warpMma(DType::F8E4M3)->takesInput(DType::F8E5M2));
  CHECK(lookupTarget("gfx940")->warpMma(DType::F8E5M2));
  CHECK_FALSE(lookupTarget("gfx90a")->warpMma(DType::F8E4M3));
  CHECK_FALSE(lookupTarget("gfx90a")->warpMma(DType::F8E5M2));
}

TEST_CASE("gfx9's MFMA atoms match the CDNA ISA's operand tables, operands swapped", "[target][mma]") {
  const TargetInfo *gfx = lookupTarget("gfx942");
  REQUIRE(gfx);
  REQUIRE(gfx->warpSize() == 64);
  REQUIRE(gfx->hasBackEnd());
  REQUIRE_FALSE(gfx->copyAtom(CopyKind::CpAsync));
  REQUIRE(gfx->mmaAtoms().size() == 8);
  REQUIRE(lookupTarget("gfx90a")->mmaAtoms().size() == 4);
  // CDNA3 ISA 7.1: the instruction computes D[i][j] = sum_k SrcA[i][k] SrcB[k][j]; lane l
  // holds SrcA[l % S][P (l / S) + v] and SrcB[P (l / S) + v][l % S] for v < P (P = 4 f16/bf16
  // items, 8 fp8/bf8 items: K = 64 P / S), and
  //   S = 32: D[8 (v / 4) + 4 (l / 32) + v % 4][l % 32] for v < 16,
  //   S = 16: D[4 (l / 16) + v][l % 16] for v < 4.
  // tlc passes SrcA = B^T and SrcB = A^T, so C[m][n] = D[n][m], A[m][k] = SrcB[k][m] and
  // B[k][n] = SrcA[n][k].
  for (const MmaAtom &mfma : gfx->mmaAtoms()) {
    INFO(mfma.name);
    int64_t S = mfma.m;
    REQUIRE(mfma.n == S);
    bool fp8 = mfma.dtypes.front().input == DType::F8E4M3 || mfma.dtypes.front().input == DType::F8E5M2;
    int64_t P = fp8 ? 8 : 4;
    REQUIRE(mfma.k == (S == 32 ? 8 : 16) * (fp8 ? 2 : 1));
    REQUIRE(mfma.threads == 64);
    for (int64_t lane = 0; lane < 64; ++lane) {
      for (int64_t v = 0; v < P; ++v) {
        int64_t row = lane % S, k = P * (lane / S) + v;
        REQUIRE(mfma.a->evaluate({row, k}) == Fragment::Location{lane, v}); // SrcB[k][row]
        REQUIRE(mfma.b->evaluate({k, row}) == Fragment::Location{lane, v}); // SrcA[row][k]
      }
      for (int64_t v = 0; v < S * S / 64; ++v) {
        int64_t i = S == 32 ? 8 * (v / 4) + 4 * (lane / 32) + v % 4 : 4 * (lane / 16) + v, j = lane % S;
        REQUIRE(mfma.c->evaluate({j, i}) == Fragment::Location{lane, v}); // D[i][j] = C[j][i]
      }
    }
  }
  // The 32x32 atoms come first: gemms take them where their wave tiles are whole 32x32 tiles.
  CHECK(gfx->warpMma(DType::F16)->name == "v_mfma_f32_32x32x8f16");
  REQUIRE(gfx->warpMmas(DType::F16).size() == 2);
  CHECK(gfx->warpMmas(DType::F16)[1]->name == "v_mfma_f32_16x16x16f16");
  CHECK(gfx->warpMmas(DType::BF16)[1]->name == "v_mfma_f32_16x16x16bf16_1k");
  REQUIRE(gfx->warpMmas(DType::F8E4M3).size() == 2);
  CHECK(gfx->warpMmas(DType::F8E4M3)[1]->name == "v_mfma_f32_16x16x32_fp8_fp8");
  CHECK(gfx->warpMmas(DType::F8E5M2)[1]->name == "v_mfma_f32_16x16x32_bf8_bf8");
}

TEST_CASE("an MFMA accumulator tile is the A operand of the next gemm as it is", "[target][mma]") {
  // Attention's P @ V takes P in the accumulator's registers: k step s of a 32-column block
  // (S = 32) is registers 4s..4s+3, which must be the A operand's registers of that step.
  for (const MmaAtom &mfma : lookupTarget("gfx90a")->mmaAtoms()) {
    INFO(mfma.name);
    int64_t S = mfma.m, steps = S / mfma.k;
    for (int64_t m = 0; m < S; ++m)
      for (int64_t n = 0; n < S; ++n) {
        Fragment::Location acc = mfma.c->evaluate({m, n});
        Fragment::Location a = mfma.a->evaluate({m, n % mfma.k});
        REQUIRE(acc.thread == a.thread);
        REQUIRE(acc.reg == 4 * ((n / mfma.k) % steps) + a.reg);
      }
  }
}

TEST_CASE("limits agree with each architecture's default descriptor", "[target][limits]") {
  for (const TargetDesc &d : builtinTargets()) {
    if (!d.defaultForArch)
      continue;
    const TargetInfo *t = lookupTarget(d.arch);
    INFO(d.name << " (" << d.arch << ")");
    REQUIRE(t);
    REQUIRE(t->warpSize() == d.warpSize);
    REQUIRE(t->limits().sharedBytesPerBlock == d.sharedPerBlock);
    REQUIRE(t->limits().registersPerThread == d.registersPerThread);
    REQUIRE(t->limits().threadsPerBlock == d.threadsPerBlock);
  }
}

TEST_CASE("targets are looked up by their --target spelling only", "[target]") {
  REQUIRE(lookupTarget("sm_86")->computeCapability() == 86);
  REQUIRE(lookupTarget("sm_90a")->computeCapability() == 90);
  REQUIRE(lookupTarget("sm_90a")->copyAtom(CopyKind::BulkTensor));
  REQUIRE_FALSE(lookupTarget("sm_80")->copyAtom(CopyKind::BulkTensor));
  REQUIRE(lookupTarget("sm_100") == nullptr);
  REQUIRE(lookupTarget("h100") == nullptr); // a descriptor name, not an architecture
  REQUIRE(&defaultTarget() == lookupTarget(kDefaultTargetName));
}
