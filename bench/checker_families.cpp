// The hard history families (linearizability/synthetic.hpp,
// hard_family_history), written as JSON-lines traces and checked by
// `gfsl check` and, when given its path, by Porcupine's command line
// (../shared/peers/porcupine/build.sh builds `porccheck`; it is never part of
// the build). Each is run N times, one checker after the other on the same
// file; the table gives the median wall seconds and exit codes of both.
// Figures: docs/RESULTS.md (checker), docs/BENCHMARKS.md.
//
//   checker_families [--gfsl PATH] [--porccheck PATH] [--porc-seconds S] [--dir DIR] [--runs N] [--only NAME] [--seed S] [--keep]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "timed_run.hpp"
#include "linearizability/synthetic.hpp"
#include "traces/trace.hpp"

namespace {

struct family {
  const char* name;
  const char* what;
  gfsl::lin::hard_options o;
  int expected;  // gfsl check's exit code (-1: 0 or 3, linearizable or undecided)
};

using gfsl::bench::outcome;
outcome run(const std::vector<std::string>& argv) { return gfsl::bench::timed_run(argv); }

outcome median(std::vector<outcome> rs) {
  std::sort(rs.begin(), rs.end(), [](const outcome& a, const outcome& b) { return a.wall < b.wall; });
  return rs[rs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string gfsl = GFSL_BINARY, porccheck, dir = "/tmp", only, porc_seconds = "60";
  int runs = 3;
  bool keep = false;
  std::uint64_t seed = 0;  // 0: each family's own
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gfsl" && i + 1 < argc) gfsl = argv[++i];
    else if (a == "--porccheck" && i + 1 < argc) porccheck = argv[++i];
    else if (a == "--porc-seconds" && i + 1 < argc) porc_seconds = argv[++i];
    else if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--keep") keep = true;
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr,
                   "usage: checker_families [--gfsl PATH] [--porccheck PATH] [--porc-seconds S] [--dir DIR] [--runs N] [--only NAME] [--seed S] [--keep]\n");
      return 2;
    }
  }

  std::vector<family> families;
  {
    gfsl::lin::hard_options o;
    o.ops = 100000, o.in_flight = 64, o.error_pct = 10, o.violating_key = true, o.seed = 11;
    families.push_back({"errors+bad-last", "100k ops on a hot key, 64 in flight, 10% errors; a one-op violating key, last", o, 1});
    o.violating_first = true;
    families.push_back({"errors+bad-first", "the same, the violating key's record first", o, 1});
    o.violating_key = false;
    families.push_back({"errors", "the hot key alone (linearizable; undecided within --key-seconds is allowed)", o, -1});
    o = {};
    o.ops = 100000, o.in_flight = 64, o.error_pct = 0, o.pending_pct = 6, o.violating_key = true, o.seed = 12;
    families.push_back({"pending+bad", "100,001 records: a hot key with 6% never returning, 64 in flight; a one-op violating key", o, 1});
    o.violating_key = false;
    families.push_back({"pending", "100k ops on a hot key, 6% never returning, 64 in flight (linearizable)", o, 0});
    o = {};
    o.ops = 10000, o.in_flight = 8, o.error_pct = 10, o.values = 2, o.unrecorded_pct = 30, o.flip = true, o.seed = 13;
    families.push_back({"errors-2v-flip", "10k ops on one key, 8 in flight, 10% errors, 2 values, 30% delete values unrecorded, one flipped answer", o, 1});
    o.flip = false;
    families.push_back({"errors-2v", "the same without the flip (linearizable)", o, 0});
  }

  std::printf("%-18s %9s %9s %10s %6s %10s %6s\n", "family", "records", "MB", "gfsl s", "exit", "porc s", "exit");
  int rc = 0;
  for (const family& f : families) {
    if (!only.empty() && only != f.name) continue;
    const std::string file = dir + "/checker_family_" + f.name + ".jsonl";
    gfsl::lin::hard_options fo = f.o;
    if (seed) fo.seed = seed;
    const gfsl::lin::hard_history h = gfsl::lin::hard_family_history(fo);
    gfsl::model::workload w;
    w.ops = f.o.ops;
    w.range = 2;
    w.teams = f.o.in_flight;
    w.seed = fo.seed;
    w.prefill = 0;
    w.insert_pct = fo.insert_pct;
    w.delete_pct = fo.delete_pct;
    w.contains_pct = 100 - fo.insert_pct - fo.delete_pct;
    gfsl::traces::write_trace_json(file, gfsl::traces::make_header(w, "synthetic", "", gfsl::model::clock_kind::global_counter, f.what),
                                   h.records, h.unrecorded_values);
    std::vector<outcome> g, p;
    for (int k = 0; k < runs; ++k) {
      g.push_back(run({gfsl, "check", file}));
      if (!porccheck.empty()) p.push_back(run({porccheck, "-timeout", porc_seconds, file}));
    }
    const outcome gm = median(g);
    std::FILE* sz = std::fopen(file.c_str(), "rb");
    double mb = 0;
    if (sz) {
      std::fseek(sz, 0, SEEK_END);
      mb = static_cast<double>(std::ftell(sz)) / 1e6;
      std::fclose(sz);
    }
    std::printf("%-18s %9zu %9.1f %10.3f %6d", f.name, h.records.size(), mb, gm.wall, gm.code);
    if (!p.empty()) {
      const outcome pm = median(p);
      std::printf(" %10.3f %6d", pm.wall, pm.code);
    }
    std::printf("\n");
    std::fflush(stdout);
    for (const outcome& r : g) {
      if (f.expected < 0 ? r.code != 0 && r.code != 3 : r.code != f.expected) {
        std::fprintf(stderr, "%s: gfsl check exited %d, expected %d\n", f.name, r.code, f.expected);
        rc = 1;
      }
    }
    if (!keep) std::remove(file.c_str());
  }
  return rc;
}
