// Emits the device code of one kernel. Split over KernelEmitter.cpp (structure, statements,
// scalar expressions, barriers, pipelines) and TileOpLowering.cpp (copy, fill, reduce, gemm,
// atomic_add).
#pragma once

#include "codegen/CudaEmitter.h"
#include "codegen/Naming.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>
#include <sstream>

namespace tlc::codegen {

std::string cppType(DType t);
std::string cppType(Type t);
// The C dtype code of runtime/tlc/runtime.h.
std::string runtimeDType(DType t);

// The kernel's thread index within its block (every lowering addresses threads by it).
inline const std::string kThreadIndex = generatedName("tid");

// The kernel parameter carrying stride `d` of tensor `tensor` (its source name).
inline std::string strideName(llvm::StringRef tensor, size_t d) {
  return generatedName(tensor + "_stride" + llvm::Twine(d));
}

// Indented line writer.
class CodeWriter {
public:
  explicit CodeWriter(llvm::raw_ostream &os) : os(os) {}
  CodeWriter &line(const std::string &text = "") {
    if (text.empty())
      os << "\n";
    else
      os.indent(indent * 2) << text << "\n";
    return *this;
  }
  void open(const std::string &text) {
    line(text.empty() ? "{" : text + " {");
    ++indent;
  }
  void close(const std::string &suffix = "") {
    --indent;
    line("}" + suffix);
  }
  unsigned indent = 0;

private:
  llvm::raw_ostream &os;
};

class KernelEmitter {
public:
  KernelEmitter(ftg::Graph &g, const EmitOptions &options, DiagnosticEngine &diags,
                std::string sourceName, CodeWriter &w)
      : g(g), k(*g.kernel), options(options), diags(diags), sourceName(std::move(sourceName)),
        w(w) {}

  bool emitKernel();
  // The kernel's device parameters in order: C++ type, name, and the launcher's argument
  // for it (in terms of the launcher's parameters and bound shape symbols, named by cppName).
  struct Param {
    std::string type, name, host;
  };
  std::vector<Param> deviceParams() const;
  int64_t sharedBytes() const { return g.sharedBytes; }
  // Tensors the aligned instantiation accesses with vectors: only their rows need to be
  // 16-byte aligned for the launcher to pick it.
  bool accessedWithVectors(const TensorParamDecl *p) const {
    for (const ftg::Buffer *b : vectorTensors)
      if (b->decl == p)
        return true;
    return false;
  }
  std::string kernelName() const { return generatedName(g.symbolName() + "_kernel"); }
  // A fresh local: generatedName(stem + a number unique in the kernel); stems have no '_'.
  std::string fresh(const std::string &stem) { return generatedName(stem + std::to_string(tempCounter++)); }

  // ---- scalar expressions (KernelEmitter.cpp)
  std::string expr(const Expr *e);
  std::string exprAs(const Expr *e, DType t); // converted to t
  std::string globalOffset(const ftg::Buffer &b, const std::vector<std::string> &idx) const;
  std::string sharedElement(const ftg::Buffer &b, const std::string &row, const std::string &col);
  std::string dimExpr(const ftg::Buffer &b, size_t d); // tensor extent as C++

private:
  friend class TileOpLowering;

  void emitNodes(const std::vector<std::unique_ptr<ftg::Node>> &nodes);
  void emitNode(const ftg::Node &n);
  void emitLoop(const ftg::Node &n);
  void emitPipelined(const ftg::Node &n);
  void emitParallel(const ftg::Node &n);
  void emitScalarStmt(const Stmt *s);
  std::string elementRef(const IndexExpr *ix);
  // `a op b` on scalars of type `t`; integer `/` and `%` floor unless `nonNegative` says both
  // operands are >= 0, where C's operators agree and are cheaper.
  std::string arithmetic(BinaryOp op, DType t, const std::string &a, const std::string &b,
                         bool nonNegative);
  // True when `e` is >= 0 at run time: constants, block indices, shape symbols, loop
  // variables from a non-negative start, and what +, *, /, %, >>, &, max, ... make of them.
  // Memoized, so that chains of lets stay linear.
  bool provablyNonNegative(const Expr *e);
  bool computeNonNegative(const Expr *e);

  // Barriers: shared buffers written or read since the last __syncthreads. A node's access
  // sets include buffers read in its index expressions (ir/AccessAnalysis.h).
  void beforeAccess(const ftg::Node &n) { beforeAccess(n.reads, n.writes); }
  void beforeAccess(llvm::ArrayRef<ftg::Buffer *> reads, llvm::ArrayRef<ftg::Buffer *> writes);
  void sync(const std::string &why);

  void unsupported(llvm::SMRange r, const std::string &what);
  // Reports (and returns false) when tl::atomic_add has no overload for `t`.
  bool checkAtomicType(llvm::SMRange r, DType t);

  ftg::Graph &g;
  const KernelDecl &k;
  const EmitOptions &options;
  DiagnosticEngine &diags;
  std::string sourceName;
  CodeWriter &w;
  bool ok = true;

  llvm::DenseMap<const ftg::Buffer *, std::string> stageExpr;
  llvm::SmallPtrSet<const ftg::Buffer *, 8> pendingWrites, pendingReads;
  llvm::SmallPtrSet<const ftg::Buffer *, 8> vectorTensors;
  // Loop variables whose loop starts at a non-negative value (registered as loops are
  // emitted, before their bodies).
  llvm::SmallPtrSet<const Decl *, 16> nonNegativeVars;
  llvm::DenseMap<const Expr *, bool> nonNegativeMemo;

  // Inside a parallel loop driven by a fragment: its register variable.
  const ftg::Node *parallelNode = nullptr;
  std::string parallelReg;
  unsigned tempCounter = 0;
};

// Tile operators (TileOpLowering.cpp).
class TileOpLowering {
public:
  explicit TileOpLowering(KernelEmitter &e) : e(e), w(e.w) {}
  void copy(const ftg::Node &n, const std::string &note = "");
  void fill(const ftg::Node &n);
  void reduce(const ftg::Node &n);
  void gemm(const ftg::Node &n);
  void atomicAdd(const ftg::Node &n);

private:
  struct TileDims; // how a region's elements map to tensor coordinates
  TileDims tileDims(const ftg::Operand &op, const std::vector<std::optional<int64_t>> &tile);
  void cooperativeCopy(const ftg::Node &n, const ftg::Operand &src, const ftg::Operand &dst,
                       bool atomic);
  void fragmentCopy(const ftg::Node &n, const ftg::Operand &src, const ftg::Operand &dst,
                    bool atomic);
  // `body(vec)` under `if constexpr (kAligned)` and `body(1)` otherwise; just `body(1)` when
  // vec is 1.
  void alignedOrScalar(int vec, const std::function<void(int)> &body);
  std::string fresh(const std::string &stem) { return e.fresh(stem); }

  KernelEmitter &e;
  CodeWriter &w;
};

} // namespace tlc::codegen
