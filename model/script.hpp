// A scripted workload: the prefill and every team's operations listed one by
// one, instead of drawn from (seed, index) as model::operation_at does.
//
// A generated workload deals operation j to whichever team owns index j, so
// removing one operation, or one team, moves every later operation to other
// teams. A counterexample is only small when single operations can be taken
// out, so the campaign's last shrinking pass turns the failing workload into
// a script (script_of) and removes operations, prefill keys and teams one at
// a time (fuzz/shrink_failure.cpp). A person can also write one by hand: it is the
// `prefill-keys` and `team-ops` fields of a replay line (cli/run_options.hpp).
//
// Values are not written: the i-th insert of the script (prefill first, then
// team 0's, team 1's, ...) inserts the value i. The algorithm never branches
// on a value, and distinct values let the linearizability checker tell which
// insert a contains or a delete saw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sequential_map.hpp"
#include "workload.hpp"

namespace gfsl::model {

using operation_list = std::vector<operation>;

struct script {
  operation_list prefill;                  // inserts by team 0, before the concurrent phase
  std::vector<operation_list> team_ops;    // team t runs team_ops[t] in order

  std::uint64_t ops() const;                       // concurrent operations, over all teams
  std::uint64_t size() const { return ops() + prefill.size(); }
  // Gives the inserts their values (see above); every constructor below does.
  void number_values();
  // "5,9,12" (the prefill's keys) and "i5,d9,c12/c5" (team 0's, team 1's operations).
  std::string encode_prefill() const;
  std::string encode_team_ops() const;
  // One line, e.g. "prefill {5, 9} | team 0: insert 5, contains 9 | team 1: delete 5".
  std::string describe() const;
};

// The operations a generated workload runs, as a script (values renumbered).
script script_of(const workload& w);

// Parses the two encoded fields; on failure, returns nothing and sets `error`
// to one line naming the bad item.
std::optional<script> parse_script(const std::string& prefill_keys, const std::string& team_ops, std::string& error);

// The workload fields a script decides: the team count and the operation
// count, and a prefill fraction that sizes the structure's pool.
void fit_workload(const script& s, workload& w);

}  // namespace gfsl::model
