// PCT (Burckhardt et al., ASPLOS 2010): random priorities, depth-1 change
// points in [1, k]; the highest-priority team that can go on steps.
// fair-pct: PCT for the first `fair_after` steps, random (random.hpp) after.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler.hpp"
#include "strategy.hpp"

namespace gfsl::sched {

struct pct_rule {
  std::vector<std::int64_t> priority;
  std::vector<std::uint64_t> change_points;
  std::size_t next_change = 0;
  team_id top = no_team;  // highest-priority unfinished team, valid while top_valid
  bool top_valid = false;

  // Whether PCT's rule picks at this step (fair-pct: only before its switch).
  static bool rules(const options& o, std::uint64_t steps) {
    if (o.strat == strategy::pct) return true;
    if (o.strat == strategy::fair_pct) return steps < (o.fair_after ? o.fair_after : o.pct_steps);
    return false;
  }

  // A run of n teams: initial priorities and change points, drawn from rng.
  void setup(std::size_t n, const options& o, team_rng& rng);

  // The change points reached at step `steps`: while PCT rules, each lowers
  // the running team below every other (one priority change each).
  void pass_change_points(const options& o, std::uint64_t steps, team_id current, std::uint64_t& priority_changes) {
    while (next_change < change_points.size() && steps >= change_points[next_change]) {
      if (rules(o, steps)) {
        priority[current] = static_cast<std::int64_t>(next_change + 1);
        ++priority_changes;
      }
      top_valid = false;
      ++next_change;
    }
  }

  // The highest-priority team of `unfinished` (all of them enabled).
  team_id top_of(const std::vector<team_id>& unfinished) {
    if (!top_valid) {
      top = unfinished.front();
      for (team_id t : unfinished) {
        if (priority[t] > priority[top]) top = t;
      }
      top_valid = true;
    }
    return top;
  }

  // The highest-priority enabled team of 0 .. n-1; no_team when none is.
  template <class Enabled>
  team_id best(std::size_t n, const Enabled& enabled) const {
    team_id pick = no_team;
    for (team_id t = 0; t < n; ++t) {
      if (enabled(t) && (pick == no_team || priority[t] > priority[pick])) pick = t;
    }
    return pick;
  }
};

}  // namespace gfsl::sched
