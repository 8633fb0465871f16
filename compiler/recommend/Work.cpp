#include "recommend/Work.h"

#include "target/TargetInfo.h"

#include <array>
#include <cmath>

namespace tlc::recommend {

using namespace ftg;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

double BlockWork::tensorFlopsTotal() const {
  double total = 0;
  for (const auto &[dtype, flops] : tensorFlops)
    total += flops;
  return total;
}

double BlockWork::globalBytes(bool writes) const {
  double total = 0;
  for (const GlobalAccess &a : global)
    if (a.write == writes)
      total += a.bytes;
  return total;
}

std::optional<GridShape> gridOf(const KernelDecl &k, const ExprEvaluator &eval) {
  GridShape g;
  for (size_t i = 0; i < k.grid.size() && i < 3; ++i) {
    std::optional<int64_t> v = eval.evalInt(k.grid[i]);
    if (!v || *v <= 0)
      return std::nullopt;
    g.dims[i] = *v;
  }
  return g;
}

namespace {

double elemBytes(DType t) { return bitWidth(t) / 8.0; }

// The cost of one evaluation of scalar code, per element of a parallel loop or per thread.
struct ScalarCost {
  double cuda = 0, sfu = 0, shared = 0, registers = 0;
  std::vector<GlobalAccess> global; // bytes per evaluation
};

// Counts operations of expression trees by the unit that executes them.
class OpCounter {
public:
  OpCounter(const Graph &g, const KernelDecl &k) : g(g), k(k) {}

  void stmt(const Stmt *s, ScalarCost &c) {
    if (auto *b = dyn_cast<BlockStmt>(s)) {
      for (const Stmt *x : b->body)
        stmt(x, c);
    } else if (auto *l = dyn_cast<LetStmt>(s)) {
      expr(l->decl->init, c);
    } else if (auto *a = dyn_cast<AssignStmt>(s)) {
      expr(a->value, c);
      if (a->op != AssignOp::Assign) {
        access(a->target, /*write=*/false, c);
        c.cuda += 1;
        if (a->op == AssignOp::Div)
          c.sfu += 1; // a reciprocal, then a multiply
      }
      access(a->target, /*write=*/true, c);
      indices(a->target, c);
    } else if (auto *i = dyn_cast<IfStmt>(s)) {
      // Both branches are charged: a predicated element-wise body executes both sides.
      expr(i->cond, c);
      stmt(i->thenBody, c);
      if (i->elseBody)
        stmt(i->elseBody, c);
    } else if (auto *call = dyn_cast<CallStmt>(s)) {
      expr(call->call, c);
    }
  }

  void expr(const Expr *e, ScalarCost &c) {
    if (!e || e->constant)
      return; // folded: no work at run time
    switch (e->getKind()) {
    case Expr::EK_Index:
      access(e, /*write=*/false, c);
      indices(e, c);
      return;
    case Expr::EK_Unary:
      c.cuda += 1;
      return expr(cast<UnaryExpr>(e)->operand, c);
    case Expr::EK_Binary: {
      auto *b = cast<BinaryExpr>(e);
      c.cuda += 1;
      if (b->op == BinaryOp::Div && b->type.isFloating())
        c.sfu += 1; // reciprocal approximation, then the multiply counted above
      expr(b->lhs, c);
      expr(b->rhs, c);
      return;
    }
    case Expr::EK_Call: {
      auto *call = cast<CallExpr>(e);
      callCost(call, c);
      for (const CallArg &a : call->args)
        expr(a.value, c);
      return;
    }
    default:
      return;
    }
  }

private:
  void callCost(const CallExpr *call, ScalarCost &c) {
    if (call->calleeKind == CalleeKind::Cast) {
      c.cuda += 1;
      return;
    }
    switch (call->builtin) {
    case Builtin::Exp2: case Builtin::Log2: case Builtin::Rsqrt: case Builtin::Sqrt:
    case Builtin::Tanh:
      c.sfu += 1;
      return;
    case Builtin::Exp: case Builtin::Log:
      c.sfu += 1; // ex2/lg2 with a scaling multiply
      c.cuda += 1;
      return;
    case Builtin::Sigmoid:
      c.sfu += 2; // ex2 and a reciprocal
      c.cuda += 2;
      return;
    case Builtin::Max: case Builtin::Min: case Builtin::Abs: case Builtin::Select:
    case Builtin::CeilDiv:
      c.cuda += 1;
      return;
    default:
      return; // inf(), call_extern: nothing we can count
    }
  }

