// Everything that defines a run of `gfsl run`, and its one-line replay form:
// `gfsl replay STRING` runs it again, bit for bit on the scheduled backend.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/registry.hpp"
#include "exec/sched/scheduler.hpp"
#include "model/script.hpp"
#include "model/workload.hpp"

namespace gfsl::cli {

struct run_options {
  model::workload w;
  std::string backend = "host";     // host | threads | cuda
  std::string sched = "random";     // host: random | pct | fair-pct | turns
  sched::options so;                // strategy, depth, granularity, seed, k, fair-after, bounds
  bool sched_seed_given = false;
  std::uint32_t pool = 0;           // 0: sized from the workload
  double watchdog = 120.0;          // cuda: the host's bound on each kernel, seconds
  std::string progress = "auto";    // --progress: a progress line on stderr (auto: only on a terminal)
  double hang_timeout = 30.0;       // cuda: a lock wait past this ends the run on the device; threads: a team without a completed operation for this long; seconds
  std::string clock = "counter";    // cuda: counter | globaltimer | off (recording off)
  std::uint32_t stamp_group = 1;    // cuda: a team's operations per stamp group (exec/cuda/recording.cuh)
  std::string trace;                // where to write the history ("" : nowhere)
  std::string trace_format = "binary";  // binary (with snapshots and events) | json (JSON lines, the history only)
  bool events = false;              // record and check the structural event log
  std::uint64_t event_capacity = 0; // cuda: events the device log holds (0: sized from the workload)
  // The workload's subject's variant and seeded bug (core/subject.hpp); a
  // replay line without a variant ran the subject's unnamed_variant.
  subject_choice choice;
  std::uint64_t check_every = 0;    // scheduled host runs: mid-run invariant checks
  // The prefill and each team's operations listed one by one (model/script.hpp;
  // host backends): --prefill-keys/--team-ops, or a shrunk counterexample's
  // replay line. w's teams and ops then match it.
  std::optional<model::script> script;
  // gfsl replay judges the history's linearizability, as the campaign that
  // printed the line did (gfsl run leaves it to gfsl check).
  bool judge_linearizability = false;
  double linearizability_seconds = 60;  // then undecided, never a wrong verdict
};

// Fills what the user left to defaults: the scheduler's seed (the workload's),
// PCT's k (an estimate of the run's length in steps) and fair-pct's bound.
void resolve_defaults(run_options& o);

// "gfsl1:backend=host:teams=4:..." — every field that shapes the run.
std::string encode_replay(const run_options& o);
// Empty on success; otherwise one line naming the bad field.
std::string decode_replay(const std::string& text, run_options& o);

// Runs what `o` describes and prints its summary (gfsl run and gfsl replay).
// Returns the exit code.
int execute(run_options& o);

// Parses "I,D,C" into the workload's mix; false when malformed.
bool parse_mix(const std::string& text, model::workload& w);
// Parses "P,K" or "P,K,spread" into the workload's hot keys; false when malformed.
bool parse_hot(const std::string& text, model::workload& w);

}  // namespace gfsl::cli
