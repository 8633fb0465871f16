// A small SVG writer for tlc's pictures (layouts, recommendations): rectangles, text and lines
// in pixel coordinates, written into a body whose extent is tracked so that the document's
// width and height are known when it is finished. Every piece of text is escaped, so user
// names (buffers, kernels, file paths) cannot break the XML.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace tlc::pictures {

// Text as XML character data or attribute value: & < > " ' escaped; bytes that XML 1.0 does not
// allow (control characters other than tab and newline) become U+FFFD.
std::string escapeXml(llvm::StringRef text);

// Colour `i` of a categorical palette of 12 colours (repeating), for warps, banks, terms.
llvm::StringRef paletteColour(unsigned i);

enum class Anchor { Start, Middle, End };

class SvgWriter {
public:
  // The picture's title (the <title> element, which viewers show as its name).
  explicit SvgWriter(std::string title) : title(std::move(title)), body(bodyText) {}

  void rect(int64_t x, int64_t y, int64_t w, int64_t h, llvm::StringRef fill,
            llvm::StringRef stroke = "", double strokeWidth = 1, bool dashed = false);
  // Text with its baseline at y.
  void text(int64_t x, int64_t y, llvm::StringRef s, int size = 12, Anchor anchor = Anchor::Start,
            bool bold = false, llvm::StringRef fill = "#000");
  void line(int64_t x1, int64_t y1, int64_t x2, int64_t y2, llvm::StringRef stroke,
            double width = 1, bool dashed = false);
  // A group whose tooltip (the <title> viewers show on hover) is `tooltip`; shapes drawn until
  // endGroup() belong to it.
  void beginGroup(llvm::StringRef tooltip);
  void endGroup();
  // Grids of labelled cells (thousands in a picture) are written compactly: the cells between
  // beginCells() and endCells() share their border and font through the document's style sheet,
  // and each carries its tooltip, its fill and its label (centred, 9 px) only.
  void beginCells();
  void cell(int64_t x, int64_t y, int64_t w, int64_t h, llvm::StringRef fill, llvm::StringRef label,
            llvm::StringRef tooltip);
  void endCells();
  // A comment in the SVG text (what a section shows, for people and tests reading the file).
  void comment(llvm::StringRef s);
  // Grows the picture to include (x, y) (text extents are estimated, so callers may pad).
  void extend(int64_t x, int64_t y);

  // The document: XML declaration, <svg> with the extent reached plus a margin, the body.
  void finish(llvm::raw_ostream &os);

  // Estimated width in pixels of `chars` characters at font size `size` (the sans-serif
  // average), for laying out labels without measuring them.
  static int64_t textWidth(size_t chars, int size) { return int64_t(chars) * size * 6 / 10 + 2; }

private:
  std::string title;
  std::string bodyText;
  llvm::raw_string_ostream body;
  int64_t maxX = 0, maxY = 0;
};

} // namespace tlc::pictures
