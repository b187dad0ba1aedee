// A fuzzing campaign: RapidCheck generates whole runs (generators.hpp), each
// run is executed and judged (detectors.hpp), and the first failure is shrunk
// by RapidCheck down to a small run, which is written out with everything
// needed to understand and replay it.
//
// Seeds: batch b of shard i of n uses the RapidCheck seed mix(seed, b*n + i),
// so shards of one campaign never repeat each other's runs and a campaign can
// run as a job array on many machines.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/gfsl/stats.hpp"
#include "fuzz/detectors.hpp"
#include "fuzz/generators.hpp"
#include "fuzz/journal.hpp"

namespace gfsl::fuzz {

struct failure;

struct campaign_options {
  std::string backend = "host";
  double seconds = 60;
  std::uint64_t max_runs = 0;     // stop after this many runs (0: only the time bound)
  subject_choice choice;          // the variant and seeded bug of limits.subject, the runs' subject
  unsigned shard = 0, shards = 1;
  std::uint64_t seed = 1;
  int runs_per_batch = 25;        // RapidCheck cases per batch
  double shrink_seconds = 60;     // shrinking stops after this long (keeps the smallest failure so far)
  // Shrinking also stops after this many candidate runs (0: only the time
  // bound): a bound that shrinks to the same run on any machine.
  std::uint64_t shrink_runs = 0;
  // Cuts in time before delta debugging (fuzz/shrink.hpp); off only to
  // measure the shrinker without them (tests/test_fuzz.cpp).
  bool shrink_cuts = true;
  generator_limits limits;
  judge_options judge;
  std::string out_dir;            // where a failure is written ("" : nowhere)
  // Go on after a failure: failures are grouped by signature (signature()),
  // each new signature shrunk and written once, later runs with a known one
  // only counted. Without it the campaign stops at its first failure.
  bool keep_going = false;
  bool progress = true;           // a live progress line on stderr
  // Turns a configuration into the line that replays it (the CLI's format).
  std::function<std::string(const run_config&)> replay_line;

