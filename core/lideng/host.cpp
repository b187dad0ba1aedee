// Li and Deng's skiplist's host run entry: the generic runner
// (exec/host_run.hpp) over its host policy, on the run's operations made
// into phase-separated batches.
//
// The paper's operations come in batches, each all inserts or all deletes
// (core/lideng/README.md), and a batch here is operation j of every team:
// so every team must run the same number of operations (a team that stops
// early leaves the others at a barrier), and the argument of
// algorithm.hpp holds only when operation j of every team is of one kind.
// The workload generator draws each operation's kind on its own, as for
// every subject; this entry, and no other code, rewrites what it is given:
//   - every team runs the first L of its operations, L the fewest any team
//     has (a generated run of `ops` operations over `teams` teams runs
//     floor(ops / teams) per team);
//   - operation j of every team takes the kind of team 0's operation j
//     (its key and, where the kind is unchanged, its value stay; an
//     insert made from another kind gets a value drawn from its place);
//   - the prefill is team 0's alone, as for every subject (a batch of one
//     crosses no barrier).
// The rewrite is a function of the operations only, so a replay line, a
// scripted line and a shrunk one run what they ran. The `mixed` variant
// keeps the kinds as drawn (the lengths are still made equal).
#include <cstdio>
#include <stdexcept>
#include <string>

#include "../../exec/host_run.hpp"
#include "../../model/script.hpp"
#include "host_subject.hpp"
#include "subject.hpp"

namespace gfsl::lideng {

namespace {

// The operations a generated run draws, as they are (values and prefill
// included: a trace's prefill is the workload's).
model::script drawn(const model::workload& w) {
  model::script s;
  s.prefill = model::prefill_operations(w);
  s.team_ops.resize(w.teams);
  for (std::uint32_t t = 0; t < w.teams; ++t) {
    for (std::uint64_t j = model::team_first_op(w, t); j < model::team_first_op(w, t + 1); ++j) s.team_ops[t].push_back(model::operation_at(w, j));
  }
  return s;
}

model::script phase_separate(model::script s, bool one_kind_per_batch) {
  std::size_t shortest = s.team_ops.empty() ? 0 : s.team_ops.front().size();
  for (const model::operation_list& ops : s.team_ops) shortest = std::min(shortest, ops.size());
  for (model::operation_list& ops : s.team_ops) ops.resize(shortest);
  if (!one_kind_per_batch) return s;
  for (std::size_t t = 1; t < s.team_ops.size(); ++t) {
    for (std::size_t j = 0; j < shortest; ++j) {
      model::operation& op = s.team_ops[t][j];
      const op_kind kind = s.team_ops.front()[j].kind;
      if (op.kind == kind) continue;
      op.kind = kind;
      // An insert made from another kind gets a value of its own, from its
      // place, so that a read shows which insert it saw.
      op.value = kind == op_kind::insert ? static_cast<value_type>(model::mix64((t << 40) ^ (j << 8) ^ op.key)) : 0;
    }
  }
  return s;
}

template <lideng_variant V, bool Mutable>
host_run run_one(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records, const sched::options* so,
                 sched::outcome* outcome, const run_extras& extras) {
  return run_subject<lideng_host_subject<V, Mutable>>(w, mode, pool, keep_records, so, outcome, extras);
}

}  // namespace

host_run run_host(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records, const sched::options* so,
                  sched::outcome* outcome, const run_extras& extras) {
  if (mode == host_mode::sequential && w.teams > 1) {
    throw std::invalid_argument(
        "lideng cannot run with teams taking turns (--sched turns): every team of a batch waits at the batch's barriers for the "
        "others (use a scheduling strategy, or --backend threads)");
  }
  const model::script shaped = phase_separate(extras.script ? *extras.script : drawn(w), phase_separated(extras.choice));
  run_extras ex = extras;
  ex.script = &shaped;
  const bool mutated = extras.choice.mutated();
  if (variant_of(extras.choice) == lideng_variant::published) {
    return mutated ? run_one<lideng_variant::published, true>(w, mode, pool, keep_records, so, outcome, ex)
                   : run_one<lideng_variant::published, false>(w, mode, pool, keep_records, so, outcome, ex);
  }
  return mutated ? run_one<lideng_variant::fixed, true>(w, mode, pool, keep_records, so, outcome, ex)
                 : run_one<lideng_variant::fixed, false>(w, mode, pool, keep_records, so, outcome, ex);
}

std::string structure_summary(const host_run& r, const model::workload& w, const subject_choice& c, double) {
  char line[256];
  std::snprintf(line, sizeof line, "structure: lideng %s, %u levels, batches of %u, %llu of %u pool nodes allocated, %zu keys at the end\n",
                std::string(descriptor.variant_name(c.variant)).c_str(), w.levels ? w.levels : default_levels, w.teams,
                static_cast<unsigned long long>(r.report.chunks_allocated), r.report.pool_chunks, r.final_entries.size());
  return line;
}

}  // namespace gfsl::lideng
