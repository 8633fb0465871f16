// Fragments: the mma.m16n8k16 and ldmatrix register layouts against the PTX ISA and
// CuTe, block-level tiling over warps, repeat / replicate / reshape / compose, inverse.
#include "ir/Fragment.h"
#include "ir/LayoutFactories.h"
#include "ir/TensorCoreLayouts.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace tlc;

namespace {

using Location = Fragment::Location;
using Coord = std::pair<int64_t, int64_t>;

// Every (index, replica) of the fragment, grouped by where it is held.
std::map<std::pair<int64_t, int64_t>, std::vector<Shape>> holdersByLocation(const Fragment &f) {
  std::map<std::pair<int64_t, int64_t>, std::vector<Shape>> byLocation;
  forEachIndex(f.shape(), [&](llvm::ArrayRef<int64_t> index) {
    for (int64_t rep = 0; rep < f.replicate(); ++rep) {
      Location loc = f.evaluate(index, rep);
      REQUIRE(loc.thread >= 0);
      REQUIRE(loc.thread < f.threadExtent());
      REQUIRE(loc.reg >= 0);
      REQUIRE(loc.reg < f.registerCount());
      byLocation[{loc.thread, loc.reg}].push_back(Shape(index.begin(), index.end()));
    }
  });
  return byLocation;
}

// Each (thread, register) of the box holds exactly one element copy.
void requireOneElementPerLocation(const Fragment &f) {
  auto byLocation = holdersByLocation(f);
  CHECK(int64_t(byLocation.size()) == f.threadExtent() * f.registerCount());
  for (const auto &entry : byLocation)
    REQUIRE(entry.second.size() == 1);
}

// The fragment's symbolic inverse sends every (thread, reg) back to the element there.
void requireInverseMatches(const Fragment &f) {
  std::string why;
  auto inverse = f.inverse(&why);
  INFO(f.str() << ": " << why);
  REQUIRE(inverse);
  forEachIndex(f.shape(), [&](llvm::ArrayRef<int64_t> index) {
    for (int64_t rep = 0; rep < f.replicate(); ++rep) {
      Location loc = f.evaluate(index, rep);
      Shape expected(index.begin(), index.end());
      if (f.replicate() > 1)
        expected.push_back(rep);
      REQUIRE(inverse->evaluate({loc.thread, loc.reg}) == expected);
    }
  });
}

// The PTX ISA's formulas, from (lane, register) to (row, col).
Coord ptxA(int64_t lane, int64_t r) {
  int64_t group = lane >> 2, inGroup = lane % 4;
  int64_t row = (r < 2 || (r >= 4 && r < 6)) ? group : group + 8;
  int64_t col = inGroup * 2 + (r & 1) + (r >= 4 ? 8 : 0);
  return {row, col};
}
Coord ptxB(int64_t lane, int64_t r) {
  int64_t group = lane >> 2, inGroup = lane % 4;
  return {inGroup * 2 + (r & 1) + (r >= 2 ? 8 : 0), group};
}
Coord ptxC(int64_t lane, int64_t r) {
  int64_t group = lane >> 2, inGroup = lane % 4;
  return {r < 2 ? group : group + 8, inGroup * 2 + (r & 1)};
}

void requireMatchesPtx(const Fragment &f, int64_t regsPerLane, Coord (*ptx)(int64_t, int64_t)) {
  CHECK(f.threadExtent() == 32);
  CHECK(f.registerCount() == regsPerLane);
  std::set<Coord> covered;
  for (int64_t lane = 0; lane < 32; ++lane) {
    for (int64_t r = 0; r < regsPerLane; ++r) {
      Coord rc = ptx(lane, r);
      covered.insert(rc);
      REQUIRE(f.evaluate({rc.first, rc.second}) == Location{lane, r});
    }
  }
  // Every element of the tile is some lane's register, and only one's.
  CHECK(int64_t(covered.size()) == numElements(f.shape()));
  requireOneElementPerLocation(f);
  requireInverseMatches(f);
}

// A CuTe (thread, value) -> column-major position layout read on an R x C tile.
Coord cutePosition(const Layout &tv, int64_t rows, int64_t thread, int64_t value) {
  int64_t p = tv.evaluate({thread, value})[0];
  return {p % rows, p / rows};
}

} // namespace

