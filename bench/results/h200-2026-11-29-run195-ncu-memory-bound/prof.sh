# The run's command (gpu-bundle made by make_bundle.sh --only
# '^(decode_f16_d128|w4a16_tcs_f16_g128|mla_f16|conv_7x7s2p3_f16)$').
ONLY='b1h64kv8s(4096|32768)$|b64h128s1024g1|n32h224w224c3f64|1x4096x14336$'
python3 tree/bench/bench.py . --only "$ONLY" --skip-triton --out $OUT/b > $OUT/bench.log 2>&1
for it in 'decode_f16_d128_b1h64kv8s4096$' 'decode_f16_d128_b1h64kv8s32768$' 'mla_f16_b64h128s1024g1' \
          'conv_7x7s2p3_f16_n32h224w224c3f64' 'w4a16_tcs_f16_g128_1x4096x14336$'; do
  n=$(echo $it | tr -dc 'a-z0-9_')
  ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section Occupancy \
      --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats -k 'regex:tl_' \
      --launch-count 2 python3 tree/bench/bench.py . --only "$it" --skip-triton --out $OUT/n_$n > $OUT/ncu_$n.txt 2>&1
done
