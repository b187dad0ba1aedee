// Directed tears of validated reads (sched::tear_target::validation,
// fuzz/scenarios.hpp's validation_tear) and shrinking that keeps them: the
// scheduler holds exactly the second reads of validations; the directed
// runs kill a fault in the validation that the campaign without them
// misses; a failure shrinks to a handful of operations within a budget of
// candidate runs, and its replay line, tear included, fails again.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/gfsl/layout.hpp"
#include "fuzz/campaign.hpp"
#include "fuzz/detectors.hpp"
#include "fuzz/scenarios.hpp"
#include "fuzz/shrink.hpp"
#include "model/script.hpp"
#include "tests/files.hpp"
#include "tests/gfsl_binary.hpp"
#include "core/gfsl/types.hpp"

namespace {

using gfsl::fuzz::run_config;
using gfsl::fuzz::scenario;

// The user keys of each chunk of `level` in the structure a directed run's
// prefill builds (16-entry chunks), chunk by chunk in list order (as in
// tests/test_fuzz.cpp).
std::vector<std::vector<gfsl::key_type>> chunks_after_prefill(const run_config& run, int level) {
  gfsl::run_extras ex;
  ex.choice = run.choice;
  gfsl::model::script prefill_only = *run.script;
  for (auto& ops : prefill_only.team_ops) ops.clear();
  ex.script = &prefill_only;
  gfsl::model::workload w = run.w;
  gfsl::model::fit_workload(prefill_only, w);
  const auto built = gfsl::run_on_host(w, gfsl::host_mode::sequential, 0, true, ex);
  const auto& words = built.final_snapshot.words;
  std::vector<std::vector<gfsl::key_type>> out;
  for (std::uint64_t c = words[gfsl::header_offsets::heads + static_cast<std::size_t>(level)]; c != gfsl::no_chunk;) {
    const std::uint64_t* chunk = &words[gfsl::header_offsets::pool + c * 16];
    out.emplace_back();
    for (int lane = 0; lane < gfsl::chunk_shape<16>::dsize; ++lane) {
      const gfsl::key_type k = gfsl::entry_key(chunk[lane]);
      if (gfsl::is_user_key(k)) out.back().push_back(k);
    }
    c = gfsl::entry_value(chunk[gfsl::chunk_shape<16>::next_lane]);
  }
  return out;
}

// A generated run of contains and deletes on a small range at lane
// granularity, every validation's second read held open.
run_config torn_validations(gfsl::variant v, gfsl::mutant m, std::uint64_t seed) {
  run_config c;
  c.choice.variant = static_cast<std::uint8_t>(v);
  c.choice.mutant = static_cast<std::uint8_t>(m);
  c.w.teams = 4;
  c.w.ops = 120;
  c.w.insert_pct = 30;
  c.w.delete_pct = 30;
  c.w.contains_pct = 40;
  c.w.range = 40;
  c.w.prefill = 0.5;
  c.w.chunk = 16;
  c.w.seed = seed;
  c.so.strat = gfsl::sched::strategy::random;
  c.so.gran = gfsl::sched::granularity::lane;
  c.so.seed = seed * 7 + 1;
  c.so.tear = gfsl::sched::tear_target::validation;
  c.check_every = 61;
  return c;
}

// The scheduler holds the reads the algorithm names as validations' second
// reads (Team::validating), where the robust variant validates and nowhere
// else: the published algorithm, and the robust one with its validation
// left out (absence-not-validated), have none, though they re-read chunks
// (after a lock wait, under a lock just taken) in these runs as well.
TEST(ValidationTears, OnlyTheSecondReadsOfValidationsAreHeld) {
  std::uint64_t held = 0, torn = 0, waits = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto j = gfsl::fuzz::execute_and_judge(torn_validations(gfsl::variant::robust, gfsl::mutant::none, seed));
    EXPECT_FALSE(j.failed()) << j.config.describe() << ": " << j.found.front().detail;
    held += j.outcome.tears;
    torn += j.outcome.torn;
    waits += j.run.report.paths.lock_waits;
  }
  EXPECT_GT(held, 50u);
  EXPECT_GT(torn, 0u);
  EXPECT_GT(waits, 0u);
  for (const auto& [v, m] : {std::pair{gfsl::variant::thesis, gfsl::mutant::none},
                             std::pair{gfsl::variant::robust, gfsl::mutant::absence_not_validated}}) {
    std::uint64_t none_held = 0, none_waits = 0;
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      const auto j = gfsl::fuzz::execute_and_judge(torn_validations(v, m, seed));
      none_held += j.outcome.tears;
      none_waits += j.run.report.paths.lock_waits;
    }
    EXPECT_EQ(none_held, 0u) << gfsl::variant_name(v) << " " << gfsl::mutant_name(m);
    EXPECT_GT(none_waits, 0u) << gfsl::variant_name(v) << " " << gfsl::mutant_name(m);
  }
}

