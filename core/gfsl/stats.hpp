// How often the rare paths of the algorithm ran. Each team counts its own; the
// runners add them up. Fuzzing campaigns report these to show that a run really
// exercised splits, merges, zombies and restarts.
#pragma once

#include <cstdint>

#include "../platform.hpp"
#include "../team.hpp"

namespace gfsl {

// Count: 64-bit in reports; the device team counts in 32-bit registers (an
// operation's counts are small) and adds them into the 64-bit totals.
template <class Count>
struct basic_path_stats {
  Count splits = 0;            // chunk splits (insert overflow and merge pre-split)
  Count merges = 0;            // chunks merged into their successor (zombies made)
  Count zombies_skipped = 0;   // lateral steps over a zombie
  Count zombie_unlinks = 0;    // NEXT pointers redirected past zombies
  Count head_unlinks = 0;      // head-array entries moved past a zombie
  Count backtracks = 0;        // searchDown backtracks (Alg. 4.2 lines 24-28)
  Count restarts = 0;          // searchDown restarts (4.2.1 "Lock-Freedom")
  Count down_ptr_updates = 0;  // down pointers rewritten by updateDownPtrs
  Count lock_waits = 0;        // reads of a chunk found locked by another team
  Count raised_keys = 0;       // keys inserted above level 0
  Count upper_splits = 0;      // splits above level 0 (of a raised key's chunk)
  Count merge_presplits = 0;   // merges whose successor had to split first (Alg. 4.12 lines 12-17)
  Count last_chunk_removals = 0;     // removals that left an underfull final chunk unmerged (4.2.3)
  Count upper_down_ptr_updates = 0;  // down pointers rewritten above level 1
  Count chunk_reads = 0;       // team-wide reads of a chunk (not a rare path: the cost of a search)
  Count reraised_keys = 0;     // keys raised by a delete in place of the one it removed (the re-raise rule)

  template <class Other>
  GFSL_FN basic_path_stats& operator+=(const basic_path_stats<Other>& o) {
    splits += o.splits;
    merges += o.merges;
    zombies_skipped += o.zombies_skipped;
    zombie_unlinks += o.zombie_unlinks;
    head_unlinks += o.head_unlinks;
    backtracks += o.backtracks;
    restarts += o.restarts;
    down_ptr_updates += o.down_ptr_updates;
    lock_waits += o.lock_waits;
    raised_keys += o.raised_keys;
    upper_splits += o.upper_splits;
    merge_presplits += o.merge_presplits;
    last_chunk_removals += o.last_chunk_removals;
    upper_down_ptr_updates += o.upper_down_ptr_updates;
    chunk_reads += o.chunk_reads;
    reraised_keys += o.reraised_keys;
    return *this;
  }
};

using path_stats = basic_path_stats<std::uint64_t>;

// The counters by position, in the order of basic_path_stats' members: what
// the algorithm names when it counts (Team::count, by stat_id: stat_of(s)). The
// device team keeps counter i in a register of lane i, one register for all
// of them, so a counter costs no register and its increment no branch.
enum class path_stat : std::uint8_t {
  splits,
  merges,
  zombies_skipped,
  zombie_unlinks,
  head_unlinks,
  backtracks,
  restarts,
  down_ptr_updates,
  lock_waits,
  raised_keys,
  upper_splits,
  merge_presplits,
  last_chunk_removals,
  upper_down_ptr_updates,
  chunk_reads,
  reraised_keys,
};
// At most 16: the device team of N = 16 keeps them in its 16 lanes.
inline constexpr int path_stat_count = 16;
static_assert(sizeof(path_stats) == path_stat_count * sizeof(std::uint64_t),
              "path_stat numbers basic_path_stats' members, which are all the struct holds");
static_assert(path_stat_count <= max_team_stats, "a team keeps at most max_team_stats counters");
static_assert(static_cast<int>(path_stat::chunk_reads) == reads_stat,
              "chunk reads are the team-wide reads the device team counts on every lane");

// The team's counter number of `s` (Team::count).
GFSL_FN constexpr stat_id stat_of(path_stat s) { return static_cast<stat_id>(s); }

// Counter `s` of `p`: the members are consecutive 64-bit words in path_stat order.
GFSL_FN std::uint64_t& counter_of(path_stats& p, path_stat s) {
  std::uint64_t* const fields[path_stat_count] = {
      &p.splits,           &p.merges,          &p.zombies_skipped,    &p.zombie_unlinks,
      &p.head_unlinks,     &p.backtracks,      &p.restarts,           &p.down_ptr_updates,
      &p.lock_waits,       &p.raised_keys,     &p.upper_splits,       &p.merge_presplits,
      &p.last_chunk_removals, &p.upper_down_ptr_updates, &p.chunk_reads,
      &p.reraised_keys};
  return *fields[static_cast<int>(s)];
}

// A team's counters (Team::count, by stat_id) as GFSL's named ones.
inline path_stats& operator+=(path_stats& p, const team_stats& t) {
  for (int i = 0; i < path_stat_count; ++i) counter_of(p, static_cast<path_stat>(i)) += t.count[i];
  return p;
}
inline path_stats path_stats_of(const team_stats& t) {
  path_stats p;
  p += t;
  return p;
}

// The rare paths by name, for coverage reports: a campaign says which it never
// reached.
struct rare_path {
  const char* name;
  std::uint64_t path_stats::*count;
};
inline constexpr rare_path rare_paths[] = {
    {"split", &path_stats::splits},
    {"split-above-level-0", &path_stats::upper_splits},
    {"merge", &path_stats::merges},
    {"merge-with-presplit", &path_stats::merge_presplits},
    {"last-chunk-rule", &path_stats::last_chunk_removals},
    {"zombie-skip", &path_stats::zombies_skipped},
    {"zombie-unlink", &path_stats::zombie_unlinks},
    {"head-unlink", &path_stats::head_unlinks},
    {"backtrack", &path_stats::backtracks},
    {"restart", &path_stats::restarts},
    {"down-pointer-update", &path_stats::down_ptr_updates},
    {"down-pointer-update-above-level-1", &path_stats::upper_down_ptr_updates},
    {"lock-wait", &path_stats::lock_waits},
    {"raised-key", &path_stats::raised_keys},
    {"re-raise", &path_stats::reraised_keys},
};

}  // namespace gfsl
