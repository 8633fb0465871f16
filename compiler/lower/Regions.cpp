// Region addressing shared by the tile operators' lowerings (compiler/ops/): how a region's
// elements map to buffer coordinates, element references and bounds predicates.
#include "lower/KernelLowering.h"
#include "lower/Naming.h"

namespace tlc::lower {

using ftg::Operand;

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
  t.mayBeNegative.assign(rank, false);
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
    if (!r.origins.empty() && r.origins[d]) {
      t.origin[d] = L.expr(r.origins[d]);
      t.mayBeNegative[d] = !L.provablyNonNegative(r.origins[d]);
    }
  if (dims.size() != t.extents.size()) {
    t.ok = false;
    return t;
  }
  for (size_t i = 0; i < dims.size(); ++i)
    t.tileDim[dims[i]] = int(i);
  return t;
}

std::string packedElementAt(KernelLowering &L, const ftg::Buffer &b, std::vector<std::string> idx) {
  std::string j = idx.back();
  idx.back() = "((" + j + ") >> 1)";
  std::string byte = elementAt(L, b, idx);
  if (*b.packed == DType::F4E2M1)
    return "tl::extract_fp4(" + byte + ", (" + j + ") & 1)";
  bool i4 = *b.packed == DType::I4;
  return std::string("static_cast<") + (i4 ? "int8_t" : "uint8_t") + ">(tl::extract_int4<" +
         (i4 ? "true" : "false") + ">(" + byte + ", (" + j + ") & 1))";
}

std::string elementAt(KernelLowering &L, const ftg::Buffer &b, const std::vector<std::string> &idx) {
  if (b.scope == Scope::Global)
    return bufferName(b) + "[" + L.globalOffset(b, idx) + "]";
  if (b.scope == Scope::Shared) {
    std::string row = "0";
    for (size_t d = 0; d + 1 < idx.size(); ++d)
      row = d == 0 ? idx[0] : "(" + row + ") * " + L.dimExpr(b, d) + " + " + idx[d];
    return L.sharedElement(b, row, idx.back());
  }
  std::string flat = "0";
  for (size_t d = 0; d < idx.size(); ++d)
    flat = d == 0 ? idx[0] : "(" + flat + ") * " + L.dimExpr(b, d) + " + " + idx[d];
  return bufferName(b) + "[" + flat + "]";
}

std::string elementOrZero(const ftg::Buffer &b, const std::string &ref, const std::string &valid,
                          const std::string &type) {
  const std::string convert = "tl::convert<" + type + ">(";
  if (valid.empty())
    return convert + ref + ")";
  if (b.scope == Scope::Global)
    return convert + "tl::load_or_zero(&" + ref + ", " + valid + "))";
  return "(" + valid + ") ? " + convert + ref + ") : " + convert + "0.0f)";
}

std::string inBounds(KernelLowering &L, const ftg::Buffer &b, const std::vector<std::string> &idx,
                     const TileDims &t) {
  if (b.scope != Scope::Global)
    return "";
  std::string p;
  for (size_t d = 0; d < idx.size(); ++d) {
    // Tile coordinates count from 0, so only an origin that may be negative needs the check.
    if (d < t.mayBeNegative.size() && t.mayBeNegative[d])
      p += (p.empty() ? "" : " && ") + std::string("(") + idx[d] + ") >= 0";
    p += (p.empty() ? "" : " && ") + std::string("(") + idx[d] + ") < " + L.dimExpr(b, d);
  }
  return p;
}

void KernelLowering::guarded(const std::string &cond, StmtPtr stmt) {
  if (cond.empty()) {
    add(std::move(stmt));
    return;
  }
  add(makeIf(cond, IfStyle::NextLine, /*uniform=*/false)).body.push_back(std::move(stmt));
}

void KernelLowering::ifAligned(llvm::ArrayRef<const ftg::Buffer *> tensors, const std::function<void()> &aligned,
                               const std::function<void()> &otherwise) {
  if (llvm::any_of(tensors, [&](const ftg::Buffer *t) { return llvm::is_contained(knownUnaligned, t); }))
    return otherwise();
  uint64_t mask = 0;
  bool bits = !tensors.empty();
  for (const ftg::Buffer *t : tensors) {
    size_t index = noteVectorTensor(t);
    if (index < kAlignedRowBits)
      mask |= uint64_t(1) << index;
    else
      bits = false;
  }
  // In the bulk variant, kAligned vouches only for the tensors its producer loads.
  bool vouched = !bulkPlan || llvm::all_of(tensors, [&](const ftg::Buffer *t) { return llvm::is_contained(bulkLoaded, t); });
  if (!vouched && !bits) {
    // Past the 64th tensor there is no bit: the scalar path, which every alignment allows.
    otherwise();
    return;
  }
  std::string cond = vouched ? "kAligned" : "";
  if (bits)
    cond += (cond.empty() ? "" : " || ") + alignedRowsTest(mask);
  Stmt &i = add(makeIf(cond));
  i.isConstexpr = !bits;
  i.variants = true;
  within(i.body, aligned);
  within(i.elseBody, otherwise);
  // A half of a register-staged copy (KernelLowering::RegisterStaging::elementsOnly) may have
  // nothing on one side: one branch, or nothing.
  if (i.body.empty() && i.elseBody.empty()) {
    cur->pop_back();
  } else if (i.body.empty()) {
    i.cond = "!(" + i.cond + ")";
    std::swap(i.body, i.elseBody);
  }
}

void KernelLowering::forEachChunk(int64_t chunks, bool unrollFully,
                                  const std::function<void(const std::string &c, const std::string &it)> &body,
                                  int partialUnroll) {
  const int64_t threads = g.threads;
  std::string c = fresh("c"), it;
  StmtPtr loop;
  if (chunks % threads == 0) {
    it = fresh("it");
    loop = makeFor(ForRole::Threads, it, "0", std::to_string(chunks / threads), "",
                   chunks / threads <= 8 || unrollFully ? 0 : partialUnroll);
  } else {
    loop = makeFor(ForRole::Threads, c, kThreadIndex, std::to_string(chunks), std::to_string(threads),
                   unrollFully ? 0 : partialUnroll);
  }
  nest(std::move(loop), [&] {
    if (!it.empty())
      add(makeLet("const int", c, kThreadIndex + " + " + it + " * " + std::to_string(threads), false));
    body(c, it);
  });
}

} // namespace tlc::lower
