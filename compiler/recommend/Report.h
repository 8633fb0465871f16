// Presents a Recommendation: a ranked table for people, JSON for tools, and an explanation of
// why the first candidate beats the runner-up (`tlc recommend --explain`).
#pragma once

#include "recommend/Recommender.h"

#include "llvm/Support/raw_ostream.h"

namespace tlc::recommend {

struct ReportOptions {
  size_t top = 10;           // ranked rows to show
  bool showIllegal = false;  // also list rejected candidates and why
  // JSON only: add the wall-clock time of the ranking ("recommend_seconds"). Off by default
  // so that the same input gives byte-identical JSON; the table always says it.
  bool timing = false;
};

void printTable(const Recommendation &r, const ReportOptions &opts, llvm::raw_ostream &os);
void printJson(const Recommendation &r, const ReportOptions &opts, llvm::raw_ostream &os);
// Why ranked[0] beats ranked[1]: the time difference split into the bounding term and the
// intrinsic overheads, every term that differs, and occupancy and wave differences.
void printExplanation(const Recommendation &r, llvm::raw_ostream &os);

// "1.23 ms", "45.6 us"; "1.2 GB", "340 MB".
std::string formatSeconds(double s);
std::string formatBytes(double b);

} // namespace tlc::recommend
