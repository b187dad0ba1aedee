#include "bench/suite.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "bench/mc_skiplist.hpp"
#include "core/gfsl/types.hpp"

namespace gfsl::bench {

std::vector<workload_spec> thesis_workloads() {
  return {
      {"1-1-98", 1, 1, 98, 0.5, false},        {"5-5-90", 5, 5, 90, 0.5, false},   {"10-10-80", 10, 10, 80, 0.5, false},
      {"20-20-60", 20, 20, 60, 0.5, false},    {"contains", 0, 0, 100, 1.0, false}, {"insert", 100, 0, 0, 0.0, true},
      {"delete", 0, 100, 0, 1.0, true},
  };
}

bool parse_workloads(const std::string& list, std::vector<workload_spec>& out, std::string& error) {
  out.clear();
  const auto all = thesis_workloads();
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const workload_spec& w) { return w.name == name; });
    if (it == all.end()) {
      error = "no workload named '" + name + "' (1-1-98, 5-5-90, 10-10-80, 20-20-60, contains, insert, delete)";
      return false;
    }
    out.push_back(*it);
  }
  if (out.empty()) error = "no workload named";
  return !out.empty();
}

stats_summary summarize(const std::vector<double>& v) {
  stats_summary s;
  if (v.empty()) return s;
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  s.min = sorted.front();
  s.max = sorted.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / n;
  if (n < 2) {
    s.ci_low = s.ci_high = s.mean;
    return s;
  }
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  const double sd = std::sqrt(sq / (n - 1));
  // Student's t, two-sided 95%, for n - 1 degrees of freedom.
  static const double t95[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086};
  const double t = n - 1 <= 20 ? t95[n - 2] : 1.96;
  const double half = t * sd / std::sqrt(static_cast<double>(n));
  s.ci_low = s.mean - half;
  s.ci_high = s.mean + half;
  return s;
}

// A count of the last repeat per operation, two decimals.
static std::string per_op(std::uint64_t count, std::uint64_t ops) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(2);
  o << (ops ? static_cast<double>(count) / static_cast<double>(ops) : 0.0);
  return o.str();
}

std::string csv_header() {
  return "suite,impl,device,chunk,launch,registers,local_bytes,warps_per_sm,occupancy,teams,workload,insert_pct,"
         "delete_pct,contains_pct,range,prefill,ops,repeats,median_mops,mean_mops,ci95_low,ci95_high,min_mops,max_mops,"
         "prefill_ms,chunks,each_mops,chunk_reads_per_op,warp_instructions_per_op,local_loads_per_op,local_stores_per_op,"
         "issue_active_pct,note,error";
}

std::string csv_line(const row& r) {
  std::ostringstream o;
  o.precision(6);
  std::string each;
  for (double m : r.mops) each += (each.empty() ? "" : ";") + std::to_string(m);
  auto quoted = [](std::string s) {
    std::replace(s.begin(), s.end(), '"', '\'');
    return "\"" + s + "\"";
  };
  auto counted = [&](double v) { return r.counted ? std::to_string(v) : std::string(); };
  o << r.suite << ',' << r.impl << ',' << quoted(r.device) << ',' << r.chunk << ',' << r.launch << ',' << r.registers << ','
    << r.local_bytes << ',' << r.warps_per_sm << ',' << r.occupancy << ',' << r.teams << ',' << r.workload << ','
    << r.insert_pct << ',' << r.delete_pct << ',' << r.contains_pct << ',' << r.range << ',' << r.prefill << ',' << r.ops
    << ',' << r.mops.size() << ',' << r.s.median << ',' << r.s.mean << ',' << r.s.ci_low << ',' << r.s.ci_high << ','
    << r.s.min << ',' << r.s.max << ',' << r.prefill_ms << ',' << r.chunks << ',' << each << ','
    << (r.impl == "mc" ? std::string() : std::to_string(r.chunk_reads_per_op)) << ',' << counted(r.warp_instructions_per_op)
    << ',' << counted(r.local_loads_per_op) << ',' << counted(r.local_stores_per_op) << ',' << counted(r.issue_active_pct)
    << ',' << quoted(r.note) << ',' << quoted(r.error);
  return o.str();
}

