// --emit=decl: a header with the declarations of the host entry points that `tlc FILE -o F.cu`
// (or `tlc -c FILE -o F.o`) defines with the same options, so that translation units compiled
// by a plain host compiler (g++, clang++, or a C compiler for the C entries) can call kernels
// that nvcc compiled elsewhere. It needs tlc/runtime.h (TensorView, Status: dependency-free
// without the CUDA runtime) and declares cudaStream_t itself, the way cuda_runtime.h does, so
// that including both is fine.
#include "codegen/CudaEmitter.h"

#include "codegen/HostLauncher.h"
#include "lower/Naming.h"

namespace tlc::codegen {

void emitDeclarations(const std::vector<KernelInput> &kernels, const std::vector<ShapeDispatch> &dispatches,
                      const EmitOptions &options, llvm::raw_ostream &os) {
  std::string ns = launcherNamespace(options), cPrefix = cEntryPrefix(options);
  std::vector<const lower::Launch *> entries = publicLaunches(kernels, dispatches);

  writeBanner(kernels, options, os);
  os << "//\n"
        "// Declarations of the host entry points that tlc's CUDA (HIP) for the same files and\n"
        "// options defines (`tlc FILE -o FILE.cu`, or `tlc -c FILE -o FILE.o`): include this header\n"
        "// from code a plain C or C++ compiler builds, and link with that object and the CUDA\n"
        "// runtime (-lcudart; HIP: -lamdhip64). The contract of each entry point: tlc/runtime.h.\n"
        "#pragma once\n\n"
        "#include \"tlc/runtime.h\"\n\n";
  bool hip = !entries.empty() && entries.front()->hip;
  os << "#ifdef __cplusplus\n"
     << (hip ? "// As hip_runtime_api.h declares it (a repeated typedef of the same type is allowed).\n"
               "typedef struct ihipStream_t *hipStream_t;\n\n"
             : "// As cuda_runtime.h declares it (a repeated typedef of the same type is allowed).\n"
               "typedef struct CUstream_st *cudaStream_t;\n\n")
     << "namespace " << ns << " {\n";
  for (const lower::Launch *k : entries) {
    os << "// kernel " << k->kernel << ": checks the tensors, binds shapes, launches on `stream`\n";
    // The one contract a caller cannot guess from the view's type: what a 4-bit view holds.
    for (const lower::HostParam &p : k->params)
      if (p.packed())
        os << "//   " << p.name << ": " << llvm::StringRef(p.dtype).drop_front(4).lower()
           << ", `data` its packed bytes (element 2c in the low nibble of byte c); shape and strides in\n"
              "//   4-bit elements, the innermost extent and the other strides even\n";
    os << launcherDecl(lower::cppName(k->kernel), LauncherSignature::of(*k), /*isInline=*/false) << ";\n";
  }
  os << "}  // namespace " << ns << "\n\n"
        "extern \"C\" {\n"
        "#endif\n\n"
        "// C entry points: 0, or a TLC_ERROR_* code and a message in `error`.\n";
  // Declared without cEntryDecl's `extern "C"`: they sit in an extern "C" block, which C code
  // does not see.
  for (const lower::Launch *k : entries)
    os << "int " << cPrefix << k->kernel << "(" << LauncherSignature::of(*k).c
       << "void* stream, char* error, size_t error_size);\n";
  os << "\n#ifdef __cplusplus\n"
        "}  // extern \"C\"\n"
        "#endif\n";
}

} // namespace tlc::codegen
