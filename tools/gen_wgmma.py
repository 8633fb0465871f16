#!/usr/bin/env python3
"""Writes stdlib/tl/wgmma_ops.h: one wrapper per wgmma.mma_async shape tlc uses (m64nNk16 for
every N from 8 to 256 in steps of 8 on f16 or bf16 operands, A from shared memory through a
descriptor (MmaSS) or from registers (MmaRS), B from shared memory; m64nNk32 on s8, e4m3 and
e5m2 operands, both from shared memory and K-major, the only form the PTX ISA has for 8-bit
inputs). Each wrapper's run() has an overload per accumulator tlc uses for its operands: f32
(N/2 registers) for f16, bf16 and fp8, f16 (N/4 registers of f16x2) for f16 only, s32 (N/2) for
s8. Inline PTX needs each accumulator register spelled out, so the wrappers are generated, not
written.

  python3 tools/gen_wgmma.py > stdlib/tl/wgmma_ops.h
"""
import sys

NS = tuple(range(8, 257, 8))
# Operand dtype -> its accumulators: (PTX dtype, C++ register type, register constraint,
# accumulator elements per register).
ACCUMULATORS = {
    "f16": (("f32", "float", "f", 1), ("f16", "std::uint32_t", "r", 2)),
    "bf16": (("f32", "float", "f", 1),),
}
# 8-bit operands: C++ type -> (PTX operand type, accumulators). k32; no imm-trans (K-major only);
# the fp8 forms take imm-scale-a/b, the integer ones do not.
EIGHT_BIT = {
    "f8e4m3": ("e4m3", (("f32", "float", "f", 1),)),
    "f8e5m2": ("e5m2", (("f32", "float", "f", 1),)),
    "std::int8_t": ("s8", (("s32", "int", "r", 1),)),
}


def overload(reg_type, regs, constraint, a_param, a_name, instruction, operands, pred_index, inputs):
    """One run() overload's lines: D's registers first in the asm operands, then `inputs`;
    `operands` is the instruction's text after D's registers, `pred_index` the operand that
    holds `accumulate` (set into the predicate p, the instruction's scale-d)."""
    d_operands = ", ".join(f"%{i}" for i in range(regs))
    return [
        f"  TL_DEVICE static void run({reg_type} (&d)[{regs}], {a_param}, std::uint64_t desc_b,",
        "                             int accumulate) {",
        "#if TL_ARCH_SM90A",
        "    asm volatile(",
        '        "{\\n.reg .pred p;\\n"',
        f'        "setp.ne.b32 p, %{pred_index}, 0;\\n"',
        f'        "{instruction} "',
        f'        "{{{d_operands}}}, {operands};\\n}}\\n"',
        "        : " + ", ".join(f'"+{constraint}"(d[{i}])' for i in range(regs)),
        "        : " + inputs + ");",
        "#else",
        f"    (void)d, (void){a_name}, (void)desc_b, (void)accumulate;",
        "    __trap(); // wgmma needs sm_90a (compile with -arch=sm_90a)",
        "#endif",
        "  }",
    ]


def run(n, dtype, acc, register_a):
    """One run() overload of a 16-bit wrapper: D (+)= A * B with this accumulator. The operands
    after D's registers: desc_a (or a[0..3]), desc_b, accumulate, TransA (SS only), TransB."""
    acc_dtype, reg_type, constraint, per_register = acc
    regs = n // 2 // per_register
    if register_a:
        a_param, a_name = "const std::uint32_t (&a)[4]", "a"
        a_operand = "{" + ", ".join(f"%{regs + i}" for i in range(4)) + "}"
        b = regs + 4
        inputs = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate), "n"(TransB)'
        trans = f"%{b + 2}"
    else:
        a_param, a_name = "std::uint64_t desc_a", "desc_a"
        a_operand = f"%{regs}"
        b = regs + 1
        inputs = '"l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransA), "n"(TransB)'
        trans = f"%{b + 2}, %{b + 3}"
    return overload(reg_type, regs, constraint, a_param, a_name,
                    f"wgmma.mma_async.sync.aligned.m64n{n}k16.{acc_dtype}.{dtype}.{dtype}",
                    f"{a_operand}, %{b}, p, 1, 1, {trans}", b + 1, inputs)


def run_8bit(n, ptx_type, acc):
    """One run() overload of an 8-bit MmaSS: D (+)= A * B, both from descriptors, K-major (no
    imm-trans); the fp8 forms take imm-scale-a/b, the integer ones do not."""
    acc_dtype, reg_type, constraint, _ = acc
    regs = n // 2
    scales = ", 1, 1" if ptx_type != "s8" else ""
    return overload(reg_type, regs, constraint, "std::uint64_t desc_a", "desc_a",
                    f"wgmma.mma_async.sync.aligned.m64n{n}k32.{acc_dtype}.{ptx_type}.{ptx_type}",
                    f"%{regs}, %{regs + 1}, p{scales}", regs + 2, '"l"(desc_a), "l"(desc_b), "r"(accumulate)')


def wrapper(head, overloads):
    """A wrapper struct: `head`, its run() overloads separated by blank lines, the closing brace."""
    lines = [head]
    for i, overload_lines in enumerate(overloads):
        if i:
            lines.append("")
        lines += overload_lines
    return "\n".join(lines + ["};"])


def wrapper_8bit(n, ctype):
    ptx_type, accs = EIGHT_BIT[ctype]
    return wrapper(f"template <> struct MmaSS<{n}, {ctype}, 0, 0> {{", [run_8bit(n, ptx_type, acc) for acc in accs])


def wrapper_ss(n, dtype):
    return wrapper(f"template <int TransA, int TransB> struct MmaSS<{n}, {dtype}, TransA, TransB> {{",
                   [run(n, dtype, acc, register_a=False) for acc in ACCUMULATORS[dtype]])


def wrapper_rs(n, dtype):
    return wrapper(f"template <int TransB> struct MmaRS<{n}, {dtype}, TransB> {{",
                   [run(n, dtype, acc, register_a=True) for acc in ACCUMULATORS[dtype]])


def main():
    print("// Generated by tools/gen_wgmma.py: do not edit. The wgmma.mma_async wrappers of tl/wgmma.h")
    print("// (m64nNk16 for N = 8, 16, ..., 256; f32 += f16*f16 or bf16*bf16, f16 += f16*f16; A from")
    print("// shared memory (MmaSS) or registers (MmaRS), B from shared memory; m64nNk32 for s8 into")
    print("// s32 and e4m3/e5m2 into f32, both operands K-major from shared memory).")
    print("#pragma once\n")
    print("namespace tl {\nnamespace wgmma {\n")
    print("// TransA/TransB: 1 when the operand is MN-major in shared memory (the instruction's")
    print("// imm-trans-a/b), 0 when K-major. A register A operand is always K-major. run() takes an")
    print("// f32 accumulator as N/2 floats, an f16 one as N/4 registers of element pairs (f16x2).")
    print("template <int N, class T, int TransA, int TransB> struct MmaSS;")
    print("template <int N, class T, int TransB> struct MmaRS;\n")
    for n in NS:
        for dtype in ACCUMULATORS:
            print(wrapper_ss(n, dtype))
            print()
            print(wrapper_rs(n, dtype))
            print()
        for ctype in EIGHT_BIT:
            print(wrapper_8bit(n, ctype))
            print()
    print("} // namespace wgmma\n} // namespace tl")


if __name__ == "__main__":
    sys.exit(main())
