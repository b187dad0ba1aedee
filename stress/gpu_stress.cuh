// gfsl stress on the GPU over a subject's device policy (its
// core/NAME/device_subject.cuh; docs/SUBJECTS.md "The GPU side"): every team
// resident, each running the shape's operations until its slice ends (read
// from %globaltimer) and judging every answer as it returns. A structure
// lives for several slices, or for one bounded round; between slices the host
// reads the counters, and at the end of a structure's life it copies the
// structure back for the structure oracle, which judges it while the device
// runs the next one.
//
// Besides what the device runner needs (exec/cuda/device_runner.cuh), the
// policy gives:
//   stress_tuning            what the stress kernel is built with (GFSL: the
//                            shape rule; SlabHash: its round's bound)
//   stress_tuning_of(o, first_ns), stress_memory(o, p, res)
//   pool_start(s)            where the structure's chunks or slabs start
//   more_ops(tune, i)        whether a team makes its i-th operation of a launch
//   splits_violations        counts missing and extra answers apart, and times
//                            the first of each
//   on_violation, describe_violation   its fields of a violation report
//   prefill(mem, keys, n, tune, seed, failed)   the structure's first keys
//   describe(res, o, p), default_teams(o, resident), structure_name, rounds
//   judge(words, mem, p, states, res, at)       the structure oracle
//   judges_exhausted         whether a structure whose pool ran out is judged
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cuda/device_team.cuh"
#include "exec/cuda/cuda_check.cuh"
#include "stress/runner.hpp"
#include "stress/stress.hpp"

namespace gfsl::stress {

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

inline bool stop_requested(const options& o) { return o.stop && o.stop->load(std::memory_order_relaxed); }

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
// after their next poll, within about a millisecond and one operation
// (stress/gpu_stress.cu).
bool wait_for_slice(cudaEvent_t done, double seconds, const options& o, mapped_flag& stop);
// %globaltimer now (stress/gpu_stress.cu).
std::uint64_t device_now();

// Every team runs until `end_ns`. A violation takes a report slot; the
// failing team's lanes write the words of the last chunk it read, lane i
// word i, as the team remembered them (last_read_team).
template <class P>
__global__ void __launch_bounds__(threads_per_block, blocks_per_sm)
    stress_kernel(typename P::structure s, params p, typename P::stress_tuning tune, typename P::fault fault, std::uint64_t seed,
                  team_state* states, std::uint64_t end_ns, std::uint64_t origin_ns, std::uint32_t structure,
                  run_controls controls, counters* totals, violation_record* reports, std::uint32_t capacity,
                  unsigned long long* report_count, const volatile unsigned int* stop, volatile unsigned int* device_stop) {
  constexpr int N = P::width;
  const std::uint64_t t64 = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / N;
  if (t64 >= p.teams) return;
  const team_id t = static_cast<team_id>(t64);
  using team_type = last_read_team<device_team<N>, threads_per_block>;
  team_type team(t, seed, controls);
  team.watch(P::pool_start(s));
  auto a = P::make(team, s, tune, fault);
  team_state st = states[t];
  counters c{};
  std::uint64_t now = 0, next_poll = 0;
  for (std::uint32_t i = 0; !st.stopped && P::more_ops(tune, i); ++i) {
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
      if (team.lane() == 0) {
        P::on_violation(tune, sp, origin_ns);
        slot = atomicAdd(report_count, 1ull);
      }
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
          P::describe_violation(r, sp, s);
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
    if constexpr (P::splits_violations) {
      add(&totals->missing, c.missing);
      add(&totals->extra, c.extra);
    }
  }
}

template <class P>
int resident_teams() {
  int blocks = 0;
  GFSL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, stress_kernel<P>, threads_per_block, 0));
  int dev = 0, sms = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return std::max(1, blocks) * sms * (threads_per_block / P::width);
}

