// GFSL as the CPU runner sees it (exec/host_run.hpp): its memory, the
// operations on a host team, the contents at quiescence and a snapshot.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../exec/host_runner.hpp"
#include "../../exec/host_structure.hpp"
#include "../../invariants/snapshot.hpp"
#include "../../model/workload.hpp"
#include "algorithm.hpp"
#include "../host_team.hpp"
#include "subject.hpp"

namespace gfsl {

// GFSL: chunks of N entries, a team of N lanes (core/gfsl/algorithm.hpp).
template <int N, bool Mutable, variant V>
class gfsl_host_subject {
 public:
  static constexpr int width = N;
  static constexpr bool has_events = true;  // the structural event log (core/events.hpp) is GFSL's
  using team_type = host_team<N>;
  using prefill_ops = algorithm<team_type, false, V>;
  using concurrent_ops = algorithm<team_type, Mutable, V>;

  gfsl_host_subject(const model::workload& w, std::uint32_t pool, const run_extras& ex)
      : s_(pool), threshold_(shape_rule_of(w.p_chunk, w.reraise)), mut_(gfsl_subject::mutant_of(ex.choice)) {}

  std::uint64_t* words() const { return s_.words(); }
  std::size_t word_count() const { return s_.word_count(); }
  prefill_ops prefill_algorithm(team_type& t) const { return prefill_ops(t, s_.view(), threshold_); }
  std::unique_ptr<concurrent_ops> concurrent_algorithm(team_type& t) const {
    return std::make_unique<concurrent_ops>(t, s_.view(), threshold_, mut_);
  }
  template <class Ops>
  static op_result apply(Ops& a, const model::operation& op) {
    return apply_operation(a, op.kind, op.key, op.value);
  }
  final_state inspect() const { return inspect_final_state(s_.view()); }
  invariants::snapshot snapshot(std::uint64_t stamp) const { return take_snapshot(s_.view(), stamp); }

 private:
  host_structure<N> s_;
  std::uint64_t threshold_;
  mutant mut_;
};

}  // namespace gfsl
