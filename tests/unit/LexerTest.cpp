// Lexer tests: token kinds, literal forms, hidden comments, source positions (byte based,
// also after multi-byte UTF-8), and the lexical errors the front end reports.
#include "FrontendTestUtil.h"

#include "TileLangLexer.h"
#include "antlr4-runtime.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace tlc;
using tlc::test::Frontend;

namespace {

// One line of `--emit=tokens`: `line:col KIND 'text'` with an optional ` (hidden)`.
struct DumpedToken {
  unsigned line = 0, col = 0;
  std::string kind, text;
  bool hidden = false;
};

std::vector<DumpedToken> dump(llvm::StringRef source) {
  Frontend fe(source);
  std::istringstream in(fe.tokens());
  std::vector<DumpedToken> out;
  for (std::string line; std::getline(in, line);) {
    DumpedToken t;
    size_t colon = line.find(':'), space = line.find(' ');
    t.line = std::stoul(line.substr(0, colon));
    t.col = std::stoul(line.substr(colon + 1, space - colon - 1));
    size_t kindEnd = line.find(' ', space + 1);
    t.kind = line.substr(space + 1, kindEnd - space - 1);
    if (kindEnd != std::string::npos) {
      size_t open = line.find('\'', kindEnd), close = line.rfind('\'');
      t.text = line.substr(open + 1, close - open - 1);
      t.hidden = llvm::StringRef(line).endswith("(hidden)");
    }
    out.push_back(t);
  }
  return out;
}

// Kinds of the visible tokens, space-separated, without the trailing EOF.
std::string kinds(llvm::StringRef source) {
  std::string out;
  for (const DumpedToken &t : dump(source))
    if (!t.hidden && t.kind != "EOF")
      out += (out.empty() ? "" : " ") + t.kind;
  return out;
}

// The folded-free value of `const X = <literal>;` as the AST builder decoded it.
const Expr *literal(Frontend &fe) {
  REQUIRE(fe.parse());
  REQUIRE(fe.program().consts.size() == 1);
  return fe.program().consts[0]->init;
}

int64_t intValue(llvm::StringRef lit) {
  Frontend fe(("const X = " + lit + ";").str());
  const auto *e = llvm::dyn_cast<IntLitExpr>(literal(fe));
  REQUIRE(e);
  return e->value;
}

double floatValue(llvm::StringRef lit) {
  Frontend fe(("const X = " + lit + ";").str());
  const auto *e = llvm::dyn_cast<FloatLitExpr>(literal(fe));
  REQUIRE(e);
  return e->value;
}

} // namespace

TEST_CASE("keywords and identifiers", "[lexer]") {
  CHECK(kinds("kernel kernels _kernel kernel_ k3rnel") == "KEYWORD IDENT IDENT IDENT IDENT");
  // dtype names are reserved; names merely starting with one are identifiers.
  CHECK(kinds("f16 f16x bf16 bf i4 u4x bool boolean") ==
        "KEYWORD IDENT KEYWORD IDENT KEYWORD IDENT KEYWORD IDENT");
  CHECK(kinds("copy gemm exp2 full_row parallel shared out auto") ==
        "KEYWORD KEYWORD KEYWORD KEYWORD KEYWORD KEYWORD KEYWORD KEYWORD");
  CHECK(kinds("x1 _ __a A_s") == "IDENT IDENT IDENT IDENT");
}

TEST_CASE("soft keywords threads, grid and dtype are usable as names", "[lexer][parser]") {
  // The lexer gives them keyword tokens...
  CHECK(kinds("threads grid dtype") == "KEYWORD KEYWORD KEYWORD");
  // ...and the grammar accepts them wherever a name is expected.
  Frontend fe("const threads = 1;\nconst grid = threads + 1;\n"
              "kernel k<dtype: dtype = f16>(A: dtype[grid]) grid(1) threads(32) as (bx) {}\n");
  REQUIRE(fe.analyze());
  CHECK(fe.program().consts[1]->getName() == "grid");
  REQUIRE(fe.program().consts[1]->constant);
  CHECK(fe.program().consts[1]->constant->getInt() == 2);
  CHECK(fe.kernel().compileParams[0]->getName() == "dtype");
  CHECK(fe.kernel().params[0]->elemType == DType::F16);
}

TEST_CASE("a hard keyword is not a name", "[lexer][parser]") {
  Frontend fe("const copy = 1;");
  CHECK_FALSE(fe.parse());
  CHECK(fe.says("test.tl:1:7: error: unexpected 'copy'"));
  CHECK(fe.says("'copy' is a reserved word of TileLang"));
}

TEST_CASE("integer literal forms", "[lexer]") {
  CHECK(kinds("12 0xFF 0xff_ff 1_000 0 007") == "INT_LIT INT_LIT INT_LIT INT_LIT INT_LIT INT_LIT");
  CHECK(intValue("12") == 12);
  CHECK(intValue("0xFF") == 255);
  CHECK(intValue("0xdead_BEEF") == 0xdeadbeef);
  CHECK(intValue("1_000") == 1000);
  CHECK(intValue("1__0_") == 10);
  CHECK(intValue("9223372036854775807") == INT64_MAX);
  CHECK(intValue("0x7fff_ffff_ffff_ffff") == INT64_MAX);
  // A leading zero is not octal.
  CHECK(intValue("010") == 10);
  CHECK(intValue("09") == 9);
}

