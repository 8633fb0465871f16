#!/usr/bin/env python3
"""Differential test of the tile-uniform comparisons (compiler/lower/TileConditions.cpp).

Generates random kernels whose parallel loop selects and branches on random conditions (linear
and non-linear comparisons of the loop's variables, block indices, shape symbols, a scalar and
constants, under &&, || and !, some through lets), runs each on the CPU emulator (`tlc run
--emulate`, sm_80 and gfx90a lowerings) at shapes that are and are not tile multiples, and
compares every output element with the condition evaluated here in Python. A wrong corner, a
wrong direction or a wrong fold in the versioned loop gives a wrong element.

  tile_conditions.py --tlc build/bin/tlc --work DIR [--count N] [--seed S]

Exit status 0 pass, 1 fail, 77 skip (no CUDA headers for the emulator).
"""
import argparse
import os
import random
import struct
import subprocess
import sys

TILES = [(32, 64, 64), (64, 64, 128), (64, 32, 64), (16, 128, 64)]  # block_M, block_N, threads: >= 32 elements a thread


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.lets = []  # (name, source)

    def term(self):
        r = self.rng
        kind = r.random()
        if kind < 0.55:
            var = r.choice(["i", "j", "row", "col"])
        elif kind < 0.8:
            var = r.choice(["bx", "by", "M", "N", "s"])
        else:
            return str(r.randint(-200, 300))
        c = r.choice([1, 1, 1, -1, 2, -2, 3])
        return var if c == 1 else f"{c} * {var}" if c > 0 else f"-{-c} * {var}" if c != -1 else f"-{var}"

    def linear(self):
        n = self.rng.randint(1, 3)
        e = self.term()
        for _ in range(n - 1):
            e += self.rng.choice([" + ", " - "]) + self.term()
        return e

    def comparison(self):
        r = self.rng
        if r.random() < 0.1:
            lhs = r.choice(["i * j", "i * i", "(i + j) * j"])  # not linear: stays per element
        else:
            lhs = self.linear()
        op = r.choice(["<", "<=", ">", ">=", "<", "<=", "==", "!="])
        return f"{lhs} {op} {self.linear()}"

    def condition(self, depth=0):
        r = self.rng
        x = r.random()
        if depth >= 2 or x < 0.45:
            c = self.comparison()
            if r.random() < 0.2:
                name = f"t{len(self.lets)}"
                self.lets.append((name, c))
                return name
            return c
        if x < 0.6:
            return f"!({self.condition(depth + 1)})"
        op = r.choice(["&&", "||"])
        return f"({self.condition(depth + 1)}) {op} ({self.condition(depth + 1)})"


def kernel_source(rng):
    bm, bn, threads = rng.choice(TILES)
    g = Gen(rng)
    c1, c2, c3 = g.condition(), g.condition(), g.condition()
    lets = "".join(f"    let {n} = {c};\n" for n, c in g.lets)
    src = f"""kernel fz(X: f32[M, N], Y: out f32[M, N], s: i32)
  grid(ceildiv(N, {bn}), ceildiv(M, {bm})) threads({threads}) as (bx, by)
{{
  acc = fragment f32[{bm}, {bn}];
  copy(X[by * {bm}, bx * {bn}], acc);
  for i, j in parallel({bm}, {bn}) {{
    let row = by * {bm} + i;
    let col = bx * {bn} + j;
{lets}    acc[i, j] = select({c1}, acc[i, j], -4.0);
    if {c2} {{
      acc[i, j] = acc[i, j] + 8.0;
    }} else if {c3} {{
      acc[i, j] = acc[i, j] * 2.0;
    }}
  }}
  copy(acc, Y[by * {bm}, bx * {bn}]);
}}
"""
    return src, (bm, bn), g.lets, (c1, c2, c3)


def to_python(cond):
    return cond.replace("&&", " and ").replace("||", " or ").replace("!(", " not (").strip()


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def expected(x, m, n, tile, s, lets, conds):
    bm, bn = tile
    out = []
    c1, c2, c3 = (compile(to_python(c), "cond", "eval") for c in conds)
    let_code = [(name, compile(to_python(c), name, "eval")) for name, c in lets]
    for r in range(m):
        for c in range(n):
            env = {"i": r % bm, "j": c % bn, "bx": c // bn, "by": r // bm, "M": m, "N": n, "s": s,
                   "row": r, "col": c}
            for name, code in let_code:
                env[name] = eval(code, {}, env)
            v = x[r * n + c]
            v = v if eval(c1, {}, env) else -4.0
            if eval(c2, {}, env):
                v = f32(v + 8.0)
            elif eval(c3, {}, env):
                v = f32(v * 2.0)
            out.append(v)
    return out


def read_f32(path):
    data = open(path, "rb").read()
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tlc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--count", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--targets", default="sm_80,gfx90a")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rng = random.Random(args.seed)
    failures = 0
    checked = 0
    for k in range(args.count):
        src, tile, lets, conds = kernel_source(rng)
        path = os.path.join(args.work, f"fz{k}.tl")
        open(path, "w").write(src)
        target = args.targets.split(",")[k % len(args.targets.split(","))]
        bm, bn = tile
        shapes = [(bm * 2, bn * 3), (bm * 2 + 7, bn * 2 - 5), (bm - 3, bn + 1)]
        for si, (m, n) in enumerate(shapes):
            s = rng.randint(-50, 400)
            out = os.path.join(args.work, f"fz{k}_{si}")
            cmd = [args.tlc, "run", "--emulate", path, "--target", target, "--shape", f"M={m}", "--shape", f"N={n}",
                   "--arg", f"s={s}", "--seed", str(k * 10 + si), "--output-dir", out,
                   "--build-dir", os.path.join(args.work, f"fz{k}_build")]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if p.returncode != 0:
                if "cuda_fp16.h" in p.stderr:
                    print("skip: the emulator needs the CUDA headers")
                    return 77
                print(f"FAIL {path} ({target}) M={m} N={n} s={s}: exit {p.returncode}\n{p.stderr[-2000:]}")
                failures += 1
                continue
            x = read_f32(os.path.join(out, "X.bin"))
            y = read_f32(os.path.join(out, "Y.bin"))
            want = expected(x, m, n, tile, s, lets, conds)
            bad = [e for e in range(m * n) if not (y[e] == want[e])]
            checked += m * n
            if bad:
                e = bad[0]
                print(f"FAIL {path} ({target}) M={m} N={n} s={s}: {len(bad)} of {m * n} elements differ, "
                      f"first at ({e // n}, {e % n}): got {y[e]}, want {want[e]}")
                failures += 1
    print(f"tile_conditions: {args.count} kernels, {checked} elements checked, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
