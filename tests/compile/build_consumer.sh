#!/bin/sh
# build_consumer.sh CMAKE NVCC TLC_BUILD_DIR SOURCE_DIR BUILD_DIR: installs tlc from its build
# directory into a fresh prefix, then configures and builds the consumer project against the
# installed package (find_package(tlc), tlc_add_kernels). Exit 77 (skipped) without nvcc.
set -eu
cmake="$1"; nvcc="$2"; tlcbuild="$3"; src="$4"; build="$5"
if [ ! -x "$nvcc" ]; then
  echo "SKIP: nvcc not found"
  exit 77
fi
rm -rf "$build"
prefix="$build/prefix"
"$cmake" --install "$tlcbuild" --prefix "$prefix" >/dev/null
# What the package promises is there.
for f in bin/tlc include/tlc/tl/tl.h include/tlc/tlc/runtime.h lib/cmake/tlc/tlcConfig.cmake \
         lib/cmake/tlc/tlcConfigVersion.cmake lib/cmake/tlc/tlcKernels.cmake \
         share/man/man1/tlc.1 share/doc/tlc/LICENSE share/tlc/editors/vim/syntax/tl.vim; do
  test -e "$prefix/$f" || { echo "not installed: $f"; exit 1; }
done
# The samples are copied, so that the test can edit one without touching the source tree.
mkdir -p "$build/samples"
cp "$src/../gemm.tl" "$src/../softmax.tl" "$src/../rmsnorm.tl" "$build/samples/"
"$cmake" -S "$src" -B "$build/consumer" -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CUDA_FLAGS="$(sh "$(dirname "$0")/nvcc_arch.sh" --check-flags)" \
  -DTLC_SAMPLES="$build/samples"
"$cmake" --build "$build/consumer"
test -x "$build/consumer/consumer"
test -s "$build/consumer/matmul.cuh" && test -s "$build/consumer/norms.cuh"
# Editing a .tl file regenerates its header (and only that one).
before=$(stat -c %Y "$build/consumer/matmul.cuh")
sleep 1
touch "$build/samples/softmax.tl"
"$cmake" --build "$build/consumer" >"$build/rebuild.log"
grep -q "norms.cuh" "$build/rebuild.log" || { echo "editing softmax.tl did not regenerate norms.cuh"; exit 1; }
test "$(stat -c %Y "$build/consumer/matmul.cuh")" = "$before" || { echo "matmul.cuh was regenerated needlessly"; exit 1; }
echo "consumer built against the installed package"
