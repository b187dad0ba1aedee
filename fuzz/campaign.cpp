#include "fuzz/campaign.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <unistd.h>

#include "fuzz/campaign_state.hpp"
#include "fuzz/corpus.hpp"
#include "fuzz/failure_folder.hpp"
#include "fuzz/progress.hpp"
#include "fuzz/scenarios.hpp"
#include "fuzz/shrink_failure.hpp"
#include "model/workload.hpp"

namespace gfsl::fuzz {

namespace {

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

std::string disabled_by(const campaign_options& o, std::string_view name) {
  // Only a delete under the re-raise rule re-raises (core/gfsl/algorithm.hpp).
  if (name == "re-raise" && o.limits.upper == upper_choice::thesis) return "--upper thesis";
  return {};
}

std::string signature(const std::vector<detection>& found) {
  if (found.empty()) return {};
  return found.front().site.empty() ? found.front().detector : found.front().detector + " @ " + found.front().site;
}

}  // namespace gfsl::fuzz