TEST_CASE("mma.m16n8k16 C fragment: one (lane, register) per element, as in PTX",
          "[fragment][mma]") {
  Fragment c = makeMmaM16N8K16FragmentC();
  CHECK(c.str() == "fragment[16, 8] threads 32 regs 4 (i, j) => "
                   "thread (i % 8) * 4 + j / 2, reg (i / 8) * 2 + j % 2");
  requireMatchesPtx(c, 4, ptxC);
}

TEST_CASE("mma.m16n8k16 A and B fragments match PTX", "[fragment][mma]") {
  requireMatchesPtx(makeMmaM16N8K16FragmentA(), 8, ptxA);
  requireMatchesPtx(makeMmaM16N8K16FragmentB(), 4, ptxB);
}

TEST_CASE("mma.m16n8k16 fragments match CuTe's SM80 TV layouts", "[fragment][mma][cute]") {
  // cute/atom/mma_traits_sm80.hpp: (T32, V) -> column-major (M, N) / (M, K) / (N, K).
  Layout cuteC = makeCuteLayout({{{4, 32}, {8, 1}}, {{2, 16}, {2, 8}}});
  Layout cuteA = makeCuteLayout({{{4, 32}, {8, 1}}, {{2, 16}, {2, 8}, {2, 128}}});
  Layout cuteB = makeCuteLayout({{{4, 16}, {8, 1}}, {{2, 8}, {2, 64}}});
  auto c = makeMmaM16N8K16FragmentC().inverse();
  auto a = makeMmaM16N8K16FragmentA().inverse();
  auto b = makeMmaM16N8K16FragmentB().inverse();
  REQUIRE((a && b && c));
  for (int64_t t = 0; t < 32; ++t) {
    for (int64_t v = 0; v < 4; ++v) {
      Shape mn = c->evaluate({t, v});
      REQUIRE(cutePosition(cuteC, 16, t, v) == Coord{mn[0], mn[1]});
      // CuTe indexes B as (n, k); ours is (k, n).
      Shape kn = b->evaluate({t, v});
      REQUIRE(cutePosition(cuteB, 8, t, v) == Coord{kn[1], kn[0]});
    }
    for (int64_t v = 0; v < 8; ++v) {
      Shape mk = a->evaluate({t, v});
      REQUIRE(cutePosition(cuteA, 16, t, v) == Coord{mk[0], mk[1]});
    }
  }
}

TEST_CASE("ldmatrix.x4 loads the mma A fragment and .trans loads B", "[fragment][ldmatrix]") {
  Fragment x4 = makeLdmatrixFragment(4, false, MatrixOrder::ColMajor);
  CHECK(x4.shape() == Shape{16, 16});
  CHECK(x4.isEqual(makeMmaM16N8K16FragmentA()));
  requireOneElementPerLocation(x4);

  // .trans over a [k16, n16] tile of B stored k-major: columns 0-7 are the B fragment of
  // the first n8 tile in registers 0-3, columns 8-15 that of the second in 4-7.
  Fragment x4t = makeLdmatrixFragment(4, true, MatrixOrder::ColMajor);
  Fragment b = makeMmaM16N8K16FragmentB();
  forEachIndex({16, 8}, [&](llvm::ArrayRef<int64_t> kn) {
    Location expected = b.evaluate(kn);
    REQUIRE(x4t.evaluate({kn[0], kn[1]}) == expected);
    REQUIRE(x4t.evaluate({kn[0], kn[1] + 8}) == Location{expected.thread, expected.reg + 4});
  });

  // .trans over A stored k-major ([k16, m16]) with the matrices in row-major order is the A
  // fragment read through the transpose.
  Layout transpose = Layout::make({16, 16}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[1], idx[0]};
  });
  Fragment aFromTransposed =
      makeLdmatrixFragment(4, true, MatrixOrder::RowMajor).compose(transpose);
  CHECK(aFromTransposed.isEqual(makeMmaM16N8K16FragmentA()));
}

