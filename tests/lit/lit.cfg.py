# lit configuration for tlc: every .tl file under tests/lit is a test.
import os
import lit.formats

config.name = "tlc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tl"]
config.test_source_root = os.path.dirname(__file__)
# test_exec_root stays unset: lit then runs tests (and puts %t files) in the build tree
# directory that holds lit.site.cfg.py.
config.excludes = ["Inputs"]

config.substitutions.append(("%tlc", os.path.join(config.tlc_bin_dir, "tlc")))
config.substitutions.append(("%samples", os.path.join(config.tlc_source_dir, "samples")))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("FileCheck", config.filecheck))
# `%expect-exit N cmd...` runs cmd and fails unless it exits with status N (lit's `not`
# accepts any failure, but tlc's exit codes 1, 2 and 3 mean different things).
config.substitutions.append(
    ("%expect-exit", config.python + " " + os.path.join(config.test_source_root, "Inputs",
                                                         "expect_exit.py")))
# Diagnostics must not carry colour codes in tests.
config.environment["NO_COLOR"] = "1"
# tlc run --emulate keeps compiled emulator drivers in a cache: never the user's (~/.cache/tlc).
config.environment["TLC_CACHE_DIR"] = os.path.join(config.tlc_bin_dir, "..", "tests", "lit", "tlc-cache")
