"""Unit tests of the case tables and the manifest (no GPU, no torch).

    python3 -m unittest discover -s tests/gpu -p 'test_*.py'
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import cases  # noqa: E402
from cases import Build, BenchItem, Case, TableError  # noqa: E402


def _split_top(text: str) -> list:
    """Splits on commas outside () and [] (parameter lists nest no <>; a `<` or `>` in a
    default is a comparison)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in parts + [cur] if p.strip()]


def tl_signature(path: str, kernel: str) -> tuple:
    """(compile-time parameter names, [(name, is_out, dims or None)]) of `kernel` in a .tl file.
    Compile-time defaults that compare need parentheses (language rule), so at parenthesis
    depth 0 the first '>' closes the list."""
    with open(path) as f:
        text = re.sub(r"//[^\n]*|/\*.*?\*/", "", f.read(), flags=re.S)
    pos = re.search(rf"\bkernel\s+{kernel}\s*<", text).end()
    depth, start = 0, pos
    # The list ends at the first '>' outside parentheses that is not part of '>=' or '>>'.
    while not (text[pos] == ">" and depth == 0 and not text.startswith((">=", ">>"), pos)):
        depth += text[pos] == "("
        depth -= text[pos] == ")"
        pos += 2 if text.startswith((">=", "<=", ">>", "<<"), pos) else 1
    compile_params = [re.match(r"\w+", p).group(0) for p in _split_top(text[start:pos])]
    open_paren = text.index("(", pos)
    depth, end = 0, open_paren
    while True:
        depth += text[end] == "("
        depth -= text[end] == ")"
        if depth == 0:
            break
        end += 1
    run_params = []
    for p in _split_top(text[open_paren + 1:end]):
        name, _, rest = p.partition(":")
        dims = re.search(r"\[(.*)\]", rest)
        run_params.append((name.strip(), rest.split()[0] == "out",
                           [d.strip() for d in dims.group(1).split(",")] if dims else None))
    return compile_params, run_params


def tlc_path():
    path = os.path.join(ROOT, "build/bin/tlc")
    return path if os.access(path, os.X_OK) else None


def run_tlc(build, *extra):
    args = [tlc_path(), os.path.join(ROOT, build.spec.source), *extra, *build.tlc_args()]
    return subprocess.run(args, capture_output=True, text=True)


class SamplesInSync(unittest.TestCase):
    """cases.KERNELS restates the signature of each sample and test kernel (tests/gpu/ops/);
    these tests fail when a .tl file changes."""

    def test_parameter_order_roles_and_shapes(self):
        for family, spec in cases.KERNELS.items():
            dims, knobs = set(), set()
            for launch in spec.launches:   # the kernel, then its `then` launches
                with self.subTest(family=family, kernel=launch.kernel):
                    compile_params, run_params = tl_signature(os.path.join(ROOT, spec.source),
                                                              launch.kernel)
                    self.assertEqual([p.name for p in launch.params],
                                     [n for n, _, _ in run_params])
                    for param, (_, is_out, ds) in zip(launch.params, run_params):
                        self.assertEqual(param.role == "out", is_out, param.name)
                        self.assertEqual(param.is_tensor, ds is not None, param.name)
                    dims |= {d for _, _, ds in run_params for d in ds or []}
                    knobs |= set(compile_params)
            self.assertLessEqual(set(spec.shape_keys), dims, family)
            self.assertLessEqual(set(spec.knobs), knobs, family)

    def test_later_launches_read_what_earlier_ones_write(self):
        # A launch reads a tensor that some launch of the operation writes only after an
        # earlier launch wrote it (the operation's result is its last launch's output); the
        # operation's inputs, which no launch writes, may first appear in any launch (the
        # attention backward's Q, K, V and LSE in its second).
        for family, spec in cases.KERNELS.items():
            outputs = {p.name for launch in spec.launches for p in launch.tensors if p.role == "out"}
            written = set()
            for launch in spec.launches:
                for p in launch.tensors:
                    if p.role == "in" and p.name in outputs:
                        self.assertIn(p.name, written, f"{family}: {launch.kernel}")
                written |= {p.name for p in launch.tensors if p.role == "out"}
        # The operation's tensors: the first launch's in its C ABI order, then those only
        # later launches take; its result the last launch's first output.
        spec = cases.KERNELS["gated_delta"]
        self.assertEqual([(p.name, p.role) for p in spec.tensors],
                         [("K", "in"), ("V", "in"), ("G", "in"), ("Beta", "in"), ("Gc", "out"),
                          ("W", "out"), ("U", "out"), ("Q", "in"), ("O", "out")])
        self.assertEqual(spec.result, "O")
        self.assertEqual(cases.KERNELS["gemm"].result, "C")
        # Split-KV decoding is one launch (last_block), its counters Done before O, which
        # KernelSpec.output names as the result.
        spec = cases.KERNELS["flash_decoding"]
        self.assertEqual(([(p.name, p.role) for p in spec.tensors], spec.then, spec.result),
                         ([("Q", "in"), ("K", "in"), ("V", "in"), ("Partial", "out"),
                           ("LSE", "out"), ("Done", "out"), ("O", "out")], (), "O"))

    def test_every_define_is_a_compile_time_parameter(self):
        builds, _, _ = cases.default_tables()
        for b in builds:
            # A -D applies to every kernel of the file that has the parameter; -D kernel.name
            # to that kernel only.
            compile_params = set()
            for launch in b.spec.launches:
                params = tl_signature(os.path.join(ROOT, b.spec.source), launch.kernel)[0]
                compile_params |= set(params) | {f"{launch.kernel}.{p}" for p in params}
            self.assertLessEqual(set(b.defines), compile_params, b.name)

    def test_every_kernel_has_a_dtype_knob(self):
        # The runner records each case's dtype from its build's -D dtype=...
        for family, spec in cases.KERNELS.items():
            self.assertIn("dtype", spec.knobs, family)

    @unittest.skipUnless(tlc_path(), "no tlc")
    def test_tlc_generates_every_build(self):
        for b in cases.default_tables()[0]:
            proc = run_tlc(b, "-o", os.devnull)
            self.assertEqual(proc.returncode, 0, f"{b.name}: {proc.stderr[:500]}")

    @unittest.skipUnless(tlc_path(), "no tlc")
    def test_known_rejections_are_still_rejected(self):
        builds = {b.name: b for b in cases.default_tables(known_rejections=True)[0]}
        for name, message in cases.KNOWN_TLC_REJECTIONS.items():
            proc = run_tlc(builds[name], "-o", os.devnull)
            self.assertNotEqual(proc.returncode, 0,
                                f"tlc now accepts {name}: drop it from KNOWN_TLC_REJECTIONS")
            self.assertIn(message, proc.stderr, name)


