// gfsl stress --subject slabhash on the GPU (docs/FINDINGS.md, "SlabHash"): rounds of a fresh
// table each, every answer judged on the device by the shape's oracle, every
// round's table copied back and scanned whole (stress/slab_oracle.hpp).
//
// Compiled inlined even in the quick device build: SlabHash's kernels are
// small (one search loop, no lock waits), so cicc and ptxas take seconds on
// them, and the race windows this stress measures depend on the speed of
// the real code, not of out-of-line calls through local memory.
#undef GFSL_DEVICE_NOINLINE_ALL

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cuda/device_team.cuh"
#include "core/slabhash/algorithm.hpp"
#include "exec/cuda/cuda_check.cuh"
#include "invariants/slabhash_snapshot.hpp"
#include "stress/runner.hpp"
#include "stress/slab_oracle.hpp"
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

__global__ void read_clock(std::uint64_t* out) { *out = global_timer_ns(); }

std::uint64_t device_now() {
  device_buffer<std::uint64_t> t(1);
  read_clock<<<1, 1>>>(t.ptr);
  GFSL_CUDA_CHECK(cudaGetLastError());
  std::uint64_t now = 0;
  GFSL_CUDA_CHECK(cudaMemcpy(&now, t.ptr, sizeof now, cudaMemcpyDeviceToHost));
  return now;
}

// A round is one structure's life: a fresh table, its initial keys inserted
// by many teams at once (distinct keys, no deletes: both variants insert
// them correctly), then one launch in which every team runs at most
// `ops_per_team` operations, then the table copied back and scanned whole.
// Rounds are short and bounded in operations rather than time because the
// fixed variant never reuses a deleted pair (tombstones): its chains grow
// with every insert, and a long round would measure chain walks, not races.

constexpr int slab_team = slabhash::slab_words;

__global__ void slab_init_kernel(std::uint64_t* words, std::size_t count, slabhash::params sp) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    words[i] = slabhash::initial_word(i, sp);
  }
}

template <slabhash::slab_variant V>
__global__ void slab_prefill_kernel(std::uint64_t* words, slabhash::params sp, const key_type* keys, std::uint64_t count,
                                    unsigned int* failed) {
  const std::uint64_t t = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / slab_team;
  const std::uint64_t teams = (static_cast<std::uint64_t>(gridDim.x) * blockDim.x) / slab_team;
  const run_controls no_controls{};
  device_team<slab_team> team(static_cast<team_id>(t), 0, no_controls);
  slabhash::algorithm<device_team<slab_team>, V, false> a(team, words, sp);
  for (std::uint64_t i = t; i < count; i += teams) {
    const op_result r = a.insert(keys[i], value_of(keys[i]));
    if (r.st != status::ok || !r.ok) {
      if (team.lane() == 0) atomicCAS(failed, 0u, static_cast<unsigned int>(i + 1));
      return;
    }
  }
}

