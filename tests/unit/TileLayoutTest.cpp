// The layout families the CUDA back end lowers (ir/TileLayout.h) against independent
// definitions: the algebraic fragments of ir/TensorCoreLayouts.h, the device library's
// swizzle (stdlib/tl/swizzle.h), and coverage properties that every family must have.
#include "ir/TensorCoreLayouts.h"
#include "ir/TileLayout.h"

#include "tl/swizzle.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <utility>

using namespace tlc;

namespace {

// Every (row, col) of the tile is held by exactly one (thread, register), and the inverse
// functions rowAt/colAt agree with it.
void checkCoversOnce(const FragmentLayout &l) {
  std::map<std::pair<int64_t, int64_t>, int> seen;
  for (int64_t t = 0; t < l.threads; ++t)
    for (int64_t r = 0; r < l.registers(); ++r) {
      int64_t i = l.rowAt(t, r), j = l.colAt(t, r);
      REQUIRE(i >= 0);
      REQUIRE(i < l.rows);
      REQUIRE(j >= 0);
      REQUIRE(j < l.cols);
      ++seen[{i, j}];
    }
  CHECK(int64_t(seen.size()) == l.rows * l.cols);
  for (auto &[ij, count] : seen)
    CHECK(count == 1);
}

// The families' placements written out by hand, as the CUDA back end printed them before
// layouts came from the algebra: an independent reference for the factories.
struct HandWritten {
  const FragmentLayout &l;
  int64_t row(int64_t tid, int64_t r) const {
    int64_t warp = tid / 32, lane = tid % 32;
    if (l.kind == FragmentLayout::MmaC)
      return (warp / l.wn) * l.warpRows() + (r / (l.nTiles() * 4)) * 16 + lane / 4 + ((r % 4) / 2) * 8;
    if (l.kind == FragmentLayout::Row && l.parent == FragmentLayout::MmaC)
      return (warp / l.wn) * l.warpRows() + (r / 2) * 16 + lane / 4 + (r % 2) * 8;
    int64_t pass = l.kind == FragmentLayout::Blocked ? r / (l.chunksPerRow() * l.vec) : r;
    return pass * l.rowsPerPass() + tid / l.tpr;
  }
  int64_t col(int64_t tid, int64_t r) const {
    if (l.kind == FragmentLayout::MmaC)
      return ((tid / 32) % l.wn) * l.warpCols() + ((r / 4) % l.nTiles()) * 8 + ((tid % 32) % 4) * 2 + r % 2;
    return ((r / l.vec) % l.chunksPerRow()) * l.tpr * l.vec + (tid % l.tpr) * l.vec + r % l.vec;
  }
  int64_t rowRegister(int64_t r) const {
    if (l.kind == FragmentLayout::MmaC)
      return (r / (l.nTiles() * 4)) * 2 + (r % 4) / 2;
    return r / (l.chunksPerRow() * l.vec);
  }
  int registers() const {
    switch (l.kind) {
    case FragmentLayout::MmaC: return int(l.mTiles() * l.nTiles() * 4);
    case FragmentLayout::Blocked: return int(l.rows / l.rowsPerPass() * l.chunksPerRow() * l.vec);
    case FragmentLayout::Row:
      return l.parent == FragmentLayout::MmaC ? int(l.mTiles() * 2) : int(l.rows / l.rowsPerPass());
    case FragmentLayout::Generic: return 0; // no family formula: tested on its own below
    }
    return 0;
  }
};

// The algebra agrees with the hand-written placement everywhere, for the layout and for
// the row layout a reduction leaves, including the row register lowering prints.
void checkAgainstHandWritten(const FragmentLayout &full) {
  FragmentLayout row = full.rowLayout();
  HandWritten F{full}, R{row};
  REQUIRE(full.registers() == F.registers());
  REQUIRE(row.registers() == R.registers());
  for (int64_t t = 0; t < full.threads; ++t) {
    for (int64_t r = 0; r < full.registers(); ++r) {
      INFO(full.str() << " t=" << t << " r=" << r);
      REQUIRE(full.rowAt(t, r) == F.row(t, r));
      REQUIRE(full.colAt(t, r) == F.col(t, r));
      VarValues at{{full.algebra->reg.var.varId(), r}};
      REQUIRE(evaluate(full.algebra->rowRegister, at) == F.rowRegister(r));
    }
    for (int64_t q = 0; q < row.registers(); ++q)
      REQUIRE(row.rowAt(t, q) == R.row(t, q));
  }
}

} // namespace

