#!/bin/sh
# build_consumer.sh CMAKE NVCC TLC SOURCE_DIR BUILD_DIR: configures and builds the consumer
# project from scratch. Exit 77 (skipped) when nvcc is not installed.
set -eu
cmake="$1"; nvcc="$2"; tlc="$3"; src="$4"; build="$5"
if [ ! -x "$nvcc" ]; then
  echo "SKIP: nvcc not found"
  exit 77
fi
rm -rf "$build"
"$cmake" -S "$src" -B "$build" -DCMAKE_CUDA_COMPILER="$nvcc" -DTLC_EXECUTABLE="$tlc"
"$cmake" --build "$build"
test -x "$build/consumer"
echo "consumer built"
