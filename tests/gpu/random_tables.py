"""Random configurations for the GPU checks: `make_bundle.sh --random N --seed S`.

The fixed tables (cases.py) check the knobs the samples and the benchmarks use. These draw
knobs and shapes nobody chose: tile widths off the powers of two (48, 80, 96, 176 columns),
one to five stages, one to three warpgroups, persistent or not, f16 and bf16, shapes that are
tile multiples, ragged, or smaller than one tile. This is the GPU counterpart of
tests/emulator/run_samples.py --random, for the lowerings the emulator does not run: on
sm_90a the wgmma, bulk-copy and mbarrier paths.

A draw tlc rejects with a located error (a tile the warps cannot split, too much shared
memory) is drawn again and counted; any other tlc failure (a crash, an internal error) stops
the draw: that is a finding. Each accepted configuration gets three shapes.
"""
import random
import re
import subprocess


def _pick(rng, choices: dict) -> dict:
    """{name: option} for each (name, options) of `choices`, drawn in order."""
    return {name: str(rng.choice(options)) for name, options in choices.items()}


def _gemm_shapes(rng, batch: bool = False) -> list:
    """A shape whose N and K are multiples of 8 (the bulk-copy path), a ragged one, a tiny one."""
    shapes = [dict(M=rng.randint(1, 700), N=8 * rng.randint(1, 90), K=8 * rng.randint(1, 90)),
              dict(M=rng.randint(1, 700), N=rng.randint(1, 700), K=rng.randint(1, 700)),
              dict(M=rng.randint(1, 20), N=rng.randint(1, 20), K=rng.randint(1, 20))]
    if batch:
        for s in shapes:
            s["batch"] = rng.randint(1, 3)
    return shapes


GEMM_TILES = {"block_M": [64, 128, 192, 256], "block_N": [16, 24, 48, 64, 80, 96, 128, 144, 176, 192, 256],
              "block_K": [16, 32, 64, 128], "threads": [128, 256, 384, 512], "stages": [1, 2, 3, 4, 5],
              "dtype": ["f16", "bf16"], "persist": ["false", "true"]}


def _gemm(rng):
    knobs = _pick(rng, dict(GEMM_TILES, policy=["square", "full_row", "full_col"], panel=[1, 4, 10]))
    shapes = _gemm_shapes(rng)
    # One draw in four accumulates in f16 (f16 inputs; K <= 700, within the tolerance that
    # cases.random_tables gives f16 accumulation) or writes f32.
    extra = rng.choice(["", "", "accum", "out"])
    if extra == "accum" and knobs["dtype"] == "f16":
        knobs["accum"] = "f16"
        return "gemm", "gemm_acc16", knobs, shapes
    if extra == "out":
        knobs["out_dtype"] = "f32"
    return "gemm", "gemm", knobs, shapes


def _gemm_nt(rng):
    knobs = _pick(rng, dict(GEMM_TILES, policy=["square", "full_row", "full_col"]))
    return "gemm_nt", "gemm_nt", knobs, _gemm_shapes(rng)


def _gemm_batched(rng):
    return "gemm_batched", "gemm_batched", _pick(rng, GEMM_TILES), _gemm_shapes(rng, batch=True)


def _attention(rng):
    knobs = _pick(rng, {"dim": [64, 96, 128], "causal": ["false", "true"], "block_M": [64, 128, 192],
                        "block_N": [32, 48, 64, 80, 96, 128], "stages": [1, 2, 3], "threads": [128, 256, 384],
                        "dtype": ["f16", "bf16"], "persist": ["false", "true"],
                        "ping_pong": ["false", "false", "true"]})
    dim = int(knobs["dim"])
    shapes = [dict(batch=rng.randint(1, 2), seq_len=rng.randint(1, 400), heads=rng.randint(1, 3), dim=dim)
              for _ in range(2)] + [dict(batch=1, seq_len=rng.randint(1, 9), heads=1, dim=dim)]
    return "attention", "fa", knobs, shapes


def _attention_sink(rng):
    knobs = _pick(rng, {"dim": [64, 128], "causal": ["false", "true"], "window": [0, 0, 16, 100],
                        "block_M": [64, 128], "block_N": [32, 64, 128], "stages": [1, 2, 3],
                        "threads": [128, 256], "dtype": ["f16", "bf16"]})
    dim = int(knobs["dim"])
    shapes = []
    for _ in range(3):
        kv = rng.choice([1, 2, 4])
        shapes.append(dict(batch=rng.randint(1, 2), heads=kv * rng.choice([1, 2, 4]), kv_heads=kv,
                           seq_len=rng.randint(1, 400), dim=dim))
    return "attention_sink", "sink", knobs, shapes


