#!/usr/bin/env bash
# Generates the GPU bundle on the build machine: every .cu the cases and benchmarks need, a copy
# of stdlib/ and runtime/ (so the bundle builds with nvcc alone), and manifest.json (the cases,
# the benchmark items, the -D values of each build). tests/gpu/run.py and bench/bench.py read it
# on the GPU machine.
#
#   tests/gpu/make_bundle.sh [--out DIR] [--tlc PATH] [--target sm_90a] [--only REGEX] [--torch]
#                            [--emu-compare [--emu-only REGEX]] [--random N --seed S [--random-templates LIST]]
#   tests/gpu/make_bundle.sh --selftest [--out DIR]
#
#   --out DIR      the bundle directory (default gpu-bundle, emptied first)
#   --tlc PATH     the compiler (default build/bin/tlc)
#   --target T     tlc --target (default sm_90a)
#   --only REGEX   only the builds whose name matches (gemm_f16, fa_d128_causal, softmax_f16...)
#   --random N     instead of the fixed tables, N configurations of the samples with random knobs
#   --seed S       and shapes (tests/gpu/random_tables.py, seeded by S; the draws tlc rejects with
#                  a located error are drawn again): DIR/random_tables.json has them
#   --random-targets LIST  the targets those draws choose from (default: --target; e.g.
#                  sm_90a,sm_80 also checks the sm_80 path on the same GPU)
#   --random-templates LIST  only these templates of random_tables.py (e.g. mla,attention: the
#                  samples a change touched); default all
#   --selftest     no tlc: the GEMM builds are tests/gpu/selftest/naive_gemm.cu, a hand-written
#                  kernel with the same C ABI, to validate the runner and the benchmark harness
#   --torch        also DIR/torch/: the PyTorch extension (tlc --emit=torch) of gemm, softmax
#                  and causal flash attention, and the same kernels' plain CUDA for the ctypes
#                  comparison, which tests/gpu/torch_ext_check.py builds and checks
#                  (gpu_check.sh --torch)
#   --emu-compare  also DIR/emu/: every emulator sample (tests/emulator/run_samples.py) run by
#                  `tlc run --emulate --target sm_80` at one small awkward shape, its inputs and
#                  outputs (*.bin) and the same kernel's CUDA, for tests/gpu/emu_compare.py
#                  (gpu_check.sh --emu-compare); --emu-only REGEX picks samples. Minutes here:
#                  each sample is compiled for the emulator.
#
# A build that tlc cannot generate is reported and left out of the bundle (its cases then fail
# on the GPU machine as "not generated"); the exit status is 1 if any build failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=gpu-bundle
tlc=$root/build/bin/tlc
target=sm_90a
only=
selftest=
torch=
emu=
emu_only=
random_count=
seed=1
random_targets=
random_templates=

usage() { sed -n '2,33p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --tlc) tlc=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --selftest) selftest=1; shift ;;
    --torch) torch=1; shift ;;
    --emu-compare) emu=1; shift ;;
    --emu-only) emu_only=$2; shift 2 ;;
    --random) random_count=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --random-targets) random_targets=$2; shift 2 ;;
    --random-templates) random_templates=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "make_bundle.sh: unknown argument '$1'" >&2; usage ;;
  esac
done

table_args=()
[[ -n $only ]] && table_args+=(--only "$only")
[[ -n $selftest ]] && table_args+=(--selftest)

if [[ -z $selftest && ! -x $tlc ]]; then
  echo "make_bundle.sh: $tlc is not built (cmake --build build), or pass --tlc" >&2
  exit 2
fi

rm -rf "$out"
mkdir -p "$out"
cp -r "$root/stdlib" "$root/runtime" "$out/"
if [[ -n $random_count ]]; then
  python3 "$root/tests/gpu/cases.py" random --count "$random_count" --seed "$seed" --tlc "$tlc" \
    --target "$target" --targets "${random_targets:-$target}" --out "$out/random_tables.json" \
    ${random_templates:+--templates "$random_templates"}
  table_args+=(--tables "$out/random_tables.json")
