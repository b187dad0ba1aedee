// The memory a scheduled run's loads see: sequentially consistent (every
// load returns the latest store, as the CPU backend always did) or the PTX
// model at GPU scope, where a load that no acquire, fence or RMW orders may
// return an older store of its word (docs/BACKENDS.md, "The memory model").
//
// The PTX model here is operational, in the style of view-based C++ models
// (Kang et al., PLDI 2017, "promising" without promises; CDSChecker's and
// GenMC's read-from choices):
//   - every word that a team writes during the run keeps its last `history`
//     stores in modification order (mo: the order the scheduler made them,
//     which is the order the real atomics took effect, one team at a time);
//   - each store is tagged with its writer and the writer's epoch (its own
//     component of its vector clock when it stored); a release store, an RMW
//     with release semantics, or a relaxed store after a fence also carries
//     the clock it publishes;
//   - each team keeps a vector clock (what happens-before its next access)
//     and, per word, the newest store in mo it has read or written;
//   - a load may return any kept store of its word that is not older, in mo,
//     than the newest store that happens before it or that the team has read
//     or written there (coherence: read-read, read-write, write-read); which
//     one is the scheduler's seeded choice, part of the schedule;
//   - an acquire load (or an RMW) that reads a store carrying a clock joins
//     that clock into its team's: synchronises-with;
//   - RMWs read the latest store (PTX: atomic operations are morally strong
//     and read the coherence-latest value), and an RMW's store carries the
//     clock of the store it read joined with its own release (PTX's
//     observation order runs through chains of RMWs, as C++'s release
//     sequences do);
//   - fence.sc (`__threadfence`) is an acquire and a release fence in one,
//     and fence.sc operations synchronise with one another in the order the
//     scheduler ran them (PTX: the Fence-SC order is total and orders
//     synchronisation between fence.sc operations).
// Words never written during the run have no history: every load of them
// returns their one value, which happens before every team.
//
// What the bound misses: a load could in PTX return a store older than the
// `history` newest of its word when none of those is ordered before it; the
// model never returns those. Every value it does return is one PTX allows
// (it under-approximates the model's behaviours, never adds one), with one
// caveat that it shares with view-based models without promises: load
// buffering (two teams each reading the other's store that comes after its
// own load in program order) is never produced, as no load returns a store
// not yet made.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../../core/team.hpp"
#include "../../core/types.hpp"

namespace gfsl::sched {

enum class memory : std::uint8_t {
  sc,   // every load returns the latest store
  ptx,  // stale loads, within coherence and happens-before
};
const char* name(memory m);
bool parse(const std::string& text, memory& out);

// A load that returned a store other than the latest of its word.
struct stale_read {
  bool stale = false;
  team_id returned_by = 0;       // the writer of the store it returned (no_writer: the value from before the run)
  std::uint64_t latest = 0;      // the latest store's value, which it did not see
  team_id latest_by = 0;         // and its writer
  std::uint8_t behind = 0;       // stores of the word between the one returned and the latest, the latest included
};

class ptx_memory {
 public:
  static constexpr int history = 8;
  static constexpr team_id no_writer = 0xFFFFFFFFu;

  // `base`, `words`: the run's shared memory (read for a word's value before
  // its first store in the run). `teams`: the teams of the run.
  ptx_memory(std::size_t teams, const std::uint64_t* base, std::size_t words);

  // Before a store to `word` (before any other team may run): a word first
  // written now gets its current value as the oldest store of its history,
  // one that happens before every team.
  void track(std::uint64_t word);
  // The value a load by `team` returns, given the latest store's value
  // (memory's). `choose(n)` picks one of n visible stores, newest first:
  // 0 returns the latest. Fills `stale` when it returned another.
  template <class Choose>
  std::uint64_t load(team_id team, std::uint64_t word, mem_order o, std::uint64_t latest, Choose&& choose,
                     stale_read& stale);
  // A store, made (memory already holds `value`).
  void store(team_id team, std::uint64_t word, std::uint64_t value, mem_order o);
  // An RMW that read the latest store (`found`) and, when `wrote`, replaced it
  // with `value`. CAS fails are acquire reads of the latest store.
  void rmw(team_id team, std::uint64_t word, std::uint64_t found, bool wrote, std::uint64_t value, mem_order o);
  // fence.sc by `team`.
  void fence(team_id team);
  // A stamp of the run's history clock by `team`: an acq_rel RMW on one word
  // that no structure touches, as the device's clock is (exec/cuda/
  // recording.cuh): an operation that returned before another was called
  // happens before it, which is the order the linearizability checker takes
  // from the stamps.
  void stamp(team_id team);

