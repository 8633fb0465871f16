#include "target/Descriptor.h"
#include "target/DescriptorData.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

namespace tlc::target {

namespace json = llvm::json;

const TensorPath &TargetDesc::tensorPath(bool warpgroup) const {
  const std::string &name = warpgroup && !warpgroupPathName.empty() ? warpgroupPathName : tensorPathName;
  for (const TensorPath &p : tensorPaths)
    if (p.name == name)
      return p;
  return tensorPaths.front(); // parseTargetDesc guarantees the named paths exist
}

std::optional<double> TargetDesc::tensorRate(DType dtype, bool warpgroup) const {
  const TensorPath &p = tensorPath(warpgroup);
  auto it = p.tflops.find(dtype);
  if (it == p.tflops.end())
    return std::nullopt;
  return it->second * 1e12;
}

namespace {

// Reads typed fields out of a JSON object and remembers the first problem, with its path
// ("memory.hbm_tbps"), so one message says exactly what is wrong.
class FieldReader {
public:
  FieldReader(const json::Object &root, std::string &error) : root(root), error(error) {}

  const json::Object *object(llvm::StringRef path) {
    const json::Object *o = &root;
    llvm::SmallVector<llvm::StringRef, 4> parts;
    path.split(parts, '.');
    for (llvm::StringRef part : parts) {
      o = o->getObject(part);
      if (!o)
        return fail(path, "an object"), nullptr;
    }
    return o;
  }

  // A finite number in [lo, hi]. The ranges are wide (real GPUs sit well inside them) but
  // keep the model's arithmetic finite: no division by a rate that underflows to 0, no
  // product of two huge ones that overflows.
  double number(llvm::StringRef path, double lo = kMinNumber, double hi = kMaxNumber) {
    const json::Value *v = lookup(path);
    llvm::Optional<double> d = v ? v->getAsNumber() : llvm::None;
    if (!d || !std::isfinite(*d) || *d < lo || *d > hi)
      return fail(path, "a number from " + fmt(lo) + " to " + fmt(hi), v), 0;
    return *d;
  }
  // An integer in [lo, hi]; the default range fits an int, where most are stored.
  int64_t integer(llvm::StringRef path, int64_t lo = 1, int64_t hi = INT32_MAX) {
    const json::Value *v = lookup(path);
    llvm::Optional<int64_t> i = v ? v->getAsInteger() : llvm::None;
    if (!i || *i < lo || *i > hi)
      return fail(path, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi), v), 0;
    return *i;
  }
  std::string string(llvm::StringRef path) {
    const json::Value *v = lookup(path);
    llvm::Optional<llvm::StringRef> s = v ? v->getAsString() : llvm::None;
    if (!s || s->empty())
      return fail(path, "a non-empty string"), "";
    return s->str();
  }
  bool boolean(llvm::StringRef path) {
    const json::Value *v = lookup(path);
    llvm::Optional<bool> b = v ? v->getAsBoolean() : llvm::None;
    if (!b)
      return fail(path, "true or false"), false;
    return *b;
  }

  void fail(llvm::StringRef path, llvm::StringRef expected, const json::Value *got = nullptr) {
    if (!error.empty())
      return;
    error = "'" + path.str() + "' must be " + expected.str();
    if (got) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << *got;
      error += " (got " + os.str() + ")";
    } else {
      error += " (missing)";
    }
  }

  static constexpr double kMinNumber = 1e-3, kMaxNumber = 1e7;
  static std::string fmt(double d) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", d);
    return text;
  }

private:
  const json::Value *lookup(llvm::StringRef path) {
    auto [parent, leaf] = path.rsplit('.');
    const json::Object *o = leaf.empty() ? &root : object(parent);
    if (leaf.empty())
      leaf = parent;
    return o ? o->get(leaf) : nullptr;
  }

  const json::Object &root;
  std::string &error;
};

