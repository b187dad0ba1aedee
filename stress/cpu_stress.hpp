// gfsl stress on the CPU over a subject's host stress policy (its
// core/NAME/stress.cpp; docs/SUBJECTS.md): `host` runs each structure under
// the deterministic scheduler (a violation comes with the line that replays
// its structure bit for bit); `threads` runs one OS thread per team for real
// concurrency. The runner knows no structure: it builds one through the
// policy, prefills it, runs the shape's operations on every team, judges each
// answer as it is given, and hands the structure back to the policy's
// structure oracle at the end of its life. stress/gpu_stress.cuh is the same
// over a device policy.
//
// A host stress policy gives:
//   width                      lanes of its team (the words of a team-wide read)
//   pool_unit                  what its pool counts ("chunks", "slabs", "nodes")
//   batches                    every team runs the same number of operations,
//                              and all stop after the same one: a team that
//                              stops alone leaves the others at a barrier
//   one_kind_per_batch         operation j of every team is of one kind, drawn
//                              from the structure's seed (lockstep_step)
//   rounds                     threads: a structure lives at most
//                              --ops-per-team operations a team, not a time
//   judges_exhausted           a structure whose pool ran out is still judged
//   structure                  its memory, from (options, params, pool)
//   algorithm<Team>            the algorithm the teams run, seeded bug included
//   pool(o, p, host)           its pool when --pool is 0
//   words(s), word_count(s), pool_start(s), error_word(s)
//   prefill(s, o, keys, error) one team inserts the keys in order
//   make(team, s, o)           a team's algorithm
//   describe(res, o, p)        its fields of the report
//   on_violation(record, step, s)   its fields of a violation report
//   judge(s, o, p, states, res, seconds)   the structure oracle
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/host_team.hpp"
#include "exec/sched/scheduler.hpp"
#include "stress/options.hpp"
#include "stress/runner.hpp"
#include "stress/stress.hpp"

namespace gfsl::stress {

namespace cpu_detail {

using clock_type = std::chrono::steady_clock;
inline clock_type::duration seconds_of(double s) {
  return std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s));
}

