// gfsl stress on the CPU: `host` runs each structure under the deterministic
// scheduler (a violation comes with the line that replays its structure bit
// for bit); `threads` runs one OS thread per team for real concurrency.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/gfsl/algorithm.hpp"
#include "core/gfsl/invariants.hpp"
#include "core/host_team.hpp"
#include "exec/host_structure.hpp"
#include "exec/sched/scheduler.hpp"
#include "stress/runner.hpp"
#include "stress/stress.hpp"

namespace gfsl::stress {

std::vector<std::pair<key_type, value_type>> prefill_keys(const params& p, std::uint64_t structure_seed) {
  std::vector<std::pair<key_type, value_type>> out;
  for (std::uint64_t k = 1; k <= p.range; ++k) {
    if (initially_present(p, structure_seed, static_cast<key_type>(k))) {
      out.emplace_back(static_cast<key_type>(k), value_of(static_cast<key_type>(k)));
    }
  }
  return out;
}

std::vector<std::string> judge_structure(const invariants::snapshot& snap,
                                         const std::vector<std::pair<key_type, value_type>>& expected_bottom) {
  std::vector<std::string> out;
  const invariants::snapshot_report rep = invariants::check_snapshot(snap, true, &expected_bottom, 8);
  for (const invariants::violation& v : rep.violations) out.push_back(v.describe());
  return out;
}

namespace {

using clock_type = std::chrono::steady_clock;
inline clock_type::duration seconds_of(double s) {
  return std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(s));
}

// A structure's first keys, inserted by one team in ascending order before
// the concurrent phase (the measured setup: one team fills, then all run).
template <class Algo>
bool prefill(Algo& a, const std::vector<std::pair<key_type, value_type>>& keys, std::string& error) {
  for (const auto& [k, v] : keys) {
    const op_result r = a.insert(k, v);
    if (r.st != status::ok || !r.ok) {
      error = "prefill insert(" + std::to_string(k) + ") " + (r.st != status::ok ? status_name(r.st) : "returned false");
      return false;
    }
  }
  return true;
}

// What level 0 must hold at the end of a structure's life. stable-contains:
// the stable keys, plus whatever the writers left of the other keys (read
// from the structure itself: the oracle knows only the stable ones).
template <int N>
std::vector<std::pair<key_type, value_type>> expected_bottom(const params& p, const structure_view<N>& v,
                                                            const std::vector<team_state>& states) {
  std::vector<std::pair<key_type, value_type>> out;
  if (p.sh == shape::stable_contains) {
    for (std::uint32_t i = 0; i < stable_count(p); ++i) out.emplace_back(stable_key(p, i), value_of(stable_key(p, i)));
    for (const auto& kv : level_entries(v, 0)) {
      if (kv.first <= p.range && !is_stable(p, kv.first)) out.emplace_back(kv.first, value_of(kv.first));
    }
  } else {
    out = owned_present(p, states);
  }
  std::sort(out.begin(), out.end());
  return out;
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

struct shared_result {
  std::mutex lock;
  config_result* res;
  std::uint32_t keep;
  void add(const violation_record& v) {
    std::lock_guard<std::mutex> g(lock);
    if (res->reports.size() < keep) res->reports.push_back(v);
  }
};

template <int N, bool Mutable, variant V>
class cpu_runner {
 public:
  using team_type = last_read_team<host_team<N>>;
  using algo_type = algorithm<team_type, Mutable, V>;

  cpu_runner(const options& o, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal)
      : o_(o), range_(range), progress_(progress), fatal_(fatal) {}

  config_result run() {
    res_.backend = o_.backend;
    res_.device = "cpu";
    res_.shape = shape_name(o_.sh);
    res_.variant = variant_name(V);
    res_.reraise = o_.reraise;
    res_.mutant = mutant_label(o_.subject, o_.choice);
    res_.mutant_role = mutant_role(gfsl_subject::mutant_of(o_.choice));
    res_.chunk = N;
    res_.range = range_;
    res_.teams = default_teams(o_);
    p_ = params_of(o_, range_, res_.teams);
    res_.low_churn = p_.low_churn;
    for (team_id t = 0; t < p_.teams; ++t) res_.writers += is_writer(p_, t) ? 1 : 0;
    res_.invariants_checked = std::to_string(invariants::snapshot_invariant_names().size()) + " snapshot invariants";
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
  std::uint32_t pool_chunks() const {
    if (o_.pool) return o_.pool;
    if (o_.backend == "host") {
      // Every update may split; merged chunks are never reused. Bounded as
      // on the GPU (2^20 chunks): the pool is written whole before any team
      // runs, so a pool sized for 10^9 operations took seconds and gigabytes
      // that --seconds and SIGINT could not cut; a structure that fills it
      // ends early and the next one is built (counted in the report).
      const std::uint64_t chunks = 4ull * N + 64 + 2 * p_.teams * o_.ops_per_team + 2 * range_;
      return static_cast<std::uint32_t>(std::min<std::uint64_t>(chunks, 1u << 20));
    }
    return N == 32 ? (1u << 20) : (1u << 21);  // 256 MiB; a full pool ends the structure's life early
  }

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
  void judge(const host_structure<N>& s, const std::vector<team_state>& states, std::uint64_t seed) {
    if (s.view().error_word()[0] == error_pool_exhausted) {
      ++res_.rebuilt_early;  // an operation stopped half-way: not a state the oracle can judge
      return;
    }
    ++res_.structure_checks;
    const auto expected = expected_bottom(p_, s.view(), states);
    std::vector<std::string> problems = judge_structure(take_snapshot(s.view()), expected);
    if (!problems.empty()) {
      ++res_.structure_violations;
      for (std::string& line : problems) {
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

  bool build(host_structure<N>& s, std::uint64_t seed) {
    ++res_.structures;
    host_team<N> filler(0, seed ^ 0xF1F1F1F1ull, s.words());
    algorithm<host_team<N>, false, V> a(filler, s.view(), shape_rule_of(o_.p_chunk, o_.reraise));
    std::string error;
    if (!prefill(a, prefill_keys(p_, seed), error)) {
      res_.error = "structure " + std::to_string(res_.structures - 1) + ": " + error + " (pool of " +
                   std::to_string(s.capacity()) + " chunks)";
      return false;
    }
    return true;
  }

  void scheduled_structure(std::uint32_t index, std::uint64_t seed) {
    host_structure<N> s(pool_chunks());
    if (!build(s, seed)) return;
    sched::options so = o_.so;
    so.seed = seed;
    if (so.pct_steps == 0) {
      const std::uint64_t per_op = so.gran == sched::granularity::lane ? 12ull * N : so.gran == sched::granularity::line ? 30 : 17;
      so.pct_steps = std::max<std::uint64_t>(1, p_.teams * o_.ops_per_team * per_op);
    }
    if (so.strat == sched::strategy::fair_pct && so.fair_after == 0) so.fair_after = so.pct_steps / 2;
    sched::scheduler sch(so);
    const std::uint64_t threshold = shape_rule_of(o_.p_chunk, o_.reraise);
    std::vector<std::unique_ptr<team_type>> teams;
    std::vector<std::unique_ptr<algo_type>> algos;
    std::vector<team_state> states(p_.teams);
    std::vector<counters> counts(p_.teams);
    bool violated = false;
    std::string fault;
    for (team_id t = 0; t < p_.teams; ++t) {
      teams.push_back(std::make_unique<team_type>(t, seed, s.words(), &sch, false, s.word_count()));
      teams[t]->watch(s.view().chunk(0));
      algos.push_back(std::make_unique<algo_type>(*teams[t], s.view(), threshold, gfsl_subject::mutant_of(o_.choice)));
      states[t] = initial_team_state(p_, t, seed);
    }
    std::vector<std::function<void()>> bodies;
    for (team_id t = 0; t < p_.teams; ++t) {
      bodies.emplace_back([&, t] {
        for (std::uint64_t j = 0; j < o_.ops_per_team && !states[t].stopped; ++j) {
          if (team_should_stop()) return;
          step st;
          try {
            st = stress_step(*algos[t], p_, t, states[t], counts[t]);
          } catch (const access_fault& f) {
            fault = "team " + std::to_string(t) + " accessed word " + std::to_string(f.word) + " outside the structure";
            std::atomic_ref<std::uint64_t>(s.words()[header_offsets::error_word]).store(error_corrupt);
            states[t].stopped = 1;
            return;
          } catch (const run_stopped&) {
            states[t].stopped = 1;
            return;
          }
          if (st.violation) {
            violated = true;
            if (res_.reports.size() < o_.reports) res_.reports.push_back(record_of(st, *teams[t], index, sch.steps()));
          }
          sch.completed_operation();
        }
      });
    }
    const sched::outcome out = sch.run(std::move(bodies));
    for (const counters& c : counts) res_.totals.add(c);
    if (!fault.empty()) {
      ++res_.structure_violations;
      if (res_.structure_problems.size() < 16) res_.structure_problems.push_back("structure " + std::to_string(index) + ": " + fault);
      note_replay(index, seed);
      return;
    }
    if (out.reason != sched::stop_reason::completed) {
      // A search that restarts forever, or teams waiting on each other: the
      // structure no longer lets operations finish.
      ++res_.structure_violations;
      if (res_.structure_problems.size() < 16) {
        res_.structure_problems.push_back("structure " + std::to_string(index) + ": " + sched::name(out.reason) +
                                          " after " + std::to_string(out.steps) + " scheduling points: " + first_line(out.report));
      }
      note_replay(index, seed);
      return;
    }
    if (violated) note_replay(index, seed);
    judge(s, states, seed);
  }

  static std::string first_line(const std::string& text) {
    const auto nl = text.find('\n');
    return nl == std::string::npos ? text : text.substr(0, nl);
  }

  void threaded_structure(std::uint32_t index, std::uint64_t seed, clock_type::time_point deadline) {
    host_structure<N> s(pool_chunks());
    if (!build(s, seed)) return;
    const std::uint64_t threshold = shape_rule_of(o_.p_chunk, o_.reraise);
    // The structure lives rebuild_seconds x (1 + u), u in [0, 1) from its
    // seed, so that successive structures differ in layout and age.
    const double life = o_.rebuild_seconds * (1.0 + static_cast<double>(seed % 1024) / 1024.0);
    const auto end = std::min(deadline, clock_type::now() + seconds_of(life));
    std::atomic<bool> stop{false};
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
    const auto began = clock_type::now();
    try {
      for (team_id t = 0; t < p_.teams; ++t) {
        states[t] = initial_team_state(p_, t, seed);
        threads.emplace_back([&, t] {
          team_type team(t, seed, s.words(), nullptr, true, s.word_count());
          team.watch(s.view().chunk(0));
          algo_type a(team, s.view(), threshold, gfsl_subject::mutant_of(o_.choice));
          sync.arrive_and_wait();
          try {
            while (!states[t].stopped) {
              for (int i = 0; i < 64 && !states[t].stopped; ++i) {
                const step st = stress_step(a, p_, t, states[t], counts[t]);
                if (st.violation) {
                  const auto now = clock_type::now();
                  shared.add(record_of(st, team, index,
                                       static_cast<std::uint64_t>(std::chrono::duration<double, std::nano>(now - start_).count())));
                }
              }
              progress[t].fetch_add(1, std::memory_order_relaxed);
              {
                std::lock_guard<std::mutex> g(published[t].lock);
                published[t].c = counts[t];
              }
              if (stop.load(std::memory_order_relaxed)) break;
            }
          } catch (const access_fault& f) {
            std::atomic_ref<std::uint64_t>(s.words()[header_offsets::error_word]).store(error_corrupt);
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
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const auto now = clock_type::now();
      if (now >= end || s.view().error_word()[0] != error_none || interrupt_requested()) stop = true;
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
      if (stop && all_done) break;
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
    (void)began;
    for (const counters& c : counts) res_.totals.add(c);
    if (!fault.empty()) {
      ++res_.structure_violations;
      if (res_.structure_problems.size() < 16) res_.structure_problems.push_back("structure " + std::to_string(index) + ": " + fault);
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

template <int N, bool Mutable>
config_result run_variant(const options& o, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  return with_variant(gfsl_subject::variant_of(o.choice), [&](auto v) {
    return cpu_runner<N, Mutable, decltype(v)::value>(o, range, progress, fatal).run();
  });
}

}  // namespace

config_result run_on_cpu(const options& o, int chunk, std::uint32_t range, const progress_fn& progress, const fatal_fn& fatal) {
  const bool mutated = o.choice.mutated();
  if (chunk == 16) return mutated ? run_variant<16, true>(o, range, progress, fatal) : run_variant<16, false>(o, range, progress, fatal);
  return mutated ? run_variant<32, true>(o, range, progress, fatal) : run_variant<32, false>(o, range, progress, fatal);
}

}  // namespace gfsl::stress
