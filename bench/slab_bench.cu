// The SlabHash concurrent benchmark (bench/slab_bench.hpp). Compiled inlined
// whatever the build: SlabHash's kernels are small, and these are its
// measured figures.
#undef GFSL_DEVICE_NOINLINE_ALL

#include "bench/slab_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/cuda/device_team.cuh"
#include "core/slabhash/algorithm.hpp"
#include "exec/cuda/cuda_check.cuh"

namespace gfsl::bench {

namespace {

using cuda_util::device_buffer;
constexpr int team_lanes = slabhash::slab_words;
constexpr int block_threads = 512;

// A bijection of 32-bit integers (odd multipliers and xorshifts are
// invertible): distinct indices give distinct keys, spread like random ones,
// so the initial keys, the new ones and the absent ones never meet.
std::uint32_t key_of(std::uint32_t i) {
  std::uint32_t x = i + 0x9E3779B9u;
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

struct slab_op {
  std::uint32_t key;
  std::uint8_t kind;     // op_kind
  std::uint8_t expect;   // the answer of a sequential run from the initial table (each key's ops are one)
  std::uint16_t pad;
};

__global__ void init_table(std::uint64_t* words, std::size_t count, slabhash::params p) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    words[i] = slabhash::initial_word(i, p);
  }
}

// Each team takes operations t, t + T, t + 2T, ... (the paper assigns
// operations to threads at random; the order of `ops` is random already).
// Answers that differ from the sequential expectation are counted: the
// published variant's faults show up here too.
template <slabhash::slab_variant V>
__global__ void __launch_bounds__(block_threads, 4)
    run_table(std::uint64_t* words, slabhash::params p, const slab_op* ops, std::uint64_t count, std::uint32_t teams,
              unsigned long long* wrong, unsigned long long* errors) {
  const std::uint64_t t = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / team_lanes;
  if (t >= teams) return;
  const run_controls no_controls{};
  device_team<team_lanes> team(static_cast<team_id>(t), 0, no_controls);
  slabhash::algorithm<device_team<team_lanes>, V, false> a(team, words, p);
  std::uint32_t bad = 0, err = 0;
  for (std::uint64_t i = t; i < count; i += teams) {
    const slab_op op = ops[i];
    const op_result r = a.apply(static_cast<op_kind>(op.kind), op.key, op.key);
    if (r.st != status::ok) ++err;
    else if (r.ok != (op.expect != 0)) ++bad;
  }
  if (team.lane() == 0) {
    if (bad) atomicAdd(wrong, static_cast<unsigned long long>(bad));
    if (err) atomicAdd(errors, static_cast<unsigned long long>(err));
  }
}

template <slabhash::slab_variant V>
std::uint32_t resident_teams() {
  int blocks = 0, dev = 0, sms = 0;
  GFSL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, run_table<V>, block_threads, 0));
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return static_cast<std::uint32_t>(std::max(1, blocks) * sms * (block_threads / team_lanes));
}

template <slabhash::slab_variant V>
float timed_run(std::uint64_t* words, const slabhash::params& p, const slab_op* ops, std::uint64_t count, std::uint32_t teams,
                unsigned long long* wrong, unsigned long long* errors) {
  cuda_util::event_timer timer;
  run_table<V><<<(teams * team_lanes + block_threads - 1) / block_threads, block_threads>>>(words, p, ops, count, teams, wrong, errors);
  GFSL_CUDA_CHECK(cudaGetLastError());
  return timer.stop();
}

void print_row(const row& r, std::FILE* log) {
  if (!log) return;
  if (!r.error.empty()) {
    std::fprintf(log, "%-9s %-18s %-7s %-22s FAILED: %s\n", r.suite.c_str(), r.impl.c_str(), r.workload.c_str(), "", r.error.c_str());
    return;
  }
  std::fprintf(log, "%-9s %-18s %-7s util %3.0f%% teams %6u: median %8.1f Mops/s (95%% CI %.1f-%.1f, n=%zu); %s\n",
               r.suite.c_str(), r.impl.c_str(), r.workload.c_str(), r.prefill * 100, r.teams, r.s.median, r.s.ci_low,
               r.s.ci_high, r.mops.size(), r.note.c_str());
}

}  // namespace

