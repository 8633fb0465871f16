# Adds hand-edited GEMM variants to a bundle made with --only '^gemm_(f16|bf16)$'.
import json, shutil, sys, os
b = sys.argv[1]
m = json.load(open(os.path.join(b, "manifest.json")))
variants = sys.argv[2:]  # name=file.cu:dtype
shapes_bench = [(8192, 1024, 8192), (8192, 8192, 8192), (8192, 28672, 8192), (8192, 8192, 28672), (4096, 4096, 4096), (2048, 2048, 2048)]
shapes_check = [(4096, 4096, 4096, "float64"), (1000, 1000, 1000, "float64"), (776, 520, 1032, "float64"), (8, 8, 8, "float64"), (8192, 8192, 8192, "float32")]
base_items = {it["build"]: it for it in m["bench"]}
m["bench"] = [it for it in m["bench"] if (it["shape"]["M"], it["shape"]["N"], it["shape"]["K"]) in shapes_bench]
for v in variants:
    name, rest = v.split("=")
    cu, dtype = rest.split(":")
    base = next(x for x in m["builds"] if x["name"] == "gemm_" + dtype)
    nb = dict(base, name=name, cu=os.path.basename(cu), defines=dict(base["defines"], variant=name))
    m["builds"].append(nb)
    for M, N, K, ref in shapes_check:
        m["cases"].append({"name": "%s_%dx%dx%d" % (name, M, N, K), "build": name, "shape": {"M": M, "N": N, "K": K},
                           "reference": ref, "tolerance": 0.01})
    for M, N, K in shapes_bench:
        m["bench"].append({"name": "%s_%dx%dx%d" % (name, M, N, K), "build": name, "shape": {"M": M, "N": N, "K": K}, "note": ""})
json.dump(m, open(os.path.join(b, "manifest.json"), "w"), indent=1)
print(len(m["builds"]), "builds", len(m["cases"]), "cases", len(m["bench"]), "bench items")
