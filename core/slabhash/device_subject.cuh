// SlabHash on the GPU: its device policy, what the device runner
// (exec/cuda/device_runner.cuh) and gfsl stress's GPU runner
// (stress/gpu_stress.cuh) need of the table: its slab pool on the device and
// its parallel initialisation, its algorithm over a device team of 16 lanes,
// the prefill of gfsl stress, the inspection and snapshot at quiescence, and
// the round oracle of gfsl stress (stress/slab_oracle.hpp). docs/SUBJECTS.md,
// "The GPU side".
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "algorithm.hpp"
#include "layout.hpp"
#include "subject.hpp"
#include "../cuda/device_team.cuh"
#include "../../exec/cuda/cuda_check.cuh"
#include "../../exec/cuda/device_registry.hpp"
#include "../../exec/host_runner.hpp"
#include "../../exec/host_structure.hpp"
#include "invariants.hpp"
#include "../../stress/options.hpp"
#include "../../stress/runner.hpp"
#include "../../stress/slab_oracle.hpp"
#include "../../stress/stress.hpp"

namespace gfsl {

namespace slabhash {

static __global__ void init_table_words(std::uint64_t* words, std::size_t count, params p) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    words[i] = initial_word(i, p);
  }
}

}  // namespace slabhash

// gfsl stress: the table's initial keys inserted by many teams at once
// (distinct keys, no deletes: both variants insert them correctly).
template <slabhash::slab_variant V>
__global__ void slabhash_stress_prefill(std::uint64_t* words, slabhash::params sp, const key_type* keys, std::uint64_t count,
                                        unsigned int* failed) {
  constexpr int width = slabhash::slab_words;
  const std::uint64_t t = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / width;
  const std::uint64_t teams = (static_cast<std::uint64_t>(gridDim.x) * blockDim.x) / width;
  const run_controls no_controls{};
  device_team<width> team(static_cast<team_id>(t), 0, no_controls);
  slabhash::algorithm<device_team<width>, V, false> a(team, words, sp);
  for (std::uint64_t i = t; i < count; i += teams) {
    const op_result r = a.insert(keys[i], stress::value_of(keys[i]));
    if (r.st != status::ok || !r.ok) {
      if (team.lane() == 0) atomicCAS(failed, 0u, static_cast<unsigned int>(i + 1));
      return;
    }
  }
}

// A round of gfsl stress: at most max_ops operations a team, and where the
// first missing and the first extra answer's device times go.
struct slab_round {
  std::uint64_t max_ops;
  unsigned long long* first_ns;
};

// What the kernels read of a table: its words and parameters.
struct slab_table {
  std::uint64_t* words;
  slabhash::params p;
};

template <slabhash::slab_variant V>
struct slabhash_device_subject {
  static constexpr subject_kind kind = subject_kind::slabhash;
  static constexpr int width = slabhash::slab_words;
  using structure = slab_table;
  struct tuning {};  // the table's algorithm takes nothing besides its table
  using fault = slabhash::slab_mutant;  // none: the device runs the correct design only
  using correct = slabhash_device_subject<V>;
  static constexpr bool keeps_path_stats = false;
  static constexpr const char* pool_unit = "slabs";

  template <class Team, class Tuning>
  __device__ __forceinline__ static slabhash::algorithm<Team, V, false> make(Team& team, const structure& s, const Tuning&, fault) {
    return slabhash::algorithm<Team, V, false>(team, s.words, s.p);
  }
  template <class Algo>
  __device__ __forceinline__ static op_result apply(Algo& a, op_kind kind, key_type k, value_type v) {
    return a.apply(kind, k, v);
  }

  template <class Options>
  static tuning tuning_of(const Options&) {
    return {};
  }
  template <class Options>
  static fault fault_of(const Options&) {
    return fault::none;
  }

