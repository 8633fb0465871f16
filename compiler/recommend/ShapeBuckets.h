// `auto` parameters of kernels with dynamic shapes: the best tile for M = 16 is not the best
// for M = 8192, and the compiled kernel takes any size. So each dynamic shape symbol gets a
// few representative sizes (16, 256, 1024 and 4096 unless --assume lists others); a size belongs
// to the bucket of its nearest representative on a log scale (the edges are geometric
// means of neighbours). The recommender ranks the space once per bucket of the cross
// product, and `chooseVariants` picks a few configurations that together serve every
// bucket well: those are compiled as variants of the kernel, and the generated launcher
// dispatches on the sizes it is called with.
#pragma once

#include "recommend/Recommender.h"

#include <map>
#include <string>
#include <vector>

namespace tlc::recommend {

struct BucketAxis {
  std::string symbol;
  std::vector<int64_t> representatives; // ascending, distinct, positive

  // edges()[i] is the first size of bucket i + 1.
  std::vector<int64_t> edges() const;
  size_t bucketOf(int64_t size) const;
  std::string rangeStr(size_t bucket) const; // "[64, 1024)", "[1024, inf)"
};

// "[64, 1024)" or "[1024, inf)": bucket `bucket` of sizes split at `edges` (each the first size
// of the next bucket; bucket 0 starts at 1).
std::string rangeStr(const std::vector<int64_t> &edges, size_t bucket);

// The representatives used when --assume does not name a symbol.
const std::vector<int64_t> &defaultRepresentatives();

// The cross product of the axes; bucket indices are row-major (the last axis fastest).
class BucketGrid {
public:
  BucketGrid() = default;
  explicit BucketGrid(std::vector<BucketAxis> axes) : all(std::move(axes)) {}

  const std::vector<BucketAxis> &axes() const { return all; }
  size_t size() const;
  // The representative size of every axis for bucket `index`.
  std::map<std::string, int64_t> representative(size_t index) const;
  // The bucket of the given sizes, one per axis in order.
  size_t indexOf(const std::vector<int64_t> &sizes) const;
  std::string describe(size_t index) const; // "M in [64, 1024), N in [1024, inf)"

private:
  std::vector<BucketAxis> all;
};

struct VariantChoice {
  // By the number of buckets each serves, most first: variants[0] is the dispatch's
  // fallback. With one variant, the best single configuration over all buckets.
  std::vector<Config> variants;
  std::vector<size_t> variantOfBucket;
  // Per bucket: the predicted time of its variant over the best predicted time there.
  std::vector<double> slowdown;
};

// Picks at most `maxVariants` configurations greedily. A bucket's loss is its variant's
// predicted time over the bucket's best predicted time; each step adds the configuration
// that most reduces the worst loss over buckets (then their product), and a local search
// then swaps chosen configurations for others while that improves the same score.
// Relative, not absolute, losses: a decoding-sized GEMM matters to its user as much as a
// large one. Stops adding once every bucket is within `tolerance` (0.03: 3%) of its best. `perBucket[i]` is
// the ranking for bucket i; at least one bucket must have a legal configuration.
VariantChoice chooseVariants(const std::vector<Recommendation> &perBucket, size_t maxVariants,
                             double tolerance);

} // namespace tlc::recommend
