"""Experiment (GPU run 107): as skip_edit.py, but the warpgroup index is broadcast from lane 0
(__shfl_sync) so that ptxas knows the branch is warp-uniform (CUTLASS's canonical_warp_group_idx)."""
import sys
src, dst, causal = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
tile = sys.argv[4] if len(sys.argv) > 4 else "bx"
text = open(src).read()
wait = "        tl::mbarrier::wait(tl_full + (k % 3), ((k / 3) & 1));\n"
arrive = "        tl::mbarrier::arrive(tl_empty + (k % 3));\n"
loop = "      for (int k = 0; k < tl_k_count; ++k) {\n"
assert text.count(wait) == 1 and text.count(arrive) == 1
i = text.index(wait); j = text.rindex(loop, 0, i)
text = text[:j] + "      const int tl_wg_row0 = " + tile + " * 192 + __shfl_sync(0xffffffffu, tl_tid / 128, 0) * 64;\n" + text[j:]
cond = "tl_wg_row0 < seq_len" + (" && k * 128 <= tl_wg_row0 + 63" if causal else "")
text = text.replace(wait, wait + f"        if ({cond}) {{\n")
text = text.replace(arrive, "        }\n" + arrive)
open(dst, "w").write(text)
