#include "recommend/Report.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>

namespace tlc::recommend {

std::string formatSeconds(double s) {
  const char *unit = "s";
  double v = s;
  if (s < 1e-3) {
    v = s * 1e6, unit = "us";
  } else if (s < 1) {
    v = s * 1e3, unit = "ms";
  }
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::format(v < 10 ? "%.3f %s" : v < 100 ? "%.2f %s" : "%.1f %s", v, unit);
  return os.str();
}

std::string formatBytes(double b) {
  const char *units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4)
    b /= 1000, ++u;
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::format(b < 10 && u ? "%.2f %s" : b < 100 && u ? "%.1f %s" : "%.0f %s", b, units[u]);
  return os.str();
}

namespace {

std::string rate(const Prediction &p) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (p.tensorFlops > 0)
    os << llvm::format("%.1f TFLOP/s", p.tensorFlops / p.seconds / 1e12);
  else
    os << llvm::format("%.0f GB/s", p.traffic.hbmBytes / p.seconds / 1e9);
  return os.str();
}

std::string shapesStr(const Recommendation &r) {
  std::string s;
  for (const ShapeBinding &b : r.shapes)
    s += (s.empty() ? "" : ", ") + b.name + "=" + std::to_string(b.value) + (b.assumed ? " (assumed)" : "");
  return s.empty() ? "none" : s;
}

size_t legalCount(const Recommendation &r) { return r.ranked.size(); }

const Term *termNamed(const Prediction &p, llvm::StringRef name) {
  for (const Term &t : p.terms)
    if (t.name == name)
      return &t;
  return nullptr;
}

// A column-aligned table: every row's cells padded to the widest cell of its column.
class Table {
public:
  void row(std::vector<std::string> cells) { rows.push_back(std::move(cells)); }
  void print(llvm::raw_ostream &os) const {
    std::vector<size_t> width;
    for (const auto &r : rows)
      for (size_t i = 0; i < r.size(); ++i) {
        width.resize(std::max(width.size(), r.size()));
        width[i] = std::max(width[i], r[i].size());
      }
    for (const auto &r : rows) {
      std::string line;
      for (size_t i = 0; i < r.size(); ++i)
        line += r[i] + (i + 1 < r.size() ? std::string(width[i] - r[i].size() + 2, ' ') : "");
      os << llvm::StringRef(line).rtrim() << "\n";
    }
  }

private:
  std::vector<std::vector<std::string>> rows;
};

} // namespace

void printTable(const Recommendation &r, const ReportOptions &opts, llvm::raw_ostream &os) {
  os << "kernel " << r.kernel << " (" << r.file << ") on " << r.target.name << " ("
     << r.target.description << ", " << r.target.tensorPathName
     << (r.target.warpgroupPathName.empty() ? "" : " and " + r.target.warpgroupPathName) << " tensor cores)\n";
  // No AMD GPU has been lent to this project: say so where the ranking is read, not only in
  // the descriptor's description (docs/recommend.md, "Limitations of the AMD descriptors").
  if (r.target.vendor == "amd")
    os << "note: " << r.target.name
       << " is not validated on hardware: tlc's HIP code has never run on an AMD GPU (the CPU emulator "
          "checks its lowering) and the descriptor's rates are datasheet figures; the ranking is indicative\n";
  os << "shapes: " << shapesStr(r) << "\n";
  std::string knobs;
  for (const Knob &k : r.knobs)
    knobs += (knobs.empty() ? "" : ", ") + k.name + " {" + llvm::join(k.values, " ") + "}";
  os << "searched: " << (knobs.empty() ? "nothing" : knobs) << "\n";
  if (!r.pinned.empty())
    os << "pinned by -D: " << llvm::join(r.pinned, ", ") << "\n";
  if (!r.unresolvedAuto.empty())
    os << "not searched (`auto`, but not used as a tile size, thread count, stage count, policy or "
          "panel): "
       << llvm::join(r.unresolvedAuto, ", ") << "\n";
  os << legalCount(r) << " legal of " << legalCount(r) + r.illegal.size() << " candidates ("
     << r.compilations << " compiled, " << r.quickRejects << " rejected before compiling), ranked in "
     << formatSeconds(r.seconds) << "\n\n";

  if (r.ranked.empty())
    os << "no legal candidate\n";
  Table t;
  t.row({"#", "configuration", "predicted", "rate", "AI", "HBM", "L2", "shared", "bound",
         "blocks/SM", "smem", "regs"});
  for (size_t i = 0; i < r.ranked.size() && i < opts.top; ++i) {
    const Candidate &c = r.ranked[i];
    const Prediction &p = c.prediction;
    const Term *b = p.bound();
    std::string config = configStr(c.config);
    std::string ai;
    llvm::raw_string_ostream(ai) << llvm::format("%.0f", p.arithmeticIntensity);
    t.row({std::to_string(i + 1), config.empty() ? "(as pinned)" : config, formatSeconds(p.seconds), rate(p), ai,
           formatBytes(p.traffic.hbmBytes), formatBytes(p.traffic.l2Bytes), formatBytes(p.sharedBytesMoved),
           b ? b->name : "-",
           std::to_string(p.occupancy.blocksPerSM) + " (" + p.occupancy.limitedBy + ")",
           formatBytes(double(p.sharedBytes)),
           std::to_string(p.occupancy.registersPerThread) + (p.occupancy.registersSpill ? "!" : "")});
  }
  if (!r.ranked.empty())
    t.print(os);
  if (llvm::any_of(r.ranked, [](const Candidate &c) { return c.prediction.occupancy.registersSpill; }))
    os << "(regs!: the register estimate exceeds what a thread may have; expect spills)\n";
  if (opts.showIllegal && !r.illegal.empty()) {
    os << "\nillegal:\n";
    for (const Candidate &c : r.illegal)
      os << "  " << configStr(c.config) << ": " << c.reason << "\n";
  } else if (!r.illegal.empty()) {
    os << "(" << r.illegal.size() << " illegal candidate" << (r.illegal.size() == 1 ? "" : "s")
       << " not shown; --show-illegal lists " << (r.illegal.size() == 1 ? "it" : "them") << ")\n";
  }
}