TEST_CASE("ldmatrix lane addresses and tile shapes", "[fragment][ldmatrix]") {
  Layout addresses = makeLdmatrixAddressLayout(4, MatrixOrder::ColMajor);
  for (int64_t lane = 0; lane < 32; ++lane)
    REQUIRE(addresses.evaluate({lane}) == Shape{lane % 16, lane / 16 * 8});
  Layout rowOrder = makeLdmatrixAddressLayout(4, MatrixOrder::RowMajor);
  CHECK(rowOrder.evaluate({8}) == Shape{0, 8});
  CHECK(rowOrder.evaluate({16}) == Shape{8, 0});
  CHECK(ldmatrixTileShape(2, MatrixOrder::ColMajor) == Shape{16, 8});
  CHECK(ldmatrixTileShape(2, MatrixOrder::RowMajor) == Shape{8, 16});
  // x2 over B stored n-major ([n8, k16], matrices side by side) is the mma B fragment
  // read through the transpose.
  Fragment x2 = makeLdmatrixFragment(2, false, MatrixOrder::RowMajor);
  CHECK(x2.registerCount() == 4);
  requireOneElementPerLocation(x2);
  Layout transpose = Layout::make({16, 8}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[1], idx[0]};
  });
  CHECK(x2.compose(transpose).isEqual(makeMmaM16N8K16FragmentB()));
  CHECK_FALSE(makeLdmatrixFragment(2, true, MatrixOrder::RowMajor)
                  .compose(transpose)
                  .isEqual(makeMmaM16N8K16FragmentB()));
  Fragment x1 = makeLdmatrixFragment(1, false, MatrixOrder::ColMajor);
  CHECK(x1.evaluate({3, 5}) == Location{14, 1});
}

TEST_CASE("TileLang's 8x8 base fragment repeated on registers is the mma accumulator",
          "[fragment][tilelang]") {
  // TileLang builds its C fragment from thread = j/2 + 4i, reg = j%2 on an 8x8 tile.
  Fragment base = Fragment::make({8, 8}, [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
    return Fragment::Placement{idx[1] / 2 + idx[0] * 4, idx[1] % 2};
  });
  CHECK(base.registerCount() == 2);
  Fragment repeated = base.repeat({2, 1}, RepeatOn::Register);
  CHECK(repeated.isEqual(makeMmaM16N8K16FragmentC()));
  CHECK(repeated.str() == makeMmaM16N8K16FragmentC().str());
}

TEST_CASE("registers inferred from the thread mapping", "[fragment][tilelang]") {
  // As TileLang's Fragment does when given only forward_thread.
  auto c = Fragment::fromThreadMap({16, 8}, [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
    return idx[0] % 8 * 4 + idx[1] / 2;
  });
  REQUIRE(c);
  CHECK(c->isEqual(makeMmaM16N8K16FragmentC()));
  // Hexcute figure 4: 128 threads copy a 64x8 tile as a 16x8 grid in 4 iterations.
  auto copy = Fragment::fromThreadMap({64, 8}, [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
    return idx[0] % 16 * 8 + idx[1];
  });
  REQUIRE(copy);
  CHECK(copy->threadExtent() == 128);
  CHECK(copy->registerCount() == 4);
  CHECK(copy->evaluate({37, 5}) == Location{45, 2});
  std::string why;
  CHECK_FALSE(Fragment::fromThreadMap(
      {8, 8}, [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) { return idx[0] * idx[1]; }, 1,
      &why));
  CHECK_FALSE(why.empty());
}

TEST_CASE("block accumulator fragment over 2x2 warps", "[fragment][mma]") {
  Fragment c = makeMmaBlockFragmentC(128, 128, 2, 2);
  CHECK(c.threadExtent() == 128);
  // 64x64 per warp = 4x8 instruction tiles of 4 registers: Appendix E's register cost.
  CHECK(c.registerCount() == 128);
  requireOneElementPerLocation(c);
  requireInverseMatches(c);
  forEachIndex({128, 128}, [&](llvm::ArrayRef<int64_t> idx) {
    Location loc = c.evaluate(idx);
    // Warps are numbered row-major over the 2x2 warp grid.
    REQUIRE(loc.thread / 32 == idx[0] / 64 * 2 + idx[1] / 64);
    // Inside the warp: the (mi, ni) instruction tile, row-major, 4 registers each.
    int64_t tile = idx[0] % 64 / 16 * 8 + idx[1] % 64 / 8;
    Location inTile = makeMmaM16N8K16FragmentC().evaluate({idx[0] % 16, idx[1] % 8});
    REQUIRE(loc == Location{loc.thread / 32 * 32 + inTile.thread, tile * 4 + inTile.reg});
  });
}

