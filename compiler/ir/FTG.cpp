#include "ir/FTG.h"
#include "ir/TileOp.h"

#include "ir/AccessAnalysis.h"
#include "ir/AnnotatedLayout.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace tlc::ftg {

using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using llvm::dyn_cast_or_null;

llvm::StringRef nodeKindName(NodeKind k) {
  switch (k) {
  case NodeKind::Copy: return "copy";
  case NodeKind::Gemm: return "gemm";
  case NodeKind::Reduce: return "reduce";
  case NodeKind::Fill: return "fill";
  case NodeKind::AtomicAdd: return "atomic_add";
  case NodeKind::Cumsum: return "cumsum";
  case NodeKind::DequantI4: return "dequant_i4";
  case NodeKind::Im2col: return "im2col";
  case NodeKind::Parallel: return "parallel";
  case NodeKind::Let: return "let";
  case NodeKind::Scalar: return "scalar";
  case NodeKind::Extern: return "call_extern";
  case NodeKind::Barrier: return "barrier";
  case NodeKind::AnnotateLayout: return "annotate_layout";
  case NodeKind::SwizzleBlocks: return "swizzle_blocks";
  case NodeKind::Loop: return "loop";
  case NodeKind::If: return "if";
  }
  return "?";
}

llvm::StringRef copyInstrName(CopyInstr c) {
  switch (c) {
  case CopyInstr::None: return "none";
  case CopyInstr::CpAsync16: return "cp.async.cg 16B";
  case CopyInstr::Vector: return "vector ld/st";
  case CopyInstr::Scalar: return "scalar ld/st";
  case CopyInstr::Fragment: return "per-thread fragment access";
  }
  return "?";
}

int64_t Buffer::numElements() const {
  int64_t n = 1;
  for (const auto &d : shape)
    n *= d.value_or(1);
  return n;
}

int64_t Buffer::bytes() const { return (numElements() * bitWidth(dtype) + 7) / 8; }

Buffer *Graph::addBuffer(const BufferLikeDecl *d) {
  auto b = std::make_unique<Buffer>();
  b->decl = d;
  b->name = d->getName().str();
  b->scope = d->scope;
  b->dtype = d->elemType;
  for (size_t i = 0; i < d->shape.rank(); ++i)
    b->shape.push_back(d->shape.constDim(i));
  if (isPacked(d->elemType)) {
    // Held as bytes (Buffer::packed); Sema made constant innermost extents even.
    b->packed = d->elemType;
    b->dtype = DType::U8;
    if (!b->shape.empty() && b->shape.back())
      *b->shape.back() /= 2;
  }
  if (auto *tp = dyn_cast<TensorParamDecl>(d)) {
    b->isParam = true;
    b->isOut = tp->isOut;
  }
  Buffer *raw = b.get();
  byDecl[d] = raw;
  buffers.push_back(std::move(b));
  return raw;
}

namespace {

class GraphBuilder : public NodeBuilder {
public:
  GraphBuilder(Graph &g, DiagnosticEngine &diags) : g(g), diags(diags) {}

  void block(const BlockStmt *b, std::vector<std::unique_ptr<Node>> &out, bool inLoop) {
    for (const Stmt *s : b->body)
      stmt(s, out, inLoop);
    linkDependencies(out);
  }

  bool failed = false;

private:
  Node *add(std::vector<std::unique_ptr<Node>> &out, NodeKind k, const Stmt *s) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->stmt = s;
    n->id = nextId++;
    out.push_back(std::move(n));
    return out.back().get();
  }

  void notSupported(llvm::SMRange r, const llvm::Twine &what, const llvm::Twine &hint = "") {
    auto d = diags.error(r, "not supported yet: " + what);
    if (!hint.isTriviallyEmpty())
      d.hint(hint);
    failed = true;
  }
  void unsupported(llvm::SMRange r, const std::string &what, const std::string &hint) override {
    notSupported(r, llvm::Twine(what), llvm::Twine(hint));
  }