std::vector<row> run_slab_suite(const slab_suite_options& o, std::FILE* csv, std::FILE* log) {
  std::vector<row> rows;
  std::vector<int> row_util;  // each row's target utilisation, for the table
  cudaDeviceProp prop{};
  int dev = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  GFSL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  if (csv) std::fprintf(csv, "%s\n", csv_header().c_str());
  const std::uint64_t n = o.elements, m = o.ops;
  std::vector<key_type> initial(n);
  for (std::uint64_t i = 0; i < n; ++i) initial[i] = key_of(static_cast<std::uint32_t>(i));
  device_buffer<key_type> initial_dev(n);
  GFSL_CUDA_CHECK(cudaMemcpy(initial_dev.ptr, initial.data(), n * sizeof(key_type), cudaMemcpyHostToDevice));
  // The build: every initial key inserted concurrently, as the paper builds.
  std::vector<slab_op> build(n);
  for (std::uint64_t i = 0; i < n; ++i) build[i] = {initial[i], static_cast<std::uint8_t>(op_kind::insert), 1, 0};
  device_buffer<slab_op> build_dev(n), ops_dev(m);
  GFSL_CUDA_CHECK(cudaMemcpy(build_dev.ptr, build.data(), n * sizeof(slab_op), cudaMemcpyHostToDevice));
  device_buffer<unsigned long long> counts(2);

  for (int util : o.utilisations) {
    slabhash::params p;
    p.hash_seed = o.seed;
    p.buckets = buckets_for_utilisation(initial, util / 100.0, p.hash_seed);
    std::vector<std::uint32_t> sizes(p.buckets, 0);
    for (key_type k : initial) ++sizes[slabhash::bucket_of(k, p)];
    const std::uint64_t chain_slabs = chain_slabs_of(sizes);
    // Room for the build, every insert of the run in a fresh pair (fixed
    // never reuses one) and a losing append's slab per insert.
    p.pool_slabs = static_cast<std::uint32_t>(std::min<std::uint64_t>(chain_slabs + p.buckets + 2 * (n + m) / slabhash::pairs_per_slab + m + 1024,
                                                                       0xF0000000ull));
    const std::size_t word_count = slabhash::word_count(p);
    device_buffer<std::uint64_t> words(word_count);
    for (const slab_mix& mix : slab_mixes()) {
      // Operations in random order: a) a key never used, b) an initial key
      // deleted once, c) an initial key never deleted, d) a key never inserted.
      std::mt19937_64 rng(o.seed ^ (static_cast<std::uint64_t>(util) << 32) ^ std::hash<std::string>{}(mix.name));
      std::vector<std::uint32_t> order(n);
      std::iota(order.begin(), order.end(), 0u);
      std::shuffle(order.begin(), order.end(), rng);
      const std::uint64_t deletes = m * mix.b / 100;
      std::vector<slab_op> ops(m);
      std::uint64_t fresh = n, next_delete = 0;
      const std::uint64_t absent_base = n + m;
      for (std::uint64_t i = 0; i < m; ++i) {
        const int r = static_cast<int>(rng() % 100);
        slab_op& op = ops[i];
        if (r < mix.a) {
          op = {key_of(static_cast<std::uint32_t>(fresh++)), static_cast<std::uint8_t>(op_kind::insert), 1, 0};
        } else if (r < mix.a + mix.b && next_delete < deletes && next_delete < n) {
          op = {initial[order[next_delete++]], static_cast<std::uint8_t>(op_kind::remove), 1, 0};
        } else if (r < mix.a + mix.b + mix.c || mix.d == 0) {
          const std::uint64_t j = deletes + rng() % std::max<std::uint64_t>(1, n - std::min(n, deletes));
          op = {initial[order[std::min(j, n - 1)]], static_cast<std::uint8_t>(op_kind::contains), 1, 0};
        } else {
          op = {key_of(static_cast<std::uint32_t>(absent_base + rng() % m)), static_cast<std::uint8_t>(op_kind::contains), 0, 0};
        }
      }
      GFSL_CUDA_CHECK(cudaMemcpy(ops_dev.ptr, ops.data(), m * sizeof(slab_op), cudaMemcpyHostToDevice));
      for (slabhash::slab_variant v : o.variants) {
        row r;
        r.suite = "slabhash";
        r.impl = std::string("slabhash-") + slabhash::variant_name(v);
        r.device = prop.name;
        r.workload = mix.name;
        r.chunk = team_lanes;
        r.launch = std::to_string(block_threads) + "/4";
        r.insert_pct = mix.a;
        r.delete_pct = mix.b;
        r.contains_pct = mix.c + mix.d;
        r.range = static_cast<std::uint32_t>(n);
        r.prefill = slab_utilisation(n, chain_slabs);
        r.ops = m;
        r.chunks = p.buckets;
        r.teams = v == slabhash::slab_variant::fixed ? resident_teams<slabhash::slab_variant::fixed>()
                                                     : resident_teams<slabhash::slab_variant::published>();
        unsigned long long wrong_total = 0, errors_total = 0;
        for (int rep = 0; rep < o.repeats; ++rep) {
          init_table<<<1024, 256>>>(words.ptr, word_count, p);
          GFSL_CUDA_CHECK(cudaGetLastError());
          GFSL_CUDA_CHECK(cudaMemset(counts.ptr, 0, 2 * sizeof(unsigned long long)));
          const bool fixed = v == slabhash::slab_variant::fixed;
          const float build_ms = fixed ? timed_run<slabhash::slab_variant::fixed>(words.ptr, p, build_dev.ptr, n, r.teams, counts.ptr, counts.ptr + 1)
                                       : timed_run<slabhash::slab_variant::published>(words.ptr, p, build_dev.ptr, n, r.teams, counts.ptr, counts.ptr + 1);
          r.prefill_ms = build_ms;
          unsigned long long c[2];
          GFSL_CUDA_CHECK(cudaMemcpy(c, counts.ptr, sizeof c, cudaMemcpyDeviceToHost));
          if (c[0] || c[1]) {
            r.error = "the build answered " + std::to_string(c[0]) + " inserts false and " + std::to_string(c[1]) + " with an error";
            break;
          }
          const float ms = fixed ? timed_run<slabhash::slab_variant::fixed>(words.ptr, p, ops_dev.ptr, m, r.teams, counts.ptr, counts.ptr + 1)
                                 : timed_run<slabhash::slab_variant::published>(words.ptr, p, ops_dev.ptr, m, r.teams, counts.ptr, counts.ptr + 1);
          GFSL_CUDA_CHECK(cudaMemcpy(c, counts.ptr, sizeof c, cudaMemcpyDeviceToHost));
          wrong_total += c[0];
          errors_total += c[1];
          r.mops.push_back(static_cast<double>(m) / (ms * 1e3));
        }
        if (r.error.empty()) {
          r.s = summarize(r.mops);
          char note[256];
          std::snprintf(note, sizeof note, "%u buckets, initial utilisation %.1f%%, build %.2f ms, %llu answers unlike a sequential run, %llu errors",
                        p.buckets, r.prefill * 100, r.prefill_ms, wrong_total, errors_total);
          r.note = note;
        }
        print_row(r, log);
        if (csv) {
          std::fprintf(csv, "%s\n", csv_line(r).c_str());
          std::fflush(csv);
        }
        rows.push_back(r);
        row_util.push_back(util);
      }
    }
  }
  if (log) {
    std::fprintf(log, "\nslabhash, %s: median Mops/s by initial utilisation (n = %llu, %llu operations)\n", prop.name,
                 static_cast<unsigned long long>(n), static_cast<unsigned long long>(m));
    std::fprintf(log, "%-22s", "variant / mix");
    for (int u : o.utilisations) std::fprintf(log, " %7d%%", u);
    std::fprintf(log, "\n");
    for (slabhash::slab_variant v : o.variants) {
      for (const slab_mix& mix : slab_mixes()) {
        std::fprintf(log, "%-9s %-12s", slabhash::variant_name(v), mix.name.c_str());
        for (int u : o.utilisations) {
          double fig = 0;
          for (std::size_t i = 0; i < rows.size(); ++i) {
            const row& r = rows[i];
            if (r.impl == std::string("slabhash-") + slabhash::variant_name(v) && r.workload == mix.name && row_util[i] == u) {
              fig = r.s.median;
            }
          }
          std::fprintf(log, " %8.1f", fig);
        }
        std::fprintf(log, "\n");
      }
    }
  }
  return rows;
}

}  // namespace gfsl::bench
