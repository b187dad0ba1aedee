// Interleaving coverage: what a structure tells the testbed about where its
// teams are, through the one hook it knows of besides its counters
// (Team::mark). A subject names
//
// - windows: the stretch of one operation between two consecutive steps its
//   correctness argument is about (an unlinker between reading a zombie's
//   predecessor and taking its lock, a search between an upper-level read
//   and the read below it), opened on one chunk (or slab) by a mark and
//   closed by the team's next mark or the end of its operation;
// - effects: what a team's operation completed on a chunk (split it, merged
//   it, removed or inserted a key in it).
//
// A coverage pair (window w, effect e) is reached when, while a team's window
// w is open on chunk c, another team marks effect e on c. The deterministic
// scheduler records the pairs a run reaches (exec/sched/scheduler.hpp) and
// can hold a team inside a window until another team's operation makes a
// given effect on that chunk (a targeted park); the fuzz campaign steers
// towards pairs it has not reached (docs/FUZZING.md, "Interleaving coverage").
//
// On the device the mark is a no-op (core/cuda/device_team.cuh): marks cost
// nothing there and change no access.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "subject.hpp"

namespace gfsl {

// A mark's number: 0 closes the team's open window; 1 + w opens window w;
// effect_base + e says the team's operation made effect e.
using coverage_mark = std::uint8_t;
inline constexpr coverage_mark mark_close = 0;
inline constexpr coverage_mark effect_base = 64;
constexpr coverage_mark mark_open(int window) { return static_cast<coverage_mark>(1 + window); }
constexpr coverage_mark mark_effect(int effect) { return static_cast<coverage_mark>(effect_base + effect); }
constexpr bool is_open_mark(coverage_mark m) { return m != mark_close && m < effect_base; }
constexpr bool is_effect_mark(coverage_mark m) { return m >= effect_base; }

// GFSL's windows (core/algorithm.hpp marks them).
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

// SlabHash's (core/slabhash/algorithm.hpp marks them).
enum class slab_window : std::uint8_t {
  claim,   // insert: from the slab read that found an EMPTY pair to the claim CAS
  erase,   // delete: from the slab read that found k to the CAS (or exchange) that removes it
  count_
};
enum class slab_effect : std::uint8_t { insert, remove, append, count_ };
inline constexpr std::string_view slab_window_names[] = {"claim", "delete"};
inline constexpr std::string_view slab_effect_names[] = {"insert", "remove", "append"};

struct coverage_spec {
  std::span<const std::string_view> windows;
  std::span<const std::string_view> effects;
  std::size_t pairs() const { return windows.size() * effects.size(); }
  int find_window(std::string_view name) const {
    for (std::size_t i = 0; i < windows.size(); ++i) {
      if (windows[i] == name) return static_cast<int>(i);
    }
    return -1;
  }
  int find_effect(std::string_view name) const {
    for (std::size_t i = 0; i < effects.size(); ++i) {
      if (effects[i] == name) return static_cast<int>(i);
    }
    return -1;
  }
};

inline coverage_spec coverage_of(subject_kind s) {
  if (s == subject_kind::slabhash) return {slab_window_names, slab_effect_names};
  return {gfsl_window_names, gfsl_effect_names};
}

// A run's reached pairs fit one 64-bit mask: at most 8 windows x 8 effects,
// pair (w, e) at bit 8w + e whatever the subject's counts.
inline constexpr int max_windows = 8, max_effects = 8;
constexpr int pair_bit(int window, int effect) { return window * max_effects + effect; }
static_assert(std::size(gfsl_window_names) <= max_windows && std::size(gfsl_effect_names) <= max_effects);
static_assert(std::size(slab_window_names) <= max_windows && std::size(slab_effect_names) <= max_effects);
static_assert(std::size(gfsl_window_names) == static_cast<std::size_t>(gfsl_window::count_));
static_assert(std::size(gfsl_effect_names) == static_cast<std::size_t>(gfsl_effect::count_));
static_assert(std::size(slab_window_names) == static_cast<std::size_t>(slab_window::count_));
static_assert(std::size(slab_effect_names) == static_cast<std::size_t>(slab_effect::count_));

constexpr coverage_mark open_mark(gfsl_window w) { return mark_open(static_cast<int>(w)); }
constexpr coverage_mark effect_mark(gfsl_effect e) { return mark_effect(static_cast<int>(e)); }
constexpr coverage_mark open_mark(slab_window w) { return mark_open(static_cast<int>(w)); }
constexpr coverage_mark effect_mark(slab_effect e) { return mark_effect(static_cast<int>(e)); }

}  // namespace gfsl
