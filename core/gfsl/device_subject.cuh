// GFSL on the GPU: its device policy, what the device runner
// (exec/cuda/device_runner.cuh) and gfsl stress's GPU runner
// (stress/gpu_stress.cuh) need of the skiplist: its chunk pool on the device
// and its parallel initialisation, its algorithm over a device team, the
// prefill of gfsl stress, the inspection and snapshot at quiescence, its path
// statistics, and what a stress structure must hold at the end of its life.
// docs/SUBJECTS.md, "The GPU side".
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "algorithm.hpp"
#include "invariants.hpp"
#include "subject.hpp"
#include "../cuda/device_team.cuh"
#include "../../exec/cuda/cuda_check.cuh"
#include "../../exec/cuda/device_registry.hpp"
#include "../../exec/cuda/structure_init.cuh"
#include "../../exec/host_runner.hpp"
#include "../../exec/host_structure.hpp"
#include "../../stress/runner.hpp"
#include "../../stress/stress.hpp"

namespace gfsl {

// gfsl stress: one team (N lanes) inserts the structure's first keys in
// ascending order.
template <int N, variant V>
__global__ void gfsl_stress_prefill(structure_view<N> s, const key_type* keys, std::uint64_t count, std::uint64_t threshold,
                                    std::uint64_t seed, unsigned int* failed) {
  const run_controls no_controls{};
  device_team<N> team(0, seed, no_controls);
  algorithm<device_team<N>, false, V> a(team, s, threshold);
  for (std::uint64_t i = 0; i < count; ++i) {
    const op_result r = a.insert(keys[i], stress::value_of(keys[i]));
    if (r.st != status::ok || !r.ok) {
      if (team.lane() == 0) *failed = static_cast<unsigned int>(i + 1);
      return;
    }
  }
}

// Chunks of N entries, a team of N lanes; Mutable: the seeded bugs of
// core/gfsl/mutants.hpp compiled in.
template <int N, bool Mutable, variant V>
struct gfsl_device_subject {
  static constexpr subject_kind kind = subject_kind::gfsl;
  static constexpr int width = N;
  using structure = structure_view<N>;
  using tuning = std::uint64_t;  // the shape rule (shape_rule_of)
  using fault = mutant;
  using correct = gfsl_device_subject<N, false, V>;
  static constexpr bool keeps_path_stats = true;
  static constexpr const char* pool_unit = "chunks";

  template <class Team>
  __device__ __forceinline__ static algorithm<Team, Mutable, V> make(Team& team, const structure& s, tuning shape_rule,
                                                                     fault mut) {
    return algorithm<Team, Mutable, V>(team, s, shape_rule, mut);
  }
  template <class Algo>
  __device__ __forceinline__ static op_result apply(Algo& a, op_kind kind, key_type k, value_type v) {
    return apply_operation(a, kind, k, v);
  }

  template <class Options>
  static tuning tuning_of(const Options& o) {
    return shape_rule_of(o.p_chunk, o.reraise);
  }
  template <class Options>
  static fault fault_of(const Options& o) {
    return gfsl_subject::mutant_of(o.choice);
  }

  static void validate(const model::workload& w, const device_options& o) {
    if (w.chunk != 16 && w.chunk != 32) throw std::invalid_argument("a GPU team is 16 or 32 lanes: chunks of 16 or 32 entries");
    if (o.stamp_group < 1 || o.stamp_group > static_cast<std::uint32_t>(w.chunk)) {
      throw std::invalid_argument("a stamp group holds 1 to " + std::to_string(w.chunk) + " operations (a lane each), not " +
                                  std::to_string(o.stamp_group));
    }
    if (o.stamp_group > 1 && o.keep_records && w.ops > 0xFFFFFFFFull) {
      throw std::invalid_argument("a history recorded in stamp groups holds fewer than 2^32 operations");
    }
  }

