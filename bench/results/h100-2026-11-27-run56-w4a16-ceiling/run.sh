#!/usr/bin/env bash
# experiment on the device: hand ceiling, checks + bench of the GEMV variants, ncu, SASS counts
set -u
mkdir -p "$OUT"
nvcc -O3 -arch=sm_90a -lineinfo exp/gemv_ceiling.cu -o /tmp/gceil > "$OUT/ceiling.txt" 2>&1 &
cpid=$!
mkdir -p /tmp/chk; OUT=/tmp/chk TLC_GPU_BUDGET_S=${BUDGET:-300} bash tests/gpu/gpu_check.sh gpu-bundle --skip-triton > /tmp/check.txt 2>&1
wait $cpid
/tmp/gceil >> "$OUT/ceiling.txt" 2>&1
tail -5 /tmp/check.txt > "$OUT/check_tail.txt"
secs="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis"
for b in w4a16_gemv_f16_g128 exp_step_16_512_128; do
  echo "=== $b" >> "$OUT/ncu.txt"
  timeout 120 ncu --clock-control none -k regex:gemv --launch-skip 3 --launch-count 1 $secs \
    python3 bench/bench.py gpu-bundle --only "^${b}_1x14336x4096\$" --skip-triton --out /tmp/nb --budget-s 60 >> "$OUT/ncu.txt" 2>&1
done
echo "=== hand" >> "$OUT/ncu.txt"
timeout 120 ncu --clock-control none -k regex:gemv --launch-skip 40 --launch-count 1 $secs /tmp/gceil >> "$OUT/ncu.txt" 2>&1
for so in gpu-bundle/build/*.so; do
  n=$(basename $so .so)
  cuobjdump -sass $so > /tmp/$n.sass 2>/dev/null
  echo "== $n $(wc -l < /tmp/$n.sass)" >> "$OUT/sass_counts.txt"
  grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+' /tmp/$n.sass | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25 >> "$OUT/sass_counts.txt"
done
cp /tmp/w4a16_gemv_f16_g128.sass "$OUT/base.sass" 2>/dev/null
ls gpu-bundle/build | head -20 >> "$OUT/sass_counts.txt"
tar czf "$OUT/chk.tgz" -C /tmp chk
