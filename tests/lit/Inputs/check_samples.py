"""Runs `tlc FILE --emit=ast` on every sample and checks that each one compiles cleanly.

Usage: check_samples.py TLC SAMPLES_DIR

For every samples/*.tl: exit status 0, nothing on stderr, and an AST with at least one
kernel. Prints one line per sample ("ok NAME: kernel K1, K2") so that FileCheck can also
pin the list; exits 1 if any sample fails.
"""
import glob
import os
import re
import subprocess
import sys


def main(argv):
    tlc, samples_dir = argv[1], argv[2]
    paths = sorted(glob.glob(os.path.join(samples_dir, "*.tl")))
    if not paths:
        print("no samples found in %s" % samples_dir)
        return 1
    failed = 0
    for path in paths:
        name = os.path.basename(path)
        proc = subprocess.run([tlc, path, "--emit=ast"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        kernels = re.findall(r"^  kernel (\w+) <", proc.stdout.decode(), re.MULTILINE)
        if proc.returncode != 0 or proc.stderr or not kernels:
            failed += 1
            print("FAIL %s: exit %d, %d kernels" % (name, proc.returncode, len(kernels)))
            sys.stdout.write(proc.stderr.decode())
            continue
        print("ok %s: kernel %s" % (name, ", ".join(kernels)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