  std::optional<Operand> operand(const Expr *e) override {
    if (!e)
      return std::nullopt;
    const NameExpr *base = isa<IndexExpr>(e) ? cast<IndexExpr>(e)->base : dyn_cast<NameExpr>(e);
    if (!base || !base->decl)
      return std::nullopt;
    Operand op;
    op.buffer = g.bufferOf(base->decl);
    if (!op.buffer)
      return std::nullopt;
    // Region facts again, without diagnostics (Sema accepted this operand).
    const BufferLikeDecl *buf = op.buffer->decl;
    size_t rank = buf->shape.rank();
    op.region.buffer = const_cast<BufferLikeDecl *>(buf);
    op.region.range = e->getRange();
    op.expr = e;
    op.region.extents.resize(rank);
    op.region.isPoint.assign(rank, false);
    op.region.origins.assign(rank, nullptr);
    auto *ix = dyn_cast<IndexExpr>(e);
    if (!ix) {
      for (size_t i = 0; i < rank; ++i)
        op.region.extents[i] = buf->shape.constDim(i);
      if (op.buffer->packed)
        toBytes(op);
      return op;
    }
    op.region.originOnly = !ix->hasSlice();
    for (size_t i = 0; i < rank && i < ix->indices.size(); ++i) {
      const IndexItem &item = ix->indices[i];
      op.region.origins[i] = item.lo;
      if (!item.isSlice) {
        op.region.isPoint[i] = !op.region.originOnly;
        op.region.extents[i] = op.region.originOnly ? std::nullopt : std::optional<int64_t>(1);
      } else if (item.hi) {
        op.region.extents[i] = constantDifference(item.hi, item.lo);
      } else if (auto dim = buf->shape.constDim(i)) {
        op.region.extents[i] = *dim - (item.lo && item.lo->constant ? item.lo->constant->getInt() : 0);
      }
    }
    if (op.buffer->packed)
      toBytes(op);
    return op;
  }

  // A packed buffer's operand in bytes (Buffer::packed): the innermost extent and origin
  // halved. Sema proved both even, so `lo / 2` is exact.
  void toBytes(Operand &op) {
    Region &r = op.region;
    if (r.extents.empty())
      return;
    size_t last = r.extents.size() - 1;
    if (r.extents[last])
      *r.extents[last] /= 2;
    if (const Expr *lo = r.origins[last])
      r.origins[last] = halved(lo);
  }

  // `lo / 2` for an even `lo`, kept in the forms multipleOf and the lowering's vector checks
  // read (a constant, a product with a constant, a sum of such): `k * 64` halves to `k * 32`.
  // Anything else is the division itself.
  const Expr *halved(const Expr *lo) {
    if (lo->constant && lo->constant->isInt())
      return intLiteral(lo, lo->constant->getInt() / 2);
    if (auto *b = dyn_cast<BinaryExpr>(lo); b && b->type.isIntegral()) {
      if (b->op == BinaryOp::Mul)
        for (auto [c, x] : {std::pair{b->lhs, b->rhs}, std::pair{b->rhs, b->lhs}})
          if (c->constant && c->constant->isInt() && c->constant->getInt() % 2 == 0)
            return binary(lo, BinaryOp::Mul, x, intLiteral(c, c->constant->getInt() / 2));
      if ((b->op == BinaryOp::Add || b->op == BinaryOp::Sub) && multipleOf(b->lhs, 2) && multipleOf(b->rhs, 2))
        return binary(lo, b->op, halved(b->lhs), halved(b->rhs));
    }
    return binary(lo, BinaryOp::Div, lo, intLiteral(lo, 2));
  }

  const Expr *intLiteral(const Expr *at, int64_t v) {
    auto e = std::make_unique<IntLitExpr>(at->getRange(), v);
    e->type = Type::intLiteral();
    e->constant = ConstValue{v};
    g.madeExprs.push_back(std::move(e));
    return g.madeExprs.back().get();
  }