TEST_CASE("fragment families agree with their hand-written placement", "[tilelayout]") {
  Fragment atom = makeMmaM16N8K16FragmentC();
  for (auto [M, N, wm, wn] : {std::tuple{128, 128, 2, 2}, std::tuple{128, 128, 4, 1},
                              std::tuple{64, 64, 1, 8}, std::tuple{128, 256, 2, 4},
                              std::tuple{96, 96, 2, 2}, std::tuple{48, 40, 1, 1},
                              std::tuple{16, 8, 1, 1}, std::tuple{192, 80, 4, 2}})
    checkAgainstHandWritten(FragmentLayout::mmaC(M, N, wm * wn * 32, wm, wn, atom));
  for (auto [rows, cols, threads, vec] :
       {std::tuple{4, 1024, 128, 8}, std::tuple{2, 2048, 256, 8}, std::tuple{64, 64, 128, 4},
        std::tuple{128, 32, 128, 8}, std::tuple{96, 96, 128, 4}, std::tuple{1, 384, 128, 1},
        std::tuple{128, 24, 64, 8}, std::tuple{128, 160, 256, 2}}) {
    bool ok = false;
    FragmentLayout l = FragmentLayout::blocked(rows, cols, threads, vec, ok);
    REQUIRE(ok);
    checkAgainstHandWritten(l);
  }
}

// dequant_i4 on fragments (ops/Dequant.cpp) derives the unpacked tile's layout from the packed
// one: the same threads per row, the vector and the columns doubled, so that register 2r + b
// of a thread holds column 2c + b of the row whose column c its packed register r holds.
TEST_CASE("blockedWith doubling the vector doubles every register in place", "[tilelayout]") {
  for (auto [rows, cols, threads, vec] : {std::tuple{8, 512, 128, 16}, std::tuple{4, 64, 64, 4},
                                          std::tuple{32, 4, 128, 1}, std::tuple{16, 32, 128, 4}}) {
    bool ok = false;
    FragmentLayout packed = FragmentLayout::blocked(rows, cols, threads, vec, ok);
    REQUIRE(ok);
    FragmentLayout unpacked =
        FragmentLayout::blockedWith(rows, cols * 2, threads, packed.tpr, packed.vec * 2, ok, packed.replicas);
    REQUIRE(ok);
    checkAgainstHandWritten(unpacked);
    REQUIRE(unpacked.registers() == 2 * packed.registers());
    for (int64_t tid = 0; tid < threads; ++tid)
      for (int64_t r = 0; r < packed.registers(); ++r)
        for (int64_t b = 0; b < 2; ++b) {
          CHECK(unpacked.rowAt(tid, 2 * r + b) == packed.rowAt(tid, r));
          CHECK(unpacked.colAt(tid, 2 * r + b) == 2 * packed.colAt(tid, r) + b);
        }
  }
  // A thread count the threads per row do not divide has no such layout.
  bool ok = true;
  FragmentLayout::blockedWith(8, 64, 128, 3, 2, ok);
  CHECK_FALSE(ok);
}

TEST_CASE("row spread is read off the fragment: a quad per warp for mma, tpr lanes for blocked",
          "[tilelayout]") {
  Fragment atom = makeMmaM16N8K16FragmentC();
  FragmentLayout::RowSpread s = FragmentLayout::mmaC(128, 128, 256, 2, 4, atom).rowSpread(32);
  CHECK(s.lanes == 4);
  CHECK(s.warps == 4);
  // Blocked rows lie in tpr consecutive threads, whole warps of them when tpr > warpSize.
  bool ok = false;
  for (auto [rows, cols, threads, vec] : {std::tuple{2, 2048, 256, 8}, std::tuple{64, 64, 128, 4},
                                          std::tuple{1, 384, 128, 1}})
    for (int warpSize : {32, 64}) {
      FragmentLayout l = FragmentLayout::blocked(rows, cols, threads, vec, ok);
      REQUIRE(ok);
      s = l.rowSpread(warpSize);
      CHECK(s.lanes == std::min(l.tpr, warpSize));
      CHECK(s.warps == std::max(1, l.tpr / warpSize));
    }
}

