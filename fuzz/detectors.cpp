#include "fuzz/detectors.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "linearizability/set_checker.hpp"
#include "model/final_state.hpp"
#include "invariants/snapshot.hpp"
#include "invariants/temporal.hpp"
#if defined(GFSL_HAVE_CUDA)
#include "exec/cuda/device_runner.hpp"
#endif

namespace gfsl::fuzz {

bool judge_linearizability(const std::vector<model::op_record>& history, double seconds, std::vector<detection>& found) {
  std::map<key_type, std::vector<lin::key_op>> by_key;
  for (std::uint32_t i = 0; i < history.size(); ++i) by_key[history[i].op.key].push_back(lin::to_key_op(history[i], i));
  const lin::deadline d = lin::deadline::after_seconds(seconds);
  lin::set_key_checker checker;
  for (auto& [key, ops] : by_key) {
    std::stable_sort(ops.begin(), ops.end(), [](const lin::key_op& a, const lin::key_op& b) { return a.call < b.call; });
    const lin::verdict v = checker.check(ops, d);
    if (v == lin::verdict::unknown) return false;
    if (v == lin::verdict::not_linearizable) {
      std::string detail = "key " + std::to_string(key) + " (" + std::to_string(ops.size()) + " operations) is not linearizable";
      const std::uint32_t at = checker.stuck_at();
      std::string site;
      std::uint64_t at_call = model::no_stamp;
      if (at < ops.size()) {
        const model::op_record& stuck = history[ops[at].index];
        detail += "; stuck at " + lin::describe(key, ops[at]) + " by team " + std::to_string(stuck.team);
        site = std::string(model::op_name(stuck.op.kind)) + "->" + (stuck.pending() ? "pending" : stuck.ok ? "true" : "false");
        at_call = stuck.call;
      }
      found.push_back({"linearizability", detail, true, key, site, at_call});
      return true;
    }
  }
  return true;
}

namespace {

// An invariant's violation; the key it names, if any, is what the failure's
// timeline and interleaving focus on.
detection invariant_detection(const invariants::violation& v) {
  detection d{"invariant:" + v.invariant, v.describe()};
  if (v.key) {
    d.has_key = true;
    d.key = *v.key;
  }
  return d;
}

void judge_structure(const host_run& r, bool quiescent, judgement& j) {
  // A stopped run leaves operations in flight: its structure is a mid-run
  // state, judged by the invariants that hold at every step.
  const auto snap = invariants::check_snapshot(r.final_snapshot, quiescent);
  std::vector<std::string> seen;
  for (const auto& v : snap.violations) {
    if (std::find(seen.begin(), seen.end(), v.invariant) != seen.end()) continue;
    seen.push_back(v.invariant);
    j.found.push_back(invariant_detection(v));
  }
  if (!r.initial_snapshot.words.empty()) {
    const auto temporal = invariants::check_events(r.initial_snapshot, r.events);
    for (const auto& v : temporal.violations) {
      if (std::find(seen.begin(), seen.end(), v.invariant) != seen.end()) continue;
      seen.push_back(v.invariant);
      j.found.push_back(invariant_detection(v));
    }
  }
  for (const auto& v : r.mid_run_violations) {
    if (std::find(seen.begin(), seen.end(), v.invariant) != seen.end()) continue;
    seen.push_back(v.invariant);
    j.found.push_back(invariant_detection(v));
  }
  const auto implied = model::check_implied_final_state(r.prefill, r.records, r.final_entries, 1);
  if (!implied.empty()) j.found.push_back({"final-state", implied.front()});
}

}  // namespace

judgement execute_and_judge(const run_config& given, const judge_options& o) {
  const auto start = std::chrono::steady_clock::now();
  judgement j;
  j.config = given;
  run_config& c = j.config;
  if (c.backend == "host" && (c.so.strat == sched::strategy::pct || c.so.strat == sched::strategy::fair_pct) &&
      c.so.pct_steps == 0) {
    // PCT's k measured: the step count of the same run under the random
    // strategy (records, events and checks off: only its length matters).
    sched::options dry = c.so;
    dry.strat = sched::strategy::random;
    run_extras plain;
    plain.choice = c.choice;
    plain.script = c.script ? &*c.script : nullptr;
    const scheduled_run d = run_scheduled(c.w, dry, 0, false, plain);
    c.so.pct_steps = std::max<std::uint64_t>(1, d.outcome.steps);
    if (c.so.strat == sched::strategy::fair_pct && c.so.fair_after == 0) c.so.fair_after = c.so.pct_steps / 2;
  }
  run_extras ex;
  ex.choice = c.choice;
  ex.events = true;
  ex.check_every = c.backend == "host" ? c.check_every : 0;
  ex.script = c.script ? &*c.script : nullptr;
  if (c.backend == "host") {
    scheduled_run s = run_scheduled(c.w, c.so, 0, true, ex);
    j.run = std::move(s.run);
    j.outcome = std::move(s.outcome);
    if (j.outcome.reason == sched::stop_reason::deadlock || j.outcome.reason == sched::stop_reason::livelock) {
      std::string first = j.outcome.report.substr(0, j.outcome.report.find('\n'));
      j.found.push_back({"hang", std::string(sched::name(j.outcome.reason)) + ": " + first, false, 0, "concurrent phase"});
    }
    if (j.outcome.reason == sched::stop_reason::step_limit) j.undecided = true;
  } else if (c.backend == "threads") {
    j.run = run_on_host(c.w, host_mode::threads, 0, true, ex);
    if (!j.run.hang_report.empty()) j.found.push_back({"hang", j.run.hang_report, false, 0, "concurrent phase"});
  } else {
#if defined(GFSL_HAVE_CUDA)
    if (c.script) {
      j.found.push_back({"run-error", "a scripted workload runs on the host backends only"});
      return j;
    }
    device_options d;
    d.hang_seconds = o.device_hang_seconds;
    d.choice = c.choice;
    d.events = true;
    try {
      const device_run r = run_on_device(c.w, d);
      j.run = r.run;
      if (r.hung || r.timed_out) j.found.push_back({"hang", r.hang_detail.empty() ? "kernel watchdog" : r.hang_detail});
    } catch (const std::exception& e) {
      // A device fault is a detection too (a corrupt pointer followed on the
      // GPU); the device is reset for the next run.
      reset_device_after_fault();
      j.found.push_back({"run-error", e.what()});
      j.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return j;
    }
#else
    j.found.push_back({"run-error", "cuda backend not available in this build"});
#endif
  }
  if (j.run.prefill_stop == sched::stop_reason::deadlock || j.run.prefill_stop == sched::stop_reason::livelock) {
    const std::string first = j.run.prefill_report.substr(0, j.run.prefill_report.find('\n'));
    j.found.push_back({"hang", std::string(sched::name(j.run.prefill_stop)) + " in the prefill: " + first, false, 0, "prefill"});
  }
  if (j.run.report.first_error != status::ok) j.found.push_back({"run-error", j.run.report.error_detail});
  if (!judge_linearizability(model::full_history(j.run.prefill, j.run.records), o.linearizability_seconds, j.found)) j.undecided = true;
  judge_structure(j.run, j.run.prefill_stop == sched::stop_reason::completed && j.outcome.reason == sched::stop_reason::completed, j);
  j.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return j;
}

}  // namespace gfsl::fuzz
