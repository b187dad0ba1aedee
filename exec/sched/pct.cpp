#include "pct.hpp"

#include <algorithm>
#include <utility>

namespace gfsl::sched {

void pct_rule::setup(std::size_t n, const options& o, team_rng& rng) {
  // Initial priorities: a random permutation of d, d+1, ..., d+n-1; change
  // point j (1-based) lowers the running team to priority j, below them all.
  priority.assign(n, 0);
  std::vector<std::int64_t> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = o.depth + static_cast<std::int64_t>(i);
  for (std::size_t i = n; i > 1; --i) std::swap(values[i - 1], values[below(rng, i)]);
  priority = values;
  change_points.clear();
  for (int j = 1; j < o.depth; ++j) change_points.push_back(1 + below(rng, std::max<std::uint64_t>(o.pct_steps, 1)));
  std::sort(change_points.begin(), change_points.end());
  next_change = 0;
}

}  // namespace gfsl::sched
