// Benchmark of `gfsl check` on synthetic histories (linearizability/synthetic.hpp):
// linearizable by construction, and (--adversarial) the histories built to
// defeat a per-key search, one of them with a violation. Writes each history
// as a binary trace, then runs the checker as a separate process several
// times and reports the median wall time, the throughput and the peak
// resident memory against the trace's size; with --search-seconds S, also
// the verdict of the search alone (`check_history_search`, the checker
// `gfsl check` ran before the segmented one) given S seconds, in process.
// Figures and commands: docs/BENCHMARKS.md.
//
//   lin_bench [--gfsl PATH] [--dir DIR] [--runs N] [--only NAME] [--keep] [--adversarial] [--search-seconds S]
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "linearizability/checker.hpp"
#include "linearizability/synthetic.hpp"
#include "traces/trace.hpp"

namespace {

struct scenario {
  const char* name;
  const char* what;
  gfsl::lin::synthetic_options o;
  bool adversarial = false;
  gfsl::lin::adversarial_options a{};
  int expected = 0;  // gfsl check's exit code
  std::string timeout = {};  // gfsl check --seconds, when not empty
};

struct run {
  double wall = 0;
  long max_rss_kb = 0;
  int code = -1;
  std::string out;
};

run run_check(const std::string& gfsl, const std::string& file, const std::string& timeout) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(2);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    if (timeout.empty()) execl(gfsl.c_str(), gfsl.c_str(), "check", file.c_str(), static_cast<char*>(nullptr));
    else execl(gfsl.c_str(), gfsl.c_str(), "check", file.c_str(), "--seconds", timeout.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  run r;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  r.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.max_rss_kb = ru.ru_maxrss;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string gfsl = GFSL_BINARY, dir = "/tmp", only;
  int runs = 5;
  bool keep = false, adversarial = false;
  double search_seconds = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gfsl" && i + 1 < argc) gfsl = argv[++i];
    else if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--keep") keep = true;
    else if (a == "--adversarial") adversarial = true;
    else if (a == "--search-seconds" && i + 1 < argc) search_seconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: lin_bench [--gfsl PATH] [--dir DIR] [--runs N] [--only NAME] [--keep] [--adversarial] [--search-seconds S]\n");
      return 2;
    }
  }

  std::vector<scenario> scenarios;
  {
    gfsl::lin::synthetic_options o;
    o.ops = 10000000;
    o.keys = 1000000;
    o.prefill = 0.5;
    o.insert_pct = 10;
    o.delete_pct = 10;
    o.teams = 1024;
    o.max_duration = 2048;  // about 1024 operations in flight at any stamp
    o.max_gap = 4;
    o.seed = 1;
    scenarios.push_back({"10m", "10M operations (+500k prefill) over 1M keys, mix 10,10,80, 1024 teams", o});
  }
  {
    gfsl::lin::synthetic_options o;
    o.ops = 100000;
    o.keys = 1;
    o.prefill = 0;
    o.insert_pct = 10;
    o.delete_pct = 10;
    o.teams = 64;
    o.max_duration = 64;
    o.max_gap = 2;
    o.seed = 2;
    scenarios.push_back({"hot", "100k operations on one key, mix 10,10,80, 64 teams", o});
    o.insert_pct = 30;
    o.delete_pct = 30;
    o.max_duration = 1000;
    o.max_gap = 1;
    o.seed = 3;
    scenarios.push_back({"hot-writes", "100k operations on one key, mix 30,30,40, 64 teams, long intervals", o});
    o.insert_pct = 50;
    o.delete_pct = 50;
    o.max_duration = 64;
    o.max_gap = 2;
    o.pending = 8;
    o.seed = 4;
    scenarios.push_back({"hot-updates", "100k operations on one key, mix 50,50,0, 64 teams, 8 left pending", o});
    o.insert_pct = 10;
    o.delete_pct = 10;
    o.teams = 8192;
    o.max_duration = 16000;
    o.max_gap = 1;
    o.pending = 0;
    o.seed = 5;
    scenarios.push_back({"hot-8192", "100k operations on one key, mix 10,10,80, 8192 teams (a GPU's worth)", o});
  }

  if (adversarial) {
    scenarios.clear();
    auto add = [&](const char* name, const char* what, const gfsl::lin::adversarial_options& a, int expected) {
      scenario s{name, what, {}, true, a, expected};
      scenarios.push_back(s);
    };
    gfsl::lin::adversarial_options a;
    a.ops = 1000000;
    add("conc-1m", "1M operations on one key, all concurrent, one value, mix 34,33,33", a, 0);
    a.values = 0;
    add("conc-1m-fresh", "1M operations on one key, all concurrent, a fresh value per insert", a, 0);
    a.values = 1, a.pending_pct = 10;
    add("conc-pending", "1M operations on one key, all concurrent, 10% never return", a, 0);
    a.pending_pct = 0, a.error_pct = 10;
    add("conc-errors", "1M operations on one key, all concurrent, 10% end in an error", a, 0);
    a.error_pct = 0, a.ops = 128000, a.width = 64, a.violation = true;
    add("rounds-viol", "128,000 operations on one key, 64-wide rounds, one violation", a, 1);
    a.values = 0;
    add("rounds-viol-fresh", "128,000 operations on one key, 64-wide rounds, fresh values, one violation", a, 1);
    a.values = 1, a.violation = false, a.error_pct = 10;
    add("rounds-errors", "128,000 operations on one key, 64-wide rounds, 10% end in an error", a, 0);
    a.error_pct = 0, a.pending_pct = 1;
    add("rounds-pending", "128,000 operations on one key, 64-wide rounds, 1% never return", a, 0);
    a.pending_pct = 5;
    add("rounds-pending-5", "128,000 operations on one key, 64-wide rounds, 5% never return", a, 0);
    a.violation = true;
    add("rounds-pending-5-viol", "128,000 operations on one key, 64-wide rounds, 5% never return after a violation", a, 1);
    a.violation = false;
    a.pending_pct = 0, a.ops = 10000000, a.keys = 10, a.width = 0;
    add("10m-10keys-conc", "10M operations on 10 keys, each key's all concurrent", a, 0);
    a.width = 64;
    add("10m-10keys-rounds", "10M operations on 10 keys, 64-wide rounds", a, 0);
  }

  std::printf("%-12s %10s %12s %10s %10s %10s %12s %10s %8s\n", "scenario", "records", "trace MB", "write s", "median s",
              "min s", "Mrecords/s", "peak MB", "peak/tr");
  for (const scenario& s : scenarios) {
    if (!only.empty() && only != s.name) continue;
    const std::string file = dir + "/lin_bench_" + s.name + ".trace";
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t records = 0;
    {
      const std::vector<gfsl::model::op_record> h = s.adversarial ? gfsl::lin::adversarial_history(s.a) : gfsl::lin::synthetic_history(s.o);
      records = h.size();
      gfsl::model::workload w;
      w.ops = s.o.ops;
      w.range = s.o.keys;
      w.prefill = s.o.prefill;
      w.insert_pct = s.o.insert_pct;
      w.delete_pct = s.o.delete_pct;
      w.contains_pct = 100 - s.o.insert_pct - s.o.delete_pct;
      w.teams = s.o.teams;
      w.seed = s.o.seed;
      gfsl::traces::write_trace(file, gfsl::traces::make_header(w, "synthetic", "", gfsl::model::clock_kind::global_counter, s.what), h);
    }
    const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    struct stat st {};
    stat(file.c_str(), &st);
    const double trace_mb = static_cast<double>(st.st_size) / 1e6;
    std::vector<run> rs;
    for (int k = 0; k < runs; ++k) {
      rs.push_back(run_check(gfsl, file, s.timeout));
      if (rs.back().code != s.expected) {
        std::fprintf(stderr, "%s: gfsl check exited %d:\n%s\n", s.name, rs.back().code, rs.back().out.c_str());
        return 1;
      }
    }
    std::vector<double> walls;
    long peak = 0;
    for (const run& r : rs) walls.push_back(r.wall), peak = std::max(peak, r.max_rss_kb);
    std::sort(walls.begin(), walls.end());
    const double median = walls[walls.size() / 2];
    const double peak_mb = static_cast<double>(peak) * 1024 / 1e6;
    std::printf("%-12s %10llu %12.1f %10.2f %10.3f %10.3f %12.2f %10.1f %8.2f\n", s.name, static_cast<unsigned long long>(records),
                trace_mb, write_s, median, walls.front(), static_cast<double>(records) / median / 1e6, peak_mb, peak_mb / trace_mb);
    std::fflush(stdout);
    if (search_seconds > 0) {
      const std::vector<gfsl::model::op_record> h = s.adversarial ? gfsl::lin::adversarial_history(s.a) : gfsl::lin::synthetic_history(s.o);
      const auto t1 = std::chrono::steady_clock::now();
      const gfsl::lin::verdict v = gfsl::lin::check_history_search(h, gfsl::lin::deadline::after_seconds(search_seconds));
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
      std::printf("%-12s the search alone: %s in %.3f s (limit %.0f s); gfsl check exited %d\n", s.name, gfsl::lin::verdict_name(v), took,
                  search_seconds, s.expected);
      std::fflush(stdout);
    }
    if (!keep) std::remove(file.c_str());
  }
  return 0;
}
