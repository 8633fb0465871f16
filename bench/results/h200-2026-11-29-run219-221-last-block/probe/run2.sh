#!/bin/bash
# TL_LAST_BLOCK_FENCES was a switch in the stdlib copy of run 221 only (tl::arrive_last with two
# __threadfence around atomicInc); the stdlib now always takes atom.acq_rel.gpu.
set -u
cd "$(dirname "$0")"
build() { nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -O3 -I stdlib -I runtime "$@" 2>&1 | grep -v C75; }
build -DTLP_OFF -include dec_p.cu prof2.cu -o plain_acqrel &
build -DTLP_OFF -DTL_LAST_BLOCK_FENCES -include dec_p.cu prof2.cu -o plain_fences &
build -include dec_p.cu prof2.cu -o prof_acqrel &
wait
cuobjdump -sass plain_acqrel 2>/dev/null | grep -E "ATOM|MEMBAR|CCTL|FENCE|ERRBAR" | sort | uniq -c | head -20
echo ---; cuobjdump -sass plain_fences 2>/dev/null | grep -E "ATOM|MEMBAR|CCTL|FENCE|ERRBAR" | sort | uniq -c | head -20
for r in 1 2 3; do
  echo "######## round $r acq_rel"; ./plain_acqrel | grep "^=="
  echo "######## round $r fences"; ./plain_fences | grep "^=="
done
echo "######## acq_rel instrumented"; ./prof_acqrel | sed -n 1,40p
