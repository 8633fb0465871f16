#!/usr/bin/env bash
# Generates the GEMV variants (tlc) and the harness list; chain variants are seds of the gemm call.
set -euo pipefail
T=${TLC:-/work/wt/kruns/build/bin/tlc}
S=../samples/dequant_gemv_w4a16_tc.tl
cd "$(dirname "$0")"
rm -f v_*.cu variants.inc includes.inc
gen() { # name chains flags...
  local name=$1 ch=$2; shift 2
  $T $S --target sm_90a --namespace $name "$@" -o $name.cu
  if [[ $ch != 1 ]]; then
    sed -i -E "s/(tl::gemm_sr_runs(_t)?<[0-9]+, [0-9]+, [0-9]+, [0-9]+, [0-9]+, [0-9]+)>/\1, $ch>/" $name.cu
    grep -q "gemm_sr_runs.*, $ch>(" $name.cu
  fi
  echo "V($name)" >> variants.inc; echo "#include \"$name.cu\"" >> includes.inc
}
for ch in 1 2 4; do
  gen v_def_c$ch $ch
  gen v_k512_c$ch $ch -D block_K=512
  gen v_t64_c$ch $ch -D block_N=64 -D block_K=512
  gen v_t32m8_c$ch $ch -D threads=64 -D block_N=32 -D block_K=512 -D block_M=8
done
ls v_*.cu | wc -l
