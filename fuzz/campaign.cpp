#include "fuzz/campaign.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <cstring>
#include <sstream>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "core/layout.hpp"
#include "fuzz/coverage.hpp"
#include "fuzz/scenarios.hpp"
#include "fuzz/shrink.hpp"
#include "linearizability/report.hpp"
#include "model/workload.hpp"
#include "traces/trace.hpp"

namespace gfsl::fuzz {

namespace {

using steady = std::chrono::steady_clock;

struct shared_state {
  std::mutex lock;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> next_batch{0};
  campaign_result result;
  std::map<std::string, std::uint64_t> signature_runs;  // failing runs by signature
  std::set<std::uint32_t> combinations;                 // sets of rare paths reached together in one run
  std::vector<failure> pending;                         // keep-going: found, written, not yet shrunk
  std::string phase;                                    // what the campaign does now, when not searching (progress line)
  steady::time_point start = steady::now();
  const std::atomic<bool>* cancel = nullptr;
  bool cancelled() const { return cancel && cancel->load(); }
  // A failure's folder or its journal line could not be written: nothing
  // more is shrunk or written (a full disk only fails again).
  bool broken() {
    std::lock_guard<std::mutex> g(lock);
    return !result.write_error.empty() || !result.record_error.empty();
  }
  double elapsed() const { return std::chrono::duration<double>(steady::now() - start).count(); }
};

// Campaigns report failures themselves (with their own replay line), so
// RapidCheck's listener, which prints its own reproduction hints, is left out.
struct quiet_listener final : rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// What the property saw of one batch: RapidCheck's final counterexample is
// the last case that failed (with the first one's signature) while it shrank.
struct batch_log {
  std::optional<run_config> first_failure, last_failure;
  std::optional<judgement> last_judgement;
  std::vector<detection> first_found;
  std::string signature;
  double first_at = 0;
};

// Once shrinking begins the search's counts stop moving: the line then says
// what is being shrunk instead of showing frozen rates.
void print_progress(const campaign_options& o, shared_state& s, bool tty) {
  const campaign_result& r = s.result;
  const double t = std::max(s.elapsed(), 1e-9);
  const std::string bug = mutant_label(o.limits.subject, o.choice);
  const std::string who = (o.limits.subject == subject_kind::gfsl ? "" : std::string(subject_name(o.limits.subject)) + " ") + o.backend +
                          (bug == "none" ? "" : " " + bug);
  if (!s.phase.empty()) {
    std::fprintf(stderr, "%s[fuzz %s] %6.1f s  %llu runs searched; %s%s", tty ? "\r\033[K" : "", who.c_str(), t,
                 (unsigned long long)r.runs, s.phase.c_str(), tty ? "" : "\n");
    std::fflush(stderr);
    return;
  }
  std::fprintf(stderr,
               "%s[fuzz %s] %6.1f s  %llu runs (%.1f/s)  %llu ops (%.0f/s)  splits %llu merges %llu zombie-unlinks %llu "
               "backtracks %llu restarts %llu down-ptr %llu   %s",
               tty ? "\r" : "", who.c_str(), t, (unsigned long long)r.runs, r.runs / t, (unsigned long long)r.ops, r.ops / t,
               (unsigned long long)r.paths.splits, (unsigned long long)r.paths.merges,
               (unsigned long long)(r.paths.zombie_unlinks + r.paths.head_unlinks), (unsigned long long)r.paths.backtracks,
               (unsigned long long)r.paths.restarts, (unsigned long long)r.paths.down_ptr_updates, tty ? "" : "\n");
  std::fflush(stderr);
}

// Sets the phase and shows it at once (a log gets one line per phase).
void enter_phase(const campaign_options& o, shared_state& s, std::string phase) {
  std::lock_guard<std::mutex> g(s.lock);
  s.phase = std::move(phase);
  if (o.progress) print_progress(o, s, isatty(2) != 0);
}

// RapidCheck reads its configuration (RC_PARAMS) on first use and prints
// "Using configuration: seed=..." to std::cerr: a seed of its own that the
// campaign never uses (each batch gets its seed from the campaign's). Its
// first use happens here, with std::cerr silenced, so that the campaign's
// own seed is the only one printed.
void load_rapidcheck_configuration_quietly() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::ostringstream sink;
    std::streambuf* was = std::cerr.rdbuf(sink.rdbuf());
    rc::detail::configuration();
    std::cerr.rdbuf(was);
  });
}

// Operations a counterexample makes a reader follow: the concurrent ones
// and the prefill's inserts.
std::uint64_t size_of(const judgement& j) { return j.run.records.size() + j.run.prefill.size(); }

constexpr std::uint64_t schedules_per_candidate = 32;
constexpr std::uint64_t generated_schedules_per_candidate = 4;
constexpr std::uint64_t listed_at_once = 64;  // operations (shrink_further)

// Takes `candidate` as the counterexample when it fails with the same
// signature as the counterexample so far and is smaller: fewer operations,
// or as many on fewer teams, or on half-size chunks, or the same under sc
// memory where it was ptx (a failure that needs no stale load is one of
// interleavings alone, and reads so). `same_detector`: the
// first detector alone must match (a cut in time of a long run,
// fuzz/shrink.hpp, repeats the failing execution up to the cut, and the
// checker may then get stuck at an earlier operation of the same
// violation: another site of linearizability's signature, the same bug in
// the same interleaving; a short run keeps its signature exactly).
bool try_smaller(failure& f, const run_config& candidate, const campaign_options& o, bool same_detector = false) {
  if (o.shrink_runs && f.shrink_runs >= o.shrink_runs) return false;
  ++f.shrink_runs;
  judgement j = execute_and_judge(candidate, o.judge);
  if (!j.failed() || f.verdict.found.empty()) return false;
  if (signature(j.found) != signature(f.verdict.found) &&
      !(same_detector && j.found.front().detector == f.verdict.found.front().detector)) {
    return false;
  }
  if (std::make_tuple(size_of(j), j.config.w.teams, j.config.w.chunk, j.config.so.mem != sched::memory::sc) >=
      std::make_tuple(size_of(f.verdict), f.shrunk.w.teams, f.shrunk.w.chunk, f.shrunk.so.mem != sched::memory::sc)) {
    return false;
  }
  f.shrunk = j.config;
  f.verdict = std::move(j);
  return true;
}

// A smaller script shifts every later decision of a seeded schedule, so the
// interleaving that failed is rarely made again by the same seed. A few
// other seeds (the same for every candidate, so the pass is deterministic)
// are tried before the candidate is given up: any seed that fails is as
// good a counterexample, since the replay line carries it.
bool try_smaller_any_schedule(failure& f, const run_config& candidate, const campaign_options& o,
                              std::uint64_t schedules = schedules_per_candidate) {
  if (try_smaller(f, candidate, o)) return true;
  // A signal (SIGINT, SIGTERM) ends the search at once: the smallest failure
  // so far is kept, and the campaign must stop within about a run.
  // Every other seed, a lane-granular run of the robust variant also tears
  // on purpose (fuzz/scenarios.hpp, validation_tear): reads parked in the
  // middle, validations' second reads held open. The interleavings a torn
  // validation needs are then common, not one schedule in hundreds.
  const bool tearable = o.shrink_cuts && candidate.backend == "host" && candidate.w.subject == subject_kind::gfsl &&
                        gfsl_subject::variant_of(candidate.choice) == variant::robust && candidate.so.gran == sched::granularity::lane;
  for (std::uint64_t k = 1; k < schedules && !(o.cancel && o.cancel->load()) && !(o.shrink_runs && f.shrink_runs >= o.shrink_runs); ++k) {
    run_config again = candidate;
    again.so.seed = 1 + model::mix64(candidate.so.seed + k) % 1000000000;
    if (tearable && k % 2 == 1) {
      again.so.tear = sched::tear_target::validation;
      again.so.strat = sched::strategy::park;
      again.so.park_at = sched::park_point::mid_read;
      again.so.park_ops = 1;
      again.so.park_every = 16;
      again.so.park_teams = 0;
    }
    if (try_smaller(f, again, o)) return true;
  }
  return false;
}

// Takes team t out of a listed run. The park strategy's victims are teams
// 0 .. park_teams-1: one fewer when a victim goes, and a run left without
// any is scheduled at random (park_teams 0 would make every team a victim).
void remove_team(run_config& c, std::size_t t) {
  c.script->team_ops.erase(c.script->team_ops.begin() + static_cast<std::ptrdiff_t>(t));
  if (c.so.park_teams != 0 && t < c.so.park_teams && --c.so.park_teams == 0) c.so.strat = sched::strategy::random;
}