// A read held open while no other team can run goes on, under every
// strategy: one team deleting from an empty structure validates its "not
// here" at level 1 (a campaign's feedback run once rescheduled a directed
// run under PCT and, with the release missing there, reported a deadlock).
TEST(ValidationTears, AHeldReadGoesOnWhenNoOtherTeamCanRun) {
  for (const auto strat : {gfsl::sched::strategy::random, gfsl::sched::strategy::pct, gfsl::sched::strategy::fair_pct,
                           gfsl::sched::strategy::park}) {
    run_config c = torn_validations(gfsl::variant::robust, gfsl::mutant::none, 1);
    c.script = gfsl::model::script{};
    c.script->team_ops = {{gfsl::model::operation{gfsl::op_kind::remove, 161, 0}}};
    c.script->number_values();
    gfsl::model::fit_workload(*c.script, c.w);
    c.so.strat = strat;
    c.so.depth = 4;
    c.so.pct_steps = 100;
    c.so.park_at = gfsl::sched::park_point::mid_read;
    const auto j = gfsl::fuzz::execute_and_judge(c);
    EXPECT_FALSE(j.failed()) << gfsl::sched::name(strat) << ": " << j.found.front().detail;
    EXPECT_EQ(j.outcome.tears, 1u) << gfsl::sched::name(strat);
    EXPECT_EQ(j.outcome.torn, 0u) << gfsl::sched::name(strat);
  }
}

// A held read is part of the schedule: the same run repeats bit for bit, and
// holding changes the interleaving (the fingerprint of every access).
TEST(ValidationTears, AHeldRunRepeatsBitForBit) {
  const run_config c = torn_validations(gfsl::variant::robust, gfsl::mutant::none, 3);
  const auto a = gfsl::fuzz::execute_and_judge(c);
  const auto b = gfsl::fuzz::execute_and_judge(c);
  EXPECT_EQ(a.outcome.fingerprint, b.outcome.fingerprint);
  EXPECT_EQ(a.outcome.tears, b.outcome.tears);
  ASSERT_GT(a.outcome.tears, 0u);
  run_config untorn = c;
  untorn.so.tear = gfsl::sched::tear_target::none;
  EXPECT_NE(gfsl::fuzz::execute_and_judge(untorn).outcome.fingerprint, a.outcome.fingerprint);
}

// The directed runs on the layouts they assume (keys 1..12 in the head chunk
// of level 0; keys 1..202, whose level-1 chunk 98..189 is full): the
// correct core passes all of them, and the mutant whose validation closes
// on its own second read's LOCK lane fails some (at seed 5, 8 of 200: the
// seeds are fixed, so the count is exact).
TEST(ValidationTears, TheDirectedRunsBreakOnlyAFaultyValidation) {
  gfsl::team_rng layout_rng(1);
  bool level0 = false, upper = false;
  for (int i = 0; i < 8; ++i) {
    const run_config c = gfsl::fuzz::directed_run(scenario::validation_tear, {}, gfsl::mutant::none, gfsl::variant::robust, layout_rng);
    EXPECT_EQ(c.so.tear, gfsl::sched::tear_target::validation);
    EXPECT_EQ(c.so.gran, gfsl::sched::granularity::lane);
    ASSERT_TRUE(c.script);
    if (c.script->prefill.size() == 12) {
      level0 = true;
      EXPECT_EQ(chunks_after_prefill(c, 0), (std::vector<std::vector<gfsl::key_type>>{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}));
    } else {
      upper = true;
      std::vector<gfsl::key_type> want1;
      for (gfsl::key_type k = 98; k <= 189; k += 7) want1.push_back(k);
      EXPECT_EQ(chunks_after_prefill(c, 1).back(), want1);
    }
  }
  EXPECT_TRUE(level0 && upper);
  for (const gfsl::mutant m : {gfsl::mutant::none, gfsl::mutant::validation_lock_from_reread}) {
    gfsl::team_rng rng(5);
    int failed = 0;
    std::uint64_t torn = 0;
    for (int i = 0; i < 200; ++i) {
      const auto j = gfsl::fuzz::execute_and_judge(gfsl::fuzz::directed_run(scenario::validation_tear, {}, m, gfsl::variant::robust, rng));
      torn += j.outcome.torn;
      if (m == gfsl::mutant::none) {
        EXPECT_FALSE(j.failed()) << j.config.describe() << ": " << j.found.front().detail;
      } else if (j.failed()) {
        ++failed;
        EXPECT_EQ(j.found.front().detector, "linearizability") << j.found.front().detail;
      }
    }
    EXPECT_GT(torn, 100u);
    if (m != gfsl::mutant::none) {
      std::printf("validation-tear runs against %s: %d of 200 failed\n", std::string(gfsl::mutant_name(m)).c_str(), failed);
      EXPECT_GE(failed, 3);
    }
  }
}

