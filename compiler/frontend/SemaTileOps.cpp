// Sema for tile operators: argument binding (positional or keyword), operand regions, and
// the shape rules of copy, gemm, the reduce family, fill/clear, atomic_add, cumsum,
// annotate_layout, swizzle_blocks, barriers and call_extern.
#include "ConstantFolder.h"
#include "Sema.h"

#include "frontend/CppNames.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

namespace tlc {

using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

namespace {

std::string extentStr(const std::vector<std::optional<int64_t>> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += "x";
    s += shape[i] ? std::to_string(*shape[i]) : "?";
  }
  return s.empty() ? "scalar" : s;
}

// "[64, 32]", with '?' for extents that are not compile-time constants.
std::string bracketStr(const std::vector<std::optional<int64_t>> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + (shape[i] ? std::to_string(*shape[i]) : std::string("?"));
  return s + "]";
}

// Drops unit extents: a [1, 64] tile and a [64] tile have the same elements.
std::vector<std::optional<int64_t>> squeeze(const std::vector<std::optional<int64_t>> &shape) {
  std::vector<std::optional<int64_t>> out;
  for (const auto &e : shape)
    if (!e || *e != 1)
      out.push_back(e);
  return out;
}

// What each tile operator accepts: positional parameters in order, then keyword-only ones.
struct Signature {
  std::vector<const char *> params;   // may also be passed by keyword
  size_t required;                    // how many of params are required
  std::vector<const char *> keywords; // keyword-only options
  bool variadic = false;              // call_extern
};

Signature signatureOf(Builtin b) {
  switch (b) {
  case Builtin::Copy: return {{"src", "dst"}, 2, {}};
  case Builtin::Gemm:
    return {{"A", "B", "C"}, 3, {"transpose_A", "transpose_B", "policy", "clear_accum", "threads"}};
  case Builtin::Fill: return {{"dst", "value"}, 2, {}};
  case Builtin::Clear: return {{"dst"}, 1, {}};
  case Builtin::AtomicAdd: return {{"dst", "src"}, 2, {}};
  case Builtin::Cumsum:
  case Builtin::Cummax:
  case Builtin::Cummin: return {{"src", "dst"}, 2, {"dim", "reverse"}};
  case Builtin::DequantI4: return {{"src", "dst", "scales", "zeros"}, 2, {"transpose_scales"}};
  case Builtin::Im2col:
    return {{"src", "dst"}, 2, {"pixel", "channel", "r", "s", "column", "kh", "kw", "stride", "pad"}};
  case Builtin::AnnotateLayout: return {{"buffer", "layout"}, 2, {}};
  case Builtin::SwizzleBlocks: return {{"panel"}, 0, {}};
  case Builtin::BarrierArrive: return {{"id"}, 1, {}};
  case Builtin::BarrierWait: return {{"id"}, 1, {}};
  case Builtin::WarpSpecialize: return {{"enabled"}, 1, {}};
  case Builtin::Persistent: return {{"enabled"}, 0, {}};
  case Builtin::TuneFor: return {{"symbol", "size"}, 2, {}, true};
  case Builtin::CallExtern: return {{"name"}, 1, {"returns"}, true};
  case Builtin::Print: return {{}, 0, {"thread", "all_threads"}, true};
  case Builtin::ReduceArgmax:
  case Builtin::ReduceArgmin: return {{"src", "dst"}, 2, {"dim", "clear", "values", "offset"}};
  default: // reductions
    return {{"src", "dst"}, 2, {"dim", "clear"}};
  }
}

} // namespace

std::vector<std::optional<int64_t>> Region::tileShape() const {
  std::vector<std::optional<int64_t>> out;
  for (size_t i = 0; i < extents.size(); ++i)
    if (!isPoint[i])
      out.push_back(extents[i]);
  return out;
}

std::string Region::shapeStr() const { return extentStr(tileShape()); }

// Binds a tile operator's arguments and runs its rule.
class TileOpChecker {
public:
  TileOpChecker(Sema &sema, CallExpr *call) : sema(sema), diags(sema.diags), call(call) {}

  void run();

private:
  bool bind();
  Expr *arg(llvm::StringRef name) const { return bound.lookup(name); }
  // A bool/int/policy option: its constant value, or `fallback` when absent.
  std::optional<ConstValue> option(llvm::StringRef name, Type::Kind kind, ConstValue fallback);
  std::optional<Region> operand(llvm::StringRef name, bool isWrite);
  // A whole on-chip buffer operand (gemm and reductions).
  BufferDecl *wholeBuffer(llvm::StringRef name, std::initializer_list<Scope> scopes);
  llvm::StringRef op() const { return call->callee; }

  void checkCopy(bool atomic);
  void checkPackedCopy(const Region &src, const Region &dst);
  void checkGemm();
  void checkGemmShapes(BufferDecl *a, BufferDecl *b, BufferDecl *c, bool transA, bool transB);
  void checkReduce();
  bool checkReduceTypes(BufferDecl *src, BufferDecl *dst, bool clear);
  void checkCumsum();
  void checkDequantI4();
  void checkIm2col();
  void checkFill();
  void checkAnnotateLayout();
  void checkSwizzleBlocks();
  void checkPrint();
  void checkBarrier();
  void checkWarpSpecialize();
  void checkPersistent();
  void checkTuneFor();
  void checkCallExtern();
  bool checkSameTile(const Region &src, const Region &dst);
  // `what` names the operand in messages: "'S' [64, 32]".
  std::optional<int64_t> checkDim(llvm::StringRef name, size_t rank, const std::string &what);

  Sema &sema;
  DiagnosticEngine &diags;
  CallExpr *call;
  llvm::StringMap<Expr *> bound;
  std::vector<Expr *> extraArgs; // call_extern's arguments after the name, print's values
};

bool TileOpChecker::bind() {
  Signature sig = signatureOf(call->builtin);
  auto paramList = [&](size_t n) {
    return llvm::join(std::vector<std::string>(sig.params.begin(), sig.params.begin() + n), ", ");
  };
  size_t position = 0;
  bool ok = true;
  for (CallArg &a : call->args) {
    if (a.keyword.empty()) {
      if (position < sig.params.size()) {
        bound[sig.params[position++]] = a.value;
      } else if (sig.variadic) {
        extraArgs.push_back(a.value);
      } else {
        auto diag = diags.error(a.value->getRange(),
                                op() + " takes " + std::to_string(sig.params.size()) +
                                    " positional argument" + (sig.params.size() == 1 ? "" : "s") +
                                    ": " + op() + "(" + paramList(sig.params.size()) + ")");
        if (sig.keywords.empty())
          diag.hint(op() + " has no options");
        else
          diag.hint("options are passed by name, e.g. " + std::string(sig.keywords[0]) + " = ...");
        ok = false;
      }
      continue;
    }
    bool known = llvm::is_contained(sig.params, a.keyword) || llvm::is_contained(sig.keywords, a.keyword);
    if (!known) {
      std::vector<std::string> names(sig.params.begin(), sig.params.end());
      names.insert(names.end(), sig.keywords.begin(), sig.keywords.end());
      auto diag = diags.error(a.keywordRange, "unknown argument '" + a.keyword + "' for " + op());
      std::string near = closestMatch(a.keyword, names);
      if (!near.empty())
        diag.hint("did you mean '" + near + "'?");
      else
        diag.hint(op() + " accepts: " + llvm::join(names, ", "));
      ok = false;
      continue;
    }
    if (bound.count(a.keyword)) {
      diags.error(a.keywordRange, "argument '" + a.keyword + "' of " + op() + " is given twice");
      ok = false;
      continue;
    }
    bound[a.keyword] = a.value;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < sig.required; ++i)
    if (!bound.count(sig.params[i]))
      missing.push_back("'" + std::string(sig.params[i]) + "'");
  if (!missing.empty()) {
    std::string list = missing.size() == 1
                           ? missing[0]
                           : llvm::join(llvm::ArrayRef<std::string>(missing).drop_back(), ", ") +
                                 " and " + missing.back();
    diags.error(call->getRange(), op() + " is missing its " + list + " argument" +
                                      (missing.size() == 1 ? "" : "s"))
        .hint("expected " + op() + "(" + paramList(sig.required) + ")");
    ok = false;
  }
  return ok;
}

