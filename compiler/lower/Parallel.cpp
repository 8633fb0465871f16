// Lowering of parallel loops: each thread visits the registers it owns of the loop's driving
// fragment, or (without a fragment) threads stride over the flattened iteration space.
#include "lower/KernelLowering.h"

namespace tlc::lower {

void KernelLowering::lowerParallel(const ftg::Node &n) {
  tileOp(n, [&] { parallelElements(n); });
}

void KernelLowering::parallelElements(const ftg::Node &n) {
  const ForStmt *f = n.loop;
  nonNegativeVars.insert(f->vars.begin(), f->vars.end()); // each in [0, extent)
  std::string vars;
  for (size_t i = 0; i < f->vars.size(); ++i)
    vars += (i ? ", " : "") + f->vars[i]->getName().str() + " < " + toSource(f->extents[i]);
  if (n.driver) {
    const FragmentLayout &l = *n.driver->fragment;
    std::string r = fresh("r");
    add(makeComment("parallel(" + vars + "): each thread visits its " + std::to_string(l.registers()) +
                    " registers of fragment '" + n.driver->name + "'"));
    nest(makeFor(ForRole::Registers, r, "0", std::to_string(l.registers()), "", 0), [&] {
      if (f->vars.size() == 2) {
        add(makeLet("const int", cppName(f->vars[0]->getName()), l.rowOf(kThreadIndex, r)));
        add(makeLet("const int", cppName(f->vars[1]->getName()), l.colOf(kThreadIndex, r)));
      } else {
        add(makeLet("const int", cppName(f->vars[0]->getName()),
                    l.kind == FragmentLayout::Row ? l.rowOf(kThreadIndex, r) : l.colOf(kThreadIndex, r)));
      }
      const ftg::Node *saved = parallelNode;
      std::string savedReg = parallelReg;
      parallelNode = &n;
      parallelReg = r;
      scalarStmt(f->body);
      parallelNode = saved;
      parallelReg = savedReg;
    });
    return;
  }
  std::string total;
  for (const Expr *e : f->extents)
    total += (total.empty() ? "" : " * ") + std::string("(") + expr(e) + ")";
  std::string idx = fresh("e");
  add(makeComment("parallel(" + vars + "): threads stride over the flattened index"));
  nest(makeFor(ForRole::Threads, idx, kThreadIndex, total, std::to_string(g.threads)), [&] {
    std::string rest = idx;
    for (size_t i = f->vars.size(); i-- > 0;) {
      std::string extent = "(" + expr(f->extents[i]) + ")";
      add(makeLet("const int", cppName(f->vars[i]->getName()), i == 0 ? rest : rest + " % " + extent));
      if (i)
        rest = "(" + rest + " / " + extent + ")";
    }
    scalarStmt(f->body);
  });
}

} // namespace tlc::lower
