// Layouts: construction, evaluation, composition, inversion, reshape, repeat, swizzles,
// printing; the TileLang paper's and the Hexcute paper's layout examples.
#include "ir/Layout.h"
#include "ir/LayoutFactories.h"
#include "ir/Swizzle.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace tlc;

namespace {

// Checks that `layout` maps its input shape one-to-one onto [0, footprint) (1-D output).
void requireBijectionOntoRange(const Layout &layout) {
  REQUIRE(layout.outputRank() == 1);
  int64_t footprint = layout.outputShape()[0];
  REQUIRE(footprint == layout.size());
  std::vector<int> hits(footprint, 0);
  forEachIndex(layout.inputShape(), [&](llvm::ArrayRef<int64_t> index) {
    int64_t address = layout.evaluate(index)[0];
    REQUIRE(address >= 0);
    REQUIRE(address < footprint);
    ++hits[address];
  });
  for (int64_t a = 0; a < footprint; ++a)
    REQUIRE(hits[a] == 1);
}

// inverse(layout(x)) == x for every index x, and the composition simplifies to the
// identity expressions themselves.
void requireInverseIsExact(const Layout &layout) {
  std::string why;
  auto inverse = layout.inverse(&why);
  INFO(layout.str() << ": " << why);
  REQUIRE(inverse);
  Layout roundTrip = inverse->compose(layout);
  forEachIndex(layout.inputShape(), [&](llvm::ArrayRef<int64_t> index) {
    REQUIRE(roundTrip.evaluate(index) == Shape(index.begin(), index.end()));
  });
  for (size_t d = 0; d < layout.inputRank(); ++d)
    CHECK(roundTrip.outputs()[d] == layout.inputs()[d].var);
  // And the other way round on the output box.
  Layout otherWay = layout.compose(*inverse);
  forEachIndex(inverse->inputShape(), [&](llvm::ArrayRef<int64_t> index) {
    REQUIRE(otherWay.evaluate(index) == Shape(index.begin(), index.end()));
  });
}

// The 16-byte bank group (of 8 per 128-byte bank line) an element offset falls into.
int64_t bankGroupOf(int64_t elementOffset, int64_t elementBits) {
  return elementOffset * elementBits / 8 / 16 % 8;
}

} // namespace

TEST_CASE("layouts are index expressions over their shape", "[layout]") {
  Layout rowMajor = makeRowMajorLayout({64, 64});
  CHECK(rowMajor.str() == "layout[64, 64] (i, j) => [i * 64 + j]");
  CHECK(rowMajor.inputShape() == Shape{64, 64});
  CHECK(rowMajor.outputShape() == Shape{4096});
  CHECK(rowMajor.evaluate({3, 5}) == Shape{197});
  CHECK(makeColMajorLayout({64, 32}).evaluate({3, 5}) == Shape{323});
  // The paper's address form sum_i y_i * s_i (TileLang section 4.3).
  Layout strided = makeStridedLayout({4, 8, 16}, {1, 512, 4});
  CHECK(strided.str() == "layout[4, 8, 16] (i, j, k) => [j * 512 + k * 4 + i]");
  CHECK(strided.evaluate({3, 2, 5}) == Shape{1047});
  CHECK(strided.outputShape() == Shape{3648});
}

TEST_CASE("TileLang paper: the transpose lambda i, j: (j, i)", "[layout][tilelang]") {
  Layout transpose = Layout::make({32, 64}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[1], idx[0]};
  });
  CHECK(transpose.str() == "layout[32, 64] (i, j) => [j, i]");
  CHECK(transpose.outputShape() == Shape{64, 32});
  // Row-major storage of the transposed [64, 32] view is column-major storage of [32, 64].
  CHECK(makeRowMajorLayout({64, 32}).compose(transpose).isEqual(makeColMajorLayout({32, 64})));
  auto inverse = transpose.inverse();
  REQUIRE(inverse);
  CHECK(inverse->str() == "layout[64, 32] (i, j) => [j, i]");
}

TEST_CASE("composition substitutes and simplifies", "[layout]") {
  Layout rowMajor = makeRowMajorLayout({16, 8});
  Layout split = Layout::make({128}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[0] / 8, idx[0] % 8};
  });
  CHECK(rowMajor.compose(split).str() == "layout[128] (i) => [i]");
  Layout pairSwap = Layout::make({16, 8}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[0] / 2 * 2 + (idx[0] + 1) % 2, idx[1]};
  });
  Layout composed = rowMajor.compose(pairSwap);
  CHECK(composed.evaluate({4, 3}) == Shape{43});
  CHECK(composed.evaluate({5, 3}) == Shape{35});
}

