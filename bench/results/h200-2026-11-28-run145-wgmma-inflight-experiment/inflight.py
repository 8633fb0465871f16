"""Hand edit of a generated warp-specialized GEMM: the consumer keeps one wgmma group in flight
across the back edge and releases the previous stage after the next gemm's wait<1>.
usage: inflight.py IN.cu OUT.cu"""
import re, sys
s = open(sys.argv[1]).read()
pat = re.compile(r"(        tl::wgmma::gemm_ss<([^>]*)>\((A_s \+ \(k % (\d+)\)[^;]*), (C_f)\);\n#line \d+\n"
                 r"        tl::mbarrier::arrive\(tl_empty \+ \(k % \d+\)\);\n#line \d+\n      }\n)")
m = pat.search(s)
assert m, "pattern"
stages = int(m.group(4))
new = (f"        tl::wgmma::gemm_ss<{m.group(2)}, 1>({m.group(3)}, {m.group(5)});\n"
       f"        if (k > 0) tl::mbarrier::arrive(tl_empty + ((k + {stages - 1}) % {stages}));\n"
       f"      }}\n      tl::wgmma::drain({m.group(5)});\n")
s = s[:m.start()] + new + s[m.end():]
open(sys.argv[2], "w").write(s)
