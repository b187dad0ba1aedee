// The park strategy: random (random.hpp), but a team at a chosen kind of
// point (park_point) is parked until the others complete whole operations:
// the interleavings where one team is paused for the whole of another
// team's operation (a split, merge or unlink). The parking record is also
// where tears (tear.hpp) hold a read open.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "scheduler.hpp"
#include "strategy.hpp"

namespace gfsl::sched {

struct parking {
  std::vector<std::uint64_t> until;  // the team waits until completed operations reach this
  std::vector<std::uint64_t> as;     // the number of the team's latest park, for the release order
  std::uint64_t parks = 0;           // park: times a team was parked
  std::uint64_t sequence = 0;        // parks and tears, in order: `as`
  std::uint64_t latest_until = 0;    // the largest `until` set: nobody is parked once completions reach it

  void reset(std::size_t n) {
    until.assign(n, 0);
    as.assign(n, 0);
    parks = 0;
    sequence = 0;
    latest_until = 0;
  }

  bool parked(team_id t, std::uint64_t completed) const { return until[t] > completed; }
  bool nobody_parked(std::uint64_t completed) const { return completed >= latest_until; }

  // Team t sleeps until completed operations reach `to` (a park or a tear).
  void park_until(team_id t, std::uint64_t to) {
    until[t] = to;
    latest_until = std::max(latest_until, to);
    as[t] = ++sequence;
  }
  // A tear's held read waits for one more operation: not a new park.
  void extend(team_id t, std::uint64_t to) {
    until[t] = to;
    latest_until = std::max(latest_until, to);
  }

  // The team parked or held last goes on; no_team when none is.
  team_id release_last(const std::vector<team_id>& unfinished, std::uint64_t completed);
};

// Park: is the team's next access `a` a point of the kind `at`? `last`: its
// previous access, when `accessed`. Asked at every access of a park run:
// inline.
inline bool at_park_point(park_point at, const access& a, bool accessed, const access& last) {
  const bool after_load = accessed && last.kind == access_kind::load;
  switch (at) {
    case park_point::lock_cas: return a.kind == access_kind::cas;
    case park_point::after_read: return after_load && last.group_size > 1 && a.group_index == 0;
    case park_point::before_write: return after_load && a.kind != access_kind::load;
    // The scheduling points inside a read are its group boundaries (every
    // lane at lane granularity, the second line at line granularity).
    case park_point::mid_read: return a.kind == access_kind::load && a.group_size > 1 && a.group_index > 0;
  }
  return false;
}

}  // namespace gfsl::sched