// The last pass: the counterexample's operations listed one by one
// (model/script.hpp), then taken out while the run still fails with the same
// signature: whole teams first, then runs of operations of each list (the
// prefill's and every team's) from half the list down to single operations,
// as delta debugging does, until a whole round removes nothing.
void shrink_script(failure& f, const campaign_options& o, double until, const shared_state& s) {
  if (!f.shrunk.script) {
    run_config listed = f.shrunk;
    listed.script = model::script_of(listed.w);
    model::fit_workload(*listed.script, listed.w);
    // The listed form renumbers the inserts' values; it must fail as the
    // generated one did (the algorithm does not branch on values).
    ++f.shrink_runs;
    judgement j = execute_and_judge(listed, o.judge);
    if (!j.failed() || signature(j.found) != signature(f.verdict.found)) return;
    f.shrunk = j.config;
    f.verdict = std::move(j);
  }
  const auto without = [](const run_config& c, auto change) {
    run_config n = c;
    if constexpr (std::is_invocable_v<decltype(change), model::script&>) change(*n.script);
    else change(n);
    n.script->number_values();
    model::fit_workload(*n.script, n.w);
    return n;
  };
  // Half-size chunks, with the same list or half the prefill: a chunk of 16
  // splits and merges with half the keys one of 32 needs, which single
  // removals never reach (a run on 32-entry chunks with a key fewer does not
  // split at all). The halves by key order: the smaller, the larger, every
  // other key. Down to 8 entries, tried before every round of removals, since
  // a shorter list may fit smaller chunks.
  const auto halve_chunks = [&] {
    if (f.shrunk.w.chunk <= 8 || f.shrunk.w.subject != subject_kind::gfsl) return false;
    run_config same = f.shrunk;
    same.w.chunk /= 2;
    if (try_smaller_any_schedule(f, same, o)) return true;
    if (f.shrunk.script->prefill.empty()) return false;
    const int before = f.shrunk.w.chunk;
    std::vector<model::operation> sorted = f.shrunk.script->prefill;
    std::sort(sorted.begin(), sorted.end(), [](const model::operation& a, const model::operation& b) { return a.key < b.key; });
    // Each half in the list's order, then ascending (which splits the last
    // chunk each time, the fewest keys to a given shape).
    for (int half = 0; half < 6 && s.elapsed() < until && !s.cancelled(); ++half) {
      std::set<key_type> kept;
      for (std::size_t i = 0; i < sorted.size(); ++i) {
        const bool lower = i < sorted.size() / 2;
        if (half % 3 == 0 ? lower : half % 3 == 1 ? !lower : i % 2 == 0) kept.insert(sorted[i].key);
      }
      run_config n = without(f.shrunk, [&](model::script& sc) {
        if (half >= 3) sc.prefill = sorted;
        std::erase_if(sc.prefill, [&](const model::operation& op) { return !kept.count(op.key); });
      });
      n.w.chunk = before / 2;
      if (try_smaller_any_schedule(f, n, o)) return true;
    }
    return false;
  };
  // The run cut short in time (fuzz/shrink.hpp): the same schedule seed
  // makes the same choices up to the cut, so one run decides a candidate.
  const auto cut_in_time = [&] {
    if (!o.shrink_cuts) return false;
    for (const std::uint64_t at : cut_points(f.verdict)) {
      if (s.elapsed() >= until || s.cancelled()) return false;
      const std::optional<run_config> n = cut_at(f.shrunk, f.verdict, at);
      if (n && try_smaller(f, *n, o, f.shrunk.w.ops > listed_at_once)) return true;
    }
    return false;
  };
  // Each team's last operations, by halves, under the same seed: the run is
  // the same until the team would have begun them.
  const auto trim_tails = [&] {
    if (!o.shrink_cuts) return false;
    bool trimmed = false;
    for (std::size_t t = 0; t < f.shrunk.script->team_ops.size() && s.elapsed() < until && !s.cancelled(); ++t) {
      for (std::size_t width = std::max<std::size_t>(1, f.shrunk.script->team_ops[t].size() / 2); width >= 1;) {
        const std::optional<run_config> n = without_tail(f.shrunk, t, width);
        if (n && try_smaller(f, *n, o, f.shrunk.w.ops > listed_at_once)) {
          trimmed = true;
          continue;
        }
        if (width == 1) break;
        width /= 2;
      }
    }
    return trimmed;
  };
  // Teams left with nothing to do still take part in the schedule's draws:
  // taken out together as soon as there are any, under a few schedules.
  const auto drop_idle = [&](std::uint64_t schedules) {
    const auto idle = [](const model::operation_list& ops) { return ops.empty(); };
    const auto& teams = f.shrunk.script->team_ops;
    if (s.cancelled() || teams.size() < 2 || !std::any_of(teams.begin(), teams.end(), idle) || std::all_of(teams.begin(), teams.end(), idle)) {
      return false;
    }
    if (try_smaller_any_schedule(f,
                                 without(f.shrunk,
                                         [&](run_config& n) {
                                           for (std::size_t t = n.script->team_ops.size(); t-- > 0;) {
                                             if (idle(n.script->team_ops[t])) remove_team(n, t);
                                           }
                                         }),
                                 o, schedules)) {
      return true;
    }
    // Together they may take the interleaving with them where one alone
    // does not: each idle team on its own, the last first.
    bool dropped = false;
    for (std::size_t t = f.shrunk.script->team_ops.size(); t-- > 0 && f.shrunk.script->team_ops.size() > 1 && !s.cancelled();) {
      if (t < f.shrunk.script->team_ops.size() && idle(f.shrunk.script->team_ops[t]) &&
          try_smaller_any_schedule(f, without(f.shrunk, [t](run_config& n) { remove_team(n, t); }), o, schedules)) {
        dropped = true;
      }
    }
    return dropped;
  };
  // The operations on keys near the one a detector names, every team's and
  // the prefill's (a window of 1, 2, 4, .. 16 keys either side), the
  // smallest that fails: the keys far from it take part in the failure
  // only through the splits and merges they cause, which smaller chunks
  // make again with fewer keys.
  const auto key_window = [&] {
    if (!o.shrink_cuts) return false;
    const auto named = std::find_if(f.verdict.found.begin(), f.verdict.found.end(), [](const detection& d) { return d.has_key; });
    if (named == f.verdict.found.end()) return false;
    const key_type k = named->key;
    for (key_type w : {1u, 2u, 4u, 8u, 16u}) {
      if (s.elapsed() >= until || s.cancelled()) return false;
      const auto far = [&](const model::operation& op) { return op.key + w < k || op.key > k + w; };
      run_config n = without(f.shrunk, [&](run_config& c) {
        std::erase_if(c.script->prefill, far);
        for (auto& ops : c.script->team_ops) std::erase_if(ops, far);
        for (std::size_t t = c.script->team_ops.size(); t-- > 0;) {
          if (c.script->team_ops[t].empty() && c.script->team_ops.size() > 1) remove_team(c, t);
        }
      });
      if (n.w.ops + n.script->prefill.size() >= f.shrunk.w.ops + f.shrunk.script->prefill.size()) continue;
      if (try_smaller_any_schedule(f, n, o)) return true;
    }
    return false;
  };
  // A ptx failure that sc memory gives too, under some schedule: the
  // stale loads took no part in it.
  const auto without_stale_loads = [&] {
    if (f.shrunk.so.mem != sched::memory::ptx || s.cancelled()) return false;
    run_config n = f.shrunk;
    n.so.mem = sched::memory::sc;
    n.so.stale_seed = 0;
    n.so.stale_pct = 50;
    return try_smaller_any_schedule(f, n, o);
  };
  bool progress = true;
  while (progress && s.elapsed() < until && !s.cancelled()) {
    without_stale_loads();
    while (cut_in_time() || trim_tails()) {
    }
    while (key_window()) {
    }
    if (o.shrink_cuts) drop_idle(schedules_per_candidate);
    progress = halve_chunks();
    // Teams by halves, quarters and eighths before one at a time: of a
    // generated run's dozens of teams most take no part in the failure,
    // and each candidate costs a schedule search.
    for (std::size_t parts = 2; o.shrink_cuts && parts <= 8 && s.elapsed() < until && !s.cancelled(); parts *= 2) {
      for (std::size_t part = 0; part < parts && s.elapsed() < until && !s.cancelled(); ++part) {
        const std::size_t n = f.shrunk.script->team_ops.size();
        const std::size_t lo = n * part / parts, hi = n * (part + 1) / parts;
        if (n < 3 || hi <= lo || hi - lo >= n) continue;
        if (try_smaller_any_schedule(f, without(f.shrunk, [lo, hi](run_config& c) {
              for (std::size_t t = hi; t-- > lo;) remove_team(c, t);
            }), o)) {
          progress = true;
        }
      }
    }
    for (std::size_t t = 0; f.shrunk.script->team_ops.size() > 1 && t < f.shrunk.script->team_ops.size() && s.elapsed() < until &&
                            !s.cancelled();) {
      if (try_smaller_any_schedule(f, without(f.shrunk, [t](run_config& n) { remove_team(n, t); }), o)) {
        progress = true;
      }
      else ++t;
    }
    // List 0 is the prefill, list t + 1 team t's operations.
    const auto list_of = [](model::script& sc, std::size_t l) -> std::vector<model::operation>& {
      return l == 0 ? sc.prefill : sc.team_ops[l - 1];
    };
    for (std::size_t l = 0; l <= f.shrunk.script->team_ops.size() && s.elapsed() < until && !s.cancelled(); ++l) {
      for (std::size_t width = std::max<std::size_t>(1, list_of(*f.shrunk.script, l).size() / 2); width >= 1; width /= 2) {
        for (std::size_t at = 0; at < list_of(*f.shrunk.script, l).size() && s.elapsed() < until && !s.cancelled();) {
          const run_config n = without(f.shrunk, [&](model::script& sc) {
            auto& ops = list_of(sc, l);
            ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(at),
                      ops.begin() + static_cast<std::ptrdiff_t>(std::min(ops.size(), at + width)));
          });
          if (try_smaller_any_schedule(f, n, o)) progress = true;
          else at += width;
        }
        if (width == 1) break;
      }
    }
  }
  // At the end, with more schedules tried, since the run is tiny by now:
  // idle teams, then, for a run of a couple of dozen operations, each
  // operation once more (its team with it when it was the team's last),
  // where a failure that needs two torn reads may take hundreds of seeds.
  // An idle team takes part in the draws, so taking it out changes every
  // later choice: a run this small gets a wider search for a schedule that
  // fails without it.
  drop_idle((f.shrunk.w.ops <= 24 ? 64 : 8) * schedules_per_candidate);
  if (o.shrink_cuts && f.shrunk.w.ops <= 24) {
    for (std::size_t t = 0; t < f.shrunk.script->team_ops.size() && s.elapsed() < until && !s.cancelled();) {
      bool taken = false;
      for (std::size_t i = 0; i < f.shrunk.script->team_ops[t].size() && !taken && s.elapsed() < until && !s.cancelled(); ++i) {
        const run_config n = without(f.shrunk, [t, i](run_config& c) {
          auto& ops = c.script->team_ops[t];
          ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
          if (ops.empty() && c.script->team_ops.size() > 1) remove_team(c, t);
        });
        taken = try_smaller_any_schedule(f, n, o, 8 * schedules_per_candidate);
      }
      if (!taken) ++t;
    }
  }
}