namespace {

void writeConfig(llvm::json::OStream &j, const Config &c) {
  j.attributeObject("config", [&] {
    for (const Binding &b : c) {
      int64_t v;
      if (!llvm::StringRef(b.value).getAsInteger(10, v))
        j.attribute(b.name, v);
      else
        j.attribute(b.name, b.value);
    }
  });
}

void writePrediction(llvm::json::OStream &j, const Prediction &p) {
  j.attribute("predicted_ms", p.seconds * 1e3);
  if (p.tensorFlops > 0)
    j.attribute("tflops", p.tensorFlops / p.seconds / 1e12);
  if (!p.tensorPath.empty())
    j.attribute("tensor_path", p.tensorPath);
  j.attribute("producer_threads", int64_t(p.producerThreads));
  j.attribute("arithmetic_intensity", p.arithmeticIntensity);
  j.attributeObject("bytes", [&] {
    j.attribute("hbm", p.traffic.hbmBytes);
    j.attribute("l2", p.traffic.l2Bytes);
    j.attribute("shared", p.sharedBytesMoved);
    j.attribute("registers", p.registerBytes);
  });
  j.attributeObject("ops", [&] {
    j.attribute("tensor_core", p.tensorFlops);
    j.attribute("cuda_core", p.cudaOps);
    j.attribute("sfu", p.sfuOps);
  });
  j.attributeObject("times_ms", [&] {
    for (const Term &t : p.terms)
      j.attribute(t.name, t.seconds * 1e3);
    j.attribute("overlapped", p.overlapped * 1e3);
    j.attribute("intrinsic", p.intrinsic * 1e3);
  });
  const Term *b = p.bound();
  j.attributeObject("bound", [&] {
    j.attribute("kind", b ? b->kind : "none");
    j.attribute("unit", b ? b->name : "none");
  });
  j.attributeObject("occupancy", [&] {
    j.attribute("blocks_per_sm", p.occupancy.blocksPerSM);
    j.attribute("warps_per_sm", p.occupancy.warpsPerSM);
    j.attribute("fraction", p.occupancy.fraction);
    j.attribute("limited_by", p.occupancy.limitedBy);
  });
  j.attribute("blocks", p.blocks);
  j.attribute("waves", p.waves);
  j.attribute("last_wave_fill", p.lastWaveFill);
  j.attribute("shared_memory_bytes", p.sharedBytes);
  j.attribute("registers_per_thread", p.occupancy.registersPerThread);
  j.attribute("registers_spill", p.occupancy.registersSpill);
}

} // namespace

void printJson(const Recommendation &r, const ReportOptions &opts, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("kernel", r.kernel);
    j.attribute("file", r.file);
    j.attributeObject("target", [&] {
      j.attribute("name", r.target.name);
      j.attribute("arch", r.target.arch);
      j.attribute("tensor_path", r.target.tensorPathName);
      if (!r.target.warpgroupPathName.empty())
        j.attribute("warpgroup_path", r.target.warpgroupPathName);
    });
    j.attributeObject("shapes", [&] {
      for (const ShapeBinding &s : r.shapes)
        j.attribute(s.name, s.value);
    });
    j.attributeArray("assumed_shapes", [&] {
      for (const ShapeBinding &s : r.shapes)
        if (s.assumed)
          j.value(s.name);
    });
    j.attributeArray("pinned", [&] {
      for (const std::string &p : r.pinned)
        j.value(p);
    });
    j.attributeArray("untuned_auto", [&] {
      for (const std::string &p : r.unresolvedAuto)
        j.value(p);
    });
    j.attributeArray("knobs", [&] {
      for (const Knob &k : r.knobs)
        j.object([&] {
          j.attribute("name", k.name);
          j.attribute("role", knobRoleName(k.role));
          j.attribute("auto", k.isAuto);
          j.attributeArray("values", [&] {
            for (const std::string &v : k.values)
              j.value(v);
          });
        });
    });
    j.attribute("candidates", int64_t(r.ranked.size() + r.illegal.size()));
    j.attribute("legal", int64_t(r.ranked.size()));
    j.attribute("compilations", int64_t(r.compilations));
    j.attribute("quick_rejects", int64_t(r.quickRejects));
    if (opts.timing)
      j.attribute("recommend_seconds", r.seconds);
    j.attributeArray("ranked", [&] {
      for (size_t i = 0; i < r.ranked.size() && i < opts.top; ++i)
        j.object([&] {
          j.attribute("rank", int64_t(i + 1));
          writeConfig(j, r.ranked[i].config);
          writePrediction(j, r.ranked[i].prediction);
        });
    });
    if (opts.showIllegal)
      j.attributeArray("illegal", [&] {
        for (const Candidate &c : r.illegal)
          j.object([&] {
            writeConfig(j, c.config);
            j.attribute("reason", c.reason);
          });
      });
  });
  os << "\n";
}

