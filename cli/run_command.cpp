// gfsl run / gfsl replay: execute a workload on a backend and print a summary
// with the checks the run allows and the line that replays it.
#include <algorithm>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/run_options.hpp"
#include "cli/subject_options.hpp"
#include "fuzz/coverage.hpp"
#include "fuzz/detectors.hpp"
#include "exec/host_runner.hpp"
#include "model/final_state.hpp"
#include "linearizability/report.hpp"
#include "traces/trace.hpp"
#include <thread>
#include "core/gfsl/invariants.hpp"
#include "core/gfsl/types.hpp"
#include "invariants/snapshot.hpp"
#include "invariants/temporal.hpp"
#include "model/workload.hpp"
#if defined(GFSL_HAVE_CUDA)
#include "exec/cuda/device_runner.hpp"
#endif

namespace gfsl::cli {

namespace {

gfsl::traces::trace_header trace_header_of(const run_options& o, const std::string& device, gfsl::model::clock_kind clock) {
  auto header = gfsl::traces::make_header(o.w, o.backend, device, clock, encode_replay(o));
  // Which algorithm ran (a trace without this field ran thesis, the only one then).
  gfsl::traces::extra_field variant_field;
  variant_field.name = "variant";
  variant_field.s = variant_label(o.w, o.choice);
  header.extra.push_back(variant_field);
  return header;
}

// gfsl run --trace in the binary form on the host backend (scheduled or in
// turns) and the threads backend: the trace is written while the run goes. The prefill first, then every second
// a history block of the operations that returned since the last one, each
// flushed; at the end the rest, the snapshots, the events and the end
// section. SIGINT and SIGTERM are taken by the writer's thread: it writes
// the operations that returned and those in flight (as pending: they may
// or may not have taken effect), closes the trace whole and ends the
// process with exit 3. A run killed outright (SIGKILL, a crash) leaves the
// blocks written so far: gfsl check reads them and calls the trace cut.
class live_trace {
 public:
  live_trace(const run_options& o, const gfsl::traces::trace_header& header) : path_(o.trace), out_(o.trace, header) {
    std::vector<gfsl::model::operation> prefill = o.script ? o.script->prefill : gfsl::model::prefill_operations(o.w);
    if (!gfsl::subject_of(o.w.subject).stores_values) {
      for (gfsl::model::operation& op : prefill) op.value = 0;  // a set's history (core/subject.hpp)
    }
    out_.append(gfsl::model::full_history(prefill, {}));
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    // Blocked here, before the run's threads start, so that they inherit it
    // and only the writer's sigtimedwait takes the signals.
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    try {
      writer_ = std::thread([this] { write_as_it_goes(); });
    } catch (const std::system_error&) {
      pthread_sigmask(SIG_UNBLOCK, &signals_, nullptr);
      throw;  // the caller writes the trace when the run ends instead
    }
  }
  ~live_trace() { stop(); }

  gfsl::live_history live;

  // The run is over: the rest of its records, then its snapshots and events.
  // Throws trace_error.
  void finish(const gfsl::traces::trace_extras& extras) {
    stop();
    if (!failed_.empty()) throw gfsl::traces::trace_error(failed_);
    std::vector<gfsl::model::op_record> rest;
    if (live.ready.load(std::memory_order_acquire)) {
      written_.resize(live.per_team.size(), 0);
      for (std::size_t t = 0; t < live.per_team.size(); ++t) {
        rest.insert(rest.end(), live.per_team[t].begin() + static_cast<std::ptrdiff_t>(written_[t]), live.per_team[t].end());
      }
    }
    out_.append(rest);
    out_.finish(extras);
    pthread_sigmask(SIG_UNBLOCK, &signals_, nullptr);
  }

 private:
  void stop() {
    if (!writer_.joinable()) return;
    done_ = true;
    writer_.join();
  }

  void write_as_it_goes() {
    auto last = std::chrono::steady_clock::now();
    while (!done_.load()) {
      const timespec tick{0, 100 * 1000 * 1000};
      const int sig = sigtimedwait(&signals_, nullptr, &tick);
      if (sig == SIGINT || sig == SIGTERM) interrupted(sig);
      if (std::chrono::steady_clock::now() - last >= std::chrono::seconds(1)) {
        append_returned();
        last = std::chrono::steady_clock::now();
      }
    }
  }

  // One block of the operations that returned since the last block. With
  // `started`, every team's count of started operations too, read right
  // after the returned counts (before the copying), so that few operations
  // start in between and are written pending only for that.
  std::vector<gfsl::model::op_record> returned(std::vector<std::size_t>& upto, std::vector<std::size_t>* started = nullptr) {
    std::vector<gfsl::model::op_record> block;
    if (!live.ready.load(std::memory_order_acquire)) return block;
    const std::size_t teams = live.per_team.size();
    written_.resize(teams, 0);
    upto.resize(teams);
    for (std::size_t t = 0; t < teams; ++t) upto[t] = live.completed[t].load(std::memory_order_acquire);
    if (started) {
      started->resize(teams);
      for (std::size_t t = 0; t < teams; ++t) (*started)[t] = live.started[t].load(std::memory_order_acquire);
    }
    for (std::size_t t = 0; t < teams; ++t) {
      for (std::size_t i = written_[t]; i < upto[t]; ++i) block.push_back(live.per_team[t][i]);
    }
    return block;
  }

  void append_returned() {
    if (!failed_.empty()) return;
    try {
      std::vector<std::size_t> upto;
      const auto block = returned(upto);
      out_.append(block);
      for (std::size_t t = 0; t < upto.size(); ++t) written_[t] = upto[t];
    } catch (const gfsl::traces::trace_error& e) {
      // A run whose history cannot be kept is one nobody can check: it
      // stops at the first failed write rather than run on for nothing.
      // What was written before stays a cut trace that gfsl check reads.
      std::fflush(stdout);
      std::fprintf(stderr, "gfsl run: --trace: %s; the run stopped at this first failed write (exit 4)\n",
                   gfsl::lin::printable(e.what()).c_str());
      std::fflush(stderr);
      std::_Exit(exit_run_error);
    }
  }

