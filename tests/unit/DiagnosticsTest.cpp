// Diagnostics: the `file:line:col: error: message` format with the source line and caret,
// notes and hints, the too-many-errors cut-off, and name suggestions.
#include "frontend/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

using namespace tlc;

namespace {

// A SourceMgr holding one buffer and an engine that prints into a string.
class Harness {
public:
  explicit Harness(llvm::StringRef text) : diags(sm, os) {
    id = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "input.tl"),
                               llvm::SMLoc());
    start = sm.getMemoryBuffer(id)->getBufferStart();
  }

  // The range of the first occurrence of `token` in the source.
  llvm::SMRange rangeOf(llvm::StringRef token) {
    size_t at = std::string(start).find(token.str());
    REQUIRE(at != std::string::npos);
    return {llvm::SMLoc::getFromPointer(start + at),
            llvm::SMLoc::getFromPointer(start + at + token.size())};
  }
  llvm::SMRange pointAt(llvm::StringRef token) {
    llvm::SMRange r = rangeOf(token);
    return {r.Start, r.Start};
  }

  std::string text() { return os.str(); }

  llvm::SourceMgr sm;
  std::string out;
  llvm::raw_string_ostream os{out};
  DiagnosticEngine diags;

private:
  unsigned id = 0;
  const char *start = nullptr;
};

unsigned occurrences(const std::string &haystack, llvm::StringRef needle) {
  unsigned n = 0;
  for (size_t at = haystack.find(needle.str()); at != std::string::npos;
       at = haystack.find(needle.str(), at + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("an error prints file:line:col, the source line and an underline", "[diagnostics]") {
  Harness h("const a = 1;\nlet value = oops + 1;\n");
  h.diags.error(h.rangeOf("oops"), "use of undeclared name 'oops'");
  CHECK(h.text() == "input.tl:2:13: error: use of undeclared name 'oops'\n"
                    "let value = oops + 1;\n"
                    "            ^~~~\n");
  CHECK(h.diags.errorCount() == 1);
  CHECK(h.diags.hasErrors());
}

TEST_CASE("a point location draws only the caret", "[diagnostics]") {
  Harness h("let x = 1\n");
  h.diags.error(h.pointAt("\n"), "expected ';' after '1'");
  CHECK(h.text() == "input.tl:1:10: error: expected ';' after '1'\n"
                    "let x = 1\n"
                    "         ^\n");
}

TEST_CASE("notes and hints follow their error", "[diagnostics]") {
  Harness h("let x = 1;\nlet x = 2;\n");
  llvm::SMRange second = {llvm::SMLoc::getFromPointer(h.rangeOf("x = 2").Start.getPointer()),
                          llvm::SMLoc::getFromPointer(h.rangeOf("x = 2").Start.getPointer() + 1)};
  h.diags.error(second, "redefinition of 'x'")
      .note(h.rangeOf("x"), "'x' was declared here")
      .hint("choose another name");
  std::string text = h.text();
  size_t err = text.find("input.tl:2:5: error: redefinition of 'x'");
  size_t note = text.find("input.tl:1:5: note: 'x' was declared here");
  size_t hint = text.find("hint: choose another name\n");
  REQUIRE(err != std::string::npos);
  REQUIRE(note != std::string::npos);
  REQUIRE(hint != std::string::npos);
  CHECK(err < note);
  CHECK(note < hint);
  // Notes do not count as errors.
  CHECK(h.diags.errorCount() == 1);
}

TEST_CASE("warnings and location-less errors", "[diagnostics]") {
  Harness h("let x = 1;\n");
  h.diags.warning(h.rangeOf("x"), "unused binding 'x'");
  CHECK(h.diags.errorCount() == 0);
  CHECK(h.text().rfind("input.tl:1:5: warning: unused binding 'x'\n", 0) == 0);
  h.diags.errorNoLocation("-D M=x: shape symbol 'M' expects an integer");
  CHECK(h.diags.errorCount() == 1);
  CHECK(llvm::StringRef(h.text()).endswith(
      "tlc: error: -D M=x: shape symbol 'M' expects an integer\n"));
}

TEST_CASE("the caret is aligned under lines with non-ASCII text", "[diagnostics]") {
  // é is two bytes but one column on the terminal.
  Harness h("x = é + bad; // naïve\n");
  h.diags.error(h.rangeOf("bad"), "use of undeclared name 'bad'");
  CHECK(h.text() == "input.tl:1:10: error: use of undeclared name 'bad'\n"
                    "x = é + bad; // naïve\n"
                    "        ^~~\n");
}

TEST_CASE("after too many errors the rest are counted but not printed", "[diagnostics]") {
  Harness h("a b c\n");
  const unsigned total = DiagnosticEngine::kMaxErrors + 10;
  for (unsigned i = 0; i < total; ++i)
    h.diags.error(h.rangeOf("b"), "error number " + std::to_string(i))
        .note(h.rangeOf("a"), "a note")
        .hint("a hint");
  std::string text = h.text();
  CHECK(h.diags.errorCount() == total);
  CHECK(occurrences(text, "input.tl:1:3: error:") == DiagnosticEngine::kMaxErrors);
  CHECK(occurrences(text, "note: a note") == DiagnosticEngine::kMaxErrors);
  CHECK(text.find("error number 24\n") != std::string::npos);
  CHECK(text.find("error number 25\n") == std::string::npos);
  CHECK(occurrences(text, "too many errors emitted (25), stopping here") == 1);
  CHECK(llvm::StringRef(text).endswith("stopping here; fix these first\n"));
}

TEST_CASE("closestMatch suggests near misses only", "[diagnostics]") {
  std::vector<std::string> names = {"scale", "block_M", "block_N", "transpose_B", "A_shared"};
  CHECK(closestMatch("scal", names) == "scale");
  CHECK(closestMatch("block_m", names) == "block_M");
  CHECK(closestMatch("blockM", names) == "block_M");
  CHECK(closestMatch("transpose_b", names) == "transpose_B");
  CHECK(closestMatch("A_sharde", names) == "A_shared");
  // Unrelated names and very short names get no suggestion.
  CHECK(closestMatch("pipeline", names).empty());
  CHECK(closestMatch("sx", {"s", "x", "sy"}).empty());
  CHECK(closestMatch("abc", {}).empty());
  // The nearest candidate wins, not the first close one.
  CHECK(closestMatch("abcdef", {"abcxyf", "abcdeg"}) == "abcdeg");
}
