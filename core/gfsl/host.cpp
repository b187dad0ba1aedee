// GFSL's host run entry: the generic runner (exec/host_run.hpp) over its host
// policy, for each chunk size, variant and with or without seeded bugs.
#include "../../exec/host_run.hpp"
#include "host_subject.hpp"

namespace gfsl::gfsl_subject {

host_run run_host(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records, const sched::options* so,
                  sched::outcome* outcome, const run_extras& extras) {
  // The correct core unless a seeded bug is asked for (core/mutants.hpp).
  const bool mutated = extras.choice.mutated();
  return with_variant(variant_of(extras.choice), [&](auto v) {
    constexpr variant V = decltype(v)::value;
    if (w.chunk == 8) {
      return mutated ? run_subject<gfsl_host_subject<8, true, V>>(w, mode, pool, keep_records, so, outcome, extras)
                     : run_subject<gfsl_host_subject<8, false, V>>(w, mode, pool, keep_records, so, outcome, extras);
    }
    if (w.chunk == 16) {
      return mutated ? run_subject<gfsl_host_subject<16, true, V>>(w, mode, pool, keep_records, so, outcome, extras)
                     : run_subject<gfsl_host_subject<16, false, V>>(w, mode, pool, keep_records, so, outcome, extras);
    }
    return mutated ? run_subject<gfsl_host_subject<32, true, V>>(w, mode, pool, keep_records, so, outcome, extras)
                   : run_subject<gfsl_host_subject<32, false, V>>(w, mode, pool, keep_records, so, outcome, extras);
  });
}

}  // namespace gfsl::gfsl_subject
