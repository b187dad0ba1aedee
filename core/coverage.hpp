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
// A subject lists its windows and effects by name in its descriptor
// (subject_descriptor::coverage) and marks them with the enums of its folder
// (core/gfsl/coverage.hpp, core/slabhash/coverage.hpp).
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

// A run's reached pairs fit one 64-bit mask: at most 8 windows x 8 effects,
// pair (w, e) at bit 8w + e whatever the subject's counts.
inline constexpr int max_windows = 8, max_effects = 8;
constexpr int pair_bit(int window, int effect) { return window * max_effects + effect; }


}  // namespace gfsl