std::optional<ConstValue> TileOpChecker::option(llvm::StringRef name, Type::Kind kind,
                                                ConstValue fallback) {
  Expr *e = arg(name);
  if (!e)
    return fallback;
  Type t = sema.checkExpr(e);
  if (t.isError())
    return std::nullopt;
  bool kindOk = kind == Type::Scalar ? t.isBool()
              : kind == Type::IntLiteral ? t.isIntegral()
                                         : t.kind() == kind;
  const char *want = kind == Type::Scalar ? "bool" : kind == Type::IntLiteral ? "an integer"
                                                                              : "a warp policy";
  if (!kindOk) {
    diags.error(e->getRange(), "'" + name + "' of " + op() + " must be " + want + ", got " + t.str());
    return std::nullopt;
  }
  if (!e->constant) {
    auto diag = diags.error(e->getRange(),
                            "'" + name + "' of " + op() + " must be a compile-time constant");
    sema.explainNotConstant(diag, e);
    return std::nullopt;
  }
  return e->constant;
}

std::optional<Region> TileOpChecker::operand(llvm::StringRef name, bool isWrite) {
  Expr *e = arg(name);
  if (!e)
    return std::nullopt;
  return sema.analyzeRegion(e, isWrite, (op() + "'s " + name).str());
}

BufferDecl *TileOpChecker::wholeBuffer(llvm::StringRef name, std::initializer_list<Scope> scopes) {
  Expr *e = arg(name);
  if (!e)
    return nullptr;
  Type t = sema.checkExpr(e, Sema::ExprContext::TileOperand);
  if (t.isError())
    return nullptr;
  auto *n = dyn_cast<NameExpr>(e);
  auto *buf = n ? dyn_cast_or_null<BufferDecl>(n->decl) : nullptr;
  std::string allowed;
  for (Scope s : scopes)
    allowed += (allowed.empty() ? "" : " or ") + scopeName(s).str();
  if (!buf) {
    bool tensor = n && n->decl && isa<TensorParamDecl>(n->decl);
    // A slice or element of a buffer is a region; a constant or a scalar is no buffer at all.
    bool region = isa<IndexExpr>(e);
    diags.error(e->getRange(), op() + "'s " + name + " must be a whole " + allowed + " buffer" +
                                   (tensor   ? ", but '" + n->name + "' is a global tensor"
                                    : region ? std::string(", not a region")
                                             : std::string(", not a scalar value")))
        .hint(tensor ? "copy the tile from global memory into a shared buffer first"
              : region ? "pass the buffer itself"
                       : "pass the name of a " + allowed + " buffer (fill one with the value first)");
    return nullptr;
  }
  if (!llvm::is_contained(scopes, buf->scope)) {
    diags.error(e->getRange(), op() + "'s " + name + " must be a " + allowed + " buffer, but '" +
                                   buf->getName() + "' is " + scopeName(buf->scope))
        .note(buf->getRange(), "'" + buf->getName() + "' is declared here")
        .hint("declare '" + buf->getName().str() + "' as a " + allowed + " buffer");
    return nullptr;
  }
  return buf;
}

std::optional<Region> Sema::analyzeRegion(Expr *e, bool isWrite, llvm::StringRef role) {
  Type t = checkExpr(e, ExprContext::TileOperand);
  if (t.isError())
    return std::nullopt;
  NameExpr *base = nullptr;
  auto *ix = dyn_cast<IndexExpr>(e);
  if (ix)
    base = ix->base;
  else
    base = dyn_cast<NameExpr>(e);
  auto *buf = base ? dyn_cast_or_null<BufferLikeDecl>(base->decl) : nullptr;
  if (!buf || t.kind() != Type::Buffer) {
    diags.error(e->getRange(), role.str() + " must be a buffer or a region of one, got " +
                                   (t.kind() == Type::Buffer ? "a buffer" : "a " + t.str()));
    return std::nullopt;
  }
  if (isWrite)
    if (auto *tp = dyn_cast<TensorParamDecl>(buf); tp && !tp->isOut) {
      reportReadOnly(buf, base->getRange());
      return std::nullopt;
    }
  checkUniformRegion(e, role);
  Region r;
  r.buffer = buf;
  r.range = e->getRange();
  size_t rank = buf->shape.rank();
  r.extents.resize(rank);
  r.isPoint.assign(rank, false);
  r.origins.assign(rank, nullptr);
  if (!ix) {
    for (size_t i = 0; i < rank; ++i)
      r.extents[i] = buf->shape.constDim(i);
    return r;
  }
  r.originOnly = !ix->hasSlice();
  for (size_t i = 0; i < rank; ++i) {
    const IndexItem &item = ix->indices[i];
    r.origins[i] = item.lo;
    if (!item.isSlice) {
      r.isPoint[i] = !r.originOnly;
      r.extents[i] = r.originOnly ? std::nullopt : std::optional<int64_t>(1);
      continue;
    }
    std::optional<int64_t> extent;
    if (item.hi)
      extent = constantDifference(item.hi, item.lo);
    else if (auto dim = buf->shape.constDim(i);
             dim && (!item.lo || (item.lo->constant && item.lo->constant->isInt())))
      extent = *dim - (item.lo ? item.lo->constant->getInt() : 0);
    if (extent && *extent <= 0) {
      diags.error(item.range, "empty region: slice " + std::to_string(i) + " of '" +
                                  buf->getName() + "' has extent " + std::to_string(*extent));
      return std::nullopt;
    }
    r.extents[i] = extent;
  }
  return r;
}

bool TileOpChecker::checkSameTile(const Region &src, const Region &dst) {
  if (src.originOnly && dst.originOnly) {
    diags.error(call->getRange(), op() + " needs the tile extent from one side, but both '" +
                                      src.buffer->getName() + "' and '" + dst.buffer->getName() +
                                      "' are given by origin only")
        .hint("pass a whole buffer on one side, or slice one side: A[i0:i1, j0:j1]");
    return false;
  }
  // Origin-only: the other side's tile is placed at the origin, aligned to the last dims.
  const Region &sized = src.originOnly ? dst : src;
  const Region &placed = src.originOnly ? src : (dst.originOnly ? dst : src);
  if (placed.originOnly) {
    auto tile = squeeze(sized.tileShape());
    size_t rank = placed.buffer->shape.rank();
    if (tile.size() > rank) {
      diags.error(placed.range, "a " + extentStr(tile) + " tile does not fit in " +
                                    std::to_string(rank) + "-d '" + placed.buffer->getName() + "'");
      return false;
    }
    // Bounds of constant origins against constant dims. A tile of more dims than the buffer
    // (a [1, N] fragment into an [N] vector) is placed by its squeezed extents, which fit.
    std::vector<std::optional<int64_t>> full = sized.tileShape();
    if (full.size() > rank)
      full = tile;
    for (size_t k = 0; k < full.size(); ++k) {
      size_t dim = rank - full.size() + k;
      const Expr *origin = placed.origins[dim];
      auto size = placed.buffer->shape.constDim(dim);
      if (full[k] && size && origin && origin->constant && origin->constant->isInt() &&
          origin->constant->getInt() + *full[k] > *size) {
        diags.error(origin->getRange(), "the " + extentStr(sized.tileShape()) + " tile at " +
                                            std::to_string(origin->constant->getInt()) +
                                            " runs past dimension " + std::to_string(dim) + " of '" +
                                            placed.buffer->getName() + "' (size " +
                                            std::to_string(*size) + ")");
        return false;
      }
    }
    return true;
  }
  auto a = squeeze(src.tileShape()), b = squeeze(dst.tileShape());
  bool match = a.size() == b.size();
  for (size_t i = 0; match && i < a.size(); ++i)
    if (a[i] && b[i] && *a[i] != *b[i])
      match = false;
  if (!match) {
    diags.error(call->getRange(), op() + " shapes do not match: source '" +
                                      src.buffer->getName() + "' is " + src.shapeStr() +
                                      " but destination '" + dst.buffer->getName() + "' is " +
                                      dst.shapeStr())
        .note(src.range, "source region")
        .note(dst.range, "destination region");
    return false;
  }
  return true;
}