  const Expr *binary(const Expr *like, BinaryOp op, const Expr *l, const Expr *r) {
    auto e = std::make_unique<BinaryExpr>(like->getRange(), op, const_cast<Expr *>(l), const_cast<Expr *>(r),
                                          like->getRange());
    e->type = like->type;
    g.madeExprs.push_back(std::move(e));
    return g.madeExprs.back().get();
  }

  void tileOp(const CallStmt *s, std::vector<std::unique_ptr<Node>> &out) {
    const CallExpr *c = s->call;
    if (const TileOp *op = tileOpFor(c->builtin)) {
      Node *n = add(out, op->kind(), s);
      n->call = c;
      n->op = op;
      op->build(*n, *c, *this);
      return;
    }
    switch (c->builtin) {
    case Builtin::SwizzleBlocks: {
      Node *n = add(out, NodeKind::SwizzleBlocks, s);
      n->call = c;
      const CallArg *a = c->keywordArg("panel");
      const Expr *p = a ? a->value : c->positional().empty() ? nullptr : c->positional()[0];
      g.swizzlePanel = p && p->constant ? int(p->constant->getInt()) : 8;
      return;
    }
    case Builtin::WarpSpecialize: {
      // A switch for the whole kernel, not a node: Sema checked the constant and the place.
      const Expr *e = c->args.empty() ? nullptr : c->args[0].value;
      g.warpSpecialize = !(e && e->constant && e->constant->isBool() && !e->constant->getBool());
      return;
    }
    case Builtin::Persistent: {
      // A switch for the whole kernel, like warp_specialize.
      const Expr *e = c->args.empty() ? nullptr : c->args[0].value;
      g.persistent = !(e && e->constant && e->constant->isBool() && !e->constant->getBool());
      g.persistentRange = c->getRange();
      return;
    }
    case Builtin::TuneFor:
      return; // read by the driver's choice of `auto` parameters (KernelDecl::tunedSizes)
    case Builtin::CallExtern:
    case Builtin::Print: {
      Node *n = add(out, NodeKind::Extern, s);
      n->call = c;
      return;
    }
    case Builtin::AnnotateLayout:
      return annotateLayout(*c, out);
    default:
      // A tile operator compiler/ops/ does not implement.
      if (isTileOp(c->builtin))
        notSupported(c->calleeRange, c->callee + " in code generation");
      return;
    }
  }

  // annotate_layout(buf, layout): fixes buf's shared layout before inference runs (no node:
  // it generates no code). The language's rules for the statement (docs/language.md 9.7):
  // a shared buffer, at the top level, before any use, once.
  void annotateLayout(const CallExpr &c, const std::vector<std::unique_ptr<Node>> &out) {
    auto arg = [&](size_t pos, llvm::StringRef keyword) -> const Expr * {
      if (const CallArg *a = c.keywordArg(keyword))
        return a->value;
      auto p = c.positional();
      return pos < p.size() ? p[pos] : nullptr;
    };
    auto *name = dyn_cast_or_null<NameExpr>(arg(0, "buffer"));
    auto *lambda = dyn_cast_or_null<LambdaExpr>(arg(1, "layout"));
    Buffer *b = name ? g.bufferOf(name->decl) : nullptr;
    if (!b || !lambda)
      return; // Sema reported it
    auto fail = [&](const std::string &msg, const std::string &hint) {
      diags.error(c.calleeRange, msg).hint(hint);
      failed = true;
    };
    if (b->scope != Scope::Shared)
      return notSupported(c.calleeRange, "annotate_layout of " + scopeName(b->scope) + " buffer '" + b->name + "'",
                          "fragment layouts are inferred from the operators that use them; annotate shared buffers");
    if (&out != &g.body)
      return fail("annotate_layout must be at the top level of the kernel body",
                  "move it next to the allocation of '" + b->name + "'");
    if (auto it = annotatedAt.find(b); it != annotatedAt.end()) {
      diags.error(c.calleeRange, "'" + b->name + "' already has an annotated layout")
          .note(it->second->calleeRange, "annotated here")
          .hint("a buffer has one layout: keep one of the annotations");
      failed = true;
      return;
    }
    for (const auto &n : out)
      if (llvm::is_contained(n->reads, b) || llvm::is_contained(n->writes, b)) {
        diags.error(c.calleeRange, "annotate_layout of '" + b->name + "' after its first use")
            .note(n->stmt->getRange(), "'" + b->name + "' is used here")
            .hint("annotate the buffer before the statements that use it");
        failed = true;
        return;
      }
    annotatedAt[b] = &c;
    Shape shape;
    for (const auto &d : b->shape)
      shape.push_back(d.value_or(1));
    unsigned line = diags.sourceManager().getLineAndColumn(c.calleeRange.Start).first;
    auto layout = buildAnnotatedLayout(*lambda, b->name, shape, int(bitWidth(b->dtype)), line, diags);
    if (!layout) {
      failed = true;
      return;
    }
    b->shared = *layout;
    b->layoutReason = "annotate_layout, line " + std::to_string(line);
  }

