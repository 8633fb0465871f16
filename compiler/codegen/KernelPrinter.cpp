#include "codegen/KernelPrinter.h"

#include <set>

namespace tlc::codegen {

using namespace lower;

namespace {

// A statement that fits on one line (a leaf, or a compact loop around one).
std::string inlineText(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Let:
    return (s.maybeUnused ? "[[maybe_unused]] " : "") + s.type + " " + s.name + " = " + s.value + ";";
  case StmtKind::Decl:
    return (s.align ? "alignas(" + std::to_string(s.align) + ") " : "") + s.type + " " + s.name + "[" +
           std::to_string(s.count) + "];";
  case StmtKind::Store:
    return s.target + " = " + s.value + ";";
  case StmtKind::AtomicAdd:
    if (s.count > 1) // `count` consecutive f32 elements, the values listed (tl::atomic_add_vec)
      return "tl::atomic_add_vec(&" + s.target + ", " + s.value + ");";
    return "tl::atomic_add(&" + s.target + ", " + s.value + ");";
  case StmtKind::Eval:
    return s.text + ";";
  case StmtKind::AsyncCopy:
    if (s.valid.empty()) // every element valid
      return "tl::cp_async<" + std::to_string(s.bytes) + ">(" + s.dst + ", " + s.src + ");";
    return "tl::cp_async_zfill<" + std::to_string(s.bytes) + ">(" + s.dst + ", " + s.valid + " ? " + s.src +
           " : " + s.srcBase + ", " + s.valid + ");";
  case StmtKind::AsyncCommit:
    return "tl::cp_async_commit();";
  case StmtKind::AsyncWait:
    return "tl::cp_async_wait<" + std::to_string(s.count) + ">();";
  case StmtKind::VectorCopy:
    return "tl::copy_vec<" + std::to_string(s.bytes) + ">(" + s.dst + ", " + s.src + ");";
  case StmtKind::Mma: {
    std::string dims = std::to_string(s.m) + ", " + std::to_string(s.n) + ", " + std::to_string(s.k) + ", " +
                       std::to_string(s.warpsM) + ", " + std::to_string(s.warpsN);
    auto flag = [](bool b) { return b ? std::string("true") : std::string("false"); };
    if (s.warpgroup) {
      std::string wg = dims + ", " + std::to_string(s.instrN);
      std::string args = s.a + ", " + s.b + ", " + s.c +
                         (s.overwrite.empty() ? "" : ", tl::wgmma::Overwrite{" + s.overwrite + "}") + ");" +
                         (s.pending ? "  // left in flight: tl::wgmma::drain waits for it" : "");
      if (s.aInRegisters)
        return "tl::wgmma::gemm_rs<" + wg + ", " + flag(s.transB) +
               (s.pending ? ", " + std::to_string(s.pending) : "") + ">(" + args;
      return "tl::wgmma::gemm_ss<" + wg + ", " + flag(s.transA) + ", " + flag(s.transB) +
             (s.pending ? ", " + std::to_string(s.pending) : "") + ">(" + args;
    }
    // Operands in annotated layouts pass their offset functors (tl::SwizzledOperand{} for
    // the other shared one; an operand in registers has none).
    auto offset = [](const std::string &f) { return f.empty() ? std::string("tl::SwizzledOperand{}") : f; };
    std::string offsets = s.aOffset.empty() && s.bOffset.empty() ? ""
                          : s.aInRegisters ? ", " + offset(s.bOffset)
                          : s.bInRegisters ? ", " + offset(s.aOffset)
                                           : ", " + offset(s.aOffset) + ", " + offset(s.bOffset);
    // gfx9 (stdlib/tl/hip/gemm.h): which MFMA, after the transposes.
    std::string mfma = s.mfmaSize ? ", " + std::to_string(s.mfmaSize) : "";
    // B in registers is always [N, K] (transpose_B): no TransB argument.
    if (s.aInRegisters && s.bInRegisters)
      return "tl::gemm_rr<" + dims + mfma + ">(" + s.a + ", " + s.b + ", " + s.c + ");";
    if (s.bInRegisters && s.bKRun)
      return std::string(s.bRunsTransposed ? "tl::gemm_sr_runs_t<" : "tl::gemm_sr_runs<") + dims + ", " +
             std::to_string(s.bKRun) + (s.bKSplit > 1 ? ", " + std::to_string(s.bKSplit) : "") + ">(" + s.a + ", " +
             s.b + ", " + s.c +
             (s.bScales.empty() ? offsets : ", " + offset(s.aOffset) + ", " + s.bScales + "  /* scales per K group */") +
             ");";
    if (s.bInRegisters)
      return "tl::gemm_sr<" + dims + ", " + flag(s.transA) + mfma + ">(" + s.a + ", " + s.b + ", " + s.c + offsets +
             ");";
    if (s.aInRegisters)
      return "tl::gemm_rs<" + dims + ", " + flag(s.transB) + mfma + ">(" + s.a + ", " + s.b + ", " + s.c + offsets +
             ");";
    return "tl::gemm_ss<" + dims + ", " + flag(s.transA) + ", " + flag(s.transB) + mfma + ">(" + s.a + ", " + s.b +
           ", " + s.c + offsets + ");";
  }
  case StmtKind::Shuffle:
    return s.target + " = tl::detail::warp_combine<" + s.op + ", " + std::to_string(s.width) + ", " +
           std::to_string(s.laneStride) + ">(" + s.target + ");";
  case StmtKind::Barrier:
    if (s.splitThreads) {
      // lower/SplitBarriers.cpp: each side waits (bar.sync) or arrives (bar.arrive) at the
      // barrier of its own id; a subset that only arrives waits for its own threads first.
      std::string fence = s.proxyFence ? "tl::wgmma::fence_proxy_async_shared(); " : "";
      std::string count = std::to_string(s.barrierThreads), subset = std::to_string(s.splitThreads);
      auto side = [&](bool waits, bool isSubset) {
        std::string r = fence;
        if (isSubset && s.subsetId)
          r += "tl::barrier_sync(" + std::to_string(s.subsetId) + ", " + subset + "); ";
        if (s.splitId)
          r += std::string(waits ? "tl::barrier_sync(" : "tl::barrier_arrive(") + std::to_string(s.splitId) + ", " +
               count + "); ";
        return r;
      };
      std::string rest = side(s.restWaits, false);
      return "if (" + s.cond + ") { " + side(s.subsetWaits, true) + "}" +
             (s.splitId ? " else { " + rest + "}" : "") + "  // " + s.text;
    }
    if (!s.name.empty()) // a vote: the barrier ORs `value` over its threads
      return (s.proxyFence ? "tl::wgmma::fence_proxy_async_shared(); " : "") + std::string("const bool ") + s.name +
             " = " +
             (s.barrierThreads ? "tl::barrier_sync_or(" + std::to_string(s.barrierId) + ", " +
                                     std::to_string(s.barrierThreads) + ", " + s.value + ");  // "
                               : "__syncthreads_or(" + s.value + ");  // ") +
             s.text;
    return (s.proxyFence ? "tl::wgmma::fence_proxy_async_shared(); " : "") +
           (s.barrierThreads ? "tl::barrier_sync(" + std::to_string(s.barrierId) + ", " +
                                   std::to_string(s.barrierThreads) + ");  // "
                             : std::string("__syncthreads();  // ")) +
           s.text;
  case StmtKind::NamedBarrier:
    return std::string(s.arriveOnly ? "tl::barrier_arrive(" : "tl::barrier_sync(") + s.value + ", " +
           std::to_string(s.barrierThreads) + ");  // " + s.text;
  case StmtKind::Comment:
    return "// " + s.text;
  case StmtKind::For:
    return "for (int " + s.var + " = " + s.lo + "; " + s.var + " < " + s.hi + "; " +
           (s.step.empty() ? "++" + s.var : s.var + " += " + s.step) + ")" +
           (s.compact ? " " + inlineText(*s.body[0]) : "");
  default:
    return "/* " + stmtKindName(s.kind).str() + " */";
  }
}

void printStmts(const StmtList &list, CodeWriter &w);
void printStmtHere(const Stmt &s, CodeWriter &w);

// The lines of `s` come from its source line, or from that of the statement around it.
void printStmt(const Stmt &s, CodeWriter &w) {
  unsigned around = w.origin;
  if (s.line)
    w.origin = s.line;
  printStmtHere(s, w);
  w.origin = around;
}

void printStmtHere(const Stmt &s, CodeWriter &w) {
  switch (s.kind) {
  case StmtKind::Seq:
  case StmtKind::TileOp:
    return printStmts(s.body, w);
  case StmtKind::Scope:
    w.open("");
    printStmts(s.body, w);
    return w.close();
  case StmtKind::For:
    if (s.unroll >= 0)
      w.line(s.unroll ? "#pragma unroll " + std::to_string(s.unroll) : "#pragma unroll");
    if (s.compact)
      return (void)w.line(inlineText(s));
    w.open(inlineText(s));
    printStmts(s.body, w);
    return w.close();
  case StmtKind::If: {
    if (s.style == IfStyle::NextLine) {
      w.line("if (" + s.cond + ")");
      w.line("  " + inlineText(*s.body[0]));
      return;
    }
    if (s.style == IfStyle::SameLine) {
      w.line("if (" + s.cond + ") " + inlineText(*s.body[0]));
      if (!s.elseBody.empty())
        w.line("else " + inlineText(*s.elseBody[0]));
      return;
    }
    // An else-if chain stays at one indentation level.
    w.open(std::string("if ") + (s.isConstexpr ? "constexpr " : "") + "(" + s.cond + ")");
    const Stmt *branch = &s;
    while (true) {
      printStmts(branch->body, w);
      if (branch->elseBody.empty())
        break;
      w.indent--;
      if (branch->elseIf) {
        branch = branch->elseBody.front().get();
        if (branch->line)
          w.origin = branch->line;
        w.line("} else if (" + branch->cond + ") {");
        w.indent++;
        continue;
      }
      w.line("} else {");
      w.indent++;
      printStmts(branch->elseBody, w);
      break;
    }
    return w.close();
  }
  default:
    w.line(inlineText(s));
  }
}

void printStmts(const StmtList &list, CodeWriter &w) {
  for (const StmtPtr &s : list)
    printStmt(*s, w);
}

} // namespace

