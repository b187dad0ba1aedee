// GFSL's own words (thesis 3 / 4.1): chunk indexes, the lock word and the
// algorithm's variants. The NEXT entry of a chunk reuses the entry layout
// (core/types.hpp): max field as the key, next-chunk index as the value, so
// that both change in one 8-byte atomic store (Alg. 4.9 line 30). The LOCK
// entry holds a lock word (below).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../platform.hpp"
#include "../types.hpp"

namespace gfsl {

using chunk_index = std::uint32_t;
inline constexpr chunk_index no_chunk = 0xFFFFFFFFu;

// NEXT entry of a level's final chunk: max = +infinity, no next chunk.
inline constexpr entry_type final_next_entry = make_entry(key_empty, no_chunk);

// Lock word: the low 32 bits hold owner team id + 1 (0: free), so a hang report
// can name the holder. A zombie keeps the id of the team that marked it and
// sets the top bit; a CAS from a free word never succeeds on it (thesis 4.1:
// "marks a chunk as a zombie using a special value in the lock field").
//
// Bits 32-62 hold the chunk's write version, used by the `robust` variant only
// (docs/ALGORITHM.md, "Reads that are not one instant"): the lock holder makes
// it odd before a burst of writes that changes the chunk's keys or max and even
// after it, so that a reader can tell whether its lane-by-lane read of the
// chunk overlapped such a burst (a seqlock). The `thesis` variant never bumps
// it: its lock words are exactly the published ones (0 free, id+1 held).
inline constexpr std::uint64_t lock_free_word = 0;
inline constexpr std::uint64_t zombie_flag = 1ull << 63;
inline constexpr std::uint64_t lock_owner_mask = 0xFFFFFFFFull;
inline constexpr int lock_version_shift = 32;
inline constexpr std::uint64_t lock_version_unit = 1ull << lock_version_shift;
inline constexpr std::uint64_t lock_version_mask = ~lock_owner_mask & ~zombie_flag;

GFSL_FN constexpr std::uint64_t lock_word_of(team_id t) { return static_cast<std::uint64_t>(t) + 1; }
GFSL_FN constexpr std::uint64_t zombie_word_of(team_id t) { return zombie_flag | lock_word_of(t); }
GFSL_FN constexpr bool lock_is_zombie(std::uint64_t w) { return (w & zombie_flag) != 0; }
GFSL_FN constexpr bool lock_is_held(std::uint64_t w) { return (w & lock_owner_mask) != 0 && !lock_is_zombie(w); }
// Free: neither held nor a zombie, whatever its version.
GFSL_FN constexpr bool lock_is_free(std::uint64_t w) { return (w & (lock_owner_mask | zombie_flag)) == 0; }
// Team that holds (or, for a zombie, marked) the chunk; meaningless when free.
GFSL_FN constexpr team_id lock_owner(std::uint64_t w) { return static_cast<team_id>((w & lock_owner_mask) - 1); }
// The write version (robust variant; always 0 under thesis). Odd: a burst of
// writes is in progress.
GFSL_FN constexpr std::uint64_t lock_version(std::uint64_t w) { return (w & lock_version_mask) >> lock_version_shift; }
GFSL_FN constexpr bool lock_in_burst(std::uint64_t w) { return (lock_version(w) & 1u) != 0; }
// The word with the version moved on by one (wrapping inside its field).
GFSL_FN constexpr std::uint64_t lock_bumped(std::uint64_t w) {
  return (w & ~lock_version_mask) | ((w + lock_version_unit) & lock_version_mask);
}
// The same word with the owner field cleared: what an unlock leaves.
GFSL_FN constexpr std::uint64_t lock_released(std::uint64_t w) { return w & ~lock_owner_mask; }

// The algorithm's variant (docs/ALGORITHM.md): `thesis` is the published
// algorithm, which assumes a chunk is read in one instant; `robust` stays
// linearizable when a chunk read is lane by lane. Chosen at compile time by a
// template parameter of `algorithm`.
enum class variant : std::uint8_t { thesis = 0, robust = 1 };
inline constexpr variant default_variant = variant::robust;
// The upper levels' rule a variant runs by default: robust re-raises in
// place (docs/ALGORITHM.md, "Re-raising in place"); the published variant
// keeps the thesis' rule.
inline constexpr bool reraises_by_default(variant v) { return v == variant::robust; }

GFSL_FN constexpr const char* variant_name(variant v) { return v == variant::thesis ? "thesis" : "robust"; }

// "thesis" or "robust"; nothing otherwise.
inline std::optional<variant> parse_variant(std::string_view name) {
  if (name == "thesis") return variant::thesis;
  if (name == "robust") return variant::robust;
  return std::nullopt;
}
// Calls f(std::integral_constant<variant, V>{}) with the V named at run time:
// the one place a run-time variant becomes a template argument.
template <class F>
decltype(auto) with_variant(variant v, F&& f) {
  if (v == variant::thesis) return std::forward<F>(f)(std::integral_constant<variant, variant::thesis>{});
  return std::forward<F>(f)(std::integral_constant<variant, variant::robust>{});
}

}  // namespace gfsl
