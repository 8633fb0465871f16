#!/bin/sh
# nvcc_arch.sh ARCH: the nvcc flag that compiles for ARCH in the tests (compile_batch.py,
# torch_ext.sh, tests/robustness/nvcc_mutants.py). An arch-specific target (sm_90a) as one
# -gencode: `-arch=sm_90a` also runs cicc a second time for compute_90 PTX (a quarter of the
# compile); stdlib_compile_sm_90a and compile.consumer keep the -arch form users type.
case "$1" in
  sm_*a) echo "-gencode=arch=compute_${1#sm_},code=$1" ;;
  *) echo "-arch=$1" ;;
esac