namespace {

std::uint64_t ops_of(const suite_options& o, const workload_spec& w, std::uint32_t range) {
  return w.ops_equal_range ? range : o.ops;
}

void emit(const row& r, std::FILE* csv, std::FILE* log) {
  if (csv) {
    std::fprintf(csv, "%s\n", csv_line(r).c_str());
    std::fflush(csv);
  }
  if (log) {
    if (!r.error.empty()) {
      std::fprintf(log, "%-9s %-8s N=%-2d %-9s range %9u launch %-8s FAILED: %s\n", r.suite.c_str(), r.impl.c_str(),
                   r.chunk, r.workload.c_str(), r.range, r.launch.c_str(), r.error.c_str());
    } else {
      std::fprintf(log,
                   "%-9s %-8s N=%-2d %-9s range %9u launch %-8s regs %3d local %4d B occ %4.0f%% teams %6u: median %8.1f "
                   "Mops/s (95%% CI %.1f-%.1f, n=%zu)%s%s\n",
                   r.suite.c_str(), r.impl.c_str(), r.chunk, r.workload.c_str(), r.range, r.launch.c_str(), r.registers,
                   r.local_bytes, r.occupancy * 100, r.teams, r.s.median, r.s.ci_low, r.s.ci_high, r.mops.size(),
                   r.note.empty() ? "" : "; ", r.note.c_str());
    }
    std::fflush(log);
  }
}

// The fields every row has: what ran, and its timings as Mops/s.
row measured_row(const std::string& suite, const std::string& impl, const workload_spec& w, std::uint32_t range,
                 std::uint64_t ops, bool ok, const std::string& error, const std::vector<double>& ms) {
  row r;
  r.suite = suite;
  r.impl = impl;
  r.workload = w.name;
  r.insert_pct = w.insert_pct;
  r.delete_pct = w.delete_pct;
  r.contains_pct = w.contains_pct;
  r.range = range;
  r.prefill = w.prefill;
  r.ops = ops;
  r.error = ok ? "" : error;
  for (double t : ms) r.mops.push_back(t > 0 ? ops / (t * 1e3) : 0);
  r.s = summarize(r.mops);
  return r;
}

gfsl_bench_config gfsl_config(int chunk, const launch_config& lc, const workload_spec& w, std::uint32_t range,
                              std::uint64_t ops, const suite_options& o, bool record,
                              gfsl::model::clock_kind record_clock, int record_parts, std::uint32_t stamp_group = 1) {
  gfsl_bench_config c;
  c.chunk = chunk;
  c.launch = lc;
  c.range = range;
  c.ops = ops;
  c.insert_pct = w.insert_pct;
  c.delete_pct = w.delete_pct;
  c.contains_pct = w.contains_pct;
  c.prefill = w.prefill;
  c.repeats = o.repeats;
  c.batch = o.batch;
  c.seed = o.seed;
  c.record = record;
  c.record_clock = record_clock;
  c.record_parts = record_parts;
  c.stamp_group = stamp_group;
  c.counters = o.counters;
  if (!o.variants.empty()) {  // a single-variant measurement runs the first one asked for
    c.var = o.variants.front().var;
    c.reraise = o.variants.front().reraise;
  }
  return c;
}

row gfsl_row(const std::string& suite, const gfsl_bench_config& c, const workload_spec& w, const measured_variant& v,
             const gfsl_bench_result& res) {
  std::string impl = c.record ? "gfsl-rec" : v.var == gfsl::variant::thesis ? "gfsl-thesis" : "gfsl";
  if (c.record && c.record_parts == 1) impl += "-records-only";
  else if (c.record && c.record_clock == gfsl::model::clock_kind::globaltimer) impl += "-globaltimer";
  if (c.record && c.record_parts == 2) impl += "-stamps-only";
  if (c.record && c.stamp_group > 1) impl += "-group" + std::to_string(c.stamp_group);
  // The upper levels' rule is named where it is not the variant's own.
  if (v.reraise != gfsl::reraises_by_default(v.var)) impl += v.reraise ? "-reraise" : "-upper-thesis";
  row r = measured_row(suite, impl, w, c.range, c.ops, res.ok, res.error, res.ms);
  r.device = res.kernel.device;
  r.chunk = c.chunk;
  r.launch = c.launch.name();
  r.registers = res.kernel.registers;
  r.local_bytes = res.kernel.local_bytes;
  r.warps_per_sm = res.kernel.warps_per_sm;
  r.occupancy = res.kernel.occupancy;
  r.teams = res.teams;
  r.prefill_ms = res.prefill_ms;
  r.chunks = res.chunks_after_run;
  const path_stats& p = res.paths;
  r.note = "splits " + std::to_string(p.splits) + " merges " + std::to_string(p.merges) + " restarts " +
           std::to_string(p.restarts) + " lock waits " + std::to_string(p.lock_waits) + " chunk reads/op " +
           per_op(p.chunk_reads, c.ops) +
           (c.batch ? " operations taken at most " + std::to_string(c.batch) + " at a time" : " a fixed block of operations per team");
  const double ops = static_cast<double>(c.ops ? c.ops : 1);
  r.chunk_reads_per_op = static_cast<double>(p.chunk_reads) / ops;
  if (res.counted) {
    r.counted = true;
    r.warp_instructions_per_op = res.counters.warp_instructions / ops;
    r.local_loads_per_op = res.counters.local_loads / ops;
    r.local_stores_per_op = res.counters.local_stores / ops;
    r.issue_active_pct = res.counters.issue_active_pct;
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(1);
    o << " warp instructions/op " << r.warp_instructions_per_op << " local loads/op " << r.local_loads_per_op
      << " local stores/op " << r.local_stores_per_op << " issue slots used " << r.issue_active_pct << "%";
    r.note += o.str();
  }
  if (res.ok) r.note += " structure checked: " + std::to_string(res.structure_keys) + " keys";
  return r;
}

row measure_gfsl(const std::string& suite, int chunk, const launch_config& lc, const workload_spec& w, std::uint32_t range,
                 std::uint64_t ops, const suite_options& o, bool record = false,
                 gfsl::model::clock_kind record_clock = gfsl::model::clock_kind::device_counter, int record_parts = 0,
                 std::uint32_t stamp_group = 1) {
  const gfsl_bench_config c = gfsl_config(chunk, lc, w, range, ops, o, record, record_clock, record_parts, stamp_group);
  return gfsl_row(suite, c, w, {c.var, c.reraise}, run_gfsl_bench(c));
}

// Every variant of o.variants at one point, from one initial structure and
// with the same operation seeds (run_gfsl_bench_variants).
std::vector<row> measure_gfsl_variants(const std::string& suite, int chunk, const launch_config& lc,
                                       const workload_spec& w, std::uint32_t range, std::uint64_t ops,
                                       const suite_options& o) {
  const gfsl_bench_config c = gfsl_config(chunk, lc, w, range, ops, o, false, gfsl::model::clock_kind::device_counter, 0);
  const std::vector<gfsl_bench_result> res = run_gfsl_bench_variants(c, o.variants);
  std::vector<row> rows;
  for (std::size_t i = 0; i < res.size(); ++i) rows.push_back(gfsl_row(suite, c, w, o.variants[i], res[i]));
  return rows;
}

row measure_baseline(const std::string& suite, const workload_spec& w, std::uint32_t range, std::uint64_t ops,
                     const suite_options& o, const std::string& device) {
  mc_config c;
  c.range = range;
  c.ops = ops;
  c.insert_pct = w.insert_pct;
  c.delete_pct = w.delete_pct;
  c.contains_pct = w.contains_pct;
  c.prefill = w.prefill;
  c.seed = o.seed;
  c.repeats = o.repeats;
  const mc_result res = run_mc_skiplist(c);
  row r = measured_row(suite, "mc", w, range, ops, res.ok, res.error, res.ms);
  r.device = device;
  r.launch = std::to_string(c.threads_per_block) + "/-";
  r.registers = res.registers;
  r.local_bytes = res.local_bytes;
  r.warps_per_sm = res.blocks_per_sm * c.threads_per_block / 32;
  r.occupancy = res.max_warps_per_sm ? static_cast<double>(r.warps_per_sm) / res.max_warps_per_sm : 0;
  r.chunks = res.nodes_used;
  return r;
}

}  // namespace