TEST_CASE("mma accumulator family matches the algebraic block fragment", "[tilelayout]") {
  for (auto [M, N, wm, wn] : {std::tuple{128, 128, 2, 2}, std::tuple{128, 128, 4, 1},
                              std::tuple{64, 64, 1, 8}, std::tuple{128, 256, 2, 4}}) {
    FragmentLayout l = FragmentLayout::mmaC(M, N, wm * wn * 32, wm, wn, makeMmaM16N8K16FragmentC());
    checkCoversOnce(l);
    Fragment f = makeMmaBlockFragmentC(M, N, wm, wn);
    REQUIRE(f.registerCount() == l.registers());
    for (int64_t t = 0; t < l.threads; ++t)
      for (int64_t r = 0; r < l.registers(); ++r) {
        Fragment::Location loc = f.evaluate({l.rowAt(t, r), l.colAt(t, r)});
        INFO("M=" << M << " N=" << N << " warps " << wm << "x" << wn << " t=" << t << " r=" << r);
        CHECK(loc.thread == t);
        CHECK(loc.reg == r);
      }
  }
}

TEST_CASE("blocked family covers its tile once with contiguous vectors", "[tilelayout]") {
  for (auto [rows, cols, threads, vec] : {std::tuple{4, 1024, 128, 8}, std::tuple{2, 2048, 256, 8},
                                          std::tuple{64, 64, 128, 4}, std::tuple{128, 32, 128, 8}}) {
    bool ok = false;
    FragmentLayout l = FragmentLayout::blocked(rows, cols, threads, vec, ok);
    REQUIRE(ok);
    checkCoversOnce(l);
    // Registers r..r+vec-1 of a thread are consecutive columns of one row.
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t r = 0; r < l.registers(); r += l.vec)
        for (int64_t v = 1; v < l.vec; ++v) {
          CHECK(l.rowAt(t, r + v) == l.rowAt(t, r));
          CHECK(l.colAt(t, r + v) == l.colAt(t, r) + v);
        }
    // A row is held by tpr consecutive threads (so lane shuffles can reduce it).
    for (int64_t t = 0; t < threads; ++t)
      CHECK(l.rowAt(t, 0) == l.rowAt(t - t % l.tpr, 0));
  }
}

TEST_CASE("row layouts hold the rows their full layout's registers are in", "[tilelayout]") {
  bool ok = false;
  for (FragmentLayout full : {FragmentLayout::mmaC(128, 64, 256, 8, 1, makeMmaM16N8K16FragmentC()),
                              FragmentLayout::mmaC(64, 64, 256, 1, 8, makeMmaM16N8K16FragmentC()),
                              FragmentLayout::blocked(4, 1024, 128, 8, ok)}) {
    FragmentLayout row = full.rowLayout();
    for (int64_t t = 0; t < full.threads; ++t)
      for (int64_t r = 0; r < full.registers(); ++r) {
        // rowRegister(r) is emitted as C++; evaluate the same mapping through rowAt.
        std::set<int64_t> candidates;
        for (int64_t q = 0; q < row.registers(); ++q)
          if (row.rowAt(t, q) == full.rowAt(t, r))
            candidates.insert(q);
        CHECK(candidates.size() == 1);
      }
  }
}

TEST_CASE("shared swizzle agrees with the device library and is conflict-free", "[tilelayout]") {
  auto check = [](auto deviceLayout, int64_t rows, int64_t cols) {
    SharedLayout l = SharedLayout::swizzled(rows, cols, 16);
    std::set<int64_t> offsets;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        CHECK(l.offset(i, j) == deviceLayout.offset(int(i), int(j)));
        offsets.insert(l.offset(i, j));
      }
    CHECK(int64_t(offsets.size()) == rows * cols); // a bijection
    // ldmatrix reads one 16-byte chunk column of 8 consecutive rows: 8 distinct bank groups.
    for (int64_t r0 = 0; r0 + 8 <= rows; r0 += 8)
      for (int64_t c = 0; c < cols; c += 8) {
        std::set<int64_t> groups;
        for (int64_t i = r0; i < r0 + 8; ++i)
          groups.insert((l.offset(i, c) * 2 / 16) % 8);
        CHECK(groups.size() == 8);
      }
  };
  check(tl::SwizzledLayout<128, 32, 16>{}, 128, 32);
  check(tl::SwizzledLayout<32, 128, 16>{}, 32, 128);
  check(tl::SwizzledLayout<64, 64, 16>{}, 64, 64);
  check(tl::SwizzledLayout<128, 16, 16>{}, 128, 16);
}

