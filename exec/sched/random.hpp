// The random strategy's rule: every step a uniformly random team among
// those that can go on. Also the park strategy's rule between parks, and
// fair-pct's once PCT's steps are over.
#pragma once

#include <vector>

#include "strategy.hpp"

namespace gfsl::sched {

inline team_id pick_random(const std::vector<team_id>& among, team_rng& rng) { return among[below(rng, among.size())]; }

}  // namespace gfsl::sched
