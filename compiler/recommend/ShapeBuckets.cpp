#include "recommend/ShapeBuckets.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace tlc::recommend {

const std::vector<int64_t> &defaultRepresentatives() {
  // Decoding-like (a handful of rows), medium, large and very large problems; edges at 64,
  // 512 and 2048. A 1024 between 256 and 4096 would be tuned for 4096 with three sizes,
  // where 256-row tiles leave most SMs idle.
  static const std::vector<int64_t> sizes = {16, 256, 1024, 4096};
  return sizes;
}

std::vector<int64_t> BucketAxis::edges() const {
  std::vector<int64_t> out;
  for (size_t i = 0; i + 1 < representatives.size(); ++i) {
    double mid = std::sqrt(double(representatives[i]) * double(representatives[i + 1]));
    int64_t edge = std::llround(mid);
    // Each bucket keeps its representative: lo < edge <= hi.
    edge = std::max(edge, representatives[i] + 1);
    edge = std::min(edge, representatives[i + 1]);
    out.push_back(edge);
  }
  return out;
}

size_t BucketAxis::bucketOf(int64_t size) const {
  size_t b = 0;
  for (int64_t edge : edges())
    b += size >= edge;
  return b;
}

std::string BucketAxis::rangeStr(size_t bucket) const { return recommend::rangeStr(edges(), bucket); }

std::string rangeStr(const std::vector<int64_t> &e, size_t bucket) {
  std::string lo = bucket == 0 ? "1" : std::to_string(e[bucket - 1]);
  std::string hi = bucket < e.size() ? std::to_string(e[bucket]) : "inf";
  return "[" + lo + ", " + hi + ")";
}

size_t BucketGrid::size() const {
  size_t n = 1;
  for (const BucketAxis &a : all)
    n *= a.representatives.size();
  return n;
}

std::map<std::string, int64_t> BucketGrid::representative(size_t index) const {
  std::map<std::string, int64_t> out;
  for (size_t i = all.size(); i-- > 0;) {
    size_t n = all[i].representatives.size();
    out[all[i].symbol] = all[i].representatives[index % n];
    index /= n;
  }
  return out;
}

size_t BucketGrid::indexOf(const std::vector<int64_t> &sizes) const {
  assert(sizes.size() == all.size());
  size_t index = 0;
  for (size_t i = 0; i < all.size(); ++i)
    index = index * all[i].representatives.size() + all[i].bucketOf(sizes[i]);
  return index;
}

std::string BucketGrid::describe(size_t index) const {
  std::vector<std::string> parts(all.size());
  for (size_t i = all.size(); i-- > 0;) {
    size_t n = all[i].representatives.size();
    parts[i] = all[i].symbol + " in " + all[i].rangeStr(index % n);
    index /= n;
  }
  std::string s;
  for (const std::string &p : parts)
    s += (s.empty() ? "" : ", ") + p;
  return s;
}

