#!/usr/bin/env bash
# The one command for the GPU machine: build the bundle's kernels, check them, benchmark them.
#
#   bash tests/gpu/gpu_check.sh [BUNDLE] [--skip-bench] [--skip-triton] [--only REGEX]
#
# BUNDLE defaults to gpu-bundle (made by tests/gpu/make_bundle.sh on the build machine).
# Everything goes to $OUT (the device tool brings back at most 8 files; this writes 6):
#   results.json  run.log  build.log              correctness (tests/gpu/run.py)
#   <device>-<date>.json  bench.md  bench.log     benchmark (bench/bench.py)
# The whole command is budgeted to end inside the device tool's 10-minute limit
# (TLC_GPU_BUDGET_S, default 540 s): the checks get up to half, the benchmark the rest; each
# stops starting new work when its share is spent and still writes what it has.
#
# The benchmark runs even when a check fails (so one lease yields both), except for kernels
# that crashed or hung in the checks. Exit status: the first non-zero of run.py and bench.py.
set -uo pipefail

bundle=gpu-bundle
bench=1
pass_args=()
bench_args=()
while (($#)); do
  case $1 in
    --skip-bench) bench=; shift ;;
    --skip-triton) bench_args+=(--skip-triton); shift ;;
    --only) pass_args+=(--only "$2"); shift 2 ;;
    -*) echo "gpu_check.sh: unknown option '$1'" >&2; exit 2 ;;
    *) bundle=$1; shift ;;
  esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-$root/gpu-out}
budget=${TLC_GPU_BUDGET_S:-540}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
start=$SECONDS

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm \
  --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'

python3 "$root/tests/gpu/run.py" "$bundle" --out "$out" --budget-s $((budget / 2)) \
  "${pass_args[@]}" 2>&1 | tee "$out/run.log"
run_rc=${PIPESTATUS[0]}

bench_rc=0
if [[ -n $bench ]]; then
  left=$((budget - (SECONDS - start)))
  python3 "$root/bench/bench.py" "$bundle" --out "$out" --results "$out/results.json" \
    --budget-s "$left" "${pass_args[@]}" "${bench_args[@]}" 2>&1 | tee "$out/bench.log"
  bench_rc=${PIPESTATUS[0]}
fi

echo "gpu_check: run.py exit $run_rc, bench.py exit $bench_rc, $((SECONDS - start)) s; files in $out"
((run_rc != 0)) && exit "$run_rc"
exit "$bench_rc"