def _mla(rng):
    knobs = _pick(rng, {"block_H": [16, 32, 64], "block_N": [16, 32, 48, 64], "stages": [1, 2, 3],
                        "threads": [128, 256], "dim": [64, 128, 256, 512], "pe_dim": [16, 32, 64],
                        "dtype": ["f16", "bf16"]})
    shapes = [dict(batch=rng.randint(1, 3), heads=rng.choice([8, 16, 40, 64, 128]), seqlen_kv=rng.randint(1, 600),
                   kv_heads=1, dim=int(knobs["dim"]), pe_dim=int(knobs["pe_dim"])) for _ in range(3)]
    return "mla", "mla", knobs, shapes


def _conv2d(rng):
    k, stride, pad = rng.choice([(3, 1, 1), (3, 2, 1), (1, 1, 0), (1, 2, 0), (3, 1, 0), (7, 2, 3)])
    knobs = {"kh": str(k), "kw": str(k), "stride": str(stride), "pad": str(pad)}
    # fold: taps and channels in one K at any C (true), or per tap at any C (false); unpinned,
    # the sample folds where C % 8 != 0 or C <= 16.
    knobs.update(_pick(rng, {"block_M": [64, 128], "block_N": [32, 64, 96, 128], "block_K": [16, 32, 64, 128],
                             "stages": [1, 2, 3, 4], "threads": [128, 256], "dtype": ["f16", "bf16"],
                             "persist": ["false", "true"], "fold": ["false", "true", ""]}))
    knobs = {name: v for name, v in knobs.items() if v != ""}
    shapes = [dict(N=rng.randint(1, 3), H=rng.randint(3, 20), W=rng.randint(3, 20), C=rng.randint(1, 80),
                   F=rng.randint(1, 80)) for _ in range(2)]
    shapes.append(dict(N=2, H=rng.randint(3, 12), W=rng.randint(3, 12), C=8 * rng.randint(1, 12),
                       F=8 * rng.randint(1, 12)))
    return "conv2d", "conv", knobs, shapes


def _rows(rng):
    family = rng.choice(["softmax", "log_softmax", "rmsnorm", "layernorm"])
    knobs = _pick(rng, {"block_N": [256, 512, 1024, 2048, 4096], "threads": [32, 64, 128, 256],
                        "dtype": ["f16", "bf16"]})
    if family == "rmsnorm":
        knobs["eps"] = "1e-6"
    shapes = [dict(M=rng.randint(1, 9), N=rng.randint(1, 5000)) for _ in range(2)] + [dict(M=3, N=rng.randint(1, 40))]
    return family, family, knobs, shapes


def _w4a16_gemv(rng):
    family = rng.choice(["dequant_gemv_w4a16_tc", "dequant_gemv_w4a16_tcs"])
    group = rng.choice([32, 64, 128])
    knobs = {"group_size": str(group)}
    knobs.update(_pick(rng, {"threads": [64, 128, 256], "block_N": [16, 32, 64], "block_M": [8, 16],
                             "block_K": [g for g in (128, 256, 512, 1024) if g >= group], "dtype": ["f16", "bf16"]}))
    if family.endswith("tcs"):
        knobs["stages"] = str(rng.randint(1, 4))
    shapes = [dict(M=rng.choice([1, 1, 3, 16, 17]), N=rng.randint(1, 3000), K=group * rng.randint(1, 40))
              for _ in range(3)]
    return family, "w4a16" if family.endswith("tc") else "w4a16s", knobs, shapes


def _block_sparse(rng):
    knobs = _pick(rng, {"dim": [64, 128], "block_M": [64, 128], "block_N": [32, 64, 128], "stages": [1, 2, 3],
                        "threads": [128, 256], "dtype": ["f16", "bf16"]})
    shapes = [dict(batch=rng.randint(1, 2), seq_len=rng.randint(1, 700), heads=rng.randint(1, 3),
                   dim=int(knobs["dim"])) for _ in range(3)]
    return "block_sparse_attention", "sparse", knobs, shapes


def _flash_decoding(rng):
    knobs = _pick(rng, {"num_splits": [1, 2, 3, 5, 8, 16], "fill_blocks": [1, 4, 16, 264],
                        "block_H": [16, 32, 64], "block_N": [32, 64, 128], "combine_rows": [1, 3, 8, 16],
                        "stages": [1, 2, 3, 4], "dim": [64, 128], "dtype": ["f16", "bf16"]})
    # full_row gemms: at most one warp per 16 rows (more were rejected: 441 of 521 draws, run 222).
    knobs["threads"] = str(32 * rng.choice([w for w in (1, 2, 4, 8) if 16 * w <= int(knobs["block_H"])]))
    shapes = []
    for _ in range(3):
        kv = rng.choice([1, 2, 4])
        # 40 query heads per KV head: several blocks of block_H rows per KV head.
        shapes.append(dict(batch=rng.randint(1, 3), heads=kv * rng.choice([1, 4, 8, 16, 40]), kv_heads=kv,
                           seqlen=rng.randint(1, 3000), dim=int(knobs["dim"])))
    return "flash_decoding", "decode", knobs, shapes