void printKernel(const Kernel &k, CodeWriter &w) {
  std::string params;
  for (const Param &p : k.params)
    params += (params.empty() ? "" : ", ") + p.type + " " + p.name;
  for (const Kernel::TensorMap &m : k.tensorMaps)
    params += ", const __grid_constant__ ::CUtensorMap " + m.param;
  w.line("// kernel '" + k.symbol + "': " + std::to_string(k.threads) + " threads per block, " +
         std::to_string(k.sharedBytes) + " bytes of shared memory");
  if (k.hasBulk())
    w.line("// kAligned: warp-specialized, " + std::to_string(k.bulkThreads) + " threads (" +
           std::to_string(k.bulkThreads - k.threads) + " producer threads issuing bulk tensor copies), " +
           std::to_string(k.bulkSharedBytes) + " bytes of shared memory");
  w.line("template <bool kAligned>");
  std::string bounds = k.hasBulk() ? "kAligned ? " + std::to_string(k.bulkThreads) + " : " + std::to_string(k.threads)
                                   : std::to_string(k.threads);
  // 0 leaves the ordinary instantiation as it was without a minimum (a minimum of 1 changes
  // ptxas's register allocation for it).
  if (k.hasBulk() && k.bulkMinBlocks > 1)
    bounds += ", kAligned ? " + std::to_string(k.bulkMinBlocks) + " : 0";
  w.line("__global__ void __launch_bounds__(" + bounds + ") " + k.name + "(" + params + ") {");
  w.indent++;
  if (k.sharedBytes > 0 || k.hasBulk())
    // 1024: the period of wgmma's 128-byte swizzle, which its tiles start on. One alignment
    // for every kernel, since the kernels of one file declare the same array.
    w.line("extern __shared__ __align__(1024) unsigned char tl_smem[];");
  w.line("const int " + k.threadIndex + " = threadIdx.x;");
  // The launch's block size, stated for the device compiler (TL_ASSUME): the index arithmetic
  // of every copy and fragment access folds on it.
  std::string blockSize = k.hasBulk() ? "(kAligned ? " + std::to_string(k.bulkThreads) + " : " +
                                            std::to_string(k.threads) + ")"
                                      : std::to_string(k.threads);
  w.line("TL_ASSUME(" + k.threadIndex + " >= 0 && " + k.threadIndex + " < " + blockSize + ");");
  const char *axes = "xyz";
  std::string blocks;
  for (size_t i = 0; i < k.blockIndices.size(); ++i) {
    w.line("[[maybe_unused]] int " + k.blockIndices[i] + " = blockIdx." + axes[i] + ";");
    blocks += (blocks.empty() ? "" : " && ") + k.blockIndices[i] + " >= 0";
  }
  if (!blocks.empty())
    w.line("TL_ASSUME(" + blocks + ");");
  for (const auto &[name, value] : k.constants)
    w.line("constexpr int " + name + " = " + value + ";  // bound by -D");
  // Buffers only a branch on a compile-time parameter that is not taken uses are declared all
  // the same (both branches are inferred): marked so that the device compiler does not warn.
  std::vector<Access> reads, writes;
  for (const StmtList *list : {&k.body, &k.bulkBody})
    for (const StmtPtr &st : *list)
      collectAccesses(*st, reads, writes);
  std::set<const Buffer *> accessed;
  for (const std::vector<Access> *accesses : {&reads, &writes})
    for (const Access &a : *accesses)
      accessed.insert(a.buffer);
  auto unused = [&](const Buffer &b) { return accessed.count(&b) ? "" : "[[maybe_unused]] "; };
  for (const auto &b : k.buffers) {
    const std::string &T = b->elemType;
    if (b->scope == MemScope::Shared && !b->implicit && !b->layout.empty())
      w.line(unused(*b) + T + "* " + b->name + " = reinterpret_cast<" + T + "*>(tl_smem + " +
             std::to_string(b->offset) + ");  // shared " + b->dtype + " " + b->layout +
             (b->stages > 1 ? ", " + std::to_string(b->stages) + " stages" : ""));
    else if (b->scope == MemScope::Fragment && !b->layout.empty())
      w.line(unused(*b) + (b->align ? "alignas(" + std::to_string(b->align) + ") " : "") + T + " " + b->name + "[" +
             std::to_string(b->elements) + "];  // fragment " + b->layout);
    else if (b->scope == MemScope::Local && !b->layout.empty())
      w.line(T + " " + b->name + "[" + std::to_string(b->elements) + "];  // local");
  }
  if (k.sharedBytes > k.scratchOffset)
    w.line("float* tl_reduce_scratch = reinterpret_cast<float*>(tl_smem + " + std::to_string(k.scratchOffset) + ");");
  w.line();
  // The signature and declarations above are the generated file's; statements name their
  // .tl line.
  w.sourceFile = k.sourceName;
  if (k.hasBulk()) {
    w.open("if constexpr (kAligned)");
    printStmts(k.bulkBody, w);
    w.close();
    w.open("else");
    printStmts(k.body, w);
    w.close();
  } else {
    printStmts(k.body, w);
  }
  w.indent--;
  w.line("}");
}

} // namespace tlc::codegen
