#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>

#include "../../core/algorithm.hpp"
#include "../host_structure.hpp"
#include "device_runner.hpp"
#include "cuda_check.cuh"
#include "kernel_watch.cuh"
#include "../../core/cuda/device_team.cuh"
#include "operation_batches.cuh"
#include "recording.cuh"
#include "structure_init.cuh"

namespace gfsl {

namespace {

using cuda_util::device_buffer;
using cuda_util::wait_for;

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
template <int N, bool Mutable, variant V>
__global__ void __launch_bounds__(device_options::max_threads_per_block, device_options::min_blocks_per_sm) run_ops(structure_view<N> s, model::workload w, const model::operation* listed, std::uint64_t count,
                        std::uint64_t threshold, std::uint64_t seed, model::op_record* records, model::clock_kind clock,
                        std::uint64_t* clock_counter, run_controls controls, mutant mut, unsigned long long* cursor,
                        std::uint32_t batch, std::uint32_t stamp_group) {
  const std::uint64_t t64 = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / N;
  if (t64 >= w.teams) return;  // whole tiles only: blockDim is a multiple of 32
  const team_id t = static_cast<team_id>(t64);
  device_team<N> team(t, seed, controls);
  algorithm<device_team<N>, Mutable, V> a(team, s, threshold, mut);
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
    const op_result r = apply_operation(a, op.kind, op.key, op.value);
    if (records) recorder.ret(j, r);
    if (r.st != status::ok) break;
  }
  if (records) recorder.finish(first);
  team.flush_stats();
}

__global__ void read_timer(std::uint64_t* out) { *out = global_timer_ns(); }

__global__ void gather_keys(const model::op_record* records, const std::uint32_t* index, std::uint64_t n, std::uint32_t* keys) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    keys[i] = records[index[i]].op.key;
  }
}

__global__ void sort_keys_of(const model::op_record* records, std::uint64_t n, std::uint64_t* calls, std::uint32_t* keys,
                             std::uint32_t* index) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    calls[i] = records[i].call;
    keys[i] = records[i].op.key;
    index[i] = static_cast<std::uint32_t>(i);
  }
}

__global__ void gather_records(const model::op_record* from, const std::uint32_t* index, std::uint64_t n,
                               model::op_record* to) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    to[i] = from[index[i]];
  }
}

// Groups the records by key, each key's records by call stamp: a stable
// radix sort by call, then a stable one by key. Returns device milliseconds.
float partition_by_key(model::op_record* records, std::uint64_t n) {
  if (n == 0) return 0;
  if (n > 0xFFFFFFFFull) throw std::runtime_error("history too long to partition on the device");
  device_buffer<std::uint64_t> calls(n), calls_alt(n);
  device_buffer<std::uint32_t> keys(n), keys_alt(n), index(n), index_alt(n), index_tmp(n);
  device_buffer<model::op_record> sorted(n);
  cudaEvent_t a, b;
  GFSL_CUDA_CHECK(cudaEventCreate(&a));
  GFSL_CUDA_CHECK(cudaEventCreate(&b));
  GFSL_CUDA_CHECK(cudaEventRecord(a));
  sort_keys_of<<<1024, 256>>>(records, n, calls.ptr, keys.ptr, index.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  const int count = static_cast<int>(n);
  std::size_t temp_bytes = 0, temp_bytes2 = 0;
  GFSL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, calls.ptr, calls_alt.ptr, index.ptr, index_alt.ptr, count));
  GFSL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes2, keys.ptr, keys_alt.ptr, index_tmp.ptr, index.ptr, count));
  device_buffer<unsigned char> temp(std::max(temp_bytes, temp_bytes2));
  temp_bytes = std::max(temp_bytes, temp_bytes2);
  GFSL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp_bytes, calls.ptr, calls_alt.ptr, index.ptr, index_alt.ptr, count));
  // Keys in call order, then a stable sort by key keeps call order per key.
  gather_keys<<<1024, 256>>>(records, index_alt.ptr, n, keys.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  GFSL_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.ptr, temp_bytes, keys.ptr, keys_alt.ptr, index_alt.ptr, index.ptr, count));
  gather_records<<<1024, 256>>>(records, index.ptr, n, sorted.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  GFSL_CUDA_CHECK(cudaMemcpy(records, sorted.ptr, n * sizeof(model::op_record), cudaMemcpyDeviceToDevice));
  GFSL_CUDA_CHECK(cudaEventRecord(b));
  GFSL_CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  GFSL_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}


