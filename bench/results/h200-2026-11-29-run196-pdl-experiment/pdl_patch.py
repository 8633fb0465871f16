"""Experiment: programmatic dependent launch in a generated .cu. Every __global__ kernel waits
for its predecessor's grid (griddepcontrol.wait) first and then lets its dependents launch;
every launcher launches with cudaLaunchAttributeProgrammaticStreamSerialization.
usage: pdl_patch.py IN.cu OUT.cu"""
import re, sys
src = open(sys.argv[1]).read()
# 1. kernel prologues: after the opening brace of each __global__ definition
out, n_k = [], 0
pos = 0
for m in re.finditer(r"__global__ void[^{;]*\{", src):
    out.append(src[pos:m.end()])
    out.append('\n  asm volatile("griddepcontrol.wait;" ::: "memory");\n  asm volatile("griddepcontrol.launch_dependents;");\n')
    pos = m.end(); n_k += 1
out.append(src[pos:])
src = "".join(out)
# 2. launches
pat = re.compile(r"tl_kernel<<<(dim3\([^;]*?\)), (dim3\([^;]*?\)), (tl_smem), (stream)>>>\((.*?)\);\n", re.S)
def rep(m):
    g, b, s, st, args = m.groups()
    return ("{ cudaLaunchConfig_t tl_cfg = {}; tl_cfg.gridDim = " + g + "; tl_cfg.blockDim = " + b +
            "; tl_cfg.dynamicSmemBytes = " + s + "; tl_cfg.stream = " + st + ";\n"
            "    cudaLaunchAttribute tl_attr[1]; tl_attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;"
            " tl_attr[0].val.programmaticStreamSerializationAllowed = 1; tl_cfg.attrs = tl_attr; tl_cfg.numAttrs = 1;\n"
            "    cudaLaunchKernelEx(&tl_cfg, tl_kernel, " + args + "); }\n")
src, n_l = pat.subn(rep, src)
open(sys.argv[2], "w").write(src)
print(f"{sys.argv[1]}: {n_k} kernels, {n_l} launches patched", file=sys.stderr)
