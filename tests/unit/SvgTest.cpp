// The SVG writer under tlc's pictures (pictures/Svg.h): user text cannot break the XML, and
// the document's size covers what was drawn.
#include "pictures/Svg.h"

#include <catch2/catch.hpp>

using namespace tlc::pictures;

TEST_CASE("escapeXml escapes markup and replaces what XML cannot hold", "[pictures]") {
  CHECK(escapeXml("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
  CHECK(escapeXml("tab\tnew\nline") == "tab\tnew\nline");
  // Control characters have no representation in XML 1.0, not even as references.
  CHECK(escapeXml(std::string("x\x01y\0z", 5)) == "x\xEF\xBF\xBDy\xEF\xBF\xBDz");
  CHECK(escapeXml("caf\xC3\xA9") == "caf\xC3\xA9"); // UTF-8 passes through
}

TEST_CASE("SvgWriter sizes the document to what was drawn and escapes everything", "[pictures]") {
  SvgWriter svg("title <&>");
  svg.rect(10, 20, 30, 40, "#fff", "#000", 1.5, true);
  svg.comment("a -- b --> c");
  svg.beginCells();
  svg.cell(100, 200, 20, 14, "#abc", "<1>", "tip & top");
  svg.endCells();
  svg.text(5, 300, "x&y", 12, Anchor::End);
  std::string out;
  llvm::raw_string_ostream os(out);
  svg.finish(os);
  os.flush();
  CHECK(out.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                  "width=\"132\" height=\"316\" viewBox=\"0 0 132 316\"",
                  0) == 0);
  CHECK(out.find("<title>title &lt;&amp;&gt;</title>") != std::string::npos);
  CHECK(out.find("stroke-width=\"1.5\" stroke-dasharray=\"4 2\"") != std::string::npos);
  CHECK(out.find("<!-- a - - b - -&gt; c -->") != std::string::npos);
  CHECK(out.find("<g><title>tip &amp; top</title><rect x=\"100\" y=\"200\" width=\"20\" height=\"14\" "
                 "fill=\"#abc\"/><text x=\"110\" y=\"210\">&lt;1&gt;</text></g>") != std::string::npos);
  CHECK(out.find(">x&amp;y</text>") != std::string::npos);
  CHECK(out.substr(out.size() - 7) == "</svg>\n");
}

TEST_CASE("paletteColour repeats after twelve colours", "[pictures]") {
  CHECK(paletteColour(0) == paletteColour(12));
  CHECK(paletteColour(0) != paletteColour(1));
}
