#include "park.hpp"

namespace gfsl::sched {

team_id parking::release_last(const std::vector<team_id>& unfinished, std::uint64_t completed) {
  team_id last = no_team;
  for (team_id t : unfinished) {
    if (until[t] > completed && (last == no_team || as[t] > as[last])) last = t;
  }
  if (last != no_team) until[last] = 0;
  return last;
}

bool at_park_point(park_point at, const access& a, bool accessed, const access& last) {
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
