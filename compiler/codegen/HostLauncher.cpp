// Host launchers: for each kernel a typed C++ function and a C entry point that check the
// tensors against everything the kernel assumes (rank, dtype, shapes, element alignment,
// contiguity, outputs with distinct addresses that overlap no other tensor, sizes within the
// kernel's 32-bit index arithmetic), bind the shape symbols, check the device, choose the
// aligned or scalar kernel instantiation, size the grid, raise the dynamic shared-memory limit
// when needed, and launch. Errors come back as tlc::Status; the argument checks come before
// any CUDA call.
#include "codegen/HostLauncher.h"

#include "infer/Passes.h"
#include "lower/Lower.h"
#include "lower/Naming.h"

namespace tlc::codegen {

using lower::cppName;
using lower::generatedName;
using lower::runtimeDType;

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

namespace {

// Host-side rendering of a shape or grid expression: shape symbols are the int64_t locals
// the launcher bound, compile-time values are folded.
std::string hostExpr(const Expr *e) {
  if (e->constant && e->constant->isInt())
    return "int64_t(" + std::to_string(e->constant->getInt()) + ")";
  if (auto *n = dyn_cast<NameExpr>(e))
    return cppName(n->name);
  if (auto *b = dyn_cast<BinaryExpr>(e))
    return "(" + hostExpr(b->lhs) + " " + spelling(b->op).str() + " " + hostExpr(b->rhs) + ")";
  if (auto *u = dyn_cast<UnaryExpr>(e))
    return "(" + spelling(u->op).str() + hostExpr(u->operand) + ")";
  if (auto *c = dyn_cast<CallExpr>(e)) {
    auto args = c->positional();
    if (c->builtin == Builtin::CeilDiv)
      return "tlc_ceildiv(" + hostExpr(args[0]) + ", " + hostExpr(args[1]) + ")";
    if (c->builtin == Builtin::Max || c->builtin == Builtin::Min)
      return std::string(c->builtin == Builtin::Max ? "std::max" : "std::min") + "<int64_t>(" +
             hostExpr(args[0]) + ", " + hostExpr(args[1]) + ")";
  }
  return toSource(e);
}

// The largest tile extent of the kernel: generated indices are a tile origin plus an offset
// within the tile, and ceildiv(extent, tile) adds tile - 1, so every 32-bit value the kernel
// forms from an extent stays below extent + this (tlc::check::indexRange).
int64_t indexHeadroom(const ftg::Graph &g) {
  int64_t largest = 1;
  for (const auto &b : g.buffers)
    if (b->scope != Scope::Global)
      for (const std::optional<int64_t> &extent : b->shape)
        largest = std::max(largest, extent.value_or(1));
  return largest;
}

// Compute capability the target needs, as major * 10 + minor ("sm_90a" -> 90).
int requiredCapability(llvm::StringRef target) {
  int cc = 0;
  llvm::StringRef digits = target.drop_front(target.find_first_of("0123456789")).take_while(
      [](char c) { return c >= '0' && c <= '9'; });
  return digits.getAsInteger(10, cc) ? 80 : cc;
}

// What the kernel assumes beyond each tensor's own shape: outputs have distinct addresses
// and share memory with no other tensor, and sizes fit the kernel's 32-bit index arithmetic.
void emitMemoryChecks(const KernelDecl &k, int64_t headroom, CodeWriter &w) {
  std::vector<const TensorParamDecl *> tensors;
  for (const TensorParamDecl *p : k.params)
    if (!p->isScalar())
      tensors.push_back(p);
  w.line("// 32-bit index arithmetic: extents up to 2^31 - " + std::to_string(headroom) +
         " (tiles of up to " + std::to_string(headroom) + " elements).");
  for (const TensorParamDecl *p : tensors)
    w.line("if (!(tl_status = tlc::check::indexRange(tl_name, \"" + p->getName().str() + "\", " +
           cppName(p->getName()) + ", " + std::to_string(headroom) + "))) return tl_status;");
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i]->isOut)
      continue;
    std::string o = tensors[i]->getName().str(), oArg = cppName(o);
    w.line("if (!(tl_status = tlc::check::writable(tl_name, \"" + o + "\", " + oArg + "))) return tl_status;");
    for (size_t j = 0; j < tensors.size(); ++j)
      if (j != i && !(tensors[j]->isOut && j < i)) { // each pair of outputs once
        const TensorParamDecl *other = tensors[j];
        std::string n = other->getName().str();
        w.line("if (!(tl_status = tlc::check::disjoint(tl_name, \"" + o + "\", " + oArg + ", \"" + n + "\", " +
               cppName(n) + ", " + (other->isOut ? "true" : "false") + "))) return tl_status;");
      }
  }
}

} // namespace