  std::uint64_t stale_reads() const { return stale_reads_; }

 private:
  struct entry {
    std::uint64_t value = 0;
    std::uint32_t mo = 0;         // position in the word's modification order
    std::uint32_t epoch = 0;      // the writer's own clock component when it stored
    team_id writer = no_writer;
    bool has_clock = false;       // carries a published clock (clocks_ at its slot)
  };
  struct cell {
    std::uint32_t count = 0;      // kept entries (at most `history`)
    std::uint32_t head = 0;       // slot of the newest
    std::uint32_t next_mo = 0;
  };
  static constexpr std::uint32_t untracked = 0xFFFFFFFFu;

  std::uint32_t cell_of(std::uint64_t word);
  entry& slot(std::uint32_t c, std::uint32_t i) { return entries_[c * history + i]; }
  std::uint32_t* slot_clock(std::uint32_t c, std::uint32_t i) { return &clocks_[(static_cast<std::size_t>(c) * history + i) * n_]; }
  std::uint32_t* team_clock(team_id t) { return &vc_[static_cast<std::size_t>(t) * n_]; }
  std::uint32_t& seen(std::uint32_t c, team_id t) { return seen_[static_cast<std::size_t>(c) * n_ + t]; }
  bool happens_before(const entry& e, team_id t) {
    return e.writer == no_writer || team_clock(t)[e.writer] >= e.epoch;
  }
  // The oldest kept slot the team may read: age in [0, count), 0 the newest.
  std::uint32_t floor_age(std::uint32_t c, team_id t);
  // Appends a store; returns its slot.
  std::uint32_t push(std::uint32_t c, team_id writer, std::uint64_t value);
  void join_into(std::uint32_t* into, const std::uint32_t* from);
  void acquire_from(team_id t, std::uint32_t c, std::uint32_t s);
  // Release: the store at slot s carries the team's clock; the team's epoch moves on.
  void publish(team_id t, std::uint32_t c, std::uint32_t s);
  void after_release(team_id t) { ++team_clock(t)[t]; }

  std::size_t n_;
  const std::uint64_t* base_;
  std::vector<std::uint32_t> index_;   // word -> cell, or untracked
  std::vector<cell> cells_;
  std::vector<entry> entries_;         // `history` per cell
  std::vector<std::uint32_t> clocks_;  // `history` clocks of n_ per cell
  std::vector<std::uint32_t> seen_;    // per cell and team: the newest mo read or written, +1 (0: none)
  std::vector<std::uint32_t> vc_;      // per team: its vector clock
  std::vector<std::uint32_t> pending_; // per team: clocks read by relaxed loads, joined by its next fence
  std::vector<std::uint32_t> fence_clock_;  // per team: the clock of its latest fence (relaxed stores publish it)
  std::vector<char> fenced_;           // the team has fenced: its relaxed stores carry fence_clock_
  std::vector<std::uint32_t> sc_clock_;  // fence.sc operations' clocks, joined in the order they ran
  std::vector<std::uint32_t> stamp_clock_;  // the history clock word's release sequence
  std::uint64_t stale_reads_ = 0;
};

template <class Choose>
std::uint64_t ptx_memory::load(team_id t, std::uint64_t word, mem_order o, std::uint64_t latest, Choose&& choose,
                               stale_read& stale) {
  stale.stale = false;
  if (word >= index_.size() || index_[word] == untracked) return latest;
  const std::uint32_t c = index_[word];
  cell& k = cells_[c];
  if (slot(c, k.head).value != latest) {
    // Written outside the teams (the runner's error word): that value is
    // the latest, known to every team.
    const std::uint32_t s = push(c, no_writer, latest);
    (void)s;
  }
  const std::uint32_t ages = floor_age(c, t) + 1;  // visible stores, the latest included
  const std::uint32_t age = ages > 1 ? static_cast<std::uint32_t>(choose(ages)) : 0;
  const std::uint32_t s = (k.head + history - age) % history;
  entry& e = slot(c, s);
  std::uint32_t& mine = seen(c, t);
  if (e.mo + 1 > mine) mine = e.mo + 1;
  if (e.has_clock) {
    if (o == mem_order::relaxed) join_into(&pending_[t * n_], slot_clock(c, s));
    else acquire_from(t, c, s);
  }
  if (age > 0) {
    ++stale_reads_;
    const entry& newest = slot(c, k.head);
    stale = {true, e.writer, newest.value, newest.writer, static_cast<std::uint8_t>(age)};
  }
  return e.value;
}

}  // namespace gfsl::sched
