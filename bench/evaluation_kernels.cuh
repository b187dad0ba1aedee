// The evaluation kernels and the measurement of one variant, included by one
// translation unit per chunk size (evaluation_n16.cu, evaluation_n32.cu) so
// that the variants compile in parallel.
#pragma once

#include "bench/evaluation.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "bench/bench_workload.hpp"
#include "bench/level0_oracle.hpp"
#include "core/gfsl/algorithm.hpp"
#include "exec/cuda/cuda_check.cuh"
#include "core/cuda/device_team.cuh"
#include "exec/cuda/operation_batches.cuh"
#include "exec/cuda/recording.cuh"
#include "exec/host_runner.hpp"
#include "core/gfsl/layout.hpp"

namespace gfsl::bench::detail {

using cuda_util::device_buffer;
using cuda_util::wait_for;

// Device-wide tallies of one kernel: operations that did not end with
// status::ok, and prefill inserts that found their (distinct) key present.
struct tallies {
  unsigned long long errors = 0;
  unsigned long long first_error_status = 0;
  unsigned long long prefill_duplicates = 0;
  // Inserts and deletes that answered true: the structure's key count at
  // the end is the initial one plus the first minus the second (the check
  // after each kernel's last repeat, run_kernels).
  unsigned long long inserted = 0, removed = 0;
};

template <int N>
__global__ void init_range(std::uint64_t* words, std::size_t from, std::size_t to) {
  for (std::size_t i = from + blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < to;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    words[i] = initial_word<N>(i, 0);
  }
}

static __global__ void read_globaltimer(std::uint64_t* out) { *out = global_timer_ns(); }

// The operations of one kernel, written before its timed region: the
// prefill's inserts of the permutation's keys [0, count), or operations
// [0, count) of the workload. The kernel measured then reads operation j,
// as the GPU structures it is compared with read their keys from an array,
// and its time is the structure's alone (model::operation_at's two hashes
// and 64-bit remainder were about a sixth of a contains' instructions).
static __global__ void generate_prefill(key_permutation perm, std::uint64_t count, model::operation* out) {
  for (std::uint64_t j = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; j < count;
       j += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const key_type k = perm.key(j);
    out[j] = model::operation{op_kind::insert, k, k};
  }
}
static __global__ void generate_operations(model::workload w, std::uint64_t count, model::operation* out) {
  for (std::uint64_t j = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; j < count;
       j += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    out[j] = model::operation_at(w, j);
  }
}

// An insert or a delete, in a function of its own. When it was made, the
// updates compiled into the loop with everything else inlined (their rare
// paths too) made the compiler spill the contains path (N = 32: 7.2 KB of
// spill stores in the kernel, a 1.7 KB stack per thread); with the updates
// behind one call, the kernel's own code (the loop and contains) spilled
// under 0.1 KB. The team crosses
// the call as its carried state, by value, so that it stays in registers
// on the contains path.
//
// N = 32's recording kernel only. At N = 16 the kernel keeps every
// operation inline: with the call, N = 16 mixed runs were slower,
// [10,10,80] at 1M keys 0.88x and [20,20,60] 0.80x, though contains-only
// gained 1.15x (H200, when contains still shared the updates' search at
// N = 16; docs/BENCHMARKS.md). Measured again with the updates' rare paths
// apart (algorithm::apart): robust [10,10,80] at N = 16 ran 770-774 Mops/s
// with the call, 848-854 inline (docs/BENCHMARKS.md, "The updates' rare
// paths apart"). Since then N = 32's unrecorded kernel is faster inline
// too ([10,10,80] 1.03x-1.04x, [20,20,60] 1.08x-1.10x), while its
// recording kernel, which carries the recorder's state as well, is
// 0.95x-0.97x as fast inline (H100; docs/BENCHMARKS.md, "The updates
// inline at N = 32").
template <int N, bool Record>
inline constexpr bool updates_out_of_line = N == 32 && Record;
template <int N>
struct update_outcome {
  op_result r;
  typename device_team<N>::carried team;
};
template <int N, gfsl::variant V>
__device__ __noinline__ update_outcome<N> run_update(structure_view<N> s, std::uint64_t threshold,
                                                        const run_controls& controls, team_id t,
                                                        typename device_team<N>::carried carried,
                                                        model::operation op) {
  device_team<N> team(t, carried, controls);
  algorithm<device_team<N>, false, V> a(team, s, threshold);
  const op_result r = apply_operation(a, op.kind, op.key, op.value);
  return {r, team.carry()};
}

// One team per N lanes. With `batch` 0 team t runs its contiguous block of
// the `count` operations of `ops` (generate_prefill, generate_operations);
// otherwise every team takes `batch` operations at a time from one cursor
// until none are left, so that no team is left running a long block alone
// after the others have finished (docs/BENCHMARKS.md, "Operations taken in
// batches"). The prefill keeps fixed blocks. `Record`: the
// operations recorded as the testbed's runner records them (a kernel of its
// own, so that the recording code's registers do not weigh on the kernel
// measured without it; never used for the prefill).
template <int N, int Threads, int MinBlocks, gfsl::variant V = gfsl::default_variant, bool Record = false>
__global__ void __launch_bounds__(Threads, MinBlocks)
    bench_ops(structure_view<N> s, model::workload w, bool prefill, const model::operation* ops, std::uint64_t count,
              std::uint64_t threshold, run_controls controls, tallies* out, model::op_record* records,
              std::uint64_t* clock, model::clock_kind clock_kind, recording_parts parts, unsigned long long* cursor,
              std::uint32_t batch, std::uint32_t stamp_group) {
  const std::uint64_t t64 = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / N;
  if (t64 >= w.teams) return;
  const team_id t = static_cast<team_id>(t64);
  device_team<N> team(t, w.seed, controls);
  algorithm<device_team<N>, false, V> a(team, s, threshold);
  const std::uint64_t first = model::block_first(count, w.teams, t), last = model::block_first(count, w.teams, t + 1);
  // Lane 0 counts the inserts that answered true, lane 1 the deletes, lane 2
  // the prefill's inserts that answered false: one register for the three
  // (as the team's path counters, core/gfsl/stats.hpp).
  const int lane = team.lane();
  std::uint32_t answers = 0;
  // The recorder only in the recording kernel: its slots are shared memory.
  [[maybe_unused]] auto recorder = [&] {
    if constexpr (Record) {
      return team_recorder<N, Threads>(team, records, clock_kind, clock, parts, stamp_group);
    } else {
      return 0;
    }
  }();
  std::uint64_t j = batch ? 0 : first, end = batch ? 0 : last;
  for (;; ++j) {
    if (j == end && !next_batch(team, cursor, batch, count, j, end)) break;
    team.begin_operation();
    const model::operation op = ops[j];
    if constexpr (Record) recorder.call(j, op);  // as the runner records, or one part of it
    // An update's answer, counted. Without branches: written with ?:, a
    // jump table on the lane (BRX) and about 20 warp instructions an
    // operation (docs/device-runs/2026-11-24-h100/ncu-source-contains.txt).
    // A contains counts nothing (the prefill's operations are inserts), so
    // it skips this.
    const auto count_update = [&](const op_result& r) {
      const bool counted = ((lane == 0) & (op.kind == op_kind::insert) & r.ok) |
                           ((lane == 1) & (op.kind == op_kind::remove) & r.ok) |
                           ((lane == 2) & !Record & prefill & (r.st == status::ok) & !r.ok);
      answers += counted ? 1u : 0u;
    };
    op_result r;
    if constexpr (!updates_out_of_line<N, Record>) {
      // One call of the algorithm in the loop: every function is inlined,
      // and a second call site would be a second copy of all of it.
      r = apply_operation(a, op.kind, op.key, op.value);
      if (op.kind != op_kind::contains) count_update(r);
    } else if (op.kind == op_kind::contains) {
      r = a.contains(op.key);
    } else {
      const update_outcome<N> u = run_update<N, V>(s, threshold, controls, t, team.carry(), op);
      team.resume(u.team);
      r = u.r;
      count_update(r);
    }
    if constexpr (Record) recorder.ret(j, r);
    if (r.st != status::ok) {
      if (team.lane() == 0) {
        atomicAdd(&out->errors, 1ull);
        atomicCAS(&out->first_error_status, 0ull, static_cast<unsigned long long>(r.st) + 1);
      }
      break;
    }
  }
  if constexpr (Record) recorder.finish(first);
  if (answers != 0 && lane < 3) {
    unsigned long long* const to[3] = {&out->inserted, &out->removed, &out->prefill_duplicates};
    atomicAdd(to[lane], static_cast<unsigned long long>(answers));
  }
  team.flush_stats();
}

// The compiled variants. With GFSL_LAUNCH_TABLE (CMake -DGFSL_LAUNCH_TABLE=ON):
// the block sizes of Table 5.1 with the compiler's free choice of registers,
// and register caps of 80, 64, 40 and 32 per thread (3, 4, 6 and 8 blocks of
// 256 threads' worth of warps per SM). With GFSL_LAUNCH_CONFIGS (CMake, a
// list "T/B;..."), those. Without either, only the tuned 512/4: with
// every function inlined (core/platform.hpp) each variant adds to the
// build (the two evaluation units, robust, thesis and recording at 512/4,
// rebuild in 66-84 s on two cores).
template <int T, int B>
struct variant {
  static constexpr int threads = T, blocks = B;
};
#if defined(GFSL_LAUNCH_CONFIGS)
#include "gfsl_launch_configs.hpp"
using variants = std::tuple<GFSL_LAUNCH_CONFIG_LIST>;
#elif defined(GFSL_LAUNCH_TABLE)
using variants = std::tuple<variant<128, 1>, variant<256, 1>, variant<512, 1>, variant<256, 3>, variant<256, 4>,
                            variant<512, 2>, variant<1024, 1>, variant<512, 3>, variant<512, 4>>;
#else
using variants = std::tuple<variant<512, 4>>;
#endif

// Calls f.template operator()<Threads, MinBlocks>() for the variant named by lc.
template <class F, std::size_t... I>
bool dispatch_impl(const launch_config& lc, F&& f, std::index_sequence<I...>) {
  bool found = false;
  (([&] {
     using v = std::tuple_element_t<I, variants>;
     if (!found && v::threads == lc.threads_per_block && v::blocks == lc.min_blocks_per_sm) {
       found = true;
       f.template operator()<v::threads, v::blocks>();
     }
   }()),
   ...);
  return found;
}
template <class F>
bool dispatch(const launch_config& lc, F&& f) {
  return dispatch_impl(lc, std::forward<F>(f), std::make_index_sequence<std::tuple_size_v<variants>>{});
}

template <int N, int T, int B, gfsl::variant V = gfsl::default_variant>
kernel_report describe_variant() {
  kernel_report k;
  cudaFuncAttributes attr{};
  GFSL_CUDA_CHECK(cudaFuncGetAttributes(&attr, bench_ops<N, T, B, V>));
  k.registers = attr.numRegs;
  k.local_bytes = static_cast<int>(attr.localSizeBytes);
  GFSL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k.blocks_per_sm, bench_ops<N, T, B, V>, T, 0));
  int dev = 0;
  GFSL_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  GFSL_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  k.warps_per_sm = k.blocks_per_sm * T / 32;
  k.occupancy = static_cast<double>(k.warps_per_sm) / (prop.maxThreadsPerMultiProcessor / 32);
  k.sms = prop.multiProcessorCount;
  k.device = prop.name;
  return k;
}


