// im2col(X, A_s, pixel = m0, channel = c0, r = r, s = s, kh = .., kw = .., stride = .., pad = ..):
// the A tile of a convolution as an implicit GEMM (samples/conv2d.tl). X is an NHWC tensor
// [N, H, W, C]; output pixel m = (n, p, q) of the N x P x Q output images (P = (H + 2 pad - kh)
// / stride + 1, Q likewise from W and kw) reads, for filter tap (r, s), the input pixel
// (n, p * stride - pad + r, q * stride - pad + s). Row i of the [rows, cols] tile A_s receives
// channels c0 .. c0 + cols - 1 of that pixel for output pixel m0 + i:
//
//   A_s[i, j] = X[n, p * stride - pad + r, q * stride - pad + s, c0 + j]     (m0 + i = (n, p, q))
//
// and zero where the pixel lies in the padding, c0 + j >= C, or m0 + i is past the N * P * Q
// output pixels.
//
// Why an operator rather than the parallel loop it replaces: Hopper's tensor copy has an im2col
// mode that computes exactly these addresses (PTX ISA "Tensor copy: im2col mode"), so the
// warp-specialized pipeline's producer issues one bulk copy per wgmma panel instead of the
// consumers gathering 16 bytes at a time through tables of pixel coordinates. Lowerings:
//  - the warp-specialized variant (sm_90a, kAligned): `cp.async.bulk.tensor.4d...im2col` per
//    panel onto the stage's mbarrier, from a tensor map the launcher encodes
//    (cuTensorMapEncodeIm2col, runtime/tlc/tma.h): channelsPerPixel = the panel's columns,
//    pixelsPerColumn = the tile's rows, the anchors' box [-pad, extent - 1 + pad - k + 1] in H
//    and W (every position of the filter's top-left corner that yields an output pixel),
//    elementStrides = stride; the copy's anchor is the first output pixel's top-left input
//    pixel and its offsets the tap. Where the map cannot describe X (C * elem_bytes not a
//    multiple of 16, an unaligned base) the launcher runs the ordinary instantiation.
//  - cp.async targets: threads stride over the tile in 16-byte accesses along the channels,
//    each decomposing its output pixel and issuing a cp.async zero-filled outside the image
//    (the aligned instantiation: C a multiple of 16 bytes, c0 provably a multiple of 8); the
//    other instantiation, and targets without cp.async (gfx9), copy element by element.
// A pipelined loop prefetches it like a copy (infer/PipelinePlanner.cpp).
//
// The folded form, im2col(X, A_s, pixel = m0, column = k0, ...): the tile's columns run over the
// taps and the channels together, as the rows of the [F, kh * kw * C] weight matrix do, so that
// a convolution over few channels fills its K steps (C = 3: a 3x3 filter's 27 columns in one
// step instead of nine mostly empty ones):
//
//   A_s[i, j] = X[n, p * stride - pad + r, q * stride - pad + s, c]   where k0 + j = (r * kw + s) * C + c
//
// and zero for columns outside [0, kh * kw * C). No bulk form (a tensor copy's box is one tap's
// channels). Aligned instantiation: 8 columns of one tap per cp.async (C a multiple of 8), each
// placed by a tl::TapCursor; otherwise whole runs of columns per thread (foldedRuns).
#include "ops/Arguments.h"

#include "frontend/Sema.h"
#include "ir/TileOp.h"
#include "lower/KernelLowering.h"
#include "target/TargetInfo.h"

