// The self-tests' shared pieces (selftest.cpp for CUDA's 32-lane warps, selftest_hip.cpp for
// HIP's 64-lane waves): the blocks' shared memory and a check that counts failures.
#pragma once

#include <cstdio>

alignas(1024) static unsigned char smem[4096];
static int failures = 0;

#define EXPECT(cond)                                                  \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::printf("FAIL line %d: %s\n", __LINE__, #cond);            \
      ++failures;                                                     \
    }                                                                 \
  } while (0)
