#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../algorithm.hpp"
#include "../host_structure.hpp"
#include "device_runner.hpp"
#include "device_team.cuh"

namespace gfsl {

namespace {

void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + " at " + file + ":" + std::to_string(line) + ": " +
                             cudaGetErrorString(e));
  }
}
#define GFSL_CUDA_CHECK(call) check((call), #call, __FILE__, __LINE__)

template <class T>
struct device_buffer {
  T* ptr = nullptr;
  explicit device_buffer(std::size_t n) {
    if (n) GFSL_CUDA_CHECK(cudaMalloc(&ptr, n * sizeof(T)));
  }
  ~device_buffer() {
    if (ptr) cudaFree(ptr);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

template <int N>
__global__ void init_words(std::uint64_t* words, std::size_t count, std::uint32_t capacity) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    words[i] = initial_word<N>(i, capacity);
  }
}

__device__ void add_stats(path_stats* into, const path_stats& s) {
  auto add = [](std::uint64_t* p, std::uint64_t v) {
    if (v) atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  };
  add(&into->splits, s.splits);
  add(&into->merges, s.merges);
  add(&into->zombies_skipped, s.zombies_skipped);
  add(&into->zombie_unlinks, s.zombie_unlinks);
  add(&into->head_unlinks, s.head_unlinks);
  add(&into->backtracks, s.backtracks);
  add(&into->restarts, s.restarts);
  add(&into->down_ptr_updates, s.down_ptr_updates);
  add(&into->lock_waits, s.lock_waits);
  add(&into->raised_keys, s.raised_keys);
}

// Each team runs its block of operations: `listed` ones when given (the
// prefill), else operation_at(w, j) of the concurrent phase. A team stops at
// its first error; the error word stops the others at their next operation.
template <int N>
__global__ void run_ops(structure_view<N> s, model::workload w, const model::operation* listed, std::uint64_t count,
                        std::uint64_t threshold, std::uint64_t seed, model::op_record* records, path_stats* stats) {
  const std::uint64_t t64 = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / N;
  if (t64 >= w.teams) return;  // whole tiles only: blockDim is a multiple of 32
  const team_id t = static_cast<team_id>(t64);
  device_team<N> team(t, seed);
  algorithm<device_team<N>> a(team, s, threshold);
  const std::uint64_t first = model::block_first(count, w.teams, t), last = model::block_first(count, w.teams, t + 1);
  for (std::uint64_t j = first; j < last; ++j) {
    const model::operation op = listed ? listed[j] : model::operation_at(w, j);
    const op_result r = apply_operation(a, op.kind, op.key, op.value);
    if (records && team.lane() == 0) records[j] = model::op_record{t, op, r.st, r.ok, r.value, 0, 0};
    if (r.st != status::ok) {
      // Mark the operations this team never ran as not run.
      for (std::uint64_t rest = j + 1; records && team.lane() == 0 && rest < last; ++rest) {
        records[rest] = model::op_record{t, listed ? listed[rest] : model::operation_at(w, rest), status::stopped, false, 0, 0, 0};
      }
      break;
    }
  }
  if (team.lane() == 0) add_stats(stats, team.stats());
}

// Waits for `done` without ever blocking longer than the watchdog.
bool wait_for(cudaEvent_t done, double seconds) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = cudaEventQuery(done);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) GFSL_CUDA_CHECK(e);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

