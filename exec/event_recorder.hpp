// An access hook that logs the structural events of a run (chunk entry
// writes and allocations, core/events.hpp) in one global order,
// and passes every access on to an inner hook (the scheduler, or none).
//
// The order is consistent with what the teams did, also on OS threads: a
// store takes its sequence number before it is made, a successful CAS after,
// so an unlock is always numbered before the lock acquisition it enables;
// every other chunk write happens under the chunk's lock, which orders it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "../core/events.hpp"
#include "../core/host_team.hpp"
#include "../core/gfsl/layout.hpp"

namespace gfsl {

class event_recorder final : public access_hook {
 public:
  event_recorder(int chunk, std::uint32_t capacity, std::uint32_t teams, const std::atomic<std::uint64_t>* clock,
                 access_hook* inner)
      : n_(chunk), capacity_(capacity), clock_(clock), inner_(inner), per_team_(teams) {}

  void before(const access& a) override {
    if (inner_) inner_->before(a);
    if (a.kind == access_kind::store && a.word >= header_offsets::pool) log(a, invariants::event_kind::store, a.value);
  }
  void after(const access& a, std::uint64_t result) override {
    if (a.kind == access_kind::cas && result == a.expected && a.word >= header_offsets::pool) {
      log(a, invariants::event_kind::cas, a.value);
    } else if (a.kind == access_kind::fetch_add && a.word == header_offsets::alloc_counter && result < capacity_) {
      invariants::structural_event e;
      e.seq = seq_.fetch_add(1, std::memory_order_seq_cst);
      e.stamp = clock_ ? clock_->load(std::memory_order_seq_cst) : 0;
      e.team = a.team;
      e.kind = invariants::event_kind::alloc;
      e.chunk = static_cast<std::uint32_t>(result);
      per_team_[a.team].push_back(e);
    }
    if (inner_) inner_->after(a, result);
  }
  std::uint64_t load_value(const access& a, std::uint64_t latest) override {
    return inner_ ? inner_->load_value(a, latest) : latest;
  }
  void lock_wait(team_id team, std::uint32_t chunk, std::uint64_t lock_word) override {
    if (inner_) inner_->lock_wait(team, chunk, lock_word);
  }
  void hint(team_id team, team_hint h) override {
    if (inner_) inner_->hint(team, h);
  }
  void lane_order(team_id team, int lanes, std::uint8_t* order) override {
    if (inner_) inner_->lane_order(team, lanes, order);
  }
  void mark(team_id team, std::uint8_t what, std::uint32_t where) override {
    if (inner_) inner_->mark(team, what, where);
  }

  // All events in their global order (call after the teams are done).
  std::vector<invariants::structural_event> events() const {
    std::vector<invariants::structural_event> all;
    for (const auto& v : per_team_) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.seq < y.seq; });
    return all;
  }

 private:
  void log(const access& a, invariants::event_kind kind, std::uint64_t value) {
    const std::uint64_t rel = a.word - header_offsets::pool;
    invariants::structural_event e;
    e.seq = seq_.fetch_add(1, std::memory_order_seq_cst);
    e.stamp = clock_ ? clock_->load(std::memory_order_seq_cst) : 0;
    e.team = a.team;
    e.kind = kind;
    e.chunk = static_cast<std::uint32_t>(rel / n_);
    e.lane = static_cast<std::uint8_t>(rel % n_);
    e.value = value;
    per_team_[a.team].push_back(e);
  }

  int n_;
  std::uint32_t capacity_;
  const std::atomic<std::uint64_t>* clock_;
  access_hook* inner_;
  std::atomic<std::uint64_t> seq_{0};
  std::vector<std::vector<invariants::structural_event>> per_team_;  // each team appends only to its own
};

}  // namespace gfsl
