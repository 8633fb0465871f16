// Host launchers: for each kernel a typed C++ function and a C entry point that check the
// tensors against everything the kernel assumes (rank, dtype, shapes, element alignment,
// contiguity, outputs with distinct addresses that overlap no other tensor, sizes within the
// kernel's 32-bit index arithmetic), bind the shape symbols, check the device, choose the
// aligned or scalar kernel instantiation, size the grid, raise the dynamic shared-memory limit
// when needed (once per device), and launch. Errors come back as tlc::Status; the argument checks come before
// any CUDA call.
#include "codegen/HostLauncher.h"

#include "lower/Naming.h"

#include "llvm/ADT/STLExtras.h"

namespace tlc::codegen {

using lower::cppName;
using lower::generatedName;
using lower::HostParam;
using lower::Launch;

namespace {

// What the kernel assumes beyond each tensor's own shape: outputs have distinct addresses
// and share memory with no other tensor, and sizes fit the kernel's 32-bit index arithmetic.
void emitMemoryChecks(const Launch &k, CodeWriter &w) {
  std::vector<const HostParam *> tensors;
  for (const HostParam &p : k.params)
    if (!p.scalar)
      tensors.push_back(&p);
  std::string headroom = std::to_string(k.headroom);
  w.line("// 32-bit index arithmetic: extents up to 2^31 - " + headroom + " (tiles of up to " + headroom +
         " elements).");
  for (const HostParam *p : tensors)
    w.line("if (!(tl_status = tlc::check::indexRange(tl_name, \"" + p->name + "\", " + p->cpp + ", " + headroom +
           "))) return tl_status;");
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i]->isOut)
      continue;
    const std::string &o = tensors[i]->name, &oArg = tensors[i]->cpp;
    w.line("if (!(tl_status = tlc::check::writable(tl_name, \"" + o + "\", " + oArg + "))) return tl_status;");
    for (size_t j = 0; j < tensors.size(); ++j)
      if (j != i && !(tensors[j]->isOut && j < i)) { // each pair of outputs once
        const HostParam *other = tensors[j];
        w.line("if (!(tl_status = tlc::check::disjoint(tl_name, \"" + o + "\", " + oArg + ", \"" + other->name +
               "\", " + other->cpp + ", " + (other->isOut ? "true" : "false") + "))) return tl_status;");
      }
  }
}

} // namespace

std::string runtimeName(const Launch &k, const std::string &cudaName) {
  if (!k.hip)
    return cudaName;
  size_t at = cudaName.find("cuda");
  return cudaName.substr(0, at) + "hip" + cudaName.substr(at + 4);
}

LauncherSignature LauncherSignature::of(const Launch &k) {
  LauncherSignature s;
  s.stream = runtimeName(k, "cudaStream_t");
  for (const HostParam &p : k.params) {
    const std::string &n = p.cpp;
    if (p.scalar) {
      s.cpp += p.hostType + " " + n + ", ";
      s.c += p.hostType + " " + n + ", ";
      s.forward += n + ", ";
      s.fromC += n + ", ";
    } else {
      s.cpp += "const tlc::TensorView& " + n + ", ";
      s.c += "const tlc_tensor_view* " + n + ", ";
      s.forward += n + ", ";
      s.fromC += "*" + n + ", ";
      s.nullCheck += (s.nullCheck.empty() ? "" : " || ") + std::string("!") + n;
    }
  }
  return s;
}

std::string launcherDecl(const std::string &name, const LauncherSignature &sig, bool isInline) {
  return std::string(isInline ? "inline " : "") + "tlc::Status " + name + "(" + sig.cpp + sig.stream + " stream = 0)";
}

std::string cEntryDecl(const std::string &cName, const LauncherSignature &sig, bool isInline) {
  return std::string("extern \"C\" ") + (isInline ? "inline " : "") + "int " + cName + "(" + sig.c +
         "void* stream, char* error, size_t error_size)";
}

void emitCEntry(const Launch &k, const LauncherSignature &sig, const std::string &launcher,
                const std::string &cName, bool inlineC, CodeWriter &w) {
  w.line("// C entry point (ABI in tlc/runtime.h): returns 0, or a code and a message in `error`.");
  std::string cDecl = cEntryDecl(cName, sig, inlineC);
  w.line(cDecl + ";");
  w.open(cDecl);
  if (!sig.nullCheck.empty())
    w.line("if (" + sig.nullCheck + ") return tlc::Status::error(TLC_ERROR_INVALID_ARGUMENT, \"" + k.kernel +
           ": a tensor argument is null\").toC(error, error_size);");
  w.line("return " + launcher + "(" + sig.fromC + "static_cast<" + sig.stream + ">(stream)).toC(error, error_size);");
  w.close();
}