def _fused_moe(rng):
    knobs = _pick(rng, {"topk": [1, 2, 4], "mul_routed_weight": ["false", "true"], "block_M": [16, 64, 128],
                        "block_N": [64, 128, 256], "block_K": [32, 64, 128], "stages": [2, 3, 4],
                        "threads": [128, 256], "dtype": ["f16", "bf16"]})
    shapes = [dict(T=rng.randint(1, 300), K=rng.choice([8 * rng.randint(1, 64), rng.randint(1, 300)]),
                   E=rng.choice([4, 8, 16]), N=rng.randint(1, 400)) for _ in range(3)]
    return "fused_moe", "moe", knobs, shapes


def _gemm_fp8(rng):
    knobs = _pick(rng, {"dtype": ["f8e4m3", "f8e5m2"], "out_dtype": ["bf16", "f16"], "block_M": [64, 128],
                        "block_N": [64, 128, 256], "block_K": [64, 128], "stages": [2, 3, 4], "threads": [128, 256]})
    shapes = [dict(M=rng.randint(1, 600), N=16 * rng.randint(1, 40), K=16 * rng.randint(1, 40)),
              dict(M=rng.randint(1, 600), N=rng.randint(1, 600), K=rng.randint(1, 600)),
              dict(M=rng.randint(1, 20), N=rng.randint(1, 20), K=rng.randint(1, 40))]
    return "gemm_fp8", "fp8", knobs, shapes


def _w4a16_gemm(rng):
    group = rng.choice([32, 64, 128])
    knobs = {"group_size": str(group)}
    knobs.update(_pick(rng, {"block_M": [16, 64, 128], "block_N": [64, 128, 256],
                             "block_K": [b for b in (64, 128, 256) if b >= group], "stages": [1, 2, 3],
                             "threads": [128, 256], "dtype": ["f16", "bf16"]}))
    shapes = [dict(M=rng.randint(1, 600), N=rng.randint(1, 600), K=group * rng.randint(1, 12)) for _ in range(3)]
    return "dequant_w4a16", "w4a16g", knobs, shapes


def _attention_bwd(rng):
    knobs = _pick(rng, {"dim": [64, 128], "causal": ["false", "true"], "dtype": ["f16", "bf16"]})
    knobs.update({f"flash_attention_bwd.{k}": v for k, v in _pick(
        rng, {"block_M": [32, 64, 128], "block_N": [64, 128], "stages": [1, 2, 3], "threads": [128, 256]}).items()})
    shapes = [dict(batch=rng.randint(1, 2), seq_len=rng.randint(1, 600), heads=rng.randint(1, 3),
                   dim=int(knobs["dim"])) for _ in range(3)]
    return "attention_bwd", "bwd", knobs, shapes


def _gated_delta(rng):
    d = rng.choice([64, 128])
    knobs = {"dk": str(d), "dv": str(d), "dtype": rng.choice(["f16", "bf16"]),
             "gated_delta_output.block_V": str(rng.choice([16, 32, 64])),
             "gated_delta_output.stages": str(rng.choice([1, 2]))}
    shapes = [dict(batch=rng.randint(1, 2), seq_len=rng.randint(1, 700), heads=rng.randint(1, 3), dk=d, dv=d)
              for _ in range(3)]
    return "gated_delta", "gdn", knobs, shapes


def _gemm_transposed(rng):
    family = rng.choice(["gemm_tn", "gemm_tt"])
    knobs = _pick(rng, {k: v for k, v in GEMM_TILES.items() if k != "persist"})
    knobs["policy"] = rng.choice(["square", "full_row", "full_col"])
    return family, family, knobs, _gemm_shapes(rng)


def _masked_gemm(rng):
    knobs = _pick(rng, {"block_M": [64, 128], "block_N": [32, 64, 128], "block_K": [32, 64], "stages": [1, 2, 3, 4],
                        "threads": [128, 256], "dtype": ["f16", "bf16"]})
    return "masked_gemm", "masked", knobs, _gemm_shapes(rng)


