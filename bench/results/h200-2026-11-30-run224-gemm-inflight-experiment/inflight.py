import re, sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
pat = re.compile(r"""(      for \(int k = 0; k < tl_k_count; \+\+k\) \{
        tl::mbarrier::wait\(tl_full \+ \(\(tl_ring \+ k\) % (\d+)\), \(\(\(tl_ring \+ k\) / \d+\) & 1\)\);
        // gemm: [^\n]*
#line [^\n]*
        tl::wgmma::gemm_ss<([^>]*)>\(([^;]*), C_f\);
#line [^\n]*
)        tl::mbarrier::arrive\(tl_empty \+ \(\(tl_ring \+ k\) % \d+\)\);
      \}
""")
def rep(m):
    head, S, targs, args = m.group(1), m.group(2), m.group(3), m.group(4)
    head = head.replace("gemm_ss<%s>(%s, C_f);" % (targs, args), "gemm_ss<%s, 1>(%s, C_f);  // left in flight" % (targs, args))
    return (head + "        if (k > 0) tl::mbarrier::arrive(tl_empty + ((tl_ring + k - 1) %% %s));  // k - 1's group is done\n" % S +
            "      }\n      tl::wgmma::drain<0>(C_f);\n" +
            "      if (tl_k_count > 0) tl::mbarrier::arrive(tl_empty + ((tl_ring + tl_k_count - 1) %% %s));\n" % S)
s2, n = pat.subn(rep, s)
assert n == 1, n
open(dst, "w").write(s2)
