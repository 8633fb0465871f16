#!/bin/sh
# --emit=decl: plain g++ and gcc code calls kernels that `tlc -c` compiled, through the
# declarations header (issue 14, item 2). Builds samples/gemm_auto.tl (a shape dispatch) and
# samples/softmax.tl into one object under --namespace, includes the header from a C++ and a
# C file compiled by the host compilers, links with cudart and runs: without a GPU (CI) the
# launchers must return a status, not abort; with one, the launch succeeds.
#
#   decl_host.sh TLC NVCC SOURCE_DIR WORK_DIR
set -eu
tlc="$1"; nvcc="$2"; src="$3"; work="$4"
[ -x "$nvcc" ] || { echo "SKIP: no nvcc"; exit 77; }
cuda=$(cd "$(dirname "$nvcc")/.." && pwd)
# The CUDA runtime library: lib64 of the toolkit, or its targets/ tree (packaged toolkits).
cudart=$(ls "$cuda"/lib64/libcudart.so "$cuda"/targets/*/lib/libcudart.so 2>/dev/null | head -n 1)
[ -n "$cudart" ] || { echo "SKIP: no libcudart.so under $cuda"; exit 77; }
cudalib=$(dirname "$cudart")
rm -rf "$work" && mkdir -p "$work" && cd "$work"
set -- "$src/samples/gemm_auto.tl" "$src/samples/softmax.tl" --target sm_90a --namespace kern
# The compile checks' device optimization (nvcc_arch.sh --check-flags): this test is about the
# host side, and tlc -c at -O3 is compile.tlc_c's.
xnvcc=
for f in $(sh "$src/tests/compile/nvcc_arch.sh" --check-flags); do xnvcc="$xnvcc -Xnvcc $f"; done
# shellcheck disable=SC2086
"$tlc" -c "$@" --nvcc "$nvcc" $xnvcc -o kernels.o
"$tlc" "$@" --emit=decl -o kernels.h
cat > main.cpp <<'CPP'
#include "kernels.h"
#include <cstdio>
int main() {
  tlc::TensorView a{}, b{}, c{};   // null data: the launcher's checks or the device check fail
  tlc::Status s = kern::gemm_auto(a, b, c);
  std::printf("C++ gemm_auto: code %d: %s\n", s.code(), s.message().c_str());
  return s.isOk() ? 1 : 0;         // a null tensor is never launched
}
CPP
cat > main.c <<'C'
#include "kernels.h"
#include <stdio.h>
int main(void) {
  tlc_tensor_view x = {0}, y = {0};
  char error[256];
  int code = tlc_kern_softmax(&x, &y, 0, error, sizeof error);
  printf("C softmax: code %d: %s\n", code, error);
  return code == TLC_OK;
}
C
g++ -std=c++17 -Wall -Werror -I "$src/runtime" -I . -c main.cpp -o main_cpp.o
gcc -std=c11 -Wall -Werror -I "$src/runtime" -I . -c main.c -o main_c.o
g++ main_cpp.o kernels.o -L "$cudalib" -Wl,-rpath,"$cudalib" -lcudart -o from_cpp
g++ main_c.o kernels.o -L "$cudalib" -Wl,-rpath,"$cudalib" -lcudart -o from_c
./from_cpp
./from_c
