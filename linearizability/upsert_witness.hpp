// The read-mapping test for one key of an upsert map (Gibbons and Korach,
// "Testing shared memories", SIAM J. Comput. 1997: linearizability of a
// register whose reads name their writes is decidable in O(n log n)), made
// exact for insert-if-absent, insert-or-assign and answers about absence
// (linearizability/README.md, "The read-mapping test"). It decides a key
// when:
//
//   - every value written on it (a successful insert, any upsert, a pending
//     insert or upsert) is written by that operation alone,
//   - no erase succeeded or may have (so "absent" is the start state and
//     nothing writes it again: a find or erase that answered false reads
//     it, and only it).
//
// Then every read names the one period it lies in, but for "present with
// some value" (an insert that answered false, a find whose value was not
// recorded), which only needs the first write before it. Elsewhere the
// answer is `not_applicable` and the search of model_search.hpp decides.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "linearizability/model.hpp"
#include "linearizability/models.hpp"

namespace gfsl::lin {

enum class register_test : std::uint8_t { linearizable, not_linearizable, not_applicable };

struct register_test_result {
  register_test outcome = register_test::not_applicable;
  // not_applicable: the condition the key breaks; not_linearizable: the
  // condition of the proof that fails.
  std::string why;
  // linearizable: a linearization, as positions in `ops` (pending reads,
  // which the test leaves out, are not in it).
  std::vector<std::uint32_t> witness;
};

// `ops` sorted by call stamp, as model_key_search takes them. O(n log n).
register_test_result upsert_register_test(const std::vector<model_op<upsert_key_model>>& ops);

}  // namespace gfsl::lin
