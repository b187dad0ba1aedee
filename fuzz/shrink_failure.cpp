#include "fuzz/shrink_failure.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>
#include <vector>

#include "fuzz/shrink.hpp"
#include "model/workload.hpp"
#include "core/gfsl/types.hpp"

namespace gfsl::fuzz {

namespace {

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

}  // namespace

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
    // (down to 8 entries, which the host backends run: core/gfsl/layout.hpp).
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

void shrink_failure(failure& f, const campaign_options& o) {
  shared_state s;
  s.cancel = o.cancel;
  shrink_further(f, o, o.shrink_seconds, s);
}

}  // namespace gfsl::fuzz
