#!/usr/bin/env bash
# The one command for the GPU machine: build the bundle's kernels, check them, benchmark them.
#
#   bash tests/gpu/gpu_check.sh [BUNDLE] [--skip-bench] [--skip-triton] [--only REGEX]
#                               [--sanitize] [--torch] [--emu-compare]
#
# BUNDLE defaults to gpu-bundle (made by tests/gpu/make_bundle.sh on the build machine).
# Everything goes to $OUT (the device tool brings back at most 8 files; this writes 6, and
# sanitize.log with --sanitize, torch_ext.log with --torch):
#   results.json  run.log  build.log              correctness (tests/gpu/run.py)
#   <device>-<date>.json  bench.md  bench.log     benchmark (bench/bench.py)
# The whole command is budgeted to end inside the device tool's 10-minute limit
# (TLC_GPU_BUDGET_S, default 540 s): the checks get up to half, the benchmark the rest; each
# stops starting new work when its share is spent and still writes what it has.
#
# --sanitize (or TLC_GPU_SANITIZE=1, or =REGEX for other builds) adds a stage after the checks: compute-sanitizer's
# memcheck, racecheck and synccheck over one launch of the smallest cases of the builds whose
# name matches REGEX (default ^layout_: the issue-9 widths, head dims and gathered table),
# through tests/gpu/sanitize.py. Each tool's error count goes into results.json
# ("sanitizer": {tool: {"errors": N, "exit": rc, "seconds": s}}) and its output to sanitize.log.
# A tool that reports errors, a launch that fails under it, or a REGEX that launches no case
# makes the command exit 4 (unless the checks already failed).
#
# --torch adds a stage after the checks (and the sanitizer): tests/gpu/torch_ext_check.py builds
# the bundle's PyTorch extension (make_bundle.sh --torch) and checks its ops against torch
# references and the ctypes path, under CUDA graph capture and on a side stream; its summary
# goes into results.json ("torch_ext") and its output to torch_ext.log. A failure makes the
# command exit 5 (unless an earlier stage already failed).
#
# --emu-compare adds a stage after the checks: tests/gpu/emu_compare.py builds the sm_80 code of
# every emulator sample in BUNDLE/emu (make_bundle.sh --emu-compare), runs it on the inputs the
# CPU emulator drew and compares each output element with the emulator's (one JSON record per
# sample, then a summary: cases, passed, elements compared); records and summary go into
# results.json ("emu_compare") and the output into run.log. A mismatch makes the command exit 6
# (unless an earlier stage already failed). A bundle made with --only '^$' --emu-compare has no
# other builds: then the checks and the benchmark are skipped.
#
# The benchmark runs even when a check fails (so one lease yields both), except for kernels
# that crashed or hung in the checks. Exit status: the first non-zero of run.py and bench.py.
set -uo pipefail

bundle=gpu-bundle
bench=1
pass_args=()
bench_args=()
sanitize=${TLC_GPU_SANITIZE:-}
torch=
emu=
while (($#)); do
  case $1 in
    --skip-bench) bench=; shift ;;
    --skip-triton) bench_args+=(--skip-triton); shift ;;
    --only) pass_args+=(--only "$2"); shift 2 ;;
    --sanitize) sanitize=1; shift ;;
    --torch) torch=1; shift ;;
    --emu-compare) emu=1; shift ;;
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

# A bundle of only the emulator comparison (make_bundle.sh --only '^$' --emu-compare) has no
# builds for run.py and bench.py.
builds=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["builds"]))' \
  "$bundle/manifest.json" 2>/dev/null || echo 1)
run_rc=0
if [[ $builds == 0 && -n $emu ]]; then
  echo "gpu_check: the bundle has no builds besides the emulator comparison" | tee "$out/run.log"
  bench=
else
  python3 "$root/tests/gpu/run.py" "$bundle" --out "$out" --budget-s $((budget / 2)) \
    "${pass_args[@]}" 2>&1 | tee "$out/run.log"
  run_rc=${PIPESTATUS[0]}
fi