  // For a caller that drives the campaign from outside (the journal and the
  // signals of `gfsl fuzz`, fuzz/journal.hpp). Batches run in order, one at a
  // time: parallel campaigns are separate processes (shards), since
  // RapidCheck's state is not meant to be shared by threads.
  std::uint64_t first_batch = 0;   // batches before this one are done (a resumed campaign)
  double seconds_before = 0;       // campaign time already spent: counts against `seconds`
  std::uint64_t runs_before = 0;   // runs already done: count against `max_runs`
  // The first replay_runs runs of batch first_batch were journalled before
  // the campaign was stopped. They are run again, since the batch's later
  // runs (RapidCheck's generator, the batch's coverage corpus) follow from
  // them, but not reported through on_run nor counted, and the time budget
  // does not cut them: a resumed campaign keeps every run it had.
  std::uint64_t replay_runs = 0;
  // Set from outside (SIGINT, SIGTERM): stop after the run in progress; a
  // failure being shrunk keeps the smallest form found so far.
  const std::atomic<bool>* cancel = nullptr;
  // Each generated run as it is judged (shrinking candidates are not runs),
  // numbered by its batch and its place in the batch.
  std::function<void(std::uint64_t batch, std::uint64_t index, const run_config&, const judgement&)> on_run;
  // A batch that ran all its cases and passed.
  std::function<void(std::uint64_t batch, std::uint64_t runs)> on_batch;
  // A failure as soon as its folder is written (or could not be: its dir is
  // then empty), before anything announces it: the caller journals it, so
  // that a kill at any later moment keeps it. A keep-going campaign calls it
  // twice per signature, as found and once shrunk (the journal's reader
  // keeps the later line). A non-empty answer (the journal cannot be
  // written) stops the campaign; the first one is the result's
  // record_error.
  std::function<std::string(const failure&)> on_failure;
};

// What groups failures, as a crash deduplicator groups crashes: the first
// detector that fired (for invariants, which one) and where: the kind and
// answer of the operation linearizability got stuck at, the phase a run hung
// in. Shrinking keeps it: a smaller run that fails otherwise is not taken.
std::string signature(const std::vector<detection>& found);

struct failure {
  run_config first;               // as generated
  run_config shrunk;              // after RapidCheck's shrinking
  std::vector<detection> first_found;  // what the detectors said of the first failing run
  // The shrunk run's failing execution, every detector that fired on it, its
  // history and structure. On threads and cuda a run may not fail again when
  // repeated: this is the execution that did.
  judgement verdict;
  bool reproduced = true;         // threads, cuda: the shrunk run failed again with the same signature
  std::string signature;
  std::uint64_t runs = 1;         // runs of the campaign that failed with this signature
  double seconds_to_first = 0;    // campaign time when the first failing run was found
  std::string dir;                // where it was written
  std::uint64_t shrink_runs = 0;  // candidate runs its shrinking made
};

// Shrinks `f` (found on the host backend) as a campaign does, within
// o.shrink_seconds and o.shrink_runs: a greedy pass over the generated
// run, then its operations listed, cut in time and taken out by delta
// debugging. f.first and f.shrunk are the failing run, f.verdict its
// judgement, f.signature what every smaller run must fail with.
void shrink_failure(failure& f, const campaign_options& o);

struct campaign_result {
  std::uint64_t runs = 0, ops = 0, undecided = 0;
  double seconds = 0;
  path_stats paths;
  // Host runs under PCT or fair-pct: the priority changes they made, of the
  // depth - 1 change points each drew (they fall short when a change point
  // lies past the end of the run, or past fair-pct's switch to random).
  std::uint64_t pct_runs = 0, pct_changes = 0, pct_change_points = 0;
  // Distinct sets of rare paths (core/gfsl/stats.hpp) that single runs reached.
  std::uint64_t path_combinations = 0;
  // Coverage pairs reached (bits of sched::outcome::pairs, fuzz/coverage.hpp);
  // runs made with a targeted park, and those whose held team was let go by
  // the effect it waited for.
  std::uint64_t pairs = 0;
  std::uint64_t hold_runs = 0, hold_met = 0;
  std::optional<failure> found;   // the first failure
  std::vector<failure> further;   // keep_going: one per further signature, in the order found
  bool interrupted = false;       // `cancel` stopped it
  // A failure's folder that could not be written (a full disk): the
  // campaign stopped there; its failures are still in `found`/`further`.
  std::string write_error;
  // What on_failure answered when it could not record a failure: the
  // campaign stopped there.
  std::string record_error;
};

campaign_result run_campaign(const campaign_options& o);

// Why the campaign's configuration rules out the rare path called `name`
// (core/gfsl/stats.hpp), e.g. "--upper thesis" for re-raise; empty when its runs
// can reach it. Coverage reports name such a path apart from those never reached.
std::string disabled_by(const campaign_options& o, std::string_view name);

// Writes `f` into dir/<id>/ (<id>: its signature): the history (JSON lines),
// the shrunk counterexample as a timeline, as an interleaving of chunk
// accesses around the failing key (host) and as an HTML page, the detectors'
// report and the replay command. Returns the folder.
std::string write_failure(const std::string& dir, const failure& f, const campaign_options& o);

// The most operations of the failing key a failure's page draws as bars.
inline constexpr std::size_t failure_window = 2000;

// Which of `ops` (one key's, sorted by call) a failure's page draws: at most
// `most`, the first at index `from`; centred on the first operation called at
// or after `centre_call`, or the last ones when it is model::no_stamp.
std::pair<std::size_t, std::size_t> window_around(const std::vector<model::op_record>& ops, std::uint64_t centre_call, std::size_t most);

// Campaign summary as one JSON object (report.json of a campaign folder).
// `earlier`: failures a resumed campaign's journal held from before the
// resume that it did not find again (in report.json's "failures" with
// "before_resume": true).
std::string campaign_json(const campaign_options& o, const campaign_result& r, const std::vector<failure_entry>& earlier = {});

}  // namespace gfsl::fuzz
