// GFSL's coverage windows and effects (core/coverage.hpp says what they are;
// core/gfsl/algorithm.hpp marks them).
#pragma once

#include <cstdint>
#include <iterator>
#include <string_view>

#include "../coverage.hpp"

namespace gfsl {

enum class gfsl_window : std::uint8_t {
  // search_down's down step: from the read of an upper-level chunk that
  // decided to step down at key j to the read of the chunk j points to,
  // which is the window's chunk. What the restart and backtrack rules
  // (4.2.1) are about: j deleted from that chunk (its keys are then all
  // above the one sought), or the chunk split or merged, in between.
  step_down,
  // unlink_zombie (Alg. 4.6 l.10-20) with a predecessor: from entering the
  // unlink (the predecessor was read by the search, and the zombie after it)
  // to the try-lock of the predecessor. A split of the predecessor moves its
  // NEXT off the zombie meanwhile; only the re-check under the lock sees it.
  unlink,
  // An update's search found the level-0 chunk enclosing k: from that read
  // to the lock CAS of findAndLockEnclosing (Alg. 4.8) and its re-read.
  lock_enclosing,
  // robust's validated "not here": from the first read to the version
  // check after the second (validated_read).
  validate,
  count_
};
enum class gfsl_effect : std::uint8_t { split, merge, remove, insert, count_ };

inline constexpr std::string_view gfsl_window_names[] = {"step-down", "unlink", "lock-enclosing", "validate"};
inline constexpr std::string_view gfsl_effect_names[] = {"split", "merge", "remove", "insert"};

static_assert(std::size(gfsl_window_names) <= max_windows && std::size(gfsl_effect_names) <= max_effects);
static_assert(std::size(gfsl_window_names) == static_cast<std::size_t>(gfsl_window::count_));
static_assert(std::size(gfsl_effect_names) == static_cast<std::size_t>(gfsl_effect::count_));
constexpr coverage_mark open_mark(gfsl_window w) { return mark_open(static_cast<int>(w)); }
constexpr coverage_mark effect_mark(gfsl_effect e) { return mark_effect(static_cast<int>(e)); }

}  // namespace gfsl
