// SlabHash's host run entry: the generic runner (exec/host_run.hpp) over its
// host policy, for each variant and with or without seeded bugs.
#include <cstdio>
#include <string>

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


namespace {
template <class... A>
std::string format(const char* f, A... a) {
  const int n = std::snprintf(nullptr, 0, f, a...);
  std::string out(static_cast<std::size_t>(n), '\0');
  std::snprintf(out.data(), out.size() + 1, f, a...);
  return out;
}
}  // namespace

std::string structure_summary(const host_run& r, const model::workload& w, const subject_choice& c, double) {
  return format("structure: slabhash %s, %u buckets, %llu of %u pool slabs allocated, %zu keys at the end\n",
                std::string(descriptor.variant_name(c.variant)).c_str(), w.buckets, (unsigned long long)r.report.chunks_allocated,
                r.report.pool_chunks, r.final_entries.size());
}

}  // namespace gfsl::slabhash