// RapidCheck shrinks the generated values, but a smaller key range or team
// count regenerates every operation, and the prefill only takes the
// generator's few fractions: what it settles on is often far from minimal.
// On the scheduled host backend a run repeats bit for bit, so a greedy pass
// goes on from there: fewer operations, fewer teams, a smaller prefill,
// each step kept only when the run still fails with the same signature,
// until no step helps or the time is up.
void shrink_further(failure& f, const campaign_options& o, double until, const shared_state& s) {
  if (f.shrunk.backend != "host" || f.verdict.found.empty()) return;
  // Mid-run checks are most of a long lane-granular run's cost (4/5 of a
  // 1,090-operation one: 0.44 s, 0.09 s without) and decide only the
  // invariant detectors; they make no scheduling choice, so a failure
  // another detector found shrinks without them, and the shrunk run gets
  // them back when it fails as well with them.
  const std::uint64_t check_every = f.shrunk.check_every;
  const bool checks_decide = f.verdict.found.front().detector.rfind("invariant:", 0) == 0;
  if (o.shrink_cuts && check_every && !checks_decide) f.shrunk.check_every = 0;
  // A long run goes to its listed form at once: each generated candidate
  // regenerates and reschedules all of it (a few schedules each), where a
  // cut in time takes most of it in one run.
  bool progress = !f.shrunk.script && !(o.shrink_cuts && f.shrunk.w.ops > listed_at_once);
  while (progress && s.elapsed() < until && !s.cancelled()) {
    progress = false;
    std::vector<run_config> candidates;
    const run_config& c = f.shrunk;
    auto with = [&](auto change) {
      run_config n = c;
      change(n);
      n.so.park_teams = std::min(n.so.park_teams, n.w.teams);
      candidates.push_back(n);
    };
    if (c.w.prefill > 0) {
      with([](run_config& n) { n.w.prefill = 0; });
      with([](run_config& n) { n.w.prefill /= 2; });
    }
    for (std::uint64_t cut : {c.w.ops / 2, c.w.ops / 4, c.w.ops / 8, std::uint64_t{1}}) {
      if (cut >= 1 && c.w.ops > cut + 1) with([cut](run_config& n) { n.w.ops -= cut; });
    }
    if (c.w.teams > 2) {
      with([](run_config& n) { n.w.teams = 2; });
      with([](run_config& n) { n.w.teams /= 2; n.w.teams = std::max(n.w.teams, 2u); });
      with([](run_config& n) { --n.w.teams; });
    }
    // Half-size chunks fill, split and merge after half the operations
    // (down to 8 entries, which the host backends run: core/layout.hpp).
    if (c.w.chunk > 8 && c.w.subject == subject_kind::gfsl) with([](run_config& n) { n.w.chunk /= 2; });
    if (c.so.strat != sched::strategy::random) with([](run_config& n) { n.so.strat = sched::strategy::random; n.so.pct_steps = std::max<std::uint64_t>(n.so.pct_steps, 1); });
    // A few schedules per candidate: a smaller generated run interleaves
    // differently under the same seed (RapidCheck, which shrinks the
    // schedule's seed too, has usually done this part already; a
    // keep-going campaign leaves it all to this pass).
    for (const run_config& candidate : candidates) {
      if (s.elapsed() >= until || s.cancelled()) break;
      if (!try_smaller_any_schedule(f, candidate, o, generated_schedules_per_candidate)) continue;
      progress = true;
      break;
    }
  }
  if (!s.cancelled()) shrink_script(f, o, until, s);
  if (f.shrunk.check_every != check_every) {
    run_config checked = f.shrunk;
    checked.check_every = check_every;
    // Not a candidate (the budget does not count it): the shrunk run itself,
    // judged again with its checks.
    judgement j = execute_and_judge(checked, o.judge);
    if (j.failed() && signature(j.found) == signature(f.verdict.found)) {
      f.shrunk = j.config;
      f.verdict = std::move(j);
    }
  }
}

std::uint32_t path_mask(const path_stats& p) {
  std::uint32_t mask = 0;
  for (std::size_t i = 0; i < std::size(rare_paths); ++i) {
    if (p.*rare_paths[i].count) mask |= 1u << i;
  }
  return mask;
}

// Counts a judged run into the campaign (under the lock). Returns whether it
// reached a combination of rare paths no earlier run reached.
// A replayed run (campaign_options::replay_runs) is counted by the caller
// already: only what the journal does not keep (coverage, PCT) is counted.
bool count_run(shared_state& s, const judgement& j, bool replayed = false) {
  campaign_result& r = s.result;
  if (!replayed) {
    ++r.runs;
    r.ops += j.config.w.ops + j.run.prefill.size();
    r.paths += j.run.report.paths;
    r.undecided += j.undecided;
  }
  if (j.config.backend == "host") {
    r.pairs |= j.outcome.pairs;
    if (j.config.so.hold.active) {
      ++r.hold_runs;
      r.hold_met += j.outcome.hold_met ? 1 : 0;
    }
  }
  if (j.config.backend == "host" && (j.config.so.strat == sched::strategy::pct || j.config.so.strat == sched::strategy::fair_pct)) {
    ++r.pct_runs;
    r.pct_changes += j.outcome.priority_changes;
    r.pct_change_points += static_cast<std::uint64_t>(std::max(0, j.config.so.depth - 1));
  }
  const bool fresh = s.combinations.insert(path_mask(j.run.report.paths)).second;
  r.path_combinations = s.combinations.size();
  return fresh;
}

// Coverage feedback: runs that reached a new combination of rare paths are
// kept, and between RapidCheck's batches the kept runs that reached the paths
// the campaign has hit least are run again under another schedule (seed,
// strategy, granularity), as coverage-guided fuzzers mutate their corpus.
// A kept run also carries its interleaving coverage (fuzz/coverage.hpp):
// the pairs it reached, and the windows it opened (how often each) and the
// effects it made, which tell whether a targeted park on it can aim at a
// pair it missed.
struct corpus_entry {
  run_config config;
  std::uint32_t mask = 0;
  std::uint64_t pairs = 0;
  std::uint32_t windows = 0, effects = 0;
  std::array<std::uint32_t, 8> window_opens{};
};

// Paths, and pairs, that the batch reached least weigh most.
double rarity(const corpus_entry& e, const path_stats& totals, const std::array<std::uint64_t, 64>& pair_counts) {
  double score = 0;
  for (std::size_t i = 0; i < std::size(rare_paths); ++i) {
    if (e.mask & (1u << i)) score += 1.0 / (1.0 + static_cast<double>(totals.*rare_paths[i].count));
  }
  for (std::size_t b = 0; b < 64; ++b) {
    if (e.pairs >> b & 1u) score += 1.0 / (1.0 + static_cast<double>(pair_counts[b]));
  }
  return score;
}