template <slabhash::slab_variant V>
__global__ void __launch_bounds__(threads_per_block, blocks_per_sm)
    slab_stress_kernel(std::uint64_t* words, slabhash::params sp, params p, std::uint64_t seed, team_state* states,
                       std::uint64_t end_ns, std::uint64_t max_ops, std::uint64_t origin_ns, std::uint32_t round,
                       run_controls controls, counters* totals, unsigned long long* first_ns, violation_record* reports,
                       std::uint32_t capacity, unsigned long long* report_count) {
  const std::uint64_t t64 = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / slab_team;
  if (t64 >= p.teams) return;
  const team_id t = static_cast<team_id>(t64);
  using team_type = last_read_team<device_team<slab_team>, threads_per_block>;
  team_type team(t, seed, controls);
  // Slab s starts at header_words + 16 s: the wrapper's "chunk" is the slab.
  team.watch(words + slabhash::header_words);
  slabhash::algorithm<team_type, V, false> a(team, words, sp);
  team_state st = states[t];
  counters c{};
  for (std::uint64_t i = 0; !st.stopped && i < max_ops; ++i) {
    if ((i & 15u) == 0) {
      const std::uint64_t now = team.shfl(typename team_type::lanes{team.lane() == 0 ? global_timer_ns() : 0}, 0);
      if (now >= end_ns || team.abort_raised()) break;
    }
    team.begin_operation();
    const step sp2 = stress_step(a, p, t, st, c);
    if (sp2.violation) {
      unsigned long long slot = 0;
      if (team.lane() == 0) {
        const std::uint64_t at = global_timer_ns() - origin_ns;
        atomicMin(first_ns + (sp2.want_ok ? 0 : 1), static_cast<unsigned long long>(at));
        slot = atomicAdd(report_count, 1ull);
      }
      slot = team.shfl(typename team_type::lanes{slot}, 0);
      if (slot < capacity) {
        violation_record& r = reports[slot];
        r.words[team.lane()] = team.last_words().v;
        if (team.lane() == 0) {
          r.team = t;
          r.key = sp2.key;
          r.kind = static_cast<std::uint8_t>(sp2.kind);
          r.answer = sp2.r.ok ? 1 : 0;
          r.expected = sp2.want_ok ? 1 : 0;
          r.value = sp2.r.value;
          r.chunk_size = slab_team;
          r.chunk = team.last_chunk();
          r.structure = round;
          r.subject = static_cast<std::uint8_t>(subject_kind::slabhash);
          r.bucket = slabhash::bucket_of(sp2.key, sp);
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
    add(&totals->missing, c.missing);
    add(&totals->extra, c.extra);
  }
}

template <slabhash::slab_variant V>
config_result run_slab_config(const options& o, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  config_result res;
  cudaDeviceProp prop{};
  int dev = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  res.backend = "cuda";
  res.device = prop.name;
  res.subject = "slabhash";
  res.shape = shape_name(o.sh);
  res.variant = slabhash::variant_name(V);
  res.chunk = slab_team;
  if (o.teams) {
    res.teams = o.teams;
  } else {
    int blocks = 0;
    GFSL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, slab_stress_kernel<V>, threads_per_block, 0));
    res.teams = static_cast<std::uint32_t>(std::max(1, blocks) * prop.multiProcessorCount * (threads_per_block / slab_team));
  }
  res.range = o.ranges.empty() ? default_range(o, res.teams) : range;
  if (const std::string bad = validate(o, res.teams); !bad.empty()) throw std::invalid_argument(bad);
  const params p = params_of(o, res.range, res.teams);
  for (team_id t = 0; t < p.teams; ++t) res.writers += is_writer(p, t) ? 1 : 0;
  slabhash::params sp;
  sp.buckets = o.buckets ? o.buckets : slabhash_default_buckets(res.teams);
  sp.hash_seed = o.seed;
  res.buckets = sp.buckets;
  res.churn = p.churn;
  res.ops_per_round = o.ops_per_team;
  res.invariants_checked = std::to_string(slabhash::slab_invariants().size()) + " slab invariants, the expected keys";

  // The pool: room for every key at once and for every operation of a round
  // being an insert that takes a fresh pair (fixed never reuses one), plus a
  // partly filled slab per bucket; at most a third of the free memory.
  std::size_t free_bytes = 0, total_bytes = 0;
  GFSL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t fit = std::min<std::uint64_t>(free_bytes / 3 / (slab_team * sizeof(std::uint64_t)), 0xF0000000ull);
  const std::uint64_t want = 2ull * sp.buckets + (static_cast<std::uint64_t>(res.range) + p.churn +
                                                  static_cast<std::uint64_t>(res.teams) * o.ops_per_team) / slabhash::pairs_per_slab + 1024;
  sp.pool_slabs = static_cast<std::uint32_t>(o.pool ? o.pool : std::min(fit, want));
  if (sp.pool_slabs < sp.buckets) throw std::invalid_argument("--pool " + std::to_string(sp.pool_slabs) + ": fewer slabs than buckets");
  const std::size_t word_count = slabhash::word_count(sp);
  device_buffer<std::uint64_t> words(word_count);
  device_buffer<team_state> states(p.teams);
  device_buffer<counters> totals(1);
  device_buffer<unsigned long long> first_ns(2);
  device_buffer<violation_record> reports(std::max<std::uint32_t>(1, o.reports));
  device_buffer<unsigned long long> report_count(1);
  device_buffer<unsigned int> abort_flag(1), prefill_failed(1);
  device_buffer<hang_report> hang(1);
  GFSL_CUDA_CHECK(cudaMemset(report_count.ptr, 0, sizeof(unsigned long long)));
  GFSL_CUDA_CHECK(cudaMemset(totals.ptr, 0, sizeof(counters)));
  GFSL_CUDA_CHECK(cudaMemset(first_ns.ptr, 0xFF, 2 * sizeof(unsigned long long)));
  const unsigned blocks = static_cast<unsigned>((static_cast<std::uint64_t>(p.teams) * slab_team + threads_per_block - 1) / threads_per_block);

  const auto start = clock_type::now();
  const auto deadline = start + seconds_of(o.seconds);
  const std::uint64_t origin_ns = device_now();
  double busy = 0;
  auto collect = [&](config_result& into) {
    GFSL_CUDA_CHECK(cudaMemcpy(&into.totals, totals.ptr, sizeof(counters), cudaMemcpyDeviceToHost));
    unsigned long long first[2];
    GFSL_CUDA_CHECK(cudaMemcpy(first, first_ns.ptr, sizeof first, cudaMemcpyDeviceToHost));
    into.first_missing_s = first[0] == ~0ull ? -1 : static_cast<double>(first[0]) / 1e9;
    into.first_extra_s = first[1] == ~0ull ? -1 : static_cast<double>(first[1]) / 1e9;
    into.seconds = busy;
    into.wall_seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  };
  // The host judges round i - 1 while the device runs round i: a round's
  // full scan takes longer on the host than the round on the device.
  std::vector<team_state> init_states(p.teams), end_states(p.teams);
  std::vector<std::uint64_t> copy;
  bool pending = false;
  std::uint64_t pending_round = 0;
  auto judge_pending = [&]() {
    if (!pending) return;
    pending = false;
    std::vector<std::pair<key_type, value_type>> expected;
    key_type unknown_lo = 1, unknown_hi = 0;
    if (p.sh == shape::stable_contains) {
      for (std::uint32_t k = 0; k < stable_count(p); ++k) expected.emplace_back(stable_key(p, k), value_of(stable_key(p, k)));
      unknown_lo = 1;
      unknown_hi = p.range;
    } else {
      for (team_id t = 0; t < p.teams; ++t) {
        for (std::uint32_t j = 0; j < owned_count(p, t); ++j) {
          if ((end_states[t].owned >> j) & 1) expected.emplace_back(owned_key(p, t, j), value_of(owned_key(p, t, j)));
        }
      }
      unknown_lo = p.range + 1;
      unknown_hi = p.range + p.churn;
    }
    std::sort(expected.begin(), expected.end());
    const slab_round_verdict v = judge_slab_round(copy.data(), copy.size(), sp, V, expected, unknown_lo, unknown_hi);
    ++res.structure_checks;
    const double at = std::chrono::duration<double>(clock_type::now() - start).count();
    res.duplicates += v.duplicates;
    res.lost_keys += v.lost;
    res.unexpected_keys += v.unexpected;
    res.malformed += v.malformed;
    if (v.duplicates && res.first_duplicate_s < 0) res.first_duplicate_s = at;
    if (v.lost && res.first_lost_s < 0) res.first_lost_s = at;
    if (!v.ok()) {
      ++res.structure_violations;
      for (const std::string& line : v.problems) {
        if (res.structure_problems.size() < 16) res.structure_problems.push_back("round " + std::to_string(pending_round) + ": " + line);
      }
    }
  };
  device_buffer<key_type> key_buf(std::max<std::size_t>(1, res.range));
  for (std::uint64_t i = 0;; ++i) {
    if (o.max_structures && i >= o.max_structures) break;
    if (i > 0 && clock_type::now() >= deadline) break;
    if (o.stop && o.stop->load()) {
      res.interrupted = true;
      break;
    }
    const std::uint64_t seed = structure_seed(o.seed, slab_team, res.range, i);
    ++res.structures;
    slab_init_kernel<<<1024, 256>>>(words.ptr, word_count, sp);
    GFSL_CUDA_CHECK(cudaGetLastError());
    const auto first = prefill_keys(p, seed);
    std::vector<key_type> keys;
    for (const auto& kv : first) keys.push_back(kv.first);
    if (!keys.empty()) GFSL_CUDA_CHECK(cudaMemcpy(key_buf.ptr, keys.data(), keys.size() * sizeof(key_type), cudaMemcpyHostToDevice));
    GFSL_CUDA_CHECK(cudaMemset(prefill_failed.ptr, 0, sizeof(unsigned int)));
    if (!keys.empty()) {
      const std::uint64_t prefill_teams = std::min<std::uint64_t>(keys.size(), 4096);
      slab_prefill_kernel<V><<<static_cast<unsigned>((prefill_teams * slab_team + 255) / 256), 256>>>(
          words.ptr, sp, key_buf.ptr, keys.size(), prefill_failed.ptr);
      GFSL_CUDA_CHECK(cudaGetLastError());
    }
    for (team_id t = 0; t < p.teams; ++t) init_states[t] = initial_team_state(p, t, seed);
    GFSL_CUDA_CHECK(cudaMemcpy(states.ptr, init_states.data(), p.teams * sizeof(team_state), cudaMemcpyHostToDevice));

    const std::uint64_t now = device_now();
    run_controls controls;
    controls.abort_flag = abort_flag.ptr;
    controls.hang = hang.ptr;
    controls.deadline_ns = now + static_cast<std::uint64_t>((o.slice_seconds + o.hang_seconds) * 1e9);
    GFSL_CUDA_CHECK(cudaMemset(abort_flag.ptr, 0, sizeof(unsigned int)));
    cudaEvent_t began, done;
    GFSL_CUDA_CHECK(cudaEventCreate(&began));
    GFSL_CUDA_CHECK(cudaEventCreate(&done));
    GFSL_CUDA_CHECK(cudaEventRecord(began));
    slab_stress_kernel<V><<<blocks, threads_per_block>>>(words.ptr, sp, p, seed ^ 0xA5A5A5A5ull, states.ptr,
                                                        now + static_cast<std::uint64_t>(o.slice_seconds * 1e9), o.ops_per_team,
                                                        origin_ns, static_cast<std::uint32_t>(i), controls, totals.ptr,
                                                        first_ns.ptr, reports.ptr, o.reports, report_count.ptr);
    GFSL_CUDA_CHECK(cudaGetLastError());
    GFSL_CUDA_CHECK(cudaEventRecord(done));
    judge_pending();
    if (!cuda_util::wait_for(done, o.slice_seconds + o.hang_seconds + 5.0)) {
      // A walk that never ends (a cycle in a chain): the kernel cannot be stopped from here.
      res.hung = true;
      res.hang_detail = "the kernel of round " + std::to_string(i) + " outlived its slice by " + std::to_string(o.hang_seconds + 5.0) +
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
    unsigned int failed = 0;
    GFSL_CUDA_CHECK(cudaMemcpy(&failed, prefill_failed.ptr, sizeof failed, cudaMemcpyDeviceToHost));
    if (failed) {
      res.error = "round " + std::to_string(i) + ": prefill insert(" + std::to_string(keys[failed - 1]) + ") failed (pool of " +
                  std::to_string(sp.pool_slabs) + " slabs)";
      break;
    }
    std::uint64_t header[2] = {0, 0};
    GFSL_CUDA_CHECK(cudaMemcpy(header, words.ptr, sizeof header, cudaMemcpyDeviceToHost));
    if (header[slabhash::error_word_index] != error_none) {
      if (header[slabhash::error_word_index] == error_pool_exhausted) {
        ++res.rebuilt_early;
      } else {
        res.error = "round " + std::to_string(i) + ": error word " + std::to_string(header[slabhash::error_word_index]);
        break;
      }
    }
    // The structure oracle's copy: the header and the slabs handed out (the
    // rest of the pool is pristine unless a chain points past the counter,
    // which the chains invariant reports).
    const std::uint64_t handed_out = std::min<std::uint64_t>(header[slabhash::alloc_counter_word], sp.pool_slabs);
    copy.resize(slabhash::header_words + handed_out * slab_team);
    GFSL_CUDA_CHECK(cudaMemcpy(copy.data(), words.ptr, copy.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    GFSL_CUDA_CHECK(cudaMemcpy(end_states.data(), states.ptr, p.teams * sizeof(team_state), cudaMemcpyDeviceToHost));
    pending = true;
    pending_round = i;
    collect(res);
    if (progress) progress(res);
  }
  judge_pending();
  collect(res);
  unsigned long long taken = 0;
  GFSL_CUDA_CHECK(cudaMemcpy(&taken, report_count.ptr, sizeof taken, cudaMemcpyDeviceToHost));
  res.reports.resize(std::min<unsigned long long>(taken, o.reports));
  if (!res.reports.empty()) {
    GFSL_CUDA_CHECK(cudaMemcpy(res.reports.data(), reports.ptr, res.reports.size() * sizeof(violation_record), cudaMemcpyDeviceToHost));
  }
  return res;
}

}  // namespace


config_result run_slab_on_gpu(const options& o, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  return slabhash::variant_of(o.choice) == slabhash::slab_variant::published
             ? run_slab_config<slabhash::slab_variant::published>(o, range, progress, fatal)
             : run_slab_config<slabhash::slab_variant::fixed>(o, range, progress, fatal);
}

}  // namespace gfsl::stress