namespace tlc::ops {

using namespace lower;
using lower::Stmt; // the loop IR's, not the AST's
using ftg::Node;

namespace {

// The ranges of a 4-d im2col tensor map (cuTensorMapEncodeIm2col): its corners are 8-bit
// signed, its element strides at most 8, a copy at most 1024 pixels.
constexpr int64_t kCornerMin = -128, kCornerMax = 127, kMaxStride = 8, kMaxPixels = 1024;

// `a * stride` for a constant stride, as C++.
std::string times(const std::string &a, int64_t stride) {
  return stride == 1 ? a : a + " * " + std::to_string(stride);
}

// `a + b` for a constant b, as C++.
std::string plus(const std::string &a, int64_t b) {
  return b == 0 ? a : b > 0 ? a + " + " + std::to_string(b) : a + " - " + std::to_string(-b);
}

// The lets every lowering starts with: the call's positions, the output images' size and the
// divisors that split an output pixel into (n, p, q) (at least 1, so that a kernel launched on
// an empty output never divides by zero).
struct Positions {
  std::string first, channel, r, s; // m0, c0, the tap; folded: `channel` is the column k0
  std::string columns;              // folded: kh * kw * C, the implicit GEMM's K
  std::string pixels;               // N * P * Q
  std::string perImage, perRow;     // max(P * Q, 1), max(Q, 1)
  std::vector<Access> reads;        // what the positions read
};

Positions positions(const Node &n, KernelLowering &L) {
  const Node::Im2colArgs &a = *n.im2col;
  const ftg::Buffer &X = *n.inputs[0].buffer;
  Positions p;
  std::string first, channel, r, s;
  p.reads = L.readsOf([&] {
    first = L.expr(a.pixel);
    channel = L.expr(a.column ? a.column : a.channel);
    if (!a.column) {
      r = L.expr(a.r);
      s = L.expr(a.s);
    }
  });
  auto let = [&](const std::string &stem, const std::string &value, const std::string &type = "const int") {
    std::string name = L.fresh(stem);
    L.accessing(L.add(makeLet(type, name, value)), p.reads, {});
    return name;
  };
  p.first = let("pixel", first);
  p.channel = let(a.column ? "column" : "channel", channel);
  if (a.column) {
    p.columns = let("columns", "int64_t(" + std::to_string(a.kh * a.kw) + ") * " + L.dimExpr(X, 3), "const int64_t");
  } else {
    p.r = let("tapR", r);
    p.s = let("tapS", s);
  }
  auto outExtent = [&](size_t d, int64_t k) {
    return "tl::floordiv(" + plus(L.dimExpr(X, d), 2 * a.pad - k) + ", " + std::to_string(a.stride) + ") + 1";
  };
  std::string P = let("outRows", outExtent(1, a.kh)), Q = let("outCols", outExtent(2, a.kw));
  p.pixels = let("pixels", P + " > 0 && " + Q + " > 0 ? " + L.dimExpr(X, 0) + " * " + P + " * " + Q + " : 0");
  p.perImage = let("perImage", P + " > 0 && " + Q + " > 0 ? " + P + " * " + Q + " : 1");
  p.perRow = let("perRow", Q + " > 0 ? " + Q + " : 1");
  return p;
}

std::string describeIm2col(const Node &n) {
  const Node::Im2colArgs &a = *n.im2col;
  std::string where = a.column ? "columns " + toSource(a.column) + ".. over taps and channels"
                               : "tap (" + toSource(a.r) + ", " + toSource(a.s) + "), channels " +
                                     toSource(a.channel) + "..";
  return "im2col: " + n.inputs[0].buffer->name + " -> " + n.outputs[0].buffer->name + ", pixels " +
         toSource(a.pixel) + ".., " + where + " of a " + std::to_string(a.kh) + "x" + std::to_string(a.kw) +
         " filter, stride " + std::to_string(a.stride) + ", pad " + std::to_string(a.pad);
}

// Unsigned comparisons: one test for 0 <= v < extent.
std::string inside(const std::string &v, const std::string &extent) {
  return "unsigned(" + v + ") < unsigned(" + extent + ")";
}

// An output pixel's lets: its image and the input pixel that tap (r, s) reads (empty r and s:
// the filter's top-left tap), (img, h, w), and whether it is one of the N * P * Q pixels.
struct Pixel {
  std::string img, h, w, valid;
};

Pixel decompose(const Node &n, KernelLowering &L, const Positions &p, const std::string &m,
                const std::string &r = "", const std::string &s = "") {
  const Node::Im2colArgs &a = *n.im2col;
  Pixel px{L.fresh("n"), L.fresh("h"), L.fresh("w"), inside(m, p.pixels)};
  std::string pq = L.fresh("pq");
  auto tap = [](const std::string &t) { return t.empty() ? t : " + " + t; };
  L.add(makeLet("const int", px.img, m + " / " + p.perImage, false));
  L.add(makeLet("const int", pq, m + " % " + p.perImage, false));
  L.add(makeLet("const int", px.h, plus(times(pq + " / " + p.perRow, a.stride), -a.pad) + tap(r), false));
  L.add(makeLet("const int", px.w, plus(times(pq + " % " + p.perRow, a.stride), -a.pad) + tap(s), false));
  return px;
}

// The input element of column `cursor` (a tl::TapCursor) of pixel `px` in the folded form,
// and whether it is inside the image and the K columns.
std::pair<std::string, std::string> foldedSource(const Node &n, KernelLowering &L, const Positions &p,
                                                 const Pixel &px, const std::string &cursor) {
  const ftg::Buffer &X = *n.inputs[0].buffer;
  std::string h = px.h + " + " + cursor + ".r", w = px.w + " + " + cursor + ".s";
  std::string valid = px.valid + " && " + cursor + ".k >= 0 && " + cursor + ".k < " + p.columns + " && " +
                      inside(h, L.dimExpr(X, 1)) + " && " + inside(w, L.dimExpr(X, 2));
  return {elementAt(L, X, {px.img, h, w, cursor + ".c"}), valid};
}

// The tile in accesses of `V` channels: per access, its output pixel decomposed, the input
// pixel's validity, and `access(dst, src, valid)` (element references). In the folded form an
// access's V columns lie in one tap (the aligned instantiation's C is a multiple of V) and its
// tap is placed by a tl::TapCursor, one division per access.
void forEachAccess(const Node &n, KernelLowering &L, const Positions &p, int64_t V,
                   const std::function<void(const std::string &, const std::string &, const std::string &,
                                            std::vector<Access>)> &access) {
  const Node::Im2colArgs &a = *n.im2col;
  const ftg::Buffer &X = *n.inputs[0].buffer, &A = *n.outputs[0].buffer;
  const int64_t rows = *A.shape[0], cols = *A.shape[1];
  L.forEachChunk(rows * cols / V, false, [&](const std::string &c, const std::string &) {
    std::string i = L.fresh("row"), j = L.fresh("col"), m = L.fresh("m");
    std::string perRowChunks = std::to_string(cols / V);
    L.add(makeLet("const int", i, c + " / " + perRowChunks, false));
    L.add(makeLet("const int", j, V > 1 ? "(" + c + " % " + perRowChunks + ") * " + std::to_string(V)
                                        : c + " % " + perRowChunks, false));
    L.add(makeLet("const int", m, p.first + " + " + i, false));
    Pixel px = decompose(n, L, p, m, p.r, p.s); // the folded form has no tap: its r and s are empty
    std::string src, valid = L.fresh("valid");
    if (a.column) {
      std::string cursor = L.fresh("tap");
      L.add(makeLet("const tl::TapCursor", cursor,
                    "tl::TapCursor(" + p.channel + " + " + j + ", " + L.dimExpr(X, 3) + ", " + std::to_string(a.kw) + ")",
                    false));
      auto [element, inImage] = foldedSource(n, L, p, px, cursor);
      src = element;
      L.add(makeLet("const bool", valid, inImage, false));
    } else {
      std::string cond = px.valid + " && " + inside(px.h, L.dimExpr(X, 1)) + " && " + inside(px.w, L.dimExpr(X, 2)) +
                         " && " + inside(p.channel + " + " + j, L.dimExpr(X, 3));
      L.add(makeLet("const bool", valid, cond, false));
      src = elementAt(L, X, {px.img, px.h, px.w, p.channel + " + " + j});
    }
    std::string dst = elementAt(L, A, {i, j});
    std::vector<Access> reads = p.reads;
    reads.insert(reads.begin(), L.access(&X));
    access(dst, src, valid, reads);
  });
}

// The longest run that also gets the vector variants: a 64-column run per thread loaded three
// ways (8, 4 and 2 bytes at a time) took 255 registers and spilled 480-852 bytes where the one
// element-by-element form took 168 (conv2d's 64 x 128 and 128 x 256 folded tiles).
constexpr int64_t kVectorRunLimit = 32;

struct RunSplit {
  int64_t parts = 0, rowsPer = 0, run = 0; // threads per row, rows per thread, columns per run
};

// How `T` threads split the folded tile into whole runs of consecutive columns of a row: threads
// a multiple of the rows and the columns a multiple of the threads per row, or the rows a
// multiple of the threads; nullopt otherwise.
std::optional<RunSplit> runSplit(const Node &n, int64_t T) {
  const ftg::Buffer &A = *n.outputs[0].buffer;
  const int64_t R = *A.shape[0], cols = *A.shape[1];
  if (T % R == 0 && cols % (T / R) == 0)
    return RunSplit{T / R, 1, cols / (T / R)};
  if (R % T == 0)
    return RunSplit{1, R / T, cols};
  return std::nullopt;
}

// The folded form element by element, where the block's threads split the tile into whole
// runs of consecutive columns of a row (threads a multiple of the rows and the columns of a
// multiple of the threads per row, or rows a multiple of the threads): each thread decomposes
// its pixel once per row and steps a tl::TapCursor along the run, instead of dividing per
// element. Lanes take consecutive rows, so that a warp's loads of one column are neighbouring
// pixels. The run goes through an array of the thread's registers and into the tile in
// 16-byte stores where the tile's layout keeps them whole. Under register staging the load
// half fills the staging array and the store half writes it out. False: no such split.
bool foldedRuns(const Node &n, KernelLowering &L, const Positions &p) {
  const ftg::Buffer &X = *n.inputs[0].buffer, &A = *n.outputs[0].buffer;
  const int64_t R = *A.shape[0], T = L.g.threads;
  std::optional<RunSplit> split = runSplit(n, T);
  if (!split)
    return false;
  const int64_t parts = split->parts, rowsPer = split->rowsPer;
  const int64_t run = split->run;
  auto *staging = L.registerStaging ? &*L.registerStaging : nullptr;
  const bool storeHalf = staging && staging->half == KernelLowering::RegisterStaging::Store;
  if (staging)
    staging->elements = std::max(staging->elements, rowsPer * run);
  std::string regs = staging ? staging->array : L.fresh("run");
  if (!staging)
    L.add(KernelLowering::stagingArray(A, rowsPer * run, regs));
  const int64_t bytes = bitWidth(A.dtype) / 8, vec = 16 / bytes;
  const bool vectors = run % vec == 0 && A.shared && A.shared->vectorRun(vec) == vec;
  std::vector<Access> reads = p.reads;
  reads.insert(reads.begin(), L.access(&X));
  const std::vector<Access> none;
  std::string q = L.fresh("q");
  L.nest(makeFor(ForRole::Registers, q, "0", std::to_string(rowsPer), "", 0), [&] {
    std::string row = L.fresh("row"), j0 = L.fresh("col");
    L.add(makeLet("const int", row, kThreadIndex + " % " + std::to_string(R) + " + " + q + " * " + std::to_string(T),
                  false));
    L.add(makeLet("const int", j0, parts > 1 ? kThreadIndex + " / " + std::to_string(R) + " * " + std::to_string(run)
                                             : std::string("0"),
                  false));
    const std::string slot = q + " * " + std::to_string(run);
    if (!storeHalf) {
      std::string m = L.fresh("m");
      L.add(makeLet("const int", m, p.first + " + " + row, false));
      Pixel px = decompose(n, L, p, m);
      // The run in accesses of v elements: v > 1 where C and X's strides are multiples of v and
      // X's address of v * bytes (tested per call: a uniform branch), so that the v columns lie
      // in one tap and one load moves them.
      auto loads = [&](int64_t v) {
        std::string cursor = L.fresh("tap");
        L.add(makeLet("tl::TapCursor", cursor,
                      "tl::TapCursor(" + p.channel + " + " + j0 + ", " + L.dimExpr(X, 3) + ", " +
                          std::to_string(n.im2col->kw) + ")",
                      false));
        std::string e = L.fresh("e");
        L.nest(makeFor(ForRole::Registers, e, "0", std::to_string(run / v), "", 0), [&] {
          auto [src, valid] = foldedSource(n, L, p, px, cursor);
          std::string at = regs + "[" + slot + " + " + e + (v > 1 ? " * " + std::to_string(v) : "") + "]";
          const std::string b = std::to_string(v * bytes);
          L.accessing(L.add(v > 1 ? makeEval("tl::store_vec<" + b + ">(&" + at + ", (" + valid + ") ? tl::load_vec<" +
                                             b + ">(&" + src + ") : tl::vec_bytes_t<" + b + ">{})")
                                  : makeStore(at, elementOrZero(X, src, valid, cppType(A.dtype)))),
                      reads, none);
          L.add(makeEval(cursor + ".next(" + L.dimExpr(X, 3) + ", " + std::to_string(n.im2col->kw) +
                         (v > 1 ? ", " + std::to_string(v) : "") + ")"));
        });
      };
      std::vector<int64_t> widths;
      for (int64_t b : {8, 4})
        if (int64_t v = b / bytes; v > 1 && run <= kVectorRunLimit && run % v == 0 && multipleOf(n.im2col->column, v) &&
                                   (!X.shape[3] || *X.shape[3] % v == 0))
          widths.push_back(v);
      Stmt *chain = nullptr;
      for (int64_t v : widths) {
        std::string cond = "reinterpret_cast<std::uintptr_t>(" + bufferName(X) + ") % " + std::to_string(v * bytes) +
                           " == 0 && " + L.dimExpr(X, 3) + " % " + std::to_string(v) + " == 0";
        for (size_t d = 0; d + 1 < X.shape.size(); ++d)
          cond += " && " + strideName(X.name, d) + " % " + std::to_string(v) + " == 0";
        StmtPtr branch = makeIf(cond);
        Stmt &b = *branch;
        if (chain) {
          chain->elseIf = true;
          chain->elseBody.push_back(std::move(branch));
        } else {
          L.add(std::move(branch));
        }
        L.within(b.body, [&] { loads(v); });
        chain = &b;
      }
      if (chain)
        L.within(chain->elseBody, [&] { loads(1); });
      else
        loads(1);
    }
    if (staging && !storeHalf)
      return;
    // The run into the tile.
    const int64_t step = vectors ? vec : 1;
    std::string u = L.fresh("u");
    L.nest(makeFor(ForRole::Registers, u, "0", std::to_string(run / step), "", 0), [&] {
      std::string at = u + " * " + std::to_string(step);
      std::string dst = elementAt(L, A, {row, j0 + " + " + at});
      std::string src = regs + "[" + slot + " + " + at + "]";
      StmtPtr st = vectors ? makeEval("tl::store_vec<16>(&" + dst + ", tl::load_vec<16>(&" + src + "))")
                           : makeStore(dst, src);
      L.accessing(L.add(std::move(st)), none, {L.access(&A)});
    });
  });
  return true;
}

void lowerIm2col(const Node &n, KernelLowering &L, bool prefetch) {
  const ftg::Buffer &X = *n.inputs[0].buffer, &A = *n.outputs[0].buffer;
  const int64_t V = n.copyVector;
  // A half of a register-staged prefetch (only the folded form's element runs are staged:
  // Im2colOp::stagesElementsThroughRegisters): the load half issues the cp.async path too.
  const bool storeHalf = L.registerStaging && L.registerStaging->half == KernelLowering::RegisterStaging::Store;
  L.tileOp(n, [&] {
    L.sourceComment(n, std::string(prefetch ? storeHalf ? "prefetch, from registers: " : "prefetch: " : "") +
                           describeIm2col(n) + ", " + n.im2col->note);
    L.scope([&] {
      Positions p = positions(n, L);
      auto elements = [&] {
        if (n.im2col->column && foldedRuns(n, L, p))
          return;
        forEachAccess(n, L, p, 1, [&](const std::string &dst, const std::string &src, const std::string &valid,
                                      std::vector<Access> reads) {
          L.accessing(L.add(makeStore(dst, elementOrZero(X, src, valid, cppType(A.dtype)))), std::move(reads),
                      {L.access(&A)});
        });
      };
      if (n.instr != ftg::CopyInstr::CpAsync16)
        return elements();
      L.ifAligned({&X}, [&] {
        if (storeHalf)
          return;
        forEachAccess(n, L, p, V, [&](const std::string &dst, const std::string &src, const std::string &valid,
                                      std::vector<Access> reads) {
          Stmt &cp = L.accessing(L.add(std::make_unique<Stmt>(StmtKind::AsyncCopy)), std::move(reads), {L.access(&A)});
          cp.bytes = int(V * bitWidth(A.dtype) / 8);
          cp.dst = "&" + dst;
          cp.src = "&" + src;
          cp.srcBase = bufferName(X);
          cp.valid = valid;
        });
        // A prefetch's group is waited for by the pipeline (PipelineExpansion.cpp).
        if (!prefetch) {
          L.add(std::make_unique<Stmt>(StmtKind::AsyncCommit));
          L.add(std::make_unique<Stmt>(StmtKind::AsyncWait)).count = 0;
        }
      }, elements);
    });
  });
}

class Im2colOp : public ftg::TileOp {
public:
  ftg::NodeKind kind() const override { return ftg::NodeKind::Im2col; }
  bool buildsFrom(Builtin b) const override { return b == Builtin::Im2col; }