san_rc=0
[[ $sanitize == 1 ]] && sanitize='^layout_'
if [[ -n $sanitize ]]; then
  : >"$out/sanitize.log"
  declare -A san_errors san_exit san_seconds
  for tool in memcheck racecheck synccheck; do
    t0=$SECONDS
    compute-sanitizer --tool "$tool" --print-limit 20 \
      python3 "$root/tests/gpu/sanitize.py" "$bundle" --only "$sanitize" >"$out/san.$tool" 2>&1
    san_exit[$tool]=$?
    san_seconds[$tool]=$((SECONDS - t0))
    # memcheck and synccheck end with "========= ERROR SUMMARY: N errors"; racecheck with
    # "========= RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)". No summary
    # line at all (the tool did not run to the end) stays -1, which fails the stage.
    san_errors[$tool]=$(sed -n -e 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' \
      -e 's/.*RACECHECK SUMMARY: .*(\([0-9]*\) error.*/\1/p' "$out/san.$tool" | tail -n 1)
    san_errors[$tool]=${san_errors[$tool]:--1}
    { echo "===== compute-sanitizer --tool $tool: ${san_errors[$tool]} errors, exit ${san_exit[$tool]}, ${san_seconds[$tool]} s"
      cat "$out/san.$tool"; } | tee -a "$out/sanitize.log" | tail -n 3
    rm -f "$out/san.$tool"
    # Errors, or sanitize.py's own failure: a launch that failed, or no case launched at all.
    [[ ${san_errors[$tool]} != 0 || ${san_exit[$tool]} != 0 ]] && san_rc=4
  done
  python3 - "$out/results.json" "$sanitize" \
    "memcheck=${san_errors[memcheck]},${san_exit[memcheck]},${san_seconds[memcheck]}" \
    "racecheck=${san_errors[racecheck]},${san_exit[racecheck]},${san_seconds[racecheck]}" \
    "synccheck=${san_errors[synccheck]},${san_exit[synccheck]},${san_seconds[synccheck]}" <<'PY'
import json, os, sys
path, regex, *tools = sys.argv[1:]
try:
    with open(path) as f:
        results = json.load(f)
except (OSError, ValueError):
    results = {}
summary = {"builds": regex}
for t in tools:
    name, _, nums = t.partition("=")
    errors, code, seconds = (int(x) for x in nums.split(","))
    summary[name] = {"errors": errors, "exit": code, "seconds": seconds}
results["sanitizer"] = summary
with open(path + ".tmp", "w") as f:
    json.dump(results, f, indent=1)
os.replace(path + ".tmp", path)
print("sanitizer:", json.dumps(summary))
PY
fi

torch_rc=0
if [[ -n $torch ]]; then
  python3 "$root/tests/gpu/torch_ext_check.py" "$bundle" --results "$out/results.json" 2>&1 | tee "$out/torch_ext.log"
  torch_rc=${PIPESTATUS[0]}
  ((torch_rc != 0)) && torch_rc=5
fi

emu_rc=0
if [[ -n $emu ]]; then
  python3 "$root/tests/gpu/emu_compare.py" run "$bundle" --out "$out" 2>&1 | tee -a "$out/run.log"
  emu_rc=${PIPESTATUS[0]}
  ((emu_rc != 0)) && emu_rc=6
fi

bench_rc=0
if [[ -n $bench ]]; then
  left=$((budget - (SECONDS - start)))
  python3 "$root/bench/bench.py" "$bundle" --out "$out" --results "$out/results.json" \
    --budget-s "$left" "${pass_args[@]}" "${bench_args[@]}" 2>&1 | tee "$out/bench.log"
  bench_rc=${PIPESTATUS[0]}
fi

echo "gpu_check: run.py exit $run_rc, bench.py exit $bench_rc, $((SECONDS - start)) s; files in $out"
((run_rc != 0)) && exit "$run_rc"
((san_rc != 0)) && exit "$san_rc"
((torch_rc != 0)) && exit "$torch_rc"
((emu_rc != 0)) && exit "$emu_rc"
exit "$bench_rc"