// Unversioned LOCK words: a structure built by one variant becomes a valid
// initial structure for every variant. After a prefill no lock is held and
// no burst is open; robust's write versions are even and thesis expects the
// free word itself, so dropping the versions leaves each variant's view of a
// chunk unchanged.
template <int N>
__global__ void clear_lock_versions(std::uint64_t* words, std::uint64_t chunks) {
  for (std::uint64_t c = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; c < chunks;
       c += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    std::uint64_t& lock = words[header_offsets::pool + c * N + chunk_shape<N>::lock_lane];
    lock &= ~lock_version_mask;
  }
}

// What a kernel launch needs besides its launch shape.
template <int N>
struct kernel_args {
  structure_view<N> s;
  model::workload w;
  bool prefill = false;
  const model::operation* ops = nullptr;
  std::uint64_t count = 0, threshold = 0;
  run_controls controls;
  tallies* out = nullptr;
  model::op_record* records = nullptr;
  std::uint64_t* clock = nullptr;
  model::clock_kind clock_kind = model::clock_kind::device_counter;
  recording_parts parts = recording_parts::all;
  std::uint32_t stamp_group = 1;
  unsigned long long* cursor = nullptr;
  std::uint32_t batch = 0;
};

// One compiled instance of bench_ops, behind a plain function pointer, so
// that the measurement loop can alternate between variants.
template <int N>
struct compiled_kernel {
  gfsl::variant var = gfsl::default_variant;
  bool reraise = false;  // the upper levels' rule it runs with (a run-time flag of the same kernel)
  int threads = 0;
  kernel_report report;
  void (*launch)(unsigned blocks, const kernel_args<N>& a, bool record) = nullptr;
};

