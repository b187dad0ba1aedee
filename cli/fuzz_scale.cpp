#include "cli/fuzz_scale.hpp"

#include "fuzz/coverage.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <csignal>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli/commands.hpp"
#include "core/gfsl/stats.hpp"
#include "cli/workers.hpp"
#include "fuzz/merge.hpp"
#include "linearizability/report.hpp"
#include "traces/json.hpp"

namespace gfsl::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* lock_file = ".lock";
using steady = std::chrono::steady_clock;

// Set by SIGINT and SIGTERM: the campaign stops after the run in progress,
// records everything and exits 3.
std::atomic<bool> stop_requested{false};

// What groups equal failures across shards: the campaign's signature (first
// detector, invariant, where: fuzz/campaign.hpp).
std::string signature_of(const fuzz::failure& f) { return f.signature; }

void print_failure(const fuzz::failure& f, const fuzz::campaign_options& o) {
  std::printf("FAILURE [%s] after %.2f s (%llu failing runs), shrunk to %llu operations + %zu prefill on %u teams:\n",
              f.signature.c_str(), f.seconds_to_first, (unsigned long long)f.runs, (unsigned long long)f.shrunk.w.ops,
              f.verdict.run.prefill.size(), f.shrunk.w.teams);
  for (const fuzz::detection& d : f.verdict.found) std::printf("  %s: %s\n", d.detector.c_str(), d.detail.c_str());
  if (!f.reproduced) {
    std::printf("  (the shrunk run did not fail again when repeated: %s runs interleave freely; the detectors "
                "and history are those of its failing execution)\n",
                f.shrunk.backend.c_str());
  }
  if (f.dir.empty()) std::printf("not written (its folder could not be written: see the line on standard error)\n");
  else std::printf("written to %s\n", f.dir.c_str());
  std::printf("replay: %s replay %s\n", replay_program().c_str(), o.replay_line(f.shrunk).c_str());
}

// Which rare paths the campaign reached, and what PCT made of its change points.
// A path the configuration rules out is named as such, not as never reached.
void print_coverage(const fuzz::campaign_result& r, const fuzz::campaign_options& o) {
  // "; not reachable with --upper thesis: re-raise": grouped by the option
  // that rules them out.
  const auto unreachable_text = [](const std::map<std::string, std::string>& by_option) {
    std::string out;
    for (const auto& [why, names] : by_option) out += "; not reachable with " + why + ": " + names;
    return out;
  };
  std::string never;
  std::map<std::string, std::string> disabled;
  std::size_t reached = 0, possible = 0;
  for (const gfsl::rare_path& p : gfsl::rare_paths) {
    const std::string why = fuzz::disabled_by(o, p.name);
    if (!why.empty() && !(r.paths.*p.count)) {
      std::string& names = disabled[why];
      names += (names.empty() ? "" : ", ") + std::string(p.name);
      continue;
    }
    ++possible;
    if (r.paths.*p.count) ++reached;
    else never += std::string(never.empty() ? "" : ", ") + p.name;
  }
  if (o.limits.subject == subject_kind::gfsl) std::printf("rare paths: %zu of %zu reached, in %llu combinations; never reached: %s%s\n", reached, possible,
              (unsigned long long)r.path_combinations, never.empty() ? "none" : never.c_str(), unreachable_text(disabled).c_str());
  // Interleaving coverage (fuzz/coverage.hpp): scheduled host runs only.
  if (o.backend == "host") {
    std::string pairs_never;
    std::map<std::string, std::string> pairs_disabled;
    std::size_t pairs_reached = 0, pairs_possible = 0;
    for (int bit : fuzz::pair_bits(o.limits.subject)) {
      const bool hit = (r.pairs >> bit & 1u) != 0;
      const std::string why = fuzz::pair_disabled_by(o, bit);
      if (!why.empty() && !hit) {
        std::string& names = pairs_disabled[why];
        names += (names.empty() ? "" : ", ") + fuzz::pair_name(o.limits.subject, bit);
        continue;
      }
      ++pairs_possible;
      if (hit) ++pairs_reached;
      else pairs_never += (pairs_never.empty() ? "" : ", ") + fuzz::pair_name(o.limits.subject, bit);
    }
    std::printf("coverage pairs: %zu of %zu reached (%llu runs with a targeted park, %llu of them held until the effect); "
                "never reached: %s%s\n",
                pairs_reached, pairs_possible, (unsigned long long)r.hold_runs, (unsigned long long)r.hold_met,
                pairs_never.empty() ? "none" : pairs_never.c_str(), unreachable_text(pairs_disabled).c_str());
  }
  if (r.pct_runs) {
    std::printf("pct: %llu runs made %llu of the %llu priority changes they drew (k measured by a dry run)\n",
                (unsigned long long)r.pct_runs, (unsigned long long)r.pct_changes, (unsigned long long)r.pct_change_points);
  }
}