std::vector<row> run_suite(const suite_options& o, std::FILE* csv, std::FILE* log) {
  std::vector<row> rows;
  if (csv) {
    std::fprintf(csv, "%s\n", csv_header().c_str());
    std::fflush(csv);
  }
  const workload_spec table_mix{"10-10-80", 10, 10, 80, 0.5, false};
  // Table 5.1: [10,10,80] at 1M keys under every compiled launch
  // configuration; also how `auto` picks the configuration of the others.
  auto launch_table = [&](int chunk) {
    launch_config best;
    double best_mops = -1;
    for (const launch_config& lc : compiled_launch_configs(chunk)) {
      row r = measure_gfsl("launch", chunk, lc, table_mix, 1000000, o.ops, o);
      emit(r, csv, log);
      if (r.error.empty() && r.s.median > best_mops) {
        best_mops = r.s.median;
        best = lc;
      }
      rows.push_back(r);
    }
    return best;
  };
  for (int chunk : o.chunks) {
    launch_config lc;
    if (o.suite == "launch" || o.launch == "auto") {
      lc = launch_table(chunk);
      if (log) std::fprintf(log, "launch    N=%d: best configuration %s\n", chunk, lc.name().c_str());
      if (o.suite == "launch") continue;
    } else if (!parse_launch_config(o.launch, chunk, lc)) {
      row r;
      r.suite = o.suite;
      r.error = "launch configuration " + o.launch + " is not compiled in";
      emit(r, csv, log);
      rows.push_back(r);
      return rows;
    }
    if (o.suite == "recording") {
      // Off; recorded as `gfsl run --backend cuda` records (--clock counter,
      // then globaltimer); then the device counter's two parts alone: the
      // records without stamps, the stamps without records; then the device
      // counter with stamp groups of 4, 16 and (N = 32) 32 (`gfsl run
      // --stamp-group`).
      using gfsl::model::clock_kind;
      struct recording_way {
        bool record;
        clock_kind clock;
        int parts;
        std::uint32_t group;
      };
      for (const recording_way& m : {recording_way{false, clock_kind::device_counter, 0, 1},
                                     recording_way{true, clock_kind::device_counter, 0, 1},
                                     recording_way{true, clock_kind::globaltimer, 0, 1},
                                     recording_way{true, clock_kind::device_counter, 1, 1},
                                     recording_way{true, clock_kind::device_counter, 2, 1},
                                     recording_way{true, clock_kind::device_counter, 0, 4},
                                     recording_way{true, clock_kind::device_counter, 0, 16},
                                     recording_way{true, clock_kind::device_counter, 0, 32}}) {
        if (m.group > static_cast<std::uint32_t>(chunk)) continue;  // a lane per operation of a group
        row r = measure_gfsl("recording", chunk, lc, table_mix, 1000000, o.ops, o, m.record, m.clock, m.parts, m.group);
        emit(r, csv, log);
        rows.push_back(r);
      }
      continue;
    }
    for (const workload_spec& w : o.workloads) {
      for (std::uint32_t range : o.ranges) {
        for (const row& r : measure_gfsl_variants(o.suite, chunk, lc, w, range, ops_of(o, w, range), o)) {
          emit(r, csv, log);
          rows.push_back(r);
        }
      }
    }
  }
  // The baseline does not depend on the chunk size: once per workload and range.
  if (o.suite == "thesis" && o.baseline) {
    const std::string device = rows.empty() ? "" : rows.front().device;
    for (const workload_spec& w : o.workloads) {
      for (std::uint32_t range : o.ranges) {
        if (range > o.baseline_max_range) continue;
        row r = measure_baseline(o.suite, w, range, ops_of(o, w, range), o, device);
        emit(r, csv, log);
        rows.push_back(r);
      }
    }
  }
  return rows;
}

}  // namespace gfsl::bench
