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

}  // namespace gfsl::sched
