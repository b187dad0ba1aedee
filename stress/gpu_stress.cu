// gfsl stress on the GPU: every team resident, each running the shape's
// operations until the slice's end (read from %globaltimer), judging every
// answer as it returns. A structure lives for several slices; between slices
// the host reads the counters, and at the end of the structure's life it
// copies the structure back for the structure oracle.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/algorithm.hpp"
#include "core/cuda/device_team.cuh"
#include "exec/cuda/cuda_check.cuh"
#include "exec/cuda/structure_init.cuh"
#include "exec/host_structure.hpp"
#include "stress/runner.hpp"
#include "stress/stress.hpp"

namespace gfsl::stress {

namespace {

using cuda_util::device_buffer;

using clock_type = std::chrono::steady_clock;
inline clock_type::duration seconds_of(double s) {
  return std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s));
}

constexpr int threads_per_block = 512;
constexpr int blocks_per_sm = 4;
// How often a polling team reads the host's stop flag: a read of mapped host
// memory crosses the bus. Every team reading it once a millisecond made
// 8,448 bus reads a millisecond, all due at once, and the queue behind them
// stalled the teams (H200: 14.6 M operations/s against 450 M without the
// flag, docs/BENCHMARKS.md). So one team in stop_pollers_every polls the bus
// and copies a raised flag to a device word, which every team reads at its
// clock check from L2.
constexpr std::uint64_t stop_poll_ns = 1000000;
constexpr std::uint32_t stop_pollers_every = 1024;

bool stop_requested(const options& o) { return o.stop && o.stop->load(std::memory_order_relaxed); }

// The stop flag the kernel polls: pinned host memory mapped into the
// device's address space, so that the host can raise it while a slice's
// kernel runs (the default stream is busy with it: no copy could land).
struct mapped_flag {
  unsigned int* host = nullptr;
  unsigned int* device = nullptr;
  mapped_flag() {
    GFSL_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&host), sizeof(unsigned int), cudaHostAllocMapped));
    *host = 0;
    const cudaError_t e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0);
    if (e != cudaSuccess) {
      cudaFreeHost(host);
      host = nullptr;
      GFSL_CUDA_CHECK(e);
    }
  }
  ~mapped_flag() {
    if (host) cudaFreeHost(host);
  }
  void raise() { *static_cast<volatile unsigned int*>(host) = 1; }
  mapped_flag(const mapped_flag&) = delete;
  mapped_flag& operator=(const mapped_flag&) = delete;
};