TEST_CASE("inverse composed with the layout is the identity", "[layout][inverse]") {
  requireInverseIsExact(makeRowMajorLayout({64, 64}));
  requireInverseIsExact(makeColMajorLayout({16, 8, 4}));
  requireInverseIsExact(makeStridedLayout({4, 8, 16}, {1, 64, 4}));
  requireInverseIsExact(makeSwizzledSharedLayout(64, 64, 16, 128));
  requireInverseIsExact(makeSwizzledSharedLayout(128, 128, 16, 128));
  requireInverseIsExact(makeSwizzledSharedLayout(32, 32, 16, 64));
  requireInverseIsExact(makeSwizzledSharedLayout(64, 16, 16, 32));
  requireInverseIsExact(makeSwizzledSharedLayout(64, 128, 8, 128));
  requireInverseIsExact(makeSwizzledSharedLayout(32, 32, 32, 128));
  requireInverseIsExact(makeSwizzledSharedLayout(64, 64, 16, 128).reshape({8, 512}));
  // A user annotation written the way `annotate_layout` takes it.
  requireInverseIsExact(Layout::make({64, 64}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[0], idx[1] ^ (idx[0] % 8)};
  }));
}

TEST_CASE("inverse refuses layouts that are not bijections", "[layout][inverse]") {
  std::string why;
  CHECK_FALSE(makePaddedLayout(64, 64, 8).inverse(&why));
  CHECK(why.find("contiguous") != std::string::npos);
  why.clear();
  Layout broadcast = Layout::make({8, 8}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[1]};
  });
  CHECK_FALSE(broadcast.inverse(&why));
  CHECK_FALSE(why.empty());
}

TEST_CASE("reshape keeps the flattened mapping (alias propagation)", "[layout][reshape]") {
  // Appendix E's PropagateAlias reshapes a buffer's layout to each alias's shape.
  CHECK(makeRowMajorLayout({64, 64}).reshape({4096}).str() == "layout[4096] (i) => [i]");
  CHECK(makeRowMajorLayout({64, 64}).reshape({16, 256}).isEqual(makeRowMajorLayout({16, 256})));
  Layout swizzled = makeSwizzledSharedLayout(64, 64, 16, 128);
  Layout reshaped = swizzled.reshape({8, 8, 64});
  forEachIndex(reshaped.inputShape(), [&](llvm::ArrayRef<int64_t> idx) {
    REQUIRE(reshaped.evaluate(idx) == swizzled.evaluate({idx[0] * 8 + idx[1], idx[2]}));
  });
}

TEST_CASE("repeat tiles an address layout", "[layout][repeat]") {
  Layout tile = makeRowMajorLayout({8, 8});
  Layout rowMajorCopies = tile.repeat({2, 3});
  CHECK(rowMajorCopies.inputShape() == Shape{16, 24});
  forEachIndex({16, 24}, [&](llvm::ArrayRef<int64_t> idx) {
    int64_t copy = idx[0] / 8 * 3 + idx[1] / 8;
    REQUIRE(rowMajorCopies.evaluate(idx)[0] == copy * 64 + idx[0] % 8 * 8 + idx[1] % 8);
  });
  Layout colMajorCopies = tile.repeat({2, 3}, TileOrder::ColMajor);
  CHECK(colMajorCopies.evaluate({8, 0}) == Shape{64});
  CHECK(colMajorCopies.evaluate({0, 8}) == Shape{128});
  requireBijectionOntoRange(colMajorCopies);
}

TEST_CASE("CUTLASS swizzles", "[layout][swizzle]") {
  Swizzle sw128 = Swizzle{3, 4, 3};
  CHECK(sw128.str() == "Swizzle<3,4,3>");
  CHECK(sw128.apply(0x80) == 0x90);   // row 1 of 128 bytes: chunk 0 -> chunk 1
  CHECK(sw128.apply(0x3f0) == 0x380); // row 7, chunk 7 -> chunk 0
  CHECK(Swizzle::forSharedRows(128, 16) == Swizzle{3, 3, 3});
  CHECK(Swizzle::forSharedRows(64, 16) == Swizzle{2, 3, 3});
  CHECK(Swizzle::forSharedRows(32, 16) == Swizzle{1, 3, 3});
  CHECK(Swizzle::forSharedRows(128, 32) == Swizzle{3, 2, 3});
  CHECK(Swizzle::forSharedRows(128, 8) == Swizzle{3, 4, 3});
  // The element swizzle is the byte swizzle seen in 2-byte units, and an involution.
  Swizzle elements = Swizzle::forSharedRows(128, 16);
  for (int64_t e = 0; e < 4096; ++e) {
    REQUIRE(sw128.apply(2 * e) == 2 * elements.apply(e));
    REQUIRE(elements.apply(elements.apply(e)) == e);
  }
  // The symbolic swizzle computes the same function.
  IntExpr offset = IntExpr::var("offset");
  IntExpr symbolic = elements.apply(offset);
  for (int64_t e = 0; e < 4096; e += 37) {
    VarValues values;
    values[offset.varId()] = e;
    REQUIRE(evaluate(symbolic, values) == elements.apply(e));
  }
}

