#include "frontend/CppNames.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cctype>

namespace tlc {

namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

const llvm::StringSet<> &keywords() {
  static const llvm::StringSet<> set = {
      // C++20 keywords ([lex.key]), alternative tokens ([lex.digraph]) included.
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      // Identifiers with a special meaning, and keywords of GNU C++ (nvcc's host compiler) and
      // of the transactional-memory and reflection technical specifications.
      "final", "override", "import", "module", "typeof", "restrict", "atomic_cancel",
      "atomic_commit", "atomic_noexcept", "synchronized", "transaction_safe",
      "transaction_safe_dynamic", "reflexpr"};
  return set;
}

// Names generated code or its headers use unqualified, or that headers define as lower-case
// macros (glibc's, as included by <string> and cuda_runtime.h).
const llvm::StringSet<> &libraryNames() {
  static const llvm::StringSet<> set = {
      // Namespaces of the device library, the runtime and the standard library.
      "tl", "tlc", "std", "nvcuda", "cooperative_groups", "cub", "thrust",
      // CUDA built-in variables and types.
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "half", "half2",
      // The program's entry point.
      "main",
      // Lower-case macros of the C library and of GNU systems.
      "alloca", "assert", "assert_perror", "errno", "offsetof", "math_errhandling", "stdin",
      "stdout", "stderr", "strdupa", "strndupa", "isascii", "toascii", "issubnormal", "isnan",
      "isinf", "isfinite", "isnormal", "signbit", "fpclassify", "isgreater", "isgreaterequal",
      "isless", "islessequal", "islessgreater", "isunordered", "iscanonical", "issignaling",
      "iszero", "setjmp", "va_arg", "va_start", "va_end", "va_copy", "major", "minor",
      "makedev", "linux", "unix", "i386", "complex", "imaginary", "L_ctermid", "L_cuserid",
      "L_tmpnam", "P_tmpdir", "be16toh", "be32toh", "be64toh", "le16toh", "le32toh", "le64toh",
      "htobe16", "htobe32", "htobe64", "htole16", "htole32", "htole64",
      // All-caps macros without an underscore (those with one are caught by shape).
      "EOF", "NAN", "NULL", "INFINITY", "BUFSIZ", "MAXFLOAT", "NFDBITS", "NZERO", "HUGE",
      "CUDARTAPI", "WCONTINUED", "WEOF", "WEXITED", "WEXITSTATUS", "WIFCONTINUED", "WIFEXITED",
      "WIFSIGNALED", "WIFSTOPPED", "WNOHANG", "WNOWAIT", "WSTOPPED", "WSTOPSIG", "WTERMSIG",
      "WUNTRACED"};
  return set;
}

// CUDA vector types: char1..4, uchar1..4, ..., longlong4, double4.
bool isVectorType(llvm::StringRef s) {
  if (s.size() < 2 || s.back() < '1' || s.back() > '4')
    return false;
  llvm::StringRef base = s.drop_back();
  base.consume_front("u");
  return base == "char" || base == "short" || base == "int" || base == "long" ||
         base == "longlong" || base == "float" || base == "double";
}

// Shapes of macro names: errno codes (E2BIG, EINVAL, ...), signalling NaNs (SNANF32), and any
// upper-case word followed by an underscore and an upper-case letter or digit (INT32_MAX,
// M_PI, SEEK_SET, TLC_F16, TL_DEVICE, CUDART_INF_F, NV_HAS_FEATURE_SM_90a).
bool looksLikeMacro(llvm::StringRef s) {
  auto upperOrDigit = [](char c) {
    return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c));
  };
  if (s.size() >= 2 && s[0] == 'E' && llvm::all_of(s.drop_front(), upperOrDigit))
    return true;
  if (s.startswith("SNAN") && llvm::all_of(s, upperOrDigit))
    return true;
  size_t i = 0;
  while (i < s.size() && upperOrDigit(s[i]))
    ++i;
  return i > 0 && std::isupper(static_cast<unsigned char>(s[0])) && i + 1 < s.size() &&
         s[i] == '_' && upperOrDigit(s[i + 1]);
}

} // namespace

bool isCppIdentifier(llvm::StringRef s) {
  return !s.empty() && isIdentStart(s[0]) && llvm::all_of(s, isIdentChar);
}

bool isCppKeyword(llvm::StringRef s) { return keywords().contains(s); }

bool isReservedInGeneratedCode(llvm::StringRef s) {
  // The implementation's names: a leading underscore (at global scope; `_Bool`, `_Pragma`) or
  // a double underscore anywhere (`__global__`, `__syncthreads`).
  if (s.startswith("_") || s.contains("__"))
    return true;
  // Types (int64_t, size_t, cudaStream_t: POSIX reserves the suffix), the CUDA runtime and
  // driver APIs, the C entry points and runtime types of tlc, and CUDA's bf16 types.
  if (s.endswith("_t") || s.startswith("cuda") || s.startswith("tlc_") || s.startswith("nv_") ||
      (s.size() > 2 && s.startswith("cu") && std::isupper(static_cast<unsigned char>(s[2]))))
    return true;
  return isCppKeyword(s) || libraryNames().contains(s) || isVectorType(s) || looksLikeMacro(s);
}

std::string checkQualifiedName(llvm::StringRef s, bool allowGlobal) {
  llvm::StringRef rest = s;
  if (allowGlobal)
    rest.consume_front("::");
  if (rest.empty())
    return "it is empty";
  while (true) {
    auto [part, tail] = rest.split("::");
    if (!isCppIdentifier(part))
      return part.empty() ? "'::' must separate two names"
                          : "'" + part.str() + "' is not a C++ identifier (letters, digits and "
                                               "'_', not starting with a digit)";
    if (isCppKeyword(part))
      return "'" + part.str() + "' is a C++ keyword";
    if (tail.data() == nullptr) // no further "::"
      return "";
    rest = tail;
  }
}

} // namespace tlc