// A targeted park aimed at a pair the batch has reached least (never, first
// of all): a kept run that opened the pair's window and made its effect,
// made again with its `nth` opening of the window held until another team's
// operation makes the effect on the held chunk. The schedule is the kept
// run's until the hold: the same seed makes the same choices up to it.
// Among the kept runs that can aim at the pair, those that open the window
// least are preferred: a directed run's few openings are each likely to be
// the one its scenario is about, a long run's are mostly elsewhere.
std::optional<run_config> targeted_run(const std::vector<corpus_entry>& corpus, const std::array<std::uint64_t, 64>& pair_counts,
                                       subject_kind subject, team_rng& rng) {
  const auto can_aim = [](const corpus_entry& c, int bit) {
    const int w = pair_window(bit), e = pair_effect(bit);
    return c.config.backend == "host" && (c.windows >> w & 1u) && (c.effects >> e & 1u) && c.window_opens[static_cast<std::size_t>(w)];
  };
  std::vector<int> aimable;
  for (int bit : pair_bits(subject)) {
    if (std::any_of(corpus.begin(), corpus.end(), [&](const corpus_entry& c) { return can_aim(c, bit); })) aimable.push_back(bit);
  }
  if (aimable.empty()) return std::nullopt;
  int bit = -1;
  for (int k = 0; k < 4; ++k) {  // tournament: the pair the batch reached least
    const int b = aimable[rng.next() % aimable.size()];
    if (bit < 0 || pair_counts[static_cast<std::size_t>(b)] < pair_counts[static_cast<std::size_t>(bit)]) bit = b;
  }
  const std::size_t w = static_cast<std::size_t>(pair_window(bit));
  std::vector<const corpus_entry*> bases;
  for (const corpus_entry& c : corpus) {
    if (can_aim(c, bit)) bases.push_back(&c);
  }
  const corpus_entry* base = nullptr;
  for (int k = 0; k < 4; ++k) {  // tournament: the base that opens the window least
    const corpus_entry* b = bases[rng.next() % bases.size()];
    if (!base || b->window_opens[w] < base->window_opens[w]) base = b;
  }
  run_config c = base->config;
  c.so.hold.active = true;
  c.so.hold.window = static_cast<std::uint8_t>(w);
  c.so.hold.effect = static_cast<std::uint8_t>(pair_effect(bit));
  c.so.hold.nth = 1 + static_cast<std::uint32_t>(rng.next() % base->window_opens[w]);
  c.so.hold.team = sched::hold_directive::any_team;
  return c;
}

run_config reschedule(const corpus_entry& e, const campaign_options& o, team_rng& rng) {
  run_config c = e.config;
  c.so.seed = 1 + rng.next() % 1000000000;
  static constexpr sched::strategy strategies[] = {sched::strategy::random, sched::strategy::pct, sched::strategy::fair_pct,
                                                   sched::strategy::park};
  c.so.strat = strategies[rng.next() % 4];
  c.so.depth = 1 + static_cast<int>(rng.next() % 5);
  const bool pct = c.so.strat == sched::strategy::pct || c.so.strat == sched::strategy::fair_pct;
  c.so.pct_steps = pct ? 0 : std::max<std::uint64_t>(c.so.pct_steps, 1);  // measured again
  static constexpr sched::park_point points[] = {sched::park_point::lock_cas, sched::park_point::after_read,
                                                 sched::park_point::before_write};
  c.so.park_at = points[rng.next() % 3];
  c.so.park_ops = 1 + static_cast<std::uint32_t>(rng.next() % 3);
  c.so.fair_after = 0;
  if (o.limits.vary_granularity) {
    static constexpr sched::granularity grans[] = {sched::granularity::chunk, sched::granularity::line, sched::granularity::lane};
    c.so.gran = grans[rng.next() % 3];
  }
  return c;
}

// A failure's folder, written aside and renamed into place: an interrupted
// campaign leaves it whole or not at all, and a shrunk failure replaces the
// folder its first run wrote. Empty when it cannot be written (a full disk,
// a removed folder): the failure is still reported and journalled, without
// its folder, and the campaign stops (a search whose findings cannot be
// kept is not worth going on with); the first such error is the result's.
std::string write_failure_whole(const campaign_options& o, const failure& f, shared_state& s) {
  namespace fs = std::filesystem;
  const fs::path staging = fs::path(o.out_dir) / (".staging-" + std::to_string(getpid()));
  std::string error;
  try {
    fs::remove_all(staging);
    const fs::path written = write_failure(staging.string(), f, o);
    const fs::path final_dir = fs::path(o.out_dir) / written.filename();
    fs::remove_all(final_dir);
    fs::rename(written, final_dir);
    fs::remove_all(staging);
    return final_dir.string();
  } catch (const fs::filesystem_error& e) {
    error = o.out_dir + ": cannot write the failure's folder: " + e.code().message();
  } catch (const std::exception& e) {  // a trace_error from its history file, a bad_alloc
    error = o.out_dir + ": cannot write the failure's folder: " + e.what();
  }
  std::error_code ec;
  fs::remove_all(staging, ec);
  std::lock_guard<std::mutex> g(s.lock);
  if (s.result.write_error.empty()) s.result.write_error = error;
  s.stop = true;
  return {};
}

// Hands a failure whose folder is in place (or could not be written) to the
// caller's journal before anything announces it; a journal that cannot take
// it stops the campaign.
void journal_found(const campaign_options& o, shared_state& s, const failure& f) {
  if (!o.on_failure) return;
  {
    std::lock_guard<std::mutex> g(s.lock);
    if (!s.result.record_error.empty()) return;
  }
  std::string e = o.on_failure(f);
  if (e.empty()) return;
  std::lock_guard<std::mutex> g(s.lock);
  if (s.result.record_error.empty()) s.result.record_error = std::move(e);
  s.stop = true;
}

// Records a failure found and shrunk: stops the campaign unless it goes on.
void record(const campaign_options& o, shared_state& s, failure f) {
  // The scheduled host backend repeats a run bit for bit; threads and the
  // GPU interleave freely, so whether the shrunk run fails again is news.
  if (f.shrunk.backend != "host" && !s.broken()) {
    const judgement again = execute_and_judge(f.shrunk, o.judge);
    f.reproduced = again.failed() && signature(again.found) == f.signature;
  }
  // keep-going: the shrunk form replaces the folder and the journal line of
  // the failure as found (found_new); a folder that cannot be rewritten
  // leaves the first one, which the journal line keeps naming.
  if (o.keep_going && !s.broken()) {
    if (!o.out_dir.empty()) {
      if (std::string d = write_failure_whole(o, f, s); !d.empty()) f.dir = std::move(d);
    }
    journal_found(o, s, f);
  }
  std::lock_guard<std::mutex> g(s.lock);
  if (!s.result.found) s.result.found = std::move(f);
  else if (o.keep_going) s.result.further.push_back(std::move(f));
  if (!o.keep_going) s.stop = true;
}

// The first failure of a new signature. A campaign that stops at it shrinks
// it now. One that goes on writes it at once, as found (nothing is lost if
// it is stopped later), and shrinks it after the exploration (run_campaign):
// shrinking for up to --shrink-seconds here would stop the search for the
// other signatures for as long, and --seconds bounds the search.
void found_new(const campaign_options& o, shared_state& s, failure f) {
  if (!o.keep_going) {
    shrink_further(f, o, f.seconds_to_first + o.shrink_seconds, s);
    record(o, s, std::move(f));
    return;
  }
  if (!o.out_dir.empty() && !s.broken()) f.dir = write_failure_whole(o, f, s);
  // Journalled now, not after the search: a campaign killed later keeps it.
  journal_found(o, s, f);
  std::lock_guard<std::mutex> g(s.lock);
  s.pending.push_back(std::move(f));
}

