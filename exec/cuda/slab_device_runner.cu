// gfsl run --subject slabhash --backend cuda: the workload on the device with
// the recorder of GFSL's runs (stamps, groups, pending records), the final
// table copied back and judged by SlabHash's own inspection and snapshot
// invariants, as the host runner judges it (exec/host_subjects.hpp).
//
// Compiled inlined even in the quick device build: SlabHash's kernels are
// small, so cicc and ptxas take seconds on them, and a recorded run's
// interleavings depend on the speed of the real code.
#undef GFSL_DEVICE_NOINLINE_ALL

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../../invariants/slabhash_snapshot.hpp"
#include "../host_structure.hpp"
#include "cuda_check.cuh"
#include "kernel_watch.cuh"
#include "subject_kernels.cuh"

namespace gfsl {

namespace {

using cuda_util::device_buffer;

__global__ void slab_init_words(std::uint64_t* words, std::size_t count, slabhash::params p) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    words[i] = slabhash::initial_word(i, p);
  }
}

__global__ void slab_read_timer(std::uint64_t* out) { *out = global_timer_ns(); }

template <slabhash::slab_variant V>
device_run run_slab(const model::workload& w, const device_options& o) {
  using subject = slabhash_device_subject<V>;
  constexpr int N = subject::width;
  device_run out;
  host_run& hr = out.run;
  cudaDeviceProp prop{};
  int dev = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  out.device_name = prop.name;
  out.clock = o.keep_records ? o.clock : model::clock_kind::none;

  slabhash::params sp;
  sp.buckets = w.buckets;
  // Beyond the host's default, a slab per insert: with thousands of teams
  // on few buckets, every full tail is raced for, and each loser of the link
  // CAS keeps its slab and may leave it unused (core/slabhash/algorithm.hpp);
  // with the host's default a fixed run on 8 buckets ran out (4096 teams,
  // 400,000 inserts).
  const std::uint64_t inserts = w.ops * w.insert_pct / 100;
  sp.pool_slabs = o.pool_chunks ? o.pool_chunks
                                : static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                      static_cast<std::uint64_t>(default_pool_chunks(w)) + inserts, 0xF0000000ull));
  sp.hash_seed = 0;  // as the host subject: the table's hash is the workload's, whatever the backend
  if (sp.pool_slabs < sp.buckets) {
    throw std::invalid_argument("pool of " + std::to_string(sp.pool_slabs) + " slabs is too small: need at least one per bucket (" +
                                std::to_string(sp.buckets) + ")");
  }
  hr.report.pool_chunks = sp.pool_slabs;
  const std::size_t word_count = slabhash::word_count(sp);
  device_buffer<std::uint64_t> words(word_count);
  slab_init_words<<<1024, 256>>>(words.ptr, word_count, sp);
  GFSL_CUDA_CHECK(cudaGetLastError());
  const subject s{words.ptr, sp};

  hr.prefill = model::prefill_operations(w);
  device_buffer<model::operation> prefill_ops(hr.prefill.size());
  if (!hr.prefill.empty()) {
    GFSL_CUDA_CHECK(cudaMemcpy(prefill_ops.ptr, hr.prefill.data(), hr.prefill.size() * sizeof(model::operation), cudaMemcpyHostToDevice));
  }
  device_buffer<model::op_record> prefill_records(hr.prefill.size());
  device_buffer<model::op_record> records(o.keep_records ? w.ops : 0);
  if (o.keep_records && w.ops) GFSL_CUDA_CHECK(cudaMemset(records.ptr, 0xFF, w.ops * sizeof(model::op_record)));
  if (!hr.prefill.empty()) GFSL_CUDA_CHECK(cudaMemset(prefill_records.ptr, 0xFF, hr.prefill.size() * sizeof(model::op_record)));
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
  const unsigned blocks = static_cast<unsigned>((static_cast<std::uint64_t>(w.teams) * N + o.threads_per_block - 1) / o.threads_per_block);
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
  auto controls_now = [&]() {
    run_controls c;
    c.abort_flag = watch.abort_flag();
    c.hang = hang.ptr;
    device_buffer<std::uint64_t> t(1);
    slab_read_timer<<<1, 1>>>(t.ptr);
    GFSL_CUDA_CHECK(cudaGetLastError());
    std::uint64_t now = 0;
    GFSL_CUDA_CHECK(cudaMemcpy(&now, t.ptr, sizeof now, cudaMemcpyDeviceToHost));
    c.deadline_ns = now + static_cast<std::uint64_t>(o.hang_seconds * 1e9);
    return c;
  };

  if (!hr.prefill.empty()) {
    run_subject_ops<subject><<<blocks, o.threads_per_block>>>(s, w, prefill_ops.ptr, hr.prefill.size(), w.seed ^ 0xF1F1F1F1ull,
                                                             prefill_records.ptr, model::clock_kind::none, nullptr,
                                                             controls_now(), nullptr, 0, 1);
    GFSL_CUDA_CHECK(cudaGetLastError());
  }
  GFSL_CUDA_CHECK(cudaEventRecord(prefilled));
  if (!wait_kernel(prefilled)) {
    out.timed_out = true;
    return out;
  }
  if (out.interrupted) {
    out.interrupted_in_prefill = true;
    out.stopped_mid_run = true;
    return out;
  }
  std::vector<model::op_record> prefill_results(hr.prefill.size());
  if (!hr.prefill.empty()) {
    GFSL_CUDA_CHECK(cudaMemcpy(prefill_results.data(), prefill_records.ptr, prefill_results.size() * sizeof(model::op_record),
                               cudaMemcpyDeviceToHost));
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
  if (prefill_ok) {
    const run_controls controls = controls_now();
    GFSL_CUDA_CHECK(cudaEventRecord(begin));
    run_subject_ops<subject><<<blocks, o.threads_per_block>>>(s, w, nullptr, w.ops, w.seed, o.keep_records ? records.ptr : nullptr,
                                                             o.clock, clock_counter.ptr, controls, cursor.ptr, batch,
                                                             o.stamp_group);
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
  out.stopped_mid_run = out.interrupted;

  if (o.keep_records && prefill_ok) {
    if (o.partition_on_device) out.partition_ms_device = partition_records_by_key(records.ptr, w.ops);
    std::vector<model::op_record> all(w.ops);
    GFSL_CUDA_CHECK(cudaMemcpy(all.data(), records.ptr, w.ops * sizeof(model::op_record), cudaMemcpyDeviceToHost));
    hr.records.reserve(all.size());
    for (const model::op_record& r : all) {
      if (r.call == model::no_stamp) continue;
      hr.records.push_back(r);
      if (r.ret == model::no_stamp) continue;
      hr.report.counts.add(r.op.kind, op_result{r.st, r.ok, r.value});
      if (r.st != status::ok && r.st != status::stopped && hr.report.first_error == status::ok) {
        hr.report.first_error = r.st;
        hr.report.error_detail = std::string(status_name(r.st)) + " during " + model::describe(r.op) + " by team " +
                                 std::to_string(r.team) + " (pool of " + std::to_string(sp.pool_slabs) + " slabs)";
      }
    }
  }

  if (!o.inspect_final) return out;
  std::vector<std::uint64_t> table(word_count);
  GFSL_CUDA_CHECK(cudaMemcpy(table.data(), words.ptr, word_count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  slabhash::contents c = slabhash::inspect(table.data(), table.size(), sp, V);
  final_state f;
  f.chunks_allocated = c.slabs_allocated;
  f.entries = std::move(c.entries);
  f.problems = std::move(c.problems);
  take_final_state(hr, std::move(f));
  // The snapshot as the host subject takes it: the header and the slabs
  // handed out (the rest of the pool is pristine).
  invariants::snapshot& snap = hr.final_snapshot;
  snap.subject = subject_kind::slabhash;
  snap.chunk = N;
  snap.capacity = sp.pool_slabs;
  snap.buckets = sp.buckets;
  snap.variant = static_cast<std::uint8_t>(V);
  const std::uint64_t handed_out = std::min<std::uint64_t>(table[slabhash::alloc_counter_word], slabhash::slab_capacity(sp));
  snap.words.assign(table.begin(), table.begin() + std::min<std::size_t>(word_count, slabhash::header_words + handed_out * N));
  return out;
}

}  // namespace

device_run run_slab_on_device(const model::workload& w, const device_options& o) {
  return slabhash::variant_of(o.choice) == slabhash::slab_variant::published ? run_slab<slabhash::slab_variant::published>(w, o)
                                                         : run_slab<slabhash::slab_variant::fixed>(w, o);
}

}  // namespace gfsl