  // The chunk pool on the device, every word set in parallel to its initial
  // value (core/gfsl/layout.hpp).
  class memory {
   public:
    explicit memory(std::uint32_t pool) : pool_(pool), count_(structure_view<N>::word_count(pool)), words_(count_) {}
    memory(const model::workload& w, const device_options& o) : memory(o.pool_chunks ? o.pool_chunks : default_pool_chunks(w)) {
      init();
      // Fault injection for the hang bound: a chunk locked by a team that does not exist.
      if (o.locked_at_start != no_chunk) {
        const std::uint64_t phantom = lock_word_of(max_team_id);
        GFSL_CUDA_CHECK(cudaMemcpy(view().chunk(o.locked_at_start) + chunk_shape<N>::lock_lane, &phantom, sizeof phantom,
                                   cudaMemcpyHostToDevice));
      }
    }
    void init() {
      init_structure_words<N><<<1024, 256>>>(words_.ptr, count_, pool_);
      GFSL_CUDA_CHECK(cudaGetLastError());
    }
    structure view() const { return {words_.ptr, pool_}; }
    std::uint64_t* words() const { return words_.ptr; }
    std::size_t word_count() const { return count_; }
    std::uint32_t pool() const { return pool_; }
    const std::uint64_t* error_word() const { return view().error_word(); }

