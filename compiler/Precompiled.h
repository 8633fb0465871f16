// The standard and LLVM headers that most of tlc's sources include, precompiled once for all
// of the compiler's libraries (compiler/CMakeLists.txt). Parsing these ~95k lines was about a
// third of each file's compile time, and CI builds the compiler twice (g++ and the fuzzer's
// clang) on two cores. Sources still include what they use; this list only saves parsing.
#pragma once
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
