// The structure oracle of gfsl stress for SlabHash: one round's table, copied
// back at quiescence, judged by its snapshot invariants and against the keys
// whose presence the shape knows. Host code, so that it is tested without a
// device (tests/test_stress_slabhash.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/slabhash/layout.hpp"
#include "core/types.hpp"
#include "stress/report.hpp"
#include "stress/stress.hpp"

namespace gfsl::stress {

struct slab_round_verdict {
  // Copies of a key beyond its first (unique-keys: upstream issue 27).
  std::uint64_t duplicates = 0;
  // Known keys absent from the table (owned keys the owner inserted and
  // never deleted; stable keys): lost inserts.
  std::uint64_t lost = 0;
  // Known-absent keys present, keys outside the workload, wrong values.
  std::uint64_t unexpected = 0;
  // Violations of the other snapshot invariants (chains, pairs, pool).
  std::uint64_t malformed = 0;
  std::uint64_t slabs_allocated = 0;
  // At most `max_lines`, one line each, naming bucket, slab and lane.
  std::vector<std::string> problems;
  bool ok() const { return duplicates + lost + unexpected + malformed == 0; }
};

// `expected`: the known keys that must be present, sorted, each with its
// value. Keys in [unknown_lo, unknown_hi] (and, for stable-contains, the
// non-stable keys of the range: `stable_every` > 0) may or may not be
// there, at most once, with value_of(k); any other key is unexpected.
slab_round_verdict judge_slab_round(const std::uint64_t* words, std::size_t word_count, const slabhash::params& p,
                                    slabhash::slab_variant v, const std::vector<std::pair<key_type, value_type>>& expected,
                                    key_type unknown_lo, key_type unknown_hi, std::size_t max_lines = 16);

// The round oracle of every backend (the device policy's and the host
// stress policy's judge): the keys the shape knows at the end of a round
// (stable keys; every team's present owned keys, the shared keys unknown),
// judged by judge_slab_round, its findings added to the report's counts
// (`at`: seconds since the configuration's start, for the time to first).
struct structure_verdict;
structure_verdict judge_slab_structure(const std::uint64_t* words, std::size_t word_count, const slabhash::params& sp,
                                       slabhash::slab_variant v, const params& p, const std::vector<team_state>& states,
                                       config_result& res, double at);

// "false contains(20) (expected true)  bucket 0 slab 3: 5 . 9 T ... | next 17":
// a slab as a failing read saw it, EMPTY as `.`, a tombstone as `T`.
std::string describe_slab(const std::uint64_t* words);

}  // namespace gfsl::stress