TEST_CASE("integer literals that do not fit or have no digits", "[lexer]") {
  Frontend big("const X = 9223372036854775808;");
  CHECK_FALSE(big.parse());
  CHECK(big.says("test.tl:1:11: error: integer literal 9223372036854775808 is too large"));
  CHECK(big.errors() == 1);

  Frontend hugeHex("const X = 0x1_0000_0000_0000_0000;");
  CHECK_FALSE(hugeHex.parse());
  CHECK(hugeHex.says("integer literal 0x1_0000_0000_0000_0000 is too large"));

  Frontend empty("const X = 0x_;");
  CHECK_FALSE(empty.parse());
  CHECK(empty.says("test.tl:1:11: error: integer literal 0x_ has no digits"));
}

TEST_CASE("floating-point literal forms", "[lexer]") {
  CHECK(kinds("1.5 .5 1e-5 2. 1E+3 3.e2 0.25e1") ==
        "FLOAT_LIT FLOAT_LIT FLOAT_LIT FLOAT_LIT FLOAT_LIT FLOAT_LIT FLOAT_LIT");
  CHECK(floatValue("1.5") == 1.5);
  CHECK(floatValue(".5") == 0.5);
  CHECK(floatValue("1e-5") == Approx(1e-5));
  CHECK(floatValue("2.") == 2.0);
  CHECK(floatValue("1E+3") == 1000.0);
  CHECK(floatValue("3.e2") == 300.0);
  // `1e` is an integer followed by a name, not a malformed float.
  CHECK(kinds("1e") == "INT_LIT IDENT");
  // A float keeps its spelling for printing.
  Frontend fe("const X = 2.50;");
  const auto *f = llvm::dyn_cast<FloatLitExpr>(literal(fe));
  REQUIRE(f);
  CHECK(f->spelling == "2.50");
  CHECK(toSource(f) == "2.50");
}

TEST_CASE("a float literal out of range is an error", "[lexer]") {
  Frontend fe("const X = 1e999;");
  CHECK_FALSE(fe.parse());
  CHECK(fe.says("test.tl:1:11: error: floating-point literal 1e999 is out of range"));
  // Underflow to zero (or a denormal) is not an error.
  Frontend tiny("const X = 1e-999;");
  CHECK(tiny.parse());
}

TEST_CASE("string literals with escapes", "[lexer]") {
  std::vector<DumpedToken> toks = dump(R"(call_extern("a\"b\\c\n\t", x);)");
  REQUIRE(toks.size() >= 3);
  CHECK(toks[2].kind == "STRING_LIT");
  Frontend fe("kernel k() grid(1) threads(32) { call_extern(\"f\\\"x\\\\y\\n\\tz\"); }");
  REQUIRE(fe.parse());
  auto *stmt = llvm::cast<CallStmt>(tlc::test::bodyOf(fe).at(0));
  auto *s = llvm::dyn_cast<StringLitExpr>(stmt->call->args.at(0).value);
  REQUIRE(s);
  CHECK(s->value == "f\"x\\y\n\tz");
  // Printing escapes it again.
  CHECK(toSource(s) == R"("f\"x\\y\n\tz")");
}

TEST_CASE("comments are on the hidden channel", "[lexer]") {
  std::vector<DumpedToken> toks = dump("a // line\n/* block\n * more */ b");
  REQUIRE(toks.size() == 5);
  CHECK(toks[1].kind == "LINE_COMMENT");
  CHECK(toks[1].hidden);
  CHECK(toks[2].kind == "BLOCK_COMMENT");
  CHECK(toks[2].hidden);
  CHECK((toks[3].kind == "IDENT" && toks[3].line == 3 && toks[3].col == 12));
  CHECK(toks[4].kind == "EOF");
  // `/**/` and `/***/` are complete comments; the parser never sees them.
  Frontend fe("const /**/ X /***/ = /* one */ 1 // trailing\n;");
  CHECK(fe.parse());
  CHECK(fe.errors() == 0);
}

TEST_CASE("token positions are line:col in bytes", "[lexer]") {
  std::vector<DumpedToken> toks = dump("const a = 0x1F;\n\tlet x\n\n   y");
  auto at = [&](size_t i) { return std::to_string(toks[i].line) + ":" + std::to_string(toks[i].col); };
  REQUIRE(toks.size() == 9);
  CHECK(at(0) == "1:1");
  CHECK(at(3) == "1:11");
  CHECK(at(4) == "1:15");
  CHECK(at(5) == "2:2"); // a tab is one byte
  CHECK(at(6) == "2:6");
  CHECK(at(7) == "4:4");
  CHECK(toks[8].kind == "EOF");
}