void TileOpChecker::checkCopy(bool atomic) {
  std::optional<Region> dst = operand("dst", /*isWrite=*/true);
  Expr *srcExpr = arg("src");
  // atomic_add(dst, value) with a scalar value adds one element. Inside a parallel loop an
  // indexed value (X_f[i, j]) is an element, not a region.
  bool inParallel = llvm::any_of(sema.loops, [](ForStmt *f) { return f->loopKind == LoopKind::Parallel; });
  if (atomic && srcExpr && (inParallel || !isa<IndexExpr>(srcExpr)) &&
      !(isa<NameExpr>(srcExpr) && sema.lookup(cast<NameExpr>(srcExpr)->name) &&
        sema.lookup(cast<NameExpr>(srcExpr)->name)->type.kind() == Type::Buffer)) {
    Type t = sema.checkExpr(srcExpr);
    if (dst && !dst->originOnly)
      diags.error(dst->range, "atomic_add of a scalar needs a single element as destination")
          .hint("index every dimension with a point: C[i, j]");
    else if (dst)
      sema.checkConvertible(t, dst->buffer->elemType, srcExpr, "atomic_add's value");
    return;
  }
  std::optional<Region> src = operand("src", /*isWrite=*/false);
  if (!src || !dst)
    return;
  if (atomic && dst->buffer->scope != Scope::Global && dst->buffer->scope != Scope::Shared) {
    diags.error(dst->range, "atomic_add's destination must be global or shared memory, but '" +
                                dst->buffer->getName() + "' is " + scopeName(dst->buffer->scope));
    return;
  }
  if (src->buffer == dst->buffer && !atomic) {
    diags.error(call->getRange(), "copy from '" + src->buffer->getName() + "' to itself");
    return;
  }
  if ((dst->buffer->elemType == DType::Bool) != (src->buffer->elemType == DType::Bool)) {
    diags.error(call->getRange(), op() + " cannot convert between bool and " +
                                      dtypeName(dst->buffer->elemType == DType::Bool
                                                    ? src->buffer->elemType
                                                    : dst->buffer->elemType));
    return;
  }
  if (!checkSameTile(*src, *dst))
    return;
  checkPackedCopy(*src, *dst);
}

// A copy of i4/u4 tiles moves their bytes: both sides packed alike, each region starting and
// ending on a byte.
void TileOpChecker::checkPackedCopy(const Region &src, const Region &dst) {
  DType s = src.buffer->elemType, d = dst.buffer->elemType;
  if (!isPacked(s) && !isPacked(d))
    return;
  if (s != d) {
    diags.error(call->getRange(), "copy cannot convert between " + dtypeName(s).str() + " and " +
                                      dtypeName(d).str() + ": packed i4/u4 tiles are copied as they are")
        .hint(isPacked(s) && isPacked(d) ? "declare both buffers with the same dtype"
                                         : "dequant_i4 unpacks an i4 or u4 tile into f16 or bf16; element reads in a "
                                           "parallel loop give any other type");
    return;
  }
  auto inner = [](const Region &r, const Region &other) -> std::optional<int64_t> {
    const Region &sized = r.originOnly ? other : r;
    return sized.extents.empty() ? std::nullopt : sized.extents.back();
  };
  if (sema.checkPackedRegion(src, inner(src, dst), "copy's src"))
    sema.checkPackedRegion(dst, inner(dst, src), "copy's dst");
}

void TileOpChecker::checkGemm() {
  BufferDecl *a = wholeBuffer("A", {Scope::Shared, Scope::Fragment});
  BufferDecl *b = wholeBuffer("B", {Scope::Shared, Scope::Fragment});
  BufferDecl *c = wholeBuffer("C", {Scope::Fragment});
  auto ta = option("transpose_A", Type::Scalar, ConstValue{false});
  auto tb = option("transpose_B", Type::Scalar, ConstValue{false});
  option("policy", Type::PolicyValue, ConstValue{WarpPolicy::Square});
  option("clear_accum", Type::Scalar, ConstValue{false});
  // threads = T: the gemm runs on the block's first T threads (ops/Gemm.cpp checks T against
  // the block and the instruction's thread group, which Sema does not know yet).
  auto threads = option("threads", Type::IntLiteral, ConstValue{int64_t(0)});
  if (!threads)
    return;
  if (arg("threads") && threads->getInt() <= 0) {
    diags.error(arg("threads")->getRange(), "'threads' of gemm must be positive, got " +
                                                std::to_string(threads->getInt()))
        .hint("threads = T runs the gemm on the block's first T threads (a multiple of 128 on wgmma, "
              "of the warp size elsewhere)");
    return;
  }
  if (!a || !b || !c || !ta || !tb)
    return;
  for (BufferDecl *x : {a, b, c})
    if (x->shape.rank() != 2) {
      diags.error(call->getRange(), "gemm operands are 2-d tiles, but '" + x->getName() +
                                        "' has shape " + x->shape.str())
          .note(x->getRange(), "'" + x->getName() + "' is declared here");
      return;
    }
  // Element types: A and B agree; the accumulator is wide enough.
  if (a->elemType != b->elemType) {
    diags.error(call->getRange(), "gemm inputs have different dtypes: A is " +
                                      dtypeName(a->elemType) + ", B is " + dtypeName(b->elemType));
    return;
  }
  DType in = a->elemType, acc = c->elemType;
  bool inOk = in == DType::F16 || in == DType::BF16 || in == DType::F8E4M3 ||
              in == DType::F8E5M2 || in == DType::I8 || in == DType::F32;
  if (!inOk) {
    diags.error(arg("A")->getRange(), "gemm has no tensor-core path for " + dtypeName(in) +
                                          " inputs")
        .hint("supported inputs: f16, bf16, f8e4m3, f8e5m2, i8, f32 (tf32)");
    return;
  }
  bool accOk = in == DType::I8 ? acc == DType::I32
                               : (acc == DType::F32 || (in == DType::F16 && acc == DType::F16));
  if (!accOk) {
    diags.error(arg("C")->getRange(), "gemm accumulator '" + c->getName() + "' is " +
                                          dtypeName(acc) + ", which " + dtypeName(in) +
                                          " inputs cannot accumulate into")
        .hint(in == DType::I8    ? "use an i32 accumulator"
              : in == DType::F16 ? "use an f32 or f16 accumulator"
                                 : "use an f32 accumulator: the tensor cores accumulate " + dtypeName(in).str() +
                                       " inputs only in f32");
    return;
  }
  checkGemmShapes(a, b, c, ta->getBool(), tb->getBool());
}