  // Builds the nodes of `s`, then their access sets (children are complete by then).
  void stmt(const Stmt *s, std::vector<std::unique_ptr<Node>> &out, bool inLoop) {
    size_t first = out.size();
    build(s, out, inLoop);
    for (size_t i = first; i < out.size(); ++i) {
      Node &n = *out[i];
      computeAccesses(g, n);
      // Scalar code, loops and branches have no tile operands: they list what they access.
      if (n.call)
        continue;
      n.inputs.clear();
      n.outputs.clear();
      for (Buffer *b : n.reads)
        n.inputs.push_back({b, {}});
      for (Buffer *b : n.writes)
        n.outputs.push_back({b, {}});
    }
  }

  void build(const Stmt *s, std::vector<std::unique_ptr<Node>> &out, bool inLoop) {
    switch (s->getKind()) {
    case Stmt::SK_Alloc:
      return;
    case Stmt::SK_Let:
      add(out, NodeKind::Let, s);
      return;
    case Stmt::SK_Assign: {
      auto *a = cast<AssignStmt>(s);
      auto *ix = dyn_cast<IndexExpr>(a->target);
      Buffer *b = ix ? g.bufferOf(ix->base->decl) : nullptr;
      if (b && b->scope != Scope::Local) {
        notSupported(a->target->getRange(),
                    "assigning an element of " + scopeName(b->scope) + " buffer '" + b->name +
                        "' outside a parallel loop",
                    "write elements inside `for ... in parallel(...)` so every thread knows "
                    "which elements are its own");
        return;
      }
      add(out, NodeKind::Scalar, s);
      return;
    }
    case Stmt::SK_Call:
      return tileOp(cast<CallStmt>(s), out);
    case Stmt::SK_Block:
      return block(cast<BlockStmt>(s), out, inLoop);
    case Stmt::SK_If: {
      auto *i = cast<IfStmt>(s);
      Node *n = add(out, NodeKind::If, s);
      block(i->thenBody, n->body, inLoop);
      if (i->elseBody) {
        if (auto *b = dyn_cast<BlockStmt>(i->elseBody))
          block(b, n->elseBody, inLoop);
        else
          stmt(i->elseBody, n->elseBody, inLoop);
      }
      return;
    }
    case Stmt::SK_For: {
      auto *f = cast<ForStmt>(s);
      if (f->loopKind == LoopKind::Parallel) {
        Node *n = add(out, NodeKind::Parallel, s);
        n->loop = f;
        checkParallelBody(f->body);
        return;
      }
      Node *n = add(out, NodeKind::Loop, s);
      n->loop = f;
      n->stages = f->loopKind == LoopKind::Pipelined ? int(f->stages.value_or(2)) : 1;
      block(f->body, n->body, true);
      return;
    }
    }
  }

  // A parallel body is per-element scalar code; loops inside it are serial per thread.
  void checkParallelBody(const Stmt *s) {
    if (auto *b = dyn_cast<BlockStmt>(s)) {
      for (const Stmt *c : b->body)
        checkParallelBody(c);
    } else if (auto *i = dyn_cast<IfStmt>(s)) {
      checkParallelBody(i->thenBody);
      if (i->elseBody)
        checkParallelBody(i->elseBody);
    } else if (auto *f = dyn_cast<ForStmt>(s)) {
      notSupported(f->kindRange, "loops inside a parallel loop body");
    }
  }

