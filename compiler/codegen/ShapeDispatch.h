// The host-side dispatch of a kernel compiled in several variants (CudaEmitter.h,
// ShapeDispatch): a `<kernel>_variant(sizes...)` function that maps the dynamic sizes to a
// variant through a constexpr bucket table, and the launcher `<kernel>` that calls it.
#pragma once

#include "codegen/CodeWriter.h"
#include "codegen/CudaEmitter.h"

namespace tlc::codegen {

// `ns` is the enclosing namespace (calls to the variants are qualified by it).
void emitDispatcher(const ShapeDispatch &d, const std::string &ns, const std::string &cPrefix, bool inlineC,
                    CodeWriter &w);

} // namespace tlc::codegen