namespace {

// The M, N, K extents gemm reads from its operands under a choice of transposes; nullopt
// where a dimension is not a compile-time constant.
struct GemmExtents {
  std::optional<int64_t> M, Ka, Kb, N, Mc, Nc;

  GemmExtents(BufferDecl *a, BufferDecl *b, BufferDecl *c, bool transA, bool transB)
      : M(a->shape.constDim(transA ? 1 : 0)), Ka(a->shape.constDim(transA ? 0 : 1)),
        Kb(b->shape.constDim(transB ? 1 : 0)), N(b->shape.constDim(transB ? 0 : 1)),
        Mc(c->shape.constDim(0)), Nc(c->shape.constDim(1)) {}

  static bool differ(std::optional<int64_t> x, std::optional<int64_t> y) { return x && y && *x != *y; }
  bool kMismatch() const { return differ(Ka, Kb); }
  bool mMismatch() const { return differ(M, Mc); }
  bool nMismatch() const { return differ(N, Nc); }
  bool consistent() const { return !kMismatch() && !mMismatch() && !nMismatch(); }
};

} // namespace

void TileOpChecker::checkGemmShapes(BufferDecl *a, BufferDecl *b, BufferDecl *c, bool transA,
                                    bool transB) {
  GemmExtents e(a, b, c, transA, transB);
  if (e.consistent())
    return;
  std::string detail;
  if (e.kMismatch())
    detail = "K mismatch: A has K = " + std::to_string(*e.Ka) + " but B has K = " +
             std::to_string(*e.Kb);
  else if (e.mMismatch())
    detail = "M mismatch: A has M = " + std::to_string(*e.M) + " but C has " +
             std::to_string(*e.Mc) + " rows";
  else
    detail = "N mismatch: B has N = " + std::to_string(*e.N) + " but C has " +
             std::to_string(*e.Nc) + " columns";
  auto diag = diags.error(call->getRange(), "gemm " + detail);
  diag.note(a->getRange(), "A '" + a->getName() + "' is " + a->shape.str() +
                               (transA ? " (transposed)" : ""))
      .note(b->getRange(), "B '" + b->getName() + "' is " + b->shape.str() +
                               (transB ? " (transposed)" : ""))
      .note(c->getRange(), "C '" + c->getName() + "' is " + c->shape.str());
  // Operands stored the other way round are the usual cause: name the flags that fix it.
  for (bool tryA : {transA, !transA})
    for (bool tryB : {transB, !transB}) {
      if ((tryA == transA && tryB == transB) || !GemmExtents(a, b, c, tryA, tryB).consistent())
        continue;
      std::vector<std::string> flags;
      if (tryA != transA)
        flags.push_back(std::string("transpose_A = ") + (tryA ? "true" : "false"));
      if (tryB != transB)
        flags.push_back(std::string("transpose_B = ") + (tryB ? "true" : "false"));
      diag.hint("the shapes agree with " + llvm::join(flags, " and "));
      return;
    }
  diag.hint("gemm computes C[M, N] += A[M, K] * B[K, N]; transpose_A reads A as [K, M] and "
            "transpose_B reads B as [N, K]");
}

std::optional<int64_t> TileOpChecker::checkDim(llvm::StringRef name, size_t rank,
                                              const std::string &what) {
  auto v = option(name, Type::IntLiteral, ConstValue{int64_t(rank) - 1});
  if (!v)
    return std::nullopt;
  int64_t d = v->getInt();
  if (d < -int64_t(rank) || d >= int64_t(rank)) {
    diags.error(arg(name)->getRange(), op() + " dim " + std::to_string(d) +
                                           " is out of range for " + what + " (valid: " +
                                           std::to_string(-int64_t(rank)) + " to " +
                                           std::to_string(rank - 1) + ")");
    return std::nullopt;
  }
  return d < 0 ? d + int64_t(rank) : d;
}

// The dtypes a reduction takes: numeric buffers; integers for the bitwise ones; an i32
// index destination, and a values destination where clear = false, for argmax/argmin.
bool TileOpChecker::checkReduceTypes(BufferDecl *src, BufferDecl *dst, bool clear) {
  if (src->elemType == DType::Bool || dst->elemType == DType::Bool) {
    diags.error(call->getRange(), op() + " needs numeric buffers");
    return false;
  }
  auto declared = [&](BufferDecl *b) { return "'" + b->getName().str() + "' is declared here"; };
  if (isBitwiseReduce(call->builtin)) {
    for (BufferDecl *b : {src, dst})
      if (!isInteger(b->elemType) || bitWidth(b->elemType) < 8) {
        diags.error(arg(b == src ? "src" : "dst")->getRange(),
                    op() + " combines the bits of integers, but '" + b->getName() + "' is " +
                        dtypeName(b->elemType))
            .note(b->getRange(), declared(b))
            .hint("bitwise reductions take i8, u8, i16, i32, u32 and i64 buffers; for floats use reduce_max, "
                  "reduce_min or reduce_sum");
        return false;
      }
    return true;
  }
  if (!isArgReduce(call->builtin))
    return true;
  if (dst->elemType != DType::I32) {
    diags.error(arg("dst")->getRange(), op() + "'s dst receives positions and must be i32, but '" +
                                            dst->getName() + "' is " + dtypeName(dst->elemType))
        .note(dst->getRange(), declared(dst))
        .hint("declare '" + dst->getName().str() + "' as i32");
    return false;
  }
  if (clear || arg("values"))
    return true;
  std::string what = call->builtin == Builtin::ReduceArgmax ? "maximum" : "minimum";
  diags.error(call->getRange(), op() + " with clear = false needs the running " + what +
                                    " beside the running position")
      .hint("pass values = a buffer shaped like '" + dst->getName().str() +
            "' (of src's dtype) that keeps the " + what + " from one call to the next");
  return false;
}

void TileOpChecker::checkReduce() {
  std::initializer_list<Scope> scopes = {Scope::Fragment, Scope::Shared, Scope::Local};
  BufferDecl *src = wholeBuffer("src", scopes);
  BufferDecl *dst = wholeBuffer("dst", scopes);
  auto clear = option("clear", Type::Scalar, ConstValue{true});
  BufferDecl *values = arg("values") ? wholeBuffer("values", scopes) : nullptr;
  if (Expr *offset = arg("offset")) {
    Type t = sema.checkExpr(offset);
    if (!t.isError() && !t.isIntegral())
      diags.error(offset->getRange(), "'offset' of " + op() + " must be an integer, got " + t.str())
          .hint("the offset is added to every position, e.g. offset = k * block_N for the k-th tile");
  }
  if (!src || !dst || !clear || (arg("values") && !values))
    return;
  auto dim = checkDim("dim", src->shape.rank(), "'" + src->getName().str() + "' " + src->shape.str());
  if (!dim)
    return;
  if (!checkReduceTypes(src, dst, clear->getBool()))
    return;
  if (values && values->elemType == DType::Bool) {
    diags.error(arg("values")->getRange(), op() + " needs numeric buffers");
    return;
  }
  // dst is src without `dim`, or src with `dim` kept as extent 1.
  std::vector<std::optional<int64_t>> expected;
  for (size_t i = 0; i < src->shape.rank(); ++i)
    if (i != size_t(*dim))
      expected.push_back(src->shape.constDim(i));
  for (BufferDecl *out : {dst, values}) {
    if (!out)
      continue;
    std::vector<std::optional<int64_t>> actual;
    for (size_t i = 0; i < out->shape.rank(); ++i)
      actual.push_back(out->shape.constDim(i));
    if (squeeze(actual) != squeeze(expected) || actual.size() > src->shape.rank()) {
      diags.error(call->getRange(), op() + " over dim " + std::to_string(*dim) + " of '" +
                                        src->getName() + "' " + src->shape.str() + " gives " +
                                        (expected.empty() ? "a scalar" : bracketStr(expected)) +
                                        ", but '" + out->getName() + "' is " + out->shape.str())
          .note(out->getRange(), "'" + out->getName() + "' is declared here")
          .hint("the destination drops the reduced dimension (or keeps it with extent 1)");
      return;
    }
  }
  if (values && values->scope != dst->scope)
    diags.error(arg("values")->getRange(), op() + "'s values and dst must be buffers of one kind, but '" +
                                               values->getName() + "' is " + scopeName(values->scope).str() +
                                               " and '" + dst->getName() + "' " + scopeName(dst->scope).str())
        .hint("declare both as " + scopeName(dst->scope).str() + " buffers");
}