  [[noreturn]] void interrupted(int sig) {
    const char* name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    std::size_t pending = 0, total = 0;
    try {
      if (!failed_.empty()) throw gfsl::traces::trace_error(failed_);
      // Every count of returned operations is read before any count of
      // started ones: an operation that caused an answer written here
      // started before that answer returned, so it is written too, returned
      // or pending.
      std::vector<std::size_t> upto, started;
      auto block = returned(upto, &started);
      for (std::size_t t = 0; t < upto.size(); ++t) {
        for (std::size_t i = upto[t]; i < started[t]; ++i) {
          const gfsl::model::op_record& r = live.per_team[t][i];
          gfsl::model::op_record in_flight;
          in_flight.team = r.team;
          in_flight.op = r.op;
          in_flight.call = r.call;
          in_flight.ret = gfsl::model::no_stamp;
          block.push_back(in_flight);
          ++pending;
        }
      }
      out_.append(block);
      out_.finish();  // no snapshot: the structure is mid-run
      total = out_.records();
    } catch (const gfsl::traces::trace_error& e) {
      std::fprintf(stderr, "gfsl run: interrupted by %s; --trace: %s\n", name, gfsl::lin::printable(e.what()).c_str());
      std::fflush(stderr);
      std::_Exit(exit_usage);
    }
    std::fflush(stdout);
    std::fprintf(stderr, "gfsl run: interrupted by %s: %s holds the %zu operations started so far (%zu not known to have returned, written as pending); gfsl check %s\n",
                 name, gfsl::lin::printable(path_).c_str(), total, pending, gfsl::lin::printable(path_).c_str());
    std::fflush(stderr);
    std::_Exit(exit_undecided);
  }