// cuda_util::wait_for, passing a stop request (SIGINT, SIGTERM) on to the
// running kernel's teams: they end the slice at their next clock check
// after their next poll, within about a millisecond and one operation.
bool wait_for_slice(cudaEvent_t done, double seconds, const options& o, mapped_flag& stop) {
  const auto start = clock_type::now();
  for (;;) {
    const cudaError_t e = cudaEventQuery(done);
    if (e == cudaSuccess) return true;
    if (e != cudaErrorNotReady) GFSL_CUDA_CHECK(e);
    if (stop_requested(o)) stop.raise();
    if (std::chrono::duration<double>(clock_type::now() - start).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

__global__ void read_clock(std::uint64_t* out) { *out = global_timer_ns(); }

std::uint64_t device_now() {
  device_buffer<std::uint64_t> t(1);
  read_clock<<<1, 1>>>(t.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  std::uint64_t now = 0;
  GFSL_CUDA_CHECK(cudaMemcpy(&now, t.ptr, sizeof now, cudaMemcpyDeviceToHost));
  return now;
}

// One team (N lanes) inserts the structure's first keys in ascending order.
template <int N, variant V>
__global__ void prefill_kernel(structure_view<N> s, const key_type* keys, std::uint64_t count, std::uint64_t threshold,
                               std::uint64_t seed, unsigned int* failed) {
  const run_controls no_controls{};
  device_team<N> team(0, seed, no_controls);
  algorithm<device_team<N>, false, V> a(team, s, threshold);
  for (std::uint64_t i = 0; i < count; ++i) {
    const op_result r = a.insert(keys[i], value_of(keys[i]));
    if (r.st != status::ok || !r.ok) {
      if (team.lane() == 0) *failed = static_cast<unsigned int>(i + 1);
      return;
    }
  }
}

// Every team runs until `end_ns`. A violation takes a report slot; the
// failing team's lanes write the words of the last chunk it read, lane i
// word i, as the team remembered them (last_read_team).
template <int N, bool Mutable, variant V>
__global__ void __launch_bounds__(threads_per_block, blocks_per_sm)
    stress_kernel(structure_view<N> s, params p, std::uint64_t threshold, mutant mut, std::uint64_t seed,
                  team_state* states, std::uint64_t end_ns, std::uint64_t origin_ns, std::uint32_t structure,
                  run_controls controls, counters* totals, violation_record* reports, std::uint32_t capacity,
                  unsigned long long* report_count, const volatile unsigned int* stop, volatile unsigned int* device_stop) {
  const std::uint64_t t64 = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / N;
  if (t64 >= p.teams) return;
  const team_id t = static_cast<team_id>(t64);
  using team_type = last_read_team<device_team<N>, threads_per_block>;
  team_type team(t, seed, controls);
  team.watch(s.chunk(0));
  algorithm<team_type, Mutable, V> a(team, s, threshold, mut);
  team_state st = states[t];
  counters c{};
  std::uint64_t now = 0, next_poll = 0;
  for (std::uint32_t i = 0; !st.stopped; ++i) {
    if ((i & 15u) == 0) {
      // Lane 0 reads the clock and the device's stop word (a polling team
      // first copies the host's flag there, once per stop_poll_ns); a raised
      // flag reads as a time past any slice's end.
      std::uint64_t t = 0;
      if (team.lane() == 0) {
        t = global_timer_ns();
        if (t64 % stop_pollers_every == 0 && t >= next_poll) {
          next_poll = t + stop_poll_ns;
          if (*stop != 0) *device_stop = 1u;
        }
        if (*device_stop != 0) t = ~0ull;
      }
      now = team.shfl(typename team_type::lanes{t}, 0);
      if (now >= end_ns || team.abort_raised()) break;
    }
    team.begin_operation();
    const step sp = stress_step(a, p, t, st, c);
    if (sp.violation) {
      unsigned long long slot = 0;
      if (team.lane() == 0) slot = atomicAdd(report_count, 1ull);
      slot = team.shfl(typename team_type::lanes{slot}, 0);
      if (slot < capacity) {
        violation_record& r = reports[slot];
        r.words[team.lane()] = team.last_words().v;
        if (team.lane() == 0) {
          r.team = t;
          r.key = sp.key;
          r.kind = static_cast<std::uint8_t>(sp.kind);
          r.answer = sp.r.ok ? 1 : 0;
          r.expected = sp.want_ok ? 1 : 0;
          r.value = sp.r.value;
          r.chunk_size = N;
          r.chunk = team.last_chunk();
          r.structure = structure;
          r.time_ns = global_timer_ns() - origin_ns;
        }
      }
    }
  }
  if (team.lane() == 0) {
    states[t] = st;
    auto add = [](std::uint64_t* into, std::uint64_t v) {
      if (v) atomicAdd(reinterpret_cast<unsigned long long*>(into), static_cast<unsigned long long>(v));
    };
    add(&totals->reads, c.reads);
    add(&totals->inserts, c.inserts);
    add(&totals->removes, c.removes);
    add(&totals->contains, c.contains);
    add(&totals->violations, c.violations);
    add(&totals->stopped, c.stopped);
  }
}

template <int N, bool Mutable, variant V>
int resident_teams() {
  int blocks = 0;
  GFSL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, stress_kernel<N, Mutable, V>, threads_per_block, 0));
  int dev = 0, sms = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return std::max(1, blocks) * sms * (threads_per_block / N);
}

template <int N, bool Mutable, variant V>
config_result run_config(const options& o, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  config_result res;
  cudaDeviceProp prop{};
  int dev = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  res.backend = "cuda";
  res.device = prop.name;
  res.shape = shape_name(o.sh);
  res.variant = variant_name(V);
  res.reraise = o.reraise;
  res.mutant = mutant_label(o.subject, o.choice);
  res.mutant_role = mutant_role(gfsl_subject::mutant_of(o.choice));
  res.chunk = N;
  // stable-contains: half of the resident teams by default. Measured on an
  // H200 with a fresh structure every 0.25 s, half found the torn read of
  // thesis on 5 seeds of 5 within 2.2 s and all of them on none in 10 s
  // (docs/BENCHMARKS.md, "Tuning gfsl stress").
  const std::uint32_t resident = static_cast<std::uint32_t>(resident_teams<N, Mutable, V>());
  res.teams = o.teams ? o.teams : o.sh == shape::stable_contains ? std::max<std::uint32_t>(1, resident / 2) : resident;
  res.range = o.ranges.empty() ? default_range(o, res.teams) : range;
  if (const std::string bad = validate(o, res.teams); !bad.empty()) throw std::invalid_argument(bad);
  const params p = params_of(o, res.range, res.teams);
  res.low_churn = p.low_churn;
  for (team_id t = 0; t < p.teams; ++t) res.writers += is_writer(p, t) ? 1 : 0;
  res.invariants_checked = std::to_string(invariants::snapshot_invariant_names().size()) + " snapshot invariants";

  // The pool: a third of the free memory, at most 24 GiB. Merged chunks are
  // never reused, so churn fills it; a full pool ends a structure's life.
  std::size_t free_bytes = 0, total_bytes = 0;
  GFSL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t budget = std::min<std::uint64_t>(free_bytes / 3, 24ull << 30);
  const std::uint32_t pool = o.pool ? o.pool
                                    : static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                          budget / chunk_shape<N>::chunk_bytes, 0xF0000000ull));
  if (pool < structure_view<N>::min_capacity + 4) throw std::runtime_error("not enough device memory for a structure");
  const std::size_t word_count = structure_view<N>::word_count(pool);
  device_buffer<std::uint64_t> words(word_count);
  const structure_view<N> view{words.ptr, pool};
  device_buffer<team_state> states(p.teams);
  device_buffer<counters> totals(1);
  device_buffer<violation_record> reports(std::max<std::uint32_t>(1, o.reports));
  device_buffer<unsigned long long> report_count(1);
  device_buffer<unsigned int> abort_flag(1), prefill_failed(1), device_stop(1);
  GFSL_CUDA_CHECK(cudaMemset(device_stop.ptr, 0, sizeof(unsigned int)));
  device_buffer<hang_report> hang(1);
  device_buffer<path_stats> stats(1);
  GFSL_CUDA_CHECK(cudaMemset(report_count.ptr, 0, sizeof(unsigned long long)));
  const std::uint64_t threshold = shape_rule_of(o.p_chunk, o.reraise);
  const unsigned blocks = static_cast<unsigned>((static_cast<std::uint64_t>(p.teams) * N + threads_per_block - 1) / threads_per_block);

  mapped_flag stop_flag;
  const auto start = clock_type::now();
  const auto deadline = start + seconds_of(o.seconds);
  const std::uint64_t origin_ns = device_now();
  double busy = 0;  // kernel time of the slices so far
  auto collect = [&](config_result& into) {
    counters c{};
    GFSL_CUDA_CHECK(cudaMemcpy(&c, totals.ptr, sizeof c, cudaMemcpyDeviceToHost));
    into.totals = res.totals;
    into.totals.add(c);
    into.seconds = busy;
    into.wall_seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  };
  for (std::uint64_t i = 0;; ++i) {
    if (o.max_structures && i >= o.max_structures) break;
    if (i > 0 && (clock_type::now() >= deadline || stop_requested(o))) break;
    const std::uint64_t seed = structure_seed(o.seed, N, res.range, i);
    ++res.structures;
    init_structure_words<N><<<1024, 256>>>(words.ptr, word_count, pool);
    GFSL_CUDA_CHECK(cudaGetLastError());
    const auto first = prefill_keys(p, seed);
    std::vector<key_type> keys;
    for (const auto& kv : first) keys.push_back(kv.first);
    device_buffer<key_type> key_buf(keys.size());
    if (!keys.empty()) GFSL_CUDA_CHECK(cudaMemcpy(key_buf.ptr, keys.data(), keys.size() * sizeof(key_type), cudaMemcpyHostToDevice));
    GFSL_CUDA_CHECK(cudaMemset(prefill_failed.ptr, 0, sizeof(unsigned int)));
    prefill_kernel<N, V><<<1, N>>>(view, key_buf.ptr, keys.size(), threshold, seed ^ 0xF1F1F1F1ull, prefill_failed.ptr);
    GFSL_CUDA_CHECK(cudaGetLastError());
    GFSL_CUDA_CHECK(cudaDeviceSynchronize());
    unsigned int failed = 0;
    GFSL_CUDA_CHECK(cudaMemcpy(&failed, prefill_failed.ptr, sizeof failed, cudaMemcpyDeviceToHost));
    if (failed) {
      res.error = "structure " + std::to_string(i) + ": prefill insert(" + std::to_string(keys[failed - 1]) + ") failed (pool of " +
                  std::to_string(pool) + " chunks)";
      break;
    }
    std::vector<team_state> host_states(p.teams);
    for (team_id t = 0; t < p.teams; ++t) host_states[t] = initial_team_state(p, t, seed);
    GFSL_CUDA_CHECK(cudaMemcpy(states.ptr, host_states.data(), p.teams * sizeof(team_state), cudaMemcpyHostToDevice));
    GFSL_CUDA_CHECK(cudaMemset(totals.ptr, 0, sizeof(counters)));

    const double life = o.rebuild_seconds * (1.0 + static_cast<double>(seed % 1024) / 1024.0);
    const auto end = std::min(deadline, clock_type::now() + seconds_of(life));
    bool pool_full = false;
    // An interrupt ends the structure between operations (the teams stop at
    // the top of their loop): it is quiescent, and judged as one that lived
    // its life.
    for (std::uint32_t slice = 0; clock_type::now() < end && !stop_requested(o); ++slice) {
      const double left = std::chrono::duration<double>(end - clock_type::now()).count();
      const double length = std::min(o.slice_seconds, std::max(left, 0.001));
      const std::uint64_t now = device_now();
      run_controls controls;
      controls.abort_flag = abort_flag.ptr;
      controls.hang = hang.ptr;
      controls.stats = stats.ptr;
      controls.deadline_ns = now + static_cast<std::uint64_t>((length + o.hang_seconds) * 1e9);
      GFSL_CUDA_CHECK(cudaMemset(abort_flag.ptr, 0, sizeof(unsigned int)));
      GFSL_CUDA_CHECK(cudaMemset(hang.ptr, 0, sizeof(hang_report)));
      cudaEvent_t began, done;
      GFSL_CUDA_CHECK(cudaEventCreate(&began));
      GFSL_CUDA_CHECK(cudaEventCreate(&done));
      GFSL_CUDA_CHECK(cudaEventRecord(began));
      stress_kernel<N, Mutable, V><<<blocks, threads_per_block>>>(
          view, p, threshold, gfsl_subject::mutant_of(o.choice), seed + slice * 0x9E3779B97F4A7C15ull, states.ptr,
          now + static_cast<std::uint64_t>(length * 1e9), origin_ns, static_cast<std::uint32_t>(i), controls, totals.ptr,
          reports.ptr, o.reports, report_count.ptr, stop_flag.device, device_stop.ptr);
      GFSL_CUDA_CHECK(cudaGetLastError());
      GFSL_CUDA_CHECK(cudaEventRecord(done));
      if (!wait_for_slice(done, length + o.hang_seconds + 5.0, o, stop_flag)) {
        // A team that never returns to the slice's clock check (an endless
        // search): the kernel cannot be stopped from here.
        res.hung = true;
        res.hang_detail = "the kernel of structure " + std::to_string(i) + " outlived its slice by " +
                          std::to_string(o.hang_seconds + 5.0) + " s: a team's operation never returns";
        config_result shown = res;
        collect(shown);
        if (fatal) fatal(shown);
        std::_Exit(1);
      }
      float ms = 0;
      GFSL_CUDA_CHECK(cudaEventElapsedTime(&ms, began, done));
      busy += ms / 1000.0;
      cudaEventDestroy(began);
      cudaEventDestroy(done);
      hang_report h{};
      GFSL_CUDA_CHECK(cudaMemcpy(&h, hang.ptr, sizeof h, cudaMemcpyDeviceToHost));
      if (h.raised) {
        res.hung = true;
        res.hang_detail = "team " + std::to_string(h.team) + " waited on chunk " + std::to_string(h.chunk) + " for " +
                          std::to_string(o.hang_seconds) + " s in structure " + std::to_string(i) + " (lock word " +
                          std::to_string(h.lock_word) + ")";
        break;
      }
      std::uint64_t error = 0;
      GFSL_CUDA_CHECK(cudaMemcpy(&error, view.error_word(), sizeof error, cudaMemcpyDeviceToHost));
      if (error != error_none) {
        pool_full = error == error_pool_exhausted;
        if (!pool_full) res.error = "structure " + std::to_string(i) + ": error word " + std::to_string(error);
        break;
      }
      if (progress) {
        config_result shown = res;
        collect(shown);
        progress(shown);
      }
    }
    collect(res);
    if (res.hung || !res.error.empty()) break;
    if (pool_full) {
      ++res.rebuilt_early;
      continue;
    }
    // The structure oracle: header and allocated chunks copied back.
    std::uint64_t allocated = 0;
    GFSL_CUDA_CHECK(cudaMemcpy(&allocated, view.alloc_counter(), sizeof allocated, cudaMemcpyDeviceToHost));
    allocated = std::min<std::uint64_t>(allocated, pool);
    invariants::snapshot snap;
    snap.chunk = N;
    snap.capacity = pool;
    snap.words.resize(header_offsets::pool + allocated * N);
    GFSL_CUDA_CHECK(cudaMemcpy(snap.words.data(), words.ptr, snap.words.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    GFSL_CUDA_CHECK(cudaMemcpy(host_states.data(), states.ptr, p.teams * sizeof(team_state), cudaMemcpyDeviceToHost));
    const structure_view<N> host_view{snap.words.data(), pool};
    std::vector<std::pair<key_type, value_type>> expected;
    if (p.sh == shape::stable_contains) {
      for (std::uint32_t k = 0; k < stable_count(p); ++k) expected.emplace_back(stable_key(p, k), value_of(stable_key(p, k)));
      for (const auto& kv : level_entries(host_view, 0)) {
        if (kv.first <= p.range && !is_stable(p, kv.first)) expected.emplace_back(kv.first, value_of(kv.first));
      }
    } else {
      for (team_id t = 0; t < p.teams; ++t) {
        for (std::uint32_t j = 0; j < owned_count(p, t); ++j) {
          if ((host_states[t].owned >> j) & 1) expected.emplace_back(owned_key(p, t, j), value_of(owned_key(p, t, j)));
        }
      }
    }
    std::sort(expected.begin(), expected.end());
    ++res.structure_checks;
    const std::vector<std::string> problems = judge_structure(snap, expected);
    if (!problems.empty()) {
      ++res.structure_violations;
      for (const std::string& line : problems) {
        if (res.structure_problems.size() < 16) res.structure_problems.push_back("structure " + std::to_string(i) + ": " + line);
      }
    }
  }
  unsigned long long taken = 0;
  GFSL_CUDA_CHECK(cudaMemcpy(&taken, report_count.ptr, sizeof taken, cudaMemcpyDeviceToHost));
  res.reports.resize(std::min<unsigned long long>(taken, o.reports));
  if (!res.reports.empty()) {
    GFSL_CUDA_CHECK(cudaMemcpy(res.reports.data(), reports.ptr, res.reports.size() * sizeof(violation_record), cudaMemcpyDeviceToHost));
  }
  res.seconds = busy;
  res.wall_seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  res.interrupted = stop_requested(o);
  return res;
}

template <int N, bool Mutable>
config_result run_variant(const options& o, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  return with_variant(gfsl_subject::variant_of(o.choice), [&](auto v) { return run_config<N, Mutable, decltype(v)::value>(o, range, progress, fatal); });
}

}  // namespace

std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0)) return "no CUDA device";
  if (e != cudaSuccess) return std::string("no CUDA device: ") + cudaGetErrorString(e);
  return {};
}

config_result run_on_gpu(const options& o, int chunk, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  if (o.subject == subject_kind::slabhash) {
    return run_slab_on_gpu(o, range, progress, fatal);
  }
  const bool mutated = o.choice.mutated();
  if (chunk == 16) return mutated ? run_variant<16, true>(o, range, progress, fatal) : run_variant<16, false>(o, range, progress, fatal);
  return mutated ? run_variant<32, true>(o, range, progress, fatal) : run_variant<32, false>(o, range, progress, fatal);
}

}  // namespace gfsl::stress
