#include "tear.hpp"

namespace gfsl::sched {

bool tearing::here(const access& a, std::uint32_t boundaries, team_rng& rng) {
  const team_id t = a.team;
  if (a.kind != access_kind::load || a.group_size < 2) {
    index[t] = 0;
    return false;
  }
  if (a.group_index == 0) {
    // The row is named by its first word (lane i loads row + i).
    const std::uint64_t row = a.word - a.lane;
    const bool second = validation_next[t] != 0;
    validation_next[t] = 0;
    reading_row[t] = row;
    index[t] = 0;
    if (!second) return false;
    // One of the read's scheduling points after its first, uniformly:
    // lane_order has just set them.
    const std::uint32_t inside = boundaries & ~1u & (a.group_size >= 32 ? 0xFFFFFFFFu : (1u << a.group_size) - 1);
    if (inside == 0) return false;
    std::uint32_t pick = static_cast<std::uint32_t>(below(rng, static_cast<std::uint64_t>(__builtin_popcount(inside))));
    std::uint32_t bits = inside;
    while (pick--) bits &= bits - 1;
    index[t] = static_cast<std::uint8_t>(__builtin_ctz(bits));
    size[t] = a.group_size;
    return false;
  }
  if (index[t] == 0 || a.group_index != index[t]) return false;
  index[t] = 0;
  return true;
}

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
