// The device runner over a subject's device policy: `gfsl run --backend
// cuda` for every subject of the device registry (CMakeLists.txt,
// docs/SUBJECTS.md "The GPU side"). The runner owns what is the same for all
// of them: the workload's operations computed on the device, one team per
// `width` lanes, batches from one cursor, the recorder's stamps and groups,
// the prefill and its check, the hang bound, the watchdog and interrupts, the
// history grouped by key on the device and copied back. The policy (in the
// subject's folder, core/NAME/device_subject.cuh) owns the structure:
//
//   width                    lanes of a team (one per word of a chunk or slab)
//   structure                its device view, a kernel parameter (plain data)
//   tuning, fault            what its algorithm is built with besides the
//                            view (GFSL: the shape rule and the seeded bug)
//   correct                  the policy without the seeded bug (the prefill)
//   make(team, s, tune, f)   its algorithm over a device team
//   apply(a, kind, key, v)   one operation
//   keeps_path_stats         whether the team's path counters are flushed
//   memory                   its device memory: sized from the workload,
//                            initialised in parallel, view(), pool(), and
//                            inspect(host_run&) at quiescence (the final
//                            state and snapshot, copied back)
//   tuning_of(w), fault_of(o), validate(w, o), pool_unit
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../core/cuda/device_team.cuh"
#include "../../model/workload.hpp"
#include "../host_runner.hpp"
#include "cuda_check.cuh"
#include "device_registry.hpp"
#include "device_runner.hpp"
#include "kernel_watch.cuh"
#include "operation_batches.cuh"
#include "recording.cuh"
#include "../../core/gfsl/types.hpp"

namespace gfsl {

// Groups a device history by key, each key's records by call (a CUB radix
// sort; exec/cuda/device_runner.cu). Returns device milliseconds.
float partition_records_by_key(model::op_record* records, std::uint64_t n);
// %globaltimer now, read by a one-thread kernel (exec/cuda/device_runner.cu).
std::uint64_t device_timer_now();

// Each team runs its block of operations: `listed` ones when given (the
// prefill), else operation_at(w, j) of the concurrent phase. With `batch`
// set, teams take the operations `batch` at a time from `cursor` instead of
// fixed blocks, so that no team is left running alone at the end
// (docs/BENCHMARKS.md, "Operations taken in batches"). A team stops at
// its first error; the error word stops the others at their next operation.
// Records are pre-filled with 0xFF bytes: a record whose call stamp is still
// no_stamp belongs to an operation that never started. A team writes its
// record pending at the call and completes it at the return, so a team that
// leaves a hung run keeps its operation in flight as pending.
template <class P>
__global__ void __launch_bounds__(device_options::max_threads_per_block, device_options::min_blocks_per_sm)
    run_subject_ops(typename P::structure s, model::workload w, const model::operation* listed, std::uint64_t count,
                    typename P::tuning tune, std::uint64_t seed, model::op_record* records, model::clock_kind clock,
                    std::uint64_t* clock_counter, run_controls controls, typename P::fault fault, unsigned long long* cursor,
                    std::uint32_t batch, std::uint32_t stamp_group) {
  constexpr int N = P::width;
  const std::uint64_t t64 = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / N;
  if (t64 >= w.teams) return;  // whole tiles only: blockDim is a multiple of 32
  const team_id t = static_cast<team_id>(t64);
  device_team<N> team(t, seed, controls);
  auto a = P::make(team, s, tune, fault);
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
    const op_result r = P::apply(a, op.kind, op.key, op.value);
    if (records) recorder.ret(j, r);
    if (r.st != status::ok) break;
  }
  if (records) recorder.finish(first);
  if constexpr (P::keeps_path_stats) team.flush_stats();
}

// Events the log has room for: a split or merge writes about N entries, an
// insert or delete in place a few, so 24 per update covers the splits and
// merges of small ranges; bounded by a quarter of the device's free memory.
inline std::uint64_t event_capacity_of(const model::workload& w, const device_options& o) {
  if (o.event_capacity) return o.event_capacity;
  const std::uint64_t updates = w.ops * static_cast<std::uint64_t>(w.insert_pct + w.delete_pct) / 100;
  std::size_t free_bytes = 0, total_bytes = 0;
  GFSL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t room = free_bytes / 4 / sizeof(invariants::structural_event);
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(updates * 24 + 65536, room));
}

