// Indented line writer of the generated C++, with the #line directives that attribute lines to
// the .tl source they come from (nvcc's errors, cuda-gdb and compute-sanitizer then name
// `gemm.tl:49`) and the rest back to the generated file itself.
#pragma once

#include "lower/Naming.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tlc::codegen {

class CodeWriter {
public:
  explicit CodeWriter(llvm::raw_ostream &os) : os(os) {}
  CodeWriter &line(const std::string &text = "") {
    if (lineDirectives && carriesCode(text))
      sync();
    if (text.empty())
      os << "\n";
    else
      os.indent(indent * 2) << text << "\n";
    // The compiler's idea of the next line's number moves on with every line, directives
    // aside (a directive numbers the line after it).
    if (presumedLine)
      presumedLine += 1 + unsigned(llvm::StringRef(text).count('\n'));
    return *this;
  }
  void open(const std::string &text) {
    line(text.empty() ? "{" : text + " {");
    ++indent;
  }
  void close(const std::string &suffix = "") {
    --indent;
    line("}" + suffix);
  }
  unsigned indent = 0;

  // #line directives: off unless set. The lines written next come from line `origin` of
  // `sourceFile` (a .tl path as given on the command line), or, with origin 0, from the
  // generated file itself.
  bool lineDirectives = false;
  std::string sourceFile;
  unsigned origin = 0;

  // A directive back to the generated file has to name the file's own line, which is known
  // only once the text before this writer's output is (the banner, the inlined library): it
  // is written as `#line ` + this placeholder, which resolveGeneratedLines fills in.
  static constexpr const char *kGeneratedLine = "\x01generated\x01";

private:
  // Only lines the compiler may attribute code to need their right line: blank lines,
  // comments, pragmas and an opening brace take whatever number they get. A closing brace
  // does need it (a loop's back edge, a function's return are placed there).
  static bool carriesCode(llvm::StringRef text) {
    text = text.trim();
    return !(text.empty() || text == "{" || text.startswith("//") || text.startswith("#pragma"));
  }
  // Writes the directive that makes the compiler's line the origin's, when it is not already;
  // in column 0, where the eye skips them and the code's indentation still reads.
  void sync() {
    if (!origin) {
      if (presumedLine) {
        os << "#line " << kGeneratedLine << "\n";
        presumedLine = 0;
      }
      return;
    }
    if (presumedLine == origin && presumedFile == sourceFile)
      return;
    os << "#line " << origin;
    if (!presumedLine || presumedFile != sourceFile)
      os << " \"" << lower::cEscaped(sourceFile) << "\"";
    os << "\n";
    presumedFile = sourceFile;
    presumedLine = origin;
  }
  llvm::raw_ostream &os;
  // Where the compiler places the next line: presumedFile:presumedLine after a directive to a
  // .tl file; 0 while it places lines in the generated file itself (the start, or after a
  // directive back to it).
  std::string presumedFile;
  unsigned presumedLine = 0;
};

// `text` (the whole generated file) with each `#line <kGeneratedLine>` naming the line after
// it and `fileName` (the output file as named on the command line, escaped).
inline std::string resolveGeneratedLines(llvm::StringRef text, llvm::StringRef fileName) {
  const std::string marker = std::string("#line ") + CodeWriter::kGeneratedLine;
  if (text.find(marker) == llvm::StringRef::npos)
    return text.str();
  const std::string name = " \"" + lower::cEscaped(fileName) + "\"";
  std::string out;
  out.reserve(text.size() + 64);
  unsigned number = 1;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    size_t at = line.find(marker);
    if (at == llvm::StringRef::npos)
      out += line;
    else
      out += (line.substr(0, at) + "#line " + std::to_string(number + 1) + name).str();
    if (text.size() > line.size())
      out += '\n';
    text = rest;
    ++number;
  }
  return out;
}

} // namespace tlc::codegen