  void build(Node &n, const CallExpr &c, ftg::NodeBuilder &b) const override {
    if (auto src = b.operand(argument(c, 0, "src")))
      n.inputs.push_back(*src);
    if (auto dst = b.operand(argument(c, 1, "dst")))
      n.outputs.push_back(*dst);
    auto keyword = [&](llvm::StringRef name) -> const Expr * {
      const CallArg *a = c.keywordArg(name);
      return a ? a->value : nullptr;
    };
    Node::Im2colArgs a;
    a.pixel = keyword("pixel");
    a.channel = keyword("channel");
    a.r = keyword("r");
    a.s = keyword("s");
    a.column = keyword("column");
    a.kh = intArgument(c, "kh", 1);
    a.kw = intArgument(c, "kw", 1);
    a.stride = intArgument(c, "stride", 1);
    a.pad = intArgument(c, "pad", 0);
    n.im2col = a;
  }

  // 16-byte cp.async along the channels where the target has it, the tile keeps such vectors
  // whole and c0 is a multiple of the vector (the launcher proves C one in the aligned
  // instantiation: in the folded form a vector of columns then lies in one tap); element by
  // element otherwise.
  void selectInstruction(Node &n, const ftg::Graph &g) const override {
    if (n.inputs.empty() || n.outputs.empty() || !n.im2col)
      return;
    const ftg::Buffer &A = *n.outputs[0].buffer;
    const int64_t bits = bitWidth(A.dtype), V = g.target->maxVectorBytes() * 8 / bits;
    const Expr *origin = n.im2col->column ? n.im2col->column : n.im2col->channel;
    const char *what = n.im2col->column ? "column" : "channel";
    std::string why;
    if (!g.target->copyAtom(target::CopyKind::CpAsync))
      why = g.target->name().str() + " has no cp.async";
    else if (!A.shared || *A.shape[1] % V != 0 || !A.shared->keepsVectors(V))
      why = "the rows of '" + A.name + "' are not whole " + std::to_string(V) + "-element vectors";
    else if (!multipleOf(origin, V))
      why = std::string(what) + " = " + toSource(origin) + " is not provably a multiple of " + std::to_string(V);
    n.instr = why.empty() ? ftg::CopyInstr::CpAsync16 : ftg::CopyInstr::Scalar;
    n.copyVector = why.empty() ? int(V) : 1;
    std::string elementWise = n.im2col->column && runSplit(n, g.threads)
                                  ? "element by element in runs of columns per thread"
                                  : "element by element";
    // After what the pipeline planner said (", not prefetched: ...").
    n.im2col->note = (why.empty() ? "cp.async 16B per " + std::to_string(V) + " " + what +
                                        "s, zero-filled outside the image (aligned instantiation; " + elementWise +
                                        " otherwise)"
                                  : elementWise + ": " + why) +
                     n.im2col->note;
  }

