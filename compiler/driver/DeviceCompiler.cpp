#include "driver/DeviceCompiler.h"

#include "driver/Compilation.h"
#include "driver/OutputFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdlib>

namespace tlc::driver {

namespace {

// The compiler `name` (nvcc, hipcc): the one requested, else $HOME_VAR/bin/NAME, NAME on PATH,
// `fallback`.
std::string findCompiler(const std::string &requested, const char *name, const char *homeVar, const char *fallback) {
  if (!requested.empty())
    return requested;
  if (const char *home = std::getenv(homeVar)) {
    llvm::SmallString<256> p(home);
    llvm::sys::path::append(p, "bin", name);
    if (llvm::sys::fs::can_execute(p))
      return std::string(p);
  }
  if (auto onPath = llvm::sys::findProgramByName(name))
    return *onPath;
  if (llvm::sys::fs::can_execute(fallback))
    return fallback;
  return "";
}

// Removes a temporary file when it goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

} // namespace

int compileWithNvcc(const std::function<std::string(const std::string &sourcePath)> &generate,
                    const std::string &target, const std::string &output, const NvccOptions &options) {
  const std::string &requested = options.hip ? options.hipcc : options.nvcc;
  auto error = [](const llvm::Twine &msg) {
    llvm::WithColor::error(llvm::errs(), "tlc") << msg << "\n";
  };
  // `nvcc` below is the device compiler: nvcc, or hipcc for HIP.
  std::string name = options.hip ? "hipcc" : "nvcc";
  std::string nvcc = options.hip ? findCompiler(requested, "hipcc", "ROCM_PATH", "/opt/rocm/bin/hipcc")
                                 : findCompiler(requested, "nvcc", "CUDA_HOME", "/usr/local/cuda/bin/nvcc");
  if (nvcc.empty() || !llvm::sys::fs::can_execute(nvcc)) {
    error(requested.empty() ? options.hip ? "cannot find hipcc: set ROCM_PATH, put hipcc on PATH, or pass --hipcc"
                                          : "cannot find nvcc: set CUDA_HOME, put nvcc on PATH, or pass --nvcc"
                            : "--" + name + " " + requested + " is not an executable");
    return kUsageError;
  }
  TempFile cu, log;
  if (llvm::sys::fs::createTemporaryFile(options.hip ? "tlc-hipcc" : "tlc-nvcc", "log", log.path)) {
    error("cannot create a temporary file for nvcc");
    return kUsageError;
  }
  std::string sourcePath = options.savedSource;
  if (sourcePath.empty()) {
    int fd;
    if (llvm::sys::fs::createTemporaryFile("tlc", options.hip ? "hip" : "cu", fd, cu.path)) {
      error("cannot create a temporary file for nvcc");
      return kUsageError;
    }
    sourcePath = std::string(cu.path);
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << generate(sourcePath);
  } else if (!writeOutput(sourcePath, generate(sourcePath), "tlc")) {
    return kInputError; // writeOutput said why
  }
  std::string arch = (options.hip ? "--offload-arch=" : "-arch=") + target;
  std::vector<llvm::StringRef> args = {nvcc, "-std=c++17", "-O3", arch, "-x", options.hip ? "hip" : "cu",
                                       "-c", sourcePath, "-o", output};
  for (const std::string &a : options.extraArgs)
    args.push_back(a);
  if (options.verbose) {
    // Copyable into a shell: quoted only where an argument needs it.
    for (size_t i = 0; i < args.size(); ++i) {
      llvm::errs() << (i ? " " : "");
      bool plain = !args[i].empty() && llvm::all_of(args[i], [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || llvm::StringRef("_./=+:,@%-").contains(c);
      });
      llvm::sys::printArg(llvm::errs(), args[i], /*Quote=*/!plain);
    }
    llvm::errs() << "\n";
  }
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::None, llvm::StringRef(log.path),
                                                 llvm::StringRef(log.path)};
  std::string errMsg;
  int rc = llvm::sys::ExecuteAndWait(nvcc, args, llvm::None, redirects, 0, 0, &errMsg);
  if (auto text = llvm::MemoryBuffer::getFile(log.path))
    llvm::errs() << (*text)->getBuffer();
  if (rc < 0) {
    error("cannot run " + nvcc + ": " + errMsg);
    return kUsageError;
  }
  if (rc != 0) {
    error(name + " failed (exit code " + std::to_string(rc) + ") compiling the generated code");
    return kInputError;
  }
  return kSuccess;
}

} // namespace tlc::driver