TEST_CASE("token positions after multi-byte UTF-8 in comments", "[lexer]") {
  // é is 2 bytes and 日本 is 6: ANTLR counts code points, SourceMgr counts bytes.
  std::string source = "// é\nx /* 日本 */ y // ü\nz";
  std::vector<DumpedToken> toks = dump(source);
  REQUIRE(toks.size() == 7);
  CHECK((toks[1].kind == "IDENT" && toks[1].line == 2 && toks[1].col == 1));
  CHECK((toks[2].kind == "BLOCK_COMMENT" && toks[2].col == 3));
  CHECK((toks[3].text == "y" && toks[3].line == 2 && toks[3].col == 16));
  CHECK((toks[4].kind == "LINE_COMMENT" && toks[4].col == 18));
  CHECK((toks[5].text == "z" && toks[5].line == 3 && toks[5].col == 1));
  // The comment's text is dumped escaped, byte by byte.
  CHECK(toks[2].text == R"(/* \346\227\245\346\234\254 */)");

  // Every visible token's position points at its own text in the source.
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  for (const DumpedToken &t : toks) {
    if (t.kind == "EOF" || t.hidden)
      continue;
    INFO(t.line << ":" << t.col << " " << t.text);
    CHECK(lines.at(t.line - 1).compare(t.col - 1, t.text.size(), t.text) == 0);
  }
}

TEST_CASE("errors after multi-byte UTF-8 point at the right byte column", "[lexer][parser]") {
  Frontend fe("/* ∑ */ const X = ;");
  CHECK_FALSE(fe.parse());
  // "/* ∑ */ " is 10 bytes (∑ is 3), so ';' is the 21st byte.
  CHECK(fe.says("test.tl:1:21: error: unexpected ';'"));
}

TEST_CASE("invalid characters are reported, each once", "[lexer]") {
  Frontend fe("const X = 1; #\nconst Y = $2;\nconst Z = 'c';\n");
  CHECK_FALSE(fe.parse());
  CHECK(fe.says("test.tl:1:14: error: invalid character '#'"));
  CHECK(fe.says("hint: comments start with // or /*"));
  CHECK(fe.says("test.tl:2:11: error: invalid character '$'"));
  CHECK(fe.says("test.tl:3:11: error: invalid character '''"));
  CHECK(fe.says("hint: strings use double quotes"));
  CHECK(fe.count("invalid character") == 4);
  // The parser does not report the stray characters a second time.
  CHECK(fe.count("unexpected") == 0);
  CHECK(fe.errors() == 4);
}

TEST_CASE("non-ASCII outside comments and strings", "[lexer]") {
  Frontend fe("const X = 1;\nconst é = 2;");
  CHECK_FALSE(fe.parse());
  CHECK(fe.says("test.tl:2:7: error: invalid character 'é'"));

  Frontend bad(llvm::StringRef("const X = 1;\n\xff\xfe;", 16));
  CHECK_FALSE(bad.parse());
  CHECK(bad.says("test.tl:2:1: error: invalid UTF-8 byte 0xff in source file"));
  CHECK(bad.errors() == 1);
  // A truncated sequence at the end of the file.
  Frontend cut(llvm::StringRef("// \xe6\x97", 5));
  CHECK_FALSE(cut.parse());
  CHECK(cut.says("test.tl:1:4: error: invalid UTF-8 byte 0xe6"));
}

TEST_CASE("unterminated string and comment", "[lexer]") {
  Frontend str("const X = 1;\ncall_extern(\"abc);\nconst Y = 2;");
  CHECK_FALSE(str.parse());
  CHECK(str.says("test.tl:2:13: error: unterminated string literal"));
  CHECK(str.says("add the closing '\"' on the same line"));

  Frontend cmt("const X = 1;\n  /* open\nconst Y = 2;\n");
  CHECK_FALSE(cmt.parse());
  CHECK(cmt.says("test.tl:2:3: error: unterminated /* comment"));
  CHECK(cmt.errors() == 1);

  // `/*/` opens a comment but does not close it.
  Frontend slash("const X = 1; /*/");
  CHECK_FALSE(slash.parse());
  CHECK(slash.says("unterminated /* comment"));
}

TEST_CASE("the generated lexer assigns literal token types", "[lexer]") {
  using tlc::grammar::TileLangLexer;
  antlr4::ANTLRInputStream input("a >> b >= c => [x] += 1");
  TileLangLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream stream(&lexer);
  stream.fill();
  std::vector<std::string> texts;
  for (antlr4::Token *t : stream.getTokens())
    if (t->getType() != antlr4::Token::EOF)
      texts.push_back(t->getText());
  // Longest match: `>>`, `>=`, `=>` and `+=` are single tokens.
  CHECK(texts == std::vector<std::string>{"a", ">>", "b", ">=", "c", "=>", "[", "x", "]", "+=", "1"});
  const antlr4::dfa::Vocabulary &vocab = lexer.getVocabulary();
  CHECK(vocab.getLiteralName(stream.get(1)->getType()) == "'>>'");
  CHECK(stream.get(0)->getType() == TileLangLexer::IDENT);
  CHECK(stream.get(10)->getType() == TileLangLexer::INT_LIT);
}