TEST_CASE("the swizzled 64x64 f16 tile is Swizzle<3,3,3> on row-major offsets",
          "[layout][swizzle]") {
  Layout swizzled = makeSwizzledSharedLayout(64, 64, 16, 128);
  CHECK(swizzled.str() == "layout[64, 64] (i, j) => [i * 64 + ((j / 8) ^ (i % 8)) * 8 + j % 8]");
  CHECK(swizzled.isEqual(makeRowMajorLayout({64, 64}).swizzle(Swizzle{3, 3, 3})));
  CHECK_FALSE(swizzled.isEqual(makeRowMajorLayout({64, 64})));
  requireBijectionOntoRange(swizzled);
}

TEST_CASE("one ldmatrix phase hits 8 distinct 16-byte bank groups", "[layout][swizzle]") {
  // ldmatrix reads an 8x8 matrix of b16 per phase: 8 rows of 16 bytes (one chunk). The
  // swizzle is right when those 8 rows land in 8 different 16-byte bank groups, for every
  // group of 8 rows and every chunk. Widths: 128-byte rows (64 f16), 64 (32), 32 (16).
  for (int64_t cols : {64, 32, 16, 128}) {
    int64_t swizzleBytes = std::min<int64_t>(cols * 2, 128);
    Layout layout = makeSwizzledSharedLayout(64, cols, 16, swizzleBytes);
    INFO(layout.str());
    requireBijectionOntoRange(layout);
    for (int64_t row0 = 0; row0 < 64; row0 += 8) {
      for (int64_t col0 = 0; col0 < cols; col0 += 8) {
        std::set<int64_t> groups;
        for (int64_t r = row0; r < row0 + 8; ++r)
          groups.insert(bankGroupOf(layout.evaluate({r, col0})[0], 16));
        REQUIRE(groups.size() == 8);
      }
    }
  }
  // Without the swizzle all 8 rows of a 128-byte-row tile sit in one bank group.
  Layout plain = makeRowMajorLayout({64, 64});
  std::set<int64_t> groups;
  for (int64_t r = 0; r < 8; ++r)
    groups.insert(bankGroupOf(plain.evaluate({r, 0})[0], 16));
  CHECK(groups.size() == 1);
}

TEST_CASE("TileLang's default GEMM shared layouts", "[layout][swizzle]") {
  CHECK(widestSharedSwizzleBytes(64, 16) == 128);
  CHECK(widestSharedSwizzleBytes(32, 16) == 64);
  CHECK(widestSharedSwizzleBytes(16, 16) == 32);
  CHECK(widestSharedSwizzleBytes(24, 16) == 0);
  CHECK(widestSharedSwizzleBytes(32, 32) == 128);
  CHECK(makeGemmSharedLayout(128, 32, 16).isEqual(makeSwizzledSharedLayout(128, 32, 16, 64)));
  CHECK(makeGemmSharedLayout(4, 64, 16).isEqual(makePaddedLayout(4, 64, 8)));
  CHECK(makeGemmSharedLayout(64, 24, 16).isEqual(makeRowMajorLayout({64, 24})));
}

TEST_CASE("isEqual compares meaning, not spelling", "[layout]") {
  // The swizzle written on whole addresses and digit by digit is one layout with one form.
  Layout whole = Layout::make({64, 64}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{(idx[0] * 64 + idx[1]) ^ (idx[0] % 8 * 8)};
  });
  Layout digits = makeSwizzledSharedLayout(64, 64, 16, 128);
  CHECK(whole.outputs()[0].str() == digits.outputs()[0].str());
  CHECK(whole.isEqual(digits));
  // min(i, 7) and i % 8 agree on [0, 8) but are not the same expression.
  Layout viaMin = Layout::make({8}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{min(idx[0] * 2, idx[0] + 7)};
  });
  Layout viaMul = Layout::make({8}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[0] * 2};
  });
  CHECK(viaMin.outputs()[0] != viaMul.outputs()[0]);
  CHECK(viaMin.isEqual(viaMul));
  CHECK_FALSE(viaMul.isEqual(makeRowMajorLayout({8})));
  CHECK_FALSE(viaMul.isEqual(makeRowMajorLayout({4, 2})));
}