fi

failed=()
while read -r name source kernel defines; do
  dest=$out/$name.cu
  if [[ -n $selftest ]]; then
    # The naive GEMM picks its element type from TLC_SELFTEST_DTYPE (dtype=f16 -> TLC_F16).
    dtype=$(sed -n 's/.*\bdtype=\([a-z0-9]*\).*/\1/p' <<<"$defines")
    { printf '#define TLC_SELFTEST_DTYPE TLC_%s\n' "${dtype^^}"
      cat "$root/tests/gpu/selftest/naive_gemm.cu"; } >"$dest"
    echo "selftest $name (dtype $dtype)"
    continue
  fi
  # A build's `target=T` define picks tlc's --target for it (the sm_80 path's builds run on
  # the same GPU); the others use the bundle's target.
  args=()
  build_target=$target
  for d in $defines; do
    if [[ $d == target=* ]]; then build_target=${d#target=}; else args+=(-D "$d"); fi
  done
  echo "tlc $source --target $build_target ${args[*]} -o $dest"
  if ! "$tlc" "$root/$source" --target "$build_target" "${args[@]}" -o "$dest" 2>"$out/$name.tlc.log"; then
    echo "  FAILED: $(head -n 3 "$out/$name.tlc.log")" >&2
    rm -f "$dest"
    failed+=("$name")
  else
    rm -f "$out/$name.tlc.log"
  fi
done < <(python3 "$root/tests/gpu/cases.py" builds "${table_args[@]}")

if [[ -n $torch && -z $selftest ]]; then
  # One extension of three kernels (torch.ops.torch_check.*), and their C entries (tlc_gemm,
  # ...) from the same options, for the ctypes comparison.
  mkdir -p "$out/torch"
  torch_args=(--target "$target")
  while read -r arg; do
    [[ $arg == *.tl ]] && arg=$root/$arg
    torch_args+=("$arg")
  done < <(python3 "$root/tests/gpu/cases.py" torch-ext)
  for emit in torch cuda; do
    emit_args=(--emit=cuda)
    dest=$out/torch/ctypes_ext.cu
    if [[ $emit == torch ]]; then
      emit_args=(--emit=torch --namespace "$(python3 "$root/tests/gpu/cases.py" torch-ext --library)")
      dest=$out/torch/torch_ext.cu
    fi
    echo "tlc ${emit_args[*]} ${torch_args[*]#"$root/"} -o $dest"
    if ! "$tlc" "${emit_args[@]}" "${torch_args[@]}" -o "$dest" 2>"$out/torch/$emit.tlc.log"; then
      echo "  FAILED: $(head -n 3 "$out/torch/$emit.tlc.log")" >&2
      failed+=("torch/$emit")
    else
      rm -f "$out/torch/$emit.tlc.log"
    fi
  done
fi

if [[ -n $emu && -z $selftest ]]; then
  emu_args=(prepare --tlc "$tlc" --out "$out/emu")
  [[ -n $emu_only ]] && emu_args+=(--only "$emu_only")
  python3 "$root/tests/gpu/emu_compare.py" "${emu_args[@]}" || failed+=("emu")
fi

generator="selftest (tests/gpu/selftest/naive_gemm.cu)"
if [[ -z $selftest ]]; then
  generator="$("$tlc" --version 2>/dev/null | head -n 1), git $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
  [[ -n $(git -C "$root" status --porcelain -- compiler stdlib runtime 2>/dev/null) ]] && generator+="+dirty"
fi
python3 "$root/tests/gpu/cases.py" manifest --out "$out" --target "$target" \
  --generator "$generator" "${table_args[@]}"

echo "bundle: $out ($(ls "$out"/*.cu 2>/dev/null | wc -l) .cu files, $(du -sh "$out" | cut -f1))"
if ((${#failed[@]})); then
  echo "make_bundle.sh: tlc failed for: ${failed[*]} (logs: $out/<name>.tlc.log)" >&2
  exit 1
fi
