// How often the rare paths of the algorithm ran. Each team counts its own; the
// runners add them up. Fuzzing campaigns report these to show that a run really
// exercised splits, merges, zombies and restarts.
#pragma once

#include <cstdint>

#include "platform.hpp"

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
    return *this;
  }
};

using path_stats = basic_path_stats<std::uint64_t>;

}  // namespace gfsl