bool finished(const std::string& reason) { return reason == "budget" || reason == "failure"; }

// A campaign in this process: every run journalled as it ends.
int run_here(fuzz::campaign_options o, const scale_options& s) {
  const fs::path dir(o.out_dir);
  const std::string journal_path = (dir / fuzz::journal_file).string();
  fuzz::run_totals before;
  fuzz::journal_writer journal;
  // A resumed campaign's failures journalled before the resume: still its
  // failures, whether or not this process finds them again.
  std::vector<fuzz::failure_entry> earlier;
  if (s.resuming) {
    fuzz::journal_summary prior;
    if (std::string e = fuzz::read_journal(journal_path, prior); !e.empty()) {
      std::fprintf(stderr, "gfsl fuzz: --resume: %s\n", gfsl::lin::printable(e).c_str());
      return exit_usage;
    }
    if (finished(prior.end_reason)) {
      std::printf("gfsl fuzz: %s ended (%s) after %llu runs: nothing to resume\n", gfsl::lin::printable(o.out_dir).c_str(),
                  gfsl::lin::printable(prior.end_reason).c_str(),
                  (unsigned long long)prior.all.runs);
      return prior.failures.empty() ? exit_ok : exit_violation;
    }
    // A failure folder being written when the campaign was killed is
    // dropped: its batch runs again and writes it whole.
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (e.path().filename().string().rfind(".staging-", 0) == 0) fs::remove_all(e.path(), ec);
    }
    // Every run journalled stays counted, those of the unfinished batch
    // too: the batch runs again from its start (its seed is fixed) without
    // journalling its first prior.open.runs runs a second time.
    before = prior.all;
    earlier = prior.failures;
    o.first_batch = prior.batches_done;
    o.seconds_before = prior.seconds;
    o.runs_before = prior.all.runs;
    o.replay_runs = prior.open.runs;
    // A torn last line (a write cut by a kill or a full disk) goes, so that
    // the next line starts a line of its own.
    if (!prior.torn_tail.empty() && ::truncate(journal_path.c_str(), static_cast<off_t>(prior.whole_bytes)) != 0) {
      std::fprintf(stderr, "gfsl fuzz: --resume: %s: cannot cut its torn last line: %s\n",
                   gfsl::lin::printable(journal_path).c_str(), std::strerror(errno));
      return exit_run_error;
    }
    if (std::string e = journal.open(journal_path); !e.empty()) {
      std::fprintf(stderr, "gfsl fuzz: %s\n", gfsl::lin::printable(e).c_str());
      return exit_usage;
    }
    if (std::string e = journal.append(fuzz::resume_line(prior.batches_done, prior.open.runs), true); !e.empty()) {
      std::fprintf(stderr, "gfsl fuzz: %s\n", gfsl::lin::printable(e).c_str());
      return exit_run_error;
    }
    if (s.progress) {
      std::fprintf(stderr, "gfsl fuzz: resuming %s at batch %llu (%llu runs kept, %llu of them in that batch, %.1f s spent)\n",
                   gfsl::lin::printable(o.out_dir).c_str(), (unsigned long long)prior.batches_done, (unsigned long long)prior.all.runs,
                   (unsigned long long)prior.open.runs, prior.seconds);
    }
  } else {
    if (std::string e = journal.create(journal_path, fuzz::header_line(header_of(o, s, 0))); !e.empty()) {
      std::fprintf(stderr, "gfsl fuzz: --out: %s\n", gfsl::lin::printable(e).c_str());
      return exit_usage;
    }
  }
  // A signal, or a journal that cannot be written (a full disk), ends the
  // campaign after the run in progress.
  stop_on_signals(stop_requested);
  std::string journal_error;
  const steady::time_point t0 = steady::now();
  const double seconds_before = o.seconds_before;
  auto campaign_time = [&] { return seconds_before + std::chrono::duration<double>(steady::now() - t0).count(); };
  o.cancel = &stop_requested;
  o.on_run = [&](std::uint64_t batch, std::uint64_t index, const fuzz::run_config& c, const fuzz::judgement& j) {
    if (!journal_error.empty()) return;
    journal_error = journal.append(fuzz::run_line(batch, index, c.w.ops + j.run.prefill.size(), j.undecided, j.failed(), j.run.report.paths,
                                                 j.outcome.pairs));
    if (!journal_error.empty()) stop_requested = true;
  };
  o.on_batch = [&](std::uint64_t batch, std::uint64_t runs) {
    if (!journal_error.empty()) return;
    journal_error = journal.append(fuzz::batch_line(batch, runs, campaign_time()), true);
    if (!journal_error.empty()) stop_requested = true;
  };
  // Each failure is journalled as soon as its folder is in place, before
  // anything prints it: a kill at any later moment keeps it, and merge and
  // --resume count it once (a later line of the same signature replaces it).
  std::set<std::string> journalled;  // signatures
  bool folder_failed_first = false;  // the line names the first write that failed
  o.on_failure = [&](const fuzz::failure& f) -> std::string {
    if (!journal_error.empty()) return journal_error;
    if (f.dir.empty() && !o.out_dir.empty()) folder_failed_first = true;
    fuzz::failure_entry e;
    e.signature = signature_of(f);
    const auto& found = f.verdict.found.empty() ? f.first_found : f.verdict.found;
    if (!found.empty()) {
      e.detector = found.front().detector;
      e.detail = found.front().detail;
    }
    e.dir = f.dir;
    e.replay = o.replay_line(f.shrunk);
    e.seconds = f.seconds_to_first;
    e.ops = f.shrunk.w.ops;
    journal_error = journal.append(fuzz::failure_line(e), true);
    if (!journal_error.empty()) {
      stop_requested = true;
      return journal_error;
    }
    journalled.insert(e.signature);
    return {};
  };
  fuzz::campaign_result r = fuzz::run_campaign(o);
  r.runs += before.runs;
  r.ops += before.ops;
  r.undecided += before.undecided;
  r.paths += before.paths;
  r.pairs |= before.pairs;
  r.seconds = campaign_time();
  std::vector<const fuzz::failure*> failures;
  if (r.found) failures.push_back(&*r.found);
  for (const fuzz::failure& f : r.further) failures.push_back(&f);
  // A write that failed under way (the journal, a failure's folder) stopped
  // the campaign: it is neither finished nor merely interrupted, and its end
  // line, if the journal still takes one, says "interrupted" so that
  // --resume goes on once there is room.
  const bool write_failed = !journal_error.empty() || !r.write_error.empty();
  for (const fuzz::failure* f : failures) {
    earlier.erase(std::remove_if(earlier.begin(), earlier.end(),
                                 [&](const fuzz::failure_entry& e) { return e.signature == signature_of(*f); }),
                  earlier.end());
  }
  const bool any_failure = !failures.empty() || !earlier.empty();
  // A campaign that stops at its first failure has finished there, however
  // its shrinking ended; one that goes on after failures (--keep-going) and
  // was interrupted has not: its budget is not spent, --resume goes on (it
  // was journalled as ended by "failure", and --resume had nothing to do).
  const bool cut_short = r.interrupted && (o.keep_going || !r.found);
  const std::string reason = write_failed ? "interrupted" : cut_short ? "interrupted" : any_failure ? "failure" : "budget";
  if (journal_error.empty()) journal_error = journal.append(fuzz::end_line(reason, r.seconds), true);
  const std::string report_error =
      fuzz::write_file_atomically((dir / fuzz::report_file).string(), fuzz::campaign_json(o, r, earlier) + "\n");
  std::printf("gfsl fuzz: seed %llu, %llu runs, %llu operations in %.1f s (%llu undecided)\n", (unsigned long long)o.seed,
              (unsigned long long)r.runs, (unsigned long long)r.ops, r.seconds, (unsigned long long)r.undecided);
  print_coverage(r, o);
  if (failures.size() + earlier.size() > 1) std::printf("%zu failure signatures\n", failures.size() + earlier.size());
  for (const fuzz::failure* f : failures) print_failure(*f, o);
  for (const fuzz::failure_entry& e : earlier) {
    std::printf("FAILURE [%s] after %.2f s, journalled before the resume (%llu operations):\n  %s: %s\n",
                gfsl::lin::printable(e.signature).c_str(), e.seconds, (unsigned long long)e.ops, gfsl::lin::printable(e.detector).c_str(),
                gfsl::lin::printable(e.detail).c_str());
    if (e.dir.empty()) std::printf("not written (its folder could not be written)\n");
    else std::printf("written to %s\n", gfsl::lin::printable(e.dir).c_str());
    std::printf("replay: %s replay %s\n", replay_program().c_str(), gfsl::lin::printable(e.replay).c_str());
  }
  std::fflush(stdout);
  // One line, exit 4, for any write that failed: the first error, and what
  // is kept (the journal's failures, a folder it may lack, which
  // `gfsl fuzz merge` counts from the folder).
  const std::string first_error = !r.write_error.empty() && (folder_failed_first || journal_error.empty()) ? r.write_error
                                  : !journal_error.empty()                                               ? journal_error
                                                                                                          : report_error;
  if (!first_error.empty()) {
    std::size_t kept_failures = 0;
    for (const fuzz::failure* f : failures) kept_failures += journalled.count(signature_of(*f));
    const std::string kept = failures.empty() ? "no failure found; " + journal_path + " holds the runs before it"
                                              : std::to_string(kept_failures) + " of " + std::to_string(failures.size()) +
                                                    (failures.size() == 1 ? " failure" : " failures") + " journalled in " + journal_path;
    std::fprintf(stderr, "gfsl fuzz: %s; the campaign stopped there (%s)\n", gfsl::lin::printable(first_error).c_str(),
                 gfsl::lin::printable(kept).c_str());
    return exit_run_error;
  }
  if (cut_short) {
    std::printf("interrupted: %llu runs recorded in %s; gfsl fuzz --resume %s continues\n", (unsigned long long)r.runs,
                gfsl::lin::printable(journal_path).c_str(), gfsl::lin::printable(o.out_dir).c_str());
  }
  // Failures found are counted whether or not the search was cut short.
  if (any_failure) return exit_violation;
  if (r.interrupted) return exit_undecided;
  std::printf("no failure\n");
  return exit_ok;
}

