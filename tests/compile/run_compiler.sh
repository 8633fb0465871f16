#!/bin/sh
# Runs one compiler invocation for a ctest compile test.
#
#   run_compiler.sh [--expect-error REGEX] COMPILER ARGS...
#
# Exit codes: 0 pass, 1 fail, 77 skip (the compiler is not installed; ctest maps 77 to
# "skipped" through SKIP_RETURN_CODE, so a machine without nvcc/hipcc never reports a pass).
# With --expect-error the compilation must fail and its output must match REGEX (an extended
# regular expression): a compile-fail test passes only for the diagnostic it is about.
set -u

expect=""
if [ "${1:-}" = "--expect-error" ]; then
  expect="$2"
  shift 2
fi
compiler="$1"
shift

if [ ! -x "$compiler" ]; then
  echo "SKIP: compiler '$compiler' not found"
  exit 77
fi

output=$("$compiler" "$@" 2>&1)
status=$?
printf '%s\n' "$output"

if [ -z "$expect" ]; then
  exit "$status"
fi
if [ "$status" -eq 0 ]; then
  echo "FAIL: compilation succeeded, expected an error matching: $expect"
  exit 1
fi
if printf '%s\n' "$output" | grep -Eq -- "$expect"; then
  exit 0
fi
echo "FAIL: compilation failed, but without an error matching: $expect"
exit 1
