// Inlining of the device library for self-contained output (header-only libraries, tlc -c).
#include "codegen/CudaEmitter.h"
#include "codegen/EmbeddedSources.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Path.h"

#include <regex>

namespace tlc::codegen {

namespace {

const EmbeddedFile *findFile(llvm::StringRef path) {
  for (size_t i = 0; i < kNumEmbeddedFiles; ++i)
    if (path == kEmbeddedFiles[i].path)
      return &kEmbeddedFiles[i];
  return nullptr;
}

// Library headers a piece of generated code calls into, by the names it uses.
std::vector<std::string> directNeeds(const std::string &code, bool hip) {
  static const std::pair<const char *, const char *> uses[] = {
      {"tl::gemm_", "stdlib/tl/gemm.h"},         {"tl::swizzle_blocks", "stdlib/tl/gemm.h"},
      {"tl::wgmma::", "stdlib/tl/wgmma.h"},      {"tl::tma::", "stdlib/tl/tma.h"},
      {"tl::mbarrier::", "stdlib/tl/mbarrier.h"}, {"tl::barrier_sync", "stdlib/tl/barrier.h"},
      {"tlc::tma::", "runtime/tlc/tma.h"},
      {"tl::cp_async", "stdlib/tl/cp_async.h"},  {"tl::copy_vec", "stdlib/tl/memory.h"},
      {"Op::", "stdlib/tl/reduce.h"},            {"tl::detail::warp_combine", "stdlib/tl/reduce.h"},
      {"tl::atomic_add", "stdlib/tl/atomic.h"},  {"tl::convert", "stdlib/tl/dtypes.h"},
      {"tl::inf", "stdlib/tl/math.h"},           {"tl::exp", "stdlib/tl/math.h"},
      {"tl::log", "stdlib/tl/math.h"},           {"tl::sqrt", "stdlib/tl/math.h"},
      {"tl::rsqrt", "stdlib/tl/math.h"},         {"tl::tanh", "stdlib/tl/math.h"},
      {"tl::sigmoid", "stdlib/tl/math.h"},       {"tl::max", "stdlib/tl/math.h"},
      {"tl::min", "stdlib/tl/math.h"},           {"tl::abs", "stdlib/tl/math.h"},
      {"tl::ceildiv", "stdlib/tl/common.h"},     {"tl::f16", "stdlib/tl/common.h"},
      {"tl::bit_cast", "stdlib/tl/common.h"},    {"TL_ASSUME", "stdlib/tl/common.h"},
      {"tl::dequant_i4x8", "stdlib/tl/dequant.h"},
      {"tl::floordiv", "stdlib/tl/common.h"},    {"tl::floormod", "stdlib/tl/common.h"},
      {"tlc::", "runtime/tlc/runtime.h"},
  };
  std::vector<std::string> out;
  auto need = [&](const char *file) {
    // HIP's gemm is the MFMA one (stdlib/tl/hip/gemm.h); the other headers serve both.
    if (hip && llvm::StringRef(file) == "stdlib/tl/gemm.h")
      out.push_back("stdlib/tl/hip/gemm.h");
    else
      out.push_back(file);
  };
  // Every function a library header defines at the start of a line (`TL_DEVICE ... name(`),
  // qualified by the namespaces open there (`namespace x {` ... `}  // namespace x` lines)
  // and called as `tl::...::name(` or `<`: the table above need not list each one (a
  // persistent kernel's tl::persistent_tile, in gemm.h, was missed, and every persistent
  // kernel failed to compile under -c and --emit=header).
  static const std::vector<std::pair<std::string, const char *>> defined = [] {
    std::vector<std::pair<std::string, const char *>> names;
    for (size_t i = 0; i < kNumEmbeddedFiles; ++i) {
      llvm::StringRef path = kEmbeddedFiles[i].path;
      if (!path.startswith("stdlib/tl/") || path.drop_front(10).contains('/'))
        continue;
      std::vector<std::string> open;
      for (llvm::StringRef rest = kEmbeddedFiles[i].text; !rest.empty();) {
        auto [line, tail] = rest.split('\n');
        rest = tail;
        llvm::StringRef t = line.trim();
        if (t.consume_front("namespace ") && t.consume_back(" {")) {
          open.push_back(t.str());
        } else if (t.startswith("}") && t.contains("// namespace")) {
          if (!open.empty())
            open.pop_back();
        } else if (line.startswith("TL_DEVICE ")) {
          llvm::StringRef head = line.split('(').first.rtrim();
          size_t start = head.find_last_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
          llvm::StringRef name = head.drop_front(start == llvm::StringRef::npos ? 0 : start + 1);
          if (!name.empty() && !open.empty() && open.front() == "tl" && line.contains('(')) {
            std::string q;
            for (const std::string &ns : open)
              q += ns + "::";
            names.push_back({q + name.str(), kEmbeddedFiles[i].path});
          }
        }
      }
    }
    return names;
  }();
  for (const auto &[name, file] : defined)
    for (const char *after : {"(", "<"})
      if (code.find(name + after) != std::string::npos) {
        need(file);
        break;
      }
  for (const auto &[needle, file] : uses)
    if (code.find(needle) != std::string::npos) {
      need(file);
    }
  return out;
}

std::string guardName(llvm::StringRef path) {
  std::string g = "TLC_INLINED_";
  for (char c : path)
    g += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  return g;
}

class Inliner {
public:
  // Emits `path` after the library headers it includes, each once.
  void add(const std::string &path) {
    if (!done.insert(path).second)
      return;
    const EmbeddedFile *f = findFile(path);
    if (!f)
      return;
    // A library include, possibly followed by a comment that says why
    // (tl/hip/gemm.h: `#include "../gemm.h"  // its block rasterization ...`).
    static const std::regex include(R"(^\s*#\s*include\s+"([^"]+)\"\s*(//.*)?$)");
    std::string body;
    llvm::StringRef text(f->text);
    llvm::StringRef dir = llvm::StringRef(path).rsplit('/').first;
    while (!text.empty()) {
      auto [line, rest] = text.split('\n');
      text = rest;
      std::smatch m;
      std::string l = line.str();
      if (std::regex_match(l, m, include)) {
        // "../common.h" from stdlib/tl/hip/: the embedded files are named without dots.
        llvm::SmallString<128> included(dir);
        llvm::sys::path::append(included, llvm::sys::path::Style::posix, m[1].str());
        llvm::sys::path::remove_dots(included, /*remove_dot_dot=*/true, llvm::sys::path::Style::posix);
        add(std::string(included));
        continue;
      }
      if (llvm::StringRef(l).trim() == "#pragma once")
        continue;
      body += l + "\n";
    }
    std::string guard = guardName(path);
    out += "// ---- " + path + " (inlined by tlc)\n#ifndef " + guard + "\n#define " + guard + "\n" +
           body + "#endif  // " + guard + "\n\n";
  }
  std::string out;

private:
  llvm::StringSet<> done;
};

} // namespace

std::string inlineLibrary(const std::string &code, bool hip) {
  Inliner inliner;
  for (const std::string &file : directNeeds(code, hip))
    inliner.add(file);
  return inliner.out;
}

} // namespace tlc::codegen
