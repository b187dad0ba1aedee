// The benchmark's structure oracle: what a measured kernel left behind, judged
// without a history. At quiescence, level 0 read from its head along the NEXT
// pointers, zombies stepped over (their keys live on in the chunk they were
// merged into), must be one strictly ascending list of keys that starts with
// minus infinity, with every live chunk unlocked, its keys packed before its
// EMPTY entries, its max field equal to its largest key (EMPTY for the final
// chunk), and as many user keys as the initial structure held plus the
// inserts that answered true minus the deletes that did.
//
// It walks each chunk once, so it costs milliseconds where the full snapshot
// invariants (invariants/snapshot.hpp, which gfsl stress and gfsl check run)
// cost seconds at 10M keys: cheap enough to judge every measurement. Never
// trusts the words: indexes are bounds-checked and the walk is bounded.
#pragma once

#include <cstdint>
#include <string>

#include "core/gfsl/layout.hpp"
#include "core/types.hpp"

namespace gfsl::bench {

struct level0_verdict {
  std::uint64_t user_keys = 0;  // counted on the walk (up to the first problem)
  std::string problem;          // empty when the oracle holds; else one line
};

// `words`: the structure (header and the first `allocated` chunks of its pool).
template <int N>
level0_verdict judge_level0(const std::uint64_t* words, std::uint64_t allocated, std::uint64_t expected_user_keys) {
  using shape = chunk_shape<N>;
  level0_verdict v;
  auto fail = [&](std::string what) {
    v.problem = std::move(what);
    return v;
  };
  const std::uint64_t* pool = words + header_offsets::pool;
  std::uint64_t c = words[header_offsets::heads];
  bool first_key = true;
  key_type last = key_neg_inf;
  for (std::uint64_t steps = 0;; ++steps) {
    // Built only for a problem: the walk visits every chunk of level 0.
    auto at = [c] { return "level 0, chunk " + std::to_string(c); };
    if (c >= allocated) return fail(at() + ": not an allocated chunk (" + std::to_string(allocated) + " are)");
    if (steps > allocated) return fail("level 0 does not end: a cycle through chunk " + std::to_string(c));
    const std::uint64_t* chunk = pool + c * N;
    const std::uint64_t lock = chunk[shape::lock_lane];
    const key_type max = entry_key(chunk[shape::next_lane]);
    const chunk_index next = entry_value(chunk[shape::next_lane]);
    if (!lock_is_zombie(lock)) {
      if (lock_is_held(lock)) return fail(at() + ": locked by team " + std::to_string(lock_owner(lock)) + " at quiescence");
      if (lock_in_burst(lock)) return fail(at() + ": a burst of writes open at quiescence (odd write version)");
      bool seen_empty = false;
      key_type largest = key_empty;
      for (int i = 0; i < shape::dsize; ++i) {
        const key_type k = entry_key(chunk[i]);
        if (k == key_empty) {
          seen_empty = true;
          continue;
        }
        if (seen_empty) return fail(at() + ": key " + std::to_string(k) + " after an EMPTY entry");
        if (first_key ? k != key_neg_inf : k <= last) {
          return fail(at() + ": key " + std::to_string(k) + (first_key ? " first, not minus infinity" : " after " + std::to_string(last)));
        }
        first_key = false;
        last = largest = k;
        v.user_keys += is_user_key(k) ? 1 : 0;
      }
      if (next == no_chunk ? max != key_empty : max != largest) {
        return fail(at() + ": max field " + std::to_string(max) + " but largest key " +
                    (largest == key_empty ? std::string("none") : std::to_string(largest)) +
                    (next == no_chunk ? " (final chunk)" : ""));
      }
    }
    if (next == no_chunk) break;
    c = next;
  }
  if (v.user_keys != expected_user_keys) {
    return fail("level 0 holds " + std::to_string(v.user_keys) + " keys where the answers say " +
                std::to_string(expected_user_keys));
  }
  return v;
}

}  // namespace gfsl::bench
