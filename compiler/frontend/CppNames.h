// What C++ reserves, as nvcc compiles the CUDA that tlc generates: the identifier syntax,
// the keywords (C++20, with the alternative tokens and the identifiers with a special
// meaning), the CUDA built-in variables, and the names the included headers own (the
// namespaces tl, tlc and std, the C types and macros of <cstdint>, <string>, <algorithm> and
// cuda_runtime.h). Sema checks call_extern's name with it, the driver checks --namespace, and
// lower/Naming.h keeps user names out of all of it.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace tlc {

// [A-Za-z_][A-Za-z0-9_]*
bool isCppIdentifier(llvm::StringRef s);

// A keyword or an alternative token (`and`, `not`, ...) of C++20, or an identifier with a
// special meaning (`final`, `override`, `import`, `module`); such a name cannot be a variable.
bool isCppKeyword(llvm::StringRef s);

// True when `s`, declared as a variable, parameter or function in generated code, could
// break it: a keyword, a name of the implementation (leading underscore, `__`), a CUDA
// built-in or library name, a macro of the included headers (every all-caps name counts:
// macros are spelled so), or a name generated code refers to unqualified (`int64_t`, `dim3`,
// `cudaGetLastError`, `tl`, `tlc`, `std`, ...).
bool isReservedInGeneratedCode(llvm::StringRef s);

// Why `s` is not a C++ qualified name `a::b::c` (each part an identifier and not a keyword;
// a leading `::` is allowed when `allowGlobal`); empty when it is one.
std::string checkQualifiedName(llvm::StringRef s, bool allowGlobal);

} // namespace tlc
