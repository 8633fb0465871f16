#include "pictures/Svg.h"

#include "llvm/Support/Format.h"

#include <algorithm>

namespace tlc::pictures {

namespace {
// A number as SVG wants it: "1.5", not raw_ostream's "1.500000e+00".
std::string num(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}
} // namespace

std::string escapeXml(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default:
      // XML 1.0 has no representation for these, not even as character references.
      if (u < 0x20 && c != '\t' && c != '\n')
        out += "\xEF\xBF\xBD";
      else
        out += c;
    }
  }
  return out;
}

llvm::StringRef paletteColour(unsigned i) {
  // Twelve hues distinguishable side by side, light enough for black labels on top.
  static const char *const kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                                         "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                                         "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

void SvgWriter::extend(int64_t x, int64_t y) {
  maxX = std::max(maxX, x);
  maxY = std::max(maxY, y);
}

void SvgWriter::rect(int64_t x, int64_t y, int64_t w, int64_t h, llvm::StringRef fill,
                     llvm::StringRef stroke, double strokeWidth, bool dashed) {
  body << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h
       << "\" fill=\"" << escapeXml(fill) << "\"";
  if (!stroke.empty()) {
    body << " stroke=\"" << escapeXml(stroke) << "\" stroke-width=\"" << num(strokeWidth) << "\"";
    if (dashed)
      body << " stroke-dasharray=\"4 2\"";
  }
  body << "/>\n";
  extend(x + w, y + h);
}

void SvgWriter::text(int64_t x, int64_t y, llvm::StringRef s, int size, Anchor anchor, bool bold,
                     llvm::StringRef fill) {
  body << "<text x=\"" << x << "\" y=\"" << y << "\" font-size=\"" << size << "\"";
  if (anchor != Anchor::Start)
    body << " text-anchor=\"" << (anchor == Anchor::Middle ? "middle" : "end") << "\"";
  if (bold)
    body << " font-weight=\"bold\"";
  if (fill != "#000")
    body << " fill=\"" << escapeXml(fill) << "\"";
  body << ">" << escapeXml(s) << "</text>\n";
  int64_t w = textWidth(s.size(), size);
  int64_t right = anchor == Anchor::Start ? x + w : anchor == Anchor::Middle ? x + w / 2 : x;
  extend(right, y + size / 3);
}

void SvgWriter::line(int64_t x1, int64_t y1, int64_t x2, int64_t y2, llvm::StringRef stroke,
                     double width, bool dashed) {
  body << "<line x1=\"" << x1 << "\" y1=\"" << y1 << "\" x2=\"" << x2 << "\" y2=\"" << y2
       << "\" stroke=\"" << escapeXml(stroke) << "\" stroke-width=\"" << num(width) << "\"";
  if (dashed)
    body << " stroke-dasharray=\"4 2\"";
  body << "/>\n";
  extend(std::max(x1, x2), std::max(y1, y2));
}

void SvgWriter::beginGroup(llvm::StringRef tooltip) {
  body << "<g><title>" << escapeXml(tooltip) << "</title>";
}

void SvgWriter::endGroup() { body << "</g>\n"; }

void SvgWriter::beginCells() { body << "<g class=\"cells\">\n"; }

void SvgWriter::cell(int64_t x, int64_t y, int64_t w, int64_t h, llvm::StringRef fill, llvm::StringRef label,
                     llvm::StringRef tooltip) {
  body << "<g><title>" << escapeXml(tooltip) << "</title><rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w
       << "\" height=\"" << h << "\" fill=\"" << escapeXml(fill) << "\"/><text x=\"" << x + w / 2 << "\" y=\""
       << y + h - 4 << "\">" << escapeXml(label) << "</text></g>\n";
  extend(x + w, y + h);
}

void SvgWriter::endCells() { body << "</g>\n"; }

void SvgWriter::comment(llvm::StringRef s) {
  // "--" may not occur inside an XML comment.
  std::string safe = escapeXml(s);
  for (size_t p; (p = safe.find("--")) != std::string::npos;)
    safe.replace(p, 2, "- -");
  body << "<!-- " << safe << " -->\n";
}

void SvgWriter::finish(llvm::raw_ostream &os) {
  constexpr int64_t kMargin = 12;
  int64_t w = maxX + kMargin, h = maxY + kMargin;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
     << "\" viewBox=\"0 0 " << w << " " << h << "\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n"
     << "<title>" << escapeXml(title) << "</title>\n"
     << "<style>.cells rect { stroke: #fff; stroke-width: 0.5 } "
        ".cells text { font-size: 9px; text-anchor: middle }</style>\n"
     << "<rect x=\"0\" y=\"0\" width=\"" << w << "\" height=\"" << h << "\" fill=\"#fff\"/>\n"
     << body.str() << "</svg>\n";
}

} // namespace tlc::pictures