// The command line of worker j: shard (shard + shards*j) of shards*workers,
// so that the workers together take exactly this campaign's batches.
std::vector<std::string> worker_args(const fuzz::campaign_options& o, const scale_options& s, unsigned j, unsigned workers,
                                     const std::string& dir, const std::string& device) {
  // --max-runs is the campaign's: each worker takes its share.
  const std::uint64_t max_runs = o.max_runs ? (o.max_runs + workers - 1) / workers : 0;
  std::vector<std::string> a{"fuzz", "--backend", o.backend, "--subject", subject_name(o.limits.subject), "--variant",
                             variant_label(o.limits.subject, o.choice), "--granularity",
                             s.granularity, "--seconds", std::to_string(o.seconds), "--shrink-seconds",
                             std::to_string(o.shrink_seconds), "--max-runs", std::to_string(max_runs),
                             "--seed", std::to_string(o.seed), "--shard",
                             std::to_string(o.shard + o.shards * j) + "/" + std::to_string(o.shards * workers), "--max-ops",
                             std::to_string(o.limits.max_ops), "--max-teams", std::to_string(o.limits.max_teams), "--max-range",
                             std::to_string(o.limits.max_range), "--out", dir, "--progress", "off"};
  if (const std::string bug = mutant_label(o.limits.subject, o.choice); bug != "none") a.insert(a.end(), {"--mutant", bug});
  a.insert(a.end(), {"--memory", fuzz::memory_choice_name(o.limits.memory)});
  // The upper-level rule is the campaign's (workers would otherwise take the default).
  a.insert(a.end(), {"--upper", fuzz::upper_choice_name(o.limits.upper)});
  if (o.keep_going) a.push_back("--keep-going");
  if (!device.empty()) a.insert(a.end(), {"--worker-device", device});
  return a;
}

