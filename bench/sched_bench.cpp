// Scheduling points per second of the deterministic scheduler, on one core.
//
//   build/bench/sched_bench [teams] [repeats]
//
// Two measurements, each the median of `repeats` runs:
// - toy: teams that do nothing but pass scheduling points (the scheduler's
//   own cost: the strategy's choice and the fiber switch);
// - gfsl: a mixed GFSL workload under each strategy and granularity (the
//   scheduler plus the algorithm between points);
// - events: the cost of recording the structural event log (every chunk
//   write and allocation), as operations per second with it off and on.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "exec/host_runner.hpp"
#include "exec/sched/scheduler.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double toy_rate(gfsl::sched::strategy s, std::uint32_t teams, std::uint64_t points_each) {
  gfsl::sched::options o;
  o.strat = s;
  o.seed = 1;
  o.pct_steps = teams * points_each;
  o.stack_bytes = 64 * 1024;
  gfsl::sched::scheduler sch(o);
  std::vector<std::function<void()>> bodies;
  for (std::uint32_t t = 0; t < teams; ++t) {
    bodies.emplace_back([&sch, points_each] {
      for (std::uint64_t i = 0; i < points_each; ++i) {
        sch.point();
        if ((i & 63) == 0) sch.completed_operation();
      }
    });
  }
  const auto start = clock_type::now();
  const auto out = sch.run(std::move(bodies));
  const double sec = std::chrono::duration<double>(clock_type::now() - start).count();
  return out.steps / sec;
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint32_t teams = argc > 1 ? static_cast<std::uint32_t>(std::atoi(argv[1])) : 64;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  std::printf("teams %u, median of %d runs\n", teams, repeats);
  for (auto s : {gfsl::sched::strategy::random, gfsl::sched::strategy::pct}) {
    std::vector<double> rates;
    for (int r = 0; r < repeats; ++r) rates.push_back(toy_rate(s, teams, 200000));
    std::printf("toy   %-9s          %7.2f M scheduling points/s\n", gfsl::sched::name(s), median(rates) / 1e6);
  }
  gfsl::model::workload w;
  w.teams = teams;
  w.ops = 100000;
  w.range = 10000;
  w.insert_pct = 20;
  w.delete_pct = 20;
  w.contains_pct = 60;
  w.chunk = 32;
  for (auto g : {gfsl::sched::granularity::chunk, gfsl::sched::granularity::line, gfsl::sched::granularity::lane}) {
    for (auto s : {gfsl::sched::strategy::random, gfsl::sched::strategy::pct, gfsl::sched::strategy::fair_pct}) {
      std::vector<double> rates;
      std::uint64_t steps = 0;
      for (int r = 0; r < repeats; ++r) {
        gfsl::sched::options o;
        o.strat = s;
        o.gran = g;
        o.seed = 1 + r;
        o.pct_steps = w.ops * (g == gfsl::sched::granularity::lane ? 12 * w.chunk : g == gfsl::sched::granularity::line ? 30 : 17);
        o.fair_after = o.pct_steps / 2;
        const auto start = clock_type::now();
        const auto run = gfsl::run_scheduled(w, o, 0, false);
        const double sec = std::chrono::duration<double>(clock_type::now() - start).count();
        steps = run.outcome.steps;
        rates.push_back(steps / sec);
      }
      std::printf("gfsl  %-9s %-5s  %7.2f M scheduling points/s  (%llu points for %llu operations)\n", gfsl::sched::name(s),
                  gfsl::sched::name(g), median(rates) / 1e6, (unsigned long long)steps, (unsigned long long)w.ops);
    }
  }
  for (const char* mode : {"turns", "scheduled chunk", "scheduled lane"}) {
    double ops_per_s[2] = {};
    std::size_t events = 0;
    for (int on = 0; on < 2; ++on) {
      std::vector<double> rates;
      for (int r = 0; r < repeats; ++r) {
        gfsl::run_extras ex;
        ex.events = on == 1;
        const auto start = clock_type::now();
        gfsl::host_run run;
        if (std::string(mode) == "turns") {
          run = gfsl::run_on_host(w, gfsl::host_mode::sequential, 0, true, ex);
        } else {
          gfsl::sched::options o;
          o.gran = std::string(mode) == "scheduled lane" ? gfsl::sched::granularity::lane : gfsl::sched::granularity::chunk;
          run = gfsl::run_scheduled(w, o, 0, true, ex).run;
        }
        rates.push_back(w.ops / std::chrono::duration<double>(clock_type::now() - start).count());
        events = run.events.size();
      }
      ops_per_s[on] = median(rates);
    }
    std::printf("events %-16s off %8.0f ops/s, on %8.0f ops/s (%.2fx), %zu events\n", mode, ops_per_s[0], ops_per_s[1],
                ops_per_s[1] / ops_per_s[0], events);
  }
}