namespace {

// The compiler's layout of a [rows, cols] tile against tl::SwizzledLayout<Rows, cols, bits>
// (the device side does not depend on Rows).
template <int Bits, int... Widths>
void checkAgainstDevice(std::integer_sequence<int, Widths...>) {
  auto one = [](auto device, int64_t cols) {
    SharedLayout l = SharedLayout::swizzled(32, cols, Bits);
    INFO("cols=" << cols << " bits=" << Bits << " layout " << l.str());
    CHECK(l.mask == decltype(device)::kMask);
    CHECK(l.rowShift == (l.mask ? decltype(device)::kShift : 0));
    for (int64_t i = 0; i < 32; ++i)
      for (int64_t j = 0; j < cols; ++j)
        REQUIRE(l.offset(i, j) == decltype(device)::offset(int(i), int(j)));
  };
  (one(tl::SwizzledLayout<32, 8 * (Widths + 1), Bits>{}, 8 * (Widths + 1)), ...);
}

} // namespace

// Regression: rows of 12 chunks (96-wide f16 tiles) were XORed with row & 7, sending chunks
// 8-11 past the row (gemm block_N = 96 wrong, attention dim = 96 faulting).
TEST_CASE("shared swizzle is a bijection within its tile for every width", "[tilelayout]") {
  for (int bits : {16, 32}) // f16 and bf16 share the 16-bit layout
    for (int64_t cols = 8; cols <= 256; cols += 8)
      for (int64_t rows : {1, 8, 16, 24, 32, 48, 64, 96, 128, 256}) {
        SharedLayout l = SharedLayout::swizzled(rows, cols, bits);
        INFO("rows=" << rows << " cols=" << cols << " bits=" << bits << " layout " << l.str());
        std::vector<bool> hit(size_t(rows * cols), false);
        bool inRows = true, once = true;
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            int64_t o = l.offset(i, j);
            inRows &= o >= i * cols && o < (i + 1) * cols; // a row stays in its own row
            if (o >= 0 && o < rows * cols) {
              once &= !hit[size_t(o)];
              hit[size_t(o)] = true;
            }
          }
        REQUIRE(inRows);
        REQUIRE(once);
        // 16-byte vectors (cp.async, ldmatrix rows) stay contiguous.
        int64_t perChunk = 128 / bits;
        for (int64_t i = 0; i < std::min<int64_t>(rows, 8); ++i)
          for (int64_t j = 0; j + perChunk <= cols; j += perChunk)
            for (int64_t v = 1; v < perChunk; ++v)
              REQUIRE(l.offset(i, j + v) == l.offset(i, j) + v);
        // The 8 rows of one ldmatrix phase (same logical chunk) hit 8 distinct bank groups.
        if (rows >= 8)
          for (int64_t j = 0; j < cols; j += perChunk) {
            std::set<int64_t> groups;
            for (int64_t i = 0; i < 8; ++i)
              groups.insert((l.offset(i, j) * bits / 8 / 16) % 8);
            CHECK(groups.size() == 8);
          }
      }
}

TEST_CASE("shared swizzle agrees with the device library at every width", "[tilelayout]") {
  checkAgainstDevice<16>(std::make_integer_sequence<int, 32>{});
  checkAgainstDevice<32>(std::make_integer_sequence<int, 32>{});
}

TEST_CASE("shared swizzle keeps the 64- and 128-wide layouts", "[tilelayout]") {
  // The fast layouts of the common tiles must not change (performance).
  CHECK(SharedLayout::swizzled(128, 64, 16).mask == 7);
  CHECK(SharedLayout::swizzled(128, 64, 16).rowShift == 0);
  CHECK(SharedLayout::swizzled(64, 128, 16).mask == 7);
  CHECK(SharedLayout::swizzled(128, 32, 16).mask == 3);
  CHECK(SharedLayout::swizzled(128, 32, 16).rowShift == 1);
  CHECK(SharedLayout::swizzled(128, 16, 16).mask == 1);
  CHECK(SharedLayout::swizzled(128, 16, 16).rowShift == 2);
  CHECK(SharedLayout::swizzled(64, 96, 16).mask == 3); // 12 chunks: groups of 4
  CHECK(SharedLayout::swizzled(64, 80, 16).mask == 1); // 10 chunks: groups of 2
  CHECK(SharedLayout::swizzled(64, 40, 16).mask == 0); // 5 chunks: odd, no swizzle
}

