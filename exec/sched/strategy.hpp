// The scheduler's strategies (scheduler.hpp), one a file, and how they
// compose. Two kinds:
//  - choice rules pick the next team among those enabled: random
//    (random.hpp) and PCT (pct.hpp; fair-pct is PCT's rule for its first
//    steps and random's after);
//  - park (park.hpp), tears (tear.hpp) and the targeted hold (hold.hpp)
//    pick nothing: they take a team out of the draw for a while (parked,
//    its read held open, held in a coverage window), under any choice rule
//    (tears and holds apply over PCT as well as random).
// The seam between the two kinds is not a clean one, and the scheduler's
// choose (scheduler.cpp) is where they meet: park and tears share one
// parking record (park.hpp: how long each team sleeps and in which order
// they went to sleep), a choice rule that finds no team enabled releases
// the team parked last, and each rule does so in its own way (PCT only for
// tears, since park is a strategy of its own and never runs under PCT).
// Every choice of every strategy comes from one seeded stream, drawn in
// the order the scheduler asks: a strategy draws only when called.
#pragma once

#include <cstdint>
#include <limits>

#include "../../core/team.hpp"
#include "../../core/types.hpp"

namespace gfsl::sched {

inline constexpr team_id no_team = std::numeric_limits<team_id>::max();

// Uniform in [0, bound), no modulo bias worth caring for at 64 bits.
inline std::uint64_t below(team_rng& r, std::uint64_t bound) {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(r.next()) * bound) >> 64);
}

}  // namespace gfsl::sched