// Whether another process owns campaign folder `dir` (its .lock is held):
// "in use by process N ..." when it does, "" when it is free or has no lock
// file. The lock is not kept: the worker started there takes it.
std::string folder_in_use(const fs::path& dir) {
  const std::string path = (dir / lock_file).string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string owner;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string pid(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) pid = "unknown";
    owner = "in use by process " + pid;
  }
  ::close(fd);  // releases the lock if it was taken here
  return owner;
}

// A campaign run by worker processes, merged into one report.
int run_workers_campaign(fuzz::campaign_options o, const scale_options& s) {
  const fs::path dir(o.out_dir);
  std::vector<device_slot> devices;
  if (!s.devices.empty()) {
    if (std::string e = resolve_devices(s.devices, devices); !e.empty()) {
      std::fprintf(stderr, "gfsl fuzz: %s\n", gfsl::lin::printable(e).c_str());
      return exit_usage;
    }
  }
  const unsigned workers = devices.empty() ? s.jobs : static_cast<unsigned>(devices.size());
  const std::string journal_path = (dir / fuzz::journal_file).string();
  fuzz::journal_writer journal;
  if (s.resuming) {
    fuzz::journal_summary prior;
    if (std::string e = fuzz::read_journal(journal_path, prior); !e.empty()) {
      std::fprintf(stderr, "gfsl fuzz: --resume: %s\n", gfsl::lin::printable(e).c_str());
      return exit_usage;
    }
    if (prior.header.workers != workers) {
      std::fprintf(stderr, "gfsl fuzz: --resume %s: the campaign ran %u workers, %u can be started here (--devices %s)\n",
                   gfsl::lin::printable(o.out_dir).c_str(), prior.header.workers, workers, gfsl::lin::printable(s.devices).c_str());
      return exit_usage;
    }
    // A parent killed with SIGKILL leaves its workers finishing the run
    // under way (they were sent SIGTERM): a worker started in a folder one
    // of them still owns would be refused, in its log alone (the resume
    // exited 2 with nothing on stderr). Refused here, before anything starts.
    std::vector<std::string> busy;
    for (unsigned j = 0; j < workers; ++j) {
      const std::string owner = folder_in_use(dir / ("worker-" + std::to_string(j)));
      if (!owner.empty()) busy.push_back("worker-" + std::to_string(j) + " " + owner);
    }
    if (!busy.empty()) {
      std::string list;
      for (const std::string& b : busy) list += (list.empty() ? "" : ", ") + b;
      std::fprintf(stderr, "gfsl fuzz: --resume %s: %s (a worker of the stopped campaign still finishing its run; wait for it to "
                           "end, or stop it, and resume again)\n",
                   gfsl::lin::printable(o.out_dir).c_str(), gfsl::lin::printable(list).c_str());
      return exit_usage;
    }
  }
  if (std::string e = s.resuming ? journal.open(journal_path) : journal.create(journal_path, fuzz::header_line(header_of(o, s, workers)));
      !e.empty()) {
    std::fprintf(stderr, "gfsl fuzz: --out: %s\n", gfsl::lin::printable(e).c_str());
    return exit_usage;
  }
  std::vector<worker_plan> plans;
  std::vector<std::size_t> plan_worker;
  for (unsigned j = 0; j < workers; ++j) {
    const std::string wdir = (dir / ("worker-" + std::to_string(j))).string();
    const std::string device = devices.empty() ? "" : devices[j].visible;
    worker_plan p;
    p.name = "worker " + std::to_string(j) + (device.empty() ? "" : " (device " + std::to_string(devices[j].index) + ")");
    p.restart_args = {"fuzz", "--resume", wdir, "--progress", "off"};
    if (!device.empty()) p.restart_args.insert(p.restart_args.end(), {"--worker-device", device});
    p.args = worker_args(o, s, j, workers, wdir, device);
    if (!device.empty()) p.env.push_back({"CUDA_VISIBLE_DEVICES", device});
    p.output = (dir / ("worker-" + std::to_string(j) + ".log")).string();
    if (s.resuming && fs::exists(fs::path(wdir) / fuzz::journal_file)) {
      fuzz::journal_summary w;
      if (std::string e = fuzz::read_journal((fs::path(wdir) / fuzz::journal_file).string(), w); !e.empty()) {
        std::fprintf(stderr, "gfsl fuzz: --resume: %s\n", gfsl::lin::printable(e).c_str());
        return exit_usage;
      }
      if (finished(w.end_reason)) continue;
      p.args = p.restart_args;
    }
    plans.push_back(p);
    plan_worker.push_back(j);
  }
  stop_on_signals(stop_requested);
  // Progress lines go with --progress; what goes wrong with a worker (it
  // cannot start, it ends on its own error) is said whatever --progress
  // says: one line each (a parent exited 4 with nothing on stderr).
  auto say = [&](const std::string& line) {
    if (s.progress) std::fprintf(stderr, "gfsl fuzz: %s\n", gfsl::lin::printable(line).c_str());
  };
  auto warn = [&](const std::string& line) { std::fprintf(stderr, "gfsl fuzz: %s\n", gfsl::lin::printable(line).c_str()); };
  std::string journal_error;  // the first append to this parent's journal that failed
  auto journal_append = [&](const std::string& line, bool durable) {
    if (!journal_error.empty()) return;
    journal_error = journal.append(line, durable);
  };
  say("running " + std::to_string(plans.size()) + " worker process(es) in " + o.out_dir + "/worker-<j>/ (output in worker-<j>.log)");
  bool any_failure = false;
  const steady::time_point started = steady::now();
  steady::time_point next_progress = started + std::chrono::seconds(10);
  const std::vector<worker_result> results = run_workers(
      plans, 3, stop_requested,
      [&](std::size_t i, const worker_result& r) {
        const bool fine = !r.signal && (r.code == exit_ok || r.code == exit_violation || r.code == exit_undecided);
        if (fine || r.stopped) say(plans[i].name + ": " + r.status);
        else warn(plans[i].name + ": " + r.status + (r.last_line.empty() ? "" : ": " + r.last_line) + " (" + plans[i].output + ")");
        if (!stop_requested.load()) {
          std::string line = "{\"type\":\"worker\",\"worker\":" + std::to_string(plan_worker[i]) + ",\"status\":";
          traces::json::append_string(line, r.status);
          journal_append(line + "}", false);
        }
        any_failure = any_failure || r.code == exit_violation;
        // The campaign stops at its first failure, unless it goes on after
        // failures (--keep-going): a worker that ended with some stopped
        // the others' shards short of their budget.
        return r.code == exit_violation && !o.keep_going;
      },
      warn, [&] {
        // Every ten seconds, the campaign so far, from the workers' journals.
        if (!s.progress || steady::now() < next_progress) return;
        next_progress = steady::now() + std::chrono::seconds(10);
        fuzz::merged_campaigns so_far;
        if (!fuzz::merge_campaigns({o.out_dir}, so_far).empty()) return;
        std::fprintf(stderr, "[fuzz %u workers] %6.1f s  %llu runs  %llu ops  splits %llu merges %llu  failures %llu\n", workers,
                     std::chrono::duration<double>(steady::now() - started).count(), (unsigned long long)so_far.totals.runs,
                     (unsigned long long)so_far.totals.ops, (unsigned long long)so_far.totals.paths.splits,
                     (unsigned long long)so_far.totals.paths.merges, (unsigned long long)so_far.failure_count());
      });
  fuzz::merged_campaigns m;
  const std::vector<std::string> folders{o.out_dir};
  if (std::string e = fuzz::merge_campaigns(folders, m); !e.empty()) {
    std::fprintf(stderr, "gfsl fuzz: %s\n", gfsl::lin::printable(e).c_str());
    return exit_run_error;
  }
  int rc = exit_ok;
  bool interrupted = stop_requested.load();
  for (const worker_result& r : results) {
    if (r.code == exit_usage) rc = std::max(rc, exit_usage);
    else if (r.code == exit_undecided) interrupted = true;
    else if (r.code != exit_ok && r.code != exit_violation && !(any_failure && r.signal == SIGTERM)) rc = exit_run_error;
  }
  // A worker that never ran leaves its shard unsearched: the campaign has
  // not reached its budget.
  if (!m.missing.empty() && rc == exit_ok) rc = exit_run_error;
  // A campaign that stops at its first failure has finished there; one
  // that goes on after failures (--keep-going) has not while a shard is
  // unfinished (run_here journals the same).
  const bool unfinished = interrupted || rc != exit_ok;
  const std::string reason = m.failure_count() && (!o.keep_going || !unfinished) ? "failure" : unfinished ? "interrupted" : "budget";
  journal_append(fuzz::end_line(reason, m.seconds), true);
  const std::string report_error = fuzz::write_file_atomically((dir / fuzz::report_file).string(), fuzz::merged_json(m) + "\n");
  std::printf("gfsl fuzz: %u workers\n%s", workers, fuzz::merged_text(m).c_str());
  // One line, exit 4, for a write of this parent's that failed (its
  // journal's worker or end line, report.json), as for a campaign in one
  // process: the first of them, and where the campaign's runs are kept.
  if (const std::string& first = journal_error.empty() ? report_error : journal_error; !first.empty()) {
    std::fprintf(stderr, "gfsl fuzz: %s (the workers' journals hold their runs and failures: gfsl fuzz merge %s reads them)\n",
                 gfsl::lin::printable(first).c_str(), gfsl::lin::printable(o.out_dir).c_str());
    return exit_run_error;
  }
  if (m.failure_count()) return exit_violation;
  if (rc != exit_ok) return rc;
  if (interrupted) {
    std::printf("interrupted; gfsl fuzz --resume %s continues\n", gfsl::lin::printable(o.out_dir).c_str());
    return exit_undecided;
  }
  return exit_ok;
}

}  // namespace