  static void validate(const model::workload&, const device_options& o) {
    if (o.events) throw std::invalid_argument("--events: the structural event log is GFSL's (slabhash has none)");
    if (o.stamp_group < 1 || o.stamp_group > static_cast<std::uint32_t>(slabhash::slab_words)) {
      throw std::invalid_argument("a stamp group holds 1 to 16 operations (a lane each), not " + std::to_string(o.stamp_group));
    }
  }

  // The table on the device, every word set in parallel to its initial
  // value (core/slabhash/layout.hpp).
  class memory {
   public:
    explicit memory(const slabhash::params& p) : p_(p), count_(slabhash::word_count(p)), words_(count_) {}
    memory(const model::workload& w, const device_options& o) : memory(run_params(w, o)) { init(); }
    void init() {
      slabhash::init_table_words<<<1024, 256>>>(words_.ptr, count_, p_);
      GFSL_CUDA_CHECK(cudaGetLastError());
    }
    structure view() const { return {words_.ptr, p_}; }
    std::uint64_t* words() const { return words_.ptr; }
    std::size_t word_count() const { return count_; }
    std::uint32_t pool() const { return p_.pool_slabs; }
    const slabhash::params& params() const { return p_; }
    const std::uint64_t* error_word() const { return words_.ptr + slabhash::error_word_index; }

