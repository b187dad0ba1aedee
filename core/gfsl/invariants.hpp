// GFSL's snapshot invariants (thesis 4.3, docs/INVARIANTS.md), which the
// descriptor's check_snapshot runs (invariants::check_snapshot dispatches to
// it by the snapshot's subject).
//
// The chunk graph of NEXT pointers is a Boost.Graph adjacency list: cycles
// are found with depth_first_visit, and lateral reachability for every down
// pointer at once from one topological_sort.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../../invariants/snapshot.hpp"
#include "types.hpp"

namespace gfsl::invariants {

// The names, in the order they are checked. `mid_run` are the ones that hold
// at every step of a run, not only at quiescence (see check_snapshot).
const std::vector<std::string>& snapshot_invariant_names();
const std::vector<std::string>& mid_run_invariant_names();

snapshot_report check_gfsl_snapshot(const snapshot& s, bool quiescent,
                                    const std::vector<std::pair<key_type, value_type>>* expected_bottom,
                                    std::size_t max_violations);

// The fill bound a live non-final chunk keeps at quiescence (docs/INVARIANTS.md).
int min_keys_of_live_nonfinal_chunk(int chunk);

}  // namespace gfsl::invariants