void worker(const campaign_options& o, shared_state& s) {
  run_config subject_of_runs;
  subject_of_runs.choice = o.choice;
  const auto gen = gen_run(o.limits, o.backend, subject_of_runs);
  while (!s.stop.load()) {
    const std::uint64_t b = s.next_batch.fetch_add(1);
    rc::detail::TestParams params;
    params.seed = model::mix64(o.seed * 0x9E3779B97F4A7C15ull + b * o.shards + o.shard);
    params.maxSuccess = o.runs_per_batch;
    params.maxSize = 100;
    batch_log log;
    bool in_shrink = false, cut_short = false;
    std::uint64_t rapidcheck_shrink_runs = 0;
    std::uint64_t case_index = 0;
    const std::uint64_t replayed_runs = b == o.first_batch ? o.replay_runs : 0;
    // The coverage corpus is the batch's own, so that a batch is a function
    // of its seed alone: a resumed campaign (--resume) runs exactly what the
    // uninterrupted one would have.
    std::vector<corpus_entry> corpus;
    std::set<std::uint32_t> batch_combinations;
    std::set<std::uint64_t> batch_pair_sets;
    path_stats batch_paths;
    std::array<std::uint64_t, 64> batch_pair_counts{};
    const auto keep = [&](const judgement& j) {
      batch_paths += j.run.report.paths;
      const std::uint64_t pairs = j.outcome.pairs;
      for (std::size_t b = 0; b < 64; ++b) batch_pair_counts[b] += pairs >> b & 1u;
      const bool new_paths = batch_combinations.insert(path_mask(j.run.report.paths)).second;
      const bool new_pairs = batch_pair_sets.insert(pairs).second;
      // A run with a hold is kept for its paths only: aimed again, it would
      // carry two holds' worth of luck, and its base is in the corpus already.
      if (new_paths || (new_pairs && !j.config.so.hold.active)) {
        corpus.push_back({j.config, path_mask(j.run.report.paths), pairs, j.outcome.windows_opened, j.outcome.effects_made,
                          j.outcome.window_opens});
      }
    };
    const auto property = [&]() {
      const run_config c = *gen;
      // Once a failure is found, the other cases of the batch are RapidCheck
      // shrinking it: let them run even past the time bound.
      const bool replayed = !in_shrink && case_index < replayed_runs;
      if (!in_shrink && (s.stop.load() || s.cancelled() || (!replayed && s.elapsed() > o.seconds))) {
        cut_short = true;
        return;
      }
      // Past the shrinking budget (or once cancelled) every further candidate
      // passes, so RapidCheck settles on the smallest failure found so far.
      if (in_shrink && (s.elapsed() > log.first_at + o.shrink_seconds || s.cancelled() ||
                        (o.shrink_runs && rapidcheck_shrink_runs >= o.shrink_runs))) {
        return;
      }
      if (in_shrink) ++rapidcheck_shrink_runs;
      judgement j = execute_and_judge(c, o.judge);
      if (!in_shrink && !replayed && o.on_run) o.on_run(b, case_index, j.config, j);
      if (!in_shrink) ++case_index;
      const std::string sig = j.failed() ? signature(j.found) : std::string();
      bool new_signature = false;
      if (!in_shrink) {
        std::lock_guard<std::mutex> g(s.lock);
        count_run(s, j, replayed);
        keep(j);
        if (j.failed()) new_signature = ++s.signature_runs[sig] == 1;
      }
      if (!j.failed()) return;
      // A signature already found is counted, not shrunk again; while
      // shrinking, a candidate that fails otherwise is another bug's.
      if (in_shrink ? sig != log.signature : !new_signature) return;
      if (!in_shrink && o.keep_going) {
        failure f;
        f.first = f.shrunk = j.config;
        f.first_found = j.found;
        f.seconds_to_first = s.elapsed();
        f.signature = sig;
        f.verdict = std::move(j);
        found_new(o, s, std::move(f));
        return;  // no RapidCheck shrinking: the campaign goes on
      }
      if (!in_shrink) {
        enter_phase(o, s, "shrinking the failure (" + sig + ")");
        log.first_failure = j.config;
        log.first_found = j.found;
        log.first_at = s.elapsed();
        log.signature = sig;
      }
      in_shrink = true;
      log.last_failure = j.config;
      log.last_judgement = std::move(j);
      RC_FAIL(sig);
    };
    rc::detail::TestMetadata meta;
    meta.id = "gfsl-fuzz";
    quiet_listener listener;
    const rc::detail::TestResult result = rc::detail::checkTestable(property, meta, params, listener);
    const bool failed = result.template is<rc::detail::FailureResult>() && log.last_failure.has_value();
    if (s.cancelled()) s.result.interrupted = true;
    if (failed) {
      failure f;
      f.first = *log.first_failure;
      f.shrunk = *log.last_failure;
      f.first_found = log.first_found;
      f.seconds_to_first = log.first_at;
      f.signature = log.signature;
      f.verdict = std::move(*log.last_judgement);
      f.shrink_runs = rapidcheck_shrink_runs;
      shrink_further(f, o, log.first_at + o.shrink_seconds, s);
      record(o, s, std::move(f));
      // A batch that failed is not complete until its failure is written
      // (the caller records that): interrupted before, it is run again.
      if (!o.keep_going) return;
    }
    // Coverage feedback: a fifth of a batch on the batch's kept runs that
    // reached the paths it hit least, each under a new schedule
    // (tournament of four). On the scheduled host backend, directed runs
    // (fuzz/scenarios.hpp) come first, for the paths and interleavings
    // random workloads do not reach, in place of one of the fifth.
    team_rng rng(params.seed ^ 0xC0FFEEull);
    const std::vector<scenario> directed_kinds = o.backend == "host" ? directed_runs_of(o.limits, o.choice) : std::vector<scenario>{};
    const int directed_runs = static_cast<int>(directed_kinds.size());
    const int feedback_runs = o.runs_per_batch / 5 - (o.backend == "host" ? 1 : 0);
    // Interleaving coverage as feedback: up to this many runs a batch, each a
    // kept run made again with a targeted park (targeted_run).
    const int targeted_runs = o.backend == "host" && o.limits.targeted_parks ? 4 : 0;
    for (int i = 0; i < directed_runs + targeted_runs + feedback_runs && !cut_short; ++i) {
      const bool directed = i < directed_runs;
      const bool targeted = !directed && i < directed_runs + targeted_runs;
      std::optional<run_config> aimed;
      if (targeted) {
        aimed = targeted_run(corpus, batch_pair_counts, o.limits.subject, rng);
        if (!aimed) continue;  // no kept run opens a window and makes an effect
      }
      if (!directed && corpus.empty()) break;
      // A replayed run ran before the campaign was stopped: neither the
      // time nor the run budget cuts it (runs_before counts it already).
      const bool replayed = case_index < replayed_runs;
      if (s.stop.load() || s.cancelled() || (!replayed && s.elapsed() > o.seconds)) {
        cut_short = true;
        break;
      }
      if (!replayed) {
        std::lock_guard<std::mutex> g(s.lock);
        if (o.max_runs && s.result.runs + o.runs_before >= o.max_runs) break;
      }
      const corpus_entry* best = nullptr;
      for (int k = 0; !directed && !targeted && k < 4; ++k) {
        const corpus_entry& e = corpus[rng.next() % corpus.size()];
        if (!best || rarity(e, batch_paths, batch_pair_counts) > rarity(*best, batch_paths, batch_pair_counts)) best = &e;
      }
      judgement j = execute_and_judge(directed   ? directed_run(directed_kinds[static_cast<std::size_t>(i)], o.limits, o.choice, rng)
                                      : targeted ? *aimed
                                                 : reschedule(*best, o, rng),
                                      o.judge);
      if (o.on_run && !replayed) o.on_run(b, case_index, j.config, j);
      ++case_index;
      bool new_signature = false;
      {
        std::lock_guard<std::mutex> g(s.lock);
        count_run(s, j, replayed);
        if (j.failed()) new_signature = ++s.signature_runs[signature(j.found)] == 1;
      }
      keep(j);
      if (!new_signature) continue;
      failure f;
      f.first = f.shrunk = j.config;
      f.first_found = j.found;
      f.seconds_to_first = s.elapsed();
      f.signature = signature(j.found);
      f.verdict = std::move(j);
      found_new(o, s, std::move(f));
      if (!o.keep_going) return;
    }
    // Complete: every run of the batch ran and is journalled, and any
    // failure it found is written.
    if (o.on_batch && !cut_short) o.on_batch(b, case_index);
    // A cancel that lands after the batch's last run (while its batch line
    // is being made durable, say) still interrupts the campaign: the batch
    // is kept, but the campaign has not reached its budget, and --resume
    // must go on from the next batch.
    if (s.cancelled()) {
      s.result.interrupted = true;
      return;
    }
    if (s.elapsed() > o.seconds) return;
    {
      std::lock_guard<std::mutex> g(s.lock);
      if (o.max_runs && s.result.runs + o.runs_before >= o.max_runs) return;
    }
  }
}

