// Directed runs: workloads written to reach the algorithm's rarest paths,
// which random workloads almost never reach, given to the campaign as a
// coverage-guided fuzzer is given a seed corpus. Each is a listed workload
// (model/script.hpp) run under a fresh schedule, judged like any other run.
//
// restart (searchDown's backtrack with no previous chunk, thesis 4.2.1; in
// robust the fall back to the level's head): a search reads a level-2 chunk,
// decides to step down at key j, and before it reads the level-1 chunk that
// j points to, another team deletes j from every level. The level-1 chunk
// then holds only keys above the one sought, and there is no chunk of that
// level to go back to. It needs a structure of height 2 (about 150 keys on
// 16-entry chunks) and a delete of one of its few level-2 keys while a
// search for a key just above it is parked between exactly those two reads:
// 2 of 1,000 random runs of the most favourable generated shape reached it
// (300 keys, 90% full, 16-entry chunks, p_chunk 1, parked after reads), and
// no campaign did. The directed run builds the structure from ascending
// keys, where the level-2 keys are known (105, 154, 203, ...), and parks
// after reads: about one run in six reaches it.
#pragma once

#include <span>

#include "core/team.hpp"
#include "fuzz/generators.hpp"

namespace gfsl::fuzz {

// A directed run for the campaign (host backend: the park strategy and the
// listed workload are the scheduled backend's), drawn with `rng`.
run_config directed_run(const generator_limits& lim, mutant m, variant v, team_rng& rng);

// The level-2 keys of the restart run's structure, which its deletes aim at.
std::span<const key_type> restart_level2_keys();

}  // namespace gfsl::fuzz
