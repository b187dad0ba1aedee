// The vocabulary every subject shares: keys, values, 8-byte entries, team ids,
// the key sentinels and an operation's kind and result. A subject's own words
// (GFSL's lock word and chunk index: core/gfsl/types.hpp) live in its folder.
//
// An entry is 8 bytes: key in the low half, value in the high half (thesis
// Fig. 3.1), so that both change in one 8-byte atomic store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "platform.hpp"

namespace gfsl {

using key_type = std::uint32_t;
using value_type = std::uint32_t;
using entry_type = std::uint64_t;
using team_id = std::uint32_t;

// EMPTY is +infinity: an empty data entry, and the max field of a level's final
// chunk. Minus infinity heads every level. Both lie outside the user key range.
inline constexpr key_type key_empty = 0xFFFFFFFFu;
inline constexpr key_type key_neg_inf = 0u;
inline constexpr key_type min_user_key = 1u;
inline constexpr key_type max_user_key = 0xFFFFFFFEu;

// Team ids below 2^32 - 2: GFSL's lock word stores id + 1 and keeps its top value free.
inline constexpr team_id max_team_id = 0xFFFFFFFDu;

GFSL_FN constexpr bool is_user_key(key_type k) { return k >= min_user_key && k <= max_user_key; }

GFSL_FN constexpr entry_type make_entry(key_type k, std::uint32_t v) {
  return (static_cast<entry_type>(v) << 32) | k;
}
GFSL_FN constexpr key_type entry_key(entry_type e) { return static_cast<key_type>(e & 0xFFFFFFFFu); }
GFSL_FN constexpr std::uint32_t entry_value(entry_type e) { return static_cast<std::uint32_t>(e >> 32); }

inline constexpr entry_type empty_entry = make_entry(key_empty, 0);

// Word 1 of every structure is its error word: 0 while healthy, else the
// first error code a team stored there (a CAS from error_none). The host team
// stops a run whose structure is corrupt at its next wait (core/host_team.hpp).
inline constexpr std::size_t error_word_offset = 1;
inline constexpr std::uint64_t error_none = 0;
inline constexpr std::uint64_t error_pool_exhausted = 1;
inline constexpr std::uint64_t error_corrupt = 2;

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