TEST_CASE("block operand fragments are replicated across warps", "[fragment][mma]") {
  // A[128, 32] on 2x2 warps: each element is needed by both warps of its M half.
  Fragment a = makeMmaBlockFragmentA(128, 32, 2, 2);
  CHECK(a.replicate() == 2);
  CHECK(a.threadExtent() == 128);
  CHECK(a.registerCount() == 4 * 2 * 8);
  forEachIndex({128, 32}, [&](llvm::ArrayRef<int64_t> idx) {
    std::set<int64_t> warps;
    for (int64_t rep = 0; rep < 2; ++rep)
      warps.insert(a.evaluate(idx, rep).thread / 32);
    int64_t warpM = idx[0] / 64;
    REQUIRE(warps == std::set<int64_t>{2 * warpM, 2 * warpM + 1});
    REQUIRE(a.evaluate(idx, 0).reg == a.evaluate(idx, 1).reg);
  });
  requireOneElementPerLocation(a);
  requireInverseMatches(a);

  // B[32, 128] on 2x2 warps: shared by the two warps of each N half.
  Fragment b = makeMmaBlockFragmentB(32, 128, 2, 2);
  CHECK(b.replicate() == 2);
  CHECK(b.registerCount() == 2 * 8 * 4);
  forEachIndex({32, 128}, [&](llvm::ArrayRef<int64_t> idx) {
    std::set<int64_t> warps;
    for (int64_t rep = 0; rep < 2; ++rep)
      warps.insert(b.evaluate(idx, rep).thread / 32);
    int64_t warpN = idx[1] / 64;
    REQUIRE(warps == std::set<int64_t>{warpN, warpN + 2});
  });
  requireOneElementPerLocation(b);
  requireInverseMatches(b);
}

TEST_CASE("replicate, repeat on threads, reshape and compose", "[fragment]") {
  Fragment c = makeMmaM16N8K16FragmentC();
  Fragment twice = c.replicate(2);
  CHECK(twice.threadExtent() == 64);
  CHECK(twice.registerCount() == 4);
  CHECK(twice.evaluate({9, 3}, 1) == Location{32 + 5, 3});
  requireInverseMatches(twice);
  // Replicating twice nests: replica r lands in thread group r.
  Fragment four = twice.replicate(2);
  CHECK(four.replicate() == 4);
  CHECK(four.evaluate({9, 3}, 3) == Location{96 + 5, 3});

  Fragment wide = c.repeat({1, 2}, RepeatOn::Thread);
  CHECK(wide.shape() == Shape{16, 16});
  CHECK(wide.evaluate({9, 11}) == Location{32 + 5, 3});

  Fragment flat = c.reshape({128});
  forEachIndex({16, 8}, [&](llvm::ArrayRef<int64_t> idx) {
    REQUIRE(flat.evaluate({idx[0] * 8 + idx[1]}) == c.evaluate(idx));
  });

  Layout transpose = Layout::make({8, 16}, [](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[1], idx[0]};
  });
  Fragment transposed = c.compose(transpose);
  CHECK(transposed.shape() == Shape{8, 16});
  CHECK(transposed.evaluate({3, 9}) == c.evaluate({9, 3}));
  CHECK_FALSE(transposed.isEqual(c.reshape({8, 16})));
}

TEST_CASE("inverse needs every (thread, register) to hold one element", "[fragment]") {
  // One thread holding the whole tile is a bijection onto its registers.
  Fragment single = Fragment::make({4, 4}, [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
    return Fragment::Placement{IntExpr(0), idx[0] * 4 + idx[1]};
  });
  CHECK(single.threadExtent() == 1);
  CHECK(single.registerCount() == 16);
  requireInverseMatches(single);

  // Replicas that land on the same thread cannot be told apart.
  Fragment sameThreads = Fragment::make(
      {4, 4},
      [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
        return Fragment::Placement{idx[0], idx[1]};
      },
      2);
  std::string why;
  CHECK_FALSE(sameThreads.inverse(&why));
  CHECK_FALSE(why.empty());

  // Two elements in one register of one thread.
  Fragment clash = Fragment::make({4, 4}, [](llvm::ArrayRef<IntExpr> idx, const IntExpr &) {
    return Fragment::Placement{idx[0] % 2, idx[1]};
  });
  why.clear();
  CHECK_FALSE(clash.inverse(&why));
  CHECK_FALSE(why.empty());
}
