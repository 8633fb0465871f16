// `tlc recommend ... --plot out.svg`: the ranking as a picture (docs/pictures.md): every legal
// candidate's predicted time by rank, and bars for the first ones; the colour is the model's
// term that bounds the candidate (HBM, L2, in-flight, shared, tensor core, CUDA cores, SFU: see
// recommend/CostModel.h), its pale end the overheads the model adds (launch, pipeline fill,
// exposed loads, barriers) on the bars, and the first choice is marked.
#pragma once

#include "recommend/Recommender.h"

#include "llvm/Support/raw_ostream.h"

namespace tlc::pictures {

// The most candidates the scatter of the whole ranking draws (beyond it, every k-th).
constexpr size_t kMaxPlotPoints = 1000;

// The plot: every legal candidate's predicted time by rank (a scatter coloured by the bound),
// then the first `bars` candidates as labelled bars.
void writeRecommendPlot(const recommend::Recommendation &r, size_t bars, llvm::raw_ostream &os);

} // namespace tlc::pictures
