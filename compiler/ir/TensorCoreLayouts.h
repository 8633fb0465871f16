// Register fragments fixed by NVIDIA tensor-core instructions (PTX ISA, "Matrix Fragments
// for mma.m16n8k16" and "ldmatrix"), and their tiling over the warps of a block.
//
// Thread indices are lanes (0..31) for warp-level fragments and threadIdx.x for block
// fragments; registers count elements, not 32-bit registers: element r of a thread lives in
// half (r % 2) of its 32-bit register r / 2 for the 16-bit types.
#pragma once

#include "Fragment.h"

namespace tlc {

// mma.m16n8k16 with f16 or bf16 inputs. With groupID = lane / 4 and
// threadID_in_group = lane % 4, the PTX ISA places
//   A (16x16, row m, col k): a0..a7 at row groupID (+8 for a2,a3,a6,a7),
//                            col threadID_in_group*2 + (r & 1) (+8 for a4..a7);
//   B (16x8, row k, col n):  b0..b3 at row threadID_in_group*2 + (r & 1) (+8 for b2,b3),
//                            col groupID;
//   C/D (16x8, row m, col n, f32 or f16): c0..c3 at row groupID (+8 for c2,c3),
//                            col threadID_in_group*2 + (r & 1).
Fragment makeMmaM16N8K16FragmentA();
Fragment makeMmaM16N8K16FragmentB();
Fragment makeMmaM16N8K16FragmentC();

// Block-level operand fragments of a GEMM C[M, N] += A[M, K] * B[K, N] computed by
// warpsM x warpsN warps with m16n8k16: warp w owns the warp tile (w / warpsN, w % warpsN)
// (warps numbered row-major, as FragmentLayout::mmaC in TileLayout.h); inside a warp the
// 16x8 (C), 16x16 (A) or 16x8 (B) instruction tiles are numbered row-major and take
// consecutive register groups. A is replicated across the warps of one M row, B across
// the warps of one N column.
Fragment makeMmaBlockFragmentC(int64_t blockM, int64_t blockN, int64_t warpsM, int64_t warpsN);
Fragment makeMmaBlockFragmentA(int64_t blockM, int64_t blockK, int64_t warpsM, int64_t warpsN);
Fragment makeMmaBlockFragmentB(int64_t blockK, int64_t blockN, int64_t warpsM, int64_t warpsN);

// How the 8x8 matrices of one ldmatrix are placed in the tile it loads.
enum class MatrixOrder {
  ColMajor, // matrix m at row block m % rowBlocks, column block m / rowBlocks
  RowMajor, // matrix m at row block m / colBlocks, column block m % colBlocks
};

// The tile [rowBlocks * 8, colBlocks * 8] one ldmatrix .x1/.x2/.x4 covers: x1 is 8x8, x4 is
// 16x16, x2 is 16x8 in ColMajor order and 8x16 in RowMajor order.
Shape ldmatrixTileShape(int numMatrices, MatrixOrder order);

// Where ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16 leaves the elements of its tile.
// Tile rows are the 16-byte rows in shared memory. Without .trans, lane l receives elements
// 2*(l%4) and 2*(l%4)+1 of row l/4 of every matrix; with .trans, it receives row 2*(l%4)
// and 2*(l%4)+1 of column l/4 (each thread gets a column pair instead of a row pair).
// Matrix m fills registers 2m and 2m+1.
Fragment makeLdmatrixFragment(int numMatrices, bool transpose, MatrixOrder order);

// Which 16-byte tile row each lane's address must point at: lane l in [0, 8*numMatrices)
// supplies row l % 8 of matrix l / 8; the result is (row, column) of that row's first
// element in the tile of ldmatrixTileShape.
Layout makeLdmatrixAddressLayout(int numMatrices, MatrixOrder order);

} // namespace tlc
