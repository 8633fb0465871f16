// libFuzzer target over the whole compiler: the input is a .tl file fed through the entry
// points the `tlc` driver uses (driver::Compilation for parse, `auto` parameters, Sema, the
// FTG, tile inference and CUDA generation; driver::runRecommend for `tlc recommend`). The
// first byte picks what to run and how, the rest is the source:
//
//   byte 0, bits 0-2  mode: 0-3 compile to CUDA, 4 a header library, 5 the inferred FTG and
//                     its layouts drawn (--emit=layout-svg), 6 the typed AST, 7 `tlc recommend`
//                     (with --plot)
//   bit 3             target sm_80 instead of sm_90a
//   bit 4             --verbose (the recommender's notes); recommend: --show-illegal
//   bits 5-7          recommend: --format json, --explain, --only-auto; they also pick the
//                     kernel to tune (the k-th `kernel NAME` of the text, k = bits 5-7)
//
// The source goes through a memfd (/proc/self/fd/N), so nothing is written to disk; the
// generated text goes to a string. A crash, a sanitizer report, a timeout (-timeout=) or an
// out-of-memory (-rss_limit_mb=) is a finding: tests/fuzz/README.md says how to run it and
// how a finding becomes a regression test.
#include "codegen/CudaEmitter.h"
#include "driver/Compilation.h"
#include "driver/LargeStack.h"
#include "driver/Options.h"
#include "driver/RecommendCommand.h"
#include "pictures/LayoutSvg.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// One in-memory file, rewritten for every input.
const std::string &sourcePath(const uint8_t *data, size_t size) {
  static int fd = memfd_create("input.tl", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0)
    std::abort(); // the fuzzer cannot run at all without it
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size))
    std::abort();
  return path;
}

// The k-th kernel name of the text (a cheap scan; a wrong guess is a usage error, also fine).
std::string kernelName(llvm::StringRef text, unsigned k) {
  std::string last;
  for (size_t at = text.find("kernel "); at != llvm::StringRef::npos;
       at = text.find("kernel ", at + 1)) {
    llvm::StringRef name = text.substr(at + 7).ltrim().take_while([](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (name.empty())
      continue;
    last = name.str();
    if (k-- == 0)
      break;
  }
  return last;
}

void compile(const std::string &path, uint8_t flags) {
  using namespace tlc;
  driver::Options opts;
  static const char *kEmit[] = {"cuda", "cuda", "cuda", "cuda", "header", "inferred", "ast"};
  opts.emit = kEmit[flags & 7];
  opts.target = flags & 8 ? "sm_80" : "sm_90a";
  opts.verbose = flags & 16;
  opts.inputs = {path};
  std::vector<Define> defines;
  std::string text;
  llvm::raw_string_ostream out(text);
  driver::Compilation compilation(opts, defines);
  if (compilation.addFile(path, out) != driver::kSuccess)
    return;
  if (opts.emit == "inferred")
    pictures::writeLayoutSvg(compilation.graphs(), out);
  if (!compilation.needsCodegen())
    return;
  codegen::EmitOptions emit;
  emit.target = opts.target;
  emit.header = opts.emit == "header";
  emit.selfContained = emit.header;
  codegen::emitCuda(compilation.kernels(), compilation.dispatches(), emit, out);
}

void recommend(const std::string &path, llvm::StringRef source, uint8_t flags) {
  tlc::driver::RecommendArgs args;
  args.input = path;
  args.kernel = kernelName(source, flags >> 5);
  args.target = flags & 8 ? "sm_80" : "sm_90a";
  args.format = flags & 32 ? "json" : "table";
  args.explain = flags & 64;
  args.onlyAuto = flags & 128;
  args.showIllegal = flags & 16;
  args.top = 3;
  args.output = "/dev/null";
  args.plot = "/dev/null";
  tlc::driver::runRecommend(args);
}

struct Input {
  const uint8_t *data;
  size_t size;
};

void *runOne(void *p) {
  const Input &in = *static_cast<Input *>(p);
  uint8_t flags = in.data[0];
  const std::string &path = sourcePath(in.data + 1, in.size - 1);
  llvm::StringRef source(reinterpret_cast<const char *>(in.data + 1), in.size - 1);
  try {
    if ((flags & 7) == 7)
      recommend(path, source, flags);
    else
      compile(path, flags);
  } catch (const std::exception &e) {
    // tlc reports these as internal errors (exit 3): a finding all the same.
    llvm::errs() << "tlc-fuzz: uncaught exception: " << e.what() << "\n";
    std::abort();
  }
  return nullptr;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  // On the driver's large stack: the recursion limits assume it.
  Input in{data, size};
  tlc::driver::runOnLargeStack(runOne, &in);
  return 0;
}
