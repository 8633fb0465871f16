// The layout families the CUDA back end lowers (ir/TileLayout.h) against independent
// definitions: the algebraic fragments of ir/TensorCoreLayouts.h, the device library's
// swizzle (stdlib/tl/swizzle.h), and coverage properties that every family must have.
#include "ir/TensorCoreLayouts.h"
#include "ir/TileLayout.h"

#include "tl/swizzle.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

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

} // namespace

TEST_CASE("mma accumulator family matches the algebraic block fragment", "[tilelayout]") {
  for (auto [M, N, wm, wn] : {std::tuple{128, 128, 2, 2}, std::tuple{128, 128, 4, 1},
                              std::tuple{64, 64, 1, 8}, std::tuple{128, 256, 2, 4}}) {
    FragmentLayout l = FragmentLayout::mmaC(M, N, wm * wn * 32, wm, wn);
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
  for (FragmentLayout full : {FragmentLayout::mmaC(128, 64, 256, 8, 1),
                              FragmentLayout::mmaC(64, 64, 256, 1, 8),
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
