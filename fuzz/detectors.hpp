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
  bool has_key = false;  // linearizability: the key found not linearizable
  key_type key = 0;
};

struct judgement {
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

}  // namespace gfsl::fuzz
