#include "pictures/RecommendPlot.h"
#include "pictures/Svg.h"

#include "recommend/Report.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tlc::pictures {

namespace {

constexpr int64_t kLeft = 16;
constexpr int64_t kBarArea = 560;  // pixels of the longest bar
constexpr int64_t kRowHeight = 18;
constexpr int64_t kBarHeight = 13;
constexpr int kLabelSize = 11;

// One colour per term of the model, the same in every plot: memory levels blue and green,
// latency purple, compute units warm.
llvm::StringRef termColour(llvm::StringRef name) {
  static const std::pair<const char *, const char *> kColours[] = {
      {"HBM", "#4e79a7"},         {"L2", "#76b7d6"},         {"shared", "#59a14f"},
      {"in-flight", "#b07aa1"},   {"tensor core", "#e15759"}, {"CUDA cores", "#f28e2b"},
      {"SFU", "#edc948"}};
  for (const auto &[term, colour] : kColours)
    if (name == term)
      return colour;
  return "#9c9c9c";
}

std::string configLabel(const recommend::Candidate &c) {
  std::string s = recommend::configStr(c.config);
  return s.empty() ? "(as pinned)" : s;
}

} // namespace

void writeRecommendPlot(const recommend::Recommendation &r, llvm::raw_ostream &os) {
  SvgWriter svg("tlc recommend: " + r.kernel);
  std::string shapes;
  for (const recommend::ShapeBinding &s : r.shapes)
    shapes += (shapes.empty() ? "" : ", ") + s.name + "=" + std::to_string(s.value) + (s.assumed ? " (assumed)" : "");
  int64_t y = 22;
  svg.text(kLeft, y, "tlc recommend: kernel " + r.kernel + " (" + r.file + ") on " + r.target.description, 15,
           Anchor::Start, /*bold=*/true);
  y += 18;
  if (!shapes.empty()) {
    svg.text(kLeft, y, "shapes: " + shapes, 11, Anchor::Start, false, "#333");
    y += 16;
  }
  size_t shown = std::min(r.ranked.size(), kMaxPlotBars);
  std::string counts = std::to_string(r.ranked.size()) + " legal candidate" + (r.ranked.size() == 1 ? "" : "s");
  if (shown < r.ranked.size())
    counts += ", the fastest " + std::to_string(shown) + " drawn";
  if (!r.illegal.empty())
    counts += "; " + std::to_string(r.illegal.size()) + " illegal not drawn";
  svg.text(kLeft, y, "predicted time, fastest first (" + counts + "); colour: the term that bounds the candidate, "
                     "pale end: overheads (launch, pipeline fill, exposed loads, barriers)",
           11, Anchor::Start, false, "#333");
  y += 26;
  if (shown == 0) {
    svg.text(kLeft, y, "no legal candidate", 13, Anchor::Start, true);
    svg.finish(os);
    return;
  }

  size_t widest = 0;
  double longest = 0;
  for (size_t i = 0; i < shown; ++i) {
    widest = std::max(widest, configLabel(r.ranked[i]).size() + 4);
    longest = std::max(longest, r.ranked[i].prediction.seconds);
  }
  int64_t barX = kLeft + SvgWriter::textWidth(widest, kLabelSize) + 8;
  auto px = [&](double seconds) { return int64_t(seconds / longest * double(kBarArea) + 0.5); };

  // The time axis: a line every quarter of the longest bar.
  int64_t axisTop = y, axisBottom = y + int64_t(shown) * kRowHeight;
  for (int q = 0; q <= 4; ++q) {
    int64_t x = barX + kBarArea * q / 4;
    svg.line(x, axisTop - 4, x, axisBottom, "#ddd");
    svg.text(x, axisBottom + 14, recommend::formatSeconds(longest * q / 4), 10, Anchor::Middle, false, "#555");
  }

  std::vector<std::string> termsSeen;
  for (size_t i = 0; i < shown; ++i) {
    const recommend::Candidate &c = r.ranked[i];
    const recommend::Prediction &p = c.prediction;
    const recommend::Term *bound = p.bound();
    std::string boundName = bound ? bound->name : "none";
    std::string boundKind = bound ? bound->kind : "none";
    if (!llvm::is_contained(termsSeen, boundName))
      termsSeen.push_back(boundName);
    int64_t top = y + int64_t(i) * kRowHeight;
    bool first = i == 0;
    std::string label = configLabel(c);
    svg.beginGroup("#" + std::to_string(i + 1) + " " + label + ": predicted " + recommend::formatSeconds(p.seconds) +
                   ", bound by " + boundName + " (" + boundKind + ", " +
                   recommend::formatSeconds(bound ? bound->seconds : 0) + "), overheads " +
                   recommend::formatSeconds(p.intrinsic) + ", " + std::to_string(p.occupancy.blocksPerSM) +
                   " blocks/SM");
    svg.text(barX - 6, top + kBarHeight - 2, (first ? "1st " : "") + label, kLabelSize, Anchor::End, first);
    int64_t total = std::max<int64_t>(px(p.seconds), 1);
    int64_t overheads = std::min(total, px(p.intrinsic));
    svg.rect(barX, top, total - overheads, kBarHeight, termColour(boundName), first ? "#000" : "",
             first ? 2 : 1);
    if (overheads > 0)
      svg.rect(barX + total - overheads, top, overheads, kBarHeight, "#e6e6e6", first ? "#000" : "",
               first ? 2 : 1);
    svg.text(barX + total + 4, top + kBarHeight - 2,
             recommend::formatSeconds(p.seconds) + (first ? "  \u2605 first choice" : ""), 10, Anchor::Start, first);
    svg.endGroup();
  }
  y = axisBottom + 34;

  // Legend: the bounding terms that occur, in the model's order of kinds.
  int64_t x = kLeft;
  svg.text(x, y, "bound:", 11, Anchor::Start, true);
  x += 50;
  for (const std::string &name : termsSeen) {
    std::string kind = "none";
    for (const recommend::Candidate &c : r.ranked)
      if (const recommend::Term *b = c.prediction.bound(); b && b->name == name)
        kind = b->kind;
    std::string text = name + " (" + kind + ")";
    svg.rect(x, y - 10, 12, 12, termColour(name), "#888", 0.5);
    svg.text(x + 16, y, text, 11);
    x += 16 + SvgWriter::textWidth(text.size(), 11) + 14;
  }
  svg.rect(x, y - 10, 12, 12, "#e6e6e6", "#888", 0.5);
  svg.text(x + 16, y, "overheads", 11);
  svg.finish(os);
}

} // namespace tlc::pictures