  std::string path_;
  gfsl::traces::trace_recorder out_;
  sigset_t signals_{};
  std::thread writer_;
  std::atomic<bool> done_{false};
  std::vector<std::size_t> written_;
  std::string failed_;
};

// Writes the run's history to --trace FILE (nothing is lost on a failed
// check: the trace is written first). Returns false with one line on stderr.
bool write_trace_file(const run_options& o, const gfsl::host_run& r, const std::string& device, gfsl::model::clock_kind clock,
                      live_trace* live) {
  if (o.trace.empty()) return true;
  try {
    const auto header = trace_header_of(o, device, clock);
    gfsl::traces::trace_extras extras;
    if (!r.final_snapshot.words.empty()) extras.final_snapshot = &r.final_snapshot;
    if (!r.initial_snapshot.words.empty()) {
      extras.initial_snapshot = &r.initial_snapshot;
      extras.events = &r.events;
    }
    if (live) {
      live->finish(extras);
      return true;
    }
    const auto history = gfsl::model::full_history(r.prefill, r.records);
    if (o.trace_format == "json") {
      gfsl::traces::write_trace_json(o.trace, header, history);
    } else {
      // In history blocks, each flushed as it is written: a run killed while
      // it writes leaves a trace that gfsl check reads up to its last block
      // and calls cut.
      gfsl::traces::trace_recorder out(o.trace, header);
      constexpr std::size_t block = 32768;
      for (std::size_t at = 0; at < history.size(); at += block) out.append(&history[at], std::min(block, history.size() - at));
      out.finish(extras);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gfsl run: --trace: %s\n", gfsl::lin::printable(e.what()).c_str());
    return false;
  }
  return true;
}

// cuda --clock off keeps no record of the operations: their answers, and
// the final contents they imply, cannot be compared with anything.
bool history_recorded(const run_options& o) { return !(o.backend == "cuda" && o.clock == "off"); }

// The schedule's lines of a host run: what it made of the strategy, parks,
// tears, the hold and the coverage pairs (nullptr: teams took turns).
void print_schedule(const run_options& o, const gfsl::sched::outcome* schedule) {
  if (schedule) {
    std::printf("schedule: %s, depth %d, granularity %s, seed %llu: %llu scheduling points, %llu switches, %s\n",
                o.sched.c_str(), o.so.depth, gfsl::sched::name(o.so.gran), (unsigned long long)o.so.seed,
                (unsigned long long)schedule->steps, (unsigned long long)schedule->switches,
                gfsl::sched::name(schedule->reason));
    // Fewer than two turns a team: the teams ran nearly one after another
    // (PCT over a long run changes the running team at d-1 points only),
    // and the run says so rather than pass for a concurrent one.
    if (o.w.teams > 1 && schedule->switches < 2ull * o.w.teams) {
      std::printf("warning:  %llu switches among %u teams: they ran nearly one after another, so this run exercised "
                  "little concurrency (--sched random interleaves every access; PCT suits many short runs: gfsl fuzz)\n",
                  (unsigned long long)schedule->switches, o.w.teams);
    }
    if (o.so.mem != gfsl::sched::memory::sc) {
      std::printf("memory:   %s: %llu loads returned a store older than the latest\n", gfsl::sched::name(o.so.mem),
                  (unsigned long long)schedule->stale_reads);
    }
    if (o.so.strat == gfsl::sched::strategy::park) {
      std::printf("park:     at %s, for %u operations of others, one in %u such points%s: %llu parks\n",
                  gfsl::sched::name(o.so.park_at), o.so.park_ops, o.so.park_every,
                  o.so.park_teams == 0   ? ""
                  : o.so.park_teams == 1 ? ", team 0 only"
                                         : (", teams 0 to " + std::to_string(o.so.park_teams - 1) + " only").c_str(),
                  (unsigned long long)schedule->parks);
    }
    if (o.so.tear != gfsl::sched::tear_target::none) {
      std::printf("tear:     %s reads held open: %llu, %llu of them with a write landed while held\n", gfsl::sched::name(o.so.tear),
                  (unsigned long long)schedule->tears, (unsigned long long)schedule->torn);
    }
    if (o.so.strat == gfsl::sched::strategy::pct || o.so.strat == gfsl::sched::strategy::fair_pct) {
      std::printf("pct:      k %llu, %llu of %d priority change points reached\n", (unsigned long long)o.so.pct_steps,
                  (unsigned long long)schedule->priority_changes, std::max(0, o.so.depth - 1));
    }
    if (o.so.hold.active) {
      std::printf("hold:     %s: %s\n", fuzz::hold_text(o.w.subject, o.so.hold).c_str(),
                  !schedule->hold_taken ? "the window was not opened that often; nobody was held"
                  : schedule->hold_met  ? "held until another team's operation made the effect on its chunk"
                                        : "held, and let go without the effect (nothing else could run, or nothing completed)");
    }
    {
      std::string reached;
      for (int bit : fuzz::pair_bits(o.w.subject)) {
        if (schedule->pairs >> bit & 1u) reached += (reached.empty() ? "" : ", ") + fuzz::pair_name(o.w.subject, bit);
      }
      std::printf("pairs:    %s\n", reached.empty() ? "no coverage pair reached" : reached.c_str());
    }
  } else {
    std::printf("schedule: turns: teams take turns, one whole operation each\n");
  }
}

// The workload, its operations by kind and answer, the paths they took, the
// structure they left and how long the concurrent phase took.
void print_counts(const run_options& o, const gfsl::host_run& r) {
  using gfsl::op_kind;
  const auto& c = r.report.counts;
  auto kind = [&](const char* name, op_kind k) {
    const auto& b = c.by_kind[static_cast<int>(k)];
    std::printf("  %-9s %10llu  (true %llu, false %llu)\n", name, static_cast<unsigned long long>(b[0] + b[1]),
                static_cast<unsigned long long>(b[1]), static_cast<unsigned long long>(b[0]));
  };
  std::printf("workload: %s\n", o.w.describe().c_str());
  if (o.backend == "cuda" && o.clock != "off" && o.stamp_group > 1) {
    std::printf("stamps:   a team's operations in groups of up to %u, called at one stamp and returning at the next "
                "(never two on one key)\n", o.stamp_group);
  }
  const bool recorded = history_recorded(o);
  std::printf("prefill:  %zu keys\n", r.prefill.size());
  if (recorded) {
    std::printf("operations:\n");
    kind("insert", op_kind::insert);
    kind("delete", op_kind::remove);
    kind("contains", op_kind::contains);
  } else {
    std::printf("operations: %llu, not recorded (--clock off)\n", static_cast<unsigned long long>(o.w.ops));
  }
  if (c.errors) std::printf("  errors    %10llu\n", static_cast<unsigned long long>(c.errors));
  const double ops_done = static_cast<double>(r.records.empty() ? o.w.ops : r.records.size());
  std::fputs(gfsl::subject_of(o.w.subject).structure_summary(r, o.w, o.choice, ops_done).c_str(), stdout);
  std::printf("elapsed:  %.6f s concurrent phase (%.3f Mops/s)\n", r.report.seconds,
              r.report.seconds > 0 ? ops_done / r.report.seconds / 1e6 : 0.0);
}

// The checks of the structure the run left: its snapshot invariants, its
// event log's temporal invariants, the mid-run checks. A violation makes
// `rc` exit_violation; events the device log dropped, exit_undecided.
void check_structure(const gfsl::host_run& r, const gfsl::sched::outcome* schedule, const run_options& o, bool stopped_mid_run,
                     int& rc) {
  // Snapshot invariants of the final structure, with the fill bound and the
  // model's final state when the history fixes it (sequential runs).
  {
    std::vector<std::pair<gfsl::key_type, gfsl::value_type>> model_state;
    const bool sequential = o.backend == "host" && schedule == nullptr;
    if (sequential) {
      gfsl::model::sequential_map m;
      for (const auto& op : r.prefill) m.apply(op);
      for (const auto& rec : r.records) {
        // An insert that failed above level 0 (a full pool while raising)
        // answered that its key is in level 0 (core: insert_locked).
        const bool in_level0 = rec.op.kind == gfsl::op_kind::insert && rec.ret != gfsl::model::no_stamp && rec.ok;
        if (!rec.pending() || in_level0) m.apply(rec.op);
      }
      model_state = m.entries();
    }
    // A run the scheduler stopped has operations in flight: its structure is
    // a mid-run state, judged by the invariants that hold at every step.
    const bool quiescent = (schedule == nullptr || schedule->reason == gfsl::sched::stop_reason::completed) &&
                           r.prefill_stop == gfsl::sched::stop_reason::completed && !stopped_mid_run && r.hang_report.empty();
    auto snap = gfsl::invariants::check_snapshot(r.final_snapshot, quiescent, sequential ? &model_state : nullptr);
    gfsl::invariants::name_operations_in_flight(snap.violations, r.records);
    if (!snap.violations.empty()) {
      std::printf("check:    FAILED: %zu snapshot invariant violations of %zu checked, first: %s\n", snap.violations.size(),
                  snap.checked.size(), snap.violations.front().describe().c_str());
      rc = exit_violation;
    } else {
      std::printf("check:    final structure: %zu snapshot invariants hold (%zu chunks, %zu live)\n", snap.checked.size(),
                  snap.chunks, snap.live_chunks);
    }
  }
  if (!r.events.empty() || !r.initial_snapshot.words.empty()) {
    auto temporal = gfsl::invariants::check_events(r.initial_snapshot, r.events);
    gfsl::invariants::name_operations_in_flight(temporal.violations, r.records);
    if (!temporal.violations.empty()) {
      std::printf("check:    FAILED: %zu temporal invariant violations, first: %s\n", temporal.violations.size(),
                  temporal.violations.front().describe().c_str());
      rc = exit_violation;
    } else {
      std::printf("check:    %zu structural events: %zu temporal invariants hold\n", temporal.events, temporal.checked.size());
    }
    if (r.events_dropped) {
      // The log kept an exact prefix of the global order: checked above; the
      // rest of the run's events were never recorded, so it is not decided.
      std::printf("events:   the device log filled after %zu events; %llu later events were not recorded or checked "
                  "(raise --event-capacity)\n",
                  r.events.size(), static_cast<unsigned long long>(r.events_dropped));
      if (rc == exit_ok) rc = exit_undecided;
    }
  }
  if (r.mid_run_checks) {
    if (!r.mid_run_violations.empty()) {
      auto v = r.mid_run_violations;
      gfsl::invariants::name_operations_in_flight(v, r.records);
      std::printf("check:    FAILED: mid-run invariant violated: %s\n", v.front().describe().c_str());
      rc = exit_violation;
    } else {
      std::printf("check:    %llu mid-run snapshots: %zu invariants hold at every one\n",
                  (unsigned long long)r.mid_run_checks, gfsl::invariants::mid_run_invariant_names().size());
    }
  }
}

// The answers of the operations: against the sequential model (turns), or
// linearizability when asked (gfsl replay), or said to be gfsl check's.
void check_answers(const run_options& o, const gfsl::host_run& r, const gfsl::sched::outcome* schedule, int& rc) {
  if (o.backend == "host" && !schedule) {
    const std::string mismatch = gfsl::model::first_sequential_mismatch(r.prefill, r.records);
    if (!mismatch.empty()) {
      std::printf("check:    FAILED: %s\n", mismatch.c_str());
      rc = exit_violation;
    } else {
      std::printf("check:    every answer matches the sequential model (teams took turns)\n");
    }
  } else if (!history_recorded(o)) {
    std::printf("check:    answers of concurrent operations are not checked: they were not recorded (--clock off)\n");
  } else if (o.judge_linearizability) {
    std::vector<gfsl::fuzz::detection> found;
    const bool decided = gfsl::fuzz::judge_linearizability(gfsl::model::full_history(r.prefill, r.records),
                                                           o.linearizability_seconds, found);
    if (!found.empty()) {
      std::printf("check:    FAILED: linearizability: %s\n", found.front().detail.c_str());
      rc = exit_violation;
    } else if (!decided) {
      std::printf("check:    linearizability undecided: the checker's %.0f s limit was reached\n", o.linearizability_seconds);
      if (rc == exit_ok) rc = exit_undecided;
    } else {
      std::printf("check:    the history is linearizable, key by key\n");
    }
  } else {
    std::printf("check:    answers of concurrent operations are not checked here (linearizability: gfsl check)\n");
  }
}

int report(const run_options& o, const gfsl::host_run& r, const std::string& device,
           const gfsl::sched::outcome* schedule, gfsl::model::clock_kind clock = gfsl::model::clock_kind::global_counter,
           live_trace* live = nullptr, bool stopped_mid_run = false) {
  const bool traced = write_trace_file(o, r, device, clock, live);
  std::printf("gfsl run: backend %s%s%s\n", o.backend.c_str(), device.empty() ? "" : " on ", device.c_str());
  if (o.backend == "host") print_schedule(o, schedule);
  print_counts(o, r);

  int rc = exit_ok;
  if (r.report.first_error != gfsl::status::ok) {
    std::printf("error:    %s\n", r.report.error_detail.c_str());
    rc = exit_run_error;
  }
  check_structure(r, schedule, o, stopped_mid_run, rc);
  const auto implied = history_recorded(o) ? gfsl::model::check_implied_final_state(r.prefill, r.records, r.final_entries)
                                            : std::vector<std::string>{};
  if (!history_recorded(o)) {
    std::printf("check:    final contents not compared with the operations: they were not recorded (--clock off)\n");
  } else if (!implied.empty()) {
    std::printf("check:    FAILED: final contents disagree with the successful operations: %s\n", implied.front().c_str());
    rc = exit_violation;
  } else {
    std::printf("check:    final contents agree, key by key, with the successful operations\n");
  }
  if (r.prefill_stop != gfsl::sched::stop_reason::completed) {
    std::printf("stopped:  %s in the prefill after %zu completed inserts; the concurrent phase did not run\n",
                gfsl::sched::name(r.prefill_stop), r.prefill.size());
    std::istringstream lines(r.prefill_report);
    for (std::string line; std::getline(lines, line);) std::printf("          %s\n", line.c_str());
    rc = exit_violation;
  }
  if (!r.hang_report.empty()) {
    std::printf("stopped:  hang: %s\n", r.hang_report.c_str());
    rc = exit_violation;
  }
  if (schedule && schedule->reason != gfsl::sched::stop_reason::completed) {
    std::printf("stopped:  %s after %llu scheduling points; %zu teams unfinished, their operations in flight kept as pending\n",
                gfsl::sched::name(schedule->reason), (unsigned long long)schedule->steps, schedule->unfinished.size());
    std::istringstream lines(schedule->report);
    for (std::string line; std::getline(lines, line);) std::printf("          %s\n", line.c_str());
    const bool found = schedule->reason == gfsl::sched::stop_reason::deadlock ||
                       schedule->reason == gfsl::sched::stop_reason::livelock;
    if (found) rc = exit_violation;
    else if (rc == exit_ok) rc = exit_undecided;
  }
  check_answers(o, r, schedule, rc);
  if (!o.trace.empty()) {
    // The run began with its trace open, so a write that failed since is
    // the run's own failure: exit 4 (a trace that could not be opened at
    // all ended the command before the run, with exit 2).
    if (traced) std::printf("trace:    %s (%zu records; gfsl check %s)\n", o.trace.c_str(), r.prefill.size() + r.records.size(), o.trace.c_str());
    else rc = exit_run_error;
  }
  if (o.backend == "host") {
    std::printf("replay:   %s replay %s\n", replay_program().c_str(), encode_replay(o).c_str());
  } else {
    std::printf("replay:   %s replay %s   (cannot be replayed: %s runs interleave freely; this repeats the workload, not the schedule)\n",
                replay_program().c_str(), encode_replay(o).c_str(), o.backend.c_str());
  }
  return rc;
}

}  // namespace

#if defined(GFSL_HAVE_CUDA)
// SIGINT or SIGTERM during a GPU run: the kernel is asked to stop (teams end
// at their next operation) and the run ends with what it recorded. A second
// signal has the default action.
std::atomic<bool> gpu_interrupt{false};
std::atomic<int> gpu_interrupt_signal{0};
extern "C" void on_gpu_interrupt(int sig) {
  gpu_interrupt_signal.store(sig);
  gpu_interrupt.store(true);
  signal(sig, SIG_DFL);
}
#endif

// The progress line of a run (--progress; gfsl check's kind): on stderr,
// drawn at once, then four times a second, in place, and erased when the
// run ends, before the report: the operations of the concurrent phase that
// returned so far (host backends, from the run's live history), or the time
// on the device (cuda).
class run_progress {
 public:
  run_progress(bool on, const gfsl::live_history* live, std::uint64_t total) : on_(on), live_(live), total_(total) {
    if (!on_) return;
    draw();
    try {
      ticker_ = std::thread([this] {
        std::unique_lock<std::mutex> lock(m_);
        while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) draw();
      });
    } catch (const std::system_error&) {
      // no thread: the line stays as first drawn, and is erased at the end
    }
  }
  ~run_progress() { finish(); }
  // The run is over: the last counts, then the line erased.
  void finish() {
    if (!on_) return;
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    wake_.notify_all();
    if (ticker_.joinable()) ticker_.join();
    draw();
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    on_ = false;
  }

