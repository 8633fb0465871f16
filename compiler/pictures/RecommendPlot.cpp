#include "pictures/RecommendPlot.h"
#include "pictures/Svg.h"

#include "recommend/Report.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tlc::pictures {

namespace {

constexpr int64_t kLeft = 16;
constexpr int64_t kBarArea = 560;  // pixels of the longest bar
constexpr int64_t kRowHeight = 18;
constexpr int64_t kBarHeight = 13;
constexpr int kLabelSize = 11;
constexpr int64_t kScatterHeight = 200;

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

void writeRecommendPlot(const recommend::Recommendation &r, size_t bars, llvm::raw_ostream &os) {
  SvgWriter svg("tlc recommend: " + r.kernel);
  std::string shapes;
  for (const recommend::ShapeBinding &s : r.shapes)
    shapes += (shapes.empty() ? "" : ", ") + s.name + "=" + std::to_string(s.value) + (s.assumed ? " (assumed)" : "");
  int64_t y = 22;
  svg.text(kLeft, y, "tlc recommend: kernel " + r.kernel + " (" + r.file + ") on " + r.target.description, 15,
           Anchor::Start, /*bold=*/true);
  y += 18;
  std::string counts = std::to_string(r.ranked.size()) + " legal candidate" + (r.ranked.size() == 1 ? "" : "s");
  if (!r.illegal.empty())
    counts += ", " + std::to_string(r.illegal.size()) + " illegal (not drawn)";
  svg.text(kLeft, y, (shapes.empty() ? "" : "shapes " + shapes + "; ") + counts, 11, Anchor::Start, false, "#333");
  y += 26;
  if (r.ranked.empty()) {
    svg.text(kLeft, y, "no legal candidate", 13, Anchor::Start, true);
    svg.finish(os);
    return;
  }

  // The bounds that occur, in ranking order, for the colours' legend.
  std::vector<std::pair<std::string, std::string>> bounds; // name, kind
  auto boundOf = [&](const recommend::Candidate &c) {
    const recommend::Term *b = c.prediction.bound();
    std::string name = b ? b->name : "none", kind = b ? b->kind : "none";
    if (!llvm::any_of(bounds, [&](const auto &e) { return e.first == name; }))
      bounds.push_back({name, kind});
    return name;
  };

  // Every candidate: predicted time (log scale) against rank. Beyond kMaxPlotPoints, every
  // k-th candidate, the first and the last.
  size_t n = r.ranked.size();
  size_t step = (n + kMaxPlotPoints - 1) / kMaxPlotPoints;
  double fastest = r.ranked.front().prediction.seconds, slowest = fastest;
  for (const recommend::Candidate &c : r.ranked)
    slowest = std::max(slowest, c.prediction.seconds);
  double span = std::log2(std::max(slowest / fastest, 2.0));
  svg.text(kLeft, y, "every candidate, fastest first" +
                         (step > 1 ? " (1 in " + std::to_string(step) + " drawn)" : std::string()) +
                         ": predicted time (log scale) by rank, coloured by the term that bounds it",
           12, Anchor::Start, true);
  y += 12;
  int64_t plotX = kLeft + 70, plotTop = y, plotH = kScatterHeight, plotW = kBarArea;
  auto yOf = [&](double seconds) {
    return plotTop + plotH - int64_t(std::log2(seconds / fastest) / span * double(plotH) + 0.5);
  };
  auto xOf = [&](size_t rank) { return plotX + (n > 1 ? int64_t(rank * uint64_t(plotW) / (n - 1)) : 0); };
  for (double t = fastest; t <= fastest * std::exp2(span) * 1.0001; t *= 2) {
    svg.line(plotX, yOf(t), plotX + plotW, yOf(t), "#e4e4e4");
    svg.text(plotX - 6, yOf(t) + 4, recommend::formatSeconds(t), 10, Anchor::End, false, "#555");
  }
  svg.rect(plotX, plotTop, plotW, plotH, "none", "#999", 0.5);
  for (size_t i = 0; i < n; i += step) {
    const recommend::Candidate &c = r.ranked[i];
    svg.rect(xOf(i) - 1, yOf(c.prediction.seconds) - 1, 3, 3, termColour(boundOf(c)));
    if (i + step >= n && i != n - 1)
      i = n - 1 - step; // the last one too
  }
  svg.rect(xOf(0) - 4, yOf(fastest) - 4, 9, 9, "none", "#000", 1.5);
  svg.text(xOf(0) + 8, yOf(fastest) - 4, "first choice", 10, Anchor::Start, true);
  svg.text(plotX, plotTop + plotH + 14, "1", 10, Anchor::Middle, false, "#555");
  svg.text(plotX + plotW, plotTop + plotH + 14, std::to_string(n), 10, Anchor::Middle, false, "#555");
  svg.text(plotX + plotW / 2, plotTop + plotH + 14, "rank", 10, Anchor::Middle, false, "#555");
  y = plotTop + plotH + 40;

  // The first `bars` candidates by name, with their time split into the overlapped terms
  // (coloured by the bound) and the overheads.
  size_t shown = std::min(n, std::max<size_t>(bars, 1));
  svg.text(kLeft, y, "the first " + std::to_string(shown) + ": predicted time; pale end: overheads (launch, "
                     "pipeline fill, exposed loads, barriers)",
           12, Anchor::Start, true);
  y += 14;
  size_t widest = 0;
  double longest = 0;
  for (size_t i = 0; i < shown; ++i) {
    widest = std::max(widest, configLabel(r.ranked[i]).size() + 4);
    longest = std::max(longest, r.ranked[i].prediction.seconds);
  }
  int64_t barX = kLeft + SvgWriter::textWidth(widest, kLabelSize) + 8;
  auto px = [&](double seconds) { return int64_t(seconds / longest * double(kBarArea) + 0.5); };
  int64_t axisTop = y, axisBottom = y + int64_t(shown) * kRowHeight;
  for (int q = 0; q <= 4; ++q) {
    int64_t x = barX + kBarArea * q / 4;
    svg.line(x, axisTop - 4, x, axisBottom, "#ddd");
    svg.text(x, axisBottom + 14, q ? recommend::formatSeconds(longest * q / 4) : "0", 10, Anchor::Middle, false,
             "#555");
  }
  for (size_t i = 0; i < shown; ++i) {
    const recommend::Candidate &c = r.ranked[i];
    const recommend::Prediction &p = c.prediction;
    const recommend::Term *bound = p.bound();
    std::string boundName = boundOf(c);
    int64_t top = y + int64_t(i) * kRowHeight;
    bool first = i == 0;
    std::string label = configLabel(c);
    svg.beginGroup("#" + std::to_string(i + 1) + " " + label + ": predicted " + recommend::formatSeconds(p.seconds) +
                   ", bound by " + boundName + " (" + (bound ? bound->kind : "none") + ", " +
                   recommend::formatSeconds(bound ? bound->seconds : 0) + "), overheads " +
                   recommend::formatSeconds(p.intrinsic) + ", " + std::to_string(p.occupancy.blocksPerSM) +
                   " blocks/SM");
    svg.text(barX - 6, top + kBarHeight - 2, (first ? "1st " : "") + label, kLabelSize, Anchor::End, first);
    int64_t total = std::max<int64_t>(px(p.seconds), 1);
    int64_t overheads = std::min(total, px(p.intrinsic));
    svg.rect(barX, top, total - overheads, kBarHeight, termColour(boundName), first ? "#000" : "", first ? 2 : 1);
    if (overheads > 0)
      svg.rect(barX + total - overheads, top, overheads, kBarHeight, "#e6e6e6", first ? "#000" : "", first ? 2 : 1);
    svg.text(barX + total + 4, top + kBarHeight - 2,
             recommend::formatSeconds(p.seconds) + (first ? "  \u2605 first choice" : ""), 10, Anchor::Start, first);
    svg.endGroup();
  }
  y = axisBottom + 34;

  // Legend: the bounding terms that occur.
  int64_t x = kLeft;
  svg.text(x, y, "bound:", 11, Anchor::Start, true);
  x += 50;
  for (const auto &[name, kind] : bounds) {
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