void printExplanation(const Recommendation &r, llvm::raw_ostream &os) {
  if (r.ranked.empty()) {
    os << "no legal candidate to explain\n";
    return;
  }
  const Candidate &a = r.ranked[0];
  if (r.ranked.size() < 2) {
    os << configStr(a.config) << " is the only legal candidate\n";
    return;
  }
  const Candidate &b = r.ranked[1];
  const Prediction &pa = a.prediction, &pb = b.prediction;
  std::string differs;
  for (size_t i = 0; i < a.config.size(); ++i)
    if (a.config[i].value != b.config[i].value)
      differs += (differs.empty() ? "" : ", ") + a.config[i].name + " " + a.config[i].value + " vs " +
                 b.config[i].value;
  double gain = (pb.seconds - pa.seconds) / pb.seconds;
  os << "why " << configStr(a.config) << " ranks first:\n";
  os << "  the runner-up differs in " << (differs.empty() ? "nothing searched" : differs) << "; ";
  if (gain < 1e-3)
    os << "the first is ahead by less than 0.1% (" << formatSeconds(pa.seconds) << "); what separates them:\n";
  else
    os << llvm::format("the first is predicted %.1f%% faster", 100 * gain) << " (" << formatSeconds(pa.seconds)
       << " vs " << formatSeconds(pb.seconds) << ").\n";

  const Term *ba = pa.bound(), *bb = pb.bound();
  if (ba && bb && ba->name == bb->name)
    os << "  both are " << ba->kind << "-bound by the " << ba->name << " term: " << formatSeconds(ba->seconds)
       << " vs " << formatSeconds(bb->seconds) << ".\n";
  else if (ba && bb)
    os << "  the first is bound by " << ba->name << " (" << formatSeconds(ba->seconds) << "), the runner-up by "
       << bb->name << " (" << formatSeconds(bb->seconds) << ").\n";
  // Every level or unit whose load differs, bound or not: the others combine with the bound
  // (the overlap norm), so a lighter one still helps a little.
  for (const Term &ta : pa.terms) {
    const Term *tb = termNamed(pb, ta.name);
    if (!tb || std::max(ta.seconds, tb->seconds) <= 0)
      continue;
    double rel = (tb->seconds - ta.seconds) / std::max(ta.seconds, tb->seconds);
    if (std::fabs(rel) < 0.01)
      continue;
    os << "  " << ta.name << ": " << formatSeconds(ta.seconds) << " vs " << formatSeconds(tb->seconds);
    if (ta.kind != "compute" && ta.name != "in-flight")
      os << " (" << formatBytes(ta.amount) << " vs " << formatBytes(tb->amount) << " moved)";
    os << (&ta == ba ? ", the bound" : "") << (rel > 0 ? "" : ", in the runner-up's favour") << "\n";
  }
  if (std::fabs(pa.intrinsic - pb.intrinsic) > 0.01 * std::max(pa.intrinsic, pb.intrinsic))
    os << "  overheads (launch, pipeline fill, exposed loads, barriers): " << formatSeconds(pa.intrinsic)
       << " vs " << formatSeconds(pb.intrinsic) << ".\n";
  if (pa.occupancy.blocksPerSM != pb.occupancy.blocksPerSM)
    os << "  occupancy: " << pa.occupancy.blocksPerSM << " vs " << pb.occupancy.blocksPerSM
       << " blocks per SM (" << pa.occupancy.warpsPerSM << " vs " << pb.occupancy.warpsPerSM
       << " warps; limited by " << pa.occupancy.limitedBy << " vs " << pb.occupancy.limitedBy << ").\n";
  if (pa.waves != pb.waves || std::fabs(pa.lastWaveFill - pb.lastWaveFill) > 0.05)
    os << llvm::format("  waves: %lld vs %lld, the last one %.0f%% vs %.0f%% full.\n",
                       (long long)pa.waves, (long long)pb.waves, 100 * pa.lastWaveFill,
                       100 * pb.lastWaveFill);
}

} // namespace tlc::recommend