class RandomTables(unittest.TestCase):
    """make_bundle.sh --random: seeded draws that tlc accepts, valid tables, both targets."""

    @unittest.skipUnless(tlc_path(), "no tlc")
    def test_draws_are_seeded_valid_and_cover_both_targets(self):
        first = cases.random_tables(12, 7, tlc_path(), "sm_90a", ["sm_90a", "sm_80"])
        self.assertEqual(first, cases.random_tables(12, 7, tlc_path(), "sm_90a", ["sm_90a", "sm_80"]))
        self.assertEqual(len(first["builds"]), 12)
        self.assertEqual(len(first["cases"]), 36)
        self.assertNotEqual(first["builds"], cases.random_tables(12, 8, tlc_path(), "sm_90a", ["sm_90a"])["builds"])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "random_tables.json")
            with open(path, "w") as f:
                json.dump(first, f)
            builds, checks, bench = cases.tables_from_json(path)
        cases.validate(builds, checks, bench)
        # A build off the bundle's target carries it (make_bundle.sh reads target=...) and says
        # so in its name.
        own = [b for b in builds if b.target]
        self.assertTrue(own and all(b.target == "sm_80" and b.name.endswith("_sm_80") for b in own))
        for b in builds:
            self.assertEqual(run_tlc(b, "-o", os.devnull).returncode, 0, b.name)
        # f16 accumulation keeps the fixed accum_ builds' tolerance, the others the default.
        # The first seed whose 30 draws accumulate in f16 somewhere (one GEMM draw in eight does).
        many = next(d for d in (cases.random_tables(30, s, tlc_path(), "sm_90a", ["sm_90a"]) for s in range(1, 40))
                    if any(b["defines"].get("accum") == "f16" for b in d["builds"]))
        for c in many["cases"]:
            acc16 = next(b for b in many["builds"] if b["name"] == c["build"])["defines"].get("accum") == "f16"
            self.assertEqual(c.get("tolerance"), cases.F16_ACCUM_TOLERANCE if acc16 else None, c["name"])


    @unittest.skipUnless(tlc_path(), "no tlc")
    def test_templates_limit_the_draws(self):
        # --random-templates: only the named templates' families, and a name that is not a
        # template is refused with the known ones.
        import random_tables
        drawn = cases.random_tables(8, 3, tlc_path(), "sm_90a", ["sm_90a"], ["mla", "flash_decoding"])
        self.assertEqual(len(drawn["builds"]), 8)
        self.assertEqual({b["family"] for b in drawn["builds"]} - {"mla", "flash_decoding"}, set())
        with self.assertRaisesRegex(ValueError, "unknown templates mla2 .*known: .*flash_decoding"):
            random_tables.draw(1, 1, tlc_path(), ".", ["sm_90a"], lambda f: "", ["mla2"])

    def test_vertical_slash_tables_are_wide_enough_for_one_slash(self):
        # A slash diagonal takes ceil(block_M / block_N) blocks of a query block's table: a
        # narrower table is an input no index builder can fill (GPU run 173).
        import random
        import random_tables
        rng = random.Random(173)
        for _ in range(300):
            _, _, knobs, shapes = random_tables._vertical_slash(rng)
            per_slash = -(-int(knobs["block_M"]) // int(knobs["block_N"]))
            for shape in shapes:
                self.assertGreaterEqual(shape["nnz_s"], per_slash, (knobs, shape))


class Tables(unittest.TestCase):
    def setUp(self):
        self.builds, self.cases, self.bench = cases.default_tables()
        self.by_name = {b.name: b for b in self.builds}

    def test_default_tables_are_valid(self):
        cases.validate(self.builds, self.cases, self.bench)
        cases.validate(*cases.default_tables(selftest=True))

    def test_issue_cases_are_all_there(self):
        shapes = {(c.build, tuple(sorted(c.shape.items()))) for c in self.cases}
        for dt in ("f16", "bf16"):
            for m, n, k in [(8192,) * 3, (4096,) * 3, (1000,) * 3, (1, 4096, 4096),
                            (4096, 4095, 4096)]:
                self.assertIn((f"gemm_{dt}", tuple(sorted({"M": m, "N": n, "K": k}.items()))),
                              shapes)
        attention = [(c.shape["batch"], c.shape["heads"], c.shape["seq_len"], c.shape["dim"],
                      c.build.endswith("causal")) for c in self.cases if c.build.startswith("fa")]
        self.assertEqual(sorted(attention), sorted(
            (b, h, s, d, causal) for b, h, s, d in [(2, 8, 1000, 64), (8, 16, 1024, 128),
                                                    (64, 64, 2048, 128)]
            for causal in (False, True)))
        for family in ("softmax", "rmsnorm"):
            got = sorted((c.shape["M"], c.shape["N"]) for c in self.cases
                         if c.build.startswith(family))
            self.assertEqual(got, [(1000, 3000), (4096, 4096)])

    def test_bench_has_the_paper_shapes(self):
        gemm = {(i.shape["M"], i.shape["N"], i.shape["K"]) for i in self.bench
                if i.build == "gemm_f16"}
        self.assertLessEqual(set(cases.PAPER_GEMM_SHAPES), gemm)
        seqs = {(i.shape["seq_len"], i.build) for i in self.bench if i.build.startswith("fa_d128")}
        for s in cases.PAPER_ATTENTION_SEQ:
            self.assertIn((s, "fa_d128"), seqs)
            self.assertIn((s, "fa_d128_causal"), seqs)

    def test_bench_has_mla_decode_at_deepseek_shape_on_the_checked_build(self):
        # Issue 11: B = 64, H = 128, KV length 1024-8192, timed on the very build the MLA
        # checks use, the sample's defaults (only the knobs the reference needs are set), and
        # on the deeper-pipeline builds beside it.
        mla = [i for i in self.bench if i.build.startswith("mla_")]
        self.assertEqual(sorted(i.shape["seqlen_kv"] for i in mla if i.build == "mla_f16"),
                         [1024, 2048, 4096, 8192])
        for i in mla:
            self.assertEqual({k: v for k, v in i.shape.items() if k != "seqlen_kv"},
                             {"batch": 64, "heads": 128, "kv_heads": 1, "dim": 512, "pe_dim": 64})
            self.assertIn(i.build, ("mla_f16", "mla_f16_n32_s3", "mla_f16_n32_s4"))
            self.assertTrue(i.name.startswith("mla_"), i.name)   # bench.py --only "^mla_"
        build = next(b for b in self.builds if b.name == "mla_f16")
        self.assertEqual(build.defines, {"dtype": "f16", "dim": "512", "pe_dim": "64"})
        self.assertTrue(any(c.build == "mla_f16" for c in self.cases))
        self.assertEqual(len([b for b in self.builds if b.family == "mla" and b.target in ("", "sm_90a")
                              and b.defines["dtype"] == "f16" and "block_N" not in b.defines]), 1)

    def test_references_are_high_precision(self):
        for c in self.cases:
            self.assertIn(c.reference, ("float32", "float64"))
            # Only an f16 accumulator gets more (cases.F16_ACCUM_TOLERANCE says why).
            f16_accum = self.by_name[c.build].defines.get("accum") == "f16"
            self.assertLessEqual(c.tolerance, cases.F16_ACCUM_TOLERANCE if f16_accum else 1e-2)

    def test_f16_accumulator_builds(self):
        """samples/gemm.tl accumulating in f16 on the sm_80 path and on sm_90a with the default
        and the H100 tiles, at K <= 1024 (where the tolerance still catches a lost k16 step),
        partial tiles included; `^accum_` selects exactly them."""
        builds, cs, _ = cases.select(self.builds, self.cases, [], r"^accum_")
        self.assertEqual({(b.name, b.target, b.defines.get("block_N", "128")) for b in builds},
                         {("accum_gemm_f16_sm80", "sm_80", "128"), ("accum_gemm_f16", "", "128"),
                          ("accum_gemm_f16_h100tiles", "", "256")})
        self.assertTrue(all(b.family == "gemm" and b.defines["accum"] == "f16" for b in builds))
        self.assertEqual({b.name for b in self.builds if b.defines.get("accum") == "f16"},
                         {b.name for b in builds})
        for c in cs:
            self.assertLessEqual(c.shape["K"], 1024)
            self.assertEqual(c.tolerance, cases.F16_ACCUM_TOLERANCE)
        for b in builds:
            self.assertIn({"M": 257, "N": 1000, "K": 999}, [c.shape for c in cs if c.build == b.name])
        self.assertLess(cases.F16_ACCUM_TOLERANCE, (16 / 1024) ** 0.5 / 4)

    def test_case_names_start_with_their_build(self):
        # One --only regex then selects the same builds (make_bundle.sh) and cases (run.py).
        for c in self.cases:
            self.assertTrue(c.name.startswith(c.build + "_"), c.name)

    def test_seeds_differ_between_cases(self):
        self.assertEqual(len({c.seed for c in self.cases}), len(self.cases))

    def test_selftest_and_only_keep_what_uses_the_builds(self):
        builds, cs, bench = cases.default_tables(selftest=True)
        self.assertEqual({b.family for b in builds}, {"gemm"})
        self.assertTrue(cs and all(c.build.startswith("gemm") for c in cs))
        builds, cs, bench = cases.select(self.builds, self.cases, self.bench, r"^softmax")
        self.assertEqual([b.name for b in builds], ["softmax_f16"])
        self.assertEqual({c.build for c in cs} | {i.build for i in bench}, {"softmax_f16"})


class OperatorCoverage(unittest.TestCase):
    """The tile-operator variants the ops_ cases must reach (tests/gpu/README.md)."""

    def setUp(self):
        self.builds, self.cases, _ = cases.default_tables()
        self.by_name = {b.name: b for b in self.builds}

    def builds_of(self, family):
        return [b for b in self.builds if b.family == family]

    def shapes_of(self, build):
        return [c.shape for c in self.cases if c.build == build.name]

    def test_gemm_layouts_dtypes_policies_and_two_shapes(self):
        for layout in ("nt", "tn", "tt"):
            builds = [b for b in self.builds_of(f"gemm_{layout}") if b.defines["dtype"] in ("f16", "bf16")]
            got = {(b.defines["dtype"], b.defines["policy"]) for b in builds}
            self.assertEqual(got, {(dt, p) for dt in ("f16", "bf16") for p in cases.POLICIES})
            for b in builds:
                shapes = self.shapes_of(b)
                self.assertIn({"M": 1024, "N": 1024, "K": 1024}, shapes)
                # a partial tile in every dimension
                self.assertTrue(any(all(s[k] % 128 for k in "MN") and s["K"] % 32
                                    for s in shapes), b.name)

    def test_gemm_on_i8_tf32_and_fp8(self):
        # issue 12: the NN sample and the NT kernel for each type, on the sm_90a bundle's path
        # and on the mma.sync path of the oldest target with the instruction; i8 exact.
        names = {b.name: b for b in self.builds}
        for dt, target in (("i8", "sm80"), ("tf32", "sm80"), ("e4m3", "sm89"), ("e4m3", "")):
            for prefix in ("dtypes_gemm", "dtypes_gemm_nt"):
                name = f"{prefix}_{dt}" + (f"_{target}" if target else "")
                self.assertIn(name, names)
                shapes = self.shapes_of(names[name])
                for m, n, k in ((1000, 1000, 1024), (77, 264, 160), (1, 4096, 1024)):
                    self.assertIn({"M": m, "N": n, "K": k}, shapes, name)
        self.assertEqual(names["dtypes_gemm_i8_sm80"].defines["accum"], "i32")
        self.assertTrue(all(c.tolerance == 0 for c in self.cases if "_i8" in c.build))
        self.assertEqual(sum(1 for b in self.builds if b.name.startswith("dtypes_gemm_") and
                             not b.name.startswith(("dtypes_gemm_annotated_", "dtypes_gemm_fp8"))), 14)

    def test_fp8_gemm_sample_and_8bit_wgmma(self):
        # samples/gemm_fp8.tl: its defaults, e5m2 into f16, the sm_89 mma.sync lowering; K off
        # 16 bytes (the consumers' copies) and off the tiles. The wgmma.m64nNk32 builds of
        # gemm_nt: every swizzle (block_K 32 via the dtypes_gemm_nt builds, 64, 128), i8 exact.
        names = {b.name: b for b in self.builds}
        for name in ("dtypes_gemm_fp8", "dtypes_gemm_fp8_e5m2_k64", "dtypes_gemm_fp8_sm89"):
            self.assertEqual(names[name].family, "gemm_fp8")
            shapes = self.shapes_of(names[name])
            self.assertIn({"M": 1000, "N": 1000, "K": 1000}, shapes, name)
            self.assertIn({"M": 77, "N": 264, "K": 160}, shapes, name)
        self.assertEqual(names["dtypes_gemm_fp8_sm89"].target, "sm_89")
        wgmma8 = [b for b in self.builds if b.name.startswith("dtypes_wgmma8_")]
        self.assertEqual({b.defines["block_K"] for b in wgmma8}, {"64", "128"})
        self.assertTrue(all(c.tolerance == 0 for c in self.cases if c.build.startswith("dtypes_wgmma8_i8")))

    def test_gemm_on_i8_tf32_and_fp8_with_an_annotated_operand(self):
        # annotate_layout on the other input types: A through its annotation (elem and rot),
        # B [K, N] gathered from its swizzle, on the sm_90a bundle's path and on mma.sync's
        # oldest target; partial tiles in every dimension, i8 exact.
        builds = [b for b in self.builds if b.name.startswith("dtypes_gemm_annotated_")]
        self.assertTrue(all(b.family == "gemm_annotated" for b in builds))
        got = {(b.defines["dtype"], v, b.target) for b in builds for v in ("elem", "rot")
               if b.defines.get(v) == "1"}
        for dt, warp_target in (("i8", "sm_80"), ("f32", "sm_80"), ("f8e4m3", "sm_89")):
            self.assertLessEqual({(dt, "elem", ""), (dt, "rot", ""), (dt, "elem", warp_target)}, got)
        self.assertIn(("f8e5m2", "elem", "sm_89"), got)
        for b in builds:
            self.assertTrue(any(s["M"] % 128 and s["N"] % 128 and s["K"] % 32 for s in self.shapes_of(b)),
                            b.name)
        self.assertEqual({b.defines["out_dtype"] for b in builds if b.defines["dtype"] == "i8"}, {"i32"})
        self.assertTrue(all(c.tolerance == 0 for c in self.cases if c.build.startswith("dtypes_gemm_annotated_i8")))

    def test_gemm_with_a_in_registers(self):
        self.assertEqual({b.defines["policy"] for b in self.builds_of("gemm_rs")}, {"full_row"})

    def test_every_reduction_on_both_layout_families_and_across_warps(self):
        for family in ("reduce_rows", "reduce_gemm"):
            ops = {cases.REDUCE_OPS[int(b.defines["op"])] for b in self.builds_of(family)}
            self.assertEqual(ops, set(cases.REDUCE_OPS), family)
        rows = self.builds_of("reduce_rows")
        # 128 threads per row: 256 threads over a [2, 2048] tile
        self.assertTrue(any(b.defines["threads"] == "256" and b.defines["block_M"] == "2"
                            for b in rows))
        self.assertEqual({b.defines["policy"] for b in self.builds_of("reduce_gemm")},
                         set(cases.POLICIES))

    def test_reductions_see_several_whole_column_tiles(self):
        for b in self.builds_of("reduce_rows") + self.builds_of("reduce_gemm"):
            for shape in self.shapes_of(b):
                tiles, rest = divmod(shape["N"], int(b.defines["block_N"]))
                self.assertEqual(rest, 0, b.name)
                self.assertGreaterEqual(tiles, 2, b.name)   # clear = false accumulates

    def test_atomic_copy_fill_and_samples_are_there(self):
        for family in ("atomic_splitk", "copy_paths", "fill_regions", "mla", "dequant_w4a16"):
            self.assertTrue(self.builds_of(family), family)
        mla = {tuple(c.shape[k] for k in ("batch", "heads", "seqlen_kv", "kv_heads", "dim",
                                           "pe_dim")) for c in self.cases if c.build == "mla_f16"}
        self.assertIn((4, 64, 1000, 1, 512, 64), mla)

    def test_conv2d_cases_and_bench_items(self):
        """samples/conv2d.tl (issue 12): 3x3 and 1x1 filters at stride 1 and 2 with their
        padding, shapes off every tile (F, C, N * P * Q), C not a multiple of 8, the sm_80 path;
        every bench item checked at its build and timed against cuDNN."""
        conv = [c for c in self.cases if self.by_name[c.build].family == "conv2d"]
        filters = {tuple(int(self.by_name[c.build].defines[k]) for k in ("kh", "stride", "pad"))
                   for c in conv}
        self.assertLessEqual({(3, 1, 1), (3, 2, 1), (1, 1, 0), (1, 2, 0)}, filters)
        for c in conv:
            b = self.by_name[c.build]
            self.assertTrue(c.name.startswith("conv_") and b.name.startswith("conv_"))
            self.assertEqual(b.defines["kh"], b.defines["kw"])
            # float32 only for the 8.5 M-pixel case of more tiles than a grid's y extent.
            self.assertEqual(c.reference, "float32" if c.shape["N"] * c.shape["H"] * c.shape["W"] > 65535 * 128
                             else "float64")
        self.assertTrue(any(c.shape["N"] * c.shape["H"] * c.shape["W"] > 65535 * 128 for c in conv))
        shapes = {tuple(c.shape[k] for k in ("N", "H", "W", "C", "F")) for c in conv}
        self.assertLessEqual({(1, 7, 7, 64, 96), (2, 17, 17, 128, 200), (8, 56, 56, 64, 64)}, shapes)
        self.assertTrue(any(s[3] % 8 for s in shapes))
        self.assertTrue(any(self.by_name[c.build].target == "sm_80" for c in conv))
        items = [i for i in cases.default_tables()[2] if self.by_name[i.build].family == "conv2d"]
        self.assertGreaterEqual(len(items), 5)
        for i in items:
            self.assertTrue(i.name.startswith("conv_"))
            self.assertTrue([c for c in conv if c.build == i.build], i.build)
        self.assertTrue(any(self.by_name[i.build].defines["stride"] == "2" for i in items))

    def test_gather_rows_cases(self):
        """tests/gpu/ops/gather_rows.tl (issue 12, gathered copies): a random row table with
        padded slots, K a multiple of 64, of 8 only, and of neither (the element-by-element
        instantiation), M off the tile, sm_80 and sm_90a, 3 and 4 stages."""
        gather = [c for c in self.cases if self.by_name[c.build].family == "gather_rows"]
        self.assertTrue(all(c.name.startswith("gather_rows_") for c in gather))
        ks = {c.shape["K"] for c in gather}
        self.assertTrue(any(k % 64 == 0 for k in ks) and any(k % 64 and k % 8 == 0 for k in ks)
                        and any(k % 8 for k in ks))
        self.assertTrue(any(c.shape["M"] % 128 for c in gather))
        targets = {self.by_name[c.build].target for c in gather}
        self.assertLessEqual({"", "sm_80"}, targets)
        self.assertIn("4", {self.by_name[c.build].defines.get("stages") for c in gather})

    def test_decode_cases_and_bench_items(self):
        """samples/flash_decoding.tl (issue 12): ragged key counts, groups 1, 4 and 8, both head
        dims and dtypes, the sm_80 path, splits that get no key, and KV heads whose query heads
        take several blocks (several counters each)."""
        decode = [c for c in self.cases if self.by_name[c.build].family == "flash_decoding"]
        blocks = {-(-(c.shape["heads"] // c.shape["kv_heads"]) // int(self.by_name[c.build].defines["block_H"]))
                  for c in decode}
        self.assertLessEqual({1, 2, 3, 5}, blocks)
        seen = {(c.shape["seqlen"], c.shape["heads"] // c.shape["kv_heads"], c.shape["dim"],
                 self.by_name[c.build].defines["dtype"]) for c in decode}
        self.assertLessEqual({77, 1000, 4097, 32768 + 5}, {s for s, _, _, _ in seen})
        self.assertLessEqual({1, 4, 8}, {g for _, g, _, _ in seen})
        self.assertEqual({(d, t) for _, _, d, t in seen},
                         {(d, t) for d in (64, 128) for t in ("f16", "bf16")})
        self.assertTrue(any(self.by_name[c.build].target == "sm_80" for c in decode))
        for c in decode:
            b = self.by_name[c.build]
            self.assertTrue(c.name.startswith("decode_") and b.name.startswith("decode_"))
            self.assertEqual(c.shape["dim"], int(b.defines["dim"]), c.name)
        # A split gets no key when there are fewer 64-key tiles than splits, or when dealing
        # them out ceildiv(tiles, splits) at a time runs out before the last split.
        def empty_splits(c):
            tiles = -(-c.shape["seqlen"] // 64)
            splits = int(self.by_name[c.build].defines["num_splits"])
            return splits - -(-tiles // -(-tiles // splits))
        self.assertGreaterEqual(sum(empty_splits(c) > 0 for c in decode), 5)
        items = [i for i in cases.default_tables()[2]
                 if self.by_name[i.build].family == "flash_decoding"]
        for build in ["decode_f16_d128"] + [f"decode_f16_d128_s{n}" for n in cases.DECODE_SPLIT_SWEEP]:
            self.assertEqual(sorted((i.shape["batch"], i.shape["seqlen"]) for i in items
                                    if i.build == build),
                             sorted((b, s) for b in (1, 16, 64) for s in (4096, 32768)), build)
            if build != "decode_f16_d128":   # each split count is checked before it is timed
                self.assertTrue([c for c in decode if c.build == build], build)
        for i in items:
            self.assertEqual((i.shape["kv_heads"], i.shape["heads"], i.shape["dim"]), (8, 64, 128))
            self.assertTrue(i.name.startswith("decode_"))

    def test_atomic_and_reduction_cases_use_the_tight_tolerance(self):
        for c in self.cases:
            if self.by_name[c.build].family.startswith(("atomic", "reduce")):
                # (or exact: the bitwise reductions compare with tolerance 0)
                self.assertLessEqual(c.tolerance, cases.F32_TOLERANCE, c.name)

    def test_known_rejections_stay_out_of_the_bundle_unless_asked(self):
        for name in cases.KNOWN_TLC_REJECTIONS:
            self.assertNotIn(name, self.by_name)
            self.assertFalse([c for c in self.cases if c.build == name])
            builds, cs, _ = cases.default_tables(known_rejections=True)
            self.assertIn(name, {b.name for b in builds})
            self.assertTrue([c for c in cs if c.build == name])

    def test_prefixes_select_the_operator_cases(self):
        builds, _, _ = cases.select(self.builds, self.cases, [], r"^(ops|mla|w4a16|auto|sparse|mem|sink|decode|conv|gather|ovl|moe|vs|bwd|gdn|packed)_")
        # Issue 3's builds of these families; the one-pass row kernels' softmax and RMSNorm
        # builds (issue 12) are mem_ ones.
        issue3 = {"gemm", "attention", "softmax", "rmsnorm"}
        self.assertEqual({b.name for b in builds},
                         {b.name for b in self.builds
                          if (b.family not in issue3 or b.name.startswith("mem_"))
                          and not b.name.startswith(("layout_", "dtypes_"))})

    def test_layout_prefix_selects_the_issue9_cases(self):
        """Tile widths of gemm, head dims of attention, the gathered table (issue 9)."""
        builds, cs, _ = cases.select(self.builds, self.cases, [], r"^layout_")
        names = {b.name for b in builds}
        for w in (16, 48, 80, 96, 112, 160, 192):
            self.assertIn(f"layout_gemm_n{w}", names)
            self.assertIn(f"layout_gemm_k{w}", names)
        for d in (64, 80, 96, 128):
            self.assertIn(f"layout_fa_d{d}", names)
        self.assertIn("layout_gather_d64", names)
        self.assertTrue(any(c.shape.get("N") == 1000 and c.shape.get("K") == 999 for c in cs))


class TorchExtension(unittest.TestCase):
    """The PyTorch extension's kernels (make_bundle.sh --torch, torch_ext_check.py)."""

    def test_tlc_args_qualify_every_define_by_its_kernel(self):
        args = cases.torch_ext_tlc_args()
        for build, shapes in cases.TORCH_EXT_BUILDS:
            with self.subTest(build=build.name):
                self.assertIn(build.spec.source, args)
                for name, value in build.defines.items():
                    self.assertIn(f"{build.spec.kernel}.{name}={value}", args)
                self.assertTrue(os.path.exists(os.path.join(ROOT, build.spec.source)))
                for shape in shapes:   # every shape binds what the problem's tensors need
                    self.assertLessEqual(set(build.spec.shape_keys), set(shape))
        # One tlc run: every -D is qualified (an unqualified one would reach every kernel).
        defines = [args[i + 1] for i, a in enumerate(args) if a == "-D"]
        self.assertTrue(defines and all("." in d.split("=")[0] for d in defines))

    def test_library_is_a_namespace_tlc_accepts(self):
        # tlc reserves tl_/tlc_ names (lower/Naming.h); the library is a C++ namespace too.
        self.assertRegex(cases.TORCH_EXT_LIBRARY, r"^[a-z][a-z0-9_]*$")
        self.assertFalse(cases.TORCH_EXT_LIBRARY.startswith(("tl_", "tlc_", "u_")))

    def test_command_line(self):
        out = subprocess.run([sys.executable, os.path.join(HERE, "cases.py"), "torch-ext"],
                             capture_output=True, text=True, check=True).stdout.split("\n")
        self.assertEqual(out[:-1], cases.torch_ext_tlc_args())
        library = subprocess.run([sys.executable, os.path.join(HERE, "cases.py"), "torch-ext", "--library"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(library, cases.TORCH_EXT_LIBRARY)


class Validation(unittest.TestCase):
    def check_rejects(self, builds, cs, bench, pattern):
        with self.assertRaisesRegex(TableError, pattern):
            cases.validate(builds, cs, bench)

    def test_rejects_inconsistent_tables(self):
        gemm = Build("g", "gemm", {"dtype": "f16"})
        ok_case = Case("c", "g", {"M": 1, "N": 2, "K": 3})
        cases.validate([gemm], [ok_case], [])
        self.check_rejects([gemm, gemm], [], [], "duplicate build")
        self.check_rejects([Build("g", "conv", {})], [], [], "unknown kernel family")
        self.check_rejects([Build("g/x", "gemm", {"dtype": "f16"})], [], [], "names must be")
        self.check_rejects([Build("g", "gemm", {})], [], [], r"must set \['dtype'\]")
        self.check_rejects([gemm], [Case("c", "h", {"M": 1, "N": 2, "K": 3})], [],
                           "unknown build 'h'")
        self.check_rejects([gemm], [Case("c", "g", {"M": 1, "N": 2})], [], "shape keys")
        self.check_rejects([gemm], [Case("c", "g", {"M": 0, "N": 2, "K": 3})], [],
                           "not a positive int")
        self.check_rejects([gemm], [ok_case, ok_case], [], "duplicate case")
        self.check_rejects([gemm], [Case("c", "g", {"M": 1, "N": 2, "K": 3}, "float16")], [],
                           "reference must be")
        self.check_rejects([gemm], [], [BenchItem("b", "g", {"M": 1, "N": 1})], "bench item")
        self.check_rejects([gemm], [Case("c", "g", {"M": 1, "N": 2, "K": 3}, "float64", -0.1)], [],
                           "out of")

    def test_rejects_a_shape_that_contradicts_a_compile_time_dim(self):
        fa = Build("fa", "attention", {"dtype": "f16", "dim": "64", "causal": "false"})
        shape = {"batch": 1, "seq_len": 16, "heads": 1, "dim": 128}
        self.check_rejects([fa], [Case("c", "fa", shape)], [], "generated with dim = 64")


class ManifestRoundTrip(unittest.TestCase):
    def test_round_trip_keeps_everything(self):
        tables = cases.default_tables()
        data = json.loads(json.dumps(cases.make_manifest(*tables, "sm_90a", False, "tlc x")))
        m = cases.parse_manifest(data, "/bundle")
        self.assertEqual((m.builds, m.cases, m.bench), tables)
        self.assertEqual(m.target, "sm_90a")
        self.assertEqual(m.cu_path(m.build("gemm_f16")), "/bundle/gemm_f16.cu")

    def test_rejects_another_version(self):
        data = cases.make_manifest(*cases.default_tables(), "sm_90a", False, "")
        data["version"] = 99
        with self.assertRaisesRegex(TableError, "version"):
            cases.parse_manifest(data)

    def test_command_line_writes_a_loadable_manifest(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([sys.executable, os.path.join(HERE, "cases.py"), "manifest", "--out",
                            d, "--only", "^gemm_"], check=True)
            m = cases.load_manifest(d)
            self.assertEqual([b.name for b in m.builds], ["gemm_f16", "gemm_bf16"])


if __name__ == "__main__":
    unittest.main()
