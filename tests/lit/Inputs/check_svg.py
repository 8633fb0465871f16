"""Checks that tlc's pictures are well-formed SVG documents (python3's xml.etree, which CI has:
.ci/setup installs no xmllint; xml.dom.minidom took 20 s over the samples' pictures).

Usage: check_svg.py FILE.svg ...   ('-': standard input)
       check_svg.py --samples TLC SAMPLES_DIR   (tlc --emit=layout-svg on every sample)

For each document: it parses as XML; the root is <svg> in the SVG namespace with positive
integer width and height and a matching viewBox; it has a <title>; every <rect> has
non-negative numeric geometry inside the picture; every <text> has text. Prints one line per
document ("ok NAME: N rects, M texts, K tooltips"); exits 1 if any fails.
"""
import glob
import os
import re
import subprocess
import sys
from xml.etree import ElementTree

SVG = "{http://www.w3.org/2000/svg}"  # ElementTree's spelling of the namespace
# The largest picture tlc may write for one kernel: corners keep them small. A sample of
# several kernels (samples/flash_attention_bwd.tl has three) draws them all in one picture.
MAX_BYTES = 4 << 20


def check(name, data, kernels=1):
    if len(data) > MAX_BYTES * kernels:
        return "%d bytes, over %d" % (len(data), MAX_BYTES * kernels)
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as e:
        return "not well-formed: %s" % e
    if root.tag != SVG + "svg":
        return "root is <%s>, not <svg> in the SVG namespace" % root.tag
    try:
        width, height = int(root.get("width", "")), int(root.get("height", ""))
    except ValueError:
        return "width/height are not integers"
    if width <= 0 or height <= 0 or root.get("viewBox") != "0 0 %d %d" % (width, height):
        return "bad size %dx%d or viewBox %r" % (width, height, root.get("viewBox"))
    if next(root.iter(SVG + "title"), None) is None:
        return "no <title>"
    rects = list(root.iter(SVG + "rect"))
    for r in rects:
        try:
            x, y, w, h = (float(r.get(a, "")) for a in ("x", "y", "width", "height"))
        except ValueError:
            return "a <rect> with non-numeric geometry: %s" % ElementTree.tostring(r, "unicode")
        if min(x, y, w, h) < 0 or x + w > width or y + h > height:
            return "a <rect> outside the %dx%d picture: %s" % (width, height, ElementTree.tostring(r, "unicode"))
    texts = list(root.iter(SVG + "text"))
    for t in texts:
        # The text directly inside the element (not in child elements such as <tspan>).
        if not ((t.text or "") + "".join(c.tail or "" for c in t)).strip():
            return "an empty <text>: %s" % ElementTree.tostring(t, "unicode")
    tooltips = sum(1 for _ in root.iter(SVG + "title")) - len(root.findall(SVG + "title"))
    print("ok %s: %d rects, %d texts, %d tooltips" % (name, len(rects), len(texts), tooltips))
    return None


def main(argv):
    docs = []
    if len(argv) == 4 and argv[1] == "--samples":
        tlc, samples = argv[2], argv[3]
        for path in sorted(glob.glob(os.path.join(samples, "*.tl"))):
            proc = subprocess.run([tlc, path, "--emit=layout-svg"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=120)
            if proc.returncode != 0:
                print("FAIL %s: exit %d" % (os.path.basename(path), proc.returncode))
                sys.stdout.write(proc.stderr.decode())
                return 1
            with open(path) as f:
                kernels = sum(1 for line in f if re.match(r"\s*kernel\s", line))
            docs.append((os.path.basename(path), proc.stdout, max(1, kernels)))
    else:
        for path in argv[1:]:
            if path == "-":
                docs.append(("<stdin>", sys.stdin.buffer.read(), 1))
            else:
                with open(path, "rb") as f:
                    docs.append((os.path.basename(path), f.read(), 1))
    failed = 0
    for name, data, kernels in docs:
        why = check(name, data, kernels)
        if why:
            failed += 1
            print("FAIL %s: %s" % (name, why))
    return 1 if failed or not docs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
