#!/bin/sh
# tests/emulator/selftest.sh CXX CUDA_INCLUDE SOURCE_DIR WORK: builds selftest.cpp against the
# emulation layer and runs it, then checks that a deadlock and lanes reaching different
# collectives stop the emulator with its error; then selftest_hip.cpp (wave64 shuffles and
# ballot, the MFMA builtins) and its error for an MFMA in a partial wave. Exit 77 (skip) without
# the CUDA headers.
cxx="$1"; cuda="$2"; src="$3"; work="$4"
[ -f "$cuda/cuda_fp16.h" ] || { echo "SKIP: no cuda_fp16.h in $cuda"; exit 77; }
mkdir -p "$work" || exit 1
"$cxx" -std=c++17 -O1 -DTL_EMULATE -I "$src/stdlib/tl/emu/include" -I "$src/stdlib" -I "$src/runtime" \
  -isystem "$cuda" -w "$src/tests/emulator/selftest.cpp" -o "$work/selftest" || exit 1
"$work/selftest" || exit 1
out=$("$work/selftest" deadlock 2>&1); rc=$?
echo "$out"
[ $rc = 3 ] && echo "$out" | grep -q "deadlock in block (0, 0, 0): 1 of 64 threads wait forever" \
  && echo "$out" | grep -q "thread 33 (warp 1, lane 1) waits at __shfl_sync" || { echo "FAIL: deadlock"; exit 1; }
out=$("$work/selftest" divergent 2>&1); rc=$?
echo "$out"
[ $rc = 3 ] && echo "$out" | grep -q "the lanes of warp 0 disagree: __" || { echo "FAIL: divergent"; exit 1; }
"$cxx" -std=c++17 -O1 -DTL_EMULATE -D__HIPCC__ -D__HIP_PLATFORM_AMD__ -DTL_EMU_WARP_SIZE=64 -Wno-psabi \
  -I "$src/stdlib/tl/emu/include" -I "$src/stdlib" -I "$src/runtime" -isystem "$cuda" -w \
  "$src/tests/emulator/selftest_hip.cpp" -o "$work/selftest_hip" || exit 1
"$work/selftest_hip" || exit 1
out=$("$work/selftest_hip" partial 2>&1); rc=$?
echo "$out"
[ $rc = 3 ] && echo "$out" | grep -q "v_mfma_f32_16x16x16f16: lanes 0xffffffffffff of the wave are live; an MFMA needs all 64" \
  || { echo "FAIL: partial wave"; exit 1; }
echo "ok"