  // Index arithmetic that survives as run-time work (a fragment index in a parallel loop
  // is a compile-time register number and costs nothing).
  void indices(const Expr *e, ScalarCost &c) {
    auto *ix = dyn_cast<IndexExpr>(e);
    Buffer *b = ix ? g.bufferOf(ix->base->decl) : nullptr;
    if (!ix || !b || b->scope == Scope::Fragment)
      return;
    for (const IndexItem &i : ix->indices)
      expr(i.lo, c);
  }

  void access(const Expr *e, bool write, ScalarCost &c) {
    auto *ix = dyn_cast<IndexExpr>(e);
    Buffer *b = ix ? g.bufferOf(ix->base->decl) : nullptr;
    if (!b)
      return;
    double bytes = elemBytes(b->dtype);
    switch (b->scope) {
    case Scope::Shared: c.shared += bytes; return;
    case Scope::Fragment:
    case Scope::Local: c.registers += bytes; return;
    case Scope::Global: {
      GlobalAccess a;
      a.tensor = b;
      a.write = write;
      a.bytes = bytes;
      for (size_t i = 0; i < k.blockIndices.size(); ++i)
        for (const IndexItem &item : ix->indices)
          if (mentions(item.lo, k.blockIndices[i]) || mentions(item.hi, k.blockIndices[i]))
            a.blockDims |= 1u << i;
      c.global.push_back(a);
      return;
    }
    }
  }

  const Graph &g;
  const KernelDecl &k;
};

class WorkAnalyzer {
public:
  WorkAnalyzer(const Graph &g, const GridShape &grid, const ExprEvaluator &shapes)
      : g(g), k(*g.kernel), counter(g, k), eval(shapes) {
    // Up to 64 blocks spread evenly over the grid stand for all of them.
    int64_t n = grid.blocks(), samples = std::min<int64_t>(n, 64);
    for (int64_t s = 0; s < samples; ++s) {
      int64_t id = (2 * s + 1) * n / (2 * samples);
      blocks.push_back({id % grid.dims[0], id / grid.dims[0] % grid.dims[1],
                        id / (grid.dims[0] * grid.dims[1])});
    }
  }

  BlockWork run() {
    work.bulk = infer::planBulkPipeline(g);
    nodes(g.body, 1.0);
    return std::move(work);
  }

private:
  // The average over sampled blocks of an integer expression; nullopt if it depends on
  // something other than block indices.
  std::optional<double> average(const Expr *e) {
    double sum = 0;
    for (const auto &b : blocks) {
      for (size_t i = 0; i < k.blockIndices.size() && i < 3; ++i)
        eval.bind(k.blockIndices[i], ConstValue{b[i]});
      std::optional<ConstValue> v = eval.eval(e);
      if (!v || !(v->isInt() || v->isBool()))
        return std::nullopt;
      sum += v->isInt() ? double(v->getInt()) : (v->getBool() ? 1.0 : 0.0);
    }
    return blocks.empty() ? 0.0 : sum / double(blocks.size());
  }

  double tripCount(const ForStmt &f) {
    if (f.extents.empty())
      return 1;
    std::optional<double> hi = average(f.extents[0]);
    std::optional<double> lo = f.start ? average(f.start) : std::optional<double>(0.0);
    return hi && lo ? std::max(0.0, *hi - *lo) : 1.0;
  }

  void nodes(const std::vector<std::unique_ptr<Node>> &list, double times) {
    for (const auto &n : list)
      node(*n, times);
  }

  void addGlobal(GlobalAccess a, double times) {
    a.bytes *= times;
    for (GlobalAccess &x : work.global)
      if (x.tensor == a.tensor && x.write == a.write && x.blockDims == a.blockDims &&
          x.atomic == a.atomic) {
        x.bytes += a.bytes;
        return;
      }
    work.global.push_back(a);
  }

