#include "infer/RegisterEstimate.h"

#include "ir/FTG.h"
#include "target/TargetInfo.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>

namespace tlc::infer {

// Registers are 32 bits wide on every target tlc knows (NVIDIA registers, AMD VGPRs).
constexpr int64_t kRegisterBits = 32;

int64_t registersFor(int64_t elements, DType dtype) {
  return (elements * int64_t(bitWidth(dtype)) + kRegisterBits - 1) / kRegisterBits;
}

namespace {

int64_t registersOf(const ftg::Buffer &b) {
  if (b.scope == Scope::Fragment && b.fragment)
    return registersFor(b.fragment->registers(), b.dtype);
  if (b.scope == Scope::Local)
    return registersFor(b.numElements(), b.dtype);
  return 0;
}

bool isRegion(const ftg::Node &n) { return n.kind == ftg::NodeKind::Loop || n.kind == ftg::NodeKind::If; }

bool touches(const ftg::Node &n, const ftg::Buffer *b) {
  return std::find(n.reads.begin(), n.reads.end(), b) != n.reads.end() ||
         std::find(n.writes.begin(), n.writes.end(), b) != n.writes.end();
}

// Whether tile operator `n` overwrites every element of `b` before anything reads it: a gemm
// with clear_accum into it, or a copy, fill or clearing reduction into the whole buffer. Such
// a node ends the value `b` had before, so a loop whose body starts with it does not carry `b`
// from one iteration into the next.
bool overwritesWhole(const ftg::Node &n, const ftg::Buffer *b) {
  using ftg::NodeKind;
  if (n.kind == NodeKind::Gemm)
    return n.clearAccum && n.inputs.size() == 3 && n.inputs[2].buffer == b;
  if (n.kind != NodeKind::Copy && n.kind != NodeKind::Fill &&
      !(n.kind == NodeKind::Reduce && n.clear))
    return false;
  if (n.outputs.empty() || n.outputs[0].buffer != b || !ftg::coversWholeBuffer(n.outputs[0].region, *b))
    return false;
  return std::all_of(n.inputs.begin(), n.inputs.end(), [&](const ftg::Operand &o) { return o.buffer != b; });
}

using NodeList = std::vector<std::unique_ptr<ftg::Node>>;

bool touchesWithin(const ftg::Node &n, const ftg::Buffer *b) {
  if (!isRegion(n))
    return touches(n, b);
  for (const NodeList *list : ftg::liveChildren(n))
    for (const auto &c : *list)
      if (touchesWithin(*c, b))
        return true;
  return false;
}

// The first node of `list` that touches `b`, looking into the branch a compile-time `if`
// takes (a knob that turns a part of the kernel off); a run-time `if` or a loop that touches
// `b` first is returned itself (not every run goes through what it holds).
const ftg::Node *firstToucher(const NodeList &list, const ftg::Buffer *b) {
  for (const auto &n : list) {
    std::vector<const NodeList *> live = ftg::liveChildren(*n);
    if (n->kind == ftg::NodeKind::If && live.size() == 1) {
      if (const ftg::Node *f = firstToucher(*live[0], b))
        return f;
      continue;
    }
    if (touchesWithin(*n, b))
      return n.get();
  }
  return nullptr;
}

// The kernel's tile operators and scalar nodes numbered in program order (both branches of a
// run-time `if`, the taken one of a compile-time `if`, a loop's body once), and each loop's
// range of numbers.
struct Linear {
  llvm::DenseMap<const ftg::Buffer *, std::pair<int, int>> live; // first and last access
  struct Loop {
    const ftg::Node *node;
    int first, last;
  };
  std::vector<Loop> loops; // inner loops before the loops around them
  int next = 0;

  void walk(const NodeList &list) {
    for (const auto &n : list) {
      if (!isRegion(*n)) {
        for (const auto *set : {&n->reads, &n->writes})
          for (const ftg::Buffer *b : *set) {
            auto [it, fresh] = live.try_emplace(b, next, next);
            if (!fresh)
              it->second.second = next;
          }
        ++next;
        continue;
      }
      int first = next;
      for (const NodeList *branch : ftg::liveChildren(*n))
        walk(*branch);
      if (n->kind == ftg::NodeKind::Loop && next > first)
        loops.push_back({n.get(), first, next - 1});
    }
  }
};

} // namespace

int bufferRegisters(const ftg::Graph &g) {
  Linear lin;
  lin.walk(g.body);
  // Live ranges: from the first access to the last, over the whole of every loop the range
  // enters or leaves, and over the whole of a loop it lies in unless the loop's body starts
  // using the buffer by overwriting it (then each iteration's value dies in that iteration).
  for (const Linear::Loop &loop : lin.loops) {
    for (auto &[b, range] : lin.live) {
      if (range.second < loop.first || range.first > loop.last)
        continue;
      bool inside = range.first >= loop.first && range.second <= loop.last;
      if (inside) {
        const ftg::Node *first = firstToucher(loop.node->body, b);
        if (first && !isRegion(*first) && overwritesWhole(*first, b))
          continue;
      }
      range.first = std::min(range.first, loop.first);
      range.second = std::max(range.second, loop.last);
    }
  }
  // The most registers live at once; a buffer never accessed counts at the start, so that the
  // estimate is never below its largest buffer (recommend/QuickCheck.cpp relies on it).
  std::map<int, int64_t> delta;
  for (const auto &b : g.buffers) {
    int64_t regs = registersOf(*b);
    if (!regs)
      continue;
    auto it = lin.live.find(b.get());
    std::pair<int, int> range = it == lin.live.end() ? std::pair<int, int>(0, 0) : it->second;
    delta[range.first] += regs;
    delta[range.second + 1] -= regs;
  }
  int64_t regs = 0, peak = 0;
  for (const auto &[point, change] : delta) {
    regs += change;
    peak = std::max(peak, regs);
  }
  return int(peak);
}

int64_t launchBoundRegisters(const target::Limits &limits, int64_t threads) {
  return std::min<int64_t>(limits.registersPerThread, limits.registersPerSM / std::max<int64_t>(1, threads) / 8 * 8);
}

int wgmmaInstructionRegisters(const ftg::Graph &g, const ftg::Node **widest) {
  int most = 0;
  g.walk([&](const ftg::Node &n) {
    if (n.kind != ftg::NodeKind::Gemm || !n.warpgroupMma || n.inputs.size() < 3)
      return;
    // One instruction: 64 rows by instrN columns of C over a warpgroup's 128 threads, and
    // 64 rows by one k step of A (32 bytes of each row) when A is a fragment.
    const ftg::Buffer &A = *n.inputs[0].buffer, &C = *n.inputs[2].buffer;
    int64_t regs = registersFor(int64_t(n.instrN) / 2, C.dtype) + kWgmmaOverhead;
    if (A.scope == Scope::Fragment)
      regs += 64 * 32 / 128 / 4;
    if (regs > most) {
      most = int(regs);
      if (widest)
        *widest = &n;
    }
  });
  return most;
}

} // namespace tlc::infer