void emitLauncher(const lower::Kernel &kernel, const std::string &ns, const std::string &cPrefix, bool inlineC,
                  CodeWriter &w, bool emulate) {
  const Launch &k = kernel.launch;
  // Names (Naming.h): the launcher's locals are tl_*, the user's names go through cppName.
  std::string name = cppName(kernel.symbol);
  auto bound = [](llvm::StringRef symbol) { return generatedName(symbol + "_bound"); };
  LauncherSignature sig = LauncherSignature::of(k);
  w.line("// Launcher of '" + kernel.symbol + "': checks the tensors, binds shapes, launches on `stream`.");
  w.open(launcherDecl(name, sig, inlineC));
  w.line("const char* tl_name = \"" + k.kernel + "\";");
  w.line("tlc::Status tl_status;");
  w.line(std::string("[[maybe_unused]] bool ") + lower::kZeroDivisorFlag +
         " = false;  // set by launch arithmetic that divides by zero");
  for (const HostParam &p : k.params)
    if (!p.scalar)
      w.line("if (!(tl_status = tlc::check::tensor(tl_name, \"" + p.name + "\", &" + p.cpp + ", " +
             std::to_string(p.symbol.size()) + ", " + p.dtype + "))) return tl_status;");
  for (const HostParam &p : k.params)
    if (p.packed())
      w.line("if (!(tl_status = tlc::check::packed(tl_name, \"" + p.name + "\", " + p.cpp + "))) return tl_status;");
  // Shape symbols: bound by the first dimension that names them, checked at the others.
  for (const lower::HostShapeSymbol &s : k.symbols) {
    std::string b = bound(s.name);
    w.line("int64_t " + s.cpp + " = 0; bool " + b + " = false;");
    if (!s.constant.empty())
      w.line(s.cpp + " = " + s.constant + "; " + b + " = true;  // bound by -D at compile time");
  }
  std::vector<std::pair<const HostParam *, size_t>> derived;
  for (const HostParam &p : k.params)
    for (size_t d = 0; d < p.symbol.size(); ++d) {
      if (p.symbol[d].empty()) {
        derived.push_back({&p, d});
        continue;
      }
      const std::string &symbol = p.symbol[d];
      w.line("if (!(tl_status = tlc::check::bindSymbol(tl_name, \"" + symbol + "\", " + cppName(symbol) + ", " +
             bound(symbol) + ", " + p.cpp + ".shape[" + std::to_string(d) + "], \"" + p.name + "\", " +
             std::to_string(d) + "))) return tl_status;");
    }
  // A zero divisor reports itself, not the dimension 0 it gives.
  const std::string zeroDivisor = std::string(lower::kZeroDivisorFlag) + " ? tlc::check::zeroDivisor(tl_name) : ";
  for (auto [p, d] : derived)
    w.line("if (!(tl_status = tlc::check::fixedDim(tl_name, \"" + p->name + "\", " + p->cpp + ", " +
           std::to_string(d) + ", " + p->extent[d] + "))) return " + zeroDivisor + "tl_status;");
  emitMemoryChecks(k, w);

  // Vectorized paths need 16-byte aligned rows of whole 16-byte chunks. The kernel's aligned
  // instantiation accesses every tensor so; its ordinary one takes the vector path of each
  // tensor whose bit is set (lower::KernelLowering::ifAligned): a tensor with odd rows (a
  // 4095-wide output) leaves the others on vectors.
  std::string aligned = "true";
  if (!kernel.vectorTensors.empty()) {
    const std::string rows = lower::alignedRowsParam();
    w.line("std::uint64_t " + rows + " = 0;  // bit i: the rows of the kernel's i-th vector tensor are aligned");
    uint64_t all = 0;
    std::string unnumbered; // the tensors past the 64th, checked here only
    for (size_t i = 0; i < kernel.vectorTensors.size(); ++i) {
      const HostParam *p = nullptr;
      for (const HostParam &q : k.params)
        if (!q.scalar && q.name == kernel.vectorTensors[i])
          p = &q;
      if (!p)
        continue;
      std::string check = "tlc::check::rowsAligned(" + p->cpp + ", 16) && (" + p->cpp + ".shape[" +
                          std::to_string(p->symbol.size() - 1) + "] * tlc::dtypeBits(" + p->cpp +
                          ".dtype)) % 128 == 0";
      if (i < lower::kAlignedRowBits) {
        all |= uint64_t(1) << i;
        w.line("if (" + check + ") " + rows + " |= 1ull << " + std::to_string(i) + ";  // " + p->name);
      } else {
        unnumbered += " && " + check;
      }
    }
    aligned = "(" + rows + " == " + lower::maskLiteral(all) + ")" + unnumbered;
  }
  // (The bulk variant's own condition replaces it unless some tensor has no bit.)
  if (!kernel.hasBulk() || kernel.vectorTensors.size() > lower::kAlignedRowBits)
    w.line("const bool tl_aligned = " + aligned + ";");
  std::string grid[3] = {"1", "1", "1"};
  for (size_t i = 0; i < k.grid.size() && i < 3; ++i)
    grid[i] = k.grid[i];
  w.line("const int64_t tl_gx = " + grid[0] + ", tl_gy = " + grid[1] + ", tl_gz = " + grid[2] + ";");
  w.line(std::string("if (") + lower::kZeroDivisorFlag + ") return tlc::check::zeroDivisor(tl_name);");
  w.line("if (tl_gx <= 0 || tl_gy <= 0 || tl_gz <= 0) return tlc::Status::ok();  // empty problem: nothing to do");
  // A persistent kernel numbers the tiles in one int and launches a 1-d grid of resident
  // blocks, so only the tile count is limited (not the grid's y and z extents: a convolution
  // over 8.4 M output pixels has more than 65535 rows of 128-pixel tiles).
  if (kernel.persistent.on) {
    w.line("const int64_t tl_tiles = tl_gx * tl_gy * tl_gz;");
    w.line("if (tl_tiles > INT32_MAX) return tlc::Status::error(TLC_ERROR_INVALID_ARGUMENT, "
           "std::string(tl_name) + \": \" + std::to_string(tl_tiles) + \" tiles exceed the persistent "
           "kernel's int tile index\");");
  } else {
    w.line("if (tl_gx > INT32_MAX || tl_gy > 65535 || tl_gz > 65535) return tlc::Status::error(TLC_ERROR_INVALID_ARGUMENT, "
           "std::string(tl_name) + \": grid (\" + std::to_string(tl_gx) + \", \" + std::to_string(tl_gy) + \", \" + "
           "std::to_string(tl_gz) + \") exceeds the device limits\");");
  }
  // The kernel's i32 arithmetic on the sizes (lower::SizeCheck), each operand before the
  // expression that uses it, so that every value evaluated fits 64 bits. A zero divisor there
  // yields 0 and no error: such a division may sit where the kernel never takes it.
  if (!k.sizeChecks.empty()) {
    // (nvcc's front end takes a cast to void for no use: [[maybe_unused]] where no check divides.)
    w.line("[[maybe_unused]] bool " + std::string(lower::kSizeCheckZeroFlag) + " = false;");
    for (const lower::SizeCheck &c : k.sizeChecks)
      w.line("if (!(tl_status = tlc::check::int32Range(tl_name, \"" + lower::cEscaped(c.where) + "\", \"" +
             lower::cEscaped(c.text) + "\", " + c.value + "))) return tl_status;");
  }
  // The warp-specialized instantiation (kAligned) copies with the bulk tensor copy, whose
  // tensor maps encode only for 16-byte aligned bases and row strides: when one does not (or
  // the driver has no encoder), the ordinary instantiation runs.
  std::string threads = std::to_string(kernel.threads);
  if (kernel.hasBulk()) {
    // The loads' tensors must be aligned (their maps encode, and the variant copies them with
    // vectors elsewhere too); a store's map is encoded only when its tensor's rows are aligned,
    // the variant storing through the consumers otherwise (lower::KernelLowering::lowerBulkStore).
    std::string maps, encode = "tl_aligned";
    if (kernel.vectorTensors.size() <= lower::kAlignedRowBits)
      encode = kernel.bulkRowsMask ? lower::alignedRowsTest(kernel.bulkRowsMask) : "true";
    for (const lower::Kernel::TensorMap &m : kernel.tensorMaps) {
      maps += (maps.empty() ? "" : ", ") + m.param + "{}";
      if (m.im2col) {
        // pixels, channels; the anchors' box (lower, upper corners of H and W); the stride.
        encode += " &&\n    tlc::tma::encode_im2col(&" + m.param + ", " + m.tensor + ".data, " + m.dataType +
                  ", tlc::dtypeBits(" + m.tensor + ".dtype) / 8, " + m.tensor + ".shape, " + m.tensor + ".strides, " +
                  std::to_string(m.box[0]) + ", " + std::to_string(m.box[1]) + ", " + std::to_string(m.lowerH) +
                  ", " + std::to_string(m.lowerW) + ", " + std::to_string(m.upperH) + ", " +
                  std::to_string(m.upperW) + ", " + std::to_string(m.stride) + ", " + m.swizzle + ")";
        continue;
      }
      std::string box;
      for (int64_t b : m.box)
        box += (box.empty() ? "" : ", ") + std::to_string(b);
      w.line("const std::uint32_t " + m.param + "_box[] = {" + box + "};");
      std::string call = "tlc::tma::encode(&" + m.param + ", " + m.tensor + ".data, " + m.dataType +
                         ", tlc::dtypeBits(" + m.tensor + ".dtype) / 8, " + std::to_string(m.rank) + ", " + m.tensor +
                         ".shape, " + m.tensor + ".strides, " + m.param + "_box, " + m.swizzle + ")";
      if (m.alignedRowsBit >= 0)
        call = "((" + lower::alignedRowsParam() + " & " + lower::maskLiteral(uint64_t(1) << m.alignedRowsBit) +
               ") == 0 || " + call + ")";
      encode += " &&\n    " + call;
    }
    w.line("::CUtensorMap " + maps + ";");
    w.line("const bool tl_bulk = " + encode + ";");
    w.line("const size_t tl_smem = tl_bulk ? " + std::to_string(kernel.bulkSharedBytes) + " : " +
           std::to_string(kernel.sharedBytes) + ";");
    threads = "tl_bulk ? " + std::to_string(kernel.bulkThreads) + " : " + threads;
  } else {
    w.line("const size_t tl_smem = " + std::to_string(kernel.sharedBytes) + ";");
  }
  std::string launchArgs;
  for (const lower::Param &p : kernel.params)
    launchArgs += (launchArgs.empty() ? "" : ", ") + p.host;
  for (const lower::Kernel::TensorMap &m : kernel.tensorMaps)
    launchArgs += ", " + m.param;
  w.line("// The first runtime calls: every argument check above needs no GPU.");
  w.line("if (!(tl_status = tlc::check::device(tl_name, " + std::to_string(k.capability) + ", \"" + k.target +
         "\"))) return tl_status;");
  w.line("auto tl_kernel = " + std::string(kernel.hasBulk() ? "tl_bulk" : "tl_aligned") + " ? " + kernel.name +
         "<true> : " + kernel.name + "<false>;");
  auto rt = [&](const std::string &cudaName) { return runtimeName(k, cudaName); };
  // Once per instantiation and device (tlc::SharedMemoryLimit), so that the launches a CUDA or
  // HIP graph captures make no attribute call.
  w.open("if (tl_smem > 48 * 1024)");
  w.line("static tlc::SharedMemoryLimit tl_smem_limit[2];  // per instantiation: <false>, <true>");
  w.line("if (!(tl_status = tl_smem_limit[" + std::string(kernel.hasBulk() ? "tl_bulk" : "tl_aligned") +
         "].raise(tl_name, reinterpret_cast<const void*>(tl_kernel), tl_smem))) return tl_status;");
  w.close();
  std::string launchGrid = "dim3(unsigned(tl_gx), unsigned(tl_gy), unsigned(tl_gz))";
  if (kernel.persistent.on) {
    // One block per resident slot, each looping over the grid's tiles (lower/PersistentTiles).
    // The emulator has no occupancy to ask: three blocks, so that blocks loop over tiles.
    w.line("int tl_blocks = 0;");
    if (emulate)
      w.line("tl_blocks = static_cast<int>(tl_tiles < 3 ? tl_tiles : 3);");
    else
      w.line("if (!(tl_status = tlc::check::persistentBlocks(tl_name, tl_kernel, " + threads +
             ", tl_smem, tl_tiles, &tl_blocks))) return tl_status;");
    launchGrid = "dim3(unsigned(tl_blocks))";
  }
  if (emulate)
    w.line("tl::emu::launch(tl_kernel, " + launchGrid + ", dim3(" + threads + "), tl_smem, stream, " + launchArgs + ");");
  else
    w.line("tl_kernel<<<" + launchGrid + ", dim3(" + threads + "), tl_smem, stream>>>(" + launchArgs + ");");
  w.line(rt("cudaError_t") + " tl_err = " + rt("cudaGetLastError") + "();");
  w.line("if (tl_err != " + rt("cudaSuccess") + ") return tlc::check::" + rt("cudaFailure") +
         "(tl_name, \"launch failed\", tl_err);");
  w.line("return tlc::Status::ok();");
  w.close();
  if (cPrefix.empty())
    return; // a variant behind a shape dispatch: the dispatcher has the C entry
  w.line();
  // Qualified: a parameter may have the launcher's name.
  emitCEntry(k, sig, "::" + ns + "::" + name, cPrefix + k.kernel, inlineC, w);
}

} // namespace tlc::codegen
