#!/usr/bin/env bash
# Packs tlc-fuzz for a machine without the Debian packages (the lent GPU machine has 16 cores
# and none of our libraries): the binary, every shared library it loads (glibc and its loader
# included, so the host's glibc does not matter), and the seed corpus, as one .tar.gz. The
# binary's interpreter and rpath are set to /tmp/tlcfz, where the archive must be unpacked,
# because libFuzzer's -fork and -jobs re-execute argv[0] directly.
# Needs patchelf (Debian package `patchelf`; not needed by CI, which never packs).
#
#   tests/fuzz/pack.sh BUILD-FUZZ OUT.tar.gz
#   there:  mkdir -p /tmp/tlcfz && tar -xzf OUT.tar.gz -C /tmp/tlcfz
#           /tmp/tlcfz/tlc-fuzz /tmp/tlcfz/corpus /tmp/tlcfz/seeds -fork=N -max_total_time=S ...
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:?usage: pack.sh BUILD-FUZZ OUT.tar.gz}
out=$(realpath -m "${2:?usage: pack.sh BUILD-FUZZ OUT.tar.gz}")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/corpus"
cp "$build/bin/tlc-fuzz" "$stage/tlc-fuzz"
strip --strip-debug "$stage/tlc-fuzz" # symbols stay (stack traces), DWARF goes
ldd "$build/bin/tlc-fuzz" | awk '/=>/ {print $3} /ld-linux/ {print $1}' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
patchelf --set-interpreter /tmp/tlcfz/lib/ld-linux-x86-64.so.2 --set-rpath /tmp/tlcfz/lib \
  "$stage/tlc-fuzz"
python3 -c "import sys; sys.path.insert(0, '$root/tests/fuzz'); import fuzz; \
print(fuzz.seed_corpus('$root', '$stage/seeds'), 'seed inputs')"
cp -r "$root/tests/fuzz/regressions" "$stage/regressions"
tar -czf "$out" -C "$stage" .
echo "$out: $(du -h "$out" | cut -f1)"