VariantChoice chooseVariants(const std::vector<Recommendation> &perBucket, size_t maxVariants,
                             double tolerance) {
  // A configuration missing from a bucket's ranking (illegal there, or outside its trimmed
  // space) is never that bucket's variant: it costs this much there.
  constexpr double kAbsent = 1e6;
  const size_t buckets = perBucket.size();
  // Candidates: the leaders of every bucket, in first-seen order (deterministic).
  constexpr size_t kLeaders = 32;
  std::vector<Config> configs;
  std::map<std::string, size_t> indexOf;
  for (const Recommendation &r : perBucket)
    for (size_t i = 0; i < r.ranked.size() && i < kLeaders; ++i)
      if (indexOf.emplace(configStr(r.ranked[i].config), configs.size()).second)
        configs.push_back(r.ranked[i].config);
  assert(!configs.empty() && "no legal configuration in any bucket");
  if (configs.empty())
    return {};

  // loss[c][b] = log(time of c in b / best time in b).
  std::vector<std::vector<double>> loss(configs.size(), std::vector<double>(buckets, kAbsent));
  for (size_t b = 0; b < buckets; ++b) {
    const auto &ranked = perBucket[b].ranked;
    if (ranked.empty())
      continue;
    double best = ranked.front().prediction.seconds;
    for (const Candidate &c : ranked)
      if (auto it = indexOf.find(configStr(c.config)); it != indexOf.end())
        loss[it->second][b] = std::log(c.prediction.seconds / best);
  }

  // A set of variants scores (worst bucket's loss, sum of losses): first no bucket far from
  // its best, then the buckets together.
  using Score = std::pair<double, double>;
  auto scoreOf = [&](const std::vector<size_t> &set) {
    Score sc{0, 0};
    for (size_t b = 0; b < buckets; ++b) {
      if (perBucket[b].ranked.empty())
        continue;
      double l = std::numeric_limits<double>::infinity();
      for (size_t c : set)
        l = std::min(l, loss[c][b]);
      sc.first = std::max(sc.first, l);
      sc.second += l;
    }
    return sc;
  };
  auto better = [](const Score &a, const Score &b) {
    return a.first < b.first - 1e-12 || (a.first <= b.first + 1e-12 && a.second < b.second - 1e-12);
  };
  const Score kWorst{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};

  // Greedy: add the configuration that improves the score most, until every bucket is
  // within tolerance or the budget is spent.
  std::vector<size_t> chosen;
  Score current = kWorst;
  while (chosen.size() < std::max<size_t>(maxVariants, 1)) {
    if (!chosen.empty() && current.first <= std::log1p(tolerance))
      break;
    size_t pick = configs.size();
    Score best = current;
    for (size_t c = 0; c < configs.size(); ++c) {
      if (llvm::is_contained(chosen, c))
        continue;
      std::vector<size_t> with = chosen;
      with.push_back(c);
      if (Score sc = scoreOf(with); better(sc, best)) {
        best = sc;
        pick = c;
      }
    }
    if (pick == configs.size())
      break; // nothing improves any bucket
    chosen.push_back(pick);
    current = best;
  }
  // Greedy steps are myopic when several buckets tie for the worst (no single addition
  // lowers the maximum): swap chosen configurations for others while that improves.
  for (bool improved = true; improved;) {
    improved = false;
    for (size_t i = 0; i < chosen.size(); ++i)
      for (size_t c = 0; c < configs.size(); ++c) {
        if (llvm::is_contained(chosen, c))
          continue;
        std::vector<size_t> with = chosen;
        with[i] = c;
        if (Score sc = scoreOf(with); better(sc, current)) {
          chosen = with;
          current = sc;
          improved = true;
        }
      }
  }

  // Predictions are finite (predict() makes any other candidate illegal), so some
  // configuration always improves on kWorst; should none, the first leader serves all.
  if (chosen.empty())
    chosen.push_back(0);
  // Swaps can leave a configuration that no bucket needs any more (the compromise picked
  // first, once specialists cover its buckets): drop those.
  for (size_t i = chosen.size(); i-- > 0 && chosen.size() > 1;) {
    std::vector<size_t> without = chosen;
    without.erase(without.begin() + i);
    if (Score sc = scoreOf(without); !better(current, sc)) {
      chosen = without;
      current = sc;
    }
  }

  // Each bucket runs its best variant; the variant serving most buckets comes first (the
  // dispatch's fallback), the others by how many buckets they serve.
  std::vector<size_t> bucketVariant(buckets, 0);
  std::vector<size_t> served(chosen.size(), 0);
  for (size_t b = 0; b < buckets; ++b) {
    for (size_t v = 1; v < chosen.size(); ++v)
      if (loss[chosen[v]][b] < loss[chosen[bucketVariant[b]]][b])
        bucketVariant[b] = v;
    ++served[bucketVariant[b]];
  }
  std::vector<size_t> order(chosen.size());
  for (size_t v = 0; v < order.size(); ++v)
    order[v] = v;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return served[x] > served[y]; });
  std::vector<size_t> rankOf(chosen.size());
  VariantChoice out;
  for (size_t r = 0; r < order.size(); ++r) {
    rankOf[order[r]] = r;
    out.variants.push_back(configs[chosen[order[r]]]);
  }
  for (size_t b = 0; b < buckets; ++b) {
    out.variantOfBucket.push_back(rankOf[bucketVariant[b]]);
    double l = loss[chosen[bucketVariant[b]]][b];
    out.slowdown.push_back(perBucket[b].ranked.empty() || l >= kAbsent ? 0 : std::exp(l));
  }
  return out;
}

} // namespace tlc::recommend