  static double regionElements(const Operand &o) {
    const Buffer &b = *o.buffer;
    if (o.region.extents.size() != b.shape.size())
      return double(b.numElements());
    double n = 1;
    for (size_t i = 0; i < b.shape.size(); ++i)
      n *= double(o.region.extents[i].value_or(b.shape[i].value_or(1)));
    return n;
  }

  unsigned originDims(const Operand &o) {
    unsigned dims = 0;
    for (size_t i = 0; i < k.blockIndices.size(); ++i)
      for (const Expr *origin : o.region.origins)
        if (mentions(origin, k.blockIndices[i]))
          dims |= 1u << i;
    return dims;
  }

  void node(const Node &n, double times) {
    switch (n.kind) {
    case NodeKind::Loop: {
      bool pipelined = n.loop->loopKind == LoopKind::Pipelined && n.stages > 1;
      double trips = tripCount(*n.loop);
      bool touchesShared = false;
      for (const auto *list : {&n.inputs, &n.outputs})
        for (const Operand &o : *list)
          touchesShared |= o.buffer->scope == Scope::Shared;
      if (touchesShared)
        work.barriers += times * trips;
      if (pipelined) {
        // A wgmma group left in flight still reads its stage while the next one is issued, so
        // the prefetch runs one stage less ahead (PipelineExpansion).
        bool inFlight = !infer::gemmsLeftInFlight(n, /*bulk=*/&n == work.bulk.loop).empty();
        work.groupsInFlight |= inFlight;
        prefetchPerIteration(n, n.stages - 1 - (inFlight ? 1 : 0));
      }
      nodes(n.body, times * trips);
      return;
    }
    case NodeKind::If: {
      std::optional<double> taken = average(llvm::cast<IfStmt>(n.stmt)->cond);
      double p = taken.value_or(0.5);
      nodes(n.body, times * p);
      nodes(n.elseBody, times * (1 - p));
      return;
    }
    case NodeKind::Copy: return copy(n, times);
    case NodeKind::Im2col: return im2col(n, times);
    case NodeKind::Gemm: return gemm(n, times);
    case NodeKind::Reduce: return reduce(n, times);
    case NodeKind::Fill: {
      const Buffer *b = n.outputs.empty() ? nullptr : n.outputs[0].buffer;
      if (!b)
        return;
      if (b->scope == Scope::Shared)
        work.sharedBytes += times * double(b->bytes());
      else
        work.cudaOps += times * double(b->numElements());
      return;
    }
    case NodeKind::AtomicAdd: {
      if (n.outputs.empty())
        return;
      double elems = !n.inputs.empty() ? double(n.inputs[0].buffer->numElements()) : 1.0;
      GlobalAccess a{n.outputs[0].buffer, /*write=*/true, /*atomic=*/true, originDims(n.outputs[0]),
                     elems * elemBytes(n.outputs[0].buffer->dtype)};
      addGlobal(a, times);
      return;
    }
    case NodeKind::Parallel: {
      double elems = 1;
      for (const Expr *e : n.loop->extents)
        elems *= double(eval.evalInt(e).value_or(1));
      ScalarCost c;
      counter.stmt(n.loop->body, c);
      add(c, times * elems);
      return;
    }
    case NodeKind::Let:
    case NodeKind::Scalar: {
      // Per-thread scalar code: every thread of the block runs it.
      ScalarCost c;
      counter.stmt(n.stmt, c);
      add(c, times * g.threads);
      return;
    }
    default:
      // A tile operator the model has no formula for (cumsum, and operators to come): what its
      // access sets say it touches (ir/AccessAnalysis.h), once per element, and one operation
      // per element. swizzle_blocks, call_extern and barriers have no counted work.
      if (n.op)
        touched(n, times);
      return;
    }
  }

  // On-chip buffers only: a global tensor's extent is not the part an operator touches.
  void touched(const Node &n, double times) {
    double elements = 0;
    for (const auto *list : {&n.reads, &n.writes})
      for (const Buffer *b : *list) {
        if (b->scope == Scope::Shared)
          work.sharedBytes += times * double(b->bytes());
        else if (b->scope == Scope::Fragment || b->scope == Scope::Local)
          work.registerBytes += times * double(b->bytes());
        else
          continue;
        elements = std::max(elements, double(b->numElements()));
      }
    work.cudaOps += times * elements;
  }