TEST_CASE("FREE level picks the fewest registers, then fewer copies, then wider vectors",
          "[tilelayout]") {
  bool ok = false;
  // What 16-byte vectors cover keeps its layout.
  FragmentLayout full = FragmentLayout::fewestRegisters(4, 1024, 128, 8, ok);
  REQUIRE(ok);
  bool fits = false;
  CHECK(full == FragmentLayout::blocked(4, 1024, 128, 8, fits));
  // Two rows of 128: vectors of 4 leave threads idle; vectors of 2 cover the block.
  FragmentLayout two = FragmentLayout::fewestRegisters(2, 128, 128, 4, ok);
  REQUIRE(ok);
  CHECK(two.vec == 2);
  CHECK(two.replicas == 1);
  CHECK(two.registers() == 2);
  // 24 elements on 128 threads: 8 threads of 3 elements (1 per access), 16 copies. Each
  // element is held once per copy, and replica 0 of each is in the first group of 8 threads.
  FragmentLayout small = FragmentLayout::fewestRegisters(1, 24, 128, 4, ok);
  REQUIRE(ok);
  CHECK(small.replicas == 16);
  CHECK(small.registers() == 3);
  std::map<int64_t, int> held;
  for (int64_t t = 0; t < 128; ++t)
    for (int64_t r = 0; r < small.registers(); ++r)
      ++held[small.colAt(t, r)];
  CHECK(held.size() == 24);
  for (auto &[j, count] : held)
    CHECK(count == 16);
  CHECK(small.replicaGuard("t", "r") == "t / 8 == 0");
  // One element on a block: every thread holds it.
  FragmentLayout one = FragmentLayout::fewestRegisters(1, 1, 96, 4, ok);
  REQUIRE(ok);
  CHECK(one.replicas == 96);
  CHECK(one.registers() == 1);
}

namespace {

// The compiler's wgmma operand layout against tl::GmmaLayout: equal on every element, a
// bijection, 16-byte chunks whole, and the hardware swizzle inside every panel: the chunk of
// (row, col) is col's chunk XOR the address bits above the span (the 32/64/128-byte modes'
// definition on byte addresses of a tile starting on the period).
template <int Rows, int Cols>
void checkWgmmaLayout() {
  using Device = tl::GmmaLayout<Rows, Cols, 16>;
  std::optional<SharedLayout> l = SharedLayout::wgmmaOperand(Rows, Cols, 16);
  INFO("rows=" << Rows << " cols=" << Cols);
  REQUIRE(l.has_value() == Device::kValid);
  if (!l)
    return;
  CHECK(l->panelCols == Device::kPanelCols);
  CHECK(l->alignBytes() == 1024);
  std::set<int64_t> offsets;
  int64_t span = Device::kSpanBytes;
  for (int64_t i = 0; i < Rows; ++i)
    for (int64_t j = 0; j < Cols; ++j) {
      int64_t o = l->offset(i, j);
      REQUIRE(o == Device::offset(int(i), int(j)));
      offsets.insert(o);
      // Unswizzled byte address inside the panel, then the hardware's XOR of the 16-byte
      // chunk bits [4, log2 span) with the bits just above the 128-byte line ([7, ...)).
      int64_t panelBase = (j / Device::kPanelCols) * Rows * span;
      int64_t plain = i * span + (j % Device::kPanelCols) * 2;
      int64_t chunks = span / 16;
      int64_t swizzled = plain ^ (((plain >> 7) & (chunks - 1)) << 4);
      REQUIRE(o * 2 == panelBase + swizzled);
    }
  CHECK(int64_t(offsets.size()) == int64_t(Rows) * Cols);
  std::string expr = l->offsetExpr("r", "c");
  CHECK(!expr.empty());
}

} // namespace