void TileOpChecker::checkCumsum() {
  std::optional<Region> src = operand("src", false);
  std::optional<Region> dst = operand("dst", true);
  option("reverse", Type::Scalar, ConstValue{false});
  if (!src || !dst)
    return;
  if (!checkSameTile(*src, *dst))
    return;
  checkDim("dim", src->tileShape().size(), "the " + src->shapeStr() + " tile");
}

// im2col(X, A_s, pixel = m0, channel = c0, r = r, s = s, kh = kh, kw = kw, stride = .., pad = ..)
// or im2col(X, A_s, pixel = m0, column = k0, kh = .., ...): X a whole NHWC tensor [N, H, W, C],
// A_s a shared [rows, cols] tile of its dtype; pixel, channel, r and s (or column) integer
// expressions (uniform over the block, as every tile operand), the filter size, stride and padding compile-time constants (the launcher's tensor map and the
// output size P = (H + 2 pad - kh) / stride + 1 are built from them).
void TileOpChecker::checkIm2col() {
  Expr *srcExpr = arg("src");
  Type srcType = sema.checkExpr(srcExpr, Sema::ExprContext::TileOperand);
  BufferDecl *dst = wholeBuffer("dst", {Scope::Shared});
  bool ok = !srcType.isError() && dst; // both operands known: their ranks and dtypes are checked
  auto *srcName = dyn_cast<NameExpr>(srcExpr);
  auto *src = srcName ? dyn_cast_or_null<TensorParamDecl>(srcName->decl) : nullptr;
  if (!srcType.isError() && (!src || src->shape.rank() != 4)) {
    auto diag = diags.error(srcExpr->getRange(),
                            "im2col's src must be a whole global tensor [N, H, W, C] (images, channels last)" +
                                std::string(src ? ", but '" + src->getName().str() + "' has " +
                                                      std::to_string(src->shape.rank()) + " dimensions"
                                                : ""));
    if (src)
      diag.note(src->getRange(), "'" + src->getName().str() + "' is declared here");
    else
      diag.hint("pass the tensor itself: the op addresses pixels and channels from pixel, r, s and channel");
    ok = false;
  }
  if (dst && dst->shape.rank() != 2) {
    diags.error(arg("dst")->getRange(), "im2col's dst must be a 2-d shared tile [pixels, channels], but '" +
                                            dst->getName() + "' is " + dst->shape.str())
        .note(dst->getRange(), "'" + dst->getName() + "' is declared here");
    ok = false;
  }
  if (ok && (src->elemType != dst->elemType || bitWidth(dst->elemType) < 8 || dst->elemType == DType::Bool)) {
    diags.error(arg("dst")->getRange(), "im2col copies elements as they are: '" + dst->getName() + "' is " +
                                            dtypeName(dst->elemType) + ", '" + src->getName() + "' is " +
                                            dtypeName(src->elemType))
        .note(dst->getRange(), "'" + dst->getName() + "' is declared here")
        .hint(src->elemType == dst->elemType ? "im2col moves numeric elements of 8 bits or more"
                                             : "declare '" + dst->getName().str() + "' as " +
                                                   dtypeName(src->elemType).str());
    ok = false;
  }
  // The positions: integers, required. Two forms: one tap's channels (channel, r, s), or
  // columns over taps and channels folded into one K index (column).
  const bool folded = arg("column") != nullptr;
  if (folded)
    for (const char *name : {"channel", "r", "s"})
      if (arg(name)) {
        sema.checkExpr(arg(name));
        diags.error(arg(name)->getRange(), std::string("im2col takes either 'column' (taps and channels as one "
                                                       "index) or 'channel', 'r' and 's' (one tap), not both"))
            .hint("drop '" + std::string(name) + "': with column = k, column k is tap k / C, channel k % C");
        ok = false;
      }
  const std::vector<const char *> positions =
      folded ? std::vector<const char *>{"pixel", "column"} : std::vector<const char *>{"pixel", "channel", "r", "s"};
  for (const char *name : positions) {
    Expr *e = arg(name);
    if (!e) {
      diags.error(call->getRange(), std::string("im2col is missing its '") + name + "' argument")
          .hint("expected im2col(src, dst, pixel = .., channel = .., r = .., s = .., kh = .., kw = ..), or "
                "im2col(src, dst, pixel = .., column = .., kh = .., kw = ..)");
      ok = false;
      continue;
    }
    Type t = sema.checkExpr(e);
    if (!t.isError() && !t.isIntegral()) {
      diags.error(e->getRange(), std::string("'") + name + "' of im2col must be an integer, got " + t.str());
      ok = false;
    }
  }
  // The geometry: compile-time constants within range.
  auto geometry = [&](const char *name, bool required, int64_t fallback, int64_t least) -> bool {
    if (required && !arg(name)) {
      diags.error(call->getRange(), std::string("im2col is missing its '") + name + "' argument")
          .hint("the filter size is a compile-time constant: kh = 3, kw = 3");
      return false;
    }
    auto v = option(name, Type::IntLiteral, ConstValue{fallback});
    if (!v)
      return false;
    if (v->getInt() < least) {
      diags.error(arg(name)->getRange(), std::string("'") + name + "' of im2col must be at least " +
                                             std::to_string(least) + ", got " + std::to_string(v->getInt()));
      return false;
    }
    return true;
  };
  for (const char *name : {"kh", "kw"})
    geometry(name, true, 1, 1);
  geometry("stride", false, 1, 1);
  geometry("pad", false, 0, 0);
}

