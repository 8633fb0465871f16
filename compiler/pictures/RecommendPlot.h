// `tlc recommend ... --plot out.svg`: the ranking as a bar chart (docs/pictures.md). One bar
// per legal candidate, fastest first, as long as its predicted time; the bar's colour is the
// model's term that bounds it (HBM, L2, in-flight, shared, tensor core, CUDA cores, SFU: see
// recommend/CostModel.h), its pale end the overheads the model adds (launch, pipeline fill,
// exposed loads, barriers), and the first choice is marked.
#pragma once

#include "recommend/Recommender.h"

#include "llvm/Support/raw_ostream.h"

namespace tlc::pictures {

// The most bars one plot draws (the fastest; the plot says how many it left out).
constexpr size_t kMaxPlotBars = 60;

void writeRecommendPlot(const recommend::Recommendation &r, llvm::raw_ostream &os);

} // namespace tlc::pictures
