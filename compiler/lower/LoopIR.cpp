#include "lower/LoopIR.h"

#include "llvm/ADT/STLExtras.h"

namespace tlc::lower {

bool Buffer::overlaps(const Buffer &o) const {
  if (this == &o)
    return true;
  // Buffers that share bytes (SharedMemoryPlanner) conflict as if they were one.
  if (scope != MemScope::Shared || o.scope != MemScope::Shared)
    return false;
  int64_t end = offset + bytes * stages, oEnd = o.offset + o.bytes * o.stages;
  return offset < oEnd && o.offset < end;
}

bool Access::mayAlias(const Access &o) const {
  if (!buffer->overlaps(*o.buffer))
    return false;
  // (v + a) % S and (v + b) % S differ whenever a and b differ modulo S.
  if (buffer == o.buffer && stage && o.stage && stage->var == o.stage->var &&
      stage->stages == o.stage->stages) {
    int64_t S = stage->stages;
    return ((stage->offset - o.stage->offset) % S + S) % S == 0;
  }
  return true;
}

llvm::StringRef stmtKindName(StmtKind k) {
  switch (k) {
  case StmtKind::Seq: return "seq";
  case StmtKind::Scope: return "scope";
  case StmtKind::TileOp: return "tileop";
  case StmtKind::For: return "for";
  case StmtKind::If: return "if";
  case StmtKind::Let: return "let";
  case StmtKind::Decl: return "decl";
  case StmtKind::Store: return "store";
  case StmtKind::AtomicAdd: return "atomic_add";
  case StmtKind::Eval: return "call";
  case StmtKind::AsyncCopy: return "cp.async";
  case StmtKind::AsyncCommit: return "cp.async.commit";
  case StmtKind::AsyncWait: return "cp.async.wait";
  case StmtKind::VectorCopy: return "copy.vec";
  case StmtKind::Mma: return "mma";
  case StmtKind::Shuffle: return "shuffle";
  case StmtKind::Barrier: return "barrier";
  case StmtKind::NamedBarrier: return "named-barrier";
  case StmtKind::Comment: return "comment";
  case StmtKind::Pipeline: return "pipeline";
  }
  return "?";
}

StmtPtr makeComment(std::string text) {
  auto s = std::make_unique<Stmt>(StmtKind::Comment);
  s->text = std::move(text);
  return s;
}

StmtPtr makeBarrier(std::string why) {
  auto s = std::make_unique<Stmt>(StmtKind::Barrier);
  s->text = std::move(why);
  return s;
}

StmtPtr makeLet(std::string type, std::string name, std::string value, bool maybeUnused) {
  auto s = std::make_unique<Stmt>(StmtKind::Let);
  s->type = std::move(type);
  s->name = std::move(name);
  s->value = std::move(value);
  s->maybeUnused = maybeUnused;
  return s;
}

StmtPtr makeStore(std::string target, std::string value) {
  auto s = std::make_unique<Stmt>(StmtKind::Store);
  s->target = std::move(target);
  s->value = std::move(value);
  return s;
}

StmtPtr makeEval(std::string call) {
  auto s = std::make_unique<Stmt>(StmtKind::Eval);
  s->text = std::move(call);
  return s;
}

StmtPtr makeFor(ForRole role, std::string var, std::string lo, std::string hi, std::string step,
                int unroll) {
  auto s = std::make_unique<Stmt>(StmtKind::For);
  s->role = role;
  s->var = std::move(var);
  s->lo = std::move(lo);
  s->hi = std::move(hi);
  s->step = std::move(step);
  s->unroll = unroll;
  return s;
}

StmtPtr makeCompactFor(std::string var, std::string lo, std::string hi, StmtPtr body, int unroll) {
  StmtPtr f = makeFor(ForRole::Registers, std::move(var), std::move(lo), std::move(hi), "", unroll);
  f->compact = true;
  f->body.push_back(std::move(body));
  return f;
}

StmtPtr makeIf(std::string cond, IfStyle style, bool uniform) {
  auto s = std::make_unique<Stmt>(StmtKind::If);
  s->cond = std::move(cond);
  s->style = style;
  s->uniform = uniform;
  return s;
}

void forEachText(Stmt &s, const std::function<void(std::string &)> &f) {
  for (std::string *t : {&s.text, &s.var, &s.lo, &s.hi, &s.step, &s.cond, &s.type, &s.name, &s.value,
                         &s.note, &s.target, &s.dst, &s.src, &s.srcBase, &s.valid, &s.a, &s.b, &s.c, &s.op,
                         &s.bScales})
    f(*t);
}

bool anyStmt(const Stmt &s, const std::function<bool(const Stmt &)> &pred) {
  return pred(s) || anyStmt(s.body, pred) || anyStmt(s.elseBody, pred);
}

bool anyStmt(const StmtList &list, const std::function<bool(const Stmt &)> &pred) {
  return llvm::any_of(list, [&](const StmtPtr &s) { return anyStmt(*s, pred); });
}

void collectAccesses(const Stmt &s, std::vector<Access> &reads, std::vector<Access> &writes) {
  reads.insert(reads.end(), s.reads.begin(), s.reads.end());
  writes.insert(writes.end(), s.writes.begin(), s.writes.end());
  for (const StmtList *l : {&s.body, &s.elseBody})
    for (const StmtPtr &c : *l)
      collectAccesses(*c, reads, writes);
}

// ------------------------------------------------------------------ verifier

namespace {

bool isLeaf(StmtKind k) {
  return k != StmtKind::Seq && k != StmtKind::Scope && k != StmtKind::TileOp &&
         k != StmtKind::For && k != StmtKind::If && k != StmtKind::Pipeline;
}

// A leaf, or a compact loop around one: what fits on one line.
bool isOneLine(const Stmt &s) {
  if (s.kind == StmtKind::For && s.compact)
    return s.body.size() == 1 && isOneLine(*s.body[0]);
  return isLeaf(s.kind);
}

struct Verifier {
  const Kernel &k;
  llvm::raw_ostream &errors;
  bool ok = true;

