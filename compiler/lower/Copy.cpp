// Lowering of copy and atomic_add: cooperative copies (cp.async / 128-bit / scalar with
// bounds predicates, threads striding over the tile) and per-thread fragment copies.
#include "lower/KernelLowering.h"

namespace tlc::lower {

using ftg::Node;
using ftg::Operand;
using llvm::cast;

std::vector<std::string> TileDims::indices(const std::vector<std::string> &coords) const {
  std::vector<std::string> idx;
  for (size_t d = 0; d < origin.size(); ++d) {
    std::string base = origin[d];
    if (tileDim[d] < 0)
      idx.push_back(base);
    else
      idx.push_back(base == "0" ? coords[tileDim[d]] : "(" + base + " + " + coords[tileDim[d]] + ")");
  }
  return idx;
}

namespace {

std::vector<int64_t> squeezedConst(const std::vector<std::optional<int64_t>> &shape, bool &ok) {
  std::vector<int64_t> out;
  for (const auto &e : shape) {
    if (!e) {
      ok = false;
      continue;
    }
    if (*e != 1)
      out.push_back(*e);
  }
  return out;
}

// True when `e` is provably a multiple of `m` for all values of its variables.
bool multipleOf(const Expr *e, int64_t m) {
  if (!e)
    return true;
  auto f = linearize(e);
  if (!f || f->constant % m != 0)
    return false;
  for (auto &[d, c] : f->terms)
    if (c % m != 0)
      return false;
  return true;
}

StmtPtr atomicAddOf(std::string target, std::string value) {
  auto s = std::make_unique<Stmt>(StmtKind::AtomicAdd);
  s->target = std::move(target);
  s->value = std::move(value);
  return s;
}

StmtPtr vectorCopy(int bytes, std::string dst, std::string src) {
  auto s = std::make_unique<Stmt>(StmtKind::VectorCopy);
  s->bytes = bytes;
  s->dst = std::move(dst);
  s->src = std::move(src);
  return s;
}

StmtPtr compactFor(const std::string &var, int64_t n, StmtPtr stmt, int unroll = 0) {
  return makeCompactFor(var, "0", std::to_string(n), std::move(stmt), unroll);
}

// `body(vec)` under `if constexpr (kAligned)` and `body(1)` otherwise; just `body(1)` when
// vec is 1. Both paths are compiled; the launcher picks the instantiation (HostLauncher.cpp).
void alignedOrScalar(KernelLowering &L, int vec, const std::function<void(int)> &body) {
  if (vec <= 1)
    return body(1);
  Stmt &i = L.add(makeIf("kAligned"));
  i.isConstexpr = true;
  L.within(i.body, [&] { body(vec); });
  L.within(i.elseBody, [&] { body(1); });
}

void cooperativeCopy(KernelLowering &L, const Node &n, const Operand &src, const Operand &dst, bool atomic) {
  const Region &sized = src.region.originOnly ? dst.region : src.region;
  std::vector<std::optional<int64_t>> tileShape = sized.tileShape();
  if (sized.isPoint.empty())
    for (const auto &d : (src.region.originOnly ? dst : src).buffer->shape)
      tileShape.push_back(d);
  TileDims s, d;
  // The data moves from src to dst; the region origins may read buffers too (a block table).
  std::vector<Access> reads = L.readsOf([&] {
    s = tileDims(L, src, tileShape);
    d = tileDims(L, dst, tileShape);
  });
  reads.insert(reads.begin(), L.access(src.buffer));
  const std::vector<Access> writes = {L.access(dst.buffer)};
  if (!s.ok || !d.ok || s.extents.empty()) {
    L.unsupported(n.call->getRange(), "this copy (the tile extent must be a compile-time "
                                      "constant and both sides must have the same tile dims)");
    return;
  }
  const std::vector<int64_t> &T = s.extents;
  int64_t total = 1;
  for (int64_t x : T)
    total *= x;
  int64_t cols = T.back();
  // Vector accesses need the contiguous dim of every global operand to be the tile's last.
  int vec = n.copyVector;
  for (const Operand *o : {&src, &dst}) {
    const TileDims &td = o == &src ? s : d;
    if (o->buffer->scope == Scope::Global &&
        (td.tileDim.back() != int(T.size()) - 1 ||
         !multipleOf(o->region.origins.empty() ? nullptr : o->region.origins.back(), vec)))
      vec = 1;
  }
  // A local buffer is per thread: every thread copies the whole region into (or out of) its own.
  bool perThread = src.buffer->scope == Scope::Local || dst.buffer->scope == Scope::Local;
  if (cols % vec != 0 || atomic || perThread)
    vec = 1;
  bool cpAsync = n.instr == ftg::CopyInstr::CpAsync16 && vec > 1;
  DType dt = dst.buffer->dtype;

  auto body = [&](int v) {
    std::string c = L.fresh("c");
    int64_t chunks = total / v, threads = L.g.threads;
    StmtPtr loop;
    std::string it;
    if (perThread) {
      loop = makeFor(ForRole::Registers, c, "0", std::to_string(total), "", 4);
    } else if (chunks % threads == 0) {
      // A fixed trip count unrolls fully: every address becomes tid-based plus constants.
      // Long scalar paths unroll partially: full unrolling would spill registers.
      it = L.fresh("it");
      loop = makeFor(ForRole::Threads, it, "0", std::to_string(chunks / threads), "",
                     chunks / threads <= 8 ? 0 : 4);
    } else {
      loop = makeFor(ForRole::Threads, c, kThreadIndex, std::to_string(chunks), std::to_string(threads), 4);
    }
    L.nest(std::move(loop), [&] {
      if (!it.empty())
        L.add(makeLet("const int", c, kThreadIndex + " + " + it + " * " + std::to_string(threads), false));
      // Tile coordinates from the flat chunk index, innermost first.
      std::vector<std::string> coords(T.size());
      std::string rest = c;
      int64_t inner = cols / v;
      coords.back() = v > 1 ? "(" + rest + " % " + std::to_string(inner) + ") * " + std::to_string(v)
                            : rest + " % " + std::to_string(inner);
      rest = "(" + rest + " / " + std::to_string(inner) + ")";
      for (size_t i = T.size() - 1; i-- > 0;) {
        coords[i] = i == 0 ? rest : rest + " % " + std::to_string(T[i]);
        rest = "(" + rest + " / " + std::to_string(T[i]) + ")";
      }
      for (size_t i = 0; i < coords.size(); ++i) {
        L.add(makeLet("const int", generatedName("t" + std::to_string(i)), coords[i], false));
        coords[i] = generatedName("t" + std::to_string(i));
      }
      auto si = s.indices(coords), di = d.indices(coords);
      std::string ps = inBounds(L, *src.buffer, si), pd = inBounds(L, *dst.buffer, di);
      std::string srcRef = elementAt(L, *src.buffer, si), dstRef = elementAt(L, *dst.buffer, di);
      if (v > 1 && cpAsync) {
        L.add(makeLet("const bool", "tl_valid", ps.empty() ? std::string("true") : ps, false));
        Stmt &cp = KernelLowering::accessing(L.add(std::make_unique<Stmt>(StmtKind::AsyncCopy)), reads, writes);
        cp.bytes = 16;
        cp.dst = "&" + dstRef;
        cp.src = "&" + srcRef;
        cp.srcBase = cppName(src.buffer->name);
        cp.valid = "tl_valid";
      } else if (v > 1) {
        std::string p = ps.empty() ? pd : pd.empty() ? ps : ps + " && " + pd;
        L.guarded(p, withAccess(vectorCopy(v * bitWidth(dt) / 8, "&" + dstRef, "&" + srcRef), reads, writes));
      } else {
        std::string value = "tl::convert<" + cppType(dt) + ">(" + srcRef + ")";
        if (!ps.empty())
          value = "(" + ps + ") ? " + value + " : tl::convert<" + cppType(dt) + ">(0.0f)";
        L.guarded(pd, withAccess(atomic ? atomicAddOf(dstRef, value) : makeStore(dstRef, value), reads, writes));
      }
    });
  };

  if (vec > 1) {
    for (const Operand *o : {&src, &dst})
      if (o->buffer->scope == Scope::Global)
        L.noteVectorTensor(o->buffer);
  }
  alignedOrScalar(L, vec, body);
}

void fragmentCopy(KernelLowering &L, const Node &n, const Operand &src, const Operand &dst, bool atomic) {
  bool fromFragment = src.buffer->scope == Scope::Fragment;
  const ftg::Buffer &frag = fromFragment ? *src.buffer : *dst.buffer;
  const Operand &other = fromFragment ? dst : src;
  const FragmentLayout &F = *frag.fragment;
  std::string r = L.fresh("r");
  if (other.buffer->scope == Scope::Fragment) {
    if (!other.buffer->fragment || *other.buffer->fragment != F) {
      L.unsupported(n.call->getRange(), "a copy between fragments with different layouts");
      return;
    }
    L.add(compactFor(r, F.registers(),
                     withAccess(makeStore(cppName(dst.buffer->name) + "[" + r + "]",
                                          "tl::convert<" + cppType(dst.buffer->dtype) + ">(" +
                                              cppName(src.buffer->name) + "[" + r + "])"),
                                {L.access(src.buffer)}, {L.access(dst.buffer)})));
    return;
  }
  std::vector<std::optional<int64_t>> fragShape(frag.shape.begin(), frag.shape.end());
  TileDims o;
  std::vector<Access> indexReads = L.readsOf([&] { o = tileDims(L, other, fragShape); });
  // The access sets of a leaf that touches `other` (at the region's indices) and/or the
  // registers of the fragment.
  enum : unsigned { ReadOther = 1, WriteOther = 2, ReadFrag = 4, WriteFrag = 8 };
  auto leaf = [&](StmtPtr s, unsigned what) {
    std::vector<Access> reads, writes;
    if (what & (ReadOther | WriteOther))
      reads = indexReads;
    if (what & ReadOther)
      reads.push_back(L.access(other.buffer));
    if (what & ReadFrag)
      reads.push_back(L.access(&frag));
    if (what & WriteOther)
      writes.push_back(L.access(other.buffer));
    if (what & WriteFrag)
      writes.push_back(L.access(&frag));
    return withAccess(std::move(s), reads, writes);
  };
  if (!o.ok) {
    L.unsupported(n.call->getRange(), "this fragment copy (the region must have the fragment's "
                                      "shape)");
    return;
  }
  // Registers r..r+V-1 hold V consecutive columns (a blocked vector, an mma pair): with a
  // global operand whose rows are 16-byte aligned (the kAligned instantiation) they move as
  // one access when the region's column origin is a multiple of V.
  int V = F.kind == FragmentLayout::Blocked ? F.vec : F.kind == FragmentLayout::MmaC ? 2 : 1;
  int elemBytes = std::max(1, int(bitWidth(other.buffer->dtype) / 8));
  bool vectorizable = other.buffer->scope == Scope::Global && !atomic && V > 1 &&
                      o.extents.size() == frag.shape.size() &&
                      o.tileDim.back() == int(o.extents.size()) - 1 && V * elemBytes <= 16 &&
                      multipleOf(other.region.origins.empty() ? nullptr : other.region.origins.back(), V);
  auto body = [&](int v) {
    L.nest(makeFor(ForRole::Registers, r, "0", std::to_string(F.registers()), v > 1 ? std::to_string(v) : "", 0), [&] {
      std::vector<std::string> coords;
      if (o.extents.size() == 2)
        coords = {F.rowOf(kThreadIndex, r), F.colOf(kThreadIndex, r)};
      else
        coords = {F.kind == FragmentLayout::Row ? F.rowOf(kThreadIndex, r) : F.colOf(kThreadIndex, r)};
      for (size_t i = 0; i < coords.size(); ++i) {
        L.add(makeLet("const int", generatedName("t" + std::to_string(i)), coords[i], false));
        coords[i] = generatedName("t" + std::to_string(i));
      }
      auto idx = o.indices(coords);
      std::string pred = inBounds(L, *other.buffer, idx);
      std::string ref = elementAt(L, *other.buffer, idx);
      std::string TO = cppType(other.buffer->dtype), TF = cppType(frag.dtype);
      std::string fragName = cppName(frag.name);
      if (v > 1) {
        // Through an aligned temporary: registers and global elements may differ in type.
        int bytes = v * elemBytes;
        Stmt &tmp = L.add(std::make_unique<Stmt>(StmtKind::Decl));
        tmp.type = TO;
        tmp.name = "tl_tmp";
        tmp.count = v;
        tmp.align = 16;
        std::string reg = fragName + "[" + r + " + tl_v]";
        if (fromFragment) {
          L.add(compactFor("tl_v", v, leaf(makeStore("tl_tmp[tl_v]", "tl::convert<" + TO + ">(" + reg + ")"), ReadFrag)));
          L.guarded(pred, leaf(vectorCopy(bytes, "&" + ref, "tl_tmp"), WriteOther));
        } else {
          if (pred.empty()) {
            L.add(leaf(vectorCopy(bytes, "tl_tmp", "&" + ref), ReadOther));
          } else {
            // Out of bounds: zeros.
            Stmt &i = L.add(makeIf(pred, IfStyle::SameLine, false));
            i.body.push_back(leaf(vectorCopy(bytes, "tl_tmp", "&" + ref), ReadOther));
            i.elseBody.push_back(compactFor("tl_v", v, makeStore("tl_tmp[tl_v]", "tl::convert<" + TO + ">(0.0f)"), -1));
          }
          L.add(compactFor("tl_v", v, leaf(makeStore(reg, "tl::convert<" + TF + ">(tl_tmp[tl_v])"), WriteFrag)));
        }
      } else if (fromFragment) {
        std::string value = "tl::convert<" + TO + ">(" + fragName + "[" + r + "])";
        // A replicated fragment (a row fragment is held by every thread of its row) adds
        // each element once, from its first replica; plain stores write the same value from
        // every replica.
        std::string once = atomic ? F.replicaGuard(kThreadIndex, r) : "";
        if (!once.empty())
          pred = pred.empty() ? once : "(" + once + ") && " + pred;
        L.guarded(pred, leaf(atomic ? atomicAddOf(ref, value) : makeStore(ref, value), ReadFrag | WriteOther));
      } else {
        std::string value = "tl::convert<" + TF + ">(" + ref + ")";
        if (!pred.empty())
          value = "(" + pred + ") ? " + value + " : tl::convert<" + TF + ">(0.0f)";
        L.add(leaf(makeStore(fragName + "[" + r + "]", value), ReadOther | WriteFrag));
      }
    });
  };
  if (vectorizable)
    L.noteVectorTensor(other.buffer);
  alignedOrScalar(L, vectorizable ? V : 1, body);
}

} // namespace

TileDims tileDims(KernelLowering &L, const Operand &op, const std::vector<std::optional<int64_t>> &tile) {
  TileDims t;
  bool constOk = true;
  t.extents = squeezedConst(tile, constOk);
  t.ok = constOk;
  const Region &r = op.region;
  size_t rank = op.buffer->shape.size();
  t.origin.assign(rank, "0");
  t.tileDim.assign(rank, -1);
  // Buffer dims that carry tile extent, in order.
  std::vector<size_t> dims;
  if (r.originOnly) {
    // The other side's whole shape, unit dims included, sits in the last dims: a [128, 1]
    // tile at Scales[r, c] covers 128 rows of one column, not one row of 128 columns.
    std::vector<std::optional<int64_t>> full = tile;
    while (full.size() > rank && full.front() == std::optional<int64_t>(1))
      full.erase(full.begin());
    if (full.size() > rank) {
      t.ok = false;
      return t;
    }
    size_t first = rank - full.size();
    for (size_t k = 0; k < full.size(); ++k)
      if (full[k] != std::optional<int64_t>(1))
        dims.push_back(first + k);
  } else {
    for (size_t d = 0; d < rank; ++d) {
      bool unit = r.isPoint.empty() ? op.buffer->shape[d] == std::optional<int64_t>(1)
                                    : (r.isPoint[d] || r.extents[d] == std::optional<int64_t>(1));
      if (!unit)
        dims.push_back(d);
    }
  }
  for (size_t d = 0; d < rank; ++d)
    if (!r.origins.empty() && r.origins[d])
      t.origin[d] = L.expr(r.origins[d]);
  if (dims.size() != t.extents.size()) {
    t.ok = false;
    return t;
  }
  for (size_t i = 0; i < dims.size(); ++i)
    t.tileDim[dims[i]] = int(i);
  return t;
}

std::string elementAt(KernelLowering &L, const ftg::Buffer &b, const std::vector<std::string> &idx) {
  if (b.scope == Scope::Global)
    return cppName(b.name) + "[" + L.globalOffset(b, idx) + "]";
  if (b.scope == Scope::Shared) {
    std::string row = "0";
    for (size_t d = 0; d + 1 < idx.size(); ++d)
      row = d == 0 ? idx[0] : "(" + row + ") * " + L.dimExpr(b, d) + " + " + idx[d];
    return L.sharedElement(b, row, idx.back());
  }
  std::string flat = "0";
  for (size_t d = 0; d < idx.size(); ++d)
    flat = d == 0 ? idx[0] : "(" + flat + ") * " + L.dimExpr(b, d) + " + " + idx[d];
  return cppName(b.name) + "[" + flat + "]";
}

std::string inBounds(KernelLowering &L, const ftg::Buffer &b, const std::vector<std::string> &idx) {
  if (b.scope != Scope::Global)
    return "";
  std::string p;
  for (size_t d = 0; d < idx.size(); ++d)
    p += (p.empty() ? "" : " && ") + std::string("(") + idx[d] + ") < " + L.dimExpr(b, d);
  return p;
}

void KernelLowering::guarded(const std::string &cond, StmtPtr stmt) {
  if (cond.empty()) {
    add(std::move(stmt));
    return;
  }
  add(makeIf(cond, IfStyle::NextLine, /*uniform=*/false)).body.push_back(std::move(stmt));
}

void KernelLowering::copy(const Node &n, bool prefetch) {
  const Operand &src = n.inputs[0], &dst = n.outputs[0];
  tileOp(n, [&] {
    if (prefetch)
      add(makeComment("prefetch: " + toSource(n.call->args[0].value) + " -> " + dst.buffer->name));
    scope([&] {
      if (src.buffer->scope == Scope::Fragment || dst.buffer->scope == Scope::Fragment)
        return fragmentCopy(*this, n, src, dst, false);
      cooperativeCopy(*this, n, src, dst, false);
      // A prefetch's group is waited for by the pipeline (PipelineExpansion.cpp).
      if (n.instr == ftg::CopyInstr::CpAsync16 && !prefetch) {
        add(std::make_unique<Stmt>(StmtKind::AsyncCommit));
        add(std::make_unique<Stmt>(StmtKind::AsyncWait)).count = 0;
      }
    });
  });
}

void KernelLowering::atomicAdd(const Node &n) {
  const Operand &dst = n.outputs[0];
  if (!checkAtomicType(n.call->getRange(), dst.buffer->dtype))
    return;
  tileOp(n, [&] {
    if (n.inputs.empty()) {
      // The scalar form runs once per block.
      auto pos = n.call->positional();
      const Expr *dstExpr = n.call->keywordArg("dst") ? n.call->keywordArg("dst")->value : pos[0];
      const Expr *val = n.call->keywordArg("src") ? n.call->keywordArg("src")->value : pos[1];
      std::vector<std::string> idx;
      std::string value;
      auto reads = readsOf([&] {
        for (const IndexItem &i : cast<IndexExpr>(dstExpr)->indices)
          idx.push_back(expr(i.lo));
        value = exprAs(val, dst.buffer->dtype);
      });
      Stmt &once = add(makeIf(kThreadIndex + " == 0", IfStyle::SameLine, false));
      once.body.push_back(withAccess(atomicAddOf(elementAt(*this, *dst.buffer, idx), value), reads, {access(dst.buffer)}));
      return;
    }
    scope([&] {
      if (n.inputs[0].buffer->scope == Scope::Fragment)
        fragmentCopy(*this, n, n.inputs[0], dst, true);
      else
        cooperativeCopy(*this, n, n.inputs[0], dst, true);
    });
  });
}

} // namespace tlc::lower