  bool stagesElementsThroughRegisters(const Node &n, const ftg::Graph &g) const override {
    return n.im2col && n.im2col->column && !n.outputs.empty() && bitWidth(n.outputs[0].buffer->dtype) >= 16 &&
           runSplit(n, g.threads).has_value();
  }

  std::string describe(const Node &n) const override { return describeIm2col(n); }
  void lower(const Node &n, KernelLowering &L) const override { lowerIm2col(n, L, false); }
  void lowerPrefetch(const Node &n, KernelLowering &L) const override { lowerIm2col(n, L, true); }

  // The im2col-mode tensor copy: an f16/bf16 tile in wgmma panels, a geometry within the map's
  // ranges (the anchors' box corners -pad and pad - k + 1, the stride), at most 1024 rows.
  bool bulkLoadable(const Node &n, const ftg::Graph &) const override {
    if (!n.im2col || n.inputs.empty() || n.outputs.empty())
      return false;
    const Node::Im2colArgs &a = *n.im2col;
    const ftg::Buffer &X = *n.inputs[0].buffer, &A = *n.outputs[0].buffer;
    if (a.column) // a tensor copy's box covers one tap's channels
      return false;
    auto inRange = [](int64_t corner) { return corner >= kCornerMin && corner <= kCornerMax; };
    return (A.dtype == DType::F16 || A.dtype == DType::BF16) && X.dtype == A.dtype && X.shape.size() == 4 &&
           A.shared && A.shared->isPanelled() && *A.shape[0] <= kMaxPixels && a.stride <= kMaxStride &&
           inRange(-a.pad) && inRange(a.pad - a.kh + 1) && inRange(a.pad - a.kw + 1);
  }