TensorPath parsePath(llvm::StringRef name, const json::Object &o, std::string &error) {
  TensorPath p;
  p.name = name.str();
  bool earlier = !error.empty(); // a problem outside this path, reported as it is
  std::string where = "compute.tensor." + p.name;
  FieldReader r(o, error);
  const json::Array *mma = o.getArray("mma");
  if (!mma || mma->size() != 3 || !llvm::all_of(*mma, [](const json::Value &v) {
        return v.getAsInteger() && *v.getAsInteger() > 0 && *v.getAsInteger() <= 256;
      })) {
    if (error.empty())
      error = "'" + where + ".mma' must be [M, N, K] of integers from 1 to 256";
    return p;
  }
  p.mmaM = int(*(*mma)[0].getAsInteger());
  p.mmaN = int(*(*mma)[1].getAsInteger());
  p.mmaK = int(*(*mma)[2].getAsInteger());
  p.ilpNeeded = r.number("ilp_needed");
  if (o.get("warps_needed"))
    p.warpsNeeded = r.number("warps_needed");
  if (o.get("step_cycles"))
    p.stepCycles = r.number("step_cycles", 0);
  const json::Object *rates = o.getObject("tflops");
  if (!rates || rates->empty()) {
    if (error.empty())
      error = "'" + where + ".tflops' must map dtypes to rates";
    return p;
  }
  for (const auto &[key, value] : *rates) {
    std::optional<DType> dt = parseDType(key);
    llvm::Optional<double> rate = value.getAsNumber();
    if (!dt || !rate || !std::isfinite(*rate) || *rate < FieldReader::kMinNumber ||
        *rate > FieldReader::kMaxNumber) {
      if (error.empty())
        error = "'" + where + ".tflops." + key.str() + "' must be a rate for a dtype from " +
                FieldReader::fmt(FieldReader::kMinNumber) + " to " +
                FieldReader::fmt(FieldReader::kMaxNumber) + " TFLOP/s";
      continue;
    }
    p.tflops[*dt] = *rate;
  }
  if (!error.empty() && !earlier && !llvm::StringRef(error).startswith("'" + where))
    error += " (in " + where + ")";
  return p;
}

} // namespace

llvm::Expected<TargetDesc> parseTargetDesc(llvm::StringRef text, llvm::StringRef fileName) {
  auto fail = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   fileName + ": target descriptor: " + message);
  };
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return fail(llvm::toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root)
    return fail("the top level must be an object");

  std::string error;
  FieldReader r(*root, error);
  TargetDesc t;
  t.name = r.string("name");
  t.description = r.string("description");
  t.vendor = r.string("vendor");
  t.arch = r.string("arch");
  t.defaultForArch = r.boolean("default_for_arch");
  if (const json::Array *aliases = root->getArray("aliases")) {
    for (const json::Value &a : *aliases)
      if (auto s = a.getAsString())
        t.aliases.push_back(s->str());
  } else {
    r.fail("aliases", "an array of names");
  }
  // Integer ranges: an int each, and the products the model forms (threads x registers,
  // blocks x shared bytes) stay far inside int64.
  t.sms = int(r.integer("sms", 1, 1 << 20));
  t.clockGHz = r.number("clock_ghz", 1e-3, 1e3);
  t.warpSize = int(r.integer("warp_size", 1, 1024));

  t.sharedPerSM = r.integer("limits.shared_bytes_per_sm");
  t.sharedPerBlock = r.integer("limits.shared_bytes_per_block");
  t.sharedReservedPerBlock = r.integer("limits.shared_bytes_reserved_per_block", 0);
  t.registersPerSM = r.integer("limits.registers_per_sm");
  t.registersPerThread = int(r.integer("limits.registers_per_thread", 1, 1 << 16));
  t.registerAllocUnit = int(r.integer("limits.register_alloc_unit", 1, 1 << 16));
  t.threadsPerSM = int(r.integer("limits.threads_per_sm", 1, 1 << 20));
  t.threadsPerBlock = int(r.integer("limits.threads_per_block", 1, 1 << 20));
  t.blocksPerSM = int(r.integer("limits.blocks_per_sm", 1, 1 << 20));

  t.hbmBandwidth = r.number("memory.hbm_tbps") * 1e12;
  t.l2Bandwidth = r.number("memory.l2_tbps") * 1e12;
  t.sharedBandwidth = r.number("memory.shared_tbps") * 1e12;
  t.l2Bytes = r.integer("memory.l2_bytes", 1, int64_t(1) << 48);
  t.hbmLatency = r.number("memory.hbm_latency_ns") * 1e-9;
  t.l2Latency = r.number("memory.l2_latency_ns") * 1e-9;

  t.tensorPathName = r.string("compute.tensor_path");
  if (const json::Object *compute = root->getObject("compute"); compute && compute->get("warpgroup_path"))
    t.warpgroupPathName = r.string("compute.warpgroup_path");
  if (const json::Object *paths = r.object("compute.tensor")) {
    for (const auto &[name, value] : *paths) {
      if (const json::Object *o = value.getAsObject())
        t.tensorPaths.push_back(parsePath(name, *o, error));
      else
        r.fail("compute.tensor." + name.str(), "an object");
    }
    // JSON objects are unordered; keep a stable order for printing.
    llvm::sort(t.tensorPaths, [](const TensorPath &a, const TensorPath &b) { return a.name < b.name; });
  }
  t.cudaCoreRate = r.number("compute.cuda_core_tops") * 1e12;
  t.sfuRate = r.number("compute.sfu_tops") * 1e12;
  t.launchOverhead = r.number("overheads.launch_us") * 1e-6;
  t.barrierCycles = r.number("overheads.barrier_cycles", 0);
  // An L^p norm: p below 1 is no norm, and far above 100 it is the max already.
  t.overlapNorm = r.number("overheads.overlap_norm", 1, 100);

  if (!error.empty())
    return fail(error);
  t.info = lookupTarget(t.arch);
  if (!t.info) {
    std::string known;
    for (const TargetInfo *info : allTargets())
      known += (known.empty() ? "" : ", ") + info->name().str();
    return fail("'arch' names '" + t.arch + "', which is not a target tlc knows (" + known + ")");
  }
  if (!llvm::any_of(t.tensorPaths, [&](const TensorPath &p) { return p.name == t.tensorPathName; }))
    return fail("'compute.tensor_path' names '" + t.tensorPathName +
                "', which is not a key of 'compute.tensor'");
  if (!t.warpgroupPathName.empty() &&
      !llvm::any_of(t.tensorPaths, [&](const TensorPath &p) { return p.name == t.warpgroupPathName; }))
    return fail("'compute.warpgroup_path' names '" + t.warpgroupPathName +
                "', which is not a key of 'compute.tensor'");
  if (!t.warpgroupPathName.empty() && !t.info->warpgroupMma())
    return fail("'compute.warpgroup_path' is given, but " + t.arch + " has no warpgroup MMA");
  if (t.sharedPerBlock > t.sharedPerSM)
    return fail("'limits.shared_bytes_per_block' exceeds 'limits.shared_bytes_per_sm'");
  if (t.threadsPerBlock > t.threadsPerSM)
    return fail("'limits.threads_per_block' exceeds 'limits.threads_per_sm'");
  if (t.threadsPerSM % t.warpSize != 0)
    return fail("'limits.threads_per_sm' must be a multiple of 'warp_size'");
  return t;
}

