#!/usr/bin/env python3
"""Patch a tlc-generated .cu with per-block timestamps: the probe of runs 214-217
(../../h200-2026-11-29-run214-217-epilogue-icache/probe/instrument.py: entry, lead copies
landed, each stage's full wait, producer start, exit), plus last_block's vote (slot 14 in
every block, 15 in the blocks that combine)."""
import os, re, runpy, sys
src, dst = sys.argv[1], sys.argv[2]
base = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "../../h200-2026-11-29-run214-217-epilogue-icache/probe/instrument.py")
sys.argv = [base, src, dst]
runpy.run_path(base, run_name="__main__")
s = open(dst).read()
s = re.sub(r'(\n(\s*)(?:tl::wgmma::fence_proxy_async_shared\(\); )?const bool (tl_lastblock\d+) = [^\n]*\n)',
           lambda m: m.group(1) + m.group(2) + f'if (tl_tid == 0) {{ TLP(14); if ({m.group(3)}) TLP(15); }}\n', s)
open(dst, 'w').write(s)
