#!/bin/sh
# compile_sample.sh TLC NVCC SAMPLE.tl ARCH OUT_STEM "TLC FLAGS" [NVCC FLAGS...]
# Generates CUDA for ARCH with tlc, then compiles it with nvcc as strictly as the device
# library itself is compiled. Exit 77 (skipped) when nvcc is not installed.
set -eu
tlc="$1"; nvcc="$2"; sample="$3"; arch="$4"; out="$5"; tlcflags="$6"
shift 6
if [ ! -x "$nvcc" ]; then
  echo "SKIP: nvcc not found"
  exit 77
fi
# shellcheck disable=SC2086 # tlcflags is a list of words (-D name=value ...)
"$tlc" "$sample" --target "$arch" $(echo "$tlcflags" | tr ';' ' ') -o "$out.cu"
archflags=$(sh "$(dirname "$0")/nvcc_arch.sh" "$arch")
"$nvcc" -std=c++17 $archflags -Werror all-warnings -Xcompiler=-Wall,-Wextra,-Werror "$@" \
  -c "$out.cu" -o "$out.o"
echo "compiled $(basename "$sample") for $arch"
