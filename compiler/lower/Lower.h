// The lowering stage: an inferred FTG (ir/FTG.h) becomes the loop IR of its kernel
// (lower/LoopIR.h), on which the loop passes run. codegen/ prints the result.
#pragma once

#include "frontend/Diagnostics.h"
#include "ir/FTG.h"
#include "lower/LoopIR.h"

#include <memory>
#include <string>

namespace tlc::lower {

// Lowers one kernel and runs the passes (PipelineExpansion, SyncInsertion, ProxyFences). Returns null after reporting the
// constructs the back end cannot lower (all of them, not only the first).
// `printAfterAll` (--print-after-all) gets the loop IR after lowering and after each pass.
std::unique_ptr<Kernel> lowerKernel(ftg::Graph &g, DiagnosticEngine &diags, const std::string &sourceName,
                                    llvm::raw_ostream *printAfterAll = nullptr);

// PersistentTiles (PersistentTiles.cpp), before PipelineExpansion: a `persistent()` kernel's
// bodies loop over the grid's tiles. Returns why the warp-specialized variant cannot, or "".
std::string makePersistent(Kernel &k);

// PipelineExpansion (PipelineExpansion.cpp): every pipelined loop becomes prologue, steady
// state and epilogue, with the stage index of every access filled in.
void expandPipelines(Kernel &k);

// SyncInsertion (SyncInsertion.cpp): places __syncthreads from the access sets of the
// statements, wherever a shared buffer is read after another thread wrote it or written
// while another thread may still use it. Returns why a barrier could only go where the
// kernel's own named barriers make it deadlock (empty: placed).
std::string insertBarriers(Kernel &k);

// ProxyFences (ProxyFences.cpp): in a kernel that issues wgmma (whose shared operands are read
// through the async proxy), every barrier is preceded by fence.proxy.async.
void insertProxyFences(Kernel &k);
// SplitBarriers (after SyncInsertion): in a loop whose statements run partly on the block's
// first T threads (a gemm with `threads = T`), a barrier that one side of the split needs
// only to pass on becomes an arrive there (bar.arrive) and a wait on the other side, on a
// named barrier of its own from `freeIds` (ids no other barrier of the kernel takes).
void splitSubsetBarriers(Kernel &k, std::vector<int> freeIds);

// WarpSpecialization (WarpSpecialization.cpp): in the warp-specialized variant, the barriers
// after the producer warpgroup's branch synchronize the consumers only (named barrier 1).
void nameConsumerBarriers(Kernel &k);

// The C++ spelling of TileLang element types.
std::string cppType(DType t);
std::string cppType(Type t);
// The C dtype code of runtime/tlc/runtime.h.
std::string runtimeDType(DType t);

} // namespace tlc::lower
