// Executes a workload on the CPU backend: emulated teams either taking turns on
// one thread (sequential, deterministic) or each on its own OS thread (real
// concurrency, not replayable).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../model/final_state.hpp"
#include "../core/events.hpp"
#include "../invariants/snapshot.hpp"
#include "../model/script.hpp"
#include "../model/workload.hpp"
#include "../core/registry.hpp"
#include "sched/scheduler.hpp"
#include "../core/gfsl/stats.hpp"
#include "../core/types.hpp"

namespace gfsl {

// sequential: teams take turns, one whole operation each (every answer can be
// checked against the model); scheduled: teams interleave at every shared
// access under the deterministic scheduler; threads: one OS thread per team.
enum class host_mode { sequential, scheduled, threads };

// Operations by kind (insert, delete, contains) and answer (false, true).
struct op_counts {
  std::uint64_t by_kind[3][2] = {};
  std::uint64_t errors = 0;  // operations that did not end with status::ok
  void add(op_kind k, const op_result& r) {
    if (r.st != status::ok) ++errors;
    else ++by_kind[static_cast<int>(k)][r.ok ? 1 : 0];
  }
};

struct run_report {
  op_counts counts;
  path_stats paths;
  double seconds = 0;              // the concurrent phase only
  status first_error = status::ok; // first operation error, if any
  std::string error_detail;        // one line on that error
  std::uint64_t chunks_allocated = 0;
  std::uint32_t pool_chunks = 0;
  int height = 0;                  // highest non-empty level at the end
};

struct host_run {
  run_report report;
  std::vector<model::operation> prefill;
  // The concurrent phase: in execution order for sequential runs, team by
  // team for threaded runs.
  std::vector<model::op_record> records;
  std::vector<std::pair<key_type, value_type>> final_entries;  // level 0 at the end
  std::vector<std::string> structural_problems;
  invariants::snapshot final_snapshot;    // the structure at the end (quiescent)
  invariants::snapshot initial_snapshot;  // before the concurrent phase (with events)
  std::vector<invariants::structural_event> events;  // with run_extras::events
  std::uint64_t events_dropped = 0;       // events past a full device log: `events` is an exact prefix
  std::uint64_t mid_run_checks = 0;       // snapshots checked during a scheduled run
  std::vector<invariants::violation> mid_run_violations;
  // A prefill that did not finish (deadlock, livelock): the concurrent phase
  // did not run, `prefill` holds the operations that completed, and the
  // report says who waits on what, or where the spinning team is.
  sched::stop_reason prefill_stop = sched::stop_reason::completed;
  std::string prefill_report;
  // The threads backend's watchdog stopped the concurrent phase: one line
  // naming the team that completed no operation within the hang bound and
  // the operation it was in. The other teams were stopped where they were
  // (their operations pending), so the final structure is a mid-run state.
  std::string hang_report;
};

// A run's history while it is being made, for a thread that writes it out
// as the run goes (gfsl run --trace). The runner keeps the concurrent
// phase's records here, team by team, each team's list reserved whole so
// that it never moves: of team t's records, [0, completed[t]) have returned
// and [completed[t], started[t]) are in flight (their team, operation and
// call stamp are set and stay; the rest is being written). Both counts are
// published with release stores; `ready` says the lists exist. Every host
// mode (a sequential run's lists are put in execution order at its end).
struct live_history {
  std::atomic<bool> ready{false};
  std::vector<std::vector<model::op_record>> per_team;
  std::unique_ptr<std::atomic<std::size_t>[]> started, completed;
};

// What a run records beyond its history.
struct run_extras {
  // The workload's subject's variant (prefill included) and the seeded bug
  // active in the concurrent phase (core/subject.hpp).
  subject_choice choice;
  bool events = false;           // the structural event log of the concurrent phase
  std::uint64_t check_every = 0; // scheduled runs: check mid-run invariants every N scheduling points
  live_history* live = nullptr;  // runs with records: where they go as they are made
  // The prefill and each team's operations, listed (model/script.hpp)
  // instead of drawn from the workload's seed; its team count must be the
  // workload's (model::fit_workload).
  const model::script* script = nullptr;
  // threads: a team that completes no operation for this long is hung; the
  // run is stopped and says which team, in which operation (hang_report).
  double hang_seconds = 30.0;
  // Tests: changes the structure's words after the prefill, before the
  // concurrent phase (a lock that is never released).
  std::function<void(std::uint64_t* words, std::size_t count)> before_concurrent;
  // Tests: changes the initial structure's words before the prefill (a lock
  // that is never released, a NEXT cycle), to show how a run that cannot
  // finish its prefill ends.
  std::function<void(std::uint64_t* words, std::size_t count)> before_prefill;
};

// A pool large enough for the workload (the subject's sizing, core/subject.hpp),
// or for `keys` inserts (a script's operations).
std::uint32_t default_pool_chunks(const model::workload& w);
std::uint32_t pool_for_keys(double keys, const model::workload& w);

// What every executor reports about the structure it leaves behind (a
// subject's inspect at quiescence).
struct final_state {
  std::uint64_t chunks_allocated = 0;
  int height = 0;  // highest non-empty level (0 for a structure without levels)
  std::vector<std::pair<key_type, std::uint32_t>> entries;  // in key order
  std::vector<std::string> problems;                        // structural problems
};

// Copies what an executor learnt of the final structure into the run.
void take_final_state(host_run& run, final_state&& f);

// Runs prefill then the concurrent phase. `pool_chunks` 0 means the default.
host_run run_on_host(const model::workload& w, host_mode mode, std::uint32_t pool_chunks = 0, bool keep_records = true,
                     const run_extras& extras = {});

struct scheduled_run {
  host_run run;
  sched::outcome outcome;
};

// Runs prefill, then the concurrent phase under the deterministic scheduler.
// A run the scheduler stops (deadlock, livelock, step limit) keeps every
// record, with the operations in flight pending.
scheduled_run run_scheduled(const model::workload& w, const sched::options& o, std::uint32_t pool_chunks = 0,
                            bool keep_records = true, const run_extras& extras = {});

}  // namespace gfsl