// dequant_i4(src, dst, scales?, zeros = ?): whole shared buffers; src i4/u4 [R, C] (or u8/i8
// [R, C / 2], two signed 4-bit weights per byte), dst f16/bf16 [R, C], scales and zeros dst's
// dtype [R, C / group]. The lowering converts eight weights (one 32-bit word) at a time with
// one scale and one zero point, hence C and the group multiples of 8.
void TileOpChecker::checkDequantI4() {
  BufferDecl *src = wholeBuffer("src", {Scope::Shared, Scope::Fragment});
  BufferDecl *dst = wholeBuffer("dst", {Scope::Shared, Scope::Fragment});
  BufferDecl *scales = arg("scales") ? wholeBuffer("scales", {Scope::Shared, Scope::Fragment}) : nullptr;
  BufferDecl *zeros = arg("zeros") ? wholeBuffer("zeros", {Scope::Shared, Scope::Fragment}) : nullptr;
  // transpose_scales: scales and zeros are [G, R], one row per group, as GPTQ and AWQ store
  // them ([K / group_size, N]).
  auto transposed = option("transpose_scales", Type::Scalar, ConstValue{false});
  if (!src || !dst || (arg("scales") && !scales) || (arg("zeros") && !zeros) || !transposed)
    return;
  const bool tscales = transposed->getBool();
  if (tscales && !scales) {
    diags.error(arg("transpose_scales")->getRange(), "transpose_scales without scales: nothing to transpose")
        .hint("pass the scales as the third argument, [groups, rows] with transpose_scales = true");
    return;
  }
  const std::pair<llvm::StringRef, BufferDecl *> operands[] = {
      {"src", src}, {"dst", dst}, {"scales", scales}, {"zeros", zeros}};
  const auto perGroup = llvm::makeArrayRef(operands).drop_front(2); // scales and zeros
  // Both in shared memory (a block-wide tile); both fragments (each thread unpacks the bytes it
  // holds into its own registers: a GEMV's weights never touch shared memory); or a shared
  // src unpacked into a fragment (each thread reads the bytes of the elements its registers
  // hold: a gemm's operand in registers, whatever layout the gemm gives it). A fragment's
  // bytes are one thread's own, so they cannot fill a block-wide shared tile.
  if (src->scope == Scope::Fragment && dst->scope == Scope::Shared) {
    diags.error(call->getRange(), "dequant_i4 cannot unpack the fragment '" + src->getName() +
                                      "' into the shared buffer '" + dst->getName() +
                                      "': each thread holds only its own bytes of a fragment")
        .hint("declare '" + dst->getName().str() + "' a fragment, or copy the packed tile into a shared buffer");
    return;
  }
  // Zero points shift the weights before the scale multiplies them: (q - zero) * scale.
  if (zeros && !scales) {
    diags.error(arg("zeros")->getRange(), "dequant_i4 with zeros needs scales: dst = (q - zero) * scale")
        .hint("pass the scales as the third argument (a buffer of ones for unscaled weights)");
    return;
  }
  for (auto [name, b] : perGroup) {
    if (b && b->scope == Scope::Fragment) {
      diags.error(arg(name)->getRange(), "not supported yet: dequant_i4 with " + name.str() + " in a fragment")
          .note(b->getRange(), "'" + b->getName() + "' is declared here")
          .hint("copy the " + name.str() + " into a shared buffer: each thread reads one per eight weights");
      return;
    }
  }
  auto named = [](BufferDecl *b) { return "'" + b->getName().str() + "' " + b->shape.str(); };
  if (src->elemType != DType::U8 && src->elemType != DType::I8 && !isPacked(src->elemType)) {
    diags.error(arg("src")->getRange(), "dequant_i4's src must be an i4, u4 or f4e2m1 buffer of the weights or a u8 "
                                        "or i8 buffer of their bytes, but '" +
                                            src->getName() + "' is " + dtypeName(src->elemType))
        .note(src->getRange(), "'" + src->getName() + "' is declared here")
        .hint("declare it i4, u4 or f4e2m1 (the shape of dst), or u8 with byte c holding weight 2c in its low nibble and "
              "weight 2c + 1 in its high nibble (read as signed weights)");
    return;
  }
  if (src->elemType == DType::F4E2M1 && zeros) {
    // FP4 formats (MXFP4, NVFP4) quantize symmetrically: a scale per group, no offset.
    diags.error(arg("zeros")->getRange(), "dequant_i4 of f4e2m1 weights takes no zero points")
        .note(src->getRange(), "'" + src->getName() + "' is declared here")
        .hint("f4e2m1 values are signed: pass only the scales");
    return;
  }
  if (dst->elemType != DType::F16 && dst->elemType != DType::BF16) {
    diags.error(arg("dst")->getRange(), "dequant_i4's dst must be an f16 or bf16 buffer, but '" +
                                            dst->getName() + "' is " + dtypeName(dst->elemType))
        .note(dst->getRange(), "'" + dst->getName() + "' is declared here")
        .hint("dequantize into f16 or bf16 and convert from there");
    return;
  }
  for (auto [name, b] : perGroup) {
    // Zero points may also come packed, as GPTQ and AWQ checkpoints store them: u4, two per
    // byte along the groups.
    bool packedZeros = name == "zeros" && b && b->elemType == DType::U4;
    if (b && b->elemType != dst->elemType && !packedZeros) {
      diags.error(arg(name)->getRange(), "dequant_i4's " + name.str() + " must have dst's dtype " +
                                             dtypeName(dst->elemType) +
                                             (name == "zeros" ? " or be packed u4" : "") + ", but '" +
                                             b->getName() + "' is " + dtypeName(b->elemType))
          .note(b->getRange(), "'" + b->getName() + "' is declared here")
          .hint("declare '" + b->getName().str() + "' as " + dtypeName(dst->elemType).str() +
                " (the scales and zero points are applied in dst's dtype) and copy the values into it");
      return;
    }
  }
  for (auto [name, b] : operands) {
    if (b && b->shape.rank() != 2) {
      diags.error(arg(name)->getRange(), "dequant_i4 takes 2-d buffers [rows, columns], but " + named(b) + " has " +
                                             std::to_string(b->shape.rank()) + " dimensions")
          .hint("src and dst are [rows, columns] tiles; scales and zeros [rows, columns / group_size], one "
                "column per group even for a single group");
      return;
    }
  }
  std::optional<int64_t> rows = dst->shape.constDim(0), cols = dst->shape.constDim(1);
  std::optional<int64_t> srcRows = src->shape.constDim(0), bytes = src->shape.constDim(1);
  if (!rows || !cols || !srcRows || !bytes)
    return; // shared buffers have constant shapes; Sema reported otherwise
  // An i4/u4 src has dst's shape (its bytes are the u8 form's: ftg::Buffer::packed).
  if (isPacked(src->elemType)) {
    if (*srcRows != *rows || *bytes != *cols) {
      diags.error(call->getRange(), "dequant_i4 unpacks " + dtypeName(src->elemType).str() + " src " + named(src) +
                                        " into a tile of its shape, but dst is " + named(dst))
          .hint("an i4, u4 or f4e2m1 src and its dst have the same shape [rows, columns]");
      return;
    }
    bytes = *bytes / 2;
  }
  if (*srcRows != *rows || *bytes * 2 != *cols) {
    diags.error(call->getRange(), "dequant_i4 unpacks two weights per byte: src " + named(src) +
                                      " needs dst [" + std::to_string(*srcRows) + ", " + std::to_string(*bytes * 2) +
                                      "], but dst is " + named(dst))
        .hint("src is [rows, columns / 2] and dst [rows, columns]");
    return;
  }
  if (*cols % 8 != 0) {
    diags.error(arg("dst")->getRange(), "dequant_i4 converts eight weights at a time, but dst " + named(dst) +
                                            " has " + std::to_string(*cols) + " columns")
        .hint("make the number of columns a multiple of 8");
    return;
  }
  if (!scales)
    return;
  const int rowDim = tscales ? 1 : 0;
  std::optional<int64_t> scaleRows = scales->shape.constDim(rowDim), groups = scales->shape.constDim(1 - rowDim);
  if (!scaleRows || !groups)
    return;
  const std::string form = tscales ? "[columns / group_size, rows] (transpose_scales)" : "[rows, columns / group_size]";
  if (*scaleRows != *rows || *cols % *groups != 0 || (*cols / *groups) % 8 != 0) {
    diags.error(arg("scales")->getRange(), "dequant_i4's scales " + named(scales) + " do not divide dst " + named(dst) +
                                               " into groups of a multiple of 8 columns")
        .hint("scales is " + form + ", with group_size a multiple of 8" +
              (!tscales && scales->shape.constDim(1) == rows ? "; scales stored [groups, rows], as GPTQ and AWQ "
                                                               "store them, need transpose_scales = true"
                                                             : ""));
    return;
  }
  if (zeros && (zeros->shape.constDim(0) != scales->shape.constDim(0) ||
                zeros->shape.constDim(1) != scales->shape.constDim(1))) {
    diags.error(arg("zeros")->getRange(), "dequant_i4's zeros " + named(zeros) + " must have the shape of scales " +
                                              named(scales) + ": one zero point per group")
        .hint("zeros is " + form + ", as scales is");
  }
}