// One run of the workload under policy P (its concurrent phase; the
// prefill runs P::correct).
template <class P>
device_run run_device(const model::workload& w, const device_options& o) {
  using cuda_util::device_buffer;
  using correct = typename P::correct;
  constexpr int N = P::width;
  P::validate(w, o);
  device_run out;
  host_run& hr = out.run;
  cudaDeviceProp prop{};
  int dev = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  out.device_name = prop.name;
  out.clock = o.keep_records ? o.clock : model::clock_kind::none;

  typename P::memory mem(w, o);
  hr.report.pool_chunks = mem.pool();
  const typename P::structure view = mem.view();

  hr.prefill = model::prefill_operations(w);
  device_buffer<model::operation> prefill_ops(hr.prefill.size());
  if (!hr.prefill.empty()) {
    GFSL_CUDA_CHECK(cudaMemcpy(prefill_ops.ptr, hr.prefill.data(), hr.prefill.size() * sizeof(model::operation),
                               cudaMemcpyHostToDevice));
  }
  device_buffer<model::op_record> prefill_records(hr.prefill.size());
  device_buffer<model::op_record> records(o.keep_records ? w.ops : 0);
  if (o.keep_records && w.ops) GFSL_CUDA_CHECK(cudaMemset(records.ptr, 0xFF, w.ops * sizeof(model::op_record)));
  if (!hr.prefill.empty()) GFSL_CUDA_CHECK(cudaMemset(prefill_records.ptr, 0xFF, hr.prefill.size() * sizeof(model::op_record)));
  device_buffer<team_stats> stats(2);
  GFSL_CUDA_CHECK(cudaMemset(stats.ptr, 0, 2 * sizeof(team_stats)));
  device_buffer<std::uint64_t> clock_counter(1);
  device_buffer<unsigned long long> cursor(1);
  GFSL_CUDA_CHECK(cudaMemset(cursor.ptr, 0, sizeof(unsigned long long)));
  const std::uint32_t batch = batch_for(o.batch, w.ops, w.teams);
  const std::uint64_t first_stamp = device_counter_start(model::first_free_stamp(hr.prefill.size()));
  GFSL_CUDA_CHECK(cudaMemcpy(clock_counter.ptr, &first_stamp, sizeof first_stamp, cudaMemcpyHostToDevice));
  device_buffer<hang_report> hang(1);
  GFSL_CUDA_CHECK(cudaMemset(hang.ptr, 0, sizeof(hang_report)));

  // Teams read the abort flag at each operation (and every 64th lock wait),
  // so an interrupted kernel ends soon after, its records those of the
  // operations that started.
  cuda_util::kernel_watch watch(o.interrupt, o.watchdog_seconds);
  auto wait_kernel = [&](cudaEvent_t done) {
    const bool finished = watch.wait(done);
    if (watch.interrupted()) out.interrupted = true;
    return finished;
  };

  const std::uint64_t threads = static_cast<std::uint64_t>(w.teams) * N;
  const unsigned blocks = static_cast<unsigned>((threads + o.threads_per_block - 1) / o.threads_per_block);
  const typename P::tuning tune = P::tuning_of(w);
  cudaEvent_t begin, end, prefilled;
  GFSL_CUDA_CHECK(cudaEventCreate(&begin));
  GFSL_CUDA_CHECK(cudaEventCreate(&end));
  GFSL_CUDA_CHECK(cudaEventCreate(&prefilled));
  struct destroy_events {
    cudaEvent_t a, b, c;
    ~destroy_events() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
      cudaEventDestroy(c);
    }
  } events_guard{begin, end, prefilled};

  // The deadline is read on the device from %globaltimer: take its current
  // value, then add the budget.
  auto controls_for = [&](team_stats* into) {
    run_controls c;
    c.abort_flag = watch.abort_flag();
    c.hang = hang.ptr;
    c.stats = into;
    c.deadline_ns = device_timer_now() + static_cast<std::uint64_t>(o.hang_seconds * 1e9);
    return c;
  };

  // Prefill: its distinct keys inserted by all teams, before the timed phase.
  if (!hr.prefill.empty()) {
    run_subject_ops<correct><<<blocks, o.threads_per_block>>>(view, w, prefill_ops.ptr, hr.prefill.size(), tune,
                                                             w.seed ^ 0xF1F1F1F1ull, prefill_records.ptr,
                                                             model::clock_kind::none, nullptr, controls_for(stats.ptr + 1),
                                                             typename P::fault{}, nullptr, 0, 1);
    GFSL_CUDA_CHECK(cudaGetLastError());
  }
  GFSL_CUDA_CHECK(cudaEventRecord(prefilled));
  if (!wait_kernel(prefilled)) {
    out.timed_out = true;
    return out;
  }
  if (out.interrupted) {  // before the concurrent phase: nothing of it to record
    out.interrupted_in_prefill = true;
    out.stopped_mid_run = true;
    return out;
  }
  std::vector<model::op_record> prefill_results(hr.prefill.size());
  if (!hr.prefill.empty()) {
    GFSL_CUDA_CHECK(cudaMemcpy(prefill_results.data(), prefill_records.ptr,
                               prefill_results.size() * sizeof(model::op_record), cudaMemcpyDeviceToHost));
  }
  bool prefill_ok = true;
  for (const model::op_record& r : prefill_results) {
    if (r.pending() || !r.ok) {
      prefill_ok = false;
      hr.report.first_error = r.st == status::ok ? status::stopped : r.st;
      hr.report.error_detail = r.call == model::no_stamp ? std::string("prefill stopped before all its keys were inserted")
                               : "prefill " + model::describe(r.op) + " by team " + std::to_string(r.team) + " returned " +
                                     (r.st == status::ok ? std::string("false for a distinct key") : status_name(r.st));
      break;
    }
  }

  // The event log (a subject whose validate admits events): the structure
  // before the concurrent phase is its starting state, then every chunk
  // write and allocation of that phase.
  const std::uint64_t event_capacity = o.events && prefill_ok ? event_capacity_of(w, o) : 0;
  device_buffer<invariants::structural_event> event_slots(event_capacity);
  device_buffer<unsigned long long> event_count(o.events && prefill_ok ? 1 : 0);
  device_buffer<device_event_log> event_log(o.events && prefill_ok ? 1 : 0);
  if (event_log.ptr) {
    hr.initial_snapshot = mem.snapshot();
    GFSL_CUDA_CHECK(cudaMemset(event_count.ptr, 0, sizeof(unsigned long long)));
    device_event_log log;
    log.words = mem.words();
    log.chunk = N;
    log.pool_chunks = mem.pool();
    log.next = event_count.ptr;
    log.capacity = event_capacity;
    log.out = event_slots.ptr;
    if (o.keep_records && o.clock == model::clock_kind::device_counter) log.stamp_counter = clock_counter.ptr;
    log.stamp_globaltimer = o.keep_records && o.clock == model::clock_kind::globaltimer;
    GFSL_CUDA_CHECK(cudaMemcpy(event_log.ptr, &log, sizeof log, cudaMemcpyHostToDevice));
  }

  if (prefill_ok) {
    run_controls controls = controls_for(stats.ptr);
    controls.events = event_log.ptr;
    GFSL_CUDA_CHECK(cudaEventRecord(begin));
    // The correct design unless a seeded bug is asked for.
    const typename P::fault fault = P::fault_of(o);
    if (fault == typename P::fault{}) {
      run_subject_ops<correct><<<blocks, o.threads_per_block>>>(view, w, nullptr, w.ops, tune, w.seed,
                                                               o.keep_records ? records.ptr : nullptr, o.clock, clock_counter.ptr,
                                                               controls, fault, cursor.ptr, batch, o.stamp_group);
    } else {
      run_subject_ops<P><<<blocks, o.threads_per_block>>>(view, w, nullptr, w.ops, tune, w.seed,
                                                         o.keep_records ? records.ptr : nullptr, o.clock, clock_counter.ptr,
                                                         controls, fault, cursor.ptr, batch, o.stamp_group);
    }
    GFSL_CUDA_CHECK(cudaGetLastError());
    GFSL_CUDA_CHECK(cudaEventRecord(end));
    if (!wait_kernel(end)) {
      out.timed_out = true;
      return out;
    }
    float ms = 0;
    GFSL_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    hr.report.seconds = ms / 1000.0;
  }

  hang_report h{};
  GFSL_CUDA_CHECK(cudaMemcpy(&h, hang.ptr, sizeof h, cudaMemcpyDeviceToHost));
  out.stopped_mid_run = h.raised != 0 || out.interrupted;
  if (h.raised) {
    out.hung = true;
    std::string holder = lock_is_held(h.lock_word) ? "held by team " + std::to_string(lock_owner(h.lock_word))
                                                   : "lock word " + std::to_string(h.lock_word);
    out.hang_detail = "team " + std::to_string(h.team) + " waited on chunk " + std::to_string(h.chunk) + " (" + holder +
                      ") past the " + std::to_string(o.hang_seconds) + " s hang bound after " + std::to_string(h.waits) +
                      " lock waits; every team left the kernel, operations in flight are pending";
  }

  if (event_log.ptr) {
    unsigned long long taken = 0;
    GFSL_CUDA_CHECK(cudaMemcpy(&taken, event_count.ptr, sizeof taken, cudaMemcpyDeviceToHost));
    const std::uint64_t kept = std::min<std::uint64_t>(taken, event_capacity);
    hr.events.resize(kept);
    if (kept) {
      GFSL_CUDA_CHECK(cudaMemcpy(hr.events.data(), event_slots.ptr, kept * sizeof(invariants::structural_event),
                                 cudaMemcpyDeviceToHost));
    }
    hr.events_dropped = taken - kept;
  }

  team_stats totals[2];
  GFSL_CUDA_CHECK(cudaMemcpy(totals, stats.ptr, sizeof(totals), cudaMemcpyDeviceToHost));
  hr.report.paths = path_stats_of(totals[0]);
  if (o.keep_records && prefill_ok) {
    std::vector<model::op_record> all(w.ops);
    if (o.compare_host_partition) {
      GFSL_CUDA_CHECK(cudaMemcpy(all.data(), records.ptr, w.ops * sizeof(model::op_record), cudaMemcpyDeviceToHost));
      const auto start = std::chrono::steady_clock::now();
      std::stable_sort(all.begin(), all.end(), [](const model::op_record& x, const model::op_record& y) {
        return x.op.key != y.op.key ? x.op.key < y.op.key : x.call < y.call;
      });
      out.partition_ms_host = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    if (o.partition_on_device) out.partition_ms_device = partition_records_by_key(records.ptr, w.ops);
    GFSL_CUDA_CHECK(cudaMemcpy(all.data(), records.ptr, w.ops * sizeof(model::op_record), cudaMemcpyDeviceToHost));
    hr.records.reserve(all.size());
    for (const model::op_record& r : all) {
      if (r.call == model::no_stamp) continue;  // never started: the team stopped before it
      hr.records.push_back(r);
      if (r.ret == model::no_stamp) continue;
      hr.report.counts.add(r.op.kind, op_result{r.st, r.ok, r.value});
      if (r.st != status::ok && r.st != status::stopped && hr.report.first_error == status::ok) {
        hr.report.first_error = r.st;
        hr.report.error_detail = std::string(status_name(r.st)) + " during " + model::describe(r.op) + " by team " +
                                 std::to_string(r.team) + " (pool of " + std::to_string(mem.pool()) + " " + P::pool_unit + ")";
      }
    }
  }

  // The final structure, copied back whole: inspected by the same host code
  // that inspects CPU runs.
  if (o.inspect_final) mem.inspect(hr);
  return out;
}

}  // namespace gfsl
