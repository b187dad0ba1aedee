// Snapshot invariants of a SlabHash table (core/slabhash/layout.hpp): checks
// of a copy of its words, at quiescence or, for those marked mid_run, between
// any two accesses of a scheduled run. Never trusts the words: every index is
// bounds-checked and every walk visits a slab at most once.
//
// Each violation names the word it is about as "bucket 3 slab 12 lane 14
// (pair 7)" (describe_word: upstream's 32-bit lanes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "layout.hpp"
#include "../types.hpp"
#include "../../invariants/snapshot.hpp"

namespace gfsl::slabhash {

struct slab_invariant {
  std::string_view name;
  // Holds between any two accesses of a correct design's run, not only at
  // quiescence. (published breaks unique-keys mid-run and at quiescence:
  // that is upstream issue 27, not a reason to skip it.)
  bool mid_run;
  std::string_view what;
};

// In the order they are checked.
const std::vector<slab_invariant>& slab_invariants();

struct slab_violation {
  std::string invariant;
  std::uint64_t word = 0;  // the word it is about (offset from the table's start)
  std::string where;       // describe_word of it
  std::string detail;      // one line
  std::string line() const { return invariant + ": " + where + ": " + detail; }
};

struct slab_report {
  std::vector<std::string> checked;          // the invariants that ran
  std::vector<slab_violation> violations;    // empty when every one holds (at most max_violations)
  std::vector<std::pair<key_type, value_type>> live;  // live pairs of the reachable chains, sorted
  std::uint64_t slabs_allocated = 0;         // the counter, at most the pool's size
  std::size_t chain_slabs = 0;               // slabs reachable from the bucket heads
};

// `quiescent` false runs only the mid_run invariants. `variant` decides
// whether tombstones are well formed and whether the prefix property is
// checked (fixed only).
slab_report check_slab_snapshot(const std::uint64_t* words, std::size_t word_count, const params& p,
                                slab_variant variant, bool quiescent = true, std::size_t max_violations = 50);

// What a table holds at quiescence (no team running).
struct contents {
  std::vector<std::pair<key_type, value_type>> entries;  // live pairs, sorted by key (a key twice appears twice)
  std::uint64_t slabs_allocated = 0;
  std::vector<std::string> problems;  // one line each (slab_violation::line), empty if well formed
};
contents inspect(const std::uint64_t* words, std::size_t word_count, const params& p, slab_variant variant);

// The words a snapshot keeps: the header and the slabs handed out by the
// allocation counter `allocated` (the rest of the pool is pristine).
inline std::size_t handed_out_words(std::uint64_t allocated, const params& p) {
  const std::uint64_t slabs = allocated < slab_capacity(p) ? allocated : slab_capacity(p);
  const std::size_t n = header_words + static_cast<std::size_t>(slabs) * slab_words;
  return n < word_count(p) ? n : word_count(p);
}

// A table's snapshot from those words (every backend takes it alike).
inline invariants::snapshot table_snapshot(const params& p, slab_variant v, std::vector<std::uint64_t> words,
                                           std::uint64_t stamp = 0) {
  invariants::snapshot snap;
  snap.subject = subject_kind::slabhash;
  snap.chunk = slab_words;
  snap.capacity = p.pool_slabs;
  snap.buckets = p.buckets;
  snap.variant = static_cast<std::uint8_t>(v);
  snap.stamp = stamp;
  snap.words = std::move(words);
  return snap;
}

}  // namespace gfsl::slabhash
