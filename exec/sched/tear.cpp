#include "tear.hpp"

namespace gfsl::sched {

void tearing::hold(team_id t, parking& p, std::uint64_t completed) {
  p.park_until(t, completed + 1);
  held[t] = 1;
  written[t] = 0;
  extensions[t] = 0;
  ++tears;
  ++held_now;
}

void tearing::extend(const std::vector<team_id>& unfinished, parking& p, std::uint64_t completed) {
  for (team_id t : unfinished) {
    if (!held[t] || written[t] || p.until[t] != completed || extensions[t] >= tear_patience) continue;
    ++extensions[t];
    p.extend(t, completed + 1);
  }
}

}  // namespace gfsl::sched