const std::vector<TargetDesc> &builtinTargets() {
  static const std::vector<TargetDesc> targets = [] {
    std::vector<TargetDesc> all;
    for (size_t i = 0; i < kNumBuiltinTargetFiles; ++i) {
      llvm::Expected<TargetDesc> t =
          parseTargetDesc(kBuiltinTargetFiles[i].json, kBuiltinTargetFiles[i].fileName);
      // The files are checked by a unit test; a broken one must not take tlc down.
      if (t)
        all.push_back(std::move(*t));
      else
        llvm::consumeError(t.takeError());
    }
    llvm::sort(all, [](const TargetDesc &a, const TargetDesc &b) { return a.name < b.name; });
    return all;
  }();
  return targets;
}

llvm::Expected<TargetDesc> resolveTarget(llvm::StringRef spec) {
  if (spec.endswith(".json")) {
    auto buffer = llvm::MemoryBuffer::getFile(spec, /*IsText=*/true);
    if (!buffer)
      return llvm::createStringError(buffer.getError(), "cannot read target descriptor '" + spec +
                                                            "': " + buffer.getError().message());
    return parseTargetDesc((*buffer)->getBuffer(), spec);
  }
  std::string lower = spec.lower();
  for (const TargetDesc &t : builtinTargets())
    if (t.name == lower || llvm::is_contained(t.aliases, lower))
      return t;
  for (const TargetDesc &t : builtinTargets())
    if (t.arch == lower && t.defaultForArch)
      return t;
  std::string known;
  for (const TargetDesc &t : builtinTargets())
    known += (known.empty() ? "" : ", ") + t.name + " (" + t.arch + ")";
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "no target descriptor for '" + spec + "'; known: " + known +
                                     ", or a path to a .json descriptor");
}

const TargetDesc *nearestTarget(llvm::StringRef arch) {
  // sm_XY: the largest XY at or below; gfx94*: CDNA3's descriptor (the chips of one gfx9
  // generation share the ISA tlc generates for).
  auto smVersion = [](llvm::StringRef a) -> std::optional<unsigned> {
    unsigned v = 0;
    if (!a.consume_front("sm_") || a.take_while(llvm::isDigit).getAsInteger(10, v))
      return std::nullopt;
    return v;
  };
  std::string lower = arch.lower();
  const TargetDesc *best = nullptr;
  std::optional<unsigned> wanted = smVersion(lower);
  for (const TargetDesc &t : builtinTargets()) {
    if (!t.defaultForArch)
      continue;
    if (wanted) {
      std::optional<unsigned> v = smVersion(t.arch);
      if (v && *v <= *wanted && (!best || *v > *smVersion(best->arch)))
        best = &t;
    } else if (llvm::StringRef(lower).startswith("gfx") && lower.size() >= 5 &&
               llvm::StringRef(t.arch).startswith(llvm::StringRef(lower).take_front(5))) {
      best = &t;
    }
  }
  return best;
}

} // namespace tlc::target
