#!/usr/bin/env bash
# Generates the GEMV variants (tlc) and the harness lists for bench.cu.
set -euo pipefail
T=${TLC:-../build/bin/tlc}
S=../samples/dequant_gemv_w4a16_tc.tl
cd "$(dirname "$0")"
rm -f v_*.cu variants.inc includes.inc
gen() { # name flags...
  local name=$1; shift
  $T $S --target sm_90a --namespace $name "$@" -o $name.cu
  echo "V($name)" >> variants.inc; echo "#include \"$name.cu\"" >> includes.inc
}
gen v_def
gen v_t32m8 -D threads=64 -D block_N=32 -D block_K=512 -D block_M=8
gen v_t64n16k256 -D threads=64 -D block_N=16 -D block_K=256 -D block_M=8
gen v_t64n16k512 -D threads=64 -D block_N=16 -D block_K=512 -D block_M=8
gen v_t64n16k1024 -D threads=64 -D block_N=16 -D block_K=1024 -D block_M=8
gen v_t128n16k512 -D threads=128 -D block_N=16 -D block_K=512 -D block_M=8
gen v_t128n16k1024 -D threads=128 -D block_N=16 -D block_K=1024 -D block_M=8
gen v_t128n16k2048 -D threads=128 -D block_N=16 -D block_K=2048 -D block_M=8
gen v_t128n32k512 -D threads=128 -D block_N=32 -D block_K=512 -D block_M=8
gen v_t128n32k1024 -D threads=128 -D block_N=32 -D block_K=1024 -D block_M=8
gen v_t256n16k1024 -D threads=256 -D block_N=16 -D block_K=1024 -D block_M=8
gen v_t256n16k2048 -D threads=256 -D block_N=16 -D block_K=2048 -D block_M=8
gen v_t256n32k1024 -D threads=256 -D block_N=32 -D block_K=1024 -D block_M=8
gen v_t256n32k2048 -D threads=256 -D block_N=32 -D block_K=2048 -D block_M=8
ls v_*.cu | wc -l
# The CUDA-core GEMV (samples/dequant_gemv_w4a16.tl) under the same name, for the same harness.
$T ../samples/dequant_gemv_w4a16.tl --target sm_90a --namespace v_cuda_core -o v_cuda_core.cu
cat >> includes.inc <<'EOI'
#include "v_cuda_core.cu"
namespace v_cuda_core {
inline tlc::Status dequant_gemv_w4a16_tc(const tlc::TensorView& A, const tlc::TensorView& B, const tlc::TensorView& S,
                                        const tlc::TensorView& C, cudaStream_t s) { return dequant_gemv_w4a16(A, B, S, C, s); }
}
EOI
sed -i '1i V(v_cuda_core)' variants.inc