// The default campaign kills the faulty validation within a run budget; the
// same campaign without the directed tears does not (seed 6, runs of at
// most 150 operations: the budget, not the time, bounds them). Seeds 1 to 8
// kill it within 36 to 824 runs (36 at seed 6: docs/BACKENDS.md).
// The campaign both tests below run against the faulty validation: seed 6,
// 400 runs of at most 150 operations; shrinking bounded by candidate runs.
gfsl::fuzz::campaign_options faulty_validation_campaign(std::uint64_t shrink_runs) {
  gfsl::fuzz::campaign_options o;
  o.seed = 6;
  o.seconds = 3600;
  o.max_runs = 400;
  o.choice.mutant = static_cast<std::uint8_t>(gfsl::mutant::validation_lock_from_reread);
  o.limits.max_ops = 150;
  o.progress = false;
  o.shrink_seconds = 3600;
  o.shrink_runs = shrink_runs;
  return o;
}

TEST(ValidationTears, TheCampaignKillsWhatItMissedWithoutThem) {
  for (const bool tears : {true, false}) {
    gfsl::fuzz::campaign_options o = faulty_validation_campaign(1);
    o.limits.validation_tears = tears;
    const gfsl::fuzz::campaign_result r = gfsl::fuzz::run_campaign(o);
    if (tears) {
      ASSERT_TRUE(r.found.has_value()) << r.runs << " runs";
      EXPECT_EQ(r.found->first.so.tear, gfsl::sched::tear_target::validation) << r.found->first.describe();
      EXPECT_LE(r.runs, 100u);
    } else {
      EXPECT_FALSE(r.found.has_value()) << r.found->first.describe();
      EXPECT_GE(r.runs, 400u);
    }
  }
}