  void fail(const Stmt &s, const std::string &what) {
    errors << "loop IR of '" << k.symbol << "': " << stmtKindName(s.kind) << ": " << what << "\n";
    ok = false;
  }

  void checkAccess(const Stmt &s, const Access &a) {
    bool known = llvm::any_of(k.buffers, [&](const auto &b) { return b.get() == a.buffer; });
    if (!known)
      return fail(s, "accesses a buffer that is not the kernel's");
    if (a.stage && (a.buffer->scope != MemScope::Shared || a.buffer->stages != a.stage->stages ||
                    a.stage->stages < 2))
      fail(s, "stage reference into '" + a.buffer->sourceName + "', which has " +
                  std::to_string(a.buffer->stages) + " stage(s)");
  }

  // SyncInsertion takes a write as done once it is issued: true of cp.async only after its
  // group is waited for. So a tile operator that issues cp.async ends by committing and
  // waiting for all groups, unless it is a pipeline's prefetch (writes at a stage), whose
  // groups the pipeline waits for before its barrier.
  void checkAsyncCompleted(const Stmt &op) {
    bool async = false;
    std::function<void(const Stmt &)> find = [&](const Stmt &s) {
      async |= s.kind == StmtKind::AsyncCopy;
      for (const StmtList *l : {&s.body, &s.elseBody})
        for (const StmtPtr &c : *l)
          find(*c);
    };
    find(op);
    bool prefetch = llvm::any_of(op.writes, [](const Access &a) { return a.stage.has_value(); });
    if (!async || prefetch)
      return;
    // The operator's statements, innermost last: [..., commit, wait<0>] at the end.
    const Stmt *last = &op;
    while (!last->body.empty() && (last->kind == StmtKind::TileOp || last->kind == StmtKind::Scope) &&
           last->body.back()->kind != StmtKind::AsyncWait)
      last = last->body.back().get();
    const StmtList &tail = last->body;
    bool completed = tail.size() >= 2 && tail[tail.size() - 2]->kind == StmtKind::AsyncCommit &&
                     tail.back()->kind == StmtKind::AsyncWait && tail.back()->count == 0;
    if (!completed)
      fail(op, "'" + op.text + "' issues cp.async without committing and waiting for it");
  }

