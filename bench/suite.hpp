// The benchmark suites behind `gfsl bench`: thesis 5.1's evaluation (mixes,
// key ranges, GFSL-32, GFSL-16 and the per-thread baseline), Table 5.1's
// launch configurations, and the cost of recording a history. Each
// measurement becomes one CSV row; figures are medians of repeated runs with
// a 95% confidence interval of the mean.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/evaluation.hpp"
#include "core/gfsl/types.hpp"

namespace gfsl::bench {

struct workload_spec {
  std::string name;                    // "10-10-80", "contains", "insert", "delete"
  int insert_pct = 10, delete_pct = 10, contains_pct = 80;
  double prefill = 0.5;                // thesis 5.1: half the range before mixed runs
  bool ops_equal_range = false;        // insert-only and delete-only: as many operations as keys
};

// The seven workloads of thesis 5.1, or those named in a comma list.
std::vector<workload_spec> thesis_workloads();
bool parse_workloads(const std::string& list, std::vector<workload_spec>& out, std::string& error);

struct suite_options {
  std::string suite = "thesis";        // thesis | launch | recording
  std::vector<int> chunks{32, 16};
  std::vector<std::uint32_t> ranges{10000, 30000, 100000, 300000, 1000000, 3000000, 10000000, 30000000, 100000000};
  std::vector<workload_spec> workloads = thesis_workloads();
  std::uint64_t ops = 10000000;        // of the mixed and contains-only runs
  int repeats = 5;
  std::uint32_t batch = 64;            // operations a team takes at a time (0: a fixed block per team)
  std::string launch = "auto";         // "auto": the best of the launch suite at 1M keys, else T/B
  bool baseline = true;
  std::uint32_t baseline_max_range = 10000000;  // the baseline's memory grows with the range (thesis: up to 10M)
  std::uint64_t seed = 1;
  // The thesis suite measures every variant at every point from one initial
  // structure, each repeat running the variants in turn with the same
  // operations, so that a comparison is taken in one run on the same chunks
  // (rows: impl gfsl = robust, gfsl-thesis; each under its own upper-level
  // rule (reraises_by_default), "-reraise" or "-upper-thesis" under the
  // other, model::workload::reraise).
  std::vector<measured_variant> variants{measured_variant{}};
  // Hardware counters per GFSL row (gfsl bench --counters): one more,
  // untimed run of each measurement inside this session's range. Null: none.
  counter_session* counters = nullptr;
};

struct stats_summary {
  double median = 0, mean = 0, ci_low = 0, ci_high = 0, min = 0, max = 0;
};
stats_summary summarize(const std::vector<double>& mops);

struct row {
  std::string suite, impl, device, workload, launch, error;
  int chunk = 0, registers = 0, local_bytes = 0, warps_per_sm = 0;
  double occupancy = 0;
  std::uint32_t teams = 0, range = 0;
  int insert_pct = 0, delete_pct = 0, contains_pct = 0;
  double prefill = 0;
  std::uint64_t ops = 0;
  std::vector<double> mops;
  stats_summary s;
  double prefill_ms = 0;
  std::uint64_t chunks = 0;
  // Per operation, of the last timed repeat (GFSL rows; 0 otherwise).
  double chunk_reads_per_op = 0;
  // Per operation, of the counted run (bench/device_counters.hpp), when
  // counted; empty columns otherwise.
  bool counted = false;
  double warp_instructions_per_op = 0, local_loads_per_op = 0, local_stores_per_op = 0, issue_active_pct = 0;
  std::string note;
};

std::string csv_header();
std::string csv_line(const row& r);

// Runs the suite; every row is printed (one line) and written to `csv` as it
// is measured, so nothing measured is lost if a later run fails. Returns the
// rows; a row with an error keeps it in `error`.
std::vector<row> run_suite(const suite_options& o, std::FILE* csv, std::FILE* log);

}  // namespace gfsl::bench