  Graph &g;
  DiagnosticEngine &diags;
  unsigned nextId = 0;
  llvm::DenseMap<const Buffer *, const CallExpr *> annotatedAt;
};

} // namespace

std::unique_ptr<Graph> buildGraph(const KernelDecl &kernel, DiagnosticEngine &diags,
                                  const target::TargetInfo &target) {
  auto g = std::make_unique<Graph>();
  g->kernel = &kernel;
  g->threads = int(kernel.numThreads.value_or(128));
  g->target = &target;
  for (TensorParamDecl *p : kernel.params)
    if (!p->isScalar())
      g->addBuffer(p);
  // Allocations are at the top level of the body (Sema enforces it).
  bool failed = false;
  for (Stmt *s : kernel.body->body)
    if (auto *a = dyn_cast<AllocStmt>(s)) {
      Buffer *b = g->addBuffer(a->buffer);
      // Fragment layouts (ir/TileLayout.h) spread 1-d and 2-d tiles over threads.
      if (b->scope == Scope::Fragment && b->shape.size() > 2) {
        std::string flat = "[";
        for (size_t i = 0; i + 1 < b->shape.size(); ++i)
          flat += (i ? " * " : "") + std::to_string(b->shape[i].value_or(1));
        flat += ", " + std::to_string(b->shape.back().value_or(1)) + "]";
        diags.error(a->buffer->getRange(), "not supported yet: fragment '" + b->name + "' of rank " +
                                               std::to_string(b->shape.size()) +
                                               " (fragments have 1 or 2 dimensions)")
            .hint("fold the leading dimensions into one: fragment " + dtypeName(b->dtype).str() + flat);
        failed = true;
      }
    }
  GraphBuilder builder(*g, diags);
  builder.block(kernel.body, g->body, false);
  if (builder.failed || failed)
    return nullptr;
  return g;
}

// ------------------------------------------------------------------ printing

