// The #line directives of the CUDA printer's line writer (codegen/CodeWriter.h) and the C
// string escaping they use (lower/Naming.h).
#include "codegen/CodeWriter.h"
#include "lower/Naming.h"

#include <catch2/catch.hpp>

using namespace tlc;
using namespace tlc::codegen;

TEST_CASE("cEscaped writes the characters of a C string literal", "[codegen]") {
  CHECK(lower::cEscaped("samples/gemm.tl") == "samples/gemm.tl");
  CHECK(lower::cEscaped("a\"b\\c") == "a\\\"b\\\\c");
  CHECK(lower::cEscaped("x\ny") == "x\\012y");
  CHECK(lower::cEscaped("\xc3\xa9.tl") == "\\303\\251.tl"); // UTF-8 bytes in octal
  CHECK(lower::cEscaped("what?" "?/") == "what?\\?/");        // no trigraph
  CHECK(lower::cEscaped("50%") == "50%");
}

TEST_CASE("CodeWriter writes a directive only where the compiler's line would be wrong", "[codegen]") {
  std::string text;
  llvm::raw_string_ostream os(text);
  CodeWriter w(os);
  w.lineDirectives = true;
  w.sourceFile = "k.tl";
  w.line("int before = 0;"); // the generated file's own line: no directive
  w.origin = 7;
  w.line("// a comment takes any line");
  w.line("a();"); // .tl line 7
  w.line("b();"); // line 7 again: the compiler would say 8
  w.origin = 9;
  w.line("c();"); // the compiler would say 8: a directive
  w.origin = 10;
  w.line("d();"); // 10 follows 9: none
  w.line();
  w.origin = 0;
  w.line("}");    // back to the generated file
  w.line("int after = 0;");
  os.flush();
  CHECK(text == "int before = 0;\n"
                "// a comment takes any line\n"
                "#line 7 \"k.tl\"\n"
                "a();\n"
                "#line 7\n"
                "b();\n"
                "#line 9\n"
                "c();\n"
                "d();\n"
                "\n"
                "#line \x01generated\x01\n"
                "}\n"
                "int after = 0;\n");
  std::string resolved = resolveGeneratedLines("// banner\n" + text, "out\".cu");
  CHECK(llvm::StringRef(resolved).contains("\n#line 13 \"out\\\".cu\"\n}\n"));
  CHECK(llvm::StringRef(resolved).endswith("int after = 0;\n"));

  std::string off;
  llvm::raw_string_ostream offStream(off);
  CodeWriter plain(offStream);
  plain.sourceFile = "k.tl";
  plain.origin = 7;
  plain.line("a();");
  offStream.flush();
  CHECK(off == "a();\n");
}
