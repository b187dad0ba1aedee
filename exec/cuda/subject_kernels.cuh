// The device runner's kernel over a subject: the structure under test is a
// device-side policy (its team width, its algorithm on a team, one operation
// applied), and the kernel around it (batches from one cursor, the recorder's
// stamps, the stop at the first error) is the one GFSL's run_ops has. GFSL
// keeps run_ops itself (exec/cuda/device_runner.cu), compiled as it always
// was, so that its measured kernels do not move.
#pragma once

#include <cstdint>

#include "../../core/cuda/device_team.cuh"
#include "../../core/slabhash/algorithm.hpp"
#include "../../model/workload.hpp"
#include "device_runner.hpp"
#include "operation_batches.cuh"
#include "recording.cuh"

namespace gfsl {

// Groups a device history by key, each key's records by call (a CUB radix
// sort; exec/cuda/device_runner.cu). Returns device milliseconds.
float partition_records_by_key(model::op_record* records, std::uint64_t n);

// SlabHash (core/slabhash/): a team of 16 lanes, one per word of a slab.
template <slabhash::slab_variant V>
struct slabhash_device_subject {
  static constexpr int width = slabhash::slab_words;
  using team_type = device_team<width>;
  using ops = slabhash::algorithm<team_type, V, false>;
  std::uint64_t* words;
  slabhash::params p;
  __device__ ops make(team_type& t) const { return ops(t, words, p); }
  __device__ static op_result apply(ops& a, const model::operation& op) { return a.apply(op.kind, op.key, op.value); }
};

// As run_ops: `listed` operations (the prefill) or operation_at(w, j), taken
// `batch` at a time from `cursor` (or fixed blocks when batch is 0); records
// pre-filled with 0xFF bytes, written pending at the call and completed at
// the return, so a team that stops leaves its operation pending.
template <class Subject>
__global__ void __launch_bounds__(device_options::max_threads_per_block, device_options::min_blocks_per_sm)
    run_subject_ops(Subject s, model::workload w, const model::operation* listed, std::uint64_t count, std::uint64_t seed,
                    model::op_record* records, model::clock_kind clock, std::uint64_t* clock_counter, run_controls controls,
                    unsigned long long* cursor, std::uint32_t batch, std::uint32_t stamp_group) {
  constexpr int N = Subject::width;
  const std::uint64_t t64 = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / N;
  if (t64 >= w.teams) return;
  const team_id t = static_cast<team_id>(t64);
  typename Subject::team_type team(t, seed, controls);
  auto a = s.make(team);
  const std::uint64_t first = model::block_first(count, w.teams, t), last = model::block_first(count, w.teams, t + 1);
  team_recorder<N, device_options::max_threads_per_block> recorder(team, records, clock, clock_counter, recording_parts::all,
                                                                  stamp_group);
  std::uint64_t j = batch ? 0 : first, end = batch ? 0 : last;
  for (;; ++j) {
    if (j == end && !next_batch(team, cursor, batch, count, j, end)) break;
    if (team.abort_raised()) break;
    team.begin_operation();
    const model::operation op = listed ? listed[j] : model::operation_at(w, j);
    if (records) recorder.call(j, op);
    const op_result r = Subject::apply(a, op);
    if (records) recorder.ret(j, r);
    if (r.st != status::ok) break;
  }
  if (records) recorder.finish(first);
}

}  // namespace gfsl