  // A tile operator's access set (from ir/AccessAnalysis, what barriers are placed from) must
  // cover what its statements touch: a read the analysis missed would be a missing barrier.
  // A buffer the operator writes covers reads of it too (a write conflicts with more).
  void checkCovered(const Stmt &op) {
    std::vector<Access> reads, writes;
    for (const StmtPtr &c : op.body)
      collectAccesses(*c, reads, writes);
    auto in = [](const std::vector<Access> &set, const Access &a) {
      return llvm::any_of(set, [&](const Access &x) { return x.buffer == a.buffer; });
    };
    for (const Access &r : reads)
      if (!in(op.reads, r) && !in(op.writes, r))
        fail(op, "'" + op.text + "' reads '" + r.buffer->sourceName + "', which its access set lacks");
    for (const Access &w : writes)
      if (!in(op.writes, w))
        fail(op, "'" + op.text + "' writes '" + w.buffer->sourceName + "', which its access set lacks");
  }

  // `divergent`: some enclosing loop or branch is not taken by every thread alike;
  // `perThread`: some enclosing loop is each thread's own (over threads or registers).
  void visit(const Stmt &s, bool divergent, bool perThread) {
    if (s.kind == StmtKind::TileOp) {
      checkCovered(s);
      checkAsyncCompleted(s);
    }
    for (const auto *set : {&s.reads, &s.writes})
      for (const Access &a : *set)
        checkAccess(s, a);
    switch (s.kind) {
    case StmtKind::Pipeline:
      fail(s, "a pipelined loop PipelineExpansion left unexpanded");
      break;
    case StmtKind::Barrier:
      if (divergent)
        fail(s, "__syncthreads where not every thread of the block arrives (" + s.text + ")");
      break;
    case StmtKind::NamedBarrier:
      // Counted per warp: no thread of a warp may skip it (Sema keeps its conditions
      // warp-uniform; per-thread loops would not be).
      if (perThread)
        fail(s, "a named barrier inside a per-thread loop (" + s.text + ")");
      break;
    case StmtKind::For:
      if (s.var.empty() || s.hi.empty())
        fail(s, "a loop without variable or bound");
      perThread |= s.role == ForRole::Threads || s.role == ForRole::Registers;
      divergent |= perThread;
      break;
    case StmtKind::If:
      if (s.cond.empty())
        fail(s, "an if without condition");
      divergent |= !s.uniform;
      break;
    default:
      break;
    }
    // Statements printed on one line hold exactly what fits there.
    auto single = [](const StmtList &l) { return l.size() == 1 && isOneLine(*l[0]); };
    if (s.kind == StmtKind::For && s.compact && (!single(s.body) || !s.elseBody.empty()))
      fail(s, "a compact statement must hold one leaf");
    if (s.kind == StmtKind::If && s.style != IfStyle::Braced &&
        (!single(s.body) || (!s.elseBody.empty() && (s.style == IfStyle::NextLine || !single(s.elseBody)))))
      fail(s, "a one-line if must hold one leaf (and a same-line one at most one in its else)");
    if (s.kind == StmtKind::If && s.elseIf &&
        (s.elseBody.size() != 1 || s.elseBody[0]->kind != StmtKind::If || s.elseBody[0]->style != IfStyle::Braced))
      fail(s, "an else-if whose else is not a single braced if");
    if (isLeaf(s.kind) && (!s.body.empty() || !s.elseBody.empty()))
      fail(s, "a leaf statement with children");
    for (const StmtList *l : {&s.body, &s.elseBody})
      for (const StmtPtr &c : *l)
        visit(*c, divergent, perThread);
  }
};

} // namespace

bool verify(const Kernel &k, llvm::raw_ostream &errors) {
  Verifier v{k, errors};
  for (const StmtList *body : {&k.body, &k.bulkBody})
    for (const StmtPtr &s : *body)
      v.visit(*s, false, false);
  return v.ok;
}

// ------------------------------------------------------------------ --emit=loops

namespace {

llvm::StringRef roleName(ForRole r) {
  switch (r) {
  case ForRole::Tile: return "tile";
  case ForRole::Stages: return "stages";
  case ForRole::Threads: return "threads";
  case ForRole::Registers: return "registers";
  }
  return "?";
}

std::string accessStr(const std::vector<Access> &set) {
  std::string s;
  for (const Access &a : set) {
    s += " " + a.buffer->sourceName;
    if (a.stage)
      s += "@(" + a.stage->var + (a.stage->offset ? "+" + std::to_string(a.stage->offset) : "") +
           ")%" + std::to_string(a.stage->stages);
  }
  return s;
}

void printStmt(const Stmt &s, llvm::raw_ostream &os, unsigned depth) {
  os.indent(depth * 2);
  switch (s.kind) {
  case StmtKind::Seq: os << "seq"; break;
  case StmtKind::Scope: os << "scope"; break;
  case StmtKind::TileOp: os << "tileop " << s.text << (s.writesRepeated ? " (writes repeated)" : ""); break;
  case StmtKind::For:
    os << "for[" << roleName(s.role) << "] " << s.var << " = " << s.lo << " .. " << s.hi;
    if (!s.step.empty())
      os << " step " << s.step;
    if (s.unroll >= 0)
      os << " unroll" << (s.unroll ? " " + std::to_string(s.unroll) : "");
    break;
  case StmtKind::If:
    os << "if" << (s.isConstexpr ? " constexpr" : "") << (s.uniform ? "" : "[divergent]") << " "
       << s.cond;
    break;
  case StmtKind::Let: os << "let " << s.type << " " << s.name << " = " << s.value; break;
  case StmtKind::Decl: os << "decl " << s.type << " " << s.name << "[" << s.count << "]"; break;
  case StmtKind::Store: os << "store " << s.target << " = " << s.value; break;
  case StmtKind::AtomicAdd:
    os << "atomic_add" << (s.count > 1 ? ".v" + std::to_string(s.count) : "") << " " << s.target << " += " << s.value;
    break;
  case StmtKind::Eval: os << "call " << s.text; break;
  case StmtKind::AsyncCopy:
    os << "cp.async " << s.bytes << "B " << s.dst << " <- " << s.src << (s.valid.empty() ? "" : " if " + s.valid);
    break;
  case StmtKind::AsyncCommit: os << "cp.async.commit"; break;
  case StmtKind::AsyncWait: os << "cp.async.wait " << s.count; break;
  case StmtKind::VectorCopy: os << "copy.vec " << s.bytes << "B " << s.dst << " <- " << s.src; break;
  case StmtKind::Mma:
    if (s.warpgroup)
      os << "wgmma " << s.m << "x" << s.n << "x" << s.k << " warpgroups " << s.warpsM << "x" << s.warpsN
         << " n" << s.instrN << (s.pending ? " in flight" : "")
         << (s.overwrite.empty() ? "" : " overwrite if " + s.overwrite);
    else
      os << "mma " << s.m << "x" << s.n << "x" << s.k << " warps " << s.warpsM << "x" << s.warpsN;
    os << (s.mfmaSize ? " mfma " + std::to_string(s.mfmaSize) + "x" + std::to_string(s.mfmaSize) : "")
       << (s.aInRegisters ? " A in registers" : "") << (s.bInRegisters ? " B in registers" : "")
       << (s.bKRun ? " in K runs of " + std::to_string(s.bKRun) : "") << (s.bRunsTransposed ? " transposed" : "")
       << (s.bKSplit > 1 ? " split over " + std::to_string(s.bKSplit) + " warp groups" : "")
       << (s.bScales.empty() ? "" : " scaled per K group")
       << (s.transA ? " transA" : "")
       << (s.transB ? " transB" : "");
    break;
  case StmtKind::Shuffle:
    os << "shuffle " << s.op << " over " << s.width << " lanes"
       << (s.laneStride != 1 ? " " + std::to_string(s.laneStride) + " apart" : "") << ": " << s.target;
    break;
  case StmtKind::Barrier:
    if (s.splitThreads) {
      os << (s.proxyFence ? "fence.proxy.async; " : "") << "barrier " << s.splitId << " over "
         << s.barrierThreads << " threads split at " << s.splitThreads << ": threads below "
         << (s.subsetWaits ? "wait" : s.splitId ? "arrive" : "do not take part")
         << (s.subsetId ? " after barrier " + std::to_string(s.subsetId) + " over themselves" : "") << ", the others "
         << (!s.splitId ? "do not take part" : s.restWaits ? "wait" : "arrive") << "  // " << s.text;
      break;
    }
    os << (s.proxyFence ? "fence.proxy.async; " : "")
       << (s.barrierThreads ? "barrier " + std::to_string(s.barrierId) + " over " + std::to_string(s.barrierThreads) +
                                  " threads"
                            : "barrier")
       << (s.name.empty() ? "" : ", " + s.name + " = any thread's " + s.value) << "  // " << s.text;
    break;
  case StmtKind::NamedBarrier:
    os << "named barrier " << (s.arriveOnly ? "arrive " : "wait ") << s.value << " over " << s.barrierThreads
       << " threads  // " << s.text;
    break;
  case StmtKind::Comment: os << "// " << s.text; break;
  case StmtKind::Pipeline: os << "pipeline " << s.var << " < " << s.hi << ", " << s.count << " stages"; break;
  }
  if (!s.reads.empty())
    os << "  reads" << accessStr(s.reads);
  if (!s.writes.empty())
    os << "  writes" << accessStr(s.writes);
  os << "\n";
  for (const StmtPtr &c : s.body)
    printStmt(*c, os, depth + 1);
  if (!s.elseBody.empty()) {
    os.indent(depth * 2) << "else\n";
    for (const StmtPtr &c : s.elseBody)
      printStmt(*c, os, depth + 1);
  }
}

} // namespace

namespace {
std::string joinBox(const std::vector<int64_t> &box) {
  std::string s;
  for (int64_t b : box)
    s += (s.empty() ? "" : "x") + std::to_string(b);
  return s;
}
} // namespace

void print(const Kernel &k, llvm::raw_ostream &os) {
  os << "loops " << k.symbol << "  threads " << k.threads << "  shared " << k.sharedBytes
     << " bytes\n";
  for (const auto &b : k.buffers) {
    if (b->scope == MemScope::Global || b->layout.empty() || b->implicit)
      continue;
    os << "  buffer " << b->sourceName << " : "
       << (b->scope == MemScope::Shared ? "shared" : b->scope == MemScope::Fragment ? "fragment" : "local")
       << " " << b->dtype << " " << b->layout;
    if (b->scope == MemScope::Shared)
      os << "  at byte " << b->offset << (b->stages > 1 ? ", " + std::to_string(b->stages) + " stages" : "");
    os << "\n";
  }
  for (const StmtPtr &s : k.body)
    printStmt(*s, os, 1);
  if (!k.hasBulk())
    return;
  os << "loops " << k.symbol << " (warp-specialized, when aligned)  threads " << k.bulkThreads << "  shared "
     << k.bulkSharedBytes << " bytes\n";
  // An im2col map's last anchor: extent - 1 + upper corner.
  auto lastAnchor = [](const std::string &extent, int64_t upper) {
    int64_t off = upper - 1;
    return off == 0 ? extent : extent + (off > 0 ? " + " : " - ") + std::to_string(off > 0 ? off : -off);
  };
  for (const Kernel::TensorMap &m : k.tensorMaps)
    os << "  tensor map " << m.param << " : " << m.tensor << (m.im2col ? " im2col" : "") << " box "
       << joinBox(m.box) << " " << m.swizzle
       << (m.im2col ? " anchors h [" + std::to_string(m.lowerH) + ", " + lastAnchor("H", m.upperH) + "] w [" +
                          std::to_string(m.lowerW) + ", " + lastAnchor("W", m.upperW) + "] stride " +
                          std::to_string(m.stride)
                    : "")
       << "\n";
  for (const StmtPtr &s : k.bulkBody)
    printStmt(*s, os, 1);
}

} // namespace tlc::lower
