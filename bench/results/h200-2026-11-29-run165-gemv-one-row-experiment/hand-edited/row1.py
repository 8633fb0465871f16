"""Experiment (run 165): the staged W4A16 GEMV at M = 1 with A's ring holding one row per
stage instead of block_M = 8 (lanes reading rows 1..7 read garbage that only reaches C's rows
past M, never written), optionally with another stage count. usage: row1.py IN OUT [STAGES]"""
import re, sys
src, out = sys.argv[1], sys.argv[2]
t = open(src).read()
S = int(re.search(r"into (\d+) rotating shared buffers", t).group(1))
T = int(sys.argv[3]) if len(sys.argv) > 3 else S
BK = int(re.search(r"shared f16 \[8, (\d+)\] swizzled", t).group(1))
BN = int(re.search(r"shared u8 \[(\d+), \d+\] row-major", t).group(1))
old_total = int(re.search(r"const size_t tl_smem = (\d+);", t).group(1))
m = re.search(r"tl_reduce_scratch = reinterpret_cast<float\*>\(tl_smem \+ (\d+)\)", t)
scratch = old_total - int(m.group(1)) if m else 0
if T != S:
    t = t.replace(f"% {S})", f"% {T})").replace(f"tl_stage < {S - 1};", f"tl_stage < {T - 1};")
    t = t.replace(f"k + {S - 1};", f"k + {T - 1};").replace(f"cp_async_wait<{S - 2}>", f"cp_async_wait<{T - 2}>")
    t = t.replace(f"stage k % {S}", f"stage k % {T}").replace(f"(k - 1) % {S}", f"(k - 1) % {T}")
# A's stage stride: one row.
t = t.replace(f"A_s[tl_stage * {8 * BK} ", f"A_s[tl_stage * {BK} ")
t = t.replace(f"A_s[(tl_next % {T}) * {8 * BK} ", f"A_s[(tl_next % {T}) * {BK} ")
t = t.replace(f"A_s + (k % {T}) * {8 * BK},", f"A_s + (k % {T}) * {BK},")
left = [l for l in t.split("\n") if f"* {8 * BK}" in l and "A_s" in l]; assert not left, left
lines = []
for line in t.split("\n"):
    s = line.lstrip()
    if s.startswith("tl::cp_async_zfill<16>(&A_s[") or s.startswith("A_s["):
        line = line[:len(line) - len(s)] + "if (tl_t0 == 0) " + s
    lines.append(line)
t = "\n".join(lines)
al = lambda x: (x + 127) // 128 * 128
b_s, s_s = T * BN * BK // 2, T * BN * (BK // 128) * 2
off_s = al(b_s); off_scr = al(off_s + s_s); off_a = al(off_scr + scratch)
total = off_a + T * BK * 2 + 7 * BK * 2
t = re.sub(r"(uint8_t\* B_s = reinterpret_cast<uint8_t\*>\(tl_smem \+ )\d+", rf"\g<1>0", t)
t = re.sub(r"(tl::f16\* S_s = reinterpret_cast<tl::f16\*>\(tl_smem \+ )\d+", rf"\g<1>{off_s}", t)
t = re.sub(r"(tl::f16\* A_s = reinterpret_cast<tl::f16\*>\(tl_smem \+ )\d+", rf"\g<1>{off_a}", t)
t = re.sub(r"(tl_reduce_scratch = reinterpret_cast<float\*>\(tl_smem \+ )\d+", rf"\g<1>{off_scr}", t)
t = t.replace(f"const size_t tl_smem = {old_total};", f"const size_t tl_smem = {total};")
t = t.replace(f"{old_total} bytes of shared memory", f"{total} bytes of shared memory (hand-edited: A one row)")
open(out, "w").write(t)
print(out, "stages", S, "->", T, "smem", old_total, "->", total)
