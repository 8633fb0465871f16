#!/usr/bin/env bash
# On the device, from the repository root: build, check+time, ncu two variants.
set -u
mkdir -p "$OUT"
cd exp-chains
nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo -Xptxas -v -I stdlib -I ../runtime bench.cu -o /tmp/gb > /tmp/build.txt 2>&1 || { tail -30 /tmp/build.txt; exit 1; }
grep -E 'registers|spill' /tmp/build.txt | grep -v ' 0 bytes spill' | head -5 > "$OUT/regs.txt"
grep -B1 -E 'Used [0-9]+ registers' /tmp/build.txt | grep -oE "Compiling entry function '[^']+'|Used [0-9]+ registers" | paste - - >> "$OUT/regs.txt"
/tmp/gb > "$OUT/bench.txt" 2>&1
cat "$OUT/bench.txt"
secs="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
for v in v_def_c1 v_def_c4 v_t32m8_c1 v_t32m8_c4; do
  for skip in 3 36; do
    echo "=== $v skip $skip" >> "$OUT/ncu.txt"
    timeout 100 ncu --clock-control none --kernel-name-base demangled -k regex:"$v::" --launch-skip $skip --launch-count 1 $secs /tmp/gb 2>&1 | grep -vE '^==PROF==|^ +-+$|^ *$' | grep -E 'Duration|Throughput|Eligible|Issued|Occupancy|Stall|stall|Block Limit|Registers|L2 Hit|Mem Busy|cycles' | head -40 >> "$OUT/ncu.txt"
  done
done
cuobjdump -sass -fun '.*v_t32m8_c1.*' /tmp/gb 2>/dev/null | grep -oE '^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+' | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25 > "$OUT/sass_t32m8_c1.txt"
