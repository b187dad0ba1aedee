// GFSL's host run entry: the generic runner (exec/host_run.hpp) over its host
// policy, for each chunk size, variant and with or without seeded bugs.
#include <cstdio>
#include <string>

#include "../../exec/host_run.hpp"
#include "host_subject.hpp"

namespace gfsl::gfsl_subject {

host_run run_host(const model::workload& w, host_mode mode, std::uint32_t pool, bool keep_records, const sched::options* so,
                  sched::outcome* outcome, const run_extras& extras) {
  // The correct core unless a seeded bug is asked for (core/gfsl/mutants.hpp).
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


namespace {
template <class... A>
std::string format(const char* f, A... a) {
  const int n = std::snprintf(nullptr, 0, f, a...);
  std::string out(static_cast<std::size_t>(n), '\0');
  std::snprintf(out.data(), out.size() + 1, f, a...);
  return out;
}
}  // namespace

std::string structure_summary(const host_run& r, const model::workload&, const subject_choice&, double ops_done) {
  const path_stats& p = r.report.paths;
  return format("paths:    splits %llu (above level 0 %llu), merges %llu (with a pre-split %llu), last-chunk removals %llu, "
                "zombies skipped %llu, zombie unlinks %llu (head %llu), backtracks %llu, restarts %llu, down-pointer updates "
                "%llu (above level 1 %llu), raised keys %llu (re-raised %llu), lock waits %llu, chunk reads %llu (%.2f per operation)\n",
                (unsigned long long)p.splits, (unsigned long long)p.upper_splits, (unsigned long long)p.merges,
                (unsigned long long)p.merge_presplits, (unsigned long long)p.last_chunk_removals,
                (unsigned long long)p.zombies_skipped, (unsigned long long)p.zombie_unlinks, (unsigned long long)p.head_unlinks,
                (unsigned long long)p.backtracks, (unsigned long long)p.restarts, (unsigned long long)p.down_ptr_updates,
                (unsigned long long)p.upper_down_ptr_updates, (unsigned long long)p.raised_keys, (unsigned long long)p.reraised_keys,
                (unsigned long long)p.lock_waits, (unsigned long long)p.chunk_reads,
                ops_done > 0 ? static_cast<double>(p.chunk_reads) / ops_done : 0.0) +
         format("structure: height %d, %llu of %u pool chunks allocated, %zu keys at the end\n", r.report.height,
                (unsigned long long)r.report.chunks_allocated, r.report.pool_chunks, r.final_entries.size());
}

}  // namespace gfsl::gfsl_subject
