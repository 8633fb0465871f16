#!/bin/sh
# --emit=torch: the PyTorch extension of a shape dispatch (gemm_auto), a sample with a
# compile-time-only output shape (softmax), flash attention, and the kernels of
# tests/lit/driver/emit-torch.tl (every scalar type, two outputs, a Python keyword as a name,
# no allocating op) and of tests/lit/driver/emit-torch-packed.tl (i4/u4 tensors as their packed
# bytes) compiles with nvcc against the installed PyTorch's headers, with the flags
# torch.utils.cpp_extension passes (the CUDA half/bfloat16 operators and conversions off), and
# warns about nothing in tlc's code. Compile only: no GPU and no CUDA build of torch needed
# (a CPU-only libtorch's headers are enough; tests/compile/torch_shim supplies the one header
# such a build does not ship, where it is missing).
#
#   torch_ext.sh TLC NVCC SOURCE_DIR WORK_DIR
set -eu
tlc="$1"; nvcc="$2"; src="$3"; work="$4"
[ -x "$nvcc" ] || { echo "SKIP: no nvcc"; exit 77; }
# PyTorch's include directories, as torch.utils.cpp_extension.include_paths() gives them.
includes=
for py in python3 /usr/bin/python3; do
  includes=$("$py" -c 'import torch.utils.cpp_extension as c; print(" ".join(c.include_paths()))' 2>/dev/null) && break
done
[ -n "$includes" ] || { echo "SKIP: no python3 with torch (torch.utils.cpp_extension)"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
"$tlc" --emit=torch --namespace kern "$src/samples/gemm_auto.tl" "$src/samples/softmax.tl" \
  "$src/samples/flash_attention.tl" "$src/tests/lit/driver/emit-torch.tl" \
  "$src/tests/lit/driver/emit-torch-packed.tl" -o ext.cu
set --
shim="$src/tests/compile/torch_shim"
for dir in $includes; do
  set -- "$@" -isystem "$dir"
  [ -e "$dir/c10/cuda/impl/cuda_cmake_macros.h" ] && shim=
done
[ -z "$shim" ] || set -- "$@" -isystem "$shim"
"$nvcc" -std=c++17 "$(sh "$src/tests/compile/nvcc_arch.sh" sm_90a)" -I "$src/stdlib" -I "$src/runtime" "$@" \
  -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ \
  -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr -DTORCH_API_INCLUDE_EXTENSION_H \
  -DTORCH_EXTENSION_NAME=kern -Xcompiler=-fPIC,-Wall,-Wextra -c ext.cu -o ext.o 2>nvcc.log || {
  cat nvcc.log; echo "FAIL: the extension does not compile"; exit 1; }
# Warnings in the torch headers are theirs; none may come from tlc's output or runtime.
if grep -E "(ext\.cu|runtime/tlc/)[^ ]*: ?(warning|error)" nvcc.log; then
  echo "FAIL: warnings in tlc's code"; exit 1
fi
# Every op is registered: the schemas are in the object's strings.
for op in 'gemm_auto(Tensor A, Tensor B, Tensor(a!) C) -> ()' 'softmax_alloc(Tensor X) -> Tensor' \
          'flash_attention_alloc(' 'scale_shift_alloc(Tensor X, float scale, int shift, bool flip) -> (Tensor, Tensor)'; do
  strings ext.o | grep -qF "$op" || { echo "FAIL: no schema '$op' in ext.o"; exit 1; }
done
echo "PASS: ext.o ($(wc -c <ext.o) bytes) registers the ops of 5 kernels"
