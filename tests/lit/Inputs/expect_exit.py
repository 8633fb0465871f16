"""Runs a command and succeeds only if it exits with the expected status.

Usage: expect_exit.py STATUS COMMAND [ARGS...]

The command's stdout and stderr pass through unchanged so that the test can FileCheck them.
"""
import subprocess
import sys


def main(argv):
    if len(argv) < 3 or not argv[1].lstrip("-").isdigit():
        sys.stderr.write("usage: expect_exit.py STATUS COMMAND [ARGS...]\n")
        return 2
    expected = int(argv[1])
    status = subprocess.call(argv[2:])
    if status != expected:
        sys.stdout.flush()
        sys.stderr.write("expect_exit: '%s' exited with status %d, expected %d\n"
                         % (" ".join(argv[2:]), status, expected))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
