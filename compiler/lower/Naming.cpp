#include "lower/Naming.h"

#include "frontend/CppNames.h"
#include "ir/FTG.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

namespace tlc::lower {

bool isReservedName(llvm::StringRef name) {
  return isReservedInGeneratedCode(name) || name.startswith("tl_") || name.startswith("u_") ||
         name == "stream" || name == "error" || name == "error_size" || name == "kAligned";
}

std::string cppName(llvm::StringRef userName) {
  return isReservedName(userName) ? ("u_" + userName).str() : userName.str();
}

std::string maskLiteral(uint64_t mask) { return "0x" + llvm::utohexstr(mask, /*LowerCase=*/true) + "ull"; }

std::string alignedRowsTest(uint64_t mask) {
  const std::string m = maskLiteral(mask);
  return "(" + alignedRowsParam() + " & " + m + ")" + (llvm::countPopulation(mask) > 1 ? " == " + m : " != 0");
}

std::string bufferName(const ftg::Buffer &b) { return b.decl ? cppName(b.name) : generatedName(b.name); }

std::string checkNamespace(llvm::StringRef ns) {
  std::string why = checkQualifiedName(ns, /*allowGlobal=*/false);
  if (!why.empty())
    return why;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  ns.split(parts, "::");
  for (llvm::StringRef p : parts)
    if (isReservedName(p))
      return "'" + p.str() + "' is reserved in the generated C++ (a keyword, or a name of the " +
             "CUDA, C or tlc headers)";
  return "";
}

std::string flatNamespace(llvm::StringRef ns) {
  std::string flat;
  for (llvm::StringRef rest = ns; !rest.empty();) {
    auto [part, tail] = rest.split("::");
    flat += (flat.empty() ? "" : "_") + part.str();
    rest = tail;
  }
  return flat;
}

std::string cEscaped(llvm::StringRef text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char ch = text[i];
    if (ch == '"' || ch == '\\' || (ch == '?' && i > 0 && text[i - 1] == '?'))
      out += {'\\', char(ch)};
    else if (ch >= 0x20 && ch < 0x7f)
      out += char(ch);
    else
      out += {'\\', char('0' + (ch >> 6)), char('0' + ((ch >> 3) & 7)), char('0' + (ch & 7))};
  }
  return out;
}

} // namespace tlc::lower
