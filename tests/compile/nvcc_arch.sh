#!/bin/sh
# nvcc_arch.sh [--check] ARCH: the nvcc flags that compile for ARCH in the tests
# (compile_batch.py, names.py, torch_ext.sh, tests/robustness/nvcc_mutants.py, the
# stdlib_compile_* tests of tests/compile/CMakeLists.txt), one per line.
# An arch-specific target (sm_90a) as one -gencode: `-arch=sm_90a` also runs cicc a second time
# for compute_90 PTX (a quarter of the compile); compile.consumer keeps the architectures CMake
# passes, as a user's project does.
# --check lowers device optimization (cicc -O1, ptxas -O0) for the tests that only ask whether
# the code compiles: the front ends, warnings, inline PTX and resource limits are checked the
# same, and the sm_90a batch of every sample takes 36 s of cicc and ptxas instead of 127 s
# (cicc 77 s -> 27 s, ptxas 50 s -> 9 s; cicc -O0 would triple ptxas's input and time). The
# default -O3 stays in stdlib_compile_sm_80/sm_90a, compile.tlc_c (tlc -c) and every GPU build;
# compile.consumer (the installed package's flow, not its code's speed) takes the check flags.
# nvcc_arch.sh --check-flags: only those flags, on one line (compile.consumer's CMAKE_CUDA_FLAGS).
check_flags="-Xcicc -O1 -Xptxas -O0"
if [ "$1" = "--check-flags" ]; then echo "$check_flags"; exit 0; fi
check=
if [ "$1" = "--check" ]; then check=1; shift; fi
case "$1" in
  sm_*a) echo "-gencode=arch=compute_${1#sm_},code=$1" ;;
  *) echo "-arch=$1" ;;
esac
# shellcheck disable=SC2086  # one flag per line
if [ -n "$check" ]; then printf '%s\n' $check_flags; fi
