// The target descriptors (compiler/recommend/targets/*.json), compiled into tlc by
// EmbedTargets.cmake.
#pragma once

#include <cstddef>

namespace tlc::recommend {

struct EmbeddedTarget {
  const char *fileName; // "h100-sxm.json"
  const char *json;
};

extern const EmbeddedTarget kBuiltinTargetFiles[];
extern const size_t kNumBuiltinTargetFiles;

} // namespace tlc::recommend
