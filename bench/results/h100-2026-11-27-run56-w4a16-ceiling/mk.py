# experiment bundle: base GEMV build + variants of exp/*.tl as extra builds
import json, subprocess, sys, shutil, os
out = sys.argv[1]
tlc = "/work/main/build/bin/tlc"
m = json.load(open(f"{out}/manifest.json"))
base = next(b for b in m["builds"] if b["name"] == "w4a16_gemv_f16_g128")
variants = [  # (name, tl, defines)
    ("exp_step_16_512_128", "exp/gemv_step.tl", dict(block_N=16, block_K=512, threads=128)),
    ("exp_step_8_1024_128", "exp/gemv_step.tl", dict(block_N=8, block_K=1024, threads=128)),
    ("exp_step_32_256_128", "exp/gemv_step.tl", dict(block_N=32, block_K=256, threads=128)),
    ("exp_step_16_512_256", "exp/gemv_step.tl", dict(block_N=16, block_K=512, threads=256)),
    ("exp_step_32_512_256", "exp/gemv_step.tl", dict(block_N=32, block_K=512, threads=256)),
    ("exp_step_16_512_128_s3", "exp/gemv_step.tl", dict(block_N=16, block_K=512, threads=128, stages=3)),
]
cases = [c for c in m["cases"] if c["build"] == base["name"]]
bench = [b for b in m["bench"] if b["build"] == base["name"] and b["shape"]["M"] == 1]
for name, tl, d in variants:
    d = {"dtype": "f16", "group_size": "128", **{k: str(v) for k, v in d.items()}}
    args = [tlc, f"/work/main/{tl}", "--target", "sm_90a", "-o", f"{out}/{name}.cu"]
    for k, v in d.items():
        args += ["-D", f"{k}={v}"]
    subprocess.run(args, check=True)
    m["builds"].append({**base, "name": name, "source": tl, "defines": d, "cu": f"{name}.cu"})
    m["cases"] += [{**c, "name": c["name"].replace(base["name"], name), "build": name} for c in cases]
    m["bench"] += [{**b, "name": b["name"].replace(base["name"], name), "build": name} for b in bench]
json.dump(m, open(f"{out}/manifest.json", "w"), indent=1)
print(len(m["builds"]), len(m["cases"]), len(m["bench"]))
