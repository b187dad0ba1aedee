// Runs a fuzzing configuration and judges it with every detector: hang
// (deadlock, livelock), run error (pool exhaustion, corrupt pointer),
// linearizability of the history, each snapshot invariant of the final
// structure, each temporal invariant of the event log, the mid-run
// invariants, and the final contents against the successful operations.
#pragma once

#include <string>
#include <vector>

#include "exec/host_runner.hpp"
#include "fuzz/run_config.hpp"

namespace gfsl::fuzz {

struct detection {
  std::string detector;  // "hang", "run-error", "linearizability", "invariant:<name>", "final-state"
  std::string detail;    // one line
  bool has_key = false;  // the key it is about: linearizability's key found not linearizable, or the key an invariant names
  key_type key = 0;
  // What a failure signature groups by beyond the detector: the kind and
  // answer of the operation linearizability got stuck at, the phase a hang
  // happened in ("" : nothing more).
  std::string site = {};
  // The call stamp of the operation it points at (linearizability: the one
  // it got stuck at), around which a failure's page draws the key's
  // operations; model::no_stamp when it points at none.
  std::uint64_t at_call = model::no_stamp;
};

struct judgement {
  // The run as executed: a PCT run generated without its k (0) has it
  // measured by a dry run of the same workload and schedule seed under the
  // random strategy, so that its change points land inside the run; this is
  // the configuration that replays it.
  run_config config;
  std::vector<detection> found;  // every detector that fired, in the order above; empty: the run passed
  host_run run;
  sched::outcome outcome;        // host backend
  double seconds = 0;            // run and judgement
  bool undecided = false;        // the step limit or the checker's time limit was reached
  bool failed() const { return !found.empty(); }
};

struct judge_options {
  double linearizability_seconds = 10;  // time limit of the check (then undecided, never a wrong verdict)
  double device_hang_seconds = 10;      // cuda: a lock wait this long stops the run on the device (a "hang")
};

judgement execute_and_judge(const run_config& c, const judge_options& o = {});

// The campaign's linearizability detector on its own, key by key
// (P-compositionality), for `gfsl replay`, which must judge a run as the
// campaign that printed its line did. Appends a detection for the first key
// that is not linearizable; returns false when the time limit was reached
// before every key was decided.
bool judge_linearizability(const std::vector<model::op_record>& history, double seconds, std::vector<detection>& found);

}  // namespace gfsl::fuzz
