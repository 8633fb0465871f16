"""SVG charts of the committed benchmark results, for docs/benchmarks.md.

    python3 bench/charts.py [--results bench/results] [--out docs/img]

Reads every benchmark run under bench/results (the JSON bench.py writes: a dict whose "items"
each have "impls"), keeps the latest measurement of each problem, and writes one chart per
group of kernels (GEMM, attention, MLA, row kernels) into docs/img/bench-<group>.svg: for every
problem, tlc's speed relative to each peer (the peer's time over ours: right of 1x, ours is
faster), on a log scale. Pure Python (no matplotlib): the SVG is written directly, so the charts
can be regenerated anywhere, CI included, and the same results give byte-identical files.

Which measurement represents a problem: a problem is (family, dtype, shape, causal); its latest
run wins; inside that run, tile-shape variants of one problem (builds such as fa_d64_n176 beside
fa_d64) are represented by the default build, the one with the shortest build name.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import os
import sys
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import PEERS, TITLES  # noqa: E402  (the peers and titles report.py's tables use)

# The charts: file stem, title, the families they show (in this order).
GROUPS = [
    ("gemm", "GEMM", ["gemm", "gemm_nt", "gemm_batched", "gemm_auto"]),
    ("attention", "Attention",
     ["attention", "attention_sink", "block_sparse_attention", "vertical_slash_attention", "flash_decoding"]),
    ("mla", "MLA decoding", ["mla"]),
    ("rows", "Row kernels", ["softmax", "log_softmax", "rmsnorm", "layernorm", "swiglu", "gemv"]),
]

# One colour per peer, the same in every chart.
PEER_COLOURS = {
    "cublas": "#4e79a7", "triton": "#f28e2b", "sdpa_flash": "#59a14f", "sdpa_cudnn": "#e15759",
    "torch": "#76b7b2", "sdpa": "#b07aa1", "sdpa_sink": "#b07aa1", "sdpa_masked": "#b07aa1",
    "cudnn": "#e15759",
}

# The legend's name of each peer (the tooltips keep report.py's exact title, which names the
# function called, e.g. torch.softmax).
PEER_NAMES = {
    "cublas": "cuBLAS", "triton": "Triton", "sdpa_flash": "SDPA flash", "sdpa_cudnn": "SDPA cuDNN",
    "torch": "PyTorch", "sdpa": "SDPA", "sdpa_sink": "SDPA", "sdpa_masked": "SDPA", "cudnn": "cuDNN",
}

LABEL_PX = 7       # average width of a character of the 12-px labels
ROW = 13           # pixels per bar
AXIS_PX = 520      # width of the log axis


def is_run(data) -> bool:
    """Whether a JSON document is a benchmark run bench.py wrote."""
    return (isinstance(data, dict) and isinstance(data.get("items"), list) and data["items"]
            and all(isinstance(i, dict) and isinstance(i.get("impls"), dict) for i in data["items"]))


def load_runs(results: str):
    """(path, run) for every benchmark run under `results`, in path order."""
    runs = []
    for path in sorted(glob.glob(os.path.join(results, "**", "*.json"), recursive=True)):
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if is_run(data):
            runs.append((os.path.relpath(path, results), data))
    return runs


def problem_key(item):
    shape = tuple(sorted((item.get("shape") or {}).items()))
    return (item.get("family"), item.get("dtype"), shape, bool(item.get("causal")))


def latest_items(runs):
    """The representative measurement of each problem: {key: (item, path, date)}. A peer that
    the latest run did not measure (a run with --skip-triton, say) keeps its ratio from the
    latest run that measured it beside ours: the item then carries "peer_fallback", {peer key:
    (ratio, path, date)}, each ratio still ours and that peer timed in one process."""
    candidates = {}
    for path, run in runs:
        date = run.get("date", "")
        for item in run["items"]:
            rank = (date, -len(item.get("build", item.get("name", ""))), path)
            candidates.setdefault(problem_key(item), []).append((rank, item, path, date))
    chosen = {}
    for key, cands in candidates.items():
        cands.sort(key=lambda c: c[0], reverse=True)
        _, item, path, date = cands[0]
        measured = {k for k, _, _ in ratios(item)}
        ours = item["impls"].get("ours", {})
        fallback = {}
        # A kernel that failed in the latest run shows nothing, not an older run's figures.
        for _, older, older_path, older_date in (cands[1:] if ours.get("status") == "ok" else []):
            for k, _, r in ratios(older):
                if k not in measured and k not in fallback:
                    fallback[k] = (r, older_path, older_date)
        if fallback:
            item = dict(item, peer_fallback=fallback)
        chosen[key] = (item, path, date)
    return chosen


def ratios(item):
    """[(peer key, peer title, peer ms / our ms)] for the peers measured beside ours, from the
    rounds by turns where the item has them (and the peers of item["peer_fallback"], from
    earlier runs)."""
    impls = item["impls"]
    ours = impls.get("ours", {})
    fallback = item.get("peer_fallback", {})
    # Timed by turns (bench.py's interleave, from run 228 on): the ratios of the same rounds.
    turns = item.get("interleaved", {}).get("ms", {})
    out = []
    for key, title in PEERS.get(item.get("family"), []):
        peer = impls.get(key, {})
        if "ours" in turns and key in turns:
            out.append((key, title, turns[key] / turns["ours"]))
        elif ours.get("status") == "ok" and ours.get("ms") and peer.get("status") == "ok" and peer.get("ms"):
            out.append((key, title, peer["ms"] / ours["ms"]))
        elif key in fallback:
            out.append((key, title, fallback[key][0]))
    return out


def fmt_ratio(r: float) -> str:
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x"


def chart(stem, title, families, chosen):
    """The SVG text of one chart, or None when no problem of `families` has a measurement."""
    rows = []  # (family, label, [(peer key, title, ratio)], note)
    sources = set()
    for family in families:
        items = sorted((v for k, v in chosen.items() if k[0] == family), key=lambda v: v[0]["name"])
        for item, path, date in items:
            rs = ratios(item)
            if not rs:
                continue
            note = ""
            floor = item["impls"]["ours"].get("floor_pct")
            if family == "mla" and floor:
                note = f" ({floor:.0f}% of floor)"
            rows.append((family, item["name"] + note, rs))
            sources.add((date[:10], path))
            for _, older_path, older_date in item.get("peer_fallback", {}).values():
                sources.add((older_date[:10], older_path))
    if not rows:
        return None
    all_ratios = [r for _, _, rs in rows for _, _, r in rs]
    lo = 2.0 ** math.floor(math.log2(min(min(all_ratios), 1.0)))
    hi = 2.0 ** math.ceil(math.log2(max(max(all_ratios), 1.0)))
    if lo == hi:
        hi = lo * 2
    span = math.log2(hi) - math.log2(lo)
    label_w = max(len(label) for _, label, _ in rows) * LABEL_PX + 20
    x0 = 16 + label_w

    def xpos(r):
        return x0 + round((math.log2(r) - math.log2(lo)) / span * AXIS_PX)

    out = []
    y = 24
    out.append(f'<text x="16" y="{y}" font-size="16" font-weight="bold">{escape(title)}: tlc vs peers</text>')
    y += 18
    out.append(f'<text x="16" y="{y}" font-size="11" fill="#333">peer time / tlc time per problem '
               '(right of 1x: tlc faster; log scale); the latest run of each problem</text>')
    y += 22
    top = y
    body = []
    peers_seen = []
    current = None
    text_right = 0
    for family, label, rs in rows:
        if family != current:
            current = family
            # The table titles name their units; a chart of ratios has none.
            heading = TITLES.get(family, family).split(" (")[0]
            text_right = max(text_right, 16 + len(heading) * 8)
            body.append(f'<text x="16" y="{y + 12}" font-size="12" font-weight="bold">'
                        f'{escape(heading)}</text>')
            y += 18
        body.append(f'<text x="{x0 - 8}" y="{y + 10}" font-size="11" text-anchor="end">{escape(label)}</text>')
        for key, peer_title, r in rs:
            legend = (PEER_COLOURS.get(key, "#9c9c9c"), PEER_NAMES.get(key, peer_title))
            if legend not in peers_seen:
                peers_seen.append(legend)
            a, b = sorted((xpos(1.0), xpos(r)))
            colour = PEER_COLOURS.get(key, "#9c9c9c")
            body.append(f'<g><title>{escape(label)} vs {escape(peer_title)}: {fmt_ratio(r)}</title>'
                        f'<rect x="{a}" y="{y + 1}" width="{max(b - a, 1)}" height="{ROW - 3}" '
                        f'fill="{colour}"/>'
                        f'<text x="{max(xpos(r), xpos(1.0)) + 4}" y="{y + ROW - 3}" font-size="9">'
                        f'{fmt_ratio(r)}</text></g>')
            y += ROW
        y += 5
    bottom = y
    # Grid: every power of two, 1x heavier.
    grid = []
    r = lo
    while r <= hi * 1.0001:
        x = xpos(r)
        grid.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="{"#333" if r == 1 else "#ddd"}" '
                    f'stroke-width="{1.5 if r == 1 else 1}"/>')
        text = f"{r:g}x" if r >= 1 else f"1/{1 / r:g}x"
        grid.append(f'<text x="{x}" y="{bottom + 14}" font-size="10" text-anchor="middle" fill="#555">'
                    f'{text}</text>')
        r *= 2
    out.extend(grid)
    out.extend(body)
    y = bottom + 36
    x = 16
    for colour, name in peers_seen:
        out.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="{x + 16}" y="{y}" font-size="11">{escape(name)}</text>')
        x += 16 + len(name) * 7 + 18
    y += 20
    out.append(f'<text x="16" y="{y}" font-size="10" fill="#555">from bench/results:</text>')
    for date, path in sorted(sources):
        y += 13
        out.append(f'<text x="28" y="{y}" font-size="10" fill="#555">{escape(date + "  " + path)}</text>')
        text_right = max(text_right, 28 + (len(path) + 12) * 6)
    width = max(x0 + AXIS_PX + 70, x, text_right)
    height = y + 12
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">\n'
            f'<title>{escape(title)}: tlc vs peers</title>\n'
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>\n'
            + "\n".join(out) + "\n</svg>\n")


def main(argv=None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default=os.path.join(here, "results"))
    parser.add_argument("--out", default=os.path.join(here, "..", "docs", "img"))
    args = parser.parse_args(argv)
    chosen = latest_items(load_runs(args.results))
    os.makedirs(args.out, exist_ok=True)
    written = 0
    for stem, title, families in GROUPS:
        svg = chart(stem, title, families, chosen)
        if svg is None:
            print(f"charts: no measurements for {title}; bench-{stem}.svg not written")
            continue
        path = os.path.join(args.out, f"bench-{stem}.svg")
        with open(path, "w", encoding="utf-8") as f:
            f.write(svg)
        written += 1
        print(f"charts: wrote {os.path.relpath(path)}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
