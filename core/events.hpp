// The structural event log, as the teams emit it: every write to a chunk entry (data, NEXT, LOCK)
// and every chunk allocation, in one global order, with the history clock's
// value at the time, so a violation can name the operations then in flight.
#pragma once

#include <cstdint>
#include <vector>

#include "types.hpp"

namespace gfsl {

enum class event_kind : std::uint8_t {
  alloc = 0,   // `chunk` handed out by the pool
  store = 1,   // entry `lane` of `chunk` written with `value`
  cas = 2,     // a successful CAS wrote `value` into entry `lane` of `chunk`
};

struct structural_event {
  std::uint64_t seq = 0;    // position in the global order
  std::uint64_t stamp = 0;  // the history clock when it happened
  team_id team = 0;
  event_kind kind = event_kind::store;
  std::uint8_t lane = 0;
  std::uint32_t chunk = 0;
  std::uint64_t value = 0;
};

}  // namespace gfsl

// The temporal invariant checkers read these events under their own namespace.
namespace gfsl::invariants {
using gfsl::event_kind;
using gfsl::structural_event;
}  // namespace gfsl::invariants