  bool lowerBulkLoad(const Node &n, KernelLowering &L, const std::string &tile,
                     const std::string &barrier) const override {
    const Node::Im2colArgs &a = *n.im2col;
    const ftg::Buffer &X = *n.inputs[0].buffer, &A = *n.outputs[0].buffer;
    const SharedLayout &layout = *A.shared;
    Kernel::TensorMap map;
    map.param = generatedName("map" + std::to_string(L.out->tensorMaps.size()));
    map.tensor = bufferName(X);
    map.dataType = tensorMapDataType(A.dtype);
    map.rank = 4;
    map.box = {layout.rows, layout.panelCols}; // pixels, channels
    map.swizzle = tensorMapSwizzle(layout);
    map.im2col = true;
    map.lowerH = map.lowerW = -a.pad;
    map.upperH = a.pad - a.kh + 1;
    map.upperW = a.pad - a.kw + 1;
    map.stride = a.stride;
    L.out->tensorMaps.push_back(map);
    const int64_t panels = layout.cols / layout.panelCols;
    L.add(makeComment("bulk im2col copy: " + describeIm2col(n) + ", " + std::to_string(panels) + " panel(s) of " +
                      std::to_string(layout.rows) + "x" + std::to_string(layout.panelCols)));
    L.scope([&] {
      Positions p = positions(n, L);
      // The anchor: the first output pixel's top-left input pixel (the tap is the copy's offset).
      std::string img = L.fresh("n"), pq = L.fresh("pq"), h = L.fresh("h"), w = L.fresh("w");
      L.add(makeLet("const int", img, p.first + " / " + p.perImage));
      L.add(makeLet("const int", pq, p.first + " % " + p.perImage));
      L.add(makeLet("const int", h, plus(times(pq + " / " + p.perRow, a.stride), -a.pad)));
      L.add(makeLet("const int", w, plus(times(pq + " % " + p.perRow, a.stride), -a.pad)));
      for (int64_t q = 0; q < panels; ++q)
        L.add(makeEval("tl::tma::load_im2col_4d(" + tile +
                       (q ? " + " + std::to_string(q * layout.rows * layout.panelCols) : "") + ", &" + map.param +
                       ", " + barrier + ", " + plus(p.channel, q * layout.panelCols) + ", " + w + ", " + h + ", " +
                       img + ", std::uint16_t(" + p.s + "), std::uint16_t(" + p.r + "))"));
    });
    return true;
  }
};

const Im2colOp im2colOp;
const bool registered = ftg::registerTileOp(im2colOp);

} // namespace

} // namespace tlc::ops
