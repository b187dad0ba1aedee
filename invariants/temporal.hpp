// Temporal invariants over a structural event log (thesis 4.3):
// - max-monotonic: a chunk's max field never increases after its allocation;
// - zombie-frozen: nothing is written to a zombie's data or NEXT entries;
// - final-never-zombie: the final chunk of a level is never marked;
// - zombie-next-receiver: a zombie's NEXT names the chunk that received its
//   keys (the marking team wrote data into it while holding the zombie);
// - lock-discipline: every write to a chunk's data or NEXT entries is made by
//   the team holding its lock; only the owner unlocks or marks it; a LOCK
//   entry is stored directly only to initialise a chunk its team allocated.
#pragma once

#include <vector>

#include "../model/history.hpp"
#include "../core/events.hpp"
#include "snapshot.hpp"

namespace gfsl::invariants {

const std::vector<std::string>& temporal_invariant_names();

struct temporal_report {
  std::vector<std::string> checked;
  std::vector<violation> violations;
  std::size_t events = 0;
};

// `before` is the structure when logging began (its chunks' max fields, locks
// and zombie marks are the starting state); `events` in global order.
temporal_report check_events(const snapshot& before, const std::vector<structural_event>& events,
                             std::size_t max_violations = 50);

// Fills each violation's `in_flight` with the operations of `history` whose
// interval contains the violation's stamp (pending ones from their call on).
void name_operations_in_flight(std::vector<violation>& violations, const std::vector<model::op_record>& history,
                               std::size_t max_per_violation = 8);

}  // namespace gfsl::invariants
