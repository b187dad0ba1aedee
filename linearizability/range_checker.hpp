// The exact checker of ordered-map histories with range queries and snapshot
// handles (linearizability/range_model.hpp), proven in
// linearizability/README.md, "Range queries".
//
// It needs every written value unique per key (each answer then names the
// write it read from) and every successful erase's removed value recorded;
// a history without them is refused (`refusal`, exit 2), never guessed at.
// Per key it derives the orders of its updates that real time and the
// answers of the updates allow (one, in the common case); every answer then
// pins its operation's point between two updates of each key it covers, and
// with real-time order these are precedence constraints between points: the
// history is linearizable iff, for some admissible choice of per-key orders
// and of the slots of answers that more than one slot explains, the
// constraint graph is acyclic. Forced choices cost one topological sort;
// the others are searched (Pearce-Kelly incremental cycle detection,
// depth-first, bounded by `budget` alternatives tried and `seconds`), and a
// search cut short answers unknown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "linearizability/ops.hpp"
#include "linearizability/range_model.hpp"

namespace gfsl::lin::ranges {

struct range_check_options {
  double seconds = 0;                 // 0: no limit
  std::uint64_t budget = 1'000'000;   // alternatives the search may try (0: no bound)
  std::uint32_t max_orders = 256;     // sequences enumerated per segment of a key; more: cut (unknown, not no)
  bool projections = true;            // an undecided whole: decide each key's projection (project_on_key), any failing one rejects
};

struct range_check_result {
  verdict v = verdict::linearizable;
  // Non-empty: the history is outside what the checker decides (no verdict).
  std::string refusal;
  std::uint64_t operations = 0, ranges = 0, snapshots = 0, pending = 0, keys = 0;
  std::uint64_t range_items = 0;    // (range or find, key) answers judged
  std::uint64_t constraints = 0;    // edges of the graph (real time included)
  std::uint64_t pruned = 0;         // answer constraints real time already implies, not added
  std::uint64_t choices = 0;        // choice points left to the search (0: everything forced)
  std::uint64_t search_steps = 0;   // alternatives tried
  std::uint64_t ambiguous_keys = 0; // keys whose updates have more than one admissible order
  bool cut = false;                 // a per-key enumeration or the search stopped at its bound
  // A violation: the records that cannot all hold, and why, line by line.
  std::vector<std::uint32_t> witness;
  std::vector<std::string> why;
  double seconds = 0;
};

range_check_result check_range_history(const range_history& h, const range_check_options& o = {});

// The history on key k: its updates and plain reads, its reads at a handle
// (ranges cut to [k, k + 1), holding k's pair if they held it) and the
// snapshots those read at. A linearizable history's projection is
// linearizable (linearizability/README.md, "When the whole is undecided").
// origin[i]: the record of `h` that record i of the projection comes from.
range_history project_on_key(const range_history& h, key_type k, std::vector<std::uint32_t>& origin);

std::string range_text_report(const range_history& h, const range_check_result& r, const std::string& file, const std::string& form);
std::string range_json_report(const range_history& h, const range_check_result& r, const std::string& file);

}  // namespace gfsl::lin::ranges