 private:
  void draw() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    char line[160];
    if (live_ && live_->ready.load(std::memory_order_acquire)) {
      std::uint64_t done = 0;
      for (std::size_t t = 0; t < live_->per_team.size(); ++t) done += live_->completed[t].load(std::memory_order_acquire);
      std::snprintf(line, sizeof line, "gfsl run: %llu of %llu operations (%.0f%%), %.1f s", static_cast<unsigned long long>(done),
                    static_cast<unsigned long long>(total_), total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0,
                    s);
    } else if (live_) {
      std::snprintf(line, sizeof line, "gfsl run: prefill, %.1f s", s);
    } else {
      std::snprintf(line, sizeof line, "gfsl run: running on the device, %.1f s", s);
    }
    std::fprintf(stderr, "\r%s\033[K", line);
    std::fflush(stderr);
  }

  bool on_;
  const gfsl::live_history* live_;
  std::uint64_t total_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::mutex m_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
};

namespace {

// What a run cannot be asked for, whatever its backend: exit_usage after
// one line that says why; exit_ok otherwise.
int refuse_bad_request(const run_options& o) {
  if (const std::string bad = o.w.validate(); !bad.empty()) {
    std::fprintf(stderr, "gfsl run: %s\n", gfsl::lin::printable(bad).c_str());
    return exit_usage;
  }
  if (has_mutant(o.choice) && o.backend == "cuda") {
    std::fprintf(stderr, "gfsl run: --mutant runs on the CPU backends only (gfsl mutants --backend cuda runs them on the GPU)\n");
    return exit_usage;
  }
  if (o.w.chunk == 8 && o.backend == "cuda") {
    std::fprintf(stderr, "gfsl run: --chunk 8 runs on the host backends only (a GPU team is 16 or 32 lanes)\n");
    return exit_usage;
  }
  if (o.backend == "cuda" && o.clock == "off" && !o.trace.empty()) {
    std::fprintf(stderr, "gfsl run: --trace %s: --clock off records no history to write (use --clock counter or globaltimer)\n",
                 o.trace.c_str());
    return exit_usage;
  }
  if (o.stamp_group != 1 && (o.backend != "cuda" || o.clock == "off")) {
    std::fprintf(stderr, "gfsl run: --stamp-group %u: stamp groups are for recorded GPU runs (--backend cuda, --clock counter or globaltimer)\n",
                 o.stamp_group);
    return exit_usage;
  }
  if (o.stamp_group < 1 || o.stamp_group > static_cast<std::uint32_t>(o.w.chunk)) {
    std::fprintf(stderr, "gfsl run: --stamp-group %u: expected 1 to the chunk size (%u)\n", o.stamp_group,
                 static_cast<unsigned>(o.w.chunk));
    return exit_usage;
  }
  if (o.script && o.backend == "cuda") {
    std::fprintf(stderr, "gfsl run: --team-ops (a listed workload) runs on the host backends only\n");
    return exit_usage;
  }
  return exit_ok;
}

// --backend cuda: the run on the device, SIGINT and SIGTERM asking its
// kernel to stop.
int execute_on_device([[maybe_unused]] run_options& o) {
#if defined(GFSL_HAVE_CUDA)
  if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) {
    std::fprintf(stderr, "gfsl run: --backend cuda: %s\n", why.c_str());
    return exit_usage;
  }
  gfsl::device_options dopt;
  dopt.pool_chunks = o.pool;
  dopt.keep_records = o.clock != "off";
  dopt.stamp_group = o.stamp_group;
  dopt.clock = o.clock == "globaltimer" ? gfsl::model::clock_kind::globaltimer : gfsl::model::clock_kind::device_counter;
  dopt.hang_seconds = o.hang_timeout;
  dopt.watchdog_seconds = o.watchdog;
  dopt.events = o.events;
  dopt.event_capacity = o.event_capacity;
  dopt.choice = o.choice;
  dopt.interrupt = &gpu_interrupt;
  struct sigaction on_signal {}, old_int{}, old_term{};
  on_signal.sa_handler = on_gpu_interrupt;
  sigemptyset(&on_signal.sa_mask);
  sigaction(SIGINT, &on_signal, &old_int);
  sigaction(SIGTERM, &on_signal, &old_term);
  run_progress progress(progress_wanted(o.progress), nullptr, o.w.ops);
  const gfsl::device_run d = gfsl::run_on_device(o.w, dopt);
  progress.finish();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  const char* signal_name = gpu_interrupt_signal.load() == SIGTERM ? "SIGTERM" : "SIGINT";
  if (d.timed_out) {
    std::fprintf(stderr, "gfsl run: a kernel did not finish within the %.0f s watchdog on %s: stopping\n", o.watchdog,
                 d.device_name.c_str());
    std::fflush(stderr);
    std::_Exit(exit_run_error);  // the kernel still holds the device; the process must go
  }
  if (d.interrupted_in_prefill) {
    std::fprintf(stderr, "gfsl run: interrupted by %s during the prefill: the concurrent phase did not start, nothing was recorded\n",
                 signal_name);
    return exit_undecided;
  }
  int rc = report(o, d.run, d.device_name, nullptr, d.clock, nullptr, d.stopped_mid_run);
  if (d.interrupted) {
    std::size_t pending = 0;
    for (const auto& r : d.run.records) pending += r.pending() ? 1 : 0;
    std::fflush(stdout);
    if (o.trace.empty()) {
      std::fprintf(stderr, "gfsl run: interrupted by %s: stopped after %zu operations (no --trace: none written)\n", signal_name,
                   d.run.records.size());
    } else {
      std::fprintf(stderr,
                   "gfsl run: interrupted by %s: %s holds the %zu operations started so far (%zu not known to have returned, "
                   "written as pending); gfsl check %s\n",
                   signal_name, gfsl::lin::printable(o.trace).c_str(), d.run.prefill.size() + d.run.records.size(), pending,
                   gfsl::lin::printable(o.trace).c_str());
    }
    if (rc == exit_ok) rc = exit_undecided;
  }
  if (d.hung) {
    std::printf("hang:     %s\n", d.hang_detail.c_str());
    if (rc == exit_ok || rc == exit_undecided) rc = exit_run_error;
  }
  return rc;
#else
  std::fprintf(stderr, "gfsl run: --backend cuda: not available in this build (configured without nvcc)\n");
  return exit_usage;
#endif
}

}  // namespace

