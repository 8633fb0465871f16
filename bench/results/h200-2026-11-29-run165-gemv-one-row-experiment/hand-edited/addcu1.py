"""Add hand-edited .cu builds to a GPU bundle: each copies a base build's entry, cases and bench
items (interleaved after the base). usage: addcu.py BUNDLE NAME BASE FILE.cu [NAME BASE FILE ...]"""
import json, sys, copy, shutil
bundle, specs = sys.argv[1], sys.argv[2:]
m = json.load(open(f"{bundle}/manifest.json"))
for i in range(0, len(specs), 3):
    name, base, cu = specs[i:i + 3]
    b = next(x for x in m["builds"] if x["name"] == base)
    nb = copy.deepcopy(b)
    nb["name"], nb["cu"] = name, name + ".cu"
    shutil.copy(cu, f"{bundle}/{name}.cu")
    m["builds"].append(nb)
    m["cases"] += [dict(c, name=c["name"].replace(base, name, 1), build=name) for c in m["cases"] if c["build"] == base and c["shape"]["M"] == 1]
    bench = []
    for it in m["bench"]:
        bench.append(it)
        if it["build"] == base and it["shape"]["M"] == 1:
            bench.append(dict(it, name=it["name"].replace(base, name, 1) if base in it["name"] else it["name"] + "__" + name, build=name))
    m["bench"] = bench
json.dump(m, open(f"{bundle}/manifest.json", "w"), indent=1)
