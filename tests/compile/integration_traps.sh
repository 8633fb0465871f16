#!/bin/sh
# integration_traps.sh TLC NVCC ROOT WORK: what a CMake user of generated code runs into.
#  1. two specialisations of one kernel, in two namespaces, link into one library (their C
#     entry points are tlc_<namespace>_<kernel>);
#  2. tlc/runtime.h and a self-contained generated header share a translation unit (one
#     include guard, one tlc_dtype);
#  3. generated code refuses to compile below sm_80 (#error) instead of trapping at run time;
#  4. an ignored tlc::Status is a warning ([[nodiscard]]), an error under -Werror.
# Exit 77 (skipped) without nvcc. Device code is compiled to PTX without optimisation: only
# the host side matters here.
set -eu
tlc="$1"; nvcc="$2"; root="$3"; work="$4"
if [ ! -x "$nvcc" ]; then
  echo "SKIP: nvcc not found"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fast="-std=c++17 -arch=compute_80 -code=compute_80 -Xcicc -O0 -Werror all-warnings -Xcompiler=-Wall,-Wextra,-Werror,-fPIC -I $root/stdlib -I $root/runtime"

"$tlc" "$root/samples/softmax.tl" --target sm_80 --namespace rows1 -o rows1.cu
"$tlc" "$root/samples/softmax.tl" --target sm_80 --namespace rows2 -D block_M=2 -o rows2.cu
# shellcheck disable=SC2086
"$nvcc" $fast -c rows1.cu -o rows1.o
# shellcheck disable=SC2086
"$nvcc" $fast -c rows2.cu -o rows2.o
"$nvcc" -shared rows1.o rows2.o -o libboth.so
nm -D libboth.so | grep -q ' T tlc_rows1_softmax$'
nm -D libboth.so | grep -q ' T tlc_rows2_softmax$'
echo "1. two specialisations link into one library"

"$tlc" --emit=header --namespace kern "$root/samples/softmax.tl" --target sm_80 -o kern.cuh
cat > both.cu <<'CU'
#include "tlc/runtime.h"
#include "kern.cuh"
#include "tlc/runtime.h"
tlc::Status run(const tlc::TensorView &x, const tlc::TensorView &y) { return kern::softmax(x, y); }
CU
# shellcheck disable=SC2086
"$nvcc" $fast -I . -c both.cu -o both.o
echo "2. tlc/runtime.h and a generated header share a translation unit"

if "$nvcc" -std=c++17 -arch=sm_75 -I "$root/stdlib" -I "$root/runtime" -c rows1.cu -o sm75.o > sm75.log 2>&1; then
  echo "FAIL: generated code compiled for sm_75"; exit 1
fi
grep -q 'tlc-generated code needs compute capability 8.0 or newer' sm75.log
echo "3. sm_75 is refused at compile time"

cat > ignored.cpp <<'CPP'
#include "tlc/runtime.h"
tlc::Status launch() { return tlc::Status::error(TLC_ERROR_INVALID_ARGUMENT, "x"); }
int main() { launch(); }
CPP
cxx="${CXX:-c++}"
if "$cxx" -std=c++17 -Werror -I "$root/runtime" -fsyntax-only ignored.cpp > ignored.log 2>&1; then
  echo "FAIL: an ignored tlc::Status compiled silently"; exit 1
fi
grep -qi 'ignoring return value\|nodiscard' ignored.log
echo "4. an ignored tlc::Status is diagnosed"
