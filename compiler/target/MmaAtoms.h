// The tensor-core atoms of the targets, written as CuTe writes them: each operand's
// (thread, value) -> element layout, in CuTe's column-major coordinates (an [R, C] tile
// position r + R * c), converted to Fragments (element -> (thread, register)) by inverting it.
// Transcribing the TV layouts keeps them checkable line by line against
// cute/atom/mma_traits_sm80.hpp and mma_traits_sm90_gmma.hpp, and against the ISA tables.
#pragma once

#include "target/TargetInfo.h"

#include "ir/LayoutFactories.h"

namespace tlc::target {

// The fragment of an [rows, cols] operand tile whose CuTe TV layout `tv` maps (thread,
// value) to a column-major position in the [R, C] tile CuTe indexes. `transposed`: CuTe
// indexes the tile as [cols, rows] (B is (N, K) in CuTe, [k, n] in tlc).
Fragment fragmentFromCute(const Layout &tv, int64_t rows, int64_t cols, bool transposed = false);

// mma.sync.aligned.m16n8k16.row.col (sm_80+): f16 inputs accumulating in f32 or f16, bf16 in
// f32; one warp.
MmaAtom makeMmaSyncM16N8K16();
// mma.sync.aligned.m16n8k32.row.col: s8 inputs accumulating in s32 (sm_80+) and, with
// `fp8`, e4m3/e5m2 in f32 (sm_89+); one warp, 4 K elements per operand register.
MmaAtom makeMmaSyncM16N8K32(bool fp8);
// mma.sync.aligned.m16n8k8.row.col on tf32: f32 inputs rounded to tf32, f32 accumulator.
MmaAtom makeMmaSyncM16N8K8Tf32();
// wgmma.mma_async.sync.aligned.m64n8k16 (sm_90a): one warpgroup of 128 threads; A from
// registers (or shared memory), B from shared memory through a matrix descriptor. N grows in
// steps of 8 up to 256 by repeating the 64x8 accumulator on further registers.
MmaAtom makeWgmmaM64N8K16();
// wgmma.mma_async.sync.aligned.m64n8k32 (sm_90a): s8 inputs into s32, e4m3/e5m2 into f32; both
// operands K-major from shared memory.
MmaAtom makeWgmmaM64N8K32();
// v_mfma_f32_32x32x8{f16,bf16_1k} (size 32) and v_mfma_f32_16x16x16{f16,bf16_1k} (size 16),
// CDNA2/3: one wave of 64 lanes, f16 or bf16 inputs accumulating in f32, issued with A and B
// swapped so that the accumulator's rows lie along lanes (MmaAtoms.cpp says why). On f8e4m3
// (f8e5m2) inputs, CDNA3 only: v_mfma_f32_32x32x16_fp8_fp8 (_bf8_bf8) and 16x16x32, FNUZ.
MmaAtom makeMfma(int size, DType input);

} // namespace tlc::target
