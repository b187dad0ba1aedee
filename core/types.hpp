// Keys, values, chunk entries and the sentinels of thesis 3 / 4.1.
//
// A chunk entry is 8 bytes: key in the low half, value in the high half (thesis
// Fig. 3.1). The NEXT entry reuses the layout: max field as the key, next-chunk
// index as the value, so that both change in one 8-byte atomic store (Alg. 4.9
// line 30). The LOCK entry holds a lock word (below).
#pragma once

#include <cstdint>

#include "platform.hpp"

namespace gfsl {

using key_type = std::uint32_t;
using value_type = std::uint32_t;
using entry_type = std::uint64_t;
using chunk_index = std::uint32_t;
using team_id = std::uint32_t;

// EMPTY is +infinity: an empty data entry, and the max field of a level's final
// chunk. Minus infinity heads every level. Both lie outside the user key range.
inline constexpr key_type key_empty = 0xFFFFFFFFu;
inline constexpr key_type key_neg_inf = 0u;
inline constexpr key_type min_user_key = 1u;
inline constexpr key_type max_user_key = 0xFFFFFFFEu;

inline constexpr chunk_index no_chunk = 0xFFFFFFFFu;

GFSL_FN constexpr bool is_user_key(key_type k) { return k >= min_user_key && k <= max_user_key; }

GFSL_FN constexpr entry_type make_entry(key_type k, std::uint32_t v) {
  return (static_cast<entry_type>(v) << 32) | k;
}
GFSL_FN constexpr key_type entry_key(entry_type e) { return static_cast<key_type>(e & 0xFFFFFFFFu); }
GFSL_FN constexpr std::uint32_t entry_value(entry_type e) { return static_cast<std::uint32_t>(e >> 32); }

inline constexpr entry_type empty_entry = make_entry(key_empty, 0);
// NEXT entry of a level's final chunk: max = +infinity, no next chunk.
inline constexpr entry_type final_next_entry = make_entry(key_empty, no_chunk);

// Lock word: 0 is free; otherwise the low 32 bits hold owner team id + 1, so a
// hang report can name the holder. A zombie keeps the id of the team that marked
// it and sets the top bit; a CAS from 0 never succeeds on it (thesis 4.1:
// "marks a chunk as a zombie using a special value in the lock field").
inline constexpr std::uint64_t lock_free_word = 0;
inline constexpr std::uint64_t zombie_flag = 1ull << 63;
inline constexpr team_id max_team_id = 0xFFFFFFFDu;

GFSL_FN constexpr std::uint64_t lock_word_of(team_id t) { return static_cast<std::uint64_t>(t) + 1; }
GFSL_FN constexpr std::uint64_t zombie_word_of(team_id t) { return zombie_flag | lock_word_of(t); }
GFSL_FN constexpr bool lock_is_zombie(std::uint64_t w) { return (w & zombie_flag) != 0; }
GFSL_FN constexpr bool lock_is_held(std::uint64_t w) { return w != lock_free_word && !lock_is_zombie(w); }
// Team that holds (or, for a zombie, marked) the chunk; meaningless when free.
GFSL_FN constexpr team_id lock_owner(std::uint64_t w) { return static_cast<team_id>((w & 0xFFFFFFFFu) - 1); }

// Result of one operation. `ok` is the operation's boolean answer (inserted,
// deleted, found); `value` is the value found by contains or removed by delete.
enum class status : std::uint8_t {
  ok = 0,
  key_out_of_range = 1,  // refused at the API, nothing touched
  pool_exhausted = 2,    // the operation stopped cleanly; see docs/ALGORITHM.md for what it may have done
  stopped = 3,           // an earlier error stopped the structure; the operation did nothing
  corrupt = 4,           // the operation tried to access memory outside the structure: it is corrupt
};

struct op_result {
  status st = status::ok;
  bool ok = false;
  value_type value = 0;
};

enum class op_kind : std::uint8_t { insert = 0, remove = 1, contains = 2 };

GFSL_FN constexpr const char* status_name(status s) {
  switch (s) {
    case status::ok: return "ok";
    case status::key_out_of_range: return "key out of range";
    case status::pool_exhausted: return "chunk pool exhausted";
    case status::stopped: return "structure stopped by an earlier error";
    case status::corrupt: return "access outside the structure (corrupt pointer)";
  }
  return "unknown status";
}

}  // namespace gfsl