namespace {

std::string shapeStr(const Buffer &b) {
  std::string s = "[";
  for (size_t i = 0; i < b.shape.size(); ++i) {
    if (i)
      s += ", ";
    s += b.shape[i] ? std::to_string(*b.shape[i])
                    : b.decl ? toSource(b.decl->shape.dims[i]) : "?";
    if (!b.shape[i] && b.packed && i + 1 == b.shape.size())
      s += " / 2"; // its bytes
  }
  return s + "]";
}

void printNodes(const std::vector<std::unique_ptr<Node>> &nodes, llvm::raw_ostream &os,
                unsigned indent, bool inferred) {
  for (const auto &np : nodes) {
    const Node &n = *np;
    os.indent(indent) << "%" << n.id << " = ";
    switch (n.kind) {
    case NodeKind::Loop: {
      const ForStmt *f = n.loop;
      os << loopKindName(f->loopKind) << " " << f->vars[0]->getName() << " < "
         << (f->extents.empty() ? "?" : toSource(f->extents[0]));
      if (f->loopKind == LoopKind::Pipelined)
        os << " stages=" << n.stages;
      break;
    }
    case NodeKind::Parallel: {
      os << "parallel(";
      const ForStmt *f = n.loop;
      for (size_t i = 0; i < f->vars.size() && i < f->extents.size(); ++i)
        os << (i ? ", " : "") << f->vars[i]->getName() << " < " << toSource(f->extents[i]);
      os << ")";
      break;
    }
    case NodeKind::If:
      os << "if " << toSource(cast<IfStmt>(n.stmt)->cond);
      break;
    case NodeKind::Let: {
      auto *l = cast<LetStmt>(n.stmt)->decl;
      os << "let " << l->getName() << " : " << l->type.str() << " = " << toSource(l->init);
      break;
    }
    case NodeKind::Scalar: {
      auto *a = cast<AssignStmt>(n.stmt);
      os << "scalar " << toSource(a->target) << " " << spelling(a->op) << " " << toSource(a->value);
      break;
    }
    default:
      os << (n.call ? n.call->callee : nodeKindName(n.kind).str()) << "(";
      if (n.call) {
        for (size_t i = 0; i < n.call->args.size(); ++i) {
          const CallArg &a = n.call->args[i];
          os << (i ? ", " : "") << (a.keyword.empty() ? "" : a.keyword + " = ") << toSource(a.value);
        }
      }
      os << ")";
      break;
    }
    auto names = [&](const std::vector<Buffer *> &buffers) {
      std::string s;
      for (const Buffer *b : buffers)
        s += (s.empty() ? "" : " ") + b->name;
      return s;
    };
    if (!n.reads.empty())
      os << "  reads " << names(n.reads);
    if (!n.writes.empty())
      os << "  writes " << names(n.writes);
    if (!n.deps.empty()) {
      os << "  after";
      for (const Node *d : n.deps)
        os << " %" << d->id;
    }
    if (inferred) {
      if (n.kind == NodeKind::Gemm && !n.mmaText.empty())
        os << "  {" << n.mmaText << "}";
      if (n.kind == NodeKind::Copy && n.instr != CopyInstr::None)
        os << "  {" << copyInstrName(n.instr) << ", " << n.copyVector << " elements/access"
           << (n.producer ? ", prefetched" : "") << "}";
      if (n.kind == NodeKind::Im2col && n.im2col)
        os << "  {" << n.im2col->note << (n.producer ? ", prefetched" : "") << "}";
      if (n.kind == NodeKind::Parallel)
        os << "  {threads bound by " << (n.driver ? "fragment " + n.driver->name : "flattened index")
           << (n.gatherNote.empty() ? "" : "; " + n.gatherNote) << (n.producer ? ", prefetched" : "") << "}";
      if (n.kind == NodeKind::Loop && !n.pipelineNote.empty())
        os << "  {" << n.pipelineNote << "}";
      else if (n.kind == NodeKind::Loop && n.loop->loopKind == LoopKind::Pipelined)
        os << "  {cp.async multistage, " << n.stages << " buffers}";
    }
    os << "\n";
    if (n.kind == NodeKind::Loop || n.kind == NodeKind::If) {
      printNodes(n.body, os, indent + 2, inferred);
      if (!n.elseBody.empty()) {
        os.indent(indent) << "else\n";
        printNodes(n.elseBody, os, indent + 2, inferred);
      }
    }
  }
}

} // namespace

bool coversWholeBuffer(const Region &r, const Buffer &b) {
  if (r.originOnly)
    return false;
  for (size_t d = 0; d < r.extents.size(); ++d) {
    const Expr *lo = r.origins[d];
    bool fromZero = !lo || (lo->constant && lo->constant->isInt() && lo->constant->getInt() == 0);
    std::optional<int64_t> extent = r.isPoint[d] ? std::optional<int64_t>(1) : r.extents[d];
    if (!fromZero || !extent || d >= b.shape.size() || b.shape[d] != extent)
      return false;
  }
  return true;
}

const std::vector<std::unique_ptr<Node>> *takenBranch(const Node &n) {
  if (n.kind != NodeKind::If)
    return nullptr;
  const Expr *cond = llvm::cast<IfStmt>(n.stmt)->cond;
  if (!cond->constant || !cond->constant->isBool())
    return nullptr;
  return cond->constant->getBool() ? &n.body : &n.elseBody;
}

std::vector<Node *> liveNodes(const std::vector<std::unique_ptr<Node>> &list) {
  std::vector<Node *> out;
  for (const auto &n : list) {
    if (const auto *taken = takenBranch(*n)) {
      std::vector<Node *> live = liveNodes(*taken);
      out.insert(out.end(), live.begin(), live.end());
    } else {
      out.push_back(n.get());
    }
  }
  return out;
}

