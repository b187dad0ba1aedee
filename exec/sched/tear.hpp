// Directed tears (tear_target, fuzz/scenarios.hpp), with any strategy: the
// second read of a validation is held open after a random one of its
// scheduling points, through the parking record (park.hpp), until another
// team has written the row and completed an operation.
#pragma once

#include <cstdint>
#include <vector>

#include "park.hpp"
#include "scheduler.hpp"
#include "strategy.hpp"

namespace gfsl::sched {

// A held read whose row no other team writes goes on after this many
// operations of others: the teams left may never touch it.
inline constexpr std::uint64_t tear_patience = 8;

// Per team: whether its next team-wide read is a validation's second
// (Team::validating), the row of the read in progress, where in that read
// it will be held (0: nowhere), and, while held, whether another team
// wrote the row.
struct tearing {
  std::vector<char> validation_next;
  std::vector<std::uint64_t> reading_row;
  std::vector<std::uint8_t> index, size;
  std::vector<char> held, written;
  std::vector<std::uint64_t> extensions;
  std::uint64_t tears = 0, torn = 0, held_now = 0;

  void reset(std::size_t n) {
    validation_next.assign(n, 0);
    reading_row.assign(n, 0);
    index.assign(n, 0);
    size.assign(n, 0);
    held.assign(n, 0);
    written.assign(n, 0);
    extensions.assign(n, 0);
    tears = torn = held_now = 0;
  }

  // Is `a` (a load, before it takes effect) where the team's read is to be
  // held? Decides at the first lane of a read whether the read is the
  // second of a validation, and where in it the hold falls (`boundaries`:
  // the read's scheduling points, lane_order's; the place drawn from rng).
  // Asked at every access of a tearing run: inline.
  bool here(const access& a, std::uint32_t boundaries, team_rng& rng) {
    const team_id t = a.team;
    if (a.kind != access_kind::load || a.group_size < 2) {
      index[t] = 0;
      return false;
    }
    if (a.group_index == 0) {
      // The row is named by its first word (lane i loads row + i).
      const std::uint64_t row = a.word - a.lane;
      const bool second = validation_next[t] != 0;
      validation_next[t] = 0;
      reading_row[t] = row;
      index[t] = 0;
      if (!second) return false;
      // One of the read's scheduling points after its first, uniformly:
      // lane_order has just set them.
      const std::uint32_t inside = boundaries & ~1u & (a.group_size >= 32 ? 0xFFFFFFFFu : (1u << a.group_size) - 1);
      if (inside == 0) return false;
      std::uint32_t pick = static_cast<std::uint32_t>(below(rng, static_cast<std::uint64_t>(__builtin_popcount(inside))));
      std::uint32_t bits = inside;
      while (pick--) bits &= bits - 1;
      index[t] = static_cast<std::uint8_t>(__builtin_ctz(bits));
      size[t] = a.group_size;
      return false;
    }
    if (index[t] == 0 || a.group_index != index[t]) return false;
    index[t] = 0;
    return true;
  }
  // Holds team t's read until the next operation completes.
  void hold(team_id t, parking& p, std::uint64_t completed);
  // An operation completed: a held read whose row no other team has written
  // yet waits for the next one (up to tear_patience of them).
  void extend(const std::vector<team_id>& unfinished, parking& p, std::uint64_t completed);
  // A write by `a.team` that took effect: the held reads of its row are torn.
  void wrote(const access& a, const std::vector<team_id>& unfinished) {
    for (team_id t : unfinished) {
      if (held[t] && t != a.team && a.word >= reading_row[t] && a.word < reading_row[t] + size[t]) written[t] = 1;
    }
  }
  // Team t goes on after a hold: it counts as torn when a write landed meanwhile.
  void resumed(team_id t) {
    held[t] = 0;
    --held_now;
    if (written[t]) ++torn;
  }
};

}  // namespace gfsl::sched
