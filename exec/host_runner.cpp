#include "host_runner.hpp"

#include <stdexcept>

#include "../core/registry.hpp"

namespace gfsl {

std::uint32_t pool_for_keys(double keys, const model::workload& w) { return subject_of(w.subject).pool_for_keys(keys, w); }

std::uint32_t default_pool_chunks(const model::workload& w) { return subject_of(w.subject).default_pool(w); }

void take_final_state(host_run& run, final_state&& f) {
  run.report.chunks_allocated = f.chunks_allocated;
  run.report.height = f.height;
  run.final_entries = std::move(f.entries);
  run.structural_problems = std::move(f.problems);
}

host_run run_on_host(const model::workload& w, host_mode mode, std::uint32_t pool_chunks, bool keep_records,
                     const run_extras& extras) {
  if (mode == host_mode::scheduled) throw std::invalid_argument("scheduled runs take scheduler options: run_scheduled()");
  return subject_of(w.subject).run_host(w, mode, pool_chunks, keep_records, nullptr, nullptr, extras);
}

scheduled_run run_scheduled(const model::workload& w, const sched::options& o, std::uint32_t pool_chunks,
                            bool keep_records, const run_extras& extras) {
  scheduled_run out;
  out.run = subject_of(w.subject).run_host(w, host_mode::scheduled, pool_chunks, keep_records, &o, &out.outcome, extras);
  return out;
}

}  // namespace gfsl