// Events the log has room for: a split or merge writes about N entries, an
// insert or delete in place a few, so 24 per update covers the splits and
// merges of small ranges; bounded by a quarter of the device's free memory.
std::uint64_t event_capacity_of(const model::workload& w, const device_options& o) {
  if (o.event_capacity) return o.event_capacity;
  const std::uint64_t updates = w.ops * static_cast<std::uint64_t>(w.insert_pct + w.delete_pct) / 100;
  std::size_t free_bytes = 0, total_bytes = 0;
  GFSL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t room = free_bytes / 4 / sizeof(invariants::structural_event);
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(updates * 24 + 65536, room));
}

template <int N, variant V>
device_run run(const model::workload& w, const device_options& o) {
  device_run out;
  host_run& hr = out.run;
  cudaDeviceProp prop{};
  int dev = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  out.device_name = prop.name;
  out.clock = o.keep_records ? o.clock : model::clock_kind::none;

  const std::uint32_t pool = o.pool_chunks ? o.pool_chunks : default_pool_chunks(w);
  hr.report.pool_chunks = pool;
  const std::size_t word_count = structure_view<N>::word_count(pool);
  device_buffer<std::uint64_t> words(word_count);
  structure_view<N> view{words.ptr, pool};
  init_structure_words<N><<<1024, 256>>>(words.ptr, word_count, pool);
  GFSL_CUDA_CHECK(cudaGetLastError());
  if (o.locked_at_start != no_chunk) {
    const std::uint64_t phantom = lock_word_of(max_team_id);
    GFSL_CUDA_CHECK(cudaMemcpy(view.chunk(o.locked_at_start) + chunk_shape<N>::lock_lane, &phantom, sizeof phantom,
                               cudaMemcpyHostToDevice));
  }

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
  device_buffer<path_stats> stats(2);
  GFSL_CUDA_CHECK(cudaMemset(stats.ptr, 0, 2 * sizeof(path_stats)));
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
  const std::uint64_t threshold = shape_rule_of(w.p_chunk, w.reraise);
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
  // value with a one-thread kernel, then add the budget.
  auto controls_for = [&](path_stats* into) {
    run_controls c;
    c.abort_flag = watch.abort_flag();
    c.hang = hang.ptr;
    c.stats = into;
    std::uint64_t now = 0;
    device_buffer<std::uint64_t> t(1);
    read_timer<<<1, 1>>>(t.ptr);
    GFSL_CUDA_CHECK(cudaGetLastError());
    GFSL_CUDA_CHECK(cudaMemcpy(&now, t.ptr, sizeof now, cudaMemcpyDeviceToHost));
    c.deadline_ns = now + static_cast<std::uint64_t>(o.hang_seconds * 1e9);
    return c;
  };

  // Prefill: its distinct keys inserted by all teams, before the timed phase.
  if (!hr.prefill.empty()) {
    run_ops<N, false, V><<<blocks, o.threads_per_block>>>(view, w, prefill_ops.ptr, hr.prefill.size(), threshold,
                                                       w.seed ^ 0xF1F1F1F1ull, prefill_records.ptr, model::clock_kind::none,
                                                       nullptr, controls_for(stats.ptr + 1), mutant::none, nullptr, 0, 1);
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

  // The event log: the structure before the concurrent phase is its
  // starting state, then every chunk write and allocation of that phase.
  const std::uint64_t event_capacity = o.events && prefill_ok ? event_capacity_of(w, o) : 0;
  device_buffer<invariants::structural_event> event_slots(event_capacity);
  device_buffer<unsigned long long> event_count(o.events && prefill_ok ? 1 : 0);
  device_buffer<device_event_log> event_log(o.events && prefill_ok ? 1 : 0);
  if (event_log.ptr) {
    host_structure<N> before(pool);
    GFSL_CUDA_CHECK(cudaMemcpy(before.words(), words.ptr, word_count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    hr.initial_snapshot = take_snapshot(before.view());
    GFSL_CUDA_CHECK(cudaMemset(event_count.ptr, 0, sizeof(unsigned long long)));
    device_event_log log;
    log.words = words.ptr;
    log.chunk = N;
    log.pool_chunks = pool;
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
    // The correct core unless a seeded bug is asked for (core/mutants.hpp).
    if (!o.choice.mutated()) {
      run_ops<N, false, V><<<blocks, o.threads_per_block>>>(view, w, nullptr, w.ops, threshold, w.seed,
                                                         o.keep_records ? records.ptr : nullptr, o.clock, clock_counter.ptr,
                                                         controls, mutant::none, cursor.ptr, batch, o.stamp_group);
    } else {
      run_ops<N, true, V><<<blocks, o.threads_per_block>>>(view, w, nullptr, w.ops, threshold, w.seed,
                                                        o.keep_records ? records.ptr : nullptr, o.clock, clock_counter.ptr,
                                                        controls, gfsl_subject::mutant_of(o.choice), cursor.ptr, batch, o.stamp_group);
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

  path_stats totals[2];
  GFSL_CUDA_CHECK(cudaMemcpy(totals, stats.ptr, sizeof(totals), cudaMemcpyDeviceToHost));
  hr.report.paths = totals[0];
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
    if (o.partition_on_device) out.partition_ms_device = partition_by_key(records.ptr, w.ops);
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
                                 std::to_string(r.team) + " (pool of " + std::to_string(pool) + " chunks)";
      }
    }
  }

  // The final structure, copied back whole: inspected by the same host code
  // that inspects CPU runs.
  if (!o.inspect_final) return out;
  host_structure<N> snapshot(pool);
  GFSL_CUDA_CHECK(cudaMemcpy(snapshot.words(), words.ptr, word_count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  take_final_state(hr, inspect_final_state(snapshot.view()));
  hr.final_snapshot = take_snapshot(snapshot.view());
  return out;
}

}  // namespace

float partition_records_by_key(model::op_record* records, std::uint64_t n) { return partition_by_key(records, n); }

void reset_device_after_fault() {
  cudaGetLastError();
  cudaDeviceReset();
}

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0)) {
    return "no CUDA device";
  }
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  return {};
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

device_run run_on_device(const model::workload& w, const device_options& o) {
  if (o.threads_per_block % 32 != 0 || o.threads_per_block <= 0 || o.threads_per_block > device_options::max_threads_per_block) {
    throw std::invalid_argument("threads per block must be a multiple of 32 in [32, " +
                                std::to_string(device_options::max_threads_per_block) + "]");
  }
  if (w.subject == subject_kind::slabhash) {
    if (o.events) throw std::invalid_argument("--events: the structural event log is GFSL's (slabhash has none)");
    if (o.stamp_group < 1 || o.stamp_group > static_cast<std::uint32_t>(slabhash::slab_words)) {
      throw std::invalid_argument("a stamp group holds 1 to 16 operations (a lane each), not " + std::to_string(o.stamp_group));
    }
    return run_slab_on_device(w, o);
  }
  if (w.chunk != 16 && w.chunk != 32) throw std::invalid_argument("a GPU team is 16 or 32 lanes: chunks of 16 or 32 entries");
  if (o.stamp_group < 1 || o.stamp_group > static_cast<std::uint32_t>(w.chunk)) {
    throw std::invalid_argument("a stamp group holds 1 to " + std::to_string(w.chunk) + " operations (a lane each), not " +
                                std::to_string(o.stamp_group));
  }
  if (o.stamp_group > 1 && o.keep_records && w.ops > 0xFFFFFFFFull) {
    throw std::invalid_argument("a history recorded in stamp groups holds fewer than 2^32 operations");
  }
  return with_variant(gfsl_subject::variant_of(o.choice), [&](auto v) {
    constexpr variant V = decltype(v)::value;
    return w.chunk == 16 ? run<16, V>(w, o) : run<32, V>(w, o);
  });
}

}  // namespace gfsl
