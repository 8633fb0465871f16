"""Checks the shape of `tlc recommend --format json`: every field the issue asks for, with the
right types, ranked fastest first, and configurations drawn from the searched values.
Usage: check_json.py FILE [--top N] [--timing]"""
import json
import sys

NUMBER = (int, float)


def fail(msg):
    sys.exit(f"check_json: {msg}")


def main():
    path = sys.argv[1]
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 10
    d = json.load(open(path))
    for key, kind in [("kernel", str), ("file", str), ("target", dict), ("shapes", dict),
                      ("assumed_shapes", list), ("pinned", list), ("untuned_auto", list), ("knobs", list),
                      ("candidates", int), ("legal", int), ("compilations", int),
                      ("quick_rejects", int), ("ranked", list)]:
        if not isinstance(d.get(key), kind):
            fail(f"top-level '{key}' missing or not {kind}")
    if not 0 < d["legal"] <= d["candidates"]:
        fail("legal must be in (0, candidates]")
    # Wall-clock time only with --timing: the JSON is otherwise reproducible.
    # (No bound on the time itself: under `ctest -j` on a loaded machine it says nothing.)
    if ("recommend_seconds" in d) != ("--timing" in sys.argv):
        fail("recommend_seconds present without --timing, or missing with it")
    if "recommend_seconds" in d and not isinstance(d["recommend_seconds"], NUMBER):
        fail("recommend_seconds is not a number")
    values = {k["name"]: k["values"] for k in d["knobs"]}
    ranked = d["ranked"]
    if len(ranked) != min(top, d["legal"]):
        fail(f"expected {min(top, d['legal'])} ranked candidates, got {len(ranked)}")
    previous = 0.0
    for i, r in enumerate(ranked):
        if r["rank"] != i + 1:
            fail(f"rank {r['rank']} at position {i}")
        if set(r["config"]) != set(values):
            fail(f"configuration {r['config']} does not set exactly the knobs {sorted(values)}")
        for k, v in r["config"].items():
            if str(v) not in values[k]:
                fail(f"{k}={v} is not among the searched values {values[k]}")
        if r["predicted_ms"] < previous:
            fail("not sorted by predicted time")
        previous = r["predicted_ms"]
        for key in ["predicted_ms", "arithmetic_intensity", "blocks", "waves", "last_wave_fill",
                    "shared_memory_bytes", "registers_per_thread"]:
            if not isinstance(r.get(key), NUMBER) or r[key] < 0:
                fail(f"'{key}' missing or negative in rank {i + 1}")
        for level in ["hbm", "l2", "shared", "registers"]:
            if not isinstance(r["bytes"].get(level), NUMBER):
                fail(f"bytes.{level} missing")
        for unit in ["tensor_core", "cuda_core", "sfu"]:
            if not isinstance(r["ops"].get(unit), NUMBER):
                fail(f"ops.{unit} missing")
        if r["bound"]["kind"] not in ("memory", "compute", "latency"):
            fail(f"bound.kind {r['bound']['kind']}")
        if r["bound"]["unit"] not in r["times_ms"]:
            fail(f"bound.unit {r['bound']['unit']} is not one of the terms")
        bound_ms = r["times_ms"][r["bound"]["unit"]]
        if not bound_ms <= r["predicted_ms"]:
            fail("the predicted time is below its bounding term")
        occ = r["occupancy"]
        if not (occ["blocks_per_sm"] >= 1 and 0 < occ["fraction"] <= 1 and occ["limited_by"]):
            fail(f"occupancy {occ}")
    print(f"ok: {d['legal']} legal of {d['candidates']}, first {ranked[0]['config']}")


main()
