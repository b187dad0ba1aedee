// What the successful operations of a concurrent run imply about the final
// contents, key by key, whatever order they took effect in: successful inserts
// and deletes of a key alternate, so their counts fix whether the key ends
// present, and a present key's value was written by the prefill or by one of
// its successful inserts. A check that needs no linearization search, used as
// the smoke oracle for runs on real threads.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../core/types.hpp"
#include "history.hpp"
#include "sequential_map.hpp"

namespace gfsl::model {

// Problems found (empty when the final contents agree with the records).
// `final_entries` must be sorted by key. At most `max_problems` are listed.
std::vector<std::string> check_implied_final_state(const std::vector<operation>& prefill,
                                                   const std::vector<op_record>& records,
                                                   const std::vector<std::pair<key_type, value_type>>& final_entries,
                                                   std::size_t max_problems = 20);

// For a history known to be sequential (records in the order they ran, after
// the prefill): the first record whose answer differs from the model's, as one
// line, or empty when all agree.
std::string first_sequential_mismatch(const std::vector<operation>& prefill, const std::vector<op_record>& records);

}  // namespace gfsl::model
