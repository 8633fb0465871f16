// The rules of packed i4/u4 buffers (docs/language.md 4.1): two elements per byte along the
// innermost dimension, element 2c in the low nibble of byte c. The back end holds such a
// buffer as its bytes (ftg::Buffer::packed), so every region it moves must start and end on
// a byte: the innermost extent of each declaration and region, and each innermost origin,
// even. Tile operators other than copy and dequant_i4 (whose src may be i4) do not take them.
#include "frontend/Sema.h"

namespace tlc {

using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

std::string packingHint(DType t) {
  return dtypeName(t).str() + " elements are packed two per byte along the innermost dimension";
}

} // namespace

void Sema::checkPackedDecl(BufferLikeDecl *b) {
  if (!isPacked(b->elemType) || b->type.isError())
    return;
  std::string what = "'" + b->getName().str() + "' " + dtypeName(b->elemType).str() + b->shape.str();
  if (b->shape.rank() == 0) {
    diags.error(b->getRange(), what + " needs a dimension to pack its elements in").hint(packingHint(b->elemType));
    return;
  }
  const Expr *inner = b->shape.dims.back();
  if (inner->constant && inner->constant->isInt() && inner->constant->getInt() % 2 != 0)
    diags.error(inner->getRange(), "the innermost extent of " + what + " must be even, got " +
                                       std::to_string(inner->constant->getInt()))
        .hint(packingHint(b->elemType) + "; pad it to " +
              std::to_string(inner->constant->getInt() + 1));
}

bool Sema::checkPackedRegion(const Region &r, std::optional<int64_t> innerExtent, llvm::StringRef role) {
  if (!r.buffer || !isPacked(r.buffer->elemType) || r.extents.empty())
    return true;
  std::string name = "'" + r.buffer->getName().str() + "'";
  std::string dt = dtypeName(r.buffer->elemType).str();
  size_t last = r.extents.size() - 1;
  if (!r.originOnly && r.isPoint[last]) {
    diags.error(r.range, role.str() + " takes one " + dt + " element of " + name +
                             " along its innermost dimension: half a byte")
        .hint("copy an even number of columns, e.g. " + r.buffer->getName().str() + "[.., j:j + 2]");
    return false;
  }
  if (innerExtent && *innerExtent % 2 != 0) {
    diags.error(r.range, role.str() + " spans " + std::to_string(*innerExtent) + " " + dt +
                             " elements of " + name + " along its innermost dimension; it must be even")
        .hint(packingHint(r.buffer->elemType));
    return false;
  }
  const Expr *origin = r.origins[last];
  if (origin && !multipleOf(origin, 2)) {
    auto diag = diags.error(origin->getRange(), "the innermost origin of " + role.str() + " in " + dt +
                                                    " " + name + " must be even, but '" +
                                                    toSource(origin) + "' " +
                                                    (origin->constant ? "is odd" : "may be odd"));
    diag.hint(packingHint(r.buffer->elemType) + (origin->constant ? "" : "; write the origin as a multiple "
                                                                    "of 2, e.g. k * 64"));
    return false;
  }
  return true;
}

bool Sema::checkPackedOperands(CallExpr *call) {
  // copy checks its own operands (checkPackedRegion); dequant_i4's src may be i4 (its
  // checker says which dtypes each operand takes).
  if (call->builtin == Builtin::Copy || call->builtin == Builtin::DequantI4)
    return true;
  for (const CallArg &a : call->args) {
    const Expr *e = a.value;
    const NameExpr *base = dyn_cast<NameExpr>(e);
    if (auto *ix = dyn_cast<IndexExpr>(e))
      base = ix->base;
    auto *buf = base ? dyn_cast_or_null<BufferLikeDecl>(lookup(base->name)) : nullptr;
    if (!buf || !isPacked(buf->elemType) || (llvm::isa<TensorParamDecl>(buf) &&
                                              llvm::cast<TensorParamDecl>(buf)->isScalar()))
      continue;
    diags.error(e->getRange(), "not supported yet: " + dtypeName(buf->elemType).str() + " operands of " +
                                   builtinName(call->builtin).str() + " ('" + buf->getName().str() + "')")
        .hint("copy moves packed tiles and dequant_i4 unpacks them into f16/bf16");
    return false;
  }
  return true;
}

} // namespace tlc