void TileOpChecker::checkFill() {
  std::optional<Region> dst = operand("dst", true);
  if (Expr *value = arg("value")) {
    Type t = sema.checkExpr(value);
    if (dst)
      sema.checkConvertible(t, dst->buffer->elemType, value, "fill's value");
  }
  if (dst && dst->originOnly)
    diags.error(dst->range, op() + " needs a whole buffer or a sliced region, not an origin")
        .hint("write " + dst->buffer->getName().str() + " or a slice like " +
              dst->buffer->getName().str() + "[i0:i1, :]");
}

void TileOpChecker::checkAnnotateLayout() {
  BufferDecl *buf = wholeBuffer("buffer", {Scope::Shared, Scope::Fragment});
  Expr *layout = arg("layout");
  auto *lambda = dyn_cast_or_null<LambdaExpr>(layout);
  if (layout && !lambda) {
    diags.error(layout->getRange(), "annotate_layout's layout must be a layout function such as "
                                    "`(i, j) => [i, j ^ (i % 8)]`");
    return;
  }
  if (!buf || !lambda)
    return;
  if (lambda->params.size() != buf->shape.rank()) {
    diags.error(lambda->getRange(), "the layout function takes " +
                                        std::to_string(lambda->params.size()) +
                                        (lambda->params.size() == 1 ? " index" : " indices") + " but '" +
                                        buf->getName() + "' has " +
                                        std::to_string(buf->shape.rank()) + " dimensions");
    return;
  }
  if (lambda->results.size() != buf->shape.rank())
    diags.error(lambda->getRange(), "the layout function returns " + std::to_string(lambda->results.size()) +
                                        (lambda->results.size() == 1 ? " index" : " indices") + " but '" +
                                        buf->getName() + "' has " + std::to_string(buf->shape.rank()) +
                                        " dimensions")
        .hint("it maps each element [i, j] to the place [p, q] of the row-major buffer it takes");
  sema.pushScope();
  for (SimpleDecl *p : lambda->params) {
    p->type = Type::index();
    sema.declare(p);
  }
  for (Expr *r : lambda->results)
    sema.expectIntegral(r, sema.checkExpr(r), "a layout result");
  sema.popScope();
  lambda->type = Type::layout();
}

void TileOpChecker::checkSwizzleBlocks() {
  auto panel = option("panel", Type::IntLiteral, ConstValue{int64_t(8)});
  if (panel && panel->getInt() <= 0)
    diags.error(arg("panel")->getRange(), "swizzle_blocks panel must be positive, got " +
                                              std::to_string(panel->getInt()));
  if (!sema.loops.empty() || sema.conditionalDepth)
    diags.error(call->getRange(), "swizzle_blocks reorders the whole grid and must be at the top "
                                  "level of the kernel body");
  else if (sema.kernel && sema.kernel->grid.size() < 2)
    diags.error(call->getRange(), "swizzle_blocks needs a 2-d grid to reorder");
}

void TileOpChecker::checkWarpSpecialize() {
  option("enabled", Type::Scalar, ConstValue{true});
  if (!sema.loops.empty() || sema.conditionalDepth)
    diags.error(call->getRange(), "warp_specialize decides how the whole kernel is compiled and must be "
                                  "at the top level of the kernel body");
}

void TileOpChecker::checkPersistent() {
  option("enabled", Type::Scalar, ConstValue{true});
  if (!sema.loops.empty() || sema.conditionalDepth)
    diags.error(call->getRange(), "persistent decides how the whole kernel is launched and must be "
                                  "at the top level of the kernel body");
}