  void add(const ScalarCost &c, double times) {
    work.cudaOps += c.cuda * times;
    work.sfuOps += c.sfu * times;
    work.sharedBytes += c.shared * times;
    work.registerBytes += c.registers * times;
    for (const GlobalAccess &a : c.global)
      addGlobal(a, times);
  }

  // Bytes a pipelined loop keeps requested ahead of use: its copies, `ahead` iterations.
  void prefetchPerIteration(const Node &loop, int ahead) {
    double bytes = 0;
    for (const auto &c : loop.body)
      if ((c->kind == NodeKind::Copy || c->kind == NodeKind::Im2col) && c->producer)
        bytes += double(c->outputs[0].buffer->bytes());
    work.bytesInFlight = std::max(work.bytesInFlight, bytes * double(ahead));
  }

  // An im2col tile: its bytes read from the tensor (the block's pixels: block index dims as the
  // pixel expression mentions them) and written to shared memory.
  void im2col(const Node &n, double times) {
    if (n.inputs.empty() || n.outputs.empty() || !n.im2col)
      return;
    const Buffer &tile = *n.outputs[0].buffer;
    unsigned dims = 0;
    for (size_t i = 0; i < k.blockIndices.size(); ++i)
      if (mentions(n.im2col->pixel, k.blockIndices[i]))
        dims |= 1u << i;
    GlobalAccess a{n.inputs[0].buffer, /*write=*/false, false, dims, double(tile.bytes())};
    addGlobal(a, times);
    if (!n.producer) {
      work.exposedLoads += times;
      work.bytesInFlight = std::max(work.bytesInFlight, a.bytes);
    }
    work.sharedBytes += times * double(tile.bytes());
  }

  void copy(const Node &n, double times) {
    if (n.inputs.empty() || n.outputs.empty())
      return;
    const Operand &src = n.inputs[0], &dst = n.outputs[0];
    Scope from = src.buffer->scope, to = dst.buffer->scope;
    // The tile is the on-chip side's region (an origin-only global region takes its extent
    // from there): the whole buffer, or the slice the copy names (`S[0, :]`).
    double elems = regionElements(from == Scope::Global ? dst : src);
    if (from == Scope::Global || to == Scope::Global) {
      const Operand &global = from == Scope::Global ? src : dst;
      GlobalAccess a{global.buffer, /*write=*/to == Scope::Global, false, originDims(global),
                     elems * elemBytes(global.buffer->dtype)};
      addGlobal(a, times);
      if (from == Scope::Global && !n.producer) {
        work.exposedLoads += times;
        work.bytesInFlight = std::max(work.bytesInFlight, a.bytes);
      }
    }
    for (const Buffer *b : {src.buffer, dst.buffer}) {
      if (b->scope == Scope::Shared)
        work.sharedBytes += times * elems * elemBytes(b->dtype);
      else if (b->scope != Scope::Global)
        work.registerBytes += times * elems * elemBytes(b->dtype);
    }
    if (from != Scope::Global && to != Scope::Global && from != Scope::Shared && to != Scope::Shared)
      work.cudaOps += times * elems; // register moves and conversions
  }

