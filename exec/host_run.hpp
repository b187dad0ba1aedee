// The generic CPU runner: prefill, then the concurrent phase of a workload
// on host teams (sequential, under the deterministic scheduler, or on OS
// threads), over a subject's host policy. A subject's host entry
// (core/subject.hpp, host_run_fn) instantiates it over its own policies, in
// its folder (core/gfsl/host.cpp, core/slabhash/host.cpp); the runner knows
// nothing of any structure: it interleaves teams, stamps calls and returns,
// and hands the words to the subject's checks.
//
// A host policy gives: `width` (the team's lanes), `has_events`, `team_type`,
// `prefill_ops`/`concurrent_ops` (the algorithm on a team, without and with
// the seeded bug), a constructor from (workload, pool, run_extras),
// `words()`/`word_count()`, `prefill_algorithm(team)`,
// `concurrent_algorithm(team)`, `apply(ops, operation)`, `inspect()` and
// `snapshot(stamp)`.
#pragma once

#include "host_runner.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "event_recorder.hpp"
#include "../core/host_team.hpp"

namespace gfsl {

template <class Subject>
host_run run_subject(const model::workload& w, host_mode mode, std::uint32_t pool_chunks, bool keep_records,
             const sched::options* sched_options, sched::outcome* sched_outcome, const run_extras& extras) {
  constexpr int N = Subject::width;
  using team_type = typename Subject::team_type;
  host_run out;
  // The operations: team t runs [first[t], first[t+1]) of the concurrent
  // phase, each drawn from (seed, index) or listed by a script.
  const model::script* script = extras.script;
  if (script && script->team_ops.size() != w.teams) {
    throw std::invalid_argument("the script lists " + std::to_string(script->team_ops.size()) + " teams, the workload " +
                                std::to_string(w.teams));
  }
  std::vector<std::uint64_t> first(w.teams + 1, 0);
  std::vector<model::operation> listed;
  for (std::uint32_t t = 0; t < w.teams; ++t) {
    if (script) listed.insert(listed.end(), script->team_ops[t].begin(), script->team_ops[t].end());
    first[t + 1] = script ? listed.size() : team_first_op(w, t + 1);
  }
  auto op_at = [&](std::uint64_t j) { return script ? listed[j] : model::operation_at(w, j); };
  const std::uint32_t pool = pool_chunks ? pool_chunks
                             : script    ? pool_for_keys(static_cast<double>(script->size()), w)
                                         : default_pool_chunks(w);
  Subject s(w, pool, extras);
  out.report.pool_chunks = pool;

  std::mutex fault_lock;
  std::string fault_detail;
  auto note_error = [&](const op_result& r, const model::operation& op, team_id t) {
    std::lock_guard<std::mutex> guard(fault_lock);
    if (r.st == status::ok || r.st == status::stopped || out.report.first_error != status::ok) return;
    out.report.first_error = r.st;
    out.report.error_detail = std::string(status_name(r.st)) + " during " + model::describe(op) + " by team " +
                              std::to_string(t) + (r.st == status::corrupt ? " (" + fault_detail + ")"
                                                                            : " (pool of " + std::to_string(pool) + " chunks)");
  };

  // Prefill: sequential inserts by team 0, before the concurrent phase. It
  // runs as a one-team scheduled run whatever the mode, so that the same step
  // bound as the concurrent phase's ends a prefill that cannot finish (a lock
  // that is never released, a search that never ends) in a hang report; with
  // whole-chunk reads and one team the scheduler changes nothing it does.
  out.prefill = script ? script->prefill : model::prefill_operations(w);
  if (extras.before_prefill) extras.before_prefill(s.words(), s.word_count());
  {
    std::size_t done = 0;
    sched::options po;
    po.gran = sched::granularity::chunk;
    if (sched_options) po.livelock_steps = sched_options->livelock_steps;
    po.chunk_words = N;
    po.describe_team = [&](team_id) {
      return "in " + model::describe(out.prefill[done]) + ", prefill operation " + std::to_string(done + 1) + " of " +
             std::to_string(out.prefill.size());
    };
    sched::scheduler prefill_scheduler(po);
    team_type team(0, w.seed ^ 0xF1F1F1F1ull, s.words(), &prefill_scheduler, false, s.word_count());
    auto a = s.prefill_algorithm(team);
    std::vector<std::function<void()>> body;
    body.emplace_back([&] {
      for (; done < out.prefill.size(); ++done) {
        op_result r;
        try {
          r = Subject::apply(a, out.prefill[done]);
        } catch (const access_fault& f) {
          r = {status::corrupt, false, 0};
          fault_detail = "word " + std::to_string(f.word);
        }
        if (r.st != status::ok) {
          note_error(r, out.prefill[done], 0);
          break;
        }
        prefill_scheduler.completed_operation();
      }
    });
    const sched::outcome prefilled = prefill_scheduler.run(std::move(body));
    if (prefilled.reason != sched::stop_reason::completed) {
      out.prefill_stop = prefilled.reason;
      out.prefill_report = prefilled.report;
      out.prefill.resize(done);  // the history holds the prefill operations that completed
    }
  }

  // The run's clock: read before the operation's first shared access and after
  // its last, so that real-time order implies stamp order (model/history.hpp).
  // Reading it is not a scheduling point: it is the observer, not the program.
  std::atomic<std::uint64_t> clock{model::first_free_stamp(out.prefill.size())};

  live_history* live = keep_records ? extras.live : nullptr;
  std::vector<std::vector<model::op_record>> own_records;
  std::vector<std::vector<model::op_record>>& per_team = live ? live->per_team : own_records;
  per_team.assign(w.teams, {});
  std::unique_ptr<sched::scheduler> scheduler;
  if (mode == host_mode::scheduled) {
    sched::options so = *sched_options;
    if (extras.check_every) {
      // Between two accesses no team is inside one: the words are a state the
      // run really passed through, checked against the invariants that hold
      // at every step.
      so.check_every = extras.check_every;
      so.on_check = [&](std::uint64_t step) {
        const invariants::snapshot snap = s.snapshot(clock.load());
        invariants::snapshot_report rep = invariants::check_snapshot(snap, false);
        ++out.mid_run_checks;
        for (invariants::violation& v : rep.violations) {
          v.detail += " (mid-run check at scheduling point " + std::to_string(step) + ")";
          if (out.mid_run_violations.size() < 50) out.mid_run_violations.push_back(std::move(v));
        }
      };
    }
    so.chunk_words = N;
    // The ptx memory model keeps the history of these words (the prefill
    // before them is one team's, and happens before every team).
    so.memory_base = s.words();
    so.memory_words = s.word_count();
    so.describe_team = [&](team_id t) -> std::string {
      if (!keep_records || per_team[t].empty() || !per_team[t].back().pending()) return {};
      return "in " + model::describe(per_team[t].back().op);
    };
    scheduler = std::make_unique<sched::scheduler>(so);
  }
  std::unique_ptr<event_recorder> recorder;
  if (extras.events && Subject::has_events) {
    out.initial_snapshot = s.snapshot(clock.load());
    recorder = std::make_unique<event_recorder>(N, pool, w.teams, &clock, scheduler.get());
  }
  access_hook* hook = recorder ? static_cast<access_hook*>(recorder.get()) : scheduler.get();
  // The threads backend's watchdog reads, per team, the operation it is in
  // and how many it has completed.
  std::vector<std::atomic<std::uint64_t>> in_op(w.teams), completed_ops(w.teams);
  std::vector<std::atomic<bool>> team_done(w.teams);
  std::atomic<bool> abandon{false};
  std::mutex finished_lock;
  std::condition_variable finished_cv;
  std::uint32_t teams_finished = 0;
  std::vector<op_counts> counts(w.teams);
  std::vector<std::unique_ptr<team_type>> teams;
  std::vector<std::unique_ptr<typename Subject::concurrent_ops>> algos;
  for (std::uint32_t t = 0; t < w.teams; ++t) {
    teams.push_back(std::make_unique<team_type>(t, w.seed, s.words(), hook, mode == host_mode::threads, s.word_count()));
    if (mode == host_mode::threads) teams.back()->set_abandon_flag(&abandon);
    algos.push_back(s.concurrent_algorithm(*teams[t]));
    if (keep_records) per_team[t].reserve(first[t + 1] - first[t]);
  }
  if (live) {
    live->started = std::make_unique<std::atomic<std::size_t>[]>(w.teams);
    live->completed = std::make_unique<std::atomic<std::size_t>[]>(w.teams);
    live->ready.store(true, std::memory_order_release);
  }
  // Runs operation j as team t. The record goes in before the operation starts,
  // pending, so that an operation a stopped run leaves in flight stays in the
  // history as pending. Records go to the team's list (where a live trace
  // reads them as the run goes); a sequential run's are put back in
  // execution order at the end.
  auto step = [&](std::uint32_t t, std::uint64_t j) {
    const model::operation op = op_at(j);
    auto& into = per_team[t];
    std::size_t slot = 0;
    if (keep_records) {
      slot = into.size();
      into.push_back({t, op, status::ok, false, 0, clock.fetch_add(1, std::memory_order_seq_cst), model::no_stamp});
      // Published before the operation's first shared access: a writer that
      // sees an answer this operation caused sees the operation too.
      if (live) live->started[t].store(slot + 1, std::memory_order_release);
    }
    // The stamps order operations as the device's clock does (an acq_rel
    // RMW: exec/cuda/recording.cuh); under the ptx memory model that order
    // is happens-before, and nothing stronger (exec/sched/memory_model.hpp).
    if (scheduler) scheduler->stamp();
    op_result r;
    try {
      r = Subject::apply(*algos[t], op);
    } catch (const access_fault& f) {
      // The operation stops where it is (its locks stay held); the error word
      // stops the others at their next operation.
      r = {status::corrupt, false, 0};
      std::atomic_ref<std::uint64_t>(s.words()[error_word_offset]).store(error_corrupt);
      std::lock_guard<std::mutex> guard(fault_lock);
      if (fault_detail.empty()) fault_detail = "word " + std::to_string(f.word);
    } catch (const run_stopped&) {
      r = {status::stopped, false, 0};
    }
    if (scheduler) scheduler->stamp();
    const std::uint64_t ret = clock.fetch_add(1, std::memory_order_seq_cst);
    if (keep_records) {
      model::op_record& rec = into[slot];
      rec.st = r.st;
      rec.ok = r.ok;
      rec.value = r.value;
      rec.ret = ret;
      if (live) live->completed[t].store(slot + 1, std::memory_order_release);
    }
    counts[t].add(op.kind, r);
    if (r.st != status::ok) note_error(r, op, t);
    return r;
  };
  // A team's whole share of the concurrent phase; it stops at its first error
  // (the error word then stops the others at their next operation).
  auto team_body = [&](std::uint32_t t) {
    for (std::uint64_t j = first[t]; j < first[t + 1]; ++j) {
      in_op[t].store(j, std::memory_order_relaxed);
      if (step(t, j).st != status::ok) break;
      completed_ops[t].fetch_add(1, std::memory_order_relaxed);
      if (scheduler) scheduler->completed_operation();
    }
    team_done[t].store(true, std::memory_order_release);
    {
      std::lock_guard<std::mutex> g(finished_lock);
      ++teams_finished;
    }
    finished_cv.notify_one();
  };
  if (extras.before_concurrent) extras.before_concurrent(s.words(), s.word_count());

  const auto start = std::chrono::steady_clock::now();
  if (out.report.first_error == status::ok && out.prefill_stop == sched::stop_reason::completed) {
    if (mode == host_mode::sequential) {
      // Teams take turns, one operation each, until all are done.
      std::vector<std::uint64_t> next(w.teams), end(w.teams);
      for (std::uint32_t t = 0; t < w.teams; ++t) {
        next[t] = first[t];
        end[t] = first[t + 1];
      }
      bool stop = false, more = true;
      while (more && !stop) {
        more = false;
        for (std::uint32_t t = 0; t < w.teams && !stop; ++t) {
          if (next[t] == end[t]) continue;
          stop = step(t, next[t]++).st != status::ok;
          more = true;
        }
      }
    } else if (mode == host_mode::scheduled) {
      std::vector<std::function<void()>> bodies;
      for (std::uint32_t t = 0; t < w.teams; ++t) bodies.emplace_back([&team_body, t] { team_body(t); });
      *sched_outcome = scheduler->run(std::move(bodies));
    } else {
      std::barrier sync(static_cast<std::ptrdiff_t>(w.teams));
      std::vector<std::thread> threads;
      std::atomic<bool> abandoned{false};
      try {
        for (std::uint32_t t = 0; t < w.teams; ++t) {
          threads.emplace_back([&, t] {
            sync.arrive_and_wait();
            if (!abandoned.load()) team_body(t);
          });
        }
      } catch (const std::system_error& e) {
        // A thread or process limit: the teams already started wait at the
        // barrier. Arrive for every team that never started, so that they
        // pass it, see `abandoned` and return; then say which thread failed.
        abandoned = true;
        const std::size_t started = threads.size();
        (void)sync.arrive(static_cast<std::ptrdiff_t>(w.teams - started));
        for (std::thread& th : threads) th.join();
        throw std::system_error(e.code(), "cannot start team thread " + std::to_string(started) + " of " + std::to_string(w.teams));
      }
      // Watchdog: a team that completes no operation within the hang bound
      // is hung (a lock never released, a search that never ends). Every
      // team is then stopped where it is, and the run says who and where.
      std::vector<std::uint64_t> seen(w.teams, 0);
      std::vector<std::chrono::steady_clock::time_point> since(w.teams, std::chrono::steady_clock::now());
      for (;;) {
        {
          std::unique_lock<std::mutex> g(finished_lock);
          if (finished_cv.wait_for(g, std::chrono::milliseconds(20), [&] { return teams_finished == w.teams; })) break;
        }
        const auto now = std::chrono::steady_clock::now();
        for (std::uint32_t t = 0; t < w.teams && !abandon.load(); ++t) {
          if (team_done[t].load(std::memory_order_acquire)) continue;
          const std::uint64_t c = completed_ops[t].load(std::memory_order_relaxed);
          if (c != seen[t]) {
            seen[t] = c;
            since[t] = now;
          } else if (std::chrono::duration<double>(now - since[t]).count() > extras.hang_seconds) {
            const std::uint64_t j = in_op[t].load(std::memory_order_relaxed);
            char secs[32];
            std::snprintf(secs, sizeof secs, "%g", extras.hang_seconds);
            out.hang_report = "team " + std::to_string(t) + " completed no operation for " + secs + " s, in " +
                              model::describe(op_at(j)) + " (operation " + std::to_string(j) +
                              "): every team stopped where it was, operations in flight pending";
            abandon.store(true);
          }
        }
        if (abandon.load()) break;
      }
      for (std::thread& th : threads) th.join();
    }
  }
  out.report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  for (std::uint32_t t = 0; t < w.teams; ++t) {
    for (int k = 0; k < 3; ++k)
      for (int b = 0; b < 2; ++b) out.report.counts.by_kind[k][b] += counts[t].by_kind[k][b];
    out.report.counts.errors += counts[t].errors;
    out.report.paths += teams[t]->stats();
    if (keep_records) out.records.insert(out.records.end(), per_team[t].begin(), per_team[t].end());
  }
  // Turns: the records in execution order, which is call-stamp order (the
  // clock ticks at every call and return), so that the history is its own
  // linearization, checked exactly against the model.
  if (keep_records && mode == host_mode::sequential) {
    std::sort(out.records.begin(), out.records.end(),
              [](const model::op_record& a, const model::op_record& b) { return a.call < b.call; });
  }
  take_final_state(out, s.inspect());
  out.final_snapshot = s.snapshot(clock.load());
  if (recorder) out.events = recorder->events();
  return out;
}


}  // namespace gfsl
