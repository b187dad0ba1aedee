// Snapshot invariants of a Li-Deng skiplist (core/lideng/layout.hpp): checks
// of a copy of its words, at quiescence (between batches) or, for those
// marked mid_run, between any two accesses of a scheduled batch of one kind.
// Never trusts the words: every index is bounds-checked and every walk is
// bounded by the pool's size.
//
// Each violation names the word it is about as "node 12 forward[3]"
// (describe_word).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../types.hpp"
#include "layout.hpp"

namespace gfsl::lideng {

struct lideng_invariant {
  std::string_view name;
  // Holds between any two accesses of a `fixed` batch of one kind, not only
  // between batches.
  bool mid_run;
  std::string_view what;
};

// In the order they are checked.
const std::vector<lideng_invariant>& lideng_invariants();

struct lideng_violation {
  std::string invariant;
  std::uint64_t word = 0;  // the word it is about (offset from the list's start)
  std::string where;       // describe_word of it
  std::string detail;      // one line
  std::string line() const { return invariant + ": " + where + ": " + detail; }
};

struct lideng_report {
  std::vector<std::string> checked;                   // the invariants that ran
  std::vector<lideng_violation> violations;           // empty when all hold (at most max_violations)
  std::vector<std::pair<key_type, value_type>> live;  // level 0 from head to tail, in list order
  std::uint64_t nodes_allocated = 0;                  // the counter, at most the pool's size
  std::vector<std::size_t> level_sizes;               // nodes on each level, sentinels left out
};

// `quiescent` false runs only the mid_run invariants.
lideng_report check_lideng_snapshot(const std::uint64_t* words, std::size_t word_count, const params& p,
                                    bool quiescent = true, std::size_t max_violations = 50);

// What a list holds at quiescence (no team running).
struct contents {
  std::vector<std::pair<key_type, value_type>> entries;  // level 0, sorted by key (a key twice appears twice)
  std::uint64_t nodes_allocated = 0;
  std::vector<std::string> problems;  // one line each (lideng_violation::line), empty if well formed
};
contents inspect(const std::uint64_t* words, std::size_t word_count, const params& p);

}  // namespace gfsl::lideng
