// The front end's limits, in one place. Each is far above what a real kernel needs and keeps
// the time and memory of every later stage about linear in the size of the input: past a
// limit the input is rejected with an error that gives the numbers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tlc::limits {

// Bytes of one source file (the samples are 1 to 6 KiB). ANTLR's tokens and parse tree take
// about 200 bytes of memory per byte of input.
constexpr size_t kMaxInputBytes = size_t(1) << 20;

// Bracket nesting plus else-if branches (each nests one level deeper in the recursive-descent
// parser and the AST walkers), checked before parsing.
constexpr unsigned kMaxNesting = 256;

// Statements directly in one block, and in one kernel counting nested ones.
constexpr size_t kMaxStatementsPerBlock = 4096;
constexpr size_t kMaxStatementsPerKernel = 16384;

// Compile-time parameters and run-time parameters of one kernel.
constexpr size_t kMaxCompileParams = 128;
constexpr size_t kMaxRuntimeParams = 128;

// Dimensions of an on-chip buffer, and variables of one parallel loop (one per dimension), as
// for tensors, whose rank the launcher limits to 8 (TLC_MAX_RANK).
constexpr size_t kMaxRank = 8;

// Shape symbols, tensor dimensions and loop indices are i32 in generated code.
constexpr int64_t kMaxShapeExtent = INT32_MAX;

// The largest divisor a size-dependent default may test a size by (`K % 8 == 0`): the
// driver finds each bucket's smallest size through the divisors' least common multiple
// (driver/DefaultVariants.cpp), and small divisors keep the buckets a table of sizes reaches.
constexpr int64_t kMaxSizeDivisor = 1024;

// No GPU has more on-chip memory for one block than this (H100: 228 KiB of shared memory,
// 256 KiB of registers per SM); the bound keeps every later size computation far from
// int64_t overflow.
constexpr int64_t kMaxOnChipBytes = int64_t(16) << 20;

} // namespace tlc::limits