// The failure the campaign finds (a directed run of 61 operations, the
// tear directive on) shrinks to at most 12 operations within a budget of
// candidate runs, whatever the machine's speed (6 operations and 8 prefill
// keys on 2 teams, the whole budget used); the tear
// is kept, the shrunk run fails again bit for bit, and its replay line,
// through gfsl replay, fails (exit 1).
TEST(ValidationTears, AFailureShrinksToATornValidationThatReplays) {
  gfsl::fuzz::campaign_options o = faulty_validation_campaign(3000);
  const std::string dir = ::testing::TempDir() + "gfsl_tears_" + std::to_string(::getpid());
  o.out_dir = dir;
  o.replay_line = nullptr;
  const gfsl::fuzz::campaign_result r = gfsl::fuzz::run_campaign(o);
  ASSERT_TRUE(r.found.has_value());
  const gfsl::fuzz::failure& f = *r.found;
  std::printf("shrunk from %llu to %llu operations + %zu prefill on %u teams in %llu candidate runs\n",
              (unsigned long long)f.first.w.ops, (unsigned long long)f.shrunk.w.ops, f.verdict.run.prefill.size(), f.shrunk.w.teams,
              (unsigned long long)f.shrink_runs);
  EXPECT_GE(f.first.w.ops, 40u);
  EXPECT_LE(f.shrunk.w.ops, 12u) << f.shrunk.describe();
  EXPECT_LE(f.shrink_runs, 3000u);
  EXPECT_EQ(f.shrunk.so.tear, gfsl::sched::tear_target::validation) << f.shrunk.describe();
  const auto again = gfsl::fuzz::execute_and_judge(f.shrunk);
  ASSERT_TRUE(again.failed());
  EXPECT_EQ(gfsl::fuzz::signature(again.found), gfsl::fuzz::signature(f.verdict.found));
  EXPECT_EQ(again.outcome.fingerprint, f.verdict.outcome.fingerprint);
  // The folder's replay line is the CLI's (gfsl fuzz writes it the same way).
  const gfsl::testing_cli::result fuzzed = gfsl::testing_cli::run(
      "fuzz --backend host --mutant validation-lock-from-reread --seed 6 --jobs 1 --max-ops 150 --max-runs 400 --seconds 3600 "
      "--shrink-seconds 20 --progress off --overwrite --out " + dir + "-cli");
  ASSERT_EQ(fuzzed.code, 1) << fuzzed.out;
  std::string line;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "-cli")) {
    if (std::filesystem::exists(entry.path() / "replay.txt")) {
      line = gfsl::testing_files::slurp((entry.path() / "replay.txt").string());
    }
  }
  ASSERT_EQ(line.rfind("gfsl replay ", 0), 0u) << line;
  line = line.substr(12);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  EXPECT_NE(line.find(":tear=validation"), std::string::npos) << line;
  const gfsl::testing_cli::result replayed = gfsl::testing_cli::run("replay " + line);
  EXPECT_EQ(replayed.code, 1) << replayed.out;
  EXPECT_NE(replayed.out.find("tear:     validation reads held open"), std::string::npos) << replayed.out;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::remove_all(dir + "-cli", ec);
}

// A long lane-granular failure shrinks to at most 12 operations within a
// budget of candidate runs: version-not-bumped, found by the campaign
// without the directed tears at seed 1 in batch 6 (its run 227: 461
// operations on 31 teams). Shrunk by the shrinker before the cuts in time,
// key windows, team groups and tearing schedules, it kept 431 operations
// after 60 s; now 6 and 2 prefill keys in 8,920 candidate runs.
TEST(Shrinking, ALongLaneGranularFailureShrinksToAtMost12Operations) {
  gfsl::fuzz::campaign_options o;
  o.seed = 1;
  o.first_batch = 6;
  o.seconds = 3600;
  o.max_runs = 100;
  o.choice.mutant = static_cast<std::uint8_t>(gfsl::mutant::version_not_bumped);
  o.limits.validation_tears = false;
  o.progress = false;
  o.shrink_seconds = 3600;
  o.shrink_runs = 1;
  const gfsl::fuzz::campaign_result r = gfsl::fuzz::run_campaign(o);
  ASSERT_TRUE(r.found.has_value());
  gfsl::fuzz::failure f;
  f.first = f.shrunk = r.found->first;
  f.verdict = gfsl::fuzz::execute_and_judge(f.first);
  ASSERT_TRUE(f.verdict.failed());
  f.signature = gfsl::fuzz::signature(f.verdict.found);
  EXPECT_GE(f.first.w.ops, 400u);
  EXPECT_EQ(f.first.so.gran, gfsl::sched::granularity::lane);
  gfsl::fuzz::campaign_options shrink;
  shrink.shrink_seconds = 3600;
  shrink.shrink_runs = 12000;
  gfsl::fuzz::shrink_failure(f, shrink);
  std::printf("shrunk from %llu to %llu operations + %zu prefill on %u teams in %llu candidate runs\n",
              (unsigned long long)f.first.w.ops, (unsigned long long)f.shrunk.w.ops, f.verdict.run.prefill.size(), f.shrunk.w.teams,
              (unsigned long long)f.shrink_runs);
  EXPECT_LE(f.shrunk.w.ops, 12u) << f.shrunk.describe();
  EXPECT_LE(f.shrink_runs, 12000u);
  const auto again = gfsl::fuzz::execute_and_judge(f.shrunk);
  ASSERT_TRUE(again.failed());
  EXPECT_EQ(gfsl::fuzz::signature(again.found), gfsl::fuzz::signature(f.verdict.found));
}

}  // namespace
