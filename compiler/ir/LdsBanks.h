// LDS bank conflicts of one wave's accesses, and the shared layout of an MFMA operand tile
// chosen by them (gfx9).
//
// The model (AMD's LDS documentation for CDNA2/3, the ROCm blog "Avoiding LDS Bank Conflicts
// on AMD GPUs Using CK-Tile Framework"): 32 banks of 4 bytes, 128 bytes per cycle. One
// instruction of a 64-lane wave is served in phases of 128 / max(4, bytes per lane) lanes
// (ds_read/write_b128: 8 lanes, b64: 16 lanes, b32 and narrower: 32 lanes); within a phase,
// lanes touching the same 4-byte word share it (broadcast), and a bank asked for n distinct
// words takes n cycles. An access's conflicts are the cycles beyond one per phase.
//
// What the gemm and the copies of a tile do to LDS (stdlib/tl/hip/gemm.h, ops/Copy.cpp):
//  - an MFMA operand stored K-major is read as 8-byte runs: lane l of the S x S x K instruction
//    reads P = S K / 64 elements (4 16-bit or 8 fp8), (mn0 + l % S, k0 + P (l / S) .. + P - 1),
//    one ds_read_b64 when the layout keeps the run; stored MN-major it is read element by
//    element (P reads);
//  - a cooperative copy into the tile writes chunks of v elements, chunk c = tid + i * threads
//    at row c / (cols / v), columns (c % (cols / v)) * v.., split into the runs the layout keeps.
// K-major rows of 256 bytes or more need the unit flip of SharedLayout::unitFlipBit: with
// 16-byte chunks kept whole the reads stay 2-way (a phase's 16 rows share 8 chunk slots), and
// under a row-keyed 8-byte XOR alone the copy's 8-byte halves do (a phase's 16 lanes store one
// half of 16 chunks of one row); chooseMfmaOperandLayout finds the flip where it is better.
#pragma once

#include "ir/TileLayout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tlc::lds {

struct BankModel {
  int banks = 32;
  int bankBytes = 4;
  int bytesPerCycle = 128;
  int waveSize = 64;
};

// One LDS instruction of one wave: lane i accesses `bytes` bytes at byte address[i]
// (a negative address: the lane is inactive).
struct WaveAccess {
  int bytes = 4;
  std::vector<int64_t> address;
};

struct Conflicts {
  int cycles = 0;  // what the access takes
  int ideal = 0;   // one per phase with an active lane
  int ways = 1;    // the most distinct words one bank serves in one phase
  int extra() const { return cycles - ideal; }
};

// The cycles one wave's access takes under `model`.
Conflicts countConflicts(const BankModel &model, const WaveAccess &access);

// Sum over accesses: cycles, ideal cycles, and the worst ways.
Conflicts countConflicts(const BankModel &model, const std::vector<WaveAccess> &accesses);

// The MFMA operand reads of one gemm on a tile stored [rows, cols] in `layout`: `kMajor` when
// K runs along cols; `size` the MFMA's S (32 or 16), `kStep` its K; `mnBases` the first
// row (column) of every wave's part of the operand, `mnPerWave` its extent; K the gemm's.
struct MfmaOperandUse {
  bool kMajor = true;
  int size = 32, kStep = 8;
  std::vector<int64_t> mnBases;
  int64_t mnPerWave = 32, k = 32;
};
std::vector<WaveAccess> mfmaReads(const SharedLayout &layout, const MfmaOperandUse &use, int waveSize);

// The stores of a cooperative copy of the whole tile by `threads` threads, `vec` elements
// per chunk (1, or a vector the row width divides).
std::vector<WaveAccess> copyStores(const SharedLayout &layout, int64_t threads, int64_t vec, int waveSize);

// The layout of a gfx9 MFMA operand tile [rows, cols] of `elemBits`-bit elements: among the
// 16-byte XOR swizzle (SharedLayout::swizzled, what tl::SwizzledLayout reads) and XOR
// swizzles of 8-byte units (what the MFMA lanes read), the first with the fewest conflicts
// over `reads` (each use's MFMA reads) and the stores of a copy into it by `threads` threads.
// `why` gets the comparison for --emit=inferred.
struct LdsChoice {
  SharedLayout layout;
  Conflicts reads, stores;
  Conflicts swizzle16Reads, swizzle16Stores; // the 16-byte swizzle's, for comparison
  std::string text;
};
LdsChoice chooseMfmaOperandLayout(const BankModel &model, int64_t rows, int64_t cols, int elemBits,
                                  const std::vector<MfmaOperandUse> &uses, int64_t threads);

} // namespace tlc::lds
