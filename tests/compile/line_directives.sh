#!/bin/sh
# #line directives through nvcc (issue 14, item 3): `tlc -c` reports an error in the user's
# code (a call_extern of a function nothing declares) at its .tl line, and one in code tlc
# generates (a launcher line broken by a macro from -Xnvcc) at the line of the generated file
# (--save-temps) that holds it; with --no-line-directives the first names the generated file.
#
#   line_directives.sh TLC NVCC WORK_DIR
set -eu
tlc="$1"; nvcc="$2"; work="$3"
[ -x "$nvcc" ] || { echo "SKIP: no nvcc"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
cat > good.tl <<'TL'
kernel k(A: f32[64], B: out f32[64]) grid(1) threads(64) as (bx) {
  for i in parallel(64) {
    B[i] = A[i] * 2.0;
  }
}
TL
{ head -n 4 good.tl; echo '  call_extern("tlc_test_undeclared", 1);'; echo '}'; } > bad.tl

# tlc -c ARGS... must fail with exit status 1 (nvcc failed); its messages go to `log`.
fails() {
  rc=0
  "$tlc" -c "$@" --target sm_80 --nvcc "$nvcc" 2>log || rc=$?
  [ "$rc" = 1 ] || { echo "FAIL: tlc -c $* exited with $rc, not 1:"; cat log; exit 1; }
}
expect() {
  grep -qF -- "$1" log || { echo "FAIL: no '$1' in:"; cat log; exit 1; }
  echo "ok: $1"
}

fails bad.tl -o bad.o
expect 'bad.tl(5): error: identifier "tlc_test_undeclared" is undefined'

fails bad.tl --no-line-directives --save-temps -o plain.o
line=$(grep -n 'tlc_test_undeclared(1);' plain.cu | cut -d: -f1)
expect "plain.cu($line): error: identifier \"tlc_test_undeclared\" is undefined"

fails good.tl --save-temps -Xnvcc=-Dtl_status=@ -o launcher.o
line=$(grep -n 'tlc::Status tl_status;' launcher.cu | head -n 1 | cut -d: -f1)
expect "launcher.cu($line): error"
echo "PASS"
