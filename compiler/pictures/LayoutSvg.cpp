#include "pictures/LayoutSvg.h"
#include "pictures/Svg.h"

#include "target/TargetInfo.h"

#include <algorithm>
#include <set>
#include <string>

namespace tlc::pictures {

namespace {

constexpr int kLabelSize = 9; // the cells' font size (Svg.cpp's style sheet)
constexpr int64_t kCellHeight = 14;
constexpr int64_t kOverviewPx = 512;    // the longer side of a fragment's whole-tile overview
constexpr int64_t kLeft = 16;           // left margin
constexpr int64_t kIndexGutter = 30;    // row numbers left of a grid
constexpr int64_t kSwatchesPerLine = 8;
constexpr int64_t kSwatchWidth = 175;
// The banks of shared memory: 32 banks of 4 bytes, so a 128-byte line touches each once; a
// 16-byte access (ldmatrix row, cp.async) covers one 16-byte chunk of four banks.
constexpr int64_t kBankBytes = 4, kBanks = 32, kChunkBytes = 16;
constexpr int64_t kChunksPerLine = kBankBytes * kBanks / kChunkBytes;

std::string str(int64_t v) { return std::to_string(v); }

std::string shapeText(const ftg::Buffer &b) {
  std::string s = "[";
  for (size_t i = 0; i < b.shape.size(); ++i)
    s += (i ? ", " : "") + (b.shape[i] ? str(*b.shape[i]) : std::string("?"));
  return s + "]";
}

std::string range(int64_t first, int64_t last) {
  return first == last ? str(first) : str(first) + "-" + str(last);
}

// The buffer's name, scope, dtype and shape, its layout and the rule that fixed it.
int64_t drawHeading(SvgWriter &svg, const ftg::Buffer &b, llvm::StringRef layout, int64_t y) {
  svg.text(kLeft, y, b.name + ": " + scopeName(b.scope).str() + " " + dtypeName(b.dtype).str() + shapeText(b),
           14, Anchor::Start, /*bold=*/true);
  y += 17;
  svg.text(kLeft, y, "layout " + layout.str(), 11);
  y += 15;
  if (!b.layoutReason.empty()) {
    svg.text(kLeft, y, "fixed by: " + b.layoutReason, 11, Anchor::Start, false, "#444");
    y += 15;
  }
  return y;
}

// Column numbers above and row numbers left of a grid whose first cell is at (x, y); as
// many as fit (every one, or every 2nd, 4th, ...).
void drawIndices(SvgWriter &svg, int64_t x, int64_t y, int64_t rows, int64_t cols, int64_t cellW,
                 bool columns) {
  if (columns) {
    int64_t step = 1;
    while (SvgWriter::textWidth(str(cols - 1).size(), 8) + 2 > cellW * step)
      step *= 2;
    for (int64_t c = 0; c < cols; c += step)
      svg.text(x + c * cellW + cellW / 2, y - 3, str(c), 8, Anchor::Middle, false, "#555");
  }
  for (int64_t r = 0; r < rows; ++r)
    svg.text(x - 3, y + r * kCellHeight + kCellHeight - 4, str(r), 8, Anchor::End, false, "#555");
}

// Swatches of a legend, kSwatchesPerLine per line, from y; returns the y below them.
int64_t drawSwatches(SvgWriter &svg, const std::vector<std::pair<unsigned, std::string>> &items,
                     int64_t y) {
  for (size_t i = 0; i < items.size(); ++i) {
    int64_t x = kLeft + int64_t(i % kSwatchesPerLine) * kSwatchWidth;
    int64_t top = y + int64_t(i / kSwatchesPerLine) * 16;
    svg.rect(x, top, 12, 12, paletteColour(items[i].first), "#888", 0.5);
    svg.text(x + 16, top + 10, items[i].second, 10);
  }
  return y + int64_t((items.size() + kSwatchesPerLine - 1) / kSwatchesPerLine) * 16 + 4;
}

int64_t drawFragment(SvgWriter &svg, const ftg::Buffer &b, int warpSize, int64_t y) {
  const FragmentLayout &layout = *b.fragment;
  const Fragment &f = layout.fragment();
  Shape shape = f.shape();
  bool oneDim = shape.size() == 1;
  int64_t rows = shape[0], cols = oneDim ? 1 : shape[1];
  auto at = [&](int64_t r, int64_t c, int64_t rep = 0) {
    return oneDim ? f.evaluate({r}, rep) : f.evaluate({r, c}, rep);
  };
  auto where = [&](int64_t r, int64_t c) {
    return oneDim ? "[" + str(r) + "]" : "[" + str(r) + ", " + str(c) + "]";
  };
  svg.comment("fragment " + b.name + " " + shapeText(b) + ": " + layout.str());
  y = drawHeading(svg, b, layout.str(), y);

  std::set<int64_t> warps;
  int64_t detailRows = std::min(rows, kFragmentDetailRows), detailCols = std::min(cols, kFragmentDetailCols);
  bool corner = detailRows < rows || detailCols < cols;
  if (corner) {
    // The whole tile by warp, one small cell per element (each side within kOverviewPx where
    // it can be, so a long thin tile is still visible); runs of one warp along a row are one
    // rectangle, so the picture grows with the runs, not the elements.
    int64_t pxW = std::clamp<int64_t>(kOverviewPx / cols, 1, 8), pxH = std::clamp<int64_t>(kOverviewPx / rows, 1, 8);
    svg.text(kLeft, y + 2, "the whole " + str(rows) + " x " + str(cols) +
                               " tile by warp (one cell per element); the dashed box is the corner drawn below",
             11);
    y += 10;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t start = 0, warp = at(r, 0).thread / warpSize;
      for (int64_t c = 1; c <= cols; ++c) {
        int64_t w = c < cols ? at(r, c).thread / warpSize : -1;
        if (w == warp)
          continue;
        warps.insert(warp);
        svg.rect(kLeft + start * pxW, y + r * pxH, (c - start) * pxW, pxH, paletteColour(unsigned(warp)));
        start = c;
        warp = w;
      }
    }
    svg.rect(kLeft, y, cols * pxW, rows * pxH, "none", "#666", 0.5);
    svg.rect(kLeft, y, detailCols * pxW, detailRows * pxH, "none", "#000", 1.5, /*dashed=*/true);
    y += rows * pxH + 20;
    svg.text(kLeft, y, "corner: rows " + range(0, detailRows - 1) +
                           (oneDim ? "" : ", columns " + range(0, detailCols - 1)) + " of the " +
                           (oneDim ? str(rows) + "-element" : str(rows) + " x " + str(cols)) + " tile",
             11, Anchor::Start, true);
    y += 6;
  }