def _vertical_slash(rng):
    knobs = _pick(rng, {"block_M": [64, 128], "block_N": [32, 64, 128], "stages": [1, 2, 3], "threads": [128, 256],
                        "dim": [64, 128], "dtype": ["f16", "bf16"]})
    # One slash diagonal takes ceil(block_M / block_N) blocks of a query block's table (GPU run
    # 173 drew a table one block wide for 128-row query blocks of 32-key blocks).
    per_slash = -(-int(knobs["block_M"]) // int(knobs["block_N"]))
    shapes = [dict(batch=rng.randint(1, 2), seq_len=rng.randint(1, 1500), heads=rng.randint(1, 3),
                   dim=int(knobs["dim"]), nnz_s=rng.randint(per_slash, 100), nnz_v=rng.randint(1, 200))
              for _ in range(3)]
    return "vertical_slash_attention", "vs", knobs, shapes


def _memory_bound(rng):
    if rng.random() < 0.5:
        knobs = _pick(rng, {"block_M": [1, 2, 4, 8, 16], "block_K": [128, 256, 512, 1024, 2048], "stages": [1, 2, 3, 4],
                            "threads": [32, 64, 128, 256], "dtype": ["f16", "bf16"]})
        return "gemv", "gemv", knobs, [dict(M=rng.randint(1, 3000), K=rng.randint(1, 5000)) for _ in range(3)]
    knobs = _pick(rng, {"block_M": [1, 4, 16, 32], "block_N": [64, 128, 256, 512], "threads": [64, 128, 256],
                        "dtype": ["f16", "bf16"]})
    return "swiglu", "swiglu", knobs, [dict(M=rng.randint(1, 300), N=rng.randint(1, 3000)) for _ in range(3)]


def _w4a16_other(rng):
    if rng.random() < 0.5:
        group = rng.choice([32, 64, 128])
        knobs = {"group_size": str(group), "tscales": rng.choice(["true", "false"])}
        knobs.update(_pick(rng, {"block_M": [64, 128, 256], "block_N": [64, 128], "block_K": [32, 64],
                                 "stages": [2, 3, 4], "threads": [128, 256], "dtype": ["f16", "bf16"]}))
        family, stem = "w4a16_wreg", "w4a16r"
    else:
        group = rng.choice([16, 32])
        knobs = {"group_size": str(group)}
        knobs.update(_pick(rng, {"block_M": [64, 128], "block_N": [64, 128], "block_K": [64, 128], "stages": [1, 2, 3],
                                 "threads": [128, 256], "dtype": ["f16", "bf16"]}))
        family, stem = "dequant_fp4_gemm", "fp4"
    shapes = [dict(M=rng.randint(1, 600), N=rng.randint(1, 600), K=max(group, 32) * rng.randint(1, 12)) for _ in range(3)]
    return family, stem, knobs, shapes


TEMPLATES = {"gemm": _gemm, "gemm_nt": _gemm_nt, "gemm_batched": _gemm_batched, "attention": _attention,
             "attention_sink": _attention_sink, "mla": _mla, "conv2d": _conv2d, "rows": _rows,
             "w4a16_gemv": _w4a16_gemv, "block_sparse_attention": _block_sparse, "flash_decoding": _flash_decoding,
             "fused_moe": _fused_moe, "gemm_fp8": _gemm_fp8, "w4a16_gemm": _w4a16_gemm, "attention_bwd": _attention_bwd,
             "gated_delta": _gated_delta, "gemm_transposed": _gemm_transposed, "masked_gemm": _masked_gemm,
             "vertical_slash": _vertical_slash, "memory_bound": _memory_bound, "w4a16_other": _w4a16_other}


def draw(count: int, seed: int, tlc: str, root: str, targets: list, source_of, templates=None) -> tuple:
    """`count` configurations tlc accepts, each for one of `targets`: [(family, stem, defines,
    shapes, target)], and how many draws tlc rejected with a located error.
    `source_of(family)` is the .tl file; `templates` (names of TEMPLATES, default all) the
    templates drawn from, to aim a run at the samples a change touched."""
    unknown = sorted(set(templates or ()) - set(TEMPLATES))
    if unknown:
        raise ValueError(f"unknown templates {', '.join(unknown)} (known: {', '.join(sorted(TEMPLATES))})")
    names = sorted(templates or TEMPLATES)
    rng = random.Random(seed)
    accepted, rejected = [], 0
    for _ in range(8 * count):
        if len(accepted) == count:
            break
        family, stem, knobs, shapes = TEMPLATES[rng.choice(names)](rng)
        target = rng.choice(targets)
        cmd = [tlc, f"{root}/{source_of(family)}", "--target", target, "-o", "/dev/null"]
        for k, v in knobs.items():
            cmd += ["-D", f"{k}={v}"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                           timeout=120)
        if r.returncode == 1 and re.search(r"^\S+:\d+:\d+: error: ", r.stdout, re.M):
            rejected += 1
            continue
        if r.returncode != 0:
            raise RuntimeError(f"tlc exited with {r.returncode} on {' '.join(cmd)}\n{r.stdout[-2000:]}")
        accepted.append((family, stem, knobs, shapes, target))
    return accepted, rejected