int execute(run_options& o) {
  if (const int e = refuse_bad_request(o); e != exit_ok) return e;
  if (o.backend == "cuda") return execute_on_device(o);
  gfsl::run_extras extras;
  extras.events = o.events;
  extras.choice = o.choice;

  extras.check_every = o.check_every;
  extras.hang_seconds = o.hang_timeout;
  extras.script = o.script ? &*o.script : nullptr;
  if (o.check_every && (o.backend != "host" || o.sched == "turns")) {
    std::fprintf(stderr, "gfsl run: --check-every needs the scheduled host backend: on threads no moment is quiescent, "
                         "and turns only stop between whole operations\n");
    return exit_usage;
  }
  if (o.so.mem != gfsl::sched::memory::sc && (o.backend != "host" || o.sched == "turns")) {
    std::fprintf(stderr, "gfsl run: --memory %s needs the scheduled host backend: its stale loads are choices of the "
                         "deterministic scheduler\n", gfsl::sched::name(o.so.mem));
    return exit_usage;
  }
  const bool turns = o.sched == "turns" && o.backend == "host";
  if (o.backend == "host" && !turns) resolve_defaults(o);
  std::unique_ptr<live_trace> live;
  if (!o.trace.empty() && o.trace_format == "binary") {
    try {
      live = std::make_unique<live_trace>(o, trace_header_of(o, "", gfsl::model::clock_kind::global_counter));
    } catch (const gfsl::traces::trace_error& e) {
      std::fprintf(stderr, "gfsl run: --trace: %s\n", gfsl::lin::printable(e.what()).c_str());
      return exit_usage;
    } catch (const std::system_error&) {
      live.reset();  // no thread to write as the run goes: written when it ends
    }
    if (live) extras.live = &live->live;
  }
  // The progress line reads the live history's counts: the trace's, or one
  // of its own (the records go there instead of the runner's lists).
  const bool progress_on = progress_wanted(o.progress);
  gfsl::live_history progress_live;
  if (progress_on && !extras.live) extras.live = &progress_live;
  run_progress progress(progress_on, extras.live, o.w.ops);
  if (turns) {
    gfsl::host_run r = gfsl::run_on_host(o.w, gfsl::host_mode::sequential, o.pool, true, extras);
    progress.finish();
    return report(o, r, "", nullptr, gfsl::model::clock_kind::global_counter, live.get());
  }
  if (o.backend == "threads") {
    gfsl::host_run r = gfsl::run_on_host(o.w, gfsl::host_mode::threads, o.pool, true, extras);
    progress.finish();
    return report(o, r, "", nullptr, gfsl::model::clock_kind::global_counter, live.get());
  }
  const gfsl::scheduled_run r = gfsl::run_scheduled(o.w, o.so, o.pool, true, extras);
  progress.finish();
  return report(o, r.run, "", &r.outcome, gfsl::model::clock_kind::global_counter, live.get());
}