// tune_for(N, s1, s2, ...) generates nothing: it gives the sizes of N that the kernel's `auto`
// parameters are chosen for (one bucket per size, a variant per distinct choice, dispatched at
// launch), as `--assume N=s1,s2,...` does on the command line, which overrides it. The kernel
// still takes any N; only which variant runs depends on it.
void TileOpChecker::checkTuneFor() {
  KernelDecl *kernel = sema.kernel;
  if (!kernel)
    return;
  if (!sema.loops.empty() || sema.conditionalDepth) {
    diags.error(call->getRange(), "tune_for names the sizes the whole kernel is tuned for and must "
                                  "be at the top level of the kernel body");
    return;
  }
  Expr *symbolExpr = arg("symbol");
  auto *name = dyn_cast<NameExpr>(symbolExpr);
  Decl *decl = name ? sema.lookup(name->name) : nullptr;
  if (!decl || !isa<ShapeSymbolDecl>(decl)) {
    std::vector<std::string> symbols;
    for (const ShapeSymbolDecl *s : kernel->shapeSymbols)
      symbols.push_back(s->getName().str());
    auto diag = diags.error(symbolExpr->getRange(),
                            "tune_for's first argument must be a shape symbol of kernel '" +
                                kernel->name + "' (a size named in a tensor parameter's shape)");
    if (symbols.empty())
      diag.hint("kernel '" + kernel->name + "' has no shape symbols: its sizes are constants");
    else if (std::string near = name ? closestMatch(name->name, symbols) : ""; !near.empty())
      diag.hint("did you mean '" + near + "'?");
    else
      diag.hint("its shape symbols: " + llvm::join(symbols, ", ") + "; e.g. tune_for(" +
                symbols.back() + ", 1024, 4096)");
    return;
  }
  sema.checkExpr(symbolExpr);
  std::vector<Expr *> sizeExprs{arg("size")};
  sizeExprs.insert(sizeExprs.end(), extraArgs.begin(), extraArgs.end());
  std::vector<int64_t> sizes;
  bool ok = true;
  for (Expr *e : sizeExprs) {
    Type t = sema.checkExpr(e);
    if (t.isError() || !sema.expectIntegral(e, t, "a size")) {
      ok = false;
      continue;
    }
    if (!e->constant || !e->constant->isInt()) {
      diags.error(e->getRange(), "tune_for's sizes must be compile-time constants")
          .hint("list the sizes the kernel is mostly called with, e.g. tune_for(" + name->name +
                ", 1024, 4096)");
      ok = false;
      continue;
    }
    int64_t v = e->constant->getInt();
    if (v < 1 || v > kMaxShapeExtent) {
      diags.error(e->getRange(), "tune_for size " + std::to_string(v) + " of " + name->name +
                                     " is out of range: shape symbols are i32 sizes, 1.." +
                                     std::to_string(kMaxShapeExtent));
      ok = false;
      continue;
    }
    sizes.push_back(v);
  }
  if (!ok)
    return;
  if (kernel->tunedSizes.count(name->name)) {
    diags.error(call->getRange(), "the sizes of " + name->name + " are given twice")
        .hint("list them in one tune_for(" + name->name + ", ...)");
    return;
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  kernel->tunedSizes[name->name] = sizes;
  if (llvm::none_of(kernel->compileParams, [](const CompileParamDecl *p) { return p->isAuto; }))
    diags.warning(call->getRange(), "tune_for has no effect: kernel '" + kernel->name +
                                        "' has no auto parameters to choose")
        .hint("make the knobs whose best value depends on " + name->name +
              " auto(...), e.g. block_N = auto(1024, 4096)");
}

void TileOpChecker::checkBarrier() {
  Expr *e = arg("id");
  if (!e) // bind() reported the missing argument
    return;
  Type t = sema.checkExpr(e);
  if (t.isError() || !sema.expectIntegral(e, t, "a barrier id"))
    return;
  // The id may differ between warpgroups (ping-pong schedules wait on their own barrier and
  // arrive at the other's) but must be known for each, so that its range is checked here and
  // the compiler's own barriers avoid it.
  const Expr *threads = sema.kernel ? sema.kernel->threads : nullptr;
  std::optional<std::vector<int64_t>> ids = valuesPerWarpgroup(
      e, threads && threads->constant && threads->constant->isInt() ? threads->constant->getInt() : 1);
  if (!ids) {
    auto diag = diags.error(e->getRange(), "a barrier id must be computed from constants and warpgroup_id()");
    sema.explainNotConstant(diag, e, "write a constant from 1 to 15, or e.g. `1 + warpgroup_id()`");
    return;
  }
  // In a branch a constant condition rules out, the ids never reach the hardware (a
  // ping-pong branch of a kernel built with three warpgroups and ping_pong = false).
  for (size_t w = 0; w < ids->size() && !sema.deadBranchDepth; ++w) {
    int64_t id = (*ids)[w];
    if (id >= 1 && id < kNamedBarriers)
      continue;
    // Barrier 0 is the one __syncthreads uses; hardware has 16.
    bool perWarpgroup = !e->constant;
    diags.error(e->getRange(), "barrier id must be between 1 and 15, got " + std::to_string(id) +
                                   (perWarpgroup ? " in warpgroup " + std::to_string(w) : std::string()))
        .hint(id == 0 ? "barrier 0 is reserved for block-wide synchronisation"
                      : "the hardware has 16 named barriers per block, 0 to 15");
    return;
  }
}

void TileOpChecker::checkCallExtern() {
  Expr *name = arg("name");
  // `call_extern(my_fn, ...)`: a bare unknown name is the function name without quotes, not
  // an undeclared variable.
  auto *bare = dyn_cast<NameExpr>(name);
  bool unquoted = bare && !sema.lookup(bare->name);
  Type nameType = unquoted ? Type::error() : sema.checkExpr(name, Sema::ExprContext::TileOperand);
  if (unquoted || (!nameType.isError() && !isa<StringLitExpr>(name))) {
    auto diag = diags.error(name->getRange(), "call_extern's first argument must be the function "
                                              "name as a string");
    if (unquoted)
      diag.hint("quote it: call_extern(\"" + bare->name + "\", ...)");
  } else if (auto *lit = dyn_cast<StringLitExpr>(name)) {
    // The name is pasted into the generated CUDA as the callee: nothing but a name may pass.
    std::string why = checkQualifiedName(lit->value, /*allowGlobal=*/true);
    if (!why.empty())
      diags.error(name->getRange(), "call_extern's function name \"" + lit->value +
                                        "\" is not a C++ function name: " + why)
          .hint("name a __device__ function, e.g. \"my_fn\" or \"my_ns::my_fn\"");
  }
  for (Expr *e : extraArgs) {
    Type t = sema.checkExpr(e);
    if (!t.isError() && !t.isNumeric() && !t.isBool())
      diags.error(e->getRange(), "call_extern passes scalars; got a " + t.str());
  }
  call->type = Type::voidTy();
  if (Expr *ret = arg("returns")) {
    Type t = sema.checkExpr(ret);
    if (t.kind() != Type::DTypeValue || !ret->constant) {
      if (!t.isError())
        diags.error(ret->getRange(), "call_extern's 'returns' must be a dtype");
      call->type = Type::error();
      return;
    }
    call->type = Type::scalar(ret->constant->getDType());
  }
}

// print(values..., thread = 0, all_threads = false): string literals (labels) and scalars of
// any dtype; one thread of each block prints unless all_threads (in a parallel loop, every
// thread that runs the element does).
void TileOpChecker::checkPrint() {
  for (Expr *e : extraArgs) {
    if (isa<StringLitExpr>(e))
      continue;
    Type t = sema.checkExpr(e);
    if (!t.isError() && !t.isNumeric() && !t.isBool())
      diags.error(e->getRange(), "print takes scalars and string labels; got a " + t.str())
          .hint(t.kind() == Type::Buffer ? "print one element, e.g. inside `for i, j in parallel(...)`"
                                         : "print a scalar expression or a \"label\"");
  }
  auto all = option("all_threads", Type::Scalar, ConstValue{false});
  if (Expr *t = arg("thread")) {
    Type ty = sema.checkExpr(t);
    if (!ty.isError() && (!t->constant || !t->constant->isInt() || t->constant->getInt() < 0))
      diags.error(t->getRange(), "print's 'thread' must be a constant thread index >= 0");
    else if (!ty.isError() && all && all->isBool() && all->getBool())
      diags.error(t->getRange(), "print's 'thread' and 'all_threads = true' exclude each other");
  }
  call->type = Type::voidTy();
}

void TileOpChecker::run() {
  bool parallel = llvm::any_of(sema.loops, [](ForStmt *f) { return f->loopKind == LoopKind::Parallel; });
  bool scalarLevel = call->builtin == Builtin::CallExtern || call->builtin == Builtin::AtomicAdd ||
                     call->builtin == Builtin::Print;
  if (parallel && !scalarLevel) {
    diags.error(call->calleeRange, "tile operator '" + op() + "' cannot be used inside a parallel loop")
        .hint("a parallel loop body runs per element; move " + op().str() + " outside the loop");
  }
  if (!bind() || !sema.checkPackedOperands(call)) {
    call->type = Type::error();
    // Still resolve the arguments so that misspelled names are reported too.
    for (const CallArg &a : call->args)
      if (!isa<LambdaExpr>(a.value))
        sema.checkExpr(a.value, Sema::ExprContext::TileOperand);
    return;
  }
  call->type = Type::voidTy();
  switch (call->builtin) {
  case Builtin::Copy: return checkCopy(false);
  case Builtin::AtomicAdd: return checkCopy(true);
  case Builtin::Gemm: return checkGemm();
  case Builtin::Fill: return checkFill();
  case Builtin::Clear: return checkFill();
  case Builtin::Cumsum:
  case Builtin::Cummax:
  case Builtin::Cummin: return checkCumsum();
  case Builtin::DequantI4: return checkDequantI4();
  case Builtin::Im2col: return checkIm2col();
  case Builtin::AnnotateLayout: return checkAnnotateLayout();
  case Builtin::SwizzleBlocks: return checkSwizzleBlocks();
  case Builtin::BarrierArrive:
  case Builtin::BarrierWait: return checkBarrier();
  case Builtin::WarpSpecialize: return checkWarpSpecialize();
  case Builtin::Persistent: return checkPersistent();
  case Builtin::TuneFor: return checkTuneFor();
  case Builtin::CallExtern: return checkCallExtern();
  case Builtin::Print: return checkPrint();
  default:
    if (isReduce(call->builtin))
      return checkReduce();
  }
}

void Sema::checkTileOp(CallExpr *call) { TileOpChecker(*this, call).run(); }

} // namespace tlc
