# Experiment: in the tiles where every key is visible, skip zeroing the scores and let the
# QK^T wgmma overwrite them (scale-d = 0), by hand in generated CUDA.
import re, sys
src, dst = sys.argv[1], sys.argv[2]
lines = open(src).read().split('\n')
out = []
i = 0
n = 0
cond = None
while i < len(lines):
    l = lines[i]
    m = re.match(r'(\s*)if \((\(tl_tile\d+ \|\| tl_tile\d+\)(?: && \(tl_tile\d+ \|\| tl_tile\d+\))*)\) \{$', l)
    if m:
        # find the select in the fast loop
        j = i
        while 'scores[tl_r' not in lines[j] or '? 0.0f' not in lines[j]:
            j += 1
        c = re.search(r'= \((.*) \? 0\.0f : \(-tl::inf<float>\(\)\)\);', lines[j]).group(1)
        cond = c
        out.append(m.group(1) + 'if (%s) {' % c)
        out.append(m.group(1) + '} else if (%s) {' % m.group(2))
        i += 1
        continue
    g = re.match(r'(\s*)(tl::wgmma::gemm_ss<[^>]*>)\((Q_s, K_s[^;]*), scores\);(.*)$', l)
    if g and cond:
        ind = g.group(1)
        out.append(ind + '%s(%s, scores, static_cast<int>(threadIdx.x), %s);%s' % (g.group(2), g.group(3), cond, g.group(4)))
        cond = None
        n += 1
        i += 1
        continue
    out.append(l)
    i += 1
open(dst, 'w').write('\n'.join(out))
print(dst, n)
