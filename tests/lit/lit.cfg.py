# lit configuration for tlc: every .tl file under tests/lit is a test.
import os
import lit.formats

config.name = "tlc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tl"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.filecheck), "..") if False else None
config.excludes = ["Inputs"]

config.substitutions.append(("%tlc", os.path.join(config.tlc_bin_dir, "tlc")))
config.substitutions.append(("%samples", os.path.join(config.tlc_source_dir, "samples")))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("FileCheck", config.filecheck))
# Diagnostics must not carry colour codes in tests.
config.environment["NO_COLOR"] = "1"