fuzz::campaign_header header_of(const fuzz::campaign_options& o, const scale_options& s, unsigned workers) {
  fuzz::campaign_header h;
  h.backend = o.backend;
  h.subject = subject_name(o.limits.subject);
  h.variant = variant_label(o.limits.subject, o.choice);
  h.mutant = mutant_label(o.limits.subject, o.choice);
  h.granularity = s.granularity;
  h.memory = fuzz::memory_choice_name(o.limits.memory);
  h.upper = fuzz::upper_choice_name(o.limits.upper);
  h.seconds = o.seconds;
  h.shrink_seconds = o.shrink_seconds;
  h.keep_going = o.keep_going;
  h.max_runs = o.max_runs;
  h.seed = o.seed;
  h.max_ops = o.limits.max_ops;
  h.max_teams = o.limits.max_teams;
  h.max_range = o.limits.max_range;
  h.shard = o.shard;
  h.shards = o.shards;
  h.workers = workers;
  h.devices = s.devices;
  h.device = s.worker_device;
  h.shard_source = s.shard_source;
  return h;
}

// The campaign folder's owner: an exclusive flock on FOLDER/.lock, held
// until this process ends (the kernel releases it on any death, SIGKILL
// included, so a stale lock never outlives its owner). The file holds the
// owner's pid for the message a second process prints. Empty when taken,
// else one line.
static std::string own_folder(const fs::path& dir) {
  const std::string path = (dir / lock_file).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return path + ": cannot open the campaign's lock file: " + std::strerror(errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    if (error != EWOULDBLOCK) return path + ": cannot lock the campaign's lock file: " + std::strerror(error);
    std::string pid(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) pid = "unknown";
    return "in use by process " + pid + " (a campaign runs there; wait for it or stop it first)";
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    const int error = errno;
    ::close(fd);
    return path + ": cannot write the campaign's lock file: " + std::strerror(error);
  }
  return {};  // fd stays open, and the lock held, until the process ends
}