std::string json_escape(const std::string& in) {
  std::string out;
  for (char ch : in) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string stamp(std::uint64_t s) { return s == model::no_stamp ? "null" : std::to_string(s); }

std::string describe_word(std::uint64_t word, int lane, int chunk_words, bool slab = false) {
  if (slab) {
    // A SlabHash slab (core/slabhash/layout.hpp): pairs, then the next-slab word.
    if (lane == slabhash::next_word) {
      const std::uint32_t next = slabhash::next_of(word);
      return "next " + (next == slabhash::no_slab ? std::string("none") : std::to_string(next));
    }
    const key_type k = slabhash::pair_key(word);
    return k == slabhash::empty_key ? std::string("-") : k == slabhash::tombstone_key ? std::string("tomb") : std::to_string(k);
  }
  if (lane == chunk_words - 1) {
    if (lock_is_zombie(word)) return "zombie";
    std::string v = lock_is_held(word) ? "held by team " + std::to_string(lock_owner(word)) : std::string("free");
    return lock_version(word) ? v + " v" + std::to_string(lock_version(word)) : v;
  }
  const key_type k = entry_key(word);
  const std::string key = k == key_empty ? std::string("-") : k == key_neg_inf ? std::string("-inf") : std::to_string(k);
  if (lane == chunk_words - 2) {
    const chunk_index next = entry_value(word);
    return "max " + key + " next " + (next == no_chunk ? std::string("none") : std::to_string(next));
  }
  return key;
}

// The failing run as an interleaving of chunk accesses around the failing
// key: the run repeated (host runs repeat bit for bit) with its accesses
// recorded, and every access to a chunk that some access saw holding the key,
// in the order they happened. A team-wide read is one line while no other
// team writes that chunk during it. A read that writes land in the middle of
// (at line or lane granularity) is shown in pieces: the lanes it had loaded
// when each write landed, with what they held, then the writes, then the
// lanes it loaded after; its last line gives the whole chunk as the team saw
// it, marked TORN. That is the reading a person checks the answer against.
std::string interleaving_of(const failure& f, key_type key, const campaign_options& o) {
  run_config c = f.shrunk;
  c.so.record_accesses = true;
  const judgement j = execute_and_judge(c, o.judge);
  const std::vector<sched::logged_access>& log = j.outcome.accesses;
  const int words = static_cast<int>(c.w.chunk);
  const bool slab = c.w.subject == subject_kind::slabhash;
  const std::uint64_t pool = slab ? slabhash::header_words : header_offsets::pool;
  const auto chunk_of = [&](std::uint64_t w) { return w < pool ? no_chunk : static_cast<chunk_index>((w - pool) / words); };
  const auto lane_of = [&](std::uint64_t w) { return static_cast<int>((w - pool) % words); };
  std::set<chunk_index> around;
  for (const sched::logged_access& l : log) {
    const chunk_index ch = chunk_of(l.a.word);
    if (ch == no_chunk || lane_of(l.a.word) >= words - 1) continue;
    if (entry_key(l.result) == key || (l.a.kind != access_kind::load && entry_key(l.a.value) == key)) around.insert(ch);
  }
  std::ostringstream out;
  out << "key " << key << ": accesses to the chunks that held it (";
  for (chunk_index ch : around) out << (ch == *around.begin() ? "" : ", ") << ch;
  if (slab) out << "), in the order they happened; a chunk is a slab, lanes 0-14 its pairs (key shown, - EMPTY), lane 15 its next slab\n";
  else out << "), in the order they happened; lane " << words - 2 << " is NEXT (max, next chunk), lane " << words - 1 << " is LOCK\n";
  struct pending_read {
    chunk_index chunk = no_chunk;
    std::map<int, std::uint64_t> seen;       // lane -> word, the whole read so far
    std::map<int, std::uint64_t> unshown;    // lanes loaded since the last piece printed
    std::uint64_t writes_at_start = 0;
    std::vector<std::string> stale;          // lanes that returned an older store than the latest (ptx)
  };
  // "lanes 1-3, 7: 5 - 9" : which lanes, and what each held (a data lane's
  // key, "-" when empty; NEXT and LOCK spelled out).
  const auto lanes_and_words = [&](const std::map<int, std::uint64_t>& lanes) {
    std::string ids, held;
    for (auto it = lanes.begin(); it != lanes.end();) {
      auto run_end = it;
      while (std::next(run_end) != lanes.end() && std::next(run_end)->first == run_end->first + 1) ++run_end;
      ids += (ids.empty() ? "" : ", ") + std::to_string(it->first) +
             (run_end != it ? "-" + std::to_string(run_end->first) : std::string());
      it = std::next(run_end);
    }
    for (const auto& [lane, word] : lanes) held += (held.empty() ? "" : " ") + describe_word(word, lane, words, slab);
    return "lane" + std::string(lanes.size() > 1 ? "s " : " ") + ids + ": " + held;
  };
  std::map<team_id, pending_read> reads;
  std::map<chunk_index, std::uint64_t> writes;  // writes landed so far, per chunk
  std::size_t lines = 0;
  for (const sched::logged_access& l : log) {
    if (lines >= 5000) break;
    const chunk_index ch = chunk_of(l.a.word);
    if (ch == no_chunk || !around.count(ch)) continue;
    const int lane = lane_of(l.a.word);
    if (l.a.kind == access_kind::load) {
      pending_read& r = reads[l.a.team];
      if (l.a.group_index == 0 || r.chunk != ch) r = {ch, {}, {}, writes[ch], {}};
      r.seen[lane] = l.result;
      r.unshown[lane] = l.result;
      if (l.stale.stale) {
        // Under the ptx memory model: the store it returned and the latest
        // one, which no acquire, fence or RMW made it see.
        const auto by = [](team_id t) {
          return t == sched::ptx_memory::no_writer ? std::string("the value from before the run") : "team " + std::to_string(t) + "'s store";
        };
        r.stale.push_back("lane " + std::to_string(lane) + " returned " + describe_word(l.result, lane, words, slab) + " (" +
                          by(l.stale.returned_by) + "), not " + by(l.stale.latest_by) + " " +
                          describe_word(l.stale.latest, lane, words, slab) + " after it (" + std::to_string(l.stale.behind) +
                          (l.stale.behind == 1 ? " store" : " stores") + " behind the latest)");
      }
      if (l.a.group_index + 1 < l.a.group_size) continue;
      const bool torn = writes[ch] != r.writes_at_start;
      if (torn) out << "team " << l.a.team << " loads the rest of chunk " << ch << ", " << lanes_and_words(r.unshown) << "\n";
      out << "team " << l.a.team << " read chunk " << ch << ": keys";
      for (const auto& [at, word] : r.seen) {
        if (at < words - (slab ? 1 : 2) && entry_key(word) != key_empty) out << " " << describe_word(word, at, words, slab);
      }
      if (slab) {
        if (r.seen.count(words - 1)) out << "; " << describe_word(r.seen[words - 1], words - 1, words, slab);
      } else {
        if (r.seen.count(words - 2)) out << "; " << describe_word(r.seen[words - 2], words - 2, words);
        if (r.seen.count(words - 1)) out << "; lock " << describe_word(r.seen[words - 1], words - 1, words);
      }
      if (torn) out << "   TORN: " << writes[ch] - r.writes_at_start << " writes landed during this read";
      out << "\n";
      lines += torn ? 2 : 1;
      for (const std::string& s : r.stale) {
        out << "    STALE read by team " << l.a.team << " of chunk " << ch << " " << s << "\n";
        ++lines;
      }
      r = {};
      continue;
    }
    const bool wrote = l.a.kind != access_kind::cas || l.result == l.a.expected;
    if (wrote) {
      ++writes[ch];
      // Reads of this chunk under way: what they have loaded so far, before
      // this write lands.
      for (auto& [team, r] : reads) {
        if (team == l.a.team || r.chunk != ch || r.unshown.empty()) continue;
        out << "team " << team << " has loaded chunk " << ch << " " << lanes_and_words(r.unshown) << "\n";
        r.unshown.clear();
        ++lines;
      }
    }
    out << "  team " << l.a.team << " ";
    if (l.a.kind == access_kind::cas) {
      out << (wrote ? "CAS" : "failed CAS") << " chunk " << ch << " lane " << lane << ": " << describe_word(l.a.expected, lane, words, slab)
          << " -> " << describe_word(l.a.value, lane, words, slab);
      if (!wrote) out << " (found " << describe_word(l.result, lane, words, slab) << ")";
    } else if (l.a.kind == access_kind::exchange) {
      out << "exchanges chunk " << ch << " lane " << lane << ": " << describe_word(l.result, lane, words, slab) << " -> "
          << describe_word(l.a.value, lane, words, slab);
    } else {
      out << "writes chunk " << ch << " lane " << lane << ": "
          << describe_word(l.a.kind == access_kind::store ? l.a.value : l.result + l.a.value, lane, words, slab);
    }
    out << "\n";
    ++lines;
  }
  if (lines >= 5000) out << "(cut at 5,000 lines)\n";
  return out.str();
}

}  // namespace