// One configuration (a key range) of gfsl stress under policy P.
template <class P>
config_result run_stress(const options& o, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  using cuda_util::device_buffer;
  using clock_type = std::chrono::steady_clock;
  auto seconds_of = [](double s) {
    return std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s));
  };
  constexpr int N = P::width;
  config_result res;
  cudaDeviceProp prop{};
  int dev = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  res.backend = "cuda";
  res.device = prop.name;
  res.shape = shape_name(o.sh);
  res.chunk = N;
  const std::uint32_t resident = static_cast<std::uint32_t>(resident_teams<P>());
  res.teams = o.teams ? o.teams : P::default_teams(o, resident);
  res.range = o.ranges.empty() ? default_range(o, res.teams) : range;
  if (const std::string bad = validate(o, res.teams); !bad.empty()) throw std::invalid_argument(bad);
  const params p = params_of(o, res.range, res.teams);
  for (team_id t = 0; t < p.teams; ++t) res.writers += is_writer(p, t) ? 1 : 0;
  P::describe(res, o, p);

  typename P::memory mem = P::stress_memory(o, p, res);
  const typename P::structure view = mem.view();
  device_buffer<team_state> states(p.teams);
  device_buffer<counters> totals(1);
  device_buffer<unsigned long long> first_ns(2);  // device time of the first missing and first extra answer
  device_buffer<violation_record> reports(std::max<std::uint32_t>(1, o.reports));
  device_buffer<unsigned long long> report_count(1);
  device_buffer<unsigned int> abort_flag(1), prefill_failed(1), device_stop(1);
  GFSL_CUDA_CHECK(cudaMemset(device_stop.ptr, 0, sizeof(unsigned int)));
  device_buffer<hang_report> hang(1);
  device_buffer<team_stats> stats(1);
  GFSL_CUDA_CHECK(cudaMemset(report_count.ptr, 0, sizeof(unsigned long long)));
  GFSL_CUDA_CHECK(cudaMemset(first_ns.ptr, 0xFF, 2 * sizeof(unsigned long long)));
  const typename P::stress_tuning tune = P::stress_tuning_of(o, first_ns.ptr);
  const unsigned blocks = static_cast<unsigned>((static_cast<std::uint64_t>(p.teams) * N + threads_per_block - 1) / threads_per_block);

  mapped_flag stop_flag;
  const auto start = clock_type::now();
  const auto deadline = start + seconds_of(o.seconds);
  const std::uint64_t origin_ns = device_now();
  double busy = 0;  // kernel time of the slices so far
  // `res` folds in a structure's counters once, at the end of its life;
  // progress lines show a copy with the current structure's so far.
  auto collect = [&](config_result& into) {
    counters c{};
    GFSL_CUDA_CHECK(cudaMemcpy(&c, totals.ptr, sizeof c, cudaMemcpyDeviceToHost));
    into.totals = res.totals;
    into.totals.add(c);
    if constexpr (P::splits_violations) {
      unsigned long long first[2];
      GFSL_CUDA_CHECK(cudaMemcpy(first, first_ns.ptr, sizeof first, cudaMemcpyDeviceToHost));
      into.first_missing_s = first[0] == ~0ull ? -1 : static_cast<double>(first[0]) / 1e9;
      into.first_extra_s = first[1] == ~0ull ? -1 : static_cast<double>(first[1]) / 1e9;
    }
    into.seconds = busy;
    into.wall_seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  };

  // The host judges structure i - 1 while the device runs structure i: a
  // full scan can take longer on the host than a structure's life on the
  // device.
  std::vector<team_state> host_states(p.teams);
  std::vector<std::uint64_t> copy;
  bool pending = false;
  std::uint64_t pending_index = 0;
  auto judge_pending = [&]() {
    if (!pending) return;
    pending = false;
    const double at = std::chrono::duration<double>(clock_type::now() - start).count();
    ++res.structure_checks;
    const structure_verdict v = P::judge(copy, mem, p, host_states, res, at);
    if (v.violated) {
      ++res.structure_violations;
      for (const std::string& line : v.problems) {
        if (res.structure_problems.size() < 16) {
          res.structure_problems.push_back(std::string(P::structure_name) + " " + std::to_string(pending_index) + ": " + line);
        }
      }
    }
  };

  for (std::uint64_t i = 0;; ++i) {
    if (o.max_structures && i >= o.max_structures) break;
    if (i > 0 && (clock_type::now() >= deadline || stop_requested(o))) break;
    const std::uint64_t seed = structure_seed(o.seed, N, res.range, i);
    const std::string name = std::string(P::structure_name) + " " + std::to_string(i);
    ++res.structures;
    mem.init();
    const auto first = prefill_keys(p, seed);
    std::vector<key_type> keys;
    for (const auto& kv : first) keys.push_back(kv.first);
    device_buffer<key_type> key_buf(keys.size());
    if (!keys.empty()) GFSL_CUDA_CHECK(cudaMemcpy(key_buf.ptr, keys.data(), keys.size() * sizeof(key_type), cudaMemcpyHostToDevice));
    GFSL_CUDA_CHECK(cudaMemset(prefill_failed.ptr, 0, sizeof(unsigned int)));
    if (!keys.empty()) P::prefill(view, key_buf.ptr, keys.size(), tune, seed, prefill_failed.ptr);
    GFSL_CUDA_CHECK(cudaDeviceSynchronize());
    unsigned int failed = 0;
    GFSL_CUDA_CHECK(cudaMemcpy(&failed, prefill_failed.ptr, sizeof failed, cudaMemcpyDeviceToHost));
    if (failed) {
      res.error = name + ": prefill insert(" + std::to_string(keys[failed - 1]) + ") failed (pool of " + std::to_string(mem.pool()) +
                  " " + P::pool_unit + ")";
      break;
    }
    std::vector<team_state> init_states(p.teams);
    for (team_id t = 0; t < p.teams; ++t) init_states[t] = initial_team_state(p, t, seed);
    GFSL_CUDA_CHECK(cudaMemcpy(states.ptr, init_states.data(), p.teams * sizeof(team_state), cudaMemcpyHostToDevice));
    GFSL_CUDA_CHECK(cudaMemset(totals.ptr, 0, sizeof(counters)));

    // A structure lives its life in slices of o.slice_seconds (P::rounds:
    // one slice, its operations bounded by more_ops).
    const double life = o.rebuild_seconds * (1.0 + static_cast<double>(seed % 1024) / 1024.0);
    const auto end = std::min(deadline, clock_type::now() + seconds_of(life));
    bool pool_full = false;
    // An interrupt ends the structure between operations (the teams stop at
    // the top of their loop): it is quiescent, and judged as one that lived
    // its life.
    for (std::uint32_t slice = 0; (P::rounds ? slice == 0 : clock_type::now() < end) && !stop_requested(o); ++slice) {
      const double left = std::chrono::duration<double>(end - clock_type::now()).count();
      const double length = P::rounds ? o.slice_seconds : std::min(o.slice_seconds, std::max(left, 0.001));
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
      stress_kernel<P><<<blocks, threads_per_block>>>(
          view, p, tune, P::fault_of(o), seed + slice * 0x9E3779B97F4A7C15ull, states.ptr,
          now + static_cast<std::uint64_t>(length * 1e9), origin_ns, static_cast<std::uint32_t>(i), controls, totals.ptr,
          reports.ptr, o.reports, report_count.ptr, stop_flag.device, device_stop.ptr);
      GFSL_CUDA_CHECK(cudaGetLastError());
      GFSL_CUDA_CHECK(cudaEventRecord(done));
      judge_pending();
      if (!wait_for_slice(done, length + o.hang_seconds + 5.0, o, stop_flag)) {
        // A team that never returns to the slice's clock check (an endless
        // search, a cycle in a chain): the kernel cannot be stopped from here.
        res.hung = true;
        res.hang_detail = "the kernel of " + name + " outlived its slice by " + std::to_string(o.hang_seconds + 5.0) +
                          " s: a team's operation never returns";
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
                          std::to_string(o.hang_seconds) + " s in " + name + " (lock word " + std::to_string(h.lock_word) + ")";
        break;
      }
      std::uint64_t error = 0;
      GFSL_CUDA_CHECK(cudaMemcpy(&error, mem.error_word(), sizeof error, cudaMemcpyDeviceToHost));
      if (error != error_none) {
        pool_full = error == error_pool_exhausted;
        if (!pool_full) res.error = name + ": error word " + std::to_string(error);
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
      if (!P::judges_exhausted) continue;
    }
    // The structure oracle's copy, judged while the next structure runs
    // (the one before it first, if no slice of this one ran).
    judge_pending();
    copy = mem.copy_handed_out();
    GFSL_CUDA_CHECK(cudaMemcpy(host_states.data(), states.ptr, p.teams * sizeof(team_state), cudaMemcpyDeviceToHost));
    pending = true;
    pending_index = i;
  }
  judge_pending();
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

}  // namespace gfsl::stress