bool checkTensorRanks(const KernelDecl &k, DiagnosticEngine &diags) {
  bool ok = true;
  for (const TensorParamDecl *p : k.params)
    if (!p->isScalar() && p->shape.rank() > kMaxTensorRank) {
      diags.error(p->getRange(), "tensor parameter '" + p->getName() + "' has " +
                                     std::to_string(p->shape.rank()) + " dimensions; the launcher "
                                     "takes at most " + std::to_string(kMaxTensorRank))
          .hint("tlc_tensor_view (tlc/runtime.h) holds TLC_MAX_RANK = " +
                std::to_string(kMaxTensorRank) + " extents and strides; merge dimensions");
      ok = false;
    }
  return ok;
}

LauncherSignature LauncherSignature::of(const KernelDecl &k) {
  LauncherSignature s;
  for (const TensorParamDecl *p : k.params) {
    std::string n = cppName(p->getName());
    if (p->isScalar()) {
      s.cpp += cppTypeHost(p->elemType) + " " + n + ", ";
      s.c += cppTypeHost(p->elemType) + " " + n + ", ";
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

void emitCEntry(const KernelDecl &k, const LauncherSignature &sig, const std::string &launcher,
                const std::string &cName, bool inlineC, CodeWriter &w) {
  w.line("// C entry point (ABI in tlc/runtime.h): returns 0, or a code and a message in `error`.");
  std::string cDecl = std::string("extern \"C\" ") + (inlineC ? "inline " : "") + "int " + cName + "(" +
                      sig.c + "void* stream, char* error, size_t error_size)";
  w.line(cDecl + ";");
  w.open(cDecl);
  if (!sig.nullCheck.empty())
    w.line("if (" + sig.nullCheck + ") return tlc::Status::error(TLC_ERROR_INVALID_ARGUMENT, \"" + k.name +
           ": a tensor argument is null\").toC(error, error_size);");
  w.line("return " + launcher + "(" + sig.fromC + "static_cast<cudaStream_t>(stream)).toC(error, error_size);");
  w.close();
}

void emitLauncher(const lower::Kernel &kernel, const ftg::Graph &g, const std::string &ns,
                  const std::string &cPrefix, bool inlineC, CodeWriter &w) {
  const KernelDecl &k = *g.kernel;
  // Names (Naming.h): the launcher's locals are tl_*, the user's names go through cppName.
  std::string name = cppName(g.symbolName());
  auto bound = [](llvm::StringRef symbol) { return generatedName(symbol + "_bound"); };
  LauncherSignature sig = LauncherSignature::of(k);
  w.line("// Launcher of '" + g.symbolName() + "': checks the tensors, binds shapes, launches on `stream`.");
  w.open("inline tlc::Status " + name + "(" + sig.cpp + "cudaStream_t stream = 0)");
  w.line("const char* tl_name = \"" + k.name + "\";");
  w.line("tlc::Status tl_status;");
  for (const TensorParamDecl *p : k.params)
    if (!p->isScalar())
      w.line("if (!(tl_status = tlc::check::tensor(tl_name, \"" + p->getName().str() + "\", &" +
             cppName(p->getName()) + ", " + std::to_string(p->shape.rank()) + ", " +
             runtimeDType(p->elemType) + "))) return tl_status;");
  // Shape symbols: bound by the first dimension that names them, checked at the others.
  for (const ShapeSymbolDecl *s : k.shapeSymbols) {
    std::string n = cppName(s->getName()), b = bound(s->getName());
    w.line("int64_t " + n + " = 0; bool " + b + " = false;");
    if (s->constant)
      w.line(n + " = " + s->constant->str() + "; " + b + " = true;  // bound by -D at compile time");
  }
  std::vector<std::pair<const TensorParamDecl *, size_t>> derived;
  for (const TensorParamDecl *p : k.params) {
    if (p->isScalar())
      continue;
    for (size_t d = 0; d < p->shape.rank(); ++d) {
      const Expr *dim = p->shape.dims[d];
      std::string view = cppName(p->getName());
      if (auto *n = dyn_cast<NameExpr>(dim); n && n->decl && isa<ShapeSymbolDecl>(n->decl))
        w.line("if (!(tl_status = tlc::check::bindSymbol(tl_name, \"" + n->name + "\", " + cppName(n->name) +
               ", " + bound(n->name) + ", " + view + ".shape[" + std::to_string(d) + "], \"" +
               p->getName().str() + "\", " + std::to_string(d) + "))) return tl_status;");
      else
        derived.push_back({p, d});
    }
  }
  for (auto [p, d] : derived)
    w.line("if (!(tl_status = tlc::check::fixedDim(tl_name, \"" + p->getName().str() + "\", " +
           cppName(p->getName()) + ", " + std::to_string(d) + ", " + hostExpr(p->shape.dims[d]) +
           "))) return tl_status;");
  emitMemoryChecks(k, indexHeadroom(g), w);

  // Vectorized paths need 16-byte aligned rows of whole 16-byte chunks in every tensor they
  // touch.
  std::string aligned = "true";
  for (const TensorParamDecl *p : k.params)
    if (!p->isScalar() && llvm::is_contained(kernel.vectorTensors, p->getName())) {
      std::string n = cppName(p->getName());
      aligned += " && tlc::check::rowsAligned(" + n + ", 16) && (" + n + ".shape[" +
                 std::to_string(p->shape.rank() - 1) + "] * tlc::dtypeBits(" + n + ".dtype)) % 128 == 0";
    }
  w.line("const bool tl_aligned = " + aligned + ";");
  std::string grid[3] = {"1", "1", "1"};
  for (size_t i = 0; i < k.grid.size() && i < 3; ++i)
    grid[i] = hostExpr(k.grid[i]);
  w.line("const int64_t tl_gx = " + grid[0] + ", tl_gy = " + grid[1] + ", tl_gz = " + grid[2] + ";");
  w.line("if (tl_gx <= 0 || tl_gy <= 0 || tl_gz <= 0) return tlc::Status::ok();  // empty problem: nothing to do");
  w.line("if (tl_gx > INT32_MAX || tl_gy > 65535 || tl_gz > 65535) return tlc::Status::error(TLC_ERROR_INVALID_ARGUMENT, "
         "std::string(tl_name) + \": grid (\" + std::to_string(tl_gx) + \", \" + std::to_string(tl_gy) + \", \" + "
         "std::to_string(tl_gz) + \") exceeds the device limits\");");
  w.line("const size_t tl_smem = " + std::to_string(kernel.sharedBytes) + ";");
  std::string launchArgs;
  for (const lower::Param &p : kernel.params)
    launchArgs += (launchArgs.empty() ? "" : ", ") + p.host;
  w.line("// The first runtime calls: every argument check above needs no GPU.");
  w.line("if (!(tl_status = tlc::check::device(tl_name, " + std::to_string(requiredCapability(g.target)) + ", \"" +
         g.target + "\"))) return tl_status;");
  w.line("auto tl_kernel = tl_aligned ? " + kernel.name + "<true> : " + kernel.name + "<false>;");
  w.open("if (tl_smem > 48 * 1024)");
  w.line("cudaError_t tl_err = cudaFuncSetAttribute(tl_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(tl_smem));");
  w.line("if (tl_err != cudaSuccess) return tlc::check::cudaFailure(tl_name, \"cannot reserve \" + std::to_string(tl_smem) + "
         "\" bytes of shared memory\", tl_err);");
  w.close();
  w.line("tl_kernel<<<dim3(unsigned(tl_gx), unsigned(tl_gy), unsigned(tl_gz)), dim3(" + std::to_string(g.threads) +
         "), tl_smem, stream>>>(" + launchArgs + ");");
  w.line("cudaError_t tl_err = cudaGetLastError();");
  w.line("if (tl_err != cudaSuccess) return tlc::check::cudaFailure(tl_name, \"launch failed\", tl_err);");
  w.line("return tlc::Status::ok();");
  w.close();
  if (cPrefix.empty())
    return; // a variant behind a shape dispatch: the dispatcher has the C entry
  w.line();
  // Qualified: a parameter may have the launcher's name.
  emitCEntry(k, sig, "::" + ns + "::" + name, cPrefix + k.name, inlineC, w);
}

std::string cppTypeHost(DType t) {
  switch (t) {
  case DType::F16: case DType::BF16: case DType::F32: return "float";
  case DType::F64: return "double";
  case DType::Bool: return "bool";
  case DType::I64: return "long long";
  case DType::U32: return "unsigned";
  default: return "int";
  }
}

} // namespace tlc::codegen
