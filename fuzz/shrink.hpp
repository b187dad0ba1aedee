// Shrinking candidates that keep the failing interleaving: a listed run
// cut short in time. A seeded schedule draws each choice from the teams
// still unfinished, so a run whose every team keeps the operations it
// called before a moment T makes, up to about T, the very choices the
// failing run made (a team only leaves the draw once it runs out of
// operations, at or after T). Operations called after T are gone in one
// candidate, where delta debugging takes one list segment at a time and a
// fresh schedule for each; a failure decided before T fails again,
// bit for bit up to there.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fuzz/detectors.hpp"

namespace gfsl::fuzz {

// `listed` (a run with a script) cut at call stamp `cut`: each team keeps
// the operations it called before `cut` in `failing` (its execution);
// nullopt when that keeps every operation or none.
std::optional<run_config> cut_at(const run_config& listed, const judgement& failing, std::uint64_t cut);

// The moments to cut a failure at, earliest first: just after the
// operation a detector points at returned (linearizability's stuck
// operation; nothing for detectors that point at none), then at fixed
// fractions of the concurrent phase's call stamps.
std::vector<std::uint64_t> cut_points(const judgement& failing);

// `listed` with the last `count` operations of team `team` taken out (the
// same schedule seed): the run is the same until that team would have
// begun the first of them, where a cut in time must keep every team's
// operations called before that moment. nullopt when the team has fewer.
std::optional<run_config> without_tail(const run_config& listed, std::size_t team, std::size_t count);

}  // namespace gfsl::fuzz
