// The target descriptors (compiler/target/descriptors/*.json), compiled into tlc by
// EmbedDescriptors.cmake.
#pragma once

#include <cstddef>

namespace tlc::target {

struct EmbeddedTarget {
  const char *fileName; // "h100-sxm.json"
  const char *json;
};

extern const EmbeddedTarget kBuiltinTargetFiles[];
extern const size_t kNumBuiltinTargetFiles;

} // namespace tlc::target