inline std::string first_line(const std::string& text) {
  const auto nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

template <class Team>
violation_record record_of(const step& s, const Team& team, std::uint32_t structure, std::uint64_t when) {
  violation_record v;
  v.team = team.id();
  v.key = s.key;
  v.kind = static_cast<std::uint8_t>(s.kind);
  v.answer = s.r.ok ? 1 : 0;
  v.expected = s.want_ok ? 1 : 0;
  v.value = s.r.value;
  v.chunk_size = static_cast<std::uint8_t>(Team::width);
  v.chunk = team.last_chunk();
  v.structure = structure;
  v.time_ns = when;
  for (int i = 0; i < Team::width; ++i) v.words[i] = team.last_words()[i];
  return v;
}

// The seconds to the first answer false where true was known (a key
// missing) and to the first true where false was known.
inline void note_first(config_result& res, const step& s, double seconds) {
  double& first = s.want_ok ? res.first_missing_s : res.first_extra_s;
  if (first < 0) first = seconds;
}

struct shared_result {
  std::mutex lock;
  config_result* res;
  std::uint32_t keep;
  void add(const violation_record& v, const step& s, double seconds) {
    std::lock_guard<std::mutex> g(lock);
    if (res->reports.size() < keep) res->reports.push_back(v);
    note_first(*res, s, seconds);
  }
};

// Where the teams of a batched structure stop: the first operation none of
// them makes. Team 0 lowers it to j + 1 when asked to stop before its
// operation j: no team can have begun operation j + 1 then (it would have
// passed the barrier that ends j, which waits for team 0), and every team
// reads it again after that barrier, which team 0 reaches after the store.
struct batch_stop {
  std::atomic<std::uint64_t> first_not_made{std::numeric_limits<std::uint64_t>::max()};
  void request(std::uint64_t j) {
    std::uint64_t cur = first_not_made.load();
    while (j + 1 < cur && !first_not_made.compare_exchange_weak(cur, j + 1)) {
    }
  }
  bool reached(std::uint64_t j) const { return j >= first_not_made.load(); }
};

// One operation of team t: the shape's oracle, its kind drawn by the team
// or, for a batched subject, the batch's.
template <class Policy, class Algo>
step run_step(Algo& a, const params& p, team_id t, team_state& st, counters& c, std::uint64_t seed, std::uint64_t j) {
  if constexpr (Policy::one_kind_per_batch) {
    return lockstep_step(a, p, t, st, c, batch_kind(seed, j));
  } else {
    return stress_step(a, p, t, st, c);
  }
}

// A batched team goes on after an operation that did not complete (out of
// pool, a key out of range: its answer unjudged), since the others wait for
// it at the next batch; a corrupt structure stops it, and the error word,
// which the barriers' waits read, stops the others.
template <class Policy>
bool ends_team(const step& s) {
  if constexpr (Policy::batches) return s.r.st == status::corrupt;
  return s.r.st != status::ok;
}

template <class Policy>
class cpu_runner {
 public:
  static constexpr int N = Policy::width;
  using team_type = last_read_team<host_team<N>>;
  using algo_type = typename Policy::template algorithm<team_type>;
  using structure = typename Policy::structure;

  cpu_runner(const options& o, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal)
      : o_(o), range_(range), progress_(progress), fatal_(fatal) {}

  config_result run() {
    res_.backend = o_.backend;
    res_.device = "cpu";
    res_.shape = shape_name(o_.sh);
    res_.chunk = N;
    res_.range = range_;
    res_.teams = default_teams(o_);
    p_ = params_of(o_, range_, res_.teams);
    res_.low_churn = p_.low_churn;
    for (team_id t = 0; t < p_.teams; ++t) res_.writers += is_writer(p_, t) ? 1 : 0;
    Policy::describe(res_, o_, p_);
    if (o_.backend == "host") {
      res_.sched = o_.sched;
      res_.granularity = sched::name(o_.so.gran);
    }
    start_ = clock_type::now();
    const auto deadline = start_ + seconds_of(o_.seconds);
    deadline_ = deadline;
    for (std::uint64_t i = 0;; ++i) {
      if (o_.max_structures && i >= o_.max_structures) break;
      if (i > 0 && clock_type::now() >= deadline) break;
      if (interrupt_requested()) break;
      const std::uint64_t seed =
          o_.replay.empty() ? structure_seed(o_.seed, N, range_, i) : o_.replay_structure_seed;
      if (o_.backend == "host") {
        scheduled_structure(static_cast<std::uint32_t>(i), seed);
      } else {
        threaded_structure(static_cast<std::uint32_t>(i), seed, deadline);
      }
      if (!res_.error.empty() || res_.hung) break;
      if (progress_) progress_(res_);
    }
    res_.interrupted = interrupt_requested();
    res_.seconds = std::chrono::duration<double>(clock_type::now() - start_).count();
    res_.wall_seconds = res_.seconds;
    return res_;
  }

 private:
  std::uint32_t pool() const { return o_.pool ? o_.pool : Policy::pool(o_, p_, o_.backend == "host"); }

  bool interrupt_requested() const { return o_.stop && o_.stop->load(std::memory_order_relaxed); }

  // Whether a scheduled team stops before its next operation: on an
  // interrupt, or once --seconds has passed (a structure of 10^9 operations
  // would otherwise run to its end). A replay runs its structure whole, as
  // recorded, whatever --seconds says: only an interrupt cuts it. A cut
  // structure is still judged: every operation it began has completed, and
  // a violation seen before the cut replays, since the schedule up to the
  // cut is the same.
  bool team_should_stop() const {
    return interrupt_requested() || (o_.replay.empty() && clock_type::now() >= deadline_);
  }

  // The structure oracle at the end of a structure's life.
  void judge(const structure& s, const std::vector<team_state>& states, std::uint64_t seed) {
    if (*Policy::error_word(s) == error_pool_exhausted) {
      ++res_.rebuilt_early;  // gfsl: an operation stopped half-way, not a state the oracle can judge
      if (!Policy::judges_exhausted) return;
    }
    ++res_.structure_checks;
    const double at = std::chrono::duration<double>(clock_type::now() - start_).count();
    const structure_verdict v = Policy::judge(s, o_, p_, states, res_, at);
    if (v.violated) {
      ++res_.structure_violations;
      for (const std::string& line : v.problems) {
        if (res_.structure_problems.size() < 16) {
          res_.structure_problems.push_back("structure " + std::to_string(res_.structures - 1) + ": " + line);
        }
      }
      note_replay(static_cast<std::uint32_t>(res_.structures - 1), seed);
    }
  }

  void note_replay(std::uint32_t index, std::uint64_t seed) {
    if (o_.backend != "host") return;
    if (res_.replays.size() < 8 && !res_.replay_of(index)) {
      res_.replays.push_back({index, encode_replay(o_, N, range_, res_.teams, seed)});
    }
  }

  std::unique_ptr<structure> build(std::uint64_t seed) {
    ++res_.structures;
    const std::uint32_t chunks = pool();
    auto s = std::make_unique<structure>(o_, p_, chunks);
    std::string error;
    if (!Policy::prefill(*s, o_, seed, prefill_keys(p_, seed), error)) {
      res_.error = "structure " + std::to_string(res_.structures - 1) + ": " + error + " (pool of " + std::to_string(chunks) +
                   " " + Policy::pool_unit + ")";
      return nullptr;
    }
    return s;
  }

  void add_problem(std::uint32_t index, const std::string& line) {
    ++res_.structure_violations;
    if (res_.structure_problems.size() < 16) res_.structure_problems.push_back("structure " + std::to_string(index) + ": " + line);
  }

  void scheduled_structure(std::uint32_t index, std::uint64_t seed) {
    const std::unique_ptr<structure> built = build(seed);
    if (!built) return;
    structure& s = *built;
    sched::options so = o_.so;
    so.seed = seed;
    if (so.pct_steps == 0) {
      const std::uint64_t per_op = so.gran == sched::granularity::lane ? 12ull * N : so.gran == sched::granularity::line ? 30 : 17;
      so.pct_steps = std::max<std::uint64_t>(1, p_.teams * o_.ops_per_team * per_op);
    }
    if (so.strat == sched::strategy::fair_pct && so.fair_after == 0) so.fair_after = so.pct_steps / 2;
    sched::scheduler sch(so);
    std::vector<std::unique_ptr<team_type>> teams;
    std::vector<std::unique_ptr<algo_type>> algos;
    std::vector<team_state> states(p_.teams);
    std::vector<counters> counts(p_.teams);
    bool violated = false;
    std::string fault;
    batch_stop batch;
    for (team_id t = 0; t < p_.teams; ++t) {
      teams.push_back(std::make_unique<team_type>(t, seed, Policy::words(s), &sch, false, Policy::word_count(s)));
      teams[t]->watch(Policy::pool_start(s));
      algos.push_back(Policy::make(*teams[t], s, o_));
      states[t] = initial_team_state(p_, t, seed);
    }
    std::vector<std::function<void()>> bodies;
    for (team_id t = 0; t < p_.teams; ++t) {
      bodies.emplace_back([&, t] {
        for (std::uint64_t j = 0; j < o_.ops_per_team && !states[t].stopped; ++j) {
          if constexpr (Policy::batches) {
            if (t == 0 && team_should_stop()) batch.request(j);
            if (batch.reached(j)) return;
          } else {
            if (team_should_stop()) return;
          }
          step st;
          try {
            st = run_step<Policy>(*algos[t], p_, t, states[t], counts[t], seed, j);
          } catch (const access_fault& f) {
            fault = "team " + std::to_string(t) + " accessed word " + std::to_string(f.word) + " outside the structure";
            std::atomic_ref<std::uint64_t>(Policy::words(s)[error_word_offset]).store(error_corrupt);
            states[t].stopped = 1;
            return;
          } catch (const run_stopped&) {
            states[t].stopped = 1;
            return;
          }
          if (!ends_team<Policy>(st)) states[t].stopped = 0;
          if (st.violation) {
            violated = true;
            note_first(res_, st, std::chrono::duration<double>(clock_type::now() - start_).count());
            if (res_.reports.size() < o_.reports) {
              violation_record v = record_of(st, *teams[t], index, sch.steps());
              Policy::on_violation(v, st, s);
              res_.reports.push_back(v);
            }
          }
          sch.completed_operation();
        }
      });
    }
    const sched::outcome out = sch.run(std::move(bodies));
    for (const counters& c : counts) res_.totals.add(c);
    if (!fault.empty()) {
      add_problem(index, fault);
      note_replay(index, seed);
      return;
    }
    if (out.reason != sched::stop_reason::completed) {
      // A search that restarts forever, or teams waiting on each other: the
      // structure no longer lets operations finish.
      add_problem(index, std::string(sched::name(out.reason)) + " after " + std::to_string(out.steps) +
                             " scheduling points: " + first_line(out.report));
      note_replay(index, seed);
      return;
    }
    if (violated) note_replay(index, seed);
    judge(s, states, seed);
  }

  void threaded_structure(std::uint32_t index, std::uint64_t seed, clock_type::time_point deadline) {
    const std::unique_ptr<structure> built = build(seed);
    if (!built) return;
    structure& s = *built;
    // The structure lives rebuild_seconds x (1 + u), u in [0, 1) from its
    // seed, so that successive structures differ in layout and age.
    const double life = o_.rebuild_seconds * (1.0 + static_cast<double>(seed % 1024) / 1024.0);
    const auto end = std::min(deadline, clock_type::now() + seconds_of(life));
    std::atomic<bool> stop{false};
    batch_stop batch;
    std::vector<std::atomic<std::uint64_t>> progress(p_.teams);
    std::vector<team_state> states(p_.teams);
    std::vector<counters> counts(p_.teams);
    // What the watchdog may read while the teams run: whether a team has
    // ended (release/acquire, so that its last counters are seen after the
    // join anyway) and a copy of its counters published every 64 steps.
    std::vector<std::atomic<bool>> ended(p_.teams);
    struct published_counts {
      std::mutex lock;
      counters c;
    };
    std::vector<published_counts> published(p_.teams);
    shared_result shared{{}, &res_, o_.reports};
    std::mutex fault_lock;
    std::string fault;
    std::vector<std::thread> threads;
    std::barrier sync(static_cast<std::ptrdiff_t>(p_.teams) + 1);
    // A batched team checks for the stop before every operation (the
    // others wait for it at the next barrier); the others every 64.
    constexpr int per_check = Policy::batches ? 1 : 64;
    const std::uint64_t max_ops = Policy::rounds ? o_.ops_per_team : std::numeric_limits<std::uint64_t>::max();
    try {
      for (team_id t = 0; t < p_.teams; ++t) {
        states[t] = initial_team_state(p_, t, seed);
        threads.emplace_back([&, t] {
          team_type team(t, seed, Policy::words(s), nullptr, true, Policy::word_count(s));
          team.watch(Policy::pool_start(s));
          const std::unique_ptr<algo_type> a = Policy::make(team, s, o_);
          sync.arrive_and_wait();
          std::uint64_t j = 0;
          try {
            while (!states[t].stopped && j < max_ops) {
              for (int i = 0; i < per_check && !states[t].stopped && j < max_ops; ++i, ++j) {
                if constexpr (Policy::batches) {
                  if (t == 0 && stop.load(std::memory_order_relaxed)) batch.request(j);
                  if (batch.reached(j)) {
                    states[t].stopped = 1;
                    break;
                  }
                }
                const step st = run_step<Policy>(*a, p_, t, states[t], counts[t], seed, j);
                if (!ends_team<Policy>(st)) states[t].stopped = 0;
                if (st.violation) {
                  const auto now = clock_type::now();
                  violation_record v = record_of(st, team, index,
                                                 static_cast<std::uint64_t>(std::chrono::duration<double, std::nano>(now - start_).count()));
                  Policy::on_violation(v, st, s);
                  shared.add(v, st, std::chrono::duration<double>(now - start_).count());
                }
              }
              progress[t].fetch_add(1, std::memory_order_relaxed);
              {
                std::lock_guard<std::mutex> g(published[t].lock);
                published[t].c = counts[t];
              }
              if (!Policy::batches && stop.load(std::memory_order_relaxed)) break;
            }
          } catch (const access_fault& f) {
            std::atomic_ref<std::uint64_t>(Policy::words(s)[error_word_offset]).store(error_corrupt);
            std::lock_guard<std::mutex> g(fault_lock);
            if (fault.empty()) fault = "team " + std::to_string(t) + " accessed word " + std::to_string(f.word) + " outside the structure";
          } catch (const run_stopped&) {
          }
          progress[t].fetch_add(1, std::memory_order_relaxed);
          states[t].stopped = 1;
          {
            std::lock_guard<std::mutex> g(published[t].lock);
            published[t].c = counts[t];
          }
          ended[t].store(true, std::memory_order_release);
        });
      }
    } catch (const std::system_error& e) {
      // Threads already started wait at the barrier: release them at once.
      stop = true;
      batch.request(0);
      res_.error = std::string("cannot start team thread ") + std::to_string(threads.size()) + ": " + e.what();
      // Arrive for ourselves and for every team that never started, so that
      // the started ones pass the barrier, see `stop` and return.
      (void)sync.arrive(static_cast<std::ptrdiff_t>(p_.teams - threads.size()) + 1);
      for (std::thread& th : threads) th.join();
      return;
    }
    sync.arrive_and_wait();
    // Watchdog: a team whose progress counter stands still for hang_seconds is
    // stuck (an endless search or a lock never released); it cannot be
    // stopped, so the run is reported and the process ends.
    std::vector<std::uint64_t> seen(p_.teams, 0);
    std::vector<clock_type::time_point> since(p_.teams, clock_type::now());
    auto last_progress = clock_type::now();
    for (;;) {
      // A round ends by itself, often within milliseconds: looked at sooner.
      std::this_thread::sleep_for(std::chrono::milliseconds(Policy::rounds ? 1 : 20));
      const auto now = clock_type::now();
      if (now >= end || *Policy::error_word(s) != error_none || interrupt_requested()) stop = true;
      bool all_done = true;
      for (team_id t = 0; t < p_.teams; ++t) {
        const std::uint64_t v = progress[t].load(std::memory_order_relaxed);
        if (v != seen[t]) {
          seen[t] = v;
          since[t] = now;
        }
        const bool team_ended = ended[t].load(std::memory_order_acquire);
        if (!team_ended) all_done = false;
        if (!team_ended && std::chrono::duration<double>(now - since[t]).count() > o_.hang_seconds) {
          std::lock_guard<std::mutex> reports_held(shared.lock);  // teams add reports to res_
          res_.hung = true;
          res_.hang_detail = "team " + std::to_string(t) + " made no progress for " + std::to_string(o_.hang_seconds) +
                             " s in structure " + std::to_string(index) + " (an operation that never returns)";
          for (published_counts& pc : published) {
            std::lock_guard<std::mutex> g(pc.lock);
            res_.totals.add(pc.c);
          }
          res_.seconds = std::chrono::duration<double>(now - start_).count();
          if (fatal_) fatal_(res_);
          std::_Exit(1);
        }
      }
      if ((stop || Policy::rounds) && all_done) break;
      if (progress_ && std::chrono::duration<double>(now - last_progress).count() >= 1.0) {
        last_progress = now;
        config_result snap;
        {
          std::lock_guard<std::mutex> g(shared.lock);  // teams add reports to res_
          snap = res_;
        }
        for (published_counts& pc : published) {
          std::lock_guard<std::mutex> g(pc.lock);
          snap.totals.add(pc.c);
        }
        snap.seconds = std::chrono::duration<double>(now - start_).count();
        progress_(snap);
      }
    }
    for (std::thread& th : threads) th.join();
    for (const counters& c : counts) res_.totals.add(c);
    if (!fault.empty()) {
      add_problem(index, fault);
      return;
    }
    judge(s, states, seed);
  }

  const options& o_;
  std::uint32_t range_;
  const progress_fn& progress_;
  const fatal_fn& fatal_;
  params p_;
  config_result res_;
  clock_type::time_point start_;
  clock_type::time_point deadline_;
};

}  // namespace cpu_detail

// One configuration of gfsl stress on a CPU backend under host stress policy P.
template <class P>
config_result run_cpu_stress(const options& o, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  return cpu_detail::cpu_runner<P>(o, range, progress, fatal).run();
}

}  // namespace gfsl::stress
