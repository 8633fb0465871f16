// The copy family: copy (global, shared and fragment tiles in any direction) and atomic_add
// (the same data movement with an atomic add at the destination). Cooperative copies use
// cp.async, 128-bit or scalar accesses with bounds predicates, threads striding over the
// tile; fragment copies are per thread, through the fragment's layout.
#include "ops/Arguments.h"
#include "ops/Lines.h"

#include "ir/TileOp.h"
#include "lower/KernelLowering.h"
#include "target/TargetInfo.h"

#include "llvm/ADT/StringExtras.h"

namespace tlc::ops {

using namespace lower;
using lower::Stmt; // the loop IR's, not the AST's
using ftg::Node;
using ftg::Operand;
using llvm::cast;

namespace {

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

// `body(vec)` where the rows of the global tensors among `operands` are 16-byte aligned and
// `body(1)` otherwise (KernelLowering::ifAligned); just `body(1)` when vec is 1. Both paths
// are compiled; the launcher decides per tensor (HostLauncher.cpp).
void alignedOrScalar(KernelLowering &L, int vec, std::initializer_list<const Operand *> operands,
                     const std::function<void(int)> &body) {
  if (vec <= 1)
    return body(1);
  llvm::SmallVector<const ftg::Buffer *, 2> tensors;
  for (const Operand *o : operands)
    if (o->buffer->scope == Scope::Global)
      tensors.push_back(o->buffer);
  L.ifAligned(tensors, [&] { body(vec); }, [&] { body(1); });
}

// A slice whose ends differ by a run-time amount (`Tab[k]:Tab[k + 1]`): the error says which
// slice and how to write a tile of a fixed size instead. False when there is none.
bool reportRunTimeExtent(KernelLowering &L, const Operand &o) {
  const auto *ix = llvm::dyn_cast_or_null<IndexExpr>(o.expr);
  if (!ix || o.region.originOnly)
    return false;
  for (size_t i = 0; i < ix->indices.size() && i < o.region.extents.size(); ++i) {
    const IndexItem &item = ix->indices[i];
    if (!item.isSlice || o.region.extents[i] || !item.hi)
      continue;
    std::string lo = item.lo ? toSource(item.lo) : "0";
    L.diags
        .error(item.range, "not supported yet: a tile of run-time size: slice " + std::to_string(i) +
                               " of '" + o.region.buffer->getName() + "' spans " +
                               toSource(item.hi) + " - " + lo + " elements")
        .hint("copy a tile of a compile-time size from the run-time origin (start:start + 64; "
              "elements past the end of '" + o.region.buffer->getName() +
              "' read as zeros) and mask what lies past the range with a parallel loop");
    L.ok = false;
    return true;
  }
  return false;
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
    if (reportRunTimeExtent(L, src) || reportRunTimeExtent(L, dst))
      return;
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
  // An atomic add's vectors are f32 vector reductions into global memory, where
  // AtomicAddOp::selectInstruction chose them (sm_90's red.global.add.v2/v4.f32).
  if (cols % vec != 0 || perThread)
    vec = 1;
  bool cpAsync = n.instr == ftg::CopyInstr::CpAsync16 && vec > 1;
  DType dt = dst.buffer->dtype;
  // The widest run a shared operand's layout keeps together (ir/TileLayout.h: vectorRun): a
  // vector access is split into runs of it on the shared side (8-byte units on gfx9's MFMA
  // operands; every other inferred layout keeps whole 16-byte accesses).
  auto runOf = [&](int v) {
    int64_t run = v;
    for (const Operand *o : {&src, &dst})
      if (o->buffer->scope == Scope::Shared && o->buffer->shared)
        run = std::min(run, o->buffer->shared->vectorRun(v));
    return int(run);
  };
  // A register-staged pipeline's producer (gfx9): one half of the copy, through this thread's
  // array. The load zero-fills out-of-bounds elements as cp.async does; the store writes the
  // whole chunk. Every loop unrolls fully, so that the array's indices are constants and it
  // stays in registers.
  // In a pipeline of cp.async groups (elementsOnly: a copy KernelLowering::stagedThroughRegisters
  // chose) only the element path is staged: the vector path is cp.async, issued by the load
  // half, and the store half has nothing of it.
  const std::vector<Access> none;

  auto body = [&](int v) {
    auto *staging = L.registerStaging && (!L.registerStaging->elementsOnly || v == 1) ? &*L.registerStaging : nullptr;
    if (!staging && L.registerStaging && L.registerStaging->half == KernelLowering::RegisterStaging::Store)
      return;
    int64_t chunks = total / v, threads = L.g.threads;
    if (staging)
      staging->elements = std::max(staging->elements, (chunks + threads - 1) / threads * v);
    // Access `c` (this thread's `it`-th where every thread takes as many).
    auto chunk = [&](const std::string &c, const std::string &it) {
      // This thread's `it`-th chunk is elements [it * v, it * v + v) of the staging array.
      std::string slot = (it.empty() ? "(" + c + " / " + std::to_string(threads) + ")" : it) + " * " + std::to_string(v);
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
      std::string ps = inBounds(L, *src.buffer, si, s), pd = inBounds(L, *dst.buffer, di, d);
      std::string srcRef = elementAt(L, *src.buffer, si), dstRef = elementAt(L, *dst.buffer, di);
      // Run `j` of the access (runOf(v) elements from column + j * run): its two elements.
      const int run = runOf(v);
      auto runRefs = [&](int j) {
        if (j == 0)
          return std::pair{srcRef, dstRef};
        std::vector<std::string> at = coords;
        at.back() = coords.back() + " + " + std::to_string(j * run);
        return std::pair{elementAt(L, *src.buffer, s.indices(at)), elementAt(L, *dst.buffer, d.indices(at))};
      };
      const std::string runBytes = std::to_string(run * bitWidth(dt) / 8);
      if (staging) {
        std::string regs = staging->array + "[" + slot + "]";
        if (staging->half == KernelLowering::RegisterStaging::Store) {
          for (int j = 0; j < v / run; ++j) {
            std::string part = staging->array + "[" + slot + (j ? " + " + std::to_string(j * run) : "") + "]";
            StmtPtr st = v > 1 ? makeEval("tl::store_vec<" + runBytes + ">(&" + runRefs(j).second + ", tl::load_vec<" +
                                          runBytes + ">(&" + part + "))")
                               : makeStore(dstRef, regs);
            L.guarded(pd, withAccess(std::move(st), none, writes));
          }
        } else if (v > 1) {
          std::string bytes = std::to_string(v * bitWidth(dt) / 8);
          std::string load = "tl::load_vec<" + bytes + ">(&" + srcRef + ")";
          if (!ps.empty())
            load = "(" + ps + ") ? " + load + " : tl::vec_bytes_t<" + bytes + ">{}";
          L.add(withAccess(makeEval("tl::store_vec<" + bytes + ">(&" + regs + ", " + load + ")"), reads, none));
        } else {
          L.add(withAccess(makeStore(regs, elementOrZero(*src.buffer, srcRef, ps, cppType(dt))), reads, none));
        }
      } else if (v > 1 && atomic) {
        // One vector reduction of the v elements, read from the source one by one (a shared
        // tile's run of them is contiguous: the compiler merges the reads).
        std::string values;
        for (int j = 0; j < v; ++j) {
          std::vector<std::string> at = coords;
          if (j)
            at.back() = coords.back() + " + " + std::to_string(j);
          values += std::string(j ? ", " : "") + elementAt(L, *src.buffer, s.indices(at));
        }
        StmtPtr add = atomicAddOf(dstRef, values);
        add->count = v;
        L.guarded(pd, withAccess(std::move(add), reads, writes));
      } else if (v > 1 && cpAsync) {
        L.add(makeLet("const bool", "tl_valid", ps.empty() ? std::string("true") : ps, false));
        Stmt &cp = KernelLowering::accessing(L.add(std::make_unique<Stmt>(StmtKind::AsyncCopy)), reads, writes);
        cp.bytes = 16;
        cp.dst = "&" + dstRef;
        cp.src = "&" + srcRef;
        cp.srcBase = bufferName(*src.buffer);
        cp.valid = "tl_valid";
      } else if (v > 1) {
        // Run by run (an 8-byte swizzle stores 16-byte chunks as two runs). A chunk whose source
        // lies outside the tensor stores zeros, as the scalar path and cp.async's zero fill
        // do: the tile's padding, not what the buffer held before (a stale K tail of the
        // previous stage in a gemm).
        for (int j = 0; j < v / run; ++j) {
          auto [from, to] = runRefs(j);
          StmtPtr copy = withAccess(vectorCopy(run * bitWidth(dt) / 8, "&" + to, "&" + from), reads, writes);
          if (ps.empty()) {
            L.guarded(pd, std::move(copy));
            continue;
          }
          StmtPtr zero = withAccess(
              makeEval("tl::store_vec<" + runBytes + ">(&" + to + ", tl::vec_bytes_t<" + runBytes + ">{})"), {}, writes);
          StmtPtr pick = makeIf(pd.empty() ? ps : ps + " && " + pd, IfStyle::Braced, /*uniform=*/false);
          pick->body.push_back(std::move(copy));
          if (pd.empty()) {
            pick->elseBody.push_back(std::move(zero));
          } else {
            StmtPtr inDst = makeIf(pd, IfStyle::Braced, /*uniform=*/false);
            inDst->body.push_back(std::move(zero));
            pick->elseIf = true;
            pick->elseBody.push_back(std::move(inDst));
          }
          L.add(std::move(pick));
        }
      } else {
        std::string value = elementOrZero(*src.buffer, srcRef, ps, cppType(dt));
        L.guarded(pd, withAccess(atomic ? atomicAddOf(dstRef, value) : makeStore(dstRef, value), reads, writes));
      }
    };
    if (perThread) {
      std::string c = L.fresh("c");
      L.nest(makeFor(ForRole::Registers, c, "0", std::to_string(total), "", 4), [&] { chunk(c, ""); });
    } else {
      // The register-staged halves unroll fully; elsewhere long scalar paths unroll partially
      // (full unrolling would spill registers): by 8 where elements come from global memory,
      // so that 8 loads per thread are in flight, and fully (up to 64 per thread) where each
      // step of the loop is one row of the tile per thread (its columns at least the block's
      // threads), which ptxas turns into loads a row stride apart. Measured on the H100 (GPU
      // runs 67-68), GEMM at 4096x4095x4096 with B's rows unaligned: 59 TFLOP/s by 4, 95 by 8,
      // 204 with this rule (the H100 tiles: 65 by 8, 133); unrolling every element loop fully
      // instead was slower where A's 32-column tiles were the unaligned ones (15 against 23
      // TFLOP/s at 1000x1024x1001, 82 against 100 at 4096x4096x4095).
      const bool elementLoads = v == 1 && src.buffer->scope == Scope::Global;
      const bool rowSteps = elementLoads && cols >= threads && chunks % threads == 0 && chunks / threads <= 64;
      L.forEachChunk(chunks, staging != nullptr || rowSteps, chunk, elementLoads ? 8 : 4);
    }
  };

  alignedOrScalar(L, vec, {&src, &dst}, body);
}

// Whether a copy moves a fragment into a fragment of another layout (through the scratch).
bool convertsLayout(const Node &n) {
  if (n.inputs.empty() || n.outputs.empty())
    return false;
  const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
  return src.scope == Scope::Fragment && dst.scope == Scope::Fragment && src.fragment && dst.fragment &&
         *src.fragment != *dst.fragment;
}

// Registers `regs` (of layout `to`, element type `type`) set from fragment `src` through shared
// memory: each thread writes its registers of `src` to the scratch area at their elements'
// row-major indices, and after a barrier reads its registers of `to` from there. The scratch
// holds the tile in `src`'s element type. A source of partial sums (a gemm whose warp groups
// split K) leaves one copy of the tile per group, and each register of `to` is their sum, added
// in group order. `written` is the access of `regs` (none for a local array). False after
// reporting a tile it cannot move.
bool throughScratch(KernelLowering &L, const Node &n, const ftg::Buffer &src, const FragmentLayout &to,
                    const std::string &regs, DType type, std::vector<Access> written) {
  std::vector<int64_t> tile;
  for (const std::optional<int64_t> &e : src.shape)
    tile.push_back(e.value_or(0));
  if (tile.empty() || tile.size() > 2 || llvm::is_contained(tile, 0)) {
    L.unsupported(n.call->getRange(), "a copy between fragments of different shapes or layouts");
    return false;
  }
  const std::string T = cppType(src.dtype), slots = L.fresh("slots");
  const int partials = src.fragment->partials;
  const int64_t elements = tile.size() == 1 ? tile[0] : tile[0] * tile[1];
  L.add(makeComment(partials > 1 ? "the partial sums of " + std::to_string(partials) +
                                       " warp groups, added through shared memory (the scratch area), in " + T
                                 : "the layouts differ: through shared memory (the scratch area), in " + T));
  L.add(makeBarrier("the scratch area may still be read"));
  L.add(makeLet(T + "* const", slots, "reinterpret_cast<" + T + "*>(tl_reduce_scratch)", false));
  auto registers = [&](const FragmentLayout &f, bool source,
                       const std::function<StmtPtr(const std::string &, const std::string &)> &leaf) {
    std::string r = L.fresh("r");
    L.nest(makeFor(ForRole::Registers, r, "0", std::to_string(f.registers()), "", 0), [&] {
      std::string at = L.fresh("s");
      std::string index = scratchIndex(f, tile, r);
      if (source && partials > 1)
        index = "(" + f.replicaOf(kThreadIndex, r) + ") * " + std::to_string(elements) + " + " + index;
      L.add(makeLet("const int", at, index, false));
      L.add(leaf(r, at));
    });
  };
  registers(*src.fragment, true, [&](const std::string &r, const std::string &at) {
    return withAccess(makeStore(slots + "[" + at + "]", bufferName(src) + "[" + r + "]"), {L.access(&src)}, {});
  });
  L.add(makeBarrier("the tile is in the scratch"));
  registers(to, false, [&](const std::string &r, const std::string &at) {
    std::string value = slots + "[" + at + "]";
    for (int p = 1; p < partials; ++p)
      value += " + " + slots + "[" + std::to_string(p * elements) + " + " + at + "]";
    return withAccess(makeStore(regs + "[" + r + "]", "tl::convert<" + cppType(type) + ">(" + value + ")"), {},
                      written);
  });
  L.add(makeBarrier("the scratch area may be reused"));
  return true;
}

// A copy between fragments of different layouts (a gemm's accumulator into another gemm's
// register operand under another warp policy, say), or out of partial sums into a fragment.
void convertingCopy(KernelLowering &L, const Node &n, const ftg::Buffer &src, const ftg::Buffer &dst) {
  if (src.shape != dst.shape) {
    L.unsupported(n.call->getRange(), "a copy between fragments of different shapes or layouts");
    return;
  }
  throughScratch(L, n, src, *dst.fragment, bufferName(dst), dst.dtype, {L.access(&dst)});
}

void fragmentCopy(KernelLowering &L, const Node &n, const Operand &src, const Operand &dst, bool atomic) {
  bool fromFragment = src.buffer->scope == Scope::Fragment;
  const ftg::Buffer &frag = fromFragment ? *src.buffer : *dst.buffer;
  const Operand &other = fromFragment ? dst : src;
  const FragmentLayout &F = *frag.fragment;
  std::string r = L.fresh("r");
  // The registers the copy reads or writes: the fragment's own, or, out of partial sums into
  // memory, a local array holding their sums (in the same placement: F.summed()).
  std::string fragName = bufferName(frag);
  if (fromFragment && F.partials > 1 && other.buffer->scope != Scope::Fragment) {
    fragName = L.fresh("sums");
    Stmt &sums = L.add(std::make_unique<Stmt>(StmtKind::Decl));
    sums.type = cppType(frag.dtype);
    sums.name = fragName;
    sums.count = F.registers();
    if (!throughScratch(L, n, frag, F.summed(), fragName, frag.dtype, {}))
      return;
  }
  if (other.buffer->scope == Scope::Fragment) {
    if (!other.buffer->fragment) {
      L.unsupported(n.call->getRange(), "a copy into a fragment without an inferred layout");
      return;
    }
    if (*other.buffer->fragment != F)
      return convertingCopy(L, n, *src.buffer, *dst.buffer);
    // 8-bit registers (packed weights) move as 32-bit words: element by element each byte
    // would take a register of its own.
    if (bitWidth(src.buffer->dtype) == 8 && src.buffer->dtype == dst.buffer->dtype && F.registers() % 4 == 0) {
      for (const ftg::Buffer *b : {src.buffer, dst.buffer})
        L.bufferOf[b]->align = std::max(L.bufferOf[b]->align, 4);
      L.add(withAccess(makeEval("tl::copy_regs<" + std::to_string(F.registers()) + ">(" + bufferName(*dst.buffer) +
                                ", " + bufferName(*src.buffer) + ")"),
                       {L.access(src.buffer)}, {L.access(dst.buffer)}));
      return;
    }
    L.add(compactFor(r, F.registers(),
                     withAccess(makeStore(bufferName(*dst.buffer) + "[" + r + "]",
                                          "tl::convert<" + cppType(dst.buffer->dtype) + ">(" +
                                              bufferName(*src.buffer) + "[" + r + "])"),
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
  // The vector runs along the fragment's last dimension, which is then the tile's last (unit
  // dimensions are dropped from the tile: a [1, N] row fragment is an N-element tile); it must
  // be the other side's contiguous (last) dimension too.
  int V = F.kind == FragmentLayout::Blocked ? F.vec : F.kind == FragmentLayout::MmaC ? 2 : 1;
  int elemBytes = std::max(1, int(bitWidth(other.buffer->dtype) / 8));
  bool lastDimAlong = !o.extents.empty() && frag.shape.back() != std::optional<int64_t>(1) &&
                      o.tileDim.back() == int(o.extents.size()) - 1;
  bool vectorizable = other.buffer->scope == Scope::Global && !atomic && V > 1 && lastDimAlong &&
                      V * elemBytes <= 16 &&
                      multipleOf(other.region.origins.empty() ? nullptr : other.region.origins.back(), V);
  // A shared tile's V consecutive columns lie in one 16-byte chunk, contiguous and aligned in
  // every inferred shared layout when its rows (or panels) are whole multiples of V (swizzles
  // permute whole chunks; an annotated layout says whether it keeps them, keepsVectors): one
  // access on every path, no kAligned instantiation needed. What an
  // accumulator staged for a bulk store (infer/StoreStaging) is written with.
  const ftg::Buffer &ob = *other.buffer;
  bool sharedVector = ob.scope == Scope::Shared && ob.shared && !atomic && V > 1 && lastDimAlong &&
                      16 % (V * elemBytes) == 0 &&
                      (ob.shared->isPanelled() ? ob.shared->panelCols : ob.shared->cols) % V == 0 &&
                      ob.shared->keepsVectors(V) &&
                      multipleOf(other.region.origins.empty() ? nullptr : other.region.origins.back(), V);
  // Atomic adds of V consecutive f32 columns (an accumulator's pairs, a blocked vector) as one
  // vector reduction where the target has them (sm_90: red.global.add.v2/v4.f32, each element
  // still added atomically): FlashAttention's dQ accumulation issues half the instructions.
  // In the instantiation whose rows are aligned, so a vector never straddles the tensor's end.
  int atomicVec = 1;
  if (atomic && fromFragment && other.buffer->scope == Scope::Global && other.buffer->dtype == DType::F32 &&
      F.partials == 1 && lastDimAlong)
    for (int w = std::min(V, L.g.target->atomicVectorBytes() / 4); w > 1; w /= 2)
      if (V % w == 0 && (w == 2 || w == 4) &&
          multipleOf(other.region.origins.empty() ? nullptr : other.region.origins.back(), w)) {
        atomicVec = w;
        break;
      }
  // `pred` and, where the fragment holds an element in several threads (a reduction's row,
  // partial sums), that register r's thread is the one that writes it.
  auto onceGuarded = [&](std::string pred) {
    std::string once = F.replicaGuard(kThreadIndex, r);
    return once.empty() ? pred : pred.empty() ? once : "(" + once + ") && " + pred;
  };
  auto body = [&](int v) {
    L.nest(makeFor(ForRole::Registers, r, "0", std::to_string(F.registers()), v > 1 ? std::to_string(v) : "", 0), [&] {
      // Register r's element, one coordinate per dimension of the tile: the fragment's unit
      // dimensions are not in it (a [64, 1] column's coordinate is its row).
      std::vector<std::string> coords;
      if (frag.shape.size() == 2) {
        if (frag.shape[0] != std::optional<int64_t>(1))
          coords.push_back(F.rowOf(kThreadIndex, r));
        if (frag.shape[1] != std::optional<int64_t>(1))
          coords.push_back(F.colOf(kThreadIndex, r));
      } else {
        coords = {F.kind == FragmentLayout::Row ? F.rowOf(kThreadIndex, r) : F.colOf(kThreadIndex, r)};
      }
      for (size_t i = 0; i < coords.size(); ++i) {
        // A constant coordinate (a one-row fragment's) is used as it is: a let of it may go
        // unused (nvcc's warning 177 on a GEMV's `y[bx]`).
        if (llvm::all_of(coords[i], llvm::isDigit))
          continue;
        L.add(makeLet("const int", generatedName("t" + std::to_string(i)), coords[i], false));
        coords[i] = generatedName("t" + std::to_string(i));
      }
      auto idx = o.indices(coords);
      std::string pred = inBounds(L, *other.buffer, idx, o);
      std::string ref = elementAt(L, *other.buffer, idx);
      std::string TO = cppType(other.buffer->dtype), TF = cppType(frag.dtype);
      if (v > 1 && TO == TF && bitWidth(frag.dtype) == 8) {
        // 8-bit elements of the same type on both sides (packed weights): straight between the
        // registers and memory, which keeps them in whole 32-bit registers; through tl_tmp
        // each byte took a register of its own, and packing them again a PRMT each. The
        // fragment is 16-byte aligned, so register r of a vector (r a multiple of v) is
        // aligned for its v elements.
        int bytes = v * elemBytes;
        L.bufferOf[&frag]->align = std::max(L.bufferOf[&frag]->align, 16);
        std::string reg = "&" + fragName + "[" + r + "]";
        if (fromFragment) {
          L.guarded(pred, leaf(vectorCopy(bytes, "&" + ref, reg), ReadFrag | WriteOther));
        } else if (pred.empty()) {
          L.add(leaf(vectorCopy(bytes, reg, "&" + ref), ReadOther | WriteFrag));
        } else {
          // Out of bounds: zeros, stored as one vector too.
          Stmt &i = L.add(makeIf(pred, IfStyle::SameLine, false));
          i.body.push_back(leaf(vectorCopy(bytes, reg, "&" + ref), ReadOther | WriteFrag));
          i.elseBody.push_back(leaf(makeEval("tl::store_vec<" + std::to_string(bytes) + ">(" + reg +
                                             ", tl::vec_bytes_t<" + std::to_string(bytes) + ">{})"),
                                    WriteFrag));
        }
      } else if (v > 1 && atomic) {
        std::string values;
        for (int i = 0; i < v; ++i)
          values += std::string(i ? ", " : "") + "tl::convert<float>(" + fragName + "[" + r + " + " +
                    std::to_string(i) + "])";
        StmtPtr add = atomicAddOf(ref, values);
        add->count = v;
        L.guarded(onceGuarded(pred), leaf(std::move(add), ReadFrag | WriteOther));
      } else if (v > 1) {
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
        // (Sums of partial sums: every group holds them; the first group stores them.)
        if (atomic || F.partials > 1)
          pred = onceGuarded(pred);
        L.guarded(pred, leaf(atomic ? atomicAddOf(ref, value) : makeStore(ref, value), ReadFrag | WriteOther));
      } else {
        L.add(leaf(makeStore(fragName + "[" + r + "]", elementOrZero(*other.buffer, ref, pred, TF)),
                   ReadOther | WriteFrag));
      }
    });
  };
  if (sharedVector)
    return body(V);
  alignedOrScalar(L, vectorizable ? V : atomicVec, {&other}, body);
}


void lowerCopy(KernelLowering &L, const Node &n, bool prefetch) {
  const Operand &src = n.inputs[0], &dst = n.outputs[0];
  L.tileOp(n, [&] {
    const bool stores = L.registerStaging && L.registerStaging->half == KernelLowering::RegisterStaging::Store;
    if (prefetch)
      L.add(makeComment(std::string(stores ? "prefetch, from registers: " : "prefetch: ") +
                        toSource(n.call->args[0].value) + " -> " + dst.buffer->name));
    auto ordinary = [&] {
      L.scope([&] {
        if (src.buffer->scope == Scope::Fragment || dst.buffer->scope == Scope::Fragment)
          return fragmentCopy(L, n, src, dst, false);
        cooperativeCopy(L, n, src, dst, false);
        // A prefetch's group is waited for by the pipeline (PipelineExpansion.cpp).
        if (n.instr == ftg::CopyInstr::CpAsync16 && !prefetch) {
          L.add(std::make_unique<Stmt>(StmtKind::AsyncCommit));
          L.add(std::make_unique<Stmt>(StmtKind::AsyncWait)).count = 0;
        }
      });
    };
    if (!prefetch && L.bulkStorable(n))
      return L.lowerBulkStore(n, ordinary);
    ordinary();
  });
}

void lowerAtomicAdd(KernelLowering &L, const Node &n) {
  const Operand &dst = n.outputs[0];
  if (!L.checkAtomicType(n.call->getRange(), dst.buffer->dtype))
    return;
  L.tileOp(n, [&] {
    if (n.inputs.empty()) {
      // The scalar form runs once per block.
      auto pos = n.call->positional();
      const Expr *dstExpr = n.call->keywordArg("dst") ? n.call->keywordArg("dst")->value : pos[0];
      const Expr *val = n.call->keywordArg("src") ? n.call->keywordArg("src")->value : pos[1];
      std::vector<std::string> idx;
      std::string value;
      auto reads = L.readsOf([&] {
        for (const IndexItem &i : cast<IndexExpr>(dstExpr)->indices)
          idx.push_back(L.expr(i.lo));
        value = L.exprAs(val, dst.buffer->dtype);
      });
      Stmt &once = L.add(makeIf(kThreadIndex + " == 0", IfStyle::SameLine, false));
      once.body.push_back(withAccess(atomicAddOf(elementAt(L, *dst.buffer, idx), value), reads, {L.access(dst.buffer)}));
      return;
    }
    auto ordinary = [&] {
      L.scope([&] {
        if (n.inputs[0].buffer->scope == Scope::Fragment)
          fragmentCopy(L, n, n.inputs[0], dst, true);
        else
          cooperativeCopy(L, n, n.inputs[0], dst, true);
      });
    };
    // From a shared tile on sm_90a: one bulk tensor reduction per panel, issued by one thread
    // (FlashAttention-3's dQ), where the tensor's rows are aligned.
    if (L.bulkReducible(n))
      return L.lowerBulkStore(n, ordinary);
    ordinary();
  });
}


class CopyOp : public ftg::TileOp {
public:
  ftg::NodeKind kind() const override { return ftg::NodeKind::Copy; }
  bool buildsFrom(Builtin b) const override { return b == Builtin::Copy; }

  void build(Node &n, const CallExpr &c, ftg::NodeBuilder &b) const override {
    if (auto src = b.operand(argument(c, 0, "src")))
      n.inputs.push_back(*src);
    if (auto dst = b.operand(argument(c, 1, "dst")))
      n.outputs.push_back(*dst);
  }

  void inferLayout(Node &n, ftg::InferLevel level, ftg::LayoutRules &rules) const override {
    // A copy between two fragments of one shape gives them one layout, unless stricter rules
    // gave each its own (then the copy converts through shared memory: convertingCopy).
    if (level != ftg::InferLevel::Common || n.inputs.empty() || n.outputs.empty())
      return;
    ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
    if (src.fragment && dst.fragment)
      return;
    // Partial sums (a gemm whose warp groups split K): the copy adds them, and the destination
    // holds the sums in the same placement, each group a whole copy.
    if (src.fragment && src.fragment->partials > 1 && dst.scope == Scope::Fragment && src.shape == dst.shape) {
      rules.assign(dst, src.fragment->summed(), "copied from the partial sums of '" + src.name + "', added",
                   n.call->getRange());
      return;
    }
    rules.shareLayout(n, "copied from", "copied to");
  }

  int64_t scratchBytes(const Node &n, const ftg::Graph &) const override {
    if (n.inputs.empty())
      return 0;
    const ftg::Buffer &src = *n.inputs[0].buffer;
    // Through the scratch: a change of layout, or partial sums added (into memory too).
    bool addsPartials = src.fragment && src.fragment->partials > 1;
    if (!convertsLayout(n) && !addsPartials)
      return 0;
    return src.numElements() * std::max<int64_t>(1, int64_t(bitWidth(src.dtype)) / 8) * src.fragment->partials;
  }

  void selectInstruction(Node &n, const ftg::Graph &g) const override {
    if (n.inputs.empty() || n.outputs.empty())
      return;
    Scope from = n.inputs[0].buffer->scope, to = n.outputs[0].buffer->scope;
    int bits = int(bitWidth(n.outputs[0].buffer->dtype));
    if (from == Scope::Fragment || to == Scope::Fragment) {
      n.instr = ftg::CopyInstr::Fragment;
      const ftg::Buffer *f = from == Scope::Fragment ? n.inputs[0].buffer : n.outputs[0].buffer;
      n.copyVector = f->fragment ? (f->fragment->kind == FragmentLayout::Blocked ? f->fragment->vec
                                    : f->fragment->kind == FragmentLayout::MmaC ? 2 : 1)
                                 : 1;
    } else if (((from == Scope::Global && to == Scope::Shared) ||
                (from == Scope::Shared && to == Scope::Global)) &&
               n.inputs[0].buffer->dtype == n.outputs[0].buffer->dtype && bits >= 8) {
      // The target's widest accesses (16 bytes) where the shared tile's rows are whole
      // chunks of them: cp.async into shared memory, vector loads and stores out of it. The
      // launcher falls back to the scalar instantiation when a tensor's rows are not aligned.
      const ftg::Buffer *tile = to == Scope::Shared ? n.outputs[0].buffer : n.inputs[0].buffer;
      int64_t cols = tile->shared ? tile->shared->cols : 0;
      int perAccess = g.target->maxVectorBytes() * 8 / bits;
      // An annotated layout may scatter a chunk's elements: then element by element. An
      // inferred one keeps runs of its swizzle's unit (8 bytes on gfx9's MFMA operands), into
      // which cooperativeCopy splits the shared side of each access.
      bool whole = cols % perAccess == 0 && tile->shared &&
                   (tile->shared->keepsVectors(perAccess) || !tile->shared->isAnnotated());
      n.copyVector = whole ? perAccess : 1;
      // cp.async where the target has it; elsewhere (gfx9) 16-byte loads into registers and
      // stores into shared memory.
      bool async = to == Scope::Shared && g.target->copyAtom(target::CopyKind::CpAsync);
      n.instr = !whole ? ftg::CopyInstr::Scalar : async ? ftg::CopyInstr::CpAsync16 : ftg::CopyInstr::Vector;
    } else {
      n.instr = ftg::CopyInstr::Scalar;
      n.copyVector = 1;
    }
  }

  std::string describe(const Node &n) const override {
    // The first half of an atomic_add(dst, src) staged through shared memory
    // (infer/StoreStaging): src into the tile.
    if (n.call->builtin == Builtin::AtomicAdd)
      return "copy: " + toSource(n.call->args[1].value) + " -> the shared tile " + bufferName(*n.outputs[0].buffer) +
             " (the staging of atomic_add)";
    std::string what = "copy: " + toSource(n.call->args[0].value) + " -> " + toSource(n.call->args[1].value);
    if (n.staged)
      what += n.outputs[0].buffer->scope == Scope::Shared ? ", into the shared tile " + bufferName(*n.outputs[0].buffer)
                                                          : ", out of the shared tile " + bufferName(*n.inputs[0].buffer);
    return what;
  }
  void lower(const Node &n, KernelLowering &L) const override { lowerCopy(L, n, false); }
  void lowerPrefetch(const Node &n, KernelLowering &L) const override { lowerCopy(L, n, true); }

  // Copies from global into shared memory of 16- or 32-bit elements, as registersFor packs
  // them (ptxas pairs halves: the generic GEMM's 64 staged halves per thread took 49 more
  // registers). 8-bit tiles stay as they are: each byte takes a register of its own, and staged
  // they made the fp8 GEMMs spill (128-916 bytes). The element loop's coordinates must be
  // shifts and masks of constants (the block's threads a multiple of the tile's width or the
  // other way round): widths of 48, 80 or 112 divide per element, and their staged loads
  // spilled (96-1816 bytes) where the register estimate saw room.
  bool stagesElementsThroughRegisters(const Node &c, const ftg::Graph &g) const override {
    if (c.inputs.empty() || c.outputs.empty() || c.inputs[0].buffer->scope != Scope::Global ||
        c.outputs[0].buffer->scope != Scope::Shared)
      return false;
    const ftg::Buffer &tile = *c.outputs[0].buffer;
    const int64_t width = tile.shape.empty() ? 1 : tile.shape.back().value_or(1);
    return bitWidth(tile.dtype) >= 16 && width > 0 && (g.threads % width == 0 || width % g.threads == 0);
  }
};

class AtomicAddOp : public ftg::TileOp {
public:
  ftg::NodeKind kind() const override { return ftg::NodeKind::AtomicAdd; }
  bool buildsFrom(Builtin b) const override { return b == Builtin::AtomicAdd; }

  void build(Node &n, const CallExpr &c, ftg::NodeBuilder &b) const override {
    if (auto dst = b.operand(argument(c, 0, "dst")))
      n.outputs.push_back(*dst);
    // The tile form adds a region; the scalar form (src a scalar expression) has no input.
    if (const Expr *src = argument(c, 1, "src"); src && src->type.kind() == Type::Buffer)
      if (auto in = b.operand(src))
        n.inputs.push_back(*in);
  }

  // From a shared f32 tile into an f32 tensor where the target adds vectors (sm_90): 16 bytes
  // per reduction when the tile's rows are whole chunks of them and its layout keeps them.
  void selectInstruction(Node &n, const ftg::Graph &g) const override {
    n.copyVector = 1;
    if (n.inputs.empty() || n.outputs.empty())
      return;
    const ftg::Buffer &src = *n.inputs[0].buffer, &dst = *n.outputs[0].buffer;
    int vec = g.target->atomicVectorBytes() / 4;
    if (src.scope != Scope::Shared || dst.scope != Scope::Global || src.dtype != DType::F32 ||
        dst.dtype != DType::F32 || vec < 2 || !src.shared)
      return;
    vec = std::min(vec, 4);
    if (src.shared->cols % vec == 0 && src.shared->keepsVectors(vec))
      n.copyVector = vec;
  }

  std::string describe(const Node &) const override { return "atomic_add"; }
  void lower(const Node &n, KernelLowering &L) const override { lowerAtomicAdd(L, n); }
};

const CopyOp copyOp;
const AtomicAddOp atomicAddOp;
const bool registered = ftg::registerTileOp(copyOp) && ftg::registerTileOp(atomicAddOp);

} // namespace

} // namespace tlc::ops
