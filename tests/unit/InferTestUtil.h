// One kernel through the front end and the driver's inference pipeline, for the unit tests of
// inference, its verifier and lowering: the graph, its diagnostics, and buffers by name.
#pragma once

#include "FrontendTestUtil.h"

#include "infer/Passes.h"
#include "ir/FTG.h"
#include "ir/PassManager.h"
#include "target/TargetInfo.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

namespace tlc::test {

struct InferredKernel {
  Frontend fe;
  std::string out;
  llvm::raw_string_ostream os{out};
  // The frontend's sources, so that messages (and lowering's comments) name source lines.
  DiagnosticEngine diags{fe.sourceMgr(), os};
  std::unique_ptr<ftg::Graph> g;

  explicit InferredKernel(llvm::StringRef source,
                          const target::TargetInfo &target = target::defaultTarget())
      : fe(source) {
    REQUIRE(fe.analyze());
    g = ftg::buildGraph(fe.kernel(), diags, target);
    REQUIRE(g);
    ftg::PassManager pm;
    infer::addInferencePasses(pm); // the driver's pipeline, so the tests see what tlc does
    REQUIRE(pm.run(*g, diags));
  }

  ftg::Buffer &buffer(llvm::StringRef name) {
    for (auto &b : g->buffers)
      if (b->name == name)
        return *b;
    FAIL("no buffer " << name.str());
    return *g->buffers[0];
  }
};

} // namespace tlc::test