TEST_CASE("wgmma operand layouts match the device library and the hardware swizzle", "[tilelayout]") {
  checkWgmmaLayout<64, 16>();   // 32-byte rows
  checkWgmmaLayout<128, 32>();  // 64-byte rows
  checkWgmmaLayout<64, 64>();   // 128-byte rows
  checkWgmmaLayout<32, 128>();  // two panels
  checkWgmmaLayout<16, 192>();  // three panels
  checkWgmmaLayout<64, 256>();
  checkWgmmaLayout<8, 64>();
  checkWgmmaLayout<64, 48>();   // 96-byte rows: three 32-byte panels
  checkWgmmaLayout<32, 96>();   // 192-byte rows: three 64-byte panels
  checkWgmmaLayout<64, 80>();   // 160-byte rows: five 32-byte panels
  checkWgmmaLayout<64, 12>();   // 24-byte rows: none
  CHECK(SharedLayout::wgmmaOperand(64, 48, 16)->panelCols == 16);
  CHECK(SharedLayout::wgmmaOperand(32, 96, 16)->panelCols == 32);
  checkWgmmaLayout<12, 64>();   // rows not a multiple of 8: none
  CHECK(!SharedLayout::wgmmaOperand(64, 8, 16));
}

TEST_CASE("an annotated shared layout is compared with the inferred ones by offsets", "[tilelayout][annotate]") {
  // The swizzle ldmatrix reads on a [64, 32] f16 tile, written as annotate_layout takes it.
  auto annotate = [](auto map) {
    Layout index = Layout::make({64, 32}, map);
    Layout address = Layout::make({64, 32}, [&](llvm::ArrayRef<IntExpr> idx) {
      IndexList place = index.apply(idx);
      return IndexList{place[0] * 32 + place[1]};
    });
    return SharedLayout::fromAnnotation(64, 32, 16,
                                        std::make_shared<AnnotatedLayout>(AnnotatedLayout{index, address, 8, 1, {}}));
  };
  SharedLayout spelled = annotate([](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[0], ((idx[1] / 8) ^ ((idx[0] / 2) % 4)) * 8 + idx[1] % 8};
  });
  SharedLayout swizzled = SharedLayout::swizzled(64, 32, 16);
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 32; ++j)
      REQUIRE(spelled.offset(i, j) == swizzled.offset(i, j));
  CHECK(spelled.sameOffsets(swizzled));
  CHECK(swizzled.sameOffsets(spelled));
  CHECK(spelled.sameOffsets(swizzled)); // the remembered answer
  CHECK_FALSE(spelled.sameOffsets(SharedLayout::rowMajor(64, 32, 16)));
  CHECK_FALSE(spelled == swizzled); // a different layout object all the same
  CHECK(spelled.offsetExpr("r", "c") == "r * 32 + ((c / 8) ^ ((r / 2) % 4)) * 8 + c % 8");
  // Vectors only as wide as the annotation keeps runs together.
  CHECK(spelled.keepsVectors(8));
  CHECK_FALSE(spelled.keepsVectors(16));
  CHECK(swizzled.keepsVectors(16));
  SharedLayout elements = annotate([](llvm::ArrayRef<IntExpr> idx) {
    return IndexList{idx[0], idx[1] ^ (idx[0] % 8)};
  });
  CHECK_FALSE(elements.sameOffsets(swizzled));
}

// The transposed accumulator of gemm_sr_runs_t, against the placement written out from the
// mma.m16n8 C fragment (PTX ISA: c0, c1 at row g, columns 2t, 2t + 1; c2, c3 at row g + 8) with
// the tile's rows g and g + 8 being weight rows 8w + g and 8w + g + N / 2 and its columns the
// activation rows 8j..8j + 7: every (thread, register) holds the element the formula says, the
// lowering's printed inverse included, and the layout is a bijection.
TEST_CASE("mma transposed-runs accumulator layout", "[layout]") {
  for (auto [rows, threads] : {std::pair<int64_t, int>{8, 32}, {16, 128}, {24, 64}, {16, 256}}) {
    int64_t cols = threads / 2, half = cols / 2;
    FragmentLayout l = FragmentLayout::mmaTransposedRuns(rows, cols, threads, 32);
    REQUIRE(l.kind == FragmentLayout::Generic);
    REQUIRE(l.registers() == rows / 8 * 4);
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t tid = 0; tid < threads; ++tid)
      for (int64_t r = 0; r < l.registers(); ++r) {
        int64_t w = tid / 32, g = (tid % 32) / 4, t = tid % 4, j = r / 4, p = (r / 2) % 2, e = r % 2;
        int64_t m = 8 * j + 2 * t + e, n = 8 * w + g + p * half;
        INFO(l.str() << " tid=" << tid << " r=" << r);
        REQUIRE(l.rowAt(tid, r) == m);
        REQUIRE(l.colAt(tid, r) == n);
        seen.insert({m, n});
      }
    REQUIRE(int64_t(seen.size()) == rows * cols);
    REQUIRE(l == FragmentLayout::mmaTransposedRuns(rows, cols, threads, 32));
    REQUIRE(!(l == FragmentLayout::mmaTransposedRuns(rows + 8, cols, threads, 32)));
  }
}