    // The header and the slabs handed out (the rest of the pool is pristine
    // unless a chain points past the counter, which the chains invariant
    // reports).
    std::vector<std::uint64_t> copy_handed_out() const {
      std::uint64_t header[2] = {0, 0};
      GFSL_CUDA_CHECK(cudaMemcpy(header, words_.ptr, sizeof header, cudaMemcpyDeviceToHost));
      std::vector<std::uint64_t> out(slabhash::handed_out_words(header[slabhash::alloc_counter_word], p_));
      GFSL_CUDA_CHECK(cudaMemcpy(out.data(), words_.ptr, out.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
      return out;
    }
    // The snapshot as the host subject takes it (exec/host_subjects.hpp).
    invariants::snapshot snapshot() const { return slabhash::table_snapshot(p_, V, copy_handed_out()); }
    // Judged by SlabHash's own inspection and snapshot invariants, as the
    // host runner judges it.
    void inspect(host_run& hr) const {
      std::vector<std::uint64_t> table(count_);
      GFSL_CUDA_CHECK(cudaMemcpy(table.data(), words_.ptr, count_ * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
      slabhash::contents c = slabhash::inspect(table.data(), table.size(), p_, V);
      final_state f;
      f.chunks_allocated = c.slabs_allocated;
      f.entries = std::move(c.entries);
      f.problems = std::move(c.problems);
      take_final_state(hr, std::move(f));
      table.resize(slabhash::handed_out_words(table[slabhash::alloc_counter_word], p_));
      hr.final_snapshot = slabhash::table_snapshot(p_, V, std::move(table));
    }

   private:
    static slabhash::params run_params(const model::workload& w, const device_options& o) {
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
      return sp;
    }
    slabhash::params p_;
    std::size_t count_;
    cuda_util::device_buffer<std::uint64_t> words_;
  };

  // ---- gfsl stress (stress/gpu_stress.cuh; docs/FINDINGS.md, "SlabHash") ----
  // A round is one table's life: a fresh table, its initial keys, then one
  // launch in which every team runs at most o.ops_per_team operations, then
  // the table copied back and scanned whole. Rounds are short and bounded in
  // operations rather than time because the fixed variant never reuses a
  // deleted pair (tombstones): its chains grow with every insert, and a long
  // round would measure chain walks, not races.
  using stress_tuning = slab_round;
  static constexpr bool rounds = true;
  static constexpr bool judges_exhausted = true;  // a full pool fails inserts whole: the table is still judged
  static constexpr bool splits_violations = true;
  static constexpr const char* structure_name = "round";

  static stress_tuning stress_tuning_of(const stress::options& o, unsigned long long* first_ns) {
    return {o.ops_per_team, first_ns};
  }
  // Slab s starts at header_words + 16 s: the team wrapper's "chunk" is the slab.
  __device__ __forceinline__ static const std::uint64_t* pool_start(const structure& s) { return s.words + slabhash::header_words; }
  __device__ __forceinline__ static bool more_ops(const stress_tuning& r, std::uint32_t i) { return i < r.max_ops; }
  __device__ static void on_violation(const stress_tuning& r, const stress::step& sp, std::uint64_t origin_ns) {
    atomicMin(r.first_ns + (sp.want_ok ? 0 : 1), static_cast<unsigned long long>(global_timer_ns() - origin_ns));
  }
  __device__ static void describe_violation(stress::violation_record& r, const stress::step& sp, const structure& s) {
    r.subject = static_cast<std::uint8_t>(subject_kind::slabhash);
    r.bucket = slabhash::bucket_of(sp.key, s.p);
  }

  static void prefill(const structure& s, const key_type* keys, std::uint64_t count, const stress_tuning&, std::uint64_t,
                      unsigned int* failed) {
    const std::uint64_t teams = std::min<std::uint64_t>(count, 4096);
    slabhash_stress_prefill<V><<<static_cast<unsigned>((teams * width + 255) / 256), 256>>>(s.words, s.p, keys, count, failed);
    GFSL_CUDA_CHECK(cudaGetLastError());
  }
  static void describe(stress::config_result& res, const stress::options& o, const stress::params& p) {
    res.subject = "slabhash";
    res.variant = slabhash::variant_name(V);
    res.churn = p.churn;
    res.ops_per_round = o.ops_per_team;
    res.invariants_checked = std::to_string(slabhash::slab_invariants().size()) + " slab invariants, the expected keys";
  }
  static std::uint32_t default_teams(const stress::options&, std::uint32_t resident) { return resident; }
  // The pool: room for every key at once and for every operation of a round
  // being an insert that takes a fresh pair (fixed never reuses one), plus a
  // partly filled slab per bucket; at most a third of the free memory.
  static memory stress_memory(const stress::options& o, const stress::params& p, stress::config_result& res) {
    slabhash::params sp;
    sp.buckets = o.buckets ? o.buckets : stress::slabhash_default_buckets(res.teams);
    sp.hash_seed = o.seed;
    res.buckets = sp.buckets;
    std::size_t free_bytes = 0, total_bytes = 0;
    GFSL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::uint64_t fit = std::min<std::uint64_t>(free_bytes / 3 / (width * sizeof(std::uint64_t)), 0xF0000000ull);
    const std::uint64_t want = 2ull * sp.buckets + (static_cast<std::uint64_t>(res.range) + p.churn +
                                                    static_cast<std::uint64_t>(res.teams) * o.ops_per_team) / slabhash::pairs_per_slab + 1024;
    sp.pool_slabs = static_cast<std::uint32_t>(o.pool ? o.pool : std::min(fit, want));
    if (sp.pool_slabs < sp.buckets) throw std::invalid_argument("--pool " + std::to_string(sp.pool_slabs) + ": fewer slabs than buckets");
    return memory(sp);
  }
  // The round oracle (stress/slab_oracle.hpp): the snapshot invariants and
  // the keys whose presence the shape knows; the others may or may not be
  // there, at most once.
  static stress::structure_verdict judge(const std::vector<std::uint64_t>& words, const memory& mem, const stress::params& p,
                                         const std::vector<stress::team_state>& states, stress::config_result& res, double at) {
    return stress::judge_slab_structure(words.data(), words.size(), mem.params(), V, p, states, res, at);
  }
};

template <>
struct device_subject<subject_kind::slabhash> {
  // The one place SlabHash's GPU runners read the options' choice: its variant.
  template <class Options, class F>
  static auto with_policy(int, const Options& o, F&& f) {
    return slabhash::variant_of(o.choice) == slabhash::slab_variant::published
               ? f.template operator()<slabhash_device_subject<slabhash::slab_variant::published>>()
               : f.template operator()<slabhash_device_subject<slabhash::slab_variant::fixed>>();
  }
};

}  // namespace gfsl