template <int N, int T, int B, gfsl::variant V>
void launch_bench(unsigned blocks, const kernel_args<N>& a, bool record) {
  // The recording kernel is compiled for the default variant only (the
  // recording suite measures nothing else): each instance of a fully
  // inlined kernel adds to the build. run_kernels refuses the
  // other combinations before any launch.
  if constexpr (V == gfsl::default_variant) {
    if (record) {
      bench_ops<N, T, B, V, true><<<blocks, T>>>(a.s, a.w, false, a.ops, a.count, a.threshold, a.controls, a.out,
                                                 a.records, a.clock, a.clock_kind, a.parts, a.cursor, a.batch, a.stamp_group);
      return;
    }
  }
  bench_ops<N, T, B, V><<<blocks, T>>>(a.s, a.w, a.prefill, a.ops, a.count, a.threshold, a.controls, a.out, nullptr,
                                       a.clock, a.clock_kind, a.parts, a.cursor, a.batch, 1);
}

template <int N, int T, int B, gfsl::variant V>
compiled_kernel<N> kernel_of() {
  return {V, false, T, describe_variant<N, T, B, V>(), &launch_bench<N, T, B, V>};
}

// Measures every kernel of `kernels` from one initial structure: the first
// kernel's prefill builds it, its LOCK words are made unversioned, and each
// repeat runs every kernel in turn on a fresh copy of it, with the same
// operation seed. A ratio between two variants then compares the same
// operations on the same chunks, measured minutes apart at most; with one
// prefill per variant, the structures differed (a concurrent prefill is not
// deterministic) and so did the ratios of structure-sensitive points from
// one suite to the next.
template <int N>
std::vector<gfsl_bench_result> run_kernels(const gfsl_bench_config& c, const std::vector<compiled_kernel<N>>& kernels) {
  const std::size_t kinds = kernels.size();
  std::vector<gfsl_bench_result> res(kinds);
  auto fail_all = [&](const std::string& why) {
    for (gfsl_bench_result& r : res) {
      if (r.error.empty()) r.error = why;
      r.ok = false;
    }
    return res;
  };
  if (kinds == 0) return res;
  if (c.record) {
    for (const compiled_kernel<N>& k : kernels) {
      if (k.var != gfsl::default_variant) return fail_all("recording is measured for the default variant only");
    }
  }

  model::workload w;
  w.chunk = N;
  w.range = c.range;
  w.ops = c.ops;
  w.insert_pct = c.insert_pct;
  w.delete_pct = c.delete_pct;
  w.contains_pct = c.contains_pct;
  w.prefill = c.prefill;
  w.p_chunk = c.p_chunk;
  std::vector<std::uint32_t> teams(kinds);
  const std::uint32_t pool_chunks = default_pool_chunks(w);  // independent of the team count
  for (std::size_t i = 0; i < kinds; ++i) {
    const kernel_report& k = kernels[i].report;
    const std::uint32_t resident = static_cast<std::uint32_t>(k.blocks_per_sm) * k.sms * (kernels[i].threads / N);
    teams[i] = c.teams ? c.teams : resident;
    res[i].kernel = k;
    res[i].teams = teams[i];
    res[i].pool_chunks = pool_chunks;
    res[i].prefill_keys = static_cast<std::uint64_t>(std::llround(c.prefill * c.range));
  }

  const std::size_t word_count = structure_view<N>::word_count(pool_chunks);
  device_buffer<std::uint64_t> words(word_count), saved(word_count);
  device_buffer<tallies> tally(1);
  device_buffer<team_stats> stats(1);
  device_buffer<unsigned int> abort_flag(1);
  device_buffer<hang_report> hang(1);
  device_buffer<std::uint64_t> now(1), clock(1);
  device_buffer<unsigned long long> cursor(1);
  device_buffer<model::op_record> records(c.record ? c.ops : 0);
  device_buffer<model::operation> ops(std::max<std::uint64_t>(c.ops, res[0].prefill_keys));
  structure_view<N> view{words.ptr, pool_chunks};
  init_range<N><<<2048, 256>>>(words.ptr, 0, word_count);
  GFSL_CUDA_CHECK(cudaGetLastError());

  const std::uint64_t threshold = p_chunk_threshold_of(c.p_chunk);
  cudaEvent_t begin, end;
  GFSL_CUDA_CHECK(cudaEventCreate(&begin));
  GFSL_CUDA_CHECK(cudaEventCreate(&end));
  struct destroy {
    cudaEvent_t a, b;
    ~destroy() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  } guard{begin, end};

  // One kernel of kernels[i]: its milliseconds, or -1 with `error` set.
  // `fatal`: the device can no longer be trusted (a kernel outlived the
  // watchdog), so nothing else is measured.
  bool fatal = false;
  tallies last_tally{};
  // With `counted`, the kernel runs inside c.counters' range and its
  // counters land there.
  auto launch = [&](std::size_t i, bool prefill, std::uint64_t count, std::uint64_t seed, path_stats& paths,
                    std::string& error, kernel_counters* counted = nullptr) -> double {
    GFSL_CUDA_CHECK(cudaMemset(tally.ptr, 0, sizeof(tallies)));
    GFSL_CUDA_CHECK(cudaMemset(stats.ptr, 0, sizeof(team_stats)));
    GFSL_CUDA_CHECK(cudaMemset(abort_flag.ptr, 0, sizeof(unsigned int)));
    GFSL_CUDA_CHECK(cudaMemset(hang.ptr, 0, sizeof(hang_report)));
    read_globaltimer<<<1, 1>>>(now.ptr);
    std::uint64_t t0 = 0;
    GFSL_CUDA_CHECK(cudaMemcpy(&t0, now.ptr, sizeof t0, cudaMemcpyDeviceToHost));
    kernel_args<N> a;
    a.s = view;
    a.w = w;
    a.w.teams = teams[i];
    a.w.seed = seed;
    a.prefill = prefill;
    a.ops = ops.ptr;
    a.count = count;
    a.threshold = threshold | (kernels[i].reraise ? reraise_flag : 0);
    a.controls.abort_flag = abort_flag.ptr;
    a.controls.hang = hang.ptr;
    a.controls.stats = stats.ptr;
    a.controls.deadline_ns = t0 + static_cast<std::uint64_t>(c.hang_seconds * 1e9);
    a.out = tally.ptr;
    a.records = records.ptr;
    a.clock = clock.ptr;
    a.clock_kind = c.record_clock;
    a.parts = static_cast<recording_parts>(c.record_parts);
    a.stamp_group = c.stamp_group;
    a.cursor = cursor.ptr;
    a.batch = prefill ? 0 : batch_for(c.batch, count, teams[i]);
    const int threads = kernels[i].threads;
    const unsigned blocks = static_cast<unsigned>((static_cast<std::uint64_t>(teams[i]) * N + threads - 1) / threads);
    if (prefill) {
      generate_prefill<<<1024, 256>>>(key_permutation(c.range, c.seed), count, ops.ptr);
    } else {
      generate_operations<<<1024, 256>>>(a.w, count, ops.ptr);
    }
    GFSL_CUDA_CHECK(cudaGetLastError());
    GFSL_CUDA_CHECK(cudaMemset(clock.ptr, 0, sizeof(std::uint64_t)));
    GFSL_CUDA_CHECK(cudaMemset(cursor.ptr, 0, sizeof(unsigned long long)));
    // As the runner's: a record starts as 0xFF bytes, its return stamp
    // no_stamp, which the call then need not write (exec/cuda/recording.cuh).
    if (c.record && !prefill) {
      GFSL_CUDA_CHECK(cudaMemset(records.ptr, 0xFF, std::min<std::uint64_t>(count, c.ops) * sizeof(model::op_record)));
    }
    if (counted && !c.counters->begin(error)) return -1;
    GFSL_CUDA_CHECK(cudaEventRecord(begin));
    kernels[i].launch(blocks, a, c.record && !prefill);
    GFSL_CUDA_CHECK(cudaGetLastError());
    GFSL_CUDA_CHECK(cudaEventRecord(end));
    if (!wait_for(end, c.hang_seconds * 2 + 60)) {
      error = "a kernel outlived the watchdog";
      fatal = true;
      return -1;
    }
    if (counted && !c.counters->end(*counted, error)) return -1;
    float ms = 0;
    GFSL_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    tallies tl{};
    GFSL_CUDA_CHECK(cudaMemcpy(&tl, tally.ptr, sizeof tl, cudaMemcpyDeviceToHost));
    hang_report h{};
    GFSL_CUDA_CHECK(cudaMemcpy(&h, hang.ptr, sizeof h, cudaMemcpyDeviceToHost));
    if (h.raised) {
      error = "team " + std::to_string(h.team) + " waited on chunk " + std::to_string(h.chunk) + " past the " +
              std::to_string(c.hang_seconds) + " s hang bound";
      return -1;
    }
    if (tl.errors) {
      error = std::to_string(tl.errors) + " teams stopped on an error, the first " +
              status_name(static_cast<status>(tl.first_error_status - 1)) + " (pool of " + std::to_string(pool_chunks) +
              " chunks)";
      return -1;
    }
    if (tl.prefill_duplicates) {
      error = std::to_string(tl.prefill_duplicates) + " prefill inserts of distinct keys answered false";
      return -1;
    }
    team_stats counted_paths;
    GFSL_CUDA_CHECK(cudaMemcpy(&counted_paths, stats.ptr, sizeof(team_stats), cudaMemcpyDeviceToHost));
    paths = path_stats_of(counted_paths);
    last_tally = tl;
    return ms;
  };
  auto chunks_in_use = [&] {
    std::uint64_t a = 0;
    GFSL_CUDA_CHECK(cudaMemcpy(&a, words.ptr + header_offsets::alloc_counter, sizeof a, cudaMemcpyDeviceToHost));
    return std::min<std::uint64_t>(a, pool_chunks);
  };
  // The structure oracle (bench/level0_oracle.hpp) on the quiescent
  // structure a kernel left: empty when it holds, else the problem.
  auto judge_structure = [&](std::uint64_t expected_keys) -> std::string {
    const std::uint64_t allocated = chunks_in_use();
    std::vector<std::uint64_t> image(structure_view<N>::word_count(static_cast<std::uint32_t>(allocated)));
    GFSL_CUDA_CHECK(cudaMemcpy(image.data(), words.ptr, image.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost));
    return judge_level0<N>(image.data(), allocated, expected_keys).problem;
  };

  path_stats prefill_paths;
  std::string prefill_error;
  const double prefill_ms = launch(0, true, res[0].prefill_keys, c.seed ^ 0xF1F1F1F1ull, prefill_paths, prefill_error);
  if (prefill_ms < 0) return fail_all("prefill: " + prefill_error);
  if (const std::string problem = judge_structure(res[0].prefill_keys); !problem.empty()) {
    return fail_all("the structure after the prefill: " + problem);
  }
  const std::uint64_t chunks_after_prefill = chunks_in_use();
  for (gfsl_bench_result& r : res) {
    r.prefill_ms = prefill_ms;
    r.chunks_after_prefill = chunks_after_prefill;
  }
  clear_lock_versions<N><<<1024, 256>>>(words.ptr, chunks_after_prefill);
  GFSL_CUDA_CHECK(cudaGetLastError());
  const std::size_t saved_words = structure_view<N>::word_count(static_cast<std::uint32_t>(chunks_after_prefill));
  GFSL_CUDA_CHECK(cudaMemcpy(saved.ptr, words.ptr, saved_words * sizeof(std::uint64_t), cudaMemcpyDeviceToDevice));
  std::size_t dirty_words = saved_words;
  // A fresh copy of the initial structure: the saved words, and the chunks
  // the previous run allocated made pristine again.
  auto restore_initial_structure = [&] {
    GFSL_CUDA_CHECK(cudaMemcpy(words.ptr, saved.ptr, saved_words * sizeof(std::uint64_t), cudaMemcpyDeviceToDevice));
    if (dirty_words > saved_words) {
      init_range<N><<<2048, 256>>>(words.ptr, saved_words, dirty_words);
      GFSL_CUDA_CHECK(cudaGetLastError());
    }
  };
  auto note_chunks_used = [&] {
    const std::uint64_t used = chunks_in_use();
    dirty_words = std::max(dirty_words, structure_view<N>::word_count(static_cast<std::uint32_t>(used)));
    return used;
  };
  auto operation_seed = [&](int repeat) { return c.seed * 1000003ull + 1 + static_cast<std::uint64_t>(repeat); };
  std::vector<bool> failed(kinds, false);
  for (int r = 0; r < c.repeats; ++r) {
    for (std::size_t i = 0; i < kinds; ++i) {
      if (failed[i]) continue;
      restore_initial_structure();
      std::string error;
      const double ms = launch(i, false, c.ops, operation_seed(r), res[i].paths, error);
      const std::uint64_t used = note_chunks_used();
      if (ms < 0) {
        res[i].error = error;
        failed[i] = true;
        if (fatal) return fail_all(error);
        continue;
      }
      res[i].ms.push_back(ms);
      res[i].chunks_after_run = used;
      if (r + 1 == c.repeats) {
        const std::uint64_t expected = res[i].prefill_keys + last_tally.inserted - last_tally.removed;
        const std::string problem = judge_structure(expected);
        if (!problem.empty()) {
          res[i].error = "the structure after repeat " + std::to_string(r + 1) + ": " + problem;
          failed[i] = true;
        } else {
          res[i].structure_keys = expected;
        }
      }
    }
  }
  // The counted runs: the first repeat's operations again, untimed, each
  // judged by the structure oracle like the timed ones.
  for (std::size_t i = 0; c.counters && i < kinds; ++i) {
    if (failed[i]) continue;
    restore_initial_structure();
    std::string error;
    path_stats paths;
    kernel_counters counted;
    const double ms = launch(i, false, c.ops, operation_seed(0), paths, error, &counted);
    note_chunks_used();
    if (ms < 0) {
      res[i].error = "the counted run: " + error;
      failed[i] = true;
      if (fatal) return fail_all(res[i].error);
      continue;
    }
    const std::uint64_t expected = res[i].prefill_keys + last_tally.inserted - last_tally.removed;
    if (const std::string problem = judge_structure(expected); !problem.empty()) {
      res[i].error = "the structure after the counted run: " + problem;
      failed[i] = true;
      continue;
    }
    res[i].counted = true;
    res[i].counters = counted;
  }
  GFSL_CUDA_CHECK(cudaDeviceSynchronize());
  for (std::size_t i = 0; i < kinds; ++i) res[i].ok = !failed[i];
  return res;
}