// A gemm whose warp groups split K (ops/Gemm.cpp, inferSplitRuns): B's blocked layout with its
// columns in slices over thread groups, and the accumulator's partial sums over the groups.
TEST_CASE("blocked layout with column slices over thread groups", "[layout]") {
  for (auto [rows, cols, threads, split] : {std::tuple<int64_t, int64_t, int, int>{8, 1024, 128, 4},
                                            {16, 512, 128, 4}, {32, 512, 256, 4}, {16, 256, 64, 2}}) {
    bool ok = false;
    FragmentLayout l = FragmentLayout::blockedWith(rows, cols, threads, 4, 32, ok, 1, split);
    REQUIRE(ok);
    int groupThreads = threads / split;
    int64_t slice = cols / split;
    bool whole = false;
    FragmentLayout part = FragmentLayout::blockedWith(rows, slice, groupThreads, 4, 32, whole);
    REQUIRE(whole);
    REQUIRE(l.registers() == part.registers());
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t tid = 0; tid < threads; ++tid)
      for (int64_t r = 0; r < l.registers(); ++r) {
        INFO(l.str() << " tid=" << tid << " r=" << r);
        // Thread group p holds slice p as a blocked tile of its own.
        int64_t p = tid / groupThreads, t = tid % groupThreads;
        REQUIRE(l.rowAt(tid, r) == part.rowAt(t, r));
        REQUIRE(l.colAt(tid, r) == p * slice + part.colAt(t, r));
        seen.insert({l.rowAt(tid, r), l.colAt(tid, r)});
      }
    REQUIRE(int64_t(seen.size()) == rows * cols);
    REQUIRE(!(l == part));
    REQUIRE(!(l == FragmentLayout::blockedWith(rows, cols, threads, 4, 32, ok, 1, 1)));
  }
  bool ok = true;
  (void)FragmentLayout::blockedWith(8, 96, 128, 4, 32, ok, 1, 4); // 24-column slices hold no run of 32
  REQUIRE(!ok);
}

TEST_CASE("partial sums over thread groups", "[layout]") {
  FragmentLayout part = FragmentLayout::mmaTransposedRuns(8, 16, 32, 32);
  FragmentLayout l = FragmentLayout::partialSums(part, 4);
  REQUIRE(l.kind == FragmentLayout::Generic);
  REQUIRE(l.partials == 4);
  REQUIRE(l.threads == 128);
  REQUIRE(l.registers() == part.registers());
  for (int64_t tid = 0; tid < 128; ++tid)
    for (int64_t r = 0; r < l.registers(); ++r) {
      INFO("tid=" << tid << " r=" << r);
      REQUIRE(l.rowAt(tid, r) == part.rowAt(tid % 32, r));
      REQUIRE(l.colAt(tid, r) == part.colAt(tid % 32, r));
      // The group a register's partial sum belongs to: where the combining copy puts it.
      REQUIRE(l.replicaOf(std::to_string(tid), std::to_string(r)).find("tid") == std::string::npos);
    }
  FragmentLayout s = l.summed();
  REQUIRE(s.partials == 1);
  REQUIRE(s != l);
  REQUIRE(s.registers() == l.registers());
  REQUIRE(s.str().find("summed, held by 4 thread groups") != std::string::npos);
  REQUIRE(l.str().find("partial sums over 4 thread groups") != std::string::npos);
}