namespace {

// gfsl run's options as the command line gives them: run_options, and the
// texts resolve_run_options turns into its fields.
struct run_command_options {
  run_options opts;
  std::string mix = "10,10,80";
  std::string granularity = "lane";
  std::string events = "off";
  std::string hot;
  subject_text subject;
  std::string park_at = "lock-cas";
  std::string hold;
  std::string tear = "none";
  std::string prefill_keys, team_ops;
  std::string keys = "uniform";
  std::string upper;  // "": the variant's rule (reraises_by_default)
  std::string memory = "sc";
  std::string stale;
};

// Declares gfsl run's options, grouped as help shows them. Returns
// --sched-seed's option: whether it was given goes into the replay line.
CLI::Option* declare_run_options(CLI::App* run, run_command_options& st) {
  run_options& o = st.opts;
  run->add_option("--backend", o.backend,
                  "host (emulated teams under the deterministic scheduler), threads (one OS thread per team), cuda")
      ->check(CLI::IsMember({"host", "threads", "cuda"}))
      ->capture_default_str();
  o.w.teams = 8;  // a concurrent run unless asked otherwise
  run->add_option("--teams", o.w.teams, "teams (emulated warps / warps)")->check(CLI::Range(1u, 1u << 24))->capture_default_str();
  run->add_option("--ops", o.w.ops, "operations in the concurrent phase, over all teams")->capture_default_str();
  run->add_option("--mix", st.mix, "percentages of insert, delete, contains: I,D,C")->capture_default_str();
  run->add_option("--range", o.w.range, "keys uniform in [1, R]")->check(CLI::Range(1u, gfsl::max_user_key))->capture_default_str();
  run->add_option("--prefill", o.w.prefill, "fraction of the range inserted before the concurrent phase")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  st.subject.chunk_option = run->add_option("--chunk", o.w.chunk, "gfsl: entries per chunk (N): 16 or 32; 8 on the host backends")
      ->check(CLI::IsMember({8, 16, 32}))
      ->capture_default_str();
  run->add_option("--p-chunk", o.w.p_chunk, "probability that a split raises a key")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  run->add_option("--seed", o.w.seed, "workload seed (and the scheduler's, unless --sched-seed)")->capture_default_str();
  run->add_option("--sched", o.sched,
                  "host: random (uniform), pct, fair-pct (PCT, then random), park (random, with teams parked at --park-at "
                  "points while others complete whole operations), turns (whole operations in turn)")
      ->check(CLI::IsMember({"random", "pct", "fair-pct", "park", "turns"}))
      ->capture_default_str();
  run->add_option("--depth", o.so.depth, "pct: bug depth d (d-1 priority change points)")->check(CLI::Range(1, 1000))->capture_default_str();
  run->add_option("--granularity", st.granularity, "host: steps of a team-wide read: chunk, line (128 bytes), lane")
      ->check(CLI::IsMember({"chunk", "line", "lane"}))
      ->capture_default_str();
  run->add_option("--memory", st.memory,
                  "host, scheduled: what loads see: sc (the latest store) or ptx (the PTX model: a load that no acquire, "
                  "fence or RMW orders may return an older store; the choice is part of the schedule)")
      ->check(CLI::IsMember({"sc", "ptx"}))
      ->capture_default_str();
  run->add_option("--stale", st.stale,
                  "with --memory ptx: PCT,SEED: PCT percent of the loads that may see an older store return one, drawn from "
                  "a stream of their own seeded by SEED (default: half, from the schedule's stream)")
      ->type_name("PCT,SEED");
  CLI::Option* sched_seed = run->add_option("--sched-seed", o.so.seed, "host: scheduler seed (default: --seed)");
  o.so.pct_steps = 0;
  run->add_option("--pct-steps", o.so.pct_steps, "pct: k, the expected run length in steps (0: estimated)")->capture_default_str();
  run->add_option("--fair-after", o.so.fair_after, "fair-pct: steps of PCT before random (0: half of k)")->capture_default_str();
  run->add_option("--max-steps", o.so.max_steps, "host: stop after this many scheduling points (0: no bound)")->capture_default_str();
  run->add_option("--livelock-steps", o.so.livelock_steps, "host: scheduling points without a completed operation that count as livelock")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run->add_option("--park-at", st.park_at, "park: lock-cas (before a CAS), after-read (after a chunk read), before-write "
                                            "(between a read and the write it decides), mid-read (inside a chunk read: line or lane granularity)")
      ->check(CLI::IsMember({"lock-cas", "after-read", "before-write", "mid-read"}))
      ->capture_default_str();
  run->add_option("--park-ops", o.so.park_ops, "park: whole operations of other teams a parked team waits for")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  run->add_option("--park-every", o.so.park_every, "park: a team parks at one in this many such points, on average")
      ->check(CLI::Range(1u, 1000000000u))
      ->capture_default_str();
  run->add_option("--park-teams", o.so.park_teams, "park: only teams 0 to this number - 1 park (0: every team)")
      ->capture_default_str();
  run->add_option("--hold", st.hold,
                  "host, any strategy: a targeted park, WINDOW,EFFECT,NTH[,TEAM]: the NTH time a team (or team TEAM) "
                  "opens coverage window WINDOW on a chunk it is held there until another team completes an operation "
                  "that made EFFECT on that chunk, e.g. unlink,split,2 (docs/FUZZING.md lists each subject's windows "
                  "and effects)");
  run->add_option("--tear", st.tear,
                  "host, any --sched: reads held open on purpose: none, or validation (the second read of every "
                  "validation is held after a random number of its lanes until another team has written its chunk and "
                  "completed an operation; lane granularity)")
      ->check(CLI::IsMember({"none", "validation"}))
      ->capture_default_str();
  CLI::Option* team_ops = run->add_option("--team-ops", st.team_ops,
                  "host: each team's operations listed, teams separated by '/', e.g. i5,c7/d5 (team 0 inserts 5 then "
                  "looks up 7; team 1 deletes 5); replaces --teams, --ops and the seed's operations");
  run->add_option("--prefill-keys", st.prefill_keys, "host, with --team-ops: the keys inserted before the concurrent phase, "
                                                      "e.g. 1,2,3 (replaces --prefill)")
      ->needs(team_ops);
  add_subject_options(run, st.subject);
  run->add_option("--mutant", st.subject.mutant, "run with a seeded bug (gfsl mutants --subject S --list lists them)");
  run->add_option("--variant", st.subject.variant,
                  "the structure's variant: gfsl robust (the default) or thesis (the published algorithm); slabhash fixed "
                  "(the default) or published");
  run->add_option("--keys", st.keys, "uniform, or sequential: operation j uses key 1 + j mod range (each team walks its keys upwards)")
      ->check(CLI::IsMember({"uniform", "sequential"}))
      ->capture_default_str();
  run->add_option("--upper", st.upper,
                  "the upper levels' rule: thesis (a deleted raised key leaves no replacement; upper levels drain "
                  "under churn), or reraise (the next key of its level-0 chunk takes its place); default: reraise for "
                  "gfsl robust, thesis for gfsl thesis")
      ->check(CLI::IsMember({"thesis", "reraise"}));
  run->add_option("--hot", st.hot, "P,K: P percent of the operations use keys [1, K] (hot keys); P,K,spread: K keys scattered over the range");
  run->add_option("--pool", o.pool, "chunks in the pool (0: sized from the workload)")->capture_default_str();
  run->add_option("--trace", o.trace, "write the history to this trace file (gfsl check reads it)");
  run->add_option("--trace-format", o.trace_format,
                  "binary (the history, the final snapshot and, with --events on, the event log) or json (JSON lines: the history only)")
      ->check(CLI::IsMember({"binary", "json"}))
      ->capture_default_str();
  run->add_option("--events", st.events, "record the structural event log (chunk writes, allocations) and check it: on, off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  run->add_option("--event-capacity", o.event_capacity,
                  "cuda: events the device log holds, 40 bytes each (0: sized from the workload); a full log keeps "
                  "an exact prefix")
      ->capture_default_str();
  run->add_option("--check-every", o.check_every,
                  "host, scheduled: check the invariants that hold at every step every N scheduling points (0: never)")
      ->capture_default_str();
  run->add_option("--clock", o.clock, "cuda: stamps from a device-wide counter, %globaltimer, or off (recording off)")
      ->check(CLI::IsMember({"counter", "globaltimer", "off"}))
      ->capture_default_str();
  run->add_option("--stamp-group", o.stamp_group,
                  "cuda: a team's operations per stamp: a group of up to this many is called at one stamp and returns at "
                  "the next, never two on one key (1: a stamp at every call and return; at most the chunk size)")
      ->capture_default_str();
  run->add_option("--hang-seconds", o.hang_timeout,
                  "cuda: seconds a team may wait on a lock before the run is stopped on the device; threads: seconds a team "
                  "may go without completing an operation")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run->add_option("--watchdog-seconds", o.watchdog, "cuda: seconds the host waits for a kernel before it gives up on the device")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_progress_option(run, o.progress);
  // 47 options in one list were hard to read: grouped as a user looks for
  // them, each description wrapped at 100 columns.
  group_options(run, {{"Workload", {"--teams", "--ops", "--mix", "--range", "--prefill", "--seed", "--keys", "--hot", "--team-ops", "--prefill-keys"}},
                      {"Structure", {"--subject", "--buckets", "--levels", "--chunk", "--p-chunk", "--variant", "--mutant", "--upper", "--pool"}},
                      {"Backend and schedule", {"--backend", "--sched", "--sched-seed", "--depth", "--pct-steps", "--fair-after", "--granularity",
                                                "--memory", "--stale", "--max-steps", "--livelock-steps"}},
                      {"Parks, holds and tears (host)", {"--park-at", "--park-ops", "--park-every", "--park-teams", "--hold", "--tear"}},
                      {"Recording and checks", {"--trace", "--trace-format", "--events", "--event-capacity", "--check-every", "--clock",
                                                "--stamp-group"}},
                      {"Bounds and output", {"--hang-seconds", "--watchdog-seconds", "--progress"}}});
  run->formatter(std::make_shared<wrapping_formatter>(100));
  return sched_seed;
}

// The command line's texts into st.opts. exit_ok, or exit_usage after one
// line that says what is wrong.
int resolve_run_options(run_command_options& st, bool sched_seed_given) {
  run_options& o = st.opts;
  if (!parse_mix(st.mix, o.w)) {
    std::fprintf(stderr, "gfsl run: --mix %s: expected three percentages I,D,C such as 10,10,80\n", gfsl::lin::printable(st.mix).c_str());
    return exit_usage;
  }
  gfsl::sched::parse(st.granularity, o.so.gran);
  gfsl::sched::parse(st.park_at, o.so.park_at);
  gfsl::sched::parse(st.tear, o.so.tear);
  gfsl::sched::parse(st.memory, o.so.mem);
  if (!st.stale.empty()) {
    unsigned pct = 0;
    unsigned long long seed = 0;
    char extra = 0;
    if (o.so.mem != gfsl::sched::memory::ptx) {
      std::fprintf(stderr, "gfsl run: --stale needs --memory ptx\n");
      return exit_usage;
    }
    if (std::sscanf(st.stale.c_str(), "%u,%llu%c", &pct, &seed, &extra) != 2 || pct > 100 || seed == 0 ||
        st.stale.find('-') != std::string::npos) {
      std::fprintf(stderr, "gfsl run: --stale %s: expected PCT,SEED (a percentage and a seed of 1 or more)\n",
                   gfsl::lin::printable(st.stale).c_str());
      return exit_usage;
    }
    o.so.stale_pct = pct;
    o.so.stale_seed = seed;
  }
  if (o.sched != "turns") gfsl::sched::parse(o.sched, o.so.strat);
  o.sched_seed_given = sched_seed_given;
  o.events = st.events == "on";
  if (const std::string bad = resolve_subject(st.subject, o.w, o.choice); !bad.empty()) {
    std::fprintf(stderr, "gfsl run: %s\n", gfsl::lin::printable(bad).c_str());
    return exit_usage;
  }
  if (!st.hot.empty()) {
    if (!parse_hot(st.hot, o.w)) {
      std::fprintf(stderr, "gfsl run: --hot %s: expected P,K or P,K,spread such as 90,10\n", gfsl::lin::printable(st.hot).c_str());
      return exit_usage;
    }
  }
  o.w.sequential_keys = st.keys == "sequential";
  o.w.reraise = st.upper.empty() ? gfsl::subject_of(o.w.subject).reraises_by_default(o.choice.variant)
                                  : st.upper == "reraise";
  if (!st.team_ops.empty()) {
    std::string bad;
    o.script = gfsl::model::parse_script(st.prefill_keys, st.team_ops, bad);
    if (!o.script) {
      std::fprintf(stderr, "gfsl run: --team-ops/--prefill-keys: %s\n", gfsl::lin::printable(bad).c_str());
      return exit_usage;
    }
    gfsl::model::fit_workload(*o.script, o.w);
  }
  if (!st.hold.empty()) {
    if (o.backend != "host" || o.sched == "turns") {
      std::fprintf(stderr, "gfsl run: --hold needs --backend host and a scheduling strategy (not --sched turns)\n");
      return exit_usage;
    }
    if (std::string bad = fuzz::parse_hold(o.w.subject, st.hold, o.so.hold); !bad.empty()) {
      std::fprintf(stderr, "gfsl run: --%s\n", gfsl::lin::printable(bad).c_str());
      return exit_usage;
    }
    if (o.so.hold.team != gfsl::sched::hold_directive::any_team && o.so.hold.team >= o.w.teams) {
      std::fprintf(stderr, "gfsl run: --hold names team %u: the run has %u teams\n", o.so.hold.team,
                   static_cast<unsigned>(o.w.teams));
      return exit_usage;
    }
  }
  if (o.so.park_teams > o.w.teams) {
    std::fprintf(stderr, "gfsl run: --park-teams %u: the run has %u teams\n", o.so.park_teams, static_cast<unsigned>(o.w.teams));
    return exit_usage;
  }
  return exit_ok;
}

// execute, with what it throws said in one line under the command's name:
// memory or a thread that could not be had is missing environment, any
// other error the run's own.
int execute_reporting(run_options& o, const char* command) {
  try {
    return execute(o);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory\n", command);
    return exit_usage;
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "%s: %s\n", command, e.what());  // a thread limit: missing environment
    return exit_usage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", command, e.what());
    return exit_run_error;
  }
}

}  // namespace

command add_run_command(CLI::App& root) {
  auto st = std::make_shared<run_command_options>();
  CLI::App* run = root.add_subcommand("run", "execute a workload on a backend and check what the run allows");
  CLI::Option* sched_seed = declare_run_options(run, *st);
  return {run, [st, sched_seed] {
            if (const int e = resolve_run_options(*st, sched_seed->count() > 0); e != exit_ok) return e;
            return execute_reporting(st->opts, "gfsl run");
          }};
}

command add_replay_command(CLI::App& root) {
  auto text = std::make_shared<std::string>();
  CLI::App* replay = root.add_subcommand("replay", "run again the run a replay string describes (printed by every run)");
  replay->add_option("replay-string", *text, "the string after 'gfsl replay' in a run's summary")->required();
  return {replay, [text] {
            run_options o;
            if (const std::string bad = decode_replay(*text, o); !bad.empty()) {
              std::fprintf(stderr, "gfsl replay: %s\n", gfsl::lin::printable(bad).c_str());  // the fields are the input's
              return exit_usage;
            }
            o.judge_linearizability = true;
            return execute_reporting(o, "gfsl replay");
          }};
}

}  // namespace gfsl::cli