// Entry points of one chunk size, defined in evaluation_n16.cu / evaluation_n32.cu.
template <int N>
kernel_report describe_for(const launch_config& lc, bool& found);
template <int N>
std::vector<gfsl_bench_result> run_for(const gfsl_bench_config& c, const std::vector<measured_variant>& variants,
                                       bool& found);

template <int N>
kernel_report describe_for_impl(const launch_config& lc, bool& found) {
  kernel_report k;
  found = dispatch(lc, [&]<int T, int B>() { k = describe_variant<N, T, B>(); });
  return k;
}
// thesis is compiled at 512/4 only (a comparison, not a tuning). A variant
// not compiled at c.launch gets a result that says so; the others are
// measured. `found`: at least one was.
template <int N>
std::vector<gfsl_bench_result> run_for_impl(const gfsl_bench_config& c, const std::vector<measured_variant>& variants,
                                            bool& found) {
  std::vector<compiled_kernel<N>> kernels;
  std::vector<int> slot(variants.size(), -1);  // index into kernels, or -1
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const std::size_t before = kernels.size();
    if (variants[i].var == gfsl::variant::thesis) {
      if (c.launch.threads_per_block == 512 && c.launch.min_blocks_per_sm == 4) {
        kernels.push_back(kernel_of<N, 512, 4, gfsl::variant::thesis>());
      }
    } else {
      dispatch(c.launch, [&]<int T, int B>() { kernels.push_back(kernel_of<N, T, B, gfsl::variant::robust>()); });
    }
    if (kernels.size() > before) {
      kernels.back().reraise = variants[i].reraise;
      slot[i] = static_cast<int>(before);
    }
  }
  found = !kernels.empty();
  if (!found) return {};
  const std::vector<gfsl_bench_result> measured = run_kernels<N>(c, kernels);
  std::vector<gfsl_bench_result> res(variants.size());
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (slot[i] >= 0) {
      res[i] = measured[static_cast<std::size_t>(slot[i])];
    } else {
      res[i].error = std::string("the ") + variant_name(variants[i].var) +
                     " variant is not compiled at launch configuration " + c.launch.name() +
                     (variants[i].var == gfsl::variant::thesis ? " (thesis: 512/4 only)" : "");
    }
  }
  return res;
}

}  // namespace gfsl::bench::detail
