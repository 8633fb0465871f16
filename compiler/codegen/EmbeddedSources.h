// The device library (stdlib/tl/*.h) and runtime/tlc/runtime.h, compiled into tlc so that a
// header-only kernel library or an object built with `tlc -c` needs nothing but the toolkit.
#pragma once

#include <cstddef>

namespace tlc::codegen {

struct EmbeddedFile {
  const char *path; // relative to the source tree, e.g. "stdlib/tl/mma.h"
  const char *text;
};

extern const EmbeddedFile kEmbeddedFiles[];
extern const size_t kNumEmbeddedFiles;

} // namespace tlc::codegen