  // The corner element by element: colour by warp, label T<thread>:r<register>.
  size_t widest = 0;
  for (int64_t r = 0; r < detailRows; ++r)
    for (int64_t c = 0; c < detailCols; ++c) {
      Fragment::Location loc = at(r, c);
      widest = std::max(widest, ("T" + str(loc.thread) + ":r" + str(loc.reg)).size());
    }
  int64_t cellW = std::max<int64_t>(SvgWriter::textWidth(widest, kLabelSize) + 4, 20);
  int64_t gx = kLeft + kIndexGutter, gy = y + (oneDim ? 8 : 16);
  drawIndices(svg, gx, gy, detailRows, detailCols, cellW, !oneDim);
  svg.beginCells();
  for (int64_t r = 0; r < detailRows; ++r)
    for (int64_t c = 0; c < detailCols; ++c) {
      Fragment::Location loc = at(r, c);
      int64_t warp = loc.thread / warpSize;
      warps.insert(warp);
      svg.cell(gx + c * cellW, gy + r * kCellHeight, cellW, kCellHeight, paletteColour(unsigned(warp)),
               "T" + str(loc.thread) + ":r" + str(loc.reg),
               b.name + where(r, c) + ": thread " + str(loc.thread) + " (warp " + str(warp) + ", lane " +
                   str(loc.thread % warpSize) + "), register " + str(loc.reg));
    }
  svg.endCells();
  y = gy + detailRows * kCellHeight + 16;

