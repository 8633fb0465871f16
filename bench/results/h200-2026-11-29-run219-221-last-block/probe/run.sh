#!/bin/bash
set -u
cd "$(dirname "$0")"
build() { nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -O3 -I stdlib -I runtime "$@" 2>&1 | grep -v C75; }
build -include dec_p.cu prof2.cu -o prof_dec &
build -DTLP_OFF -include dec_p.cu prof2.cu -o plain_dec &
build -include dec5_p.cu prof2.cu -o prof_dec5 &
wait
echo "######## plain (no timestamps)"; ./plain_dec | grep "^=="
echo "######## instrumented"; ./prof_dec
echo "######## stages=5 instrumented"; ./prof_dec5
