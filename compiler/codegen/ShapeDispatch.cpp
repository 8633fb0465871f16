#include "codegen/ShapeDispatch.h"
#include "codegen/HostLauncher.h"
#include "lower/Naming.h"

namespace tlc::codegen {

using lower::cppName;
using lower::generatedName;


namespace {

std::string join(const std::vector<std::string> &parts, const std::string &sep) {
  std::string s;
  for (const std::string &p : parts)
    s += (s.empty() ? "" : sep) + p;
  return s;
}

// `tensor.shape[d]` expression of the first dimension that names `symbol` (the one the
// variants bind it from), or "" when no dimension names it alone.
std::string sizeSource(const lower::Launch &k, const std::string &symbol) {
  for (const lower::HostParam &p : k.params)
    for (size_t d = 0; d < p.symbol.size(); ++d)
      if (p.symbol[d] == symbol)
        return "tlc::dimOrZero(" + p.cpp + ", " + std::to_string(d) + ")";
  return "";
}

// The nested initializer of the bucket table, with a comment per bucket of the first axis;
// `end` follows its closing brace ("," between rows, ";" after the table).
void emitTable(const ShapeDispatch &d, size_t axis, size_t &next, const std::string &end,
               CodeWriter &w) {
  const ShapeDispatch::Axis &a = d.axes[axis];
  size_t n = a.buckets();
  if (axis + 1 == d.axes.size()) {
    std::vector<std::string> cells;
    for (size_t b = 0; b < n; ++b)
      cells.push_back(std::to_string(d.variantOfBucket[next++]));
    w.line("{" + join(cells, ", ") + "}" + end);
    return;
  }
  w.open("");
  for (size_t b = 0; b < n; ++b) {
    if (axis == 0)
      w.line("// " + a.symbol + (a.divisor ? ": " : " in ") + a.ranges[b]);
    emitTable(d, axis + 1, next, b + 1 == n ? "" : ",", w);
  }
  w.close(end);
}

} // namespace

void emitDispatcher(const ShapeDispatch &d, const std::string &ns, const std::string &cPrefix, bool inlineC,
                    CodeWriter &w) {
  const lower::Launch &k = *d.kernel;
  w.line("// Shape dispatch of '" + k.kernel + "': " + std::to_string(d.variants.size()) + " " + d.origin +
         ". Every variant takes any size;");
  w.line("// the bucket decides only which one runs.");
  for (size_t v = 0; v < d.variants.size(); ++v)
    w.line("//   " + std::to_string(v) + ": " + d.variants[v] + "  " + d.configs[v] +
           (v == 0 && d.fallbackServesMost ? "  (the fallback: it serves the most buckets)" : ""));
  for (const ShapeDispatch::Axis &a : d.axes) {
    std::vector<std::string> parts;
    for (size_t b = 0; b < a.ranges.size(); ++b)
      parts.push_back(a.ranges[b] + " " + d.representativeIs + " " + std::to_string(a.representatives[b]));
    w.line("//   " + a.symbol + ": " + join(parts, ", "));
  }
  // Names (Naming.h): the sizes are the user's shape symbols; the tables are tlc's.
  auto edgesName = [](const ShapeDispatch::Axis &a) { return generatedName(a.symbol + "_edges"); };
  const std::string variantOf = generatedName("variant_of");
  // One parameter per symbol, though a symbol may have a range axis and divisibility axes.
  std::vector<std::string> symbols, params, args, dims, lookups;
  for (const ShapeDispatch::Axis &a : d.axes) {
    if (llvm::find(symbols, a.symbol) == symbols.end()) {
      symbols.push_back(a.symbol);
      params.push_back("int64_t " + cppName(a.symbol));
    }
    lookups.push_back(a.divisor ? "[" + cppName(a.symbol) + " % " + std::to_string(a.divisor) + " == 0]"
                                : "[tlc::bucketOf(" + cppName(a.symbol) + ", " + edgesName(a) + ")]");
    dims.push_back("[" + std::to_string(a.buckets()) + "]");
  }
  const std::string variantFn = cppName(d.selector);
  // The tables are the function's own constants, not static locals: a static local of an inline
  // function is one object per process (STB_GNU_UNIQUE), so two libraries whose kernels share a
  // name (two builds of a sample loaded side by side, even RTLD_LOCAL) would read the first
  // one's table and run the wrong variant (GPU run 183: a conv2d build at 0.3x its speed).
  w.open("inline int " + variantFn + "(" + join(params, ", ") + ")");
  for (const ShapeDispatch::Axis &a : d.axes) {
    if (a.divisor)
      continue;
    std::vector<std::string> edges;
    for (int64_t e : a.edges)
      edges.push_back(std::to_string(e));
    w.line("constexpr int64_t " + edgesName(a) + "[] = {" + join(edges, ", ") + "};");
  }
  std::vector<std::string> order;
  for (const ShapeDispatch::Axis &a : d.axes)
    order.push_back(a.divisor ? a.symbol + " % " + std::to_string(a.divisor) + " == 0" : a.symbol);
  w.line("// The variant of each bucket, indexed [" + join(order, "][") + "].");
  w.line("constexpr unsigned char " + variantOf + join(dims, "") + " =");
  size_t next = 0;
  w.indent++;
  emitTable(d, 0, next, ";", w);
  w.indent--;
  w.line("return " + variantOf + join(lookups, "") + ";");
  w.close();
  w.line();

  LauncherSignature sig = LauncherSignature::of(k);
  w.line("// Launcher of '" + k.kernel + "': runs the variant chosen for the sizes of this call.");
  // Calls are qualified: a parameter may carry the name of a variant or of the selector.
  auto qualified = [&](const std::string &fn) { return "::" + ns + "::" + cppName(fn); };
  w.open(launcherDecl(cppName(k.kernel), sig, inlineC));
  w.line("// Only the sizes are read here (0 where a tensor lacks the dimension); the variant checks");
  w.line("// the tensors against the contract.");
  for (const std::string &symbol : symbols) {
    std::string src = sizeSource(k, symbol);
    w.line("const int64_t " + cppName(symbol) + " = " + (src.empty() ? "0" : src) + ";");
    args.push_back(cppName(symbol));
  }
  w.open("switch (" + qualified(d.selector) + "(" + join(args, ", ") + "))");
  for (size_t v = 1; v < d.variants.size(); ++v)
    w.line("case " + std::to_string(v) + ": return " + qualified(d.variants[v]) + "(" + sig.forward + "stream);");
  w.line("default: return " + qualified(d.variants[0]) + "(" + sig.forward + "stream);");
  w.close();
  w.close();
  if (cPrefix.empty())
    return;
  w.line();
  emitCEntry(k, sig, qualified(k.kernel), cPrefix + k.kernel, inlineC, w);
}

} // namespace tlc::codegen
