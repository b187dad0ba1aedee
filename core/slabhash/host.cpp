// SlabHash's host run entry: the generic runner (exec/host_run.hpp) over its
// host policy, for each variant and with or without seeded bugs.
#include "../../exec/host_run.hpp"
#include "host_subject.hpp"

namespace gfsl::slabhash {

host_run run_host(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records, const sched::options* so,
                  sched::outcome* outcome, const run_extras& extras) {
  const bool mutated = extras.choice.mutated();
  if (variant_of(extras.choice) == slab_variant::published) {
    return mutated ? run_subject<slabhash_host_subject<slab_variant::published, true>>(w, mode, pool, keep_records, so, outcome, extras)
                   : run_subject<slabhash_host_subject<slab_variant::published, false>>(w, mode, pool, keep_records, so, outcome, extras);
  }
  return mutated ? run_subject<slabhash_host_subject<slab_variant::fixed, true>>(w, mode, pool, keep_records, so, outcome, extras)
                 : run_subject<slabhash_host_subject<slab_variant::fixed, false>>(w, mode, pool, keep_records, so, outcome, extras);
}

}  // namespace gfsl::slabhash
