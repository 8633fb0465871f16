#!/usr/bin/env bash
# Tests editors/completion/tlc.bash in a non-interactive bash: COMP_WORDS as bash would set
# them, then what _tlc proposes. Usage: completion.sh TLC (the built tlc).
set -u
tlc=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../completion/tlc.bash"
fails=0
# complete WORD... : sets COMP_WORDS to `tlc WORD...`, completes the last word.
complete_words() {
  COMP_WORDS=("$tlc" "$@")
  COMP_CWORD=$#
  _tlc
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect() { # expect DESCRIPTION WANTED -- WORD...
  local what=$1 want=$2; shift 3
  local got
  got=$(complete_words "$@" | tr '\n' ' ' | sed 's/ $//')
  if [[ "$got" != "$want" ]]; then
    echo "FAIL: $what: got '$got', want '$want'"
    fails=$((fails + 1))
  else
    echo "ok: $what"
  fi
}
contains() { # contains DESCRIPTION WORD -- WORD...
  local what=$1 want=$2; shift 3
  if ! complete_words "$@" | grep -qx -- "$want"; then
    echo "FAIL: $what: '$want' not proposed"
    fails=$((fails + 1))
  else
    echo "ok: $what"
  fi
}
cd "$here/../.." # the repository: samples/ holds .tl files
expect "--emit's choices" "cuda" -- --emit cu
expect "--emit=... form" "--emit=header" -- --emit=he
expect "--target's choices" "sm_80 sm_86 sm_89 sm_90a" -- --target sm
expect "--color's choices" "always" -- --color al
expect "--diagnostics-format's choices" "json" -- --diagnostics-format j
contains "long options" "--diagnostics-format" -- --diag
contains "short options" "-D" -- -
contains ".tl files" "samples/gemm.tl" -- samples/ge
expect "no .cu files as inputs" "" -- samples/consumer/CMakeLists
contains "the subcommand" "recommend" -- rec
contains "recommend's options" "--show-illegal" -- recommend samples/gemm.tl --show
expect "recommend --format" "json" -- recommend samples/gemm.tl --format j
contains "devices" "h100-sxm" -- --device h1
exit $((fails > 0))
