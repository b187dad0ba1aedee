// Benchmark of reading trace files: one synthetic history (linearizable by
// construction, linearizability/synthetic.hpp) written in three ways: the
// binary form in one history section (write_trace, what gfsl convert
// writes), the binary form in history blocks of 32,768 records
// (trace_recorder, what gfsl run --backend cuda writes), and JSON lines;
// each read back in this process (traces::read_trace, the parse alone) and
// checked by `gfsl check` as a separate process (the whole command), several
// times; reports medians of the wall time, MB/s and records/s, and of the
// check's system time, peak resident set and minor page faults (wait4).
// Figures and commands: docs/BENCHMARKS.md.
//
//   trace_read_bench [--ops N] [--runs N] [--dir DIR] [--gfsl PATH] [--threads N] [--keep]
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "linearizability/synthetic.hpp"
#include "traces/trace.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct check_cost {
  double wall = -1, sys = 0;  // seconds; wall -1: it did not exit 0
  double peak_mb = 0;
  double minor_faults = 0;
};

// `gfsl check FILE --threads N`, output discarded.
check_cost time_check(const std::string& gfsl, const std::string& file, unsigned threads) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout)) _exit(127);
    const std::string t = std::to_string(threads);
    execl(gfsl.c_str(), gfsl.c_str(), "check", file.c_str(), "--threads", t.c_str(), "--progress", "off", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  check_cost c;
  c.wall = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? seconds_since(t0) : -1;
  c.sys = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
  c.peak_mb = static_cast<double>(ru.ru_maxrss) * 1024 / 1e6;  // ru_maxrss is in KiB
  c.minor_faults = static_cast<double>(ru.ru_minflt);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::string gfsl = GFSL_BINARY, dir = "/tmp";
  std::uint64_t ops = 2000000;
  int runs = 5;
  unsigned threads = 2;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ops" && i + 1 < argc) ops = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--gfsl" && i + 1 < argc) gfsl = argv[++i];
    else if (a == "--threads" && i + 1 < argc) threads = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
    else if (a == "--keep") keep = true;
    else {
      std::fprintf(stderr, "usage: trace_read_bench [--ops N] [--runs N] [--dir DIR] [--gfsl PATH] [--threads N] [--keep]\n");
      return 2;
    }
  }
  if (ops == 0) {
    std::fprintf(stderr, "trace_read_bench: --ops must be positive\n");
    return 2;
  }

  // The shape of lin_bench's 10m scenario, scaled: keys a tenth of the
  // operations, half of them prefilled, mix 10,10,80, 1,024 teams.
  gfsl::lin::synthetic_options o;
  o.ops = ops;
  o.keys = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, ops / 10));
  o.prefill = 0.5;
  o.insert_pct = 10;
  o.delete_pct = 10;
  o.teams = 1024;
  o.max_duration = 2048;
  o.max_gap = 4;
  o.seed = 1;
  const std::string bin = dir + "/trace_read_bench.trace", blocks = dir + "/trace_read_bench.blocks.trace",
                    json = dir + "/trace_read_bench.jsonl";
  std::uint64_t records = 0;
  {
    const std::vector<gfsl::model::op_record> h = gfsl::lin::synthetic_history(o);
    records = h.size();
    gfsl::model::workload w;
    w.ops = o.ops;
    w.range = o.keys;
    w.prefill = o.prefill;
    w.insert_pct = o.insert_pct;
    w.delete_pct = o.delete_pct;
    w.contains_pct = 100 - o.insert_pct - o.delete_pct;
    w.teams = o.teams;
    w.seed = o.seed;
    const auto header = gfsl::traces::make_header(w, "synthetic", "", gfsl::model::clock_kind::global_counter, "trace_read_bench");
    gfsl::traces::write_trace(bin, header, h);
    {
      // As gfsl run writes a device run's history (cli/run_command.cpp).
      gfsl::traces::trace_recorder out(blocks, header);
      constexpr std::size_t block = 32768;
      for (std::size_t at = 0; at < h.size(); at += block) out.append(&h[at], std::min(block, h.size() - at));
      out.finish();
    }
    gfsl::traces::write_trace_json(json, header, h);
  }

  std::printf("%llu records; read: traces::read_trace in this process; check: gfsl check --threads %u, wall; medians of %d\n",
              static_cast<unsigned long long>(records), threads, runs);
  std::printf("%-14s %8s %8s %9s %10s %8s %12s %8s %8s %10s\n", "form", "file MB", "read s", "read MB/s", "Mrecords/s", "check s",
              "check Mrec/s", "sys s", "peak MB", "minflt");
  std::fflush(stdout);  // before fork: the children must not print it again
  for (const std::string& file : {bin, blocks, json}) {
    struct stat st {};
    stat(file.c_str(), &st);
    const double mb = static_cast<double>(st.st_size) / 1e6;
    std::vector<double> reads, checks, sys, peak, faults;
    for (int k = 0; k < runs; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      const gfsl::traces::trace t = gfsl::traces::read_trace(file);
      reads.push_back(seconds_since(t0));
      if (t.history.size() != records) {
        std::fprintf(stderr, "%s: read %zu records, wrote %llu\n", file.c_str(), t.history.size(), static_cast<unsigned long long>(records));
        return 1;
      }
    }
    for (int k = 0; k < runs; ++k) {
      const check_cost cost = time_check(gfsl, file, threads);
      checks.push_back(cost.wall);
      sys.push_back(cost.sys);
      peak.push_back(cost.peak_mb);
      faults.push_back(cost.minor_faults);
      if (cost.wall < 0) {
        std::fprintf(stderr, "%s: gfsl check did not exit 0\n", file.c_str());
        return 1;
      }
    }
    const double r = median(reads), c = median(checks);
    std::printf("%-14s %8.1f %8.3f %9.0f %10.2f %8.3f %12.2f %8.3f %8.0f %10.0f\n",
                file == bin ? "binary" : file == blocks ? "binary blocks" : "JSON lines", mb, r, mb / r,
                static_cast<double>(records) / r / 1e6, c, static_cast<double>(records) / c / 1e6, median(sys), median(peak),
                median(faults));
    std::fflush(stdout);
  }
  if (!keep) {
    std::remove(bin.c_str());
    std::remove(blocks.c_str());
    std::remove(json.c_str());
  }
  return 0;
}
