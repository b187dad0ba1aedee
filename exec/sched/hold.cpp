#include "hold.hpp"

#include "../../core/coverage.hpp"

namespace gfsl::sched {

void coverage_hold::mark(const hold_directive& h, std::size_t n, team_id team, std::uint8_t what, std::uint32_t where) {
  if (team >= n) return;
  if (is_effect_mark(what)) {
    const int e = what - effect_base;
    if (e >= max_effects) return;
    effects_made |= 1u << e;
    for (team_id u = 0; u < n; ++u) {
      if (u != team && open_window[u] >= 0 && open_chunk[u] == where) pairs |= 1ull << pair_bit(open_window[u], e);
    }
    if (held != no_team && held != team && held_chunk == where && e == h.effect) releases[team] = 1;
    return;
  }
  open_window[team] = -1;
  if (!is_open_mark(what)) return;
  const int w = what - 1;
  if (w >= max_windows) return;
  open_window[team] = w;
  open_chunk[team] = where;
  windows_opened |= 1u << w;
  ++window_opens[static_cast<std::size_t>(w)];
  if (h.active && !taken && w == h.window && (h.team == hold_directive::any_team || h.team == team) && ++openings == h.nth) {
    // Held from its next access on: a mark is not a scheduling point.
    taken = true;
    held = team;
    held_chunk = where;
  }
}

}  // namespace gfsl::sched
