"""Checks the #line directives of a file tlc generated: each that names the generated file
itself (its name as tlc was told it) gives the real number of the line after it, and each that
names a .tl file gives a line that file has.

usage: check_line_directives.py GENERATED [NAME]   (NAME: the name the directives use, default
GENERATED); prints how many directives of each kind it checked."""
import os
import re
import sys


def unescape(s: str) -> str:
    # tlc escapes `"`, `\`, the `?` of `??` and octal bytes (lower::cEscaped).
    return re.sub(rb"\\([0-7]{3}|.)",
                  lambda m: bytes([int(m.group(1), 8)]) if len(m.group(1)) == 3 else m.group(1),
                  s.encode()).decode("utf-8", "surrogateescape")


def main() -> int:
    path = sys.argv[1]
    name = sys.argv[2] if len(sys.argv) > 2 else path
    own = tl = 0
    current = None
    lengths = {}
    errors = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for number, line in enumerate(f, 1):
            m = re.match(r'#line (\d+)(?: "((?:[^"\\]|\\.)*)")?\s*$', line)
            if not m:
                if line.lstrip().startswith("#line"):
                    errors.append(f"{number}: malformed: {line.rstrip()}")
                continue
            target, file = int(m.group(1)), m.group(2)
            if file is not None:
                current = unescape(file)
            elif current is None:
                errors.append(f"{number}: names no file, and none was named before")
                continue
            if current == name:
                own += 1
                if target != number + 1:
                    errors.append(f"{number}: names line {target} of the generated file, is before {number + 1}")
            else:
                tl += 1
                if current not in lengths:
                    with open(current, encoding="utf-8", errors="surrogateescape") as src:
                        lengths[current] = sum(1 for _ in src)
                if not 1 <= target <= lengths[current]:
                    errors.append(f"{number}: line {target} of {current}, which has {lengths[current]}")
    for e in errors:
        print(f"{path}:{e}")
    print(f"{own} back to {os.path.basename(name)}, {tl} to .tl lines")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