TEST_CASE("layouts print as C++ for code generation", "[layout][print]") {
  Layout swizzled = makeSwizzledSharedLayout(64, 64, 16, 128);
  CHECK(swizzled.toCpp({"r", "c"})[0] == "r * 64 + ((c / 8) ^ (r % 8)) * 8 + c % 8");
  // C++ division truncates: a numerator that may be negative needs the floor helper.
  Layout difference = Layout::make({8, 8}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{(idx[0] - idx[1]) / 2, (idx[0] + 8) / 2};
  });
  auto cpp = difference.toCpp({"x", "y"});
  CHECK(cpp[0] == "tl::floordiv(x - y, 2)");
  CHECK(cpp[1] == "x / 2 + 4");
}

TEST_CASE("Hexcute: TV layout f(tid, vid) of a 4x8 tile", "[layout][hexcute]") {
  // Figure 6: 8 threads with 4 values each cover a 4x8 tile, positions column-major.
  // The text gives f(7, 2) = 27, i.e. row 27 % 4 = 3, column 27 / 4 = 6. The figure's own
  // layout is not in the text; ((2,4),(2,2)):((8,1),(4,16)) is one with that value.
  Layout tv = makeCuteLayout({{{2, 8}, {4, 1}}, {{2, 4}, {2, 16}}});
  CHECK(tv.evaluate({7, 2}) == Shape{27});
  Layout toTile = Layout::make({32}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[0] % 4, idx[0] / 4};
  });
  CHECK(toTile.compose(tv).evaluate({7, 2}) == Shape{3, 6});
  requireBijectionOntoRange(tv);
}

TEST_CASE("Hexcute: the packed INT4 layout ((2,2,2,4),(8,)):((1,8,128,2),(16,))",
          "[layout][hexcute]") {
  Layout packed = makeCuteLayout({{{2, 1}, {2, 8}, {2, 128}, {4, 2}}, {{8, 16}}});
  CHECK(packed.inputShape() == Shape{32, 8});
  // Row 5 = (1, 0, 1, 0) in the row modes, column 3: 1*1 + 1*128 + 3*16.
  CHECK(packed.evaluate({5, 3}) == Shape{177});
  requireBijectionOntoRange(packed);
  requireInverseIsExact(packed);
}

TEST_CASE("Hexcute: g o q^-1 places the four ldmatrix matrices", "[layout][hexcute]") {
  // Section 4.2: the ldmatrix output layout q and a two-warp tensor layout g, both CuTe
  // layouts from (thread, value) to column-major positions. g o q^-1 maps each of the
  // four 8x8 matrices of the 16x16 instruction tile onto an 8x8 block of the 16x32 tile.
  Layout q = makeCuteLayout({{{4, 64}, {8, 1}}, {{2, 32}, {4, 8}}});
  Layout g = makeCuteLayout({{{4, 32}, {8, 1}, {2, 128}}, {{2, 16}, {2, 8}, {2, 256}}});
  auto qInverse = q.inverse();
  REQUIRE(qInverse);
  Layout composite = g.compose(*qInverse);
  CHECK(composite.inputShape() == Shape{256});

  // Matrix m holds values 2m and 2m+1 of every thread.
  std::map<int64_t, std::set<std::pair<int64_t, int64_t>>> blocksOfMatrix;
  std::set<int64_t> images;
  for (int64_t p = 0; p < 256; ++p) {
    int64_t matrix = qInverse->evaluate({p})[1] / 2;
    int64_t image = composite.evaluate({p})[0];
    images.insert(image);
    blocksOfMatrix[matrix].insert({image % 16 / 8, image / 16 / 8});
  }
  CHECK(images.size() == 256);
  REQUIRE(blocksOfMatrix.size() == 4);
  using Block = std::set<std::pair<int64_t, int64_t>>;
  CHECK(blocksOfMatrix[0] == Block{{0, 0}});
  CHECK(blocksOfMatrix[1] == Block{{1, 0}});
  CHECK(blocksOfMatrix[2] == Block{{0, 2}});
  CHECK(blocksOfMatrix[3] == Block{{1, 2}});
}
