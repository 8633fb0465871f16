// Lowering of tile operators to thread-level CUDA: cooperative copies (cp.async / 128-bit /
// scalar with bounds predicates), per-thread fragment copies, fills, fragment reductions
// (registers, then lane shuffles, then shared scratch across warps), tensor-core gemm and
// atomic accumulation.
#include "codegen/KernelEmitter.h"

#include <functional>

namespace tlc::codegen {

using namespace ftg;
using llvm::cast;
using llvm::dyn_cast;

struct TileOpLowering::TileDims {
  std::vector<int64_t> extents;    // the tile, outermost first (unit dims dropped)
  std::vector<std::string> origin; // per buffer dim
  std::vector<int> tileDim;        // per buffer dim: index into extents, -1 for a point
  bool ok = true;

  std::vector<std::string> indices(const std::vector<std::string> &coords) const {
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
};

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

std::string opStruct(Builtin b) {
  switch (b) {
  case Builtin::ReduceSum: return "tl::SumOp";
  case Builtin::ReduceMax: return "tl::MaxOp";
  case Builtin::ReduceMin: return "tl::MinOp";
  case Builtin::ReduceAbsSum: return "tl::AbsSumOp";
  default: return "tl::AbsMaxOp";
  }
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

// Whether a region is its whole buffer: every dimension from 0 over its full extent (a point
// only in a dimension of extent 1). A sliced region such as `F[0:32, :]` is not.
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

} // namespace

TileOpLowering::TileDims TileOpLowering::tileDims(const Operand &op,
                                                  const std::vector<std::optional<int64_t>> &tile) {
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
      t.origin[d] = e.expr(r.origins[d]);
  if (dims.size() != t.extents.size()) {
    t.ok = false;
    return t;
  }
  for (size_t i = 0; i < dims.size(); ++i)
    t.tileDim[dims[i]] = int(i);
  return t;
}

// Element access of a non-fragment operand at buffer indices `idx`.
static std::string access(KernelEmitter &e, Buffer &b, const std::vector<std::string> &idx) {
  if (b.scope == Scope::Global)
    return cppName(b.name) + "[" + e.globalOffset(b, idx) + "]";
  if (b.scope == Scope::Shared) {
    std::string row = "0";
    for (size_t d = 0; d + 1 < idx.size(); ++d)
      row = d == 0 ? idx[0] : "(" + row + ") * " + e.dimExpr(b, d) + " + " + idx[d];
    return e.sharedElement(b, row, idx.back());
  }
  std::string flat = "0";
  for (size_t d = 0; d < idx.size(); ++d)
    flat = d == 0 ? idx[0] : "(" + flat + ") * " + e.dimExpr(b, d) + " + " + idx[d];
  return cppName(b.name) + "[" + flat + "]";
}

// Bounds predicate of a global access (empty when always in bounds).
static std::string inBounds(KernelEmitter &e, Buffer &b, const std::vector<std::string> &idx) {
  if (b.scope != Scope::Global)
    return "";
  std::string p;
  for (size_t d = 0; d < idx.size(); ++d)
    p += (p.empty() ? "" : " && ") + std::string("(") + idx[d] + ") < " + e.dimExpr(b, d);
  return p;
}

void TileOpLowering::cooperativeCopy(const Node &n, const Operand &src, const Operand &dst,
                                     bool atomic) {
  const Region &sized = src.region.originOnly ? dst.region : src.region;
  std::vector<std::optional<int64_t>> tileShape = sized.tileShape();
  if (sized.isPoint.empty())
    for (const auto &d : (src.region.originOnly ? dst : src).buffer->shape)
      tileShape.push_back(d);
  TileDims s = tileDims(src, tileShape), d = tileDims(dst, tileShape);
  if (!s.ok || !d.ok || s.extents.empty()) {
    e.unsupported(n.call->getRange(), "this copy (the tile extent must be a compile-time "
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
  bool cpAsync = n.instr == CopyInstr::CpAsync16 && vec > 1;
  DType dt = dst.buffer->dtype;

  auto body = [&](int v) {
    std::string c = fresh("c");
    int64_t chunks = total / v, threads = e.g.threads;
    if (perThread) {
      w.line("#pragma unroll 4");
      w.open("for (int " + c + " = 0; " + c + " < " + std::to_string(total) + "; ++" + c + ")");
    } else if (chunks % threads == 0) {
      // A fixed trip count unrolls fully: every address becomes tid-based plus constants.
      std::string it = fresh("it");
      // Long scalar paths unroll partially: full unrolling would spill registers.
      w.line(chunks / threads <= 8 ? "#pragma unroll" : "#pragma unroll 4");
      w.open("for (int " + it + " = 0; " + it + " < " + std::to_string(chunks / threads) + "; ++" + it + ")");
      w.line("const int " + c + " = " + kThreadIndex + " + " + it + " * " + std::to_string(threads) + ";");
    } else {
      w.line("#pragma unroll 4");
      w.open("for (int " + c + " = " + kThreadIndex + "; " + c + " < " + std::to_string(chunks) + "; " + c + " += " +
             std::to_string(threads) + ")");
    }
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
      w.line("const int " + generatedName("t" + std::to_string(i)) + " = " + coords[i] + ";");
      coords[i] = generatedName("t" + std::to_string(i));
    }
    auto si = s.indices(coords), di = d.indices(coords);
    std::string ps = inBounds(e, *src.buffer, si), pd = inBounds(e, *dst.buffer, di);
    std::string srcRef = access(e, *src.buffer, si), dstRef = access(e, *dst.buffer, di);
    if (v > 1 && cpAsync) {
      w.line("const bool tl_valid = " + (ps.empty() ? std::string("true") : ps) + ";");
      w.line("tl::cp_async_zfill<16>(&" + dstRef + ", tl_valid ? &" + srcRef + " : " +
             cppName(src.buffer->name) + ", tl_valid);");
    } else if (v > 1) {
      std::string p = ps.empty() ? pd : pd.empty() ? ps : ps + " && " + pd;
      if (!p.empty())
        w.line("if (" + p + ")");
      w.line(std::string(p.empty() ? "" : "  ") + "tl::copy_vec<" + std::to_string(v * bitWidth(dt) / 8) +
             ">(&" + dstRef + ", &" + srcRef + ");");
    } else {
      std::string value = "tl::convert<" + cppType(dt) + ">(" + srcRef + ")";
      if (!ps.empty())
        value = "(" + ps + ") ? " + value + " : tl::convert<" + cppType(dt) + ">(0.0f)";
      if (!pd.empty())
        w.line("if (" + pd + ")");
      std::string indent = pd.empty() ? "" : "  ";
      if (atomic)
        w.line(indent + "tl::atomic_add(&" + dstRef + ", " + value + ");");
      else
        w.line(indent + dstRef + " = " + value + ";");
    }
    w.close();
  };

  if (vec > 1) {
    for (const Operand *o : {&src, &dst})
      if (o->buffer->scope == Scope::Global)
        e.vectorTensors.insert(o->buffer);
  }
  alignedOrScalar(vec, body);
}

void TileOpLowering::alignedOrScalar(int vec, const std::function<void(int)> &body) {
  if (vec <= 1)
    return body(1);
  // Both paths are compiled; the launcher picks the instantiation (see HostLauncher.cpp).
  w.open("if constexpr (kAligned)");
  body(vec);
  w.indent--;
  w.line("} else {");
  w.indent++;
  body(1);
  w.close();
}

void TileOpLowering::fragmentCopy(const Node &n, const Operand &src, const Operand &dst, bool atomic) {
  bool fromFragment = src.buffer->scope == Scope::Fragment;
  const Buffer &frag = fromFragment ? *src.buffer : *dst.buffer;
  const Operand &other = fromFragment ? dst : src;
  const FragmentLayout &L = *frag.fragment;
  std::string r = fresh("r");
  if (other.buffer->scope == Scope::Fragment) {
    if (!other.buffer->fragment || *other.buffer->fragment != L) {
      e.unsupported(n.call->getRange(), "a copy between fragments with different layouts");
      return;
    }
    w.line("#pragma unroll");
    w.line("for (int " + r + " = 0; " + r + " < " + std::to_string(L.registers()) + "; ++" + r +
           ") " + cppName(dst.buffer->name) + "[" + r + "] = tl::convert<" + cppType(dst.buffer->dtype) + ">(" +
           cppName(src.buffer->name) + "[" + r + "]);");
    return;
  }
  if (atomic && L.kind == FragmentLayout::Row) {
    e.unsupported(n.call->getRange(), "atomic_add from a replicated row fragment");
    return;
  }
  std::vector<std::optional<int64_t>> fragShape(frag.shape.begin(), frag.shape.end());
  TileDims o = tileDims(other, fragShape);
  if (!o.ok) {
    e.unsupported(n.call->getRange(), "this fragment copy (the region must have the fragment's "
                                      "shape)");
    return;
  }
  // Registers r..r+V-1 hold V consecutive columns (a blocked vector, an mma pair): with a
  // global operand whose rows are 16-byte aligned (the kAligned instantiation) they move as
  // one access when the region's column origin is a multiple of V.
  int V = L.kind == FragmentLayout::Blocked ? L.vec : L.kind == FragmentLayout::MmaC ? 2 : 1;
  int elemBytes = std::max(1, int(bitWidth(other.buffer->dtype) / 8));
  bool vectorizable = other.buffer->scope == Scope::Global && !atomic && V > 1 &&
                      o.extents.size() == frag.shape.size() &&
                      o.tileDim.back() == int(o.extents.size()) - 1 && V * elemBytes <= 16 &&
                      multipleOf(other.region.origins.empty() ? nullptr : other.region.origins.back(), V);
  auto body = [&](int v) {
    w.line("#pragma unroll");
    w.open("for (int " + r + " = 0; " + r + " < " + std::to_string(L.registers()) + "; " +
           (v > 1 ? r + " += " + std::to_string(v) : "++" + r) + ")");
    std::vector<std::string> coords;
    if (o.extents.size() == 2)
      coords = {L.rowOf(kThreadIndex, r), L.colOf(kThreadIndex, r)};
    else
      coords = {L.kind == FragmentLayout::Row ? L.rowOf(kThreadIndex, r) : L.colOf(kThreadIndex, r)};
    for (size_t i = 0; i < coords.size(); ++i) {
      w.line("const int " + generatedName("t" + std::to_string(i)) + " = " + coords[i] + ";");
      coords[i] = generatedName("t" + std::to_string(i));
    }
    auto idx = o.indices(coords);
    std::string pred = inBounds(e, *other.buffer, idx);
    std::string ref = access(e, *other.buffer, idx);
    std::string TO = cppType(other.buffer->dtype), TF = cppType(frag.dtype);
    std::string reg = v > 1 ? r + " + tl_v" : r;
    std::string ind = pred.empty() ? "" : "  ";
    if (v > 1) {
      std::string bytes = std::to_string(v * elemBytes);
      w.line("alignas(16) " + TO + " tl_tmp[" + std::to_string(v) + "];");
      if (fromFragment) {
        w.line("#pragma unroll");
        w.line("for (int tl_v = 0; tl_v < " + std::to_string(v) + "; ++tl_v) tl_tmp[tl_v] = tl::convert<" + TO + ">(" +
               cppName(frag.name) + "[" + reg + "]);");
        if (!pred.empty())
          w.line("if (" + pred + ")");
        w.line(ind + "tl::copy_vec<" + bytes + ">(&" + ref + ", tl_tmp);");
      } else {
        if (!pred.empty())
          w.line("if (" + pred + ") tl::copy_vec<" + bytes + ">(tl_tmp, &" + ref + ");");
        if (!pred.empty())
          w.line("else for (int tl_v = 0; tl_v < " + std::to_string(v) + "; ++tl_v) tl_tmp[tl_v] = tl::convert<" + TO +
                 ">(0.0f);");
        else
          w.line("tl::copy_vec<" + bytes + ">(tl_tmp, &" + ref + ");");
        w.line("#pragma unroll");
        w.line("for (int tl_v = 0; tl_v < " + std::to_string(v) + "; ++tl_v) " + cppName(frag.name) + "[" + reg +
               "] = tl::convert<" + TF + ">(tl_tmp[tl_v]);");
      }
    } else if (fromFragment) {
      std::string value = "tl::convert<" + TO + ">(" + cppName(frag.name) + "[" + r + "])";
      if (!pred.empty())
        w.line("if (" + pred + ")");
      w.line(ind + (atomic ? "tl::atomic_add(&" + ref + ", " + value + ");" : ref + " = " + value + ";"));
    } else {
      std::string value = "tl::convert<" + TF + ">(" + ref + ")";
      if (!pred.empty())
        value = "(" + pred + ") ? " + value + " : tl::convert<" + TF + ">(0.0f)";
      w.line(cppName(frag.name) + "[" + r + "] = " + value + ";");
    }
    w.close();
  };
  if (vectorizable)
    e.vectorTensors.insert(other.buffer);
  alignedOrScalar(vectorizable ? V : 1, body);
}

void TileOpLowering::copy(const Node &n, const std::string &note) {
  const Operand &src = n.inputs[0], &dst = n.outputs[0];
  bool prefetch = note == "prefetch";
  if (!prefetch)
    e.beforeAccess(n);
  else
    w.line("// prefetch: " + toSource(n.call->args[0].value) + " -> " + dst.buffer->name);
  if (src.buffer->scope == Scope::Fragment || dst.buffer->scope == Scope::Fragment) {
    w.open("");
    fragmentCopy(n, src, dst, false);
    w.close();
    return;
  }
  w.open("");
  cooperativeCopy(n, src, dst, false);
  if (n.instr == CopyInstr::CpAsync16 && !prefetch) {
    w.line("tl::cp_async_commit();");
    w.line("tl::cp_async_wait<0>();");
  }
  w.close();
}

void TileOpLowering::atomicAdd(const Node &n) {
  const Operand &dst = n.outputs[0];
  if (!e.checkAtomicType(n.call->getRange(), dst.buffer->dtype))
    return;
  e.beforeAccess(n);
  if (n.inputs.empty()) {
    // The scalar form runs once per block.
    auto pos = n.call->positional();
    const Expr *dstExpr = n.call->keywordArg("dst") ? n.call->keywordArg("dst")->value : pos[0];
    const Expr *val = n.call->keywordArg("src") ? n.call->keywordArg("src")->value : pos[1];
    std::vector<std::string> idx;
    for (const IndexItem &i : cast<IndexExpr>(dstExpr)->indices)
      idx.push_back(e.expr(i.lo));
    w.line("if (" + kThreadIndex + " == 0) tl::atomic_add(&" + access(e, *dst.buffer, idx) + ", " +
           e.exprAs(val, dst.buffer->dtype) + ");");
    return;
  }
  w.open("");
  if (n.inputs[0].buffer->scope == Scope::Fragment)
    fragmentCopy(n, n.inputs[0], dst, true);
  else
    cooperativeCopy(n, n.inputs[0], dst, true);
  w.close();
}

void TileOpLowering::fill(const Node &n) {
  const Operand &dst = n.outputs[0];
  Buffer &b = *dst.buffer;
  std::string value;
  if (n.call->builtin == Builtin::Clear) {
    value = "tl::convert<" + cppType(b.dtype) + ">(0.0f)";
  } else {
    const CallArg *v = n.call->keywordArg("value");
    value = e.exprAs(v ? v->value : n.call->positional()[1], b.dtype);
  }
  e.beforeAccess(n);
  std::string r = fresh("r");
  if (b.scope == Scope::Fragment || b.scope == Scope::Local) {
    int64_t count = b.scope == Scope::Fragment ? b.fragment->registers() : b.numElements();
    // Registers are filled whole; a part of them would need the element-to-register map.
    if (!coversWholeBuffer(dst.region, b)) {
      e.unsupported(n.call->getRange(), "filling part of a " + scopeName(b.scope).str() +
                                            " buffer (fill the whole buffer, or assign the "
                                            "elements one by one)");
      return;
    }
    w.line("#pragma unroll");
    w.line("for (int " + r + " = 0; " + r + " < " + std::to_string(count) + "; ++" + r + ") " + cppName(b.name) +
           "[" + r + "] = " + value + ";");
    return;
  }
  // Shared or global: threads stride over the region.
  std::vector<std::optional<int64_t>> shape = dst.region.tileShape();
  TileDims d = tileDims(dst, shape);
  if (!d.ok) {
    e.unsupported(n.call->getRange(), "this fill (the region extent must be a compile-time constant)");
    return;
  }
  int64_t total = 1;
  for (int64_t x : d.extents)
    total *= x;
  w.open("for (int " + r + " = " + kThreadIndex + "; " + r + " < " + std::to_string(total) + "; " + r + " += " +
         std::to_string(e.g.threads) + ")");
  std::vector<std::string> coords(d.extents.size());
  std::string rest = r;
  for (size_t i = d.extents.size(); i-- > 0;) {
    coords[i] = i == 0 ? rest : rest + " % " + std::to_string(d.extents[i]);
    rest = "(" + rest + " / " + std::to_string(d.extents[i]) + ")";
  }
  auto idx = d.indices(coords);
  std::string pred = inBounds(e, b, idx);
  if (!pred.empty())
    w.line("if (" + pred + ")");
  w.line(std::string(pred.empty() ? "" : "  ") + access(e, b, idx) + " = " + value + ";");
  w.close();
}

void TileOpLowering::reduce(const Node &n) {
  const Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  if (src.scope != Scope::Fragment || dst.scope != Scope::Fragment || !src.fragment ||
      src.fragment->kind == FragmentLayout::Row || src.shape.size() != 2) {
    e.unsupported(n.call->getRange(), "reductions other than over the columns of a 2-d fragment "
                                      "into a fragment");
    return;
  }
  const FragmentLayout &L = *src.fragment;
  FragmentLayout R = L.rowLayout();
  std::string op = opStruct(n.reduceOp);
  std::string T = cppType(dst.dtype);
  int rows = R.registers();
  std::string red = fresh("red");
  w.open("");
  w.line(T + " " + red + "[" + std::to_string(rows) + "];");
  w.line("#pragma unroll");
  w.line("for (int tl_q = 0; tl_q < " + std::to_string(rows) + "; ++tl_q) " + red + "[tl_q] = " + op +
         "::identity<" + T + ">();");
  std::string r = fresh("r");
  w.line("// each thread folds its own registers of a row");
  w.line("#pragma unroll");
  w.open("for (int " + r + " = 0; " + r + " < " + std::to_string(L.registers()) + "; ++" + r + ")");
  std::string q = L.rowRegister(r);
  w.line(red + "[" + q + "] = " + op + "::combine(" + red + "[" + q + "], " + op + "::prepare(tl::convert<" +
         T + ">(" + cppName(src.name) + "[" + r + "])));");
  w.close();
  // Lanes that share a row.
  int width = L.kind == FragmentLayout::MmaC ? 4 : std::min(L.tpr, 32);
  if (width > 1) {
    w.line("// then the " + std::to_string(width) + " lanes that share each row");
    w.line("#pragma unroll");
    w.line("for (int tl_q = 0; tl_q < " + std::to_string(rows) + "; ++tl_q) " + red + "[tl_q] = tl::detail::warp_combine<" +
           op + ", " + std::to_string(width) + ", 1>(" + red + "[tl_q]);");
  }
  // Warps that share a row combine through shared scratch.
  int warpsPerRow = L.kind == FragmentLayout::MmaC ? L.wn : std::max(1, L.tpr / 32);
  if (warpsPerRow > 1) {
    std::string slot = L.kind == FragmentLayout::MmaC ? "((" + kThreadIndex + " / 32) % " + std::to_string(L.wn) + ")"
                                                      : "((" + kThreadIndex + " % " + std::to_string(L.tpr) + ") / 32)";
    std::string lead = L.kind == FragmentLayout::MmaC ? "(" + kThreadIndex + " % 4) == 0" : "(" + kThreadIndex + " % 32) == 0";
    w.line("// and the " + std::to_string(warpsPerRow) + " warps that share each row, through shared memory");
    e.sync("the reduction scratch is reused");
    w.line("#pragma unroll");
    w.open("for (int tl_q = 0; tl_q < " + std::to_string(rows) + "; ++tl_q)");
    w.line("const int tl_row = " + R.rowOf(kThreadIndex, "tl_q") + ";");
    w.line("if (" + lead + ") tl_reduce_scratch[tl_row * " + std::to_string(warpsPerRow) + " + " + slot +
           "] = tl::convert<float>(" + red + "[tl_q]);");
    w.close();
    e.sync("partial row results are visible");
    w.line("#pragma unroll");
    w.open("for (int tl_q = 0; tl_q < " + std::to_string(rows) + "; ++tl_q)");
    w.line("const int tl_row = " + R.rowOf(kThreadIndex, "tl_q") + ";");
    w.line(red + "[tl_q] = tl::convert<" + T + ">(tl_reduce_scratch[tl_row * " + std::to_string(warpsPerRow) + "]);");
    w.line("#pragma unroll");
    w.line("for (int tl_s = 1; tl_s < " + std::to_string(warpsPerRow) + "; ++tl_s) " + red + "[tl_q] = " + op +
           "::combine(" + red + "[tl_q], tl::convert<" + T + ">(tl_reduce_scratch[tl_row * " +
           std::to_string(warpsPerRow) + " + tl_s]));");
    w.close();
    e.sync("the reduction scratch may be reused");
  }
  w.line("#pragma unroll");
  w.line("for (int tl_q = 0; tl_q < " + std::to_string(rows) + "; ++tl_q) " + cppName(dst.name) + "[tl_q] = " +
         (n.clear ? red + "[tl_q]" : op + "::combine(" + cppName(dst.name) + "[tl_q], " + red + "[tl_q])") + ";");
  w.close();
}

void TileOpLowering::gemm(const Node &n) {
  const Buffer &A = *n.inputs[0].buffer, &B = *n.inputs[1].buffer, &C = *n.outputs[0].buffer;
  if (A.dtype != DType::F16 && A.dtype != DType::BF16) {
    e.unsupported(n.call->getRange(), "gemm on " + dtypeName(A.dtype).str() +
                                          " inputs (this back end has f16 and bf16 tensor-core paths)");
    return;
  }
  if (C.dtype != DType::F32) {
    e.unsupported(n.call->getRange(), "gemm accumulating in " + dtypeName(C.dtype).str() +
                                          " (use an f32 accumulator)");
    return;
  }
  e.beforeAccess(n);
  int64_t M = *C.shape[0], N = *C.shape[1];
  int64_t K = n.transA ? *A.shape[0] : *A.shape[1];
  auto ptr = [&](const Buffer &b) {
    std::string stage = e.stageExpr.lookup(&b);
    return stage.empty() ? cppName(b.name) : cppName(b.name) + " + " + stage + " * " + std::to_string(b.numElements());
  };
  if (n.clearAccum)
    w.line("for (int tl_q = 0; tl_q < " + std::to_string(C.fragment->registers()) + "; ++tl_q) " + cppName(C.name) +
           "[tl_q] = 0.0f;");
  std::string dims = std::to_string(M) + ", " + std::to_string(N) + ", " + std::to_string(K) + ", " +
                     std::to_string(n.warpsM) + ", " + std::to_string(n.warpsN);
  if (A.scope == Scope::Fragment)
    w.line("tl::gemm_rs<" + dims + ", " + (n.transB ? "true" : "false") + ">(" + cppName(A.name) + ", " +
           ptr(B) + ", " + cppName(C.name) + ");");
  else
    w.line("tl::gemm_ss<" + dims + ", " + (n.transA ? "true" : "false") + ", " +
           (n.transB ? "true" : "false") + ">(" + ptr(A) + ", " + ptr(B) + ", " + cppName(C.name) + ");");
}

} // namespace tlc::codegen