campaign_result run_campaign(const campaign_options& o) {
  shared_state s;
  s.start -= std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(o.seconds_before));
  s.next_batch = o.first_batch;
  s.cancel = o.cancel;
  std::thread progress;
  std::atomic<bool> done{false};
  // On a terminal the line is redrawn every second; in a log, one line every
  // ten seconds.
  const bool tty = isatty(2) != 0;
  load_rapidcheck_configuration_quietly();
  if (o.progress) {
    std::fprintf(stderr, "[fuzz %s] seed %llu%s\n", o.backend.c_str(), (unsigned long long)o.seed,
                 o.shards > 1 ? (", shard " + std::to_string(o.shard) + "/" + std::to_string(o.shards)).c_str() : "");
    progress = std::thread([&] {
      while (!done.load()) {
        {
          std::lock_guard<std::mutex> g(s.lock);
          print_progress(o, s, tty);
        }
        for (int i = 0; i < (tty ? 10 : 100) && !done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  worker(o, s);
  // keep-going: each signature's first failure, shrunk now, in the order found.
  const std::size_t to_shrink = s.pending.size();
  for (std::size_t i = 0; i < to_shrink; ++i) {
    failure& f = s.pending[i];
    if (!s.cancelled() && !s.broken()) {
      enter_phase(o, s, "shrinking signature " + std::to_string(i + 1) + " of " + std::to_string(to_shrink) + " (" + f.signature +
                            ", at most " + std::to_string(static_cast<long long>(o.shrink_seconds)) + " s)");
      shrink_further(f, o, s.elapsed() + o.shrink_seconds, s);
    }
    record(o, s, std::move(f));
  }
  s.pending.clear();
  done = true;
  if (progress.joinable()) progress.join();
  s.phase.clear();  // the last line gives the totals
  s.result.seconds = s.elapsed();
  if (o.progress) {
    print_progress(o, s, tty);
    if (tty) std::fprintf(stderr, "\n");
  }
  if (s.result.found) s.result.found->runs = s.signature_runs[s.result.found->signature];
  for (failure& f : s.result.further) f.runs = s.signature_runs[f.signature];
  if (s.result.found && !o.keep_going) {
    if (!o.out_dir.empty() && !s.broken()) s.result.found->dir = write_failure_whole(o, *s.result.found, s);
    journal_found(o, s, *s.result.found);
  }
  return s.result;
}

void shrink_failure(failure& f, const campaign_options& o) {
  shared_state s;
  s.cancel = o.cancel;
  shrink_further(f, o, o.shrink_seconds, s);
}

std::string disabled_by(const campaign_options& o, std::string_view name) {
  // Only a delete under the re-raise rule re-raises (core/algorithm.hpp).
  if (name == "re-raise" && o.limits.upper == upper_choice::thesis) return "--upper thesis";
  return {};
}

std::string signature(const std::vector<detection>& found) {
  if (found.empty()) return {};
  return found.front().site.empty() ? found.front().detector : found.front().detector + " @ " + found.front().site;
}

std::pair<std::size_t, std::size_t> window_around(const std::vector<model::op_record>& ops, std::uint64_t centre_call, std::size_t most) {
  if (ops.size() <= most) return {0, ops.size()};
  if (centre_call == model::no_stamp) return {ops.size() - most, most};
  // The first operation called at or after the centre: half the window
  // before it, the rest after, shifted inward at either end of the key.
  const std::size_t at = static_cast<std::size_t>(
      std::lower_bound(ops.begin(), ops.end(), centre_call, [](const model::op_record& r, std::uint64_t c) { return r.call < c; }) -
      ops.begin());
  const std::size_t from = std::min(at > most / 2 ? at - most / 2 : 0, ops.size() - most);
  return {from, most};
}

std::string write_failure(const std::string& dir, const failure& f, const campaign_options& o) {
  namespace fs = std::filesystem;
  const judgement& j = f.verdict;
  // One folder per signature: its words, lower case, joined by '-'.
  std::string id = "failure-";
  for (char ch : f.signature.empty() ? signature(j.found) : f.signature) {
    const bool word = std::isalnum(static_cast<unsigned char>(ch)) != 0;
    if (word) id += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    else if (id.back() != '-') id += '-';
  }
  while (id.back() == '-') id.pop_back();
  const fs::path folder = fs::path(dir) / id;
  fs::create_directories(folder);
  const std::vector<model::op_record> history = model::full_history(j.run.prefill, j.run.records);
  std::optional<key_type> focus;
  std::string focus_reason;
  for (const detection& d : j.found) {
    if (d.has_key && !focus) {
      focus = d.key;
      focus_reason = d.detector == "linearizability" ? "not linearizable" : "named by " + d.detector;
    }
  }
  std::vector<model::op_record> shown;
  for (const model::op_record& r : history) {
    if (!focus || r.op.key == *focus) shown.push_back(r);
  }
  std::stable_sort(shown.begin(), shown.end(), [](const model::op_record& a, const model::op_record& b) { return a.call < b.call; });

  // The history in the JSON-lines trace form, through the trace library's
  // writer, so that `gfsl check` reads it back (tests/test_writers.cpp). The
  // host and threads backends stamp on one global counter; the device runner
  // of a campaign on its device-wide counter (device_options' default).
  const std::string replay = o.replay_line ? o.replay_line(f.shrunk) : f.shrunk.describe();
  const model::clock_kind clock = f.shrunk.backend == "cuda" ? model::clock_kind::device_counter : model::clock_kind::global_counter;
  traces::trace_header header = traces::make_header(f.shrunk.w, f.shrunk.backend, "", clock, replay);
  // Which algorithm ran, as gfsl run --trace records it.
  traces::extra_field variant_field;
  variant_field.name = "variant";
  variant_field.s = variant_label(f.shrunk.w.subject, f.shrunk.choice);
  header.extra.push_back(variant_field);
  traces::write_trace_json((folder / "history.jsonl").string(), header, history);
  // Every file of the folder is checked: a full disk must not leave a
  // folder that looks whole (write_failure_whole catches and reports it).
  auto written = [](std::ofstream& out, const std::filesystem::path& p) {
    out.flush();
    if (!out) throw std::runtime_error(p.string() + ": cannot write: " + std::strerror(errno));
  };
  {
    std::ofstream out(folder / "replay.txt");
    out << "gfsl replay " << replay << "\n";
    written(out, folder / "replay.txt");
  }
  // What the detectors said, and the timeline of the operations involved.
  {
    std::ofstream rep(folder / "report.txt");
    rep << "run (shrunk): " << f.shrunk.describe() << "\n";
    rep << "run (as first found, after " << f.seconds_to_first << " s): " << f.first.describe() << "\n";
    rep << "operations: " << f.shrunk.w.ops << " concurrent + " << j.run.prefill.size() << " prefill, " << f.shrunk.w.teams
        << " teams\n";
    rep << "signature: " << f.signature << "\n";
    if (const std::string now = signature(j.found); !now.empty() && now != f.signature) {
      rep << "signature of the shrunk run: " << now << " (cut in time, the same execution up to the cut: the checker stops at "
          << "an earlier operation of the violation)\n";
    }
    rep << "shrinking: " << f.shrink_runs << " candidate runs\n";
    if (f.shrunk.so.mem != sched::memory::sc) {
      rep << "memory: " << sched::name(f.shrunk.so.mem) << ", " << j.outcome.stale_reads
          << " loads returned a store older than the latest (interleaving.txt marks them STALE)\n";
    }
    for (const detection& d : j.found) rep << d.detector << ": " << d.detail << "\n";
    if (!f.reproduced) {
      rep << "the shrunk run did not fail again when repeated (" << f.shrunk.backend
          << " runs interleave freely): the detectors and history above are those of its failing execution\n";
    }
    written(rep, folder / "report.txt");
  }
  {
    // Timeline: one row per team, operations in call order with their
    // intervals; only the key the failure is about, when there is one
    // (history.jsonl has everything).
    std::ofstream t(folder / "timeline.txt");
    if (focus) t << "key " << *focus << " (" << focus_reason << "):\n";
    std::map<team_id, std::vector<const model::op_record*>> rows;
    for (const model::op_record& r : shown) rows[r.team].push_back(&r);
    for (auto& [team, ops] : rows) {
      t << "team " << team << ":";
      for (const model::op_record* r : ops) {
        t << "  [" << r->call << "," << (r->pending() ? std::string("...") : std::to_string(r->ret)) << "] "
          << model::describe(r->op) << "->" << (r->pending() ? "?" : r->ok ? "true" : "false");
        if (!r->pending() && r->ok && r->op.kind != op_kind::insert) t << "/" << r->value;
      }
      t << "\n";
    }
    written(t, folder / "timeline.txt");
  }
  std::string interleaving;
  if (focus && f.shrunk.backend == "host") {
    interleaving = interleaving_of(f, *focus, o);
    std::ofstream out(folder / "interleaving.txt");
    out << interleaving;
    written(out, folder / "interleaving.txt");
  }
  {
    // One page for the failure: the detectors, the checker's answers (the
    // answers that cannot all hold, the longest prefix that can be ordered),
    // every team's operations on the key as bars, and the interleaving of
    // chunk accesses with its torn reads. The history is small once shrunk.
    lin::check_options co;
    co.threads = 1;
    // Short bounds: the detector has decided already; a key left undecided
    // here only leaves the page without the checker's explanation.
    co.timeout_seconds = 2;
    co.explain_seconds = 2;
    co.all_keys = true;  // the shrunk history is small: the page names every violating key
    const lin::check_result checked = lin::check_history(history, co);
    lin::report_context ctx;
    ctx.file = "history.jsonl";
    ctx.form = "JSON lines";
    ctx.backend = f.shrunk.backend;
    ctx.replay = "gfsl replay " + replay;
    ctx.html_title = "gfsl fuzz: " + (f.signature.empty() ? signature(j.found) : f.signature);
    std::string& before = ctx.html_before;
    before += "<h2>Detectors</h2>\n<p>";
    for (const detection& d : j.found) before += "<b>" + lin::html_escape(d.detector) + "</b>: " + lin::html_escape(d.detail) + "<br>";
    before += "</p>\n";
    if (!f.reproduced) {
      before += "<p>The shrunk run did not fail again when repeated (" + lin::html_escape(f.shrunk.backend) +
                " runs interleave freely): what follows is its failing execution.</p>\n";
    }
    std::string& after = ctx.html_after;
    // A shrunk history is small, but one that could not be shrunk may hold
    // 10^5 operations on the key: the bars draw the failure_window
    // operations nearest the one the detector points at (linearizability's
    // stuck operation), or the last ones when it points at none (a failure
    // is found where its run ended), and say how many they leave out.
    std::uint64_t centre = model::no_stamp;
    for (const detection& d : j.found) {
      if (d.has_key && focus && d.key == *focus && d.at_call != model::no_stamp) {
        centre = d.at_call;
        break;
      }
    }
    const auto [from, count] = window_around(shown, centre, failure_window);
    const std::size_t left_before = from, left_after = shown.size() - from - count;
    const std::vector<model::op_record> drawn(shown.begin() + static_cast<std::ptrdiff_t>(from),
                                              shown.begin() + static_cast<std::ptrdiff_t>(from + count));
    std::uint64_t lo = model::no_stamp, hi = 0;
    for (const model::op_record& r : drawn) {
      lo = std::min(lo, r.call);
      hi = std::max(hi, r.pending() ? r.call + 1 : r.ret);
    }
    if (lo == model::no_stamp) lo = 0;
    const double width = 1200, scale = hi > lo ? width / static_cast<double>(hi - lo) : 1;
    std::map<team_id, int> lane;
    for (const model::op_record& r : drawn) lane.emplace(r.team, static_cast<int>(lane.size()));
    after += "<h2>Operations by team" + (focus ? " on key " + std::to_string(*focus) + " (" + lin::html_escape(focus_reason) + ")" : std::string()) +
             "</h2>\n<style>rect.ok{fill:#9cf}rect.no{fill:#fc9}rect.pending{fill:#ddd}text.bar{font:10px monospace}"
             "pre .torn{background:#fdd}pre .write{color:#a40}</style>\n";
    if (left_before || left_after) {
      after += "<p>The " + std::to_string(count) + " operations nearest " +
               (centre == model::no_stamp ? std::string("the end of the run") : "the one called at stamp " + std::to_string(centre)) +
               "; left out: " + std::to_string(left_before) + " before them and " + std::to_string(left_after) +
               " after them (history.jsonl holds them all).</p>\n";
    }
    after += "<div class=\"scroll\"><svg width=\"" + std::to_string(static_cast<int>(width) + 200) + "\" height=\"" +
             std::to_string(40 * lane.size() + 40) + "\">";
    std::ostringstream bars;
    for (const model::op_record& r : drawn) {
      const double x = 100 + (r.call - lo) * scale;
      const double w = std::max(2.0, ((r.pending() ? hi : r.ret) - r.call) * scale);
      const int y = 20 + 40 * lane[r.team];
      bars << "<rect class=\"" << (r.pending() ? "pending" : r.ok ? "ok" : "no") << "\" x=\"" << x << "\" y=\"" << y
           << "\" width=\"" << w << "\" height=\"16\"><title>team " << r.team << ": " << model::describe(r.op) << " -> "
           << (r.pending() ? "pending" : r.ok ? "true" : "false") << " [" << r.call << ", " << stamp(r.ret) << "]</title></rect>"
           << "<text class=\"bar\" x=\"" << x << "\" y=\"" << y + 28 << "\">" << model::describe(r.op) << "</text>";
    }
    for (const auto& [team, l] : lane) bars << "<text class=\"bar\" x=\"4\" y=\"" << 32 + 40 * l << "\">team " << team << "</text>";
    after += bars.str() + "</svg></div>\n";
    if (!interleaving.empty()) {
      // interleaving.txt: torn reads shaded, writes coloured.
      after += "<h2>Chunk accesses around key " + std::to_string(*focus) +
               ", in the order they happened</h2>\n<p>Shaded: a read of a chunk that writes landed in while it was under way "
               "(a torn read).</p><pre>";
      // At most the last 4,000 lines (interleaving.txt holds them all).
      std::size_t line_count = 0;
      for (char ch : interleaving) line_count += ch == '\n';
      constexpr std::size_t most_lines = 4000;
      std::size_t skip = line_count > most_lines ? line_count - most_lines : 0;
      if (skip) after += "(left out: the first " + std::to_string(skip) + " lines; interleaving.txt holds them all)\n";
      std::istringstream lines(interleaving);
      for (std::string line; std::getline(lines, line);) {
        if (skip) {
          --skip;
          continue;
        }
        const char* cls = line.find("TORN") != std::string::npos ? "torn" : line.rfind("  team ", 0) == 0 ? "write" : nullptr;
        if (cls) after += std::string("<span class=\"") + cls + "\">" + lin::html_escape(line) + "</span>\n";
        else after += lin::html_escape(line) + "\n";
      }
      after += "</pre>\n";
    }
    std::ofstream out(folder / "counterexample.html");
    out << lin::html_report(history, checked, ctx);
    written(out, folder / "counterexample.html");
  }
  return folder.string();
}

std::string campaign_json(const campaign_options& o, const campaign_result& r, const std::vector<failure_entry>& earlier) {
  std::ostringstream j;
  j << "{\"backend\":\"" << o.backend << "\",\"subject\":\"" << subject_name(o.limits.subject) << "\",\"variant\":\""
    << variant_label(o.limits.subject, o.choice) << "\",\"mutant\":\"" << mutant_label(o.limits.subject, o.choice)
    << "\",\"shard\":" << o.shard
    << ",\"shards\":" << o.shards << ",\"seed\":" << o.seed << ",\"seconds\":" << r.seconds << ",\"runs\":" << r.runs
    << ",\"ops\":" << r.ops << ",\"undecided\":" << r.undecided << ",\"splits\":" << r.paths.splits
    << ",\"merges\":" << r.paths.merges << ",\"zombie_unlinks\":" << r.paths.zombie_unlinks + r.paths.head_unlinks
    << ",\"backtracks\":" << r.paths.backtracks << ",\"restarts\":" << r.paths.restarts
    << ",\"down_ptr_updates\":" << r.paths.down_ptr_updates << ",\"pct_runs\":" << r.pct_runs
    << ",\"pct_priority_changes\":" << r.pct_changes << ",\"pct_change_points\":" << r.pct_change_points
    << ",\"path_combinations\":" << r.path_combinations << ",\"rare_paths\":{";
  for (std::size_t i = 0; i < std::size(rare_paths); ++i) j << (i ? "," : "") << "\"" << rare_paths[i].name << "\":" << r.paths.*rare_paths[i].count;
  j << "},\"never_hit\":[";
  bool first = true;
  for (const rare_path& p : rare_paths) {
    if (r.paths.*p.count || !disabled_by(o, p.name).empty()) continue;
    j << (first ? "" : ",") << "\"" << p.name << "\"";
    first = false;
  }
  j << "],\"disabled_paths\":[";
  first = true;
  for (const rare_path& p : rare_paths) {
    if (r.paths.*p.count || disabled_by(o, p.name).empty()) continue;
    j << (first ? "" : ",") << "\"" << p.name << "\"";
    first = false;
  }
  j << "]";
  if (o.backend == "host") {
    // Interleaving coverage (fuzz/coverage.hpp), by pair name.
    std::string reached, never, disabled;
    for (int bit : pair_bits(o.limits.subject)) {
      const std::string name = "\"" + pair_name(o.limits.subject, bit) + "\"";
      std::string& into = (r.pairs >> bit & 1u) ? reached : !pair_disabled_by(o, bit).empty() ? disabled : never;
      into += (into.empty() ? "" : ",") + name;
    }
    j << ",\"pairs_reached\":[" << reached << "],\"pairs_never_reached\":[" << never << "],\"pairs_disabled\":[" << disabled
      << "],\"hold_runs\":" << r.hold_runs << ",\"hold_met\":" << r.hold_met;
  }
  j << ",\"failures\":[";
  std::vector<const failure*> all;
  if (r.found) all.push_back(&*r.found);
  for (const failure& f : r.further) all.push_back(&f);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const failure& f = *all[i];
    const detection* d = f.verdict.found.empty() ? nullptr : &f.verdict.found.front();
    j << (i ? "," : "") << "{\"detector\":\"" << (d ? json_escape(d->detector) : "") << "\",\"detail\":\""
      << (d ? json_escape(d->detail) : "") << "\",\"signature\":\"" << json_escape(f.signature) << "\",\"detectors\":[";
    for (std::size_t k = 0; k < f.verdict.found.size(); ++k) j << (k ? "," : "") << "\"" << json_escape(f.verdict.found[k].detector) << "\"";
    j << "],\"runs\":" << f.runs << ",\"reproduced\":" << (f.reproduced ? "true" : "false")
      << ",\"seconds\":" << f.seconds_to_first << ",\"ops\":" << f.shrunk.w.ops << ",\"prefill\":" << f.verdict.run.prefill.size()
      << ",\"teams\":" << f.shrunk.w.teams << ",\"dir\":\"" << json_escape(f.dir) << "\",\"replay\":\""
      << json_escape(o.replay_line ? o.replay_line(f.shrunk) : f.shrunk.describe()) << "\"}";
  }
  for (std::size_t i = 0; i < earlier.size(); ++i) {
    const failure_entry& f = earlier[i];
    j << (all.empty() && i == 0 ? "" : ",") << "{\"detector\":\"" << json_escape(f.detector) << "\",\"detail\":\"" << json_escape(f.detail)
      << "\",\"signature\":\"" << json_escape(f.signature) << "\",\"seconds\":" << f.seconds << ",\"ops\":" << f.ops << ",\"dir\":\""
      << json_escape(f.dir) << "\",\"replay\":\"" << json_escape(f.replay) << "\",\"before_resume\":true}";
  }
  j << "]}";
  return j.str();
}

}  // namespace gfsl::fuzz