  void gemm(const Node &n, double times) {
    if (n.inputs.size() < 3 || !n.warpsM)
      return;
    const Buffer *A = n.inputs[0].buffer, *B = n.inputs[1].buffer, *C = n.inputs[2].buffer;
    auto dim = [](const Buffer *b, size_t i) { return double(b->shape[i].value_or(1)); };
    double M = dim(C, 0), N = dim(C, 1), K = n.transA ? dim(A, 0) : dim(A, 1);
    double flops = 2 * M * N * K;
    work.tensorFlops[A->dtype] += times * flops;
    if (n.warpgroupMma) {
      // Each instruction (m64 x instrN x k16) reads its own A and B tiles from shared memory:
      // per warpgroup and 16-deep k step, MT x (WTN / instrN) instructions of 64 x 16 A and
      // 16 x instrN B elements, so narrow instructions re-read A, and 64-row blocks B.
      double WTM = M / n.warpsM, WTN = N / n.warpsN, NI = n.instrN > 0 ? n.instrN : WTN;
      double instrs = n.warpsM * n.warpsN * (WTM / 64) * (WTN / NI) * (K / 16);
      if (A->scope == Scope::Shared)
        work.sharedBytes += times * instrs * 64 * 16 * elemBytes(A->dtype);
      if (B->scope == Scope::Shared)
        work.sharedBytes += times * instrs * 16 * NI * elemBytes(B->dtype);
      // wgmma reads A and B from shared memory itself (a register A once per k-step) and
      // keeps the accumulator in place. Each warp of a warpgroup works on 16 rows of each
      // 64-row block: per k-step it carries the m16n8 equivalents of its warp tile.
      double mTiles = M / n.warpsM / 64, nTiles = N / n.warpsN / 8;
      double perWarp = mTiles * nTiles;
      work.mmaPerWarpStep = work.mmaPerWarpStep == 0 ? perWarp : std::min(work.mmaPerWarpStep, perWarp);
      work.gemmOperandRegisters = std::max(work.gemmOperandRegisters, A->scope == Scope::Shared ? 0 : 4);
      double step = flops / n.warpsM / n.warpsN;
      work.warpgroupMma = true;
      work.warpgroupStepFlops = work.warpgroupStepFlops == 0 ? step : std::min(work.warpgroupStepFlops, step);
      return;
    }
    // Each warp reads the A rows and B columns of its tile for every k-step.
    if (A->scope == Scope::Shared)
      work.sharedBytes += times * double(A->bytes()) * n.warpsN;
    if (B->scope == Scope::Shared)
      work.sharedBytes += times * double(B->bytes()) * n.warpsM;
    // Per m16n8k16: A 16x16 and B 16x8 operands, the 16x8 accumulator read and written.
    double mmas = M * N * K / (16.0 * 8 * 16);
    work.registerBytes += times * mmas * (16 * 16 * elemBytes(A->dtype) + 16 * 8 * elemBytes(B->dtype) +
                                          2 * 16 * 8 * elemBytes(C->dtype));
    double mTiles = M / n.warpsM / 16, nTiles = N / n.warpsN / 8;
    double perWarp = mTiles * nTiles;
    work.mmaPerWarpStep = work.mmaPerWarpStep == 0 ? perWarp : std::min(work.mmaPerWarpStep, perWarp);
    // One k-step's operands as ldmatrix leaves them: 4 registers per 16x16 of A and 2 per
    // 16x8 of B (none for an operand already in a fragment).
    int regs = int((A->scope == Scope::Shared ? mTiles * 4 : 0) + (B->scope == Scope::Shared ? nTiles * 2 : 0));
    work.gemmOperandRegisters = std::max(work.gemmOperandRegisters, regs);
  }

  void reduce(const Node &n, double times) {
    const Buffer *src = n.inputs.empty() ? nullptr : n.inputs[0].buffer;
    const Buffer *dst = n.outputs.empty() ? nullptr : n.outputs[0].buffer;
    if (!src || !dst)
      return;
    // One fold per source element, then a shuffle butterfly over the lanes of a warp that
    // share a row; rows spread over several warps meet in shared scratch.
    double lanes = 1, warps = 1;
    if (const auto &f = src->fragment) {
      FragmentLayout::RowSpread spread = f->rowSpread(g.target->warpSize());
      lanes = spread.lanes;
      warps = spread.warps;
    }
    double rows = double(dst->numElements());
    work.cudaOps += times * (double(src->numElements()) + rows * lanes * warps * 2 * std::log2(lanes));
    if (warps > 1)
      work.sharedBytes += times * rows * warps * 4 * 2;
  }

  const Graph &g;
  const KernelDecl &k;
  OpCounter counter;
  ExprEvaluator eval;
  std::vector<std::array<int64_t, 3>> blocks;
  BlockWork work;
};

} // namespace

BlockWork analyzeWork(const Graph &g, const GridShape &grid, const ExprEvaluator &shapes) {
  return WorkAnalyzer(g, grid, shapes).run();
}

} // namespace tlc::recommend