    // The header and the allocated chunks (the rest of the pool is pristine).
    std::vector<std::uint64_t> copy_handed_out() const {
      std::uint64_t allocated = 0;
      GFSL_CUDA_CHECK(cudaMemcpy(&allocated, view().alloc_counter(), sizeof allocated, cudaMemcpyDeviceToHost));
      allocated = std::min<std::uint64_t>(allocated, pool_);
      std::vector<std::uint64_t> out(header_offsets::pool + allocated * N);
      GFSL_CUDA_CHECK(cudaMemcpy(out.data(), words_.ptr, out.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
      return out;
    }
    // The structure copied back whole (the runs: inspected by the host code
    // that inspects CPU runs).
    invariants::snapshot snapshot() const {
      host_structure<N> copy(pool_);
      GFSL_CUDA_CHECK(cudaMemcpy(copy.words(), words_.ptr, count_ * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
      return take_snapshot(copy.view());
    }
    void inspect(host_run& hr) const {
      host_structure<N> copy(pool_);
      GFSL_CUDA_CHECK(cudaMemcpy(copy.words(), words_.ptr, count_ * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
      take_final_state(hr, inspect_final_state(copy.view()));
      hr.final_snapshot = take_snapshot(copy.view());
    }

   private:
    std::uint32_t pool_;
    std::size_t count_;
    cuda_util::device_buffer<std::uint64_t> words_;
  };

  // ---- gfsl stress (stress/gpu_stress.cuh) ----
  using stress_tuning = tuning;
  static constexpr bool rounds = false;             // a structure lives o.rebuild_seconds, in slices
  static constexpr bool judges_exhausted = false;   // a full pool leaves inserts half done: not judged
  static constexpr bool splits_violations = false;
  static constexpr const char* structure_name = "structure";

  static stress_tuning stress_tuning_of(const stress::options& o, unsigned long long*) { return tuning_of(o); }
  __device__ __forceinline__ static const std::uint64_t* pool_start(const structure& s) { return s.chunk(0); }
  __device__ __forceinline__ static constexpr bool more_ops(const stress_tuning&, std::uint32_t) { return true; }
  __device__ __forceinline__ static void on_violation(const stress_tuning&, const stress::step&, std::uint64_t) {}
  __device__ __forceinline__ static void describe_violation(stress::violation_record&, const stress::step&, const structure&) {}

  static void prefill(const structure& s, const key_type* keys, std::uint64_t count, const stress_tuning& shape_rule,
                      std::uint64_t seed, unsigned int* failed) {
    gfsl_stress_prefill<N, V><<<1, N>>>(s, keys, count, shape_rule, seed ^ 0xF1F1F1F1ull, failed);
    GFSL_CUDA_CHECK(cudaGetLastError());
  }
  static void describe(stress::config_result& res, const stress::options& o, const stress::params& p) {
    const mutant m = fault_of(o);
    res.variant = variant_name(V);
    res.reraise = o.reraise;
    res.mutant = m == mutant::none ? "none" : mutant_name(m);
    res.mutant_role = stress::mutant_role(m);
    res.low_churn = p.low_churn;
    res.invariants_checked = std::to_string(invariants::snapshot_invariant_names().size()) + " snapshot invariants";
  }
  // stable-contains: half of the resident teams by default. Measured on an
  // H200 with a fresh structure every 0.25 s, half found the torn read of
  // thesis on 5 seeds of 5 within 2.2 s and all of them on none in 10 s
  // (docs/BENCHMARKS.md, "Tuning gfsl stress").
  static std::uint32_t default_teams(const stress::options& o, std::uint32_t resident) {
    return o.sh == stress::shape::stable_contains ? std::max<std::uint32_t>(1, resident / 2) : resident;
  }
  // The pool: a third of the free memory, at most 24 GiB. Merged chunks are
  // never reused, so churn fills it; a full pool ends a structure's life.
  static memory stress_memory(const stress::options& o, const stress::params&, stress::config_result&) {
    std::size_t free_bytes = 0, total_bytes = 0;
    GFSL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::uint64_t budget = std::min<std::uint64_t>(free_bytes / 3, 24ull << 30);
    const std::uint32_t pool = o.pool ? o.pool
                                      : static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                            budget / chunk_shape<N>::chunk_bytes, 0xF0000000ull));
    if (pool < structure_view<N>::min_capacity + 4) throw std::runtime_error("not enough device memory for a structure");
    return memory(pool);
  }
  // The structure oracle: the snapshot invariants and level 0 against what
  // the shape says must be there (stable-contains: the stable keys, and
  // whatever the writers left of the others).
  static stress::structure_verdict judge(const std::vector<std::uint64_t>& words, const memory& mem, const stress::params& p,
                                         const std::vector<stress::team_state>& states, stress::config_result&, double) {
    invariants::snapshot snap;
    snap.chunk = N;
    snap.capacity = mem.pool();
    snap.words = words;
    const structure_view<N> host_view{snap.words.data(), mem.pool()};
    std::vector<std::pair<key_type, value_type>> expected;
    if (p.sh == stress::shape::stable_contains) {
      for (std::uint32_t k = 0; k < stress::stable_count(p); ++k) {
        expected.emplace_back(stress::stable_key(p, k), stress::value_of(stress::stable_key(p, k)));
      }
      for (const auto& kv : level_entries(host_view, 0)) {
        if (kv.first <= p.range && !stress::is_stable(p, kv.first)) expected.emplace_back(kv.first, stress::value_of(kv.first));
      }
    } else {
      expected = stress::owned_present(p, states);
    }
    std::sort(expected.begin(), expected.end());
    stress::structure_verdict v;
    v.problems = stress::judge_structure(snap, expected);
    v.violated = !v.problems.empty();
    return v;
  }
};

template <>
struct device_subject<subject_kind::gfsl> {
  // The one place GFSL's GPU runners read the options' choice of variant and
  // seeded bug: chunk 16 or 32, mutated or not, robust or thesis.
  template <class Options, class F>
  static auto with_policy(int chunk, const Options& o, F&& f) {
    const bool mutated = o.choice.mutated();
    return with_variant(gfsl_subject::variant_of(o.choice), [&](auto v) {
      constexpr variant V = decltype(v)::value;
      if (chunk == 16) {
        return mutated ? f.template operator()<gfsl_device_subject<16, true, V>>()
                       : f.template operator()<gfsl_device_subject<16, false, V>>();
      }
      return mutated ? f.template operator()<gfsl_device_subject<32, true, V>>()
                     : f.template operator()<gfsl_device_subject<32, false, V>>();
    });
  }
};

}  // namespace gfsl
