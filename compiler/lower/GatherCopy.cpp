// Lowering of a gathered copy (ftg::GatherCopy, recognized by infer/GatherCopy.cpp): threads
// stride over the tile in accesses of GatherCopy::vector elements along its last dimension;
// each evaluates the body's lets and the condition at its first element and issues one
// cp.async of GatherCopy::bytes, zero-filled where the condition fails. The accesses are those
// of the element-wise loop with the innermost variable at the vector's start, so the
// addresses, layouts and stages are the ones the element-wise code would use. When the vector
// needs the aligned instantiation, the other instantiation keeps the element-wise loop.
#include "lower/KernelLowering.h"

namespace tlc::lower {

void KernelLowering::lowerGather(const ftg::Node &n, bool prefetch) {
  const ftg::GatherCopy &G = *n.gather;
  const ForStmt *f = n.loop;
  tileOp(n, [&] {
    std::string what = std::string(prefetch ? "prefetch: " : "") + "gathered copy " + G.src->name + " -> " +
                       G.dst->name;
    if (G.bytes == 0) {
      sourceComment(n, what + ", element by element");
      return parallelElements(n);
    }
    sourceComment(n, what + ", " + std::to_string(G.bytes) + "-byte cp.async" +
                         (G.cond ? " zero-filled where " + toSource(G.cond) + (G.negated ? " holds" : " fails") : ""));
    nonNegativeVars.insert(f->vars.begin(), f->vars.end()); // each in [0, extent)
    auto vectors = [&] {
      const int V = G.vector;
      std::vector<int64_t> E;
      int64_t total = 1;
      for (const auto &d : G.dst->shape) {
        E.push_back(*d);
        total *= *d;
      }
      forEachChunk(total / V, false, [&](const std::string &c, const std::string &) {
        // The loop variables at the access's first element, innermost first.
        std::string rest = c;
        for (size_t d = E.size(); d-- > 0;) {
          int64_t extent = d + 1 == E.size() ? E[d] / V : E[d];
          std::string v = d == 0 ? rest : rest + " % " + std::to_string(extent);
          if (d + 1 == E.size() && V > 1)
            v = "(" + v + ") * " + std::to_string(V);
          add(makeLet("const int", cppName(f->vars[d]->getName()), v));
          rest = "(" + rest + " / " + std::to_string(extent) + ")";
        }
        for (const LetStmt *l : G.lets)
          scalarStmt(l);
        std::string valid, dst, src;
        if (G.cond) {
          std::vector<Access> condReads =
              readsOf([&] { valid = G.negated ? "!(" + expr(G.cond) + ")" : expr(G.cond); });
          accessing(add(makeLet("const bool", "tl_valid", valid, false)), condReads, {});
        }
        std::vector<Access> reads = readsOf([&] {
          dst = elementRef(G.store);
          src = elementRef(G.load);
        });
        reads.insert(reads.begin(), access(G.src));
        Stmt &cp = accessing(add(std::make_unique<Stmt>(StmtKind::AsyncCopy)), reads, {access(G.dst)});
        cp.bytes = G.bytes;
        cp.dst = "&" + dst;
        cp.src = "&" + src;
        cp.srcBase = bufferName(*G.src);
        cp.valid = valid.empty() ? "" : "tl_valid";
      });
    };
    scope([&] {
      if (G.needsAligned) {
        ifAligned({G.src}, vectors, [&] { parallelElements(n); });
      } else {
        vectors();
      }
      // A prefetch's group is waited for by the pipeline (PipelineExpansion.cpp).
      if (!prefetch) {
        add(std::make_unique<Stmt>(StmtKind::AsyncCommit));
        add(std::make_unique<Stmt>(StmtKind::AsyncWait)).count = 0;
      }
    });
  });
}

} // namespace tlc::lower