int run_fuzz_campaign(fuzz::campaign_options o, const scale_options& s) {
  const fs::path dir(o.out_dir);
  std::error_code ec;
  // A --resume of a folder that is not there says so where its journal is read.
  const bool nothing_to_resume = s.resuming && !fs::is_directory(dir, ec);
  ec.clear();
  if (!nothing_to_resume) fs::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "gfsl fuzz: --out %s: %s\n", gfsl::lin::printable(o.out_dir).c_str(), ec.message().c_str());
    return exit_usage;
  }
  // Taken before the journal is looked at: --overwrite or --resume of a
  // folder whose campaign still runs would delete or fork its work.
  if (std::string e = nothing_to_resume ? std::string() : own_folder(dir); !e.empty()) {
    std::fprintf(stderr, "gfsl fuzz: --out %s: %s\n", gfsl::lin::printable(o.out_dir).c_str(), gfsl::lin::printable(e).c_str());
    return exit_usage;
  }
  const bool has_journal = fs::exists(dir / fuzz::journal_file);
  if (!s.resuming && has_journal) {
    if (!s.overwrite) {
      std::fprintf(stderr,
                   "gfsl fuzz: --out %s holds a campaign already (gfsl fuzz --resume %s continues it; --overwrite starts over)\n",
                   gfsl::lin::printable(o.out_dir).c_str(), gfsl::lin::printable(o.out_dir).c_str());
      return exit_usage;
    }
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (e.path().filename() != lock_file) fs::remove_all(e.path(), ec);  // the lock is this process's
    }
  }
  const bool workers = s.jobs > 1 || !s.devices.empty();
  return workers ? run_workers_campaign(std::move(o), s) : run_here(std::move(o), s);
}

