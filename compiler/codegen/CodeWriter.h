// Indented line writer of the generated C++.
#pragma once

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tlc::codegen {

class CodeWriter {
public:
  explicit CodeWriter(llvm::raw_ostream &os) : os(os) {}
  CodeWriter &line(const std::string &text = "") {
    if (text.empty())
      os << "\n";
    else
      os.indent(indent * 2) << text << "\n";
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

private:
  llvm::raw_ostream &os;
};

} // namespace tlc::codegen
