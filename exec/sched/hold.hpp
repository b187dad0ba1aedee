// Interleaving coverage (core/coverage.hpp) and the targeted park
// (hold_directive) it aims, with any strategy: per team the window it has
// open (-1: none) and on which chunk; the hold's team (no_team: none held),
// its chunk, the openings counted towards its nth, and per team whether its
// current operation made the hold's effect on that chunk (the hold ends
// when that operation does). The held team is out of the draw; the
// scheduler lets it go early when nothing else can step or the run starves.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "scheduler.hpp"
#include "strategy.hpp"

namespace gfsl::sched {

struct coverage_hold {
  std::vector<int> open_window;
  std::vector<std::uint32_t> open_chunk;
  team_id held = no_team;
  std::uint32_t held_chunk = 0;
  std::uint32_t openings = 0;
  std::vector<char> releases;
  std::uint64_t pairs = 0;
  std::uint32_t windows_opened = 0, effects_made = 0;
  std::array<std::uint32_t, 8> window_opens{};
  bool taken = false, met = false;

  void reset(std::size_t n) {
    open_window.assign(n, -1);
    open_chunk.assign(n, 0);
    releases.assign(n, 0);
    held = no_team;
    openings = 0;
    pairs = 0;
    windows_opened = effects_made = 0;
    window_opens.fill(0);
    taken = met = false;
  }

  // A coverage mark by `team` (scheduler::mark), one of n teams.
  void mark(const hold_directive& h, std::size_t n, team_id team, std::uint8_t what, std::uint32_t where);
  // The running team `t` completed an operation.
  void completed(team_id t) {
    open_window[t] = -1;  // a window never outlives its operation
    if (releases[t]) {
      releases[t] = 0;
      if (held != no_team) {
        held = no_team;
        met = true;
      }
    }
  }
};

}  // namespace gfsl::sched
