// The GPU evaluation of thesis 5.1: GFSL throughput on device-generated
// workloads, with the launch configuration as a parameter (thesis Table 5.1).
// Host-callable.
//
// Each measurement prefills one structure on the device, keeps a copy of it,
// and times `repeats` runs of the concurrent phase, each on a fresh copy of
// that structure and with its own operation seed. Variants compared in one
// measurement share that structure and those seeds (run_gfsl_bench_variants).
// Only the kernel of the concurrent phase is timed (CUDA events around it);
// its operations are generated on the device before it. After the prefill
// and after each variant's last repeat, the structure is copied back and
// judged by the structure oracle (bench/level0_oracle.hpp).
// No history is recorded: this is the structure's speed; `record` measures
// what recording costs. The kernels live in bench/evaluation_kernels.cuh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/device_counters.hpp"
#include "core/gfsl/stats.hpp"
#include "core/types.hpp"
#include "core/gfsl/types.hpp"
#include "model/history.hpp"
#include "model/workload.hpp"

namespace gfsl::bench {

// A kernel compiled with __launch_bounds__(threads_per_block, min_blocks_per_sm):
// min_blocks_per_sm makes the compiler cap registers so that that many blocks
// fit on one SM (1 leaves it free to use what it likes).
struct launch_config {
  int threads_per_block = 512;
  int min_blocks_per_sm = 1;
  std::string name() const { return std::to_string(threads_per_block) + "/" + std::to_string(min_blocks_per_sm); }
};

// The variants compiled in, for chunk size N (16 or 32).
std::vector<launch_config> compiled_launch_configs(int chunk);
// Parses "512/2"; false when it names no compiled variant.
bool parse_launch_config(const std::string& text, int chunk, launch_config& out);

// What the compiler and the occupancy calculator say about one variant.
struct kernel_report {
  int registers = 0;           // per thread
  int local_bytes = 0;         // local memory per thread (stack and spills)
  int blocks_per_sm = 0;       // resident at once
  int warps_per_sm = 0;
  double occupancy = 0;        // theoretical: resident warps / the SM's maximum
  int sms = 0;
  std::string device;
};
kernel_report describe_kernel(int chunk, const launch_config& lc);

// What one measured kernel runs: the variant, and the upper levels' rule
// (model::workload::reraise).
struct measured_variant {
  gfsl::variant var = gfsl::default_variant;
  bool reraise = gfsl::reraises_by_default(gfsl::default_variant);
};

struct gfsl_bench_config {
  int chunk = 32;
  launch_config launch;
  std::uint32_t teams = 0;     // 0: as many as the device holds at once (every team resident)
  std::uint32_t range = 1000000;
  std::uint64_t ops = 10000000;
  int insert_pct = 10, delete_pct = 10, contains_pct = 80;
  double prefill = 0.5;        // fraction of the range in the initial structure
  double p_chunk = 1.0;
  std::uint64_t seed = 1;      // the initial structure's keys; repeat r runs operations seeded seed + r
  int repeats = 5;
  double hang_seconds = 30;    // a lock wait past this ends the run (then an error, not a figure)
  // Record the history as `gfsl run --backend cuda` does (device-counter call
  // and return stamps, one record per operation): its cost, next to off.
  bool record = false;
  // The most operations a team takes at a time from a shared cursor (fewer
  // where a team's share is under eight batches); 0: each team its fixed
  // block of count / teams (the prefill always).
  std::uint32_t batch = 64;
  // How: on the device counter or %globaltimer (the runner's two clocks),
  // and all of it (0) or one part alone, to measure what each costs: 1 the
  // records without stamps, 2 the stamps without records
  // (exec/cuda/recording.cuh, recording_parts).
  model::clock_kind record_clock = model::clock_kind::device_counter;
  int record_parts = 0;
  // A team's operations per stamp group (exec/cuda/recording.cuh; 1: a stamp
  // at every call and return, as `gfsl run` records by default).
  std::uint32_t stamp_group = 1;
  // The algorithm's variant (core/gfsl/types.hpp). thesis is compiled at the
  // tuned launch configuration (512/4) only: a comparison, not a tuning.
  gfsl::variant var = gfsl::default_variant;
  bool reraise = gfsl::reraises_by_default(gfsl::default_variant);  // the upper levels' rule (off: the thesis')
  // Hardware counters (bench/device_counters.hpp): when set, each variant
  // runs the concurrent phase once more after its timed repeats, untimed, on
  // a fresh copy of the initial structure with the first repeat's operations,
  // and that run's counters are kept. Null: no counters.
  counter_session* counters = nullptr;
};

struct gfsl_bench_result {
  bool ok = false;
  std::string error;           // one line when !ok
  std::vector<double> ms;      // the concurrent phase of each repeat
  kernel_report kernel;
  std::uint32_t teams = 0;
  std::uint32_t pool_chunks = 0;
  std::uint64_t chunks_after_prefill = 0, chunks_after_run = 0;  // of the last repeat
  std::uint64_t prefill_keys = 0;
  double prefill_ms = 0;
  path_stats paths;            // of the last repeat
  // Level 0's key count after the last repeat, which the structure oracle
  // confirmed (bench/level0_oracle.hpp: level 0 sorted and well formed, and
  // the count is the initial one plus the successful inserts minus the
  // successful deletes); a structure that fails it makes the result an
  // error instead.
  std::uint64_t structure_keys = 0;
  // The counted run's, when c.counters was given and it succeeded.
  bool counted = false;
  kernel_counters counters;
};

gfsl_bench_result run_gfsl_bench(const gfsl_bench_config& c);
// One result per variant, in the order given (c.var and c.reraise are
// ignored): the first
// variant's prefill builds the initial structure, its LOCK words are made
// unversioned, and each repeat runs every variant in turn on a fresh copy of
// it with the same operation seed. Ratios between variants then compare the
// same operations on the same chunks.
std::vector<gfsl_bench_result> run_gfsl_bench_variants(const gfsl_bench_config& c,
                                                      const std::vector<measured_variant>& variants);

}  // namespace gfsl::bench
