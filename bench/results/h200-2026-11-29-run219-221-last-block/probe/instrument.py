#!/usr/bin/env python3
"""Patch a tlc-generated .cu: per-block timestamps (globaltimer ns and clock64) at kernel entry,
lead copies landed, each stage's full wait, producer start, and kernel exit (thread 0 / producer)."""
import re, sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
hdr = r'''
__device__ unsigned long long tlp_gt[8192 * 16];
__device__ unsigned long long tlp_ck[8192 * 16];
__device__ __forceinline__ unsigned long long tlp_now() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ int tlp_block() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
#ifdef TLP_OFF
#define TLP(slot) do {} while (0)
#else
#define TLP(slot) do { tlp_gt[tlp_block() * 16 + (slot)] = tlp_now(); tlp_ck[tlp_block() * 16 + (slot)] = clock64(); } while (0)
#endif
struct TlpExit { __device__ ~TlpExit() { if (threadIdx.x == 0) { TLP(11); unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); tlp_gt[tlp_block() * 16 + 13] = s; } } };
'''
s = s.replace('#include "tl/tl.h"\n', '#include "tl/tl.h"\n' + hdr, 1)
# entry: every kernel with a TL_ASSUME(tl_tid ...) line
s = re.sub(r'(\n(\s*)TL_ASSUME\(tl_tid >= 0[^\n]*\n)', lambda m: m.group(1) + m.group(2) + 'if (threadIdx.x == 0) TLP(0); TlpExit tlp_exit;\n', s)
s = re.sub(r'(\n(\s*)tl::mbarrier::wait\(tl_lead, 0\);\n)', lambda m: m.group(1) + m.group(2) + 'if (tl_tid == 0) TLP(1);\n', s)
def full(m):
    ind, var = m.group(2), m.group(3)
    return m.group(1) + f'{ind}if (tl_tid == 0) {{ if ({var} < 8) TLP(2 + {var}); TLP(10); }}\n'
s = re.sub(r'(\n(\s*)tl::mbarrier::wait\(tl_full \+ \((\w+) % \d+\), \(\(\w+ / \d+\) & 1\)\);\n)', full, s)
s = re.sub(r'(\n(\s*)if \(tl_tid == ([1-9]\d*)\) \{\n)', lambda m: m.group(1) + m.group(2) + '  TLP(12);\n', s)
# last_block's vote (slot 14: the block knows whether it combines) and the combine's end is the exit.
s = re.sub(r'(\n(\s*)(?:tl::wgmma::fence_proxy_async_shared\(\); )?const bool (tl_lastblock\d+) = [^\n]*\n)', lambda m: m.group(1) + m.group(2) + f'if (tl_tid == 0) {{ TLP(14); if ({m.group(3)}) TLP(15); }}\n', s)
open(dst, 'w').write(s)
print(dst, s.count('TLP('))
