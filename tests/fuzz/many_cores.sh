#!/usr/bin/env bash
# A long fuzzing run on a machine with many cores and none of our packages (the lent GPU
# machine), from the archive of pack.sh. Runs libFuzzer's fork mode with WORKERS processes for
# SECONDS, keeps going after a crash, a timeout or an out-of-memory (so that all of them are
# counted), and leaves the log, the final corpus size and every artifact in OUTDIR.
#
#   tests/fuzz/many_cores.sh ARCHIVE OUTDIR WORKERS SECONDS [SEED]
set -uo pipefail
archive=${1:?usage: many_cores.sh ARCHIVE OUTDIR WORKERS SECONDS [SEED]}
outdir=${2:?}; workers=${3:?}; seconds=${4:?}; seed=${5:-20261126}
rm -rf /tmp/tlcfz && mkdir -p /tmp/tlcfz "$outdir/artifacts" && tar -xzf "$archive" -C /tmp/tlcfz
cd /tmp/tlcfz
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
common=(-timeout=30 -report_slow_units=30 -rss_limit_mb=4096 -close_fd_mask=3 -max_len=65536
        "-artifact_prefix=$outdir/artifacts/")
echo "replaying $(ls regressions | grep -vc '\.md$') regression inputs"
./tlc-fuzz "${common[@]}" $(ls -d regressions/* | grep -v '\.md$') >"$outdir/replay.log" 2>&1
echo "replay exit $?"
./tlc-fuzz corpus seeds "-fork=$workers" "-max_total_time=$seconds" "-seed=$seed" \
  -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -print_final_stats=1 "${common[@]}" \
  >"$outdir/fuzz.log" 2>&1
echo "fuzz exit $?"
grep -E '^#[0-9]+: cov' "$outdir/fuzz.log" | tail -1
grep -E 'crash|timeout|oom|DONE|INFO: fuzzed|exiting' "$outdir/fuzz.log" | grep -v '^#' | tail -5
echo "corpus: $(ls corpus | wc -l) inputs; artifacts: $(ls "$outdir/artifacts" | wc -l)"