int merge_fuzz_campaigns(const std::vector<std::string>& dirs, const std::string& json_path, const std::string& junit_path) {
  fuzz::merged_campaigns m;
  if (std::string e = fuzz::merge_campaigns(dirs, m); !e.empty()) {
    std::fprintf(stderr, "gfsl fuzz merge: %s\n", gfsl::lin::printable(e).c_str());
    return exit_usage;
  }
  // A report given "-" takes the text report's place on standard output.
  if (is_stdout(json_path) && is_stdout(junit_path)) {
    std::fprintf(stderr, "gfsl fuzz merge: --json - and --junit -: one report on standard output; give the other a FILE\n");
    return exit_usage;
  }
  if (is_stdout(json_path)) std::printf("%s\n", fuzz::merged_json(m).c_str());
  else if (is_stdout(junit_path)) std::fputs(fuzz::merged_junit(m).c_str(), stdout);
  else std::printf("%s", fuzz::merged_text(m).c_str());
  for (const auto& [path, text] : {std::pair{json_path, fuzz::merged_json(m) + "\n"}, std::pair{junit_path, fuzz::merged_junit(m)}}) {
    if (path.empty() || is_stdout(path)) continue;
    if (std::string e = fuzz::write_file_atomically(path, text); !e.empty()) {
      std::fprintf(stderr, "gfsl fuzz merge: %s\n", gfsl::lin::printable(e).c_str());
      return exit_usage;
    }
  }
  if (!m.missing.empty()) {
    std::fprintf(stderr, "gfsl fuzz merge: %zu %s never ran (%s%s): the campaign is not complete\n", m.missing.size(),
                 m.missing.size() == 1 ? "shard" : "shards", gfsl::lin::printable(m.missing.front()).c_str(),
                 m.missing.size() == 1 ? "" : (" ... " + gfsl::lin::printable(m.missing.back())).c_str());
  }
  // A failure wins; shards that never ran leave the campaign undecided:
  // not a pass (exit 3), with a note naming them.
  return m.failure_count() ? exit_violation : !m.missing.empty() ? exit_undecided : exit_ok;
}

}  // namespace gfsl::cli
