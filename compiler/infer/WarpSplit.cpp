#include "infer/WarpSplit.h"

namespace tlc::infer {

WarpSplit splitWarps(int64_t M, int64_t N, int warps, WarpPolicy policy, const target::MmaAtom &atom) {
  auto fits = [&](int64_t m, int64_t n) { return M % (atom.m * m) == 0 && N % (atom.n * n) == 0; };
  WarpSplit s;
  if (policy == WarpPolicy::FullRow) {
    s.m = warps, s.n = 1;
  } else if (policy == WarpPolicy::FullCol) {
    s.m = 1, s.n = warps;
  } else {
    double best = 1e30;
    for (int m = 1; m <= warps; m *= 2) {
      int n = warps / m;
      if (m * n != warps || !fits(m, n))
        continue;
      double ratio = double(M / m) / double(N / n);
      double score = ratio > 1 ? ratio : 1 / ratio;
      if (score < best)
        best = score, s.m = m, s.n = n;
    }
    if (!s.m)
      s.m = warps, s.n = 1;
  }
  s.fits = fits(s.m, s.n);
  return s;
}

WarpSplit splitWarpgroups(int64_t M, int64_t N, int groups, WarpPolicy policy, const target::MmaAtom &atom) {
  auto fits = [&](int64_t m, int64_t n) { return M % (atom.m * m) == 0 && N % (atom.n * n) == 0; };
  WarpSplit s;
  s.m = policy == WarpPolicy::FullCol ? 1 : groups, s.n = groups / s.m;
  if (policy != WarpPolicy::FullCol)
    for (int m = groups; m >= 1; --m)
      if (groups % m == 0 && fits(m, groups / m)) {
        s.m = m, s.n = groups / m;
        break;
      }
  s.fits = fits(s.m, s.n);
  return s;
}

} // namespace tlc::infer
