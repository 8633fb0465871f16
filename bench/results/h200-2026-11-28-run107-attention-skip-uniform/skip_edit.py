"""Hand edit (experiment, GPU run 106): each consumer warpgroup of the D64 attention skips a key
tile's work when none of its 64 query rows needs it (rows past seq_len; with causal, keys past
its last row)."""
import re, sys
src, dst, causal = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
tile = sys.argv[4] if len(sys.argv) > 4 else "bx"
text = open(src).read()
wait = "        tl::mbarrier::wait(tl_full + (k % 3), ((k / 3) & 1));\n"
arrive = "        tl::mbarrier::arrive(tl_empty + (k % 3));\n"
assert text.count(wait) == 1 and text.count(arrive) == 1, (text.count(wait), text.count(arrive))
row0 = f"({tile} * 192 + (tl_tid / 128) * 64)"
cond = f"{row0} < seq_len" + (f" && k * 128 <= {row0} + 63" if causal else "")
text = text.replace(wait, wait + f"        if ({cond}) {{\n")
text = text.replace(arrive, "        }\n" + arrive)
open(dst, "w").write(text)