template <int N>
device_run run(const model::workload& w, std::uint32_t pool_chunks, bool keep_records, double watchdog,
               int threads_per_block) {
  device_run out;
  host_run& hr = out.run;
  cudaDeviceProp prop{};
  int dev = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  out.device_name = prop.name;

  const std::uint32_t pool = pool_chunks ? pool_chunks : default_pool_chunks(w);
  hr.report.pool_chunks = pool;
  const std::size_t word_count = structure_view<N>::word_count(pool);
  device_buffer<std::uint64_t> words(word_count);
  structure_view<N> view{words.ptr, pool};
  init_words<N><<<1024, 256>>>(words.ptr, word_count, pool);
  GFSL_CUDA_CHECK(cudaGetLastError());

  hr.prefill = model::prefill_operations(w);
  device_buffer<model::operation> prefill_ops(hr.prefill.size());
  if (!hr.prefill.empty()) {
    GFSL_CUDA_CHECK(cudaMemcpy(prefill_ops.ptr, hr.prefill.data(), hr.prefill.size() * sizeof(model::operation),
                               cudaMemcpyHostToDevice));
  }
  device_buffer<model::op_record> prefill_records(hr.prefill.size());
  device_buffer<model::op_record> records(keep_records ? w.ops : 0);
  device_buffer<path_stats> stats(2);
  GFSL_CUDA_CHECK(cudaMemset(stats.ptr, 0, 2 * sizeof(path_stats)));

  const std::uint64_t threads = static_cast<std::uint64_t>(w.teams) * N;
  const unsigned blocks = static_cast<unsigned>((threads + threads_per_block - 1) / threads_per_block);
  const std::uint64_t threshold = p_chunk_threshold_of(w.p_chunk);
  cudaEvent_t begin, end, prefilled;
  GFSL_CUDA_CHECK(cudaEventCreate(&begin));
  GFSL_CUDA_CHECK(cudaEventCreate(&end));
  GFSL_CUDA_CHECK(cudaEventCreate(&prefilled));

  // Prefill: its distinct keys inserted by all teams, before the timed phase.
  if (!hr.prefill.empty()) {
    run_ops<N><<<blocks, threads_per_block>>>(view, w, prefill_ops.ptr, hr.prefill.size(), threshold,
                                              w.seed ^ 0xF1F1F1F1ull, prefill_records.ptr, stats.ptr + 1);
    GFSL_CUDA_CHECK(cudaGetLastError());
  }
  GFSL_CUDA_CHECK(cudaEventRecord(prefilled));
  if (!wait_for(prefilled, watchdog)) {
    out.timed_out = true;
    return out;
  }
  std::vector<model::op_record> prefill_results(hr.prefill.size());
  if (!hr.prefill.empty()) {
    GFSL_CUDA_CHECK(cudaMemcpy(prefill_results.data(), prefill_records.ptr,
                               prefill_results.size() * sizeof(model::op_record), cudaMemcpyDeviceToHost));
  }
  bool prefill_ok = true;
  for (const model::op_record& r : prefill_results) {
    if (r.st != status::ok || !r.ok) {
      prefill_ok = false;
      hr.report.first_error = r.st == status::ok ? status::stopped : r.st;
      hr.report.error_detail = "prefill " + model::describe(r.op) + " by team " + std::to_string(r.team) + " returned " +
                               (r.st == status::ok ? std::string("false for a distinct key") : status_name(r.st));
      break;
    }
  }

  if (prefill_ok) {
    GFSL_CUDA_CHECK(cudaEventRecord(begin));
    run_ops<N><<<blocks, threads_per_block>>>(view, w, nullptr, w.ops, threshold, w.seed,
                                              keep_records ? records.ptr : nullptr, stats.ptr);
    GFSL_CUDA_CHECK(cudaGetLastError());
    GFSL_CUDA_CHECK(cudaEventRecord(end));
    if (!wait_for(end, watchdog)) {
      out.timed_out = true;
      return out;
    }
    float ms = 0;
    GFSL_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    hr.report.seconds = ms / 1000.0;
  }

  path_stats totals[2];
  GFSL_CUDA_CHECK(cudaMemcpy(totals, stats.ptr, sizeof(totals), cudaMemcpyDeviceToHost));
  hr.report.paths = totals[0];
  if (keep_records && prefill_ok) {
    hr.records.resize(w.ops);
    GFSL_CUDA_CHECK(cudaMemcpy(hr.records.data(), records.ptr, w.ops * sizeof(model::op_record), cudaMemcpyDeviceToHost));
    for (const model::op_record& r : hr.records) {
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
  host_structure<N> snapshot(pool);
  GFSL_CUDA_CHECK(cudaMemcpy(snapshot.words(), words.ptr, word_count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
  take_final_state(hr, inspect_final_state(snapshot.view()));
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  cudaEventDestroy(prefilled);
  return out;
}

}  // namespace

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0)) {
    return "no CUDA device";
  }
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  return {};
}

device_run run_on_device(const model::workload& w, std::uint32_t pool_chunks, bool keep_records, double watchdog_seconds,
                         int threads_per_block) {
  if (threads_per_block % 32 != 0 || threads_per_block <= 0 || threads_per_block > 1024) {
    throw std::invalid_argument("threads per block must be a multiple of 32 in [32, 1024]");
  }
  return w.chunk == 16 ? run<16>(w, pool_chunks, keep_records, watchdog_seconds, threads_per_block)
                       : run<32>(w, pool_chunks, keep_records, watchdog_seconds, threads_per_block);
}

}  // namespace gfsl
