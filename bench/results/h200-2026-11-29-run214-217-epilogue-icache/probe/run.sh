#!/bin/bash
# On the GPU machine: build the probes (old and new code, instrumented and plain) and run them
# interleaved.
set -u
cd "$(dirname "$0")"
build() { nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -O3 -I stdlib -I runtime "$@" 2>&1 | grep -v C75; }
for m in DEC MLA; do
  l=$(echo $m | tr A-Z a-z)
  for v in "" _new; do
    build -DMODE_$m -include ${l}${v}_p.cu prof_main.cu -o prof_${m}${v} &
    build -DMODE_$m -DTLP_OFF -include ${l}${v}_p.cu prof_main.cu -o plain_${m}${v} &
  done
done
wait
for round in 1 2; do
  for m in DEC MLA; do
    for v in "" _new; do
      echo "######## round $round: $m${v:-_old} plain"; ./plain_${m}${v} | grep "^=="
      echo "######## round $round: $m${v:-_old} instrumented"; ./prof_${m}${v}
    done
  done
done