static void appendFlattened(const std::vector<std::unique_ptr<Node>> &nodes, std::vector<const Node *> &out) {
  for (auto &n : nodes) {
    const auto *taken = takenBranch(*n);
    if (taken && llvm::none_of(*taken, [](const auto &c) {
          return c->kind == NodeKind::Let || c->kind == NodeKind::Scalar || c->producer;
        })) {
      appendFlattened(*taken, out);
      continue;
    }
    out.push_back(n.get());
  }
}

std::vector<const Node *> flattenedSiblings(const std::vector<std::unique_ptr<Node>> &list) {
  std::vector<const Node *> out;
  appendFlattened(list, out);
  return out;
}

std::vector<const std::vector<std::unique_ptr<Node>> *> liveChildren(const Node &n) {
  if (const auto *taken = takenBranch(n))
    return {taken};
  return {&n.body, &n.elseBody};
}

std::vector<const Node *> producersOf(const Node &loop) {
  std::vector<const Node *> out;
  for (const Node *c : liveNodes(loop.body)) {
    if (c->producer)
      out.push_back(c);
    if (c->kind == NodeKind::If)
      for (const auto *branch : {&c->body, &c->elseBody})
        for (const Node *d : liveNodes(*branch))
          if (d->producer)
            out.push_back(d);
  }
  return out;
}

void printGraph(const Graph &g, llvm::raw_ostream &os, bool inferred) {
  const KernelDecl &k = *g.kernel;
  os << "ftg " << k.name << " grid(";
  for (size_t i = 0; i < k.grid.size(); ++i)
    os << (i ? ", " : "") << toSource(k.grid[i]);
  os << ") threads(" << g.threads << ")";
  if (g.swizzlePanel)
    os << " swizzle_blocks(" << g.swizzlePanel << ")";
  if (!g.warpSpecialize)
    os << " warp_specialize(false)";
  if (g.persistent)
    os << " persistent";
  os << "\n";
  for (const auto &b : g.buffers) {
    os << "  buffer " << b->name << " : " << scopeName(b->scope) << " " << dtypeName(b->dtype)
       << shapeStr(*b);
    if (b->packed)
      os << " (bytes of " << dtypeName(*b->packed) << " " << b->decl->shape.str() << ")";
    if (b->isParam)
      os << (b->isOut ? " (out)" : " (in)");
    if (inferred) {
      if (b->shared)
        os << "  layout " << b->shared->str();
      if (b->fragment)
        os << "  layout " << b->fragment->str();
      if (b->stages > 1)
        os << "  x" << b->stages << " stages";
      if (b->sharedOffset >= 0)
        os << "  at byte " << b->sharedOffset;
      if (!b->layoutReason.empty())
        os << "  (" << b->layoutReason << ")";
    }
    os << "\n";
  }
  printNodes(g.body, os, 2, inferred);
}

bool verifyGraph(const Graph &g, llvm::raw_ostream &errors) {
  bool ok = true;
  llvm::SmallPtrSet<const Buffer *, 16> known;
  for (const auto &b : g.buffers)
    known.insert(b.get());
  llvm::SmallPtrSet<const Node *, 32> seen;
  const_cast<Graph &>(g).walk([&](Node &n) {
    for (const auto *list : {&n.inputs, &n.outputs})
      for (const Operand &o : *list)
        if (!known.count(o.buffer)) {
          errors << "ftg verifier: node %" << n.id << " uses a buffer not in the graph\n";
          ok = false;
        }
    for (const Node *d : n.deps)
      if (!seen.count(d)) {
        errors << "ftg verifier: node %" << n.id << " depends on %" << d->id
               << ", which does not precede it\n";
        ok = false;
      }
    if (n.kind == NodeKind::Gemm && n.inputs.size() == 3 &&
        n.inputs[2].buffer->scope != Scope::Fragment) {
      errors << "ftg verifier: gemm %" << n.id << " accumulates outside a fragment\n";
      ok = false;
    }
    if (n.kind == NodeKind::Loop && n.stages < 1) {
      errors << "ftg verifier: loop %" << n.id << " has " << n.stages << " stages\n";
      ok = false;
    }
    seen.insert(&n);
  });
  return ok;
}

} // namespace tlc::ftg