  // Legend.
  svg.text(kLeft, y, "colour: the warp (" + str(warpSize) + " threads) that holds the element; T<t>:r<i>: thread t, "
                     "register i of its " + str(layout.registers()) + " (hover over an element for its warp and lane)",
           10, Anchor::Start, false, "#333");
  y += 8;
  std::vector<std::pair<unsigned, std::string>> items;
  for (int64_t w : warps)
    items.push_back({unsigned(w), "warp " + str(w) + ": threads " + range(w * warpSize, (w + 1) * warpSize - 1)});
  y = drawSwatches(svg, items, y);
  if (warps.size() > 12) {
    svg.text(kLeft, y + 8, "(colours repeat after 12 warps)", 10, Anchor::Start, false, "#333");
    y += 14;
  }
  if (f.replicate() > 1) {
    std::string copies;
    for (int64_t rep = 1; rep < f.replicate() && rep < 9; ++rep)
      copies += (rep > 1 ? ", " : "") + str(at(0, 0, rep).thread);
    if (f.replicate() > 9)
      copies += ", ...";
    svg.text(kLeft, y + 8, "each element is held by " + str(f.replicate()) +
                               " threads in the same register; labels name the first: element " + where(0, 0) +
                               " is also in thread" + (f.replicate() > 2 ? "s " : " ") + copies,
             10, Anchor::Start, false, "#333");
    y += 14;
  }
  return y + 18;
}

int64_t drawShared(SvgWriter &svg, const ftg::Buffer &b, int64_t y) {
  const SharedLayout &l = *b.shared;
  std::string layout = l.str();
  if (b.stages > 1)
    layout += ", " + str(b.stages) + " stages (stage 0 drawn)";
  svg.comment("shared " + b.name + " " + shapeText(b) + ": " + layout);
  y = drawHeading(svg, b, layout, y);
  int64_t detailRows = std::min(l.rows, kSharedDetailRows), detailCols = std::min(l.cols, kSharedDetailCols);
  std::string view = b.shape.size() > 2 ? " (the [" + str(l.rows) + ", " + str(l.cols) +
                                              "] view: leading dimensions folded into rows)"
                                        : "";
  if (detailRows < l.rows || detailCols < l.cols)
    svg.text(kLeft, y, "corner: rows " + range(0, detailRows - 1) + ", columns " + range(0, detailCols - 1) +
                           " of " + str(l.rows) + " x " + str(l.cols) + view,
             11, Anchor::Start, true);
  else if (!view.empty())
    svg.text(kLeft, y, "every element" + view, 11, Anchor::Start, true);
  y += 6;

  int64_t cellW = 20;
  int64_t gx = kLeft + kIndexGutter, gy = y + 16;
  drawIndices(svg, gx, gy, detailRows, detailCols, cellW, true);
  svg.beginCells();
  for (int64_t r = 0; r < detailRows; ++r)
    for (int64_t c = 0; c < detailCols; ++c) {
      int64_t offset = l.offset(r, c);
      int64_t byte = offset * l.elemBits / 8;
      int64_t bank = byte / kBankBytes % kBanks, chunk = byte / kChunkBytes % kChunksPerLine;
      svg.cell(gx + c * cellW, gy + r * kCellHeight, cellW, kCellHeight, paletteColour(unsigned(chunk)), str(bank),
               b.name + "[" + str(r) + ", " + str(c) + "]: byte " + str(byte) + ", bank " + str(bank) + ", chunk " +
                   str(chunk));
    }
  svg.endCells();
  // The logical 16-byte chunks of a row (what one vector access or ldmatrix row reads).
  int64_t perChunk = std::max<int64_t>(1, kChunkBytes * 8 / l.elemBits);
  for (int64_t c = perChunk; c < detailCols; c += perChunk)
    svg.line(gx + c * cellW, gy, gx + c * cellW, gy + detailRows * kCellHeight, "#333", 1.5);
  y = gy + detailRows * kCellHeight + 16;

  svg.text(kLeft, y, "number: the bank (of 32, 4 bytes each) of the element's first byte; colour: the 16-byte chunk "
                     "of the 128-byte line it lands in; heavy lines: 16-byte chunks of the row as indexed",
           10, Anchor::Start, false, "#333");
  y += 8;
  std::vector<std::pair<unsigned, std::string>> items;
  for (int64_t k = 0; k < kChunksPerLine; ++k)
    items.push_back({unsigned(k), "chunk " + str(k) + ": banks " + range(4 * k, 4 * k + 3)});
  y = drawSwatches(svg, items, y);
  return y + 18;
}

} // namespace

void writeLayoutSvg(llvm::ArrayRef<const ftg::Graph *> graphs, llvm::raw_ostream &os) {
  std::string files;
  for (const ftg::Graph *g : graphs)
    if (files.find(g->sourceName) == std::string::npos)
      files += (files.empty() ? "" : ", ") + g->sourceName;
  SvgWriter svg("tlc layouts: " + files);
  int64_t y = 24;
  svg.text(kLeft, y, "Layouts tlc inferred for " + files + " (tlc --emit=layout-svg; hover over an element for details)",
           13, Anchor::Start, false, "#333");
  y += 28;
  for (const ftg::Graph *g : graphs) {
    const target::TargetInfo &target = *g->target;
    svg.comment("kernel " + g->symbolName());
    svg.text(kLeft, y, "kernel " + g->symbolName() + " (" + g->sourceName + "): " + str(g->threads) +
                           " threads, target " + target.name().str(),
             16, Anchor::Start, true);
    svg.line(kLeft, y + 6, kLeft + 600, y + 6, "#888");
    y += 30;
    bool any = false;
    for (const auto &b : g->buffers) {
      if (b->scope == Scope::Fragment && b->fragment) {
        y = drawFragment(svg, *b, target.warpSize(), y);
        any = true;
      } else if (b->scope == Scope::Shared && b->shared) {
        y = drawShared(svg, *b, y);
        any = true;
      }
    }
    if (!any) {
      svg.text(kLeft, y, "no fragment or shared buffers", 11);
      y += 26;
    }
  }
  svg.finish(os);
}

} // namespace tlc::pictures
