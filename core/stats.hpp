// How often the rare paths of the algorithm ran. Each team counts its own; the
// runners add them up. Fuzzing campaigns report these to show that a run really
// exercised splits, merges, zombies and restarts.
#pragma once

#include <cstdint>

#include "platform.hpp"

namespace gfsl {

struct path_stats {
  std::uint64_t splits = 0;            // chunk splits (insert overflow and merge pre-split)
  std::uint64_t merges = 0;            // chunks merged into their successor (zombies made)
  std::uint64_t zombies_skipped = 0;   // lateral steps over a zombie
  std::uint64_t zombie_unlinks = 0;    // NEXT pointers redirected past zombies
  std::uint64_t head_unlinks = 0;      // head-array entries moved past a zombie
  std::uint64_t backtracks = 0;        // searchDown backtracks (Alg. 4.2 lines 24-28)
  std::uint64_t restarts = 0;          // searchDown restarts (4.2.1 "Lock-Freedom")
  std::uint64_t down_ptr_updates = 0;  // down pointers rewritten by updateDownPtrs
  std::uint64_t lock_waits = 0;        // reads of a chunk found locked by another team
  std::uint64_t raised_keys = 0;       // keys inserted above level 0

  GFSL_FN path_stats& operator+=(const path_stats& o) {
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
    return *this;
  }
};

}  // namespace gfsl
