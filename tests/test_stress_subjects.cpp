// gfsl stress on the CPU backends for every subject (stress/cpu_stress.hpp
// over core/NAME/stress.cpp): the default variant passes, a seeded bug of the
// subject's catalog and its published faults are reported as violations
// (exit 1), on the scheduler and on OS threads; Li and Deng's batches run in
// lockstep, one kind a batch, and its `mixed` variant fails. Every run is
// bounded in operations (--max-structures, --ops-per-team), not in seconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "stress/options.hpp"
#include "stress/runner.hpp"
#include "stress/stress.hpp"
#include "tests/gfsl_binary.hpp"

namespace {

using gfsl::testing_cli::result;
using gfsl::testing_cli::run;

bool has(const result& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

// A short host run: a few structures of 128 operations a team.
result stress(const std::string& args, int structures = 6) {
  return run("stress --backend host --max-structures " + std::to_string(structures) +
             " --ops-per-team 128 --seconds 3600 --progress off " + args);
}

TEST(StressSubjects, SlabHashFixedPassesOnTheScheduler) {
  const result r = stress("--subject slabhash");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r, "configuration: subject slabhash, backend host (cpu), shape owned-keys, variant fixed")) << r.out;
  EXPECT_TRUE(has(r, "rounds: 6 built, 0 failed the full scan")) << r.out;
  EXPECT_TRUE(has(r, "verdict: no violation")) << r.out;
}

TEST(StressSubjects, SlabHashSeededBugIsAViolationWithItsReplay) {
  // Upstream issue 17: a key inserted twice, seen as a true insert where the
  // owner knew its key present, and as a duplicate by the round's scan.
  const result r = stress("--subject slabhash --mutant insert-checks-claim-slab-only");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(has(r, "mutant: insert-checks-claim-slab-only (seeded bug)")) << r.out;
  EXPECT_TRUE(has(r, "verdict: VIOLATIONS FOUND")) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("violation 1: team [0-9]+, round [0-9]+, at scheduling point [0-9]+: [^\n]*bucket 0 slab")))
      << r.out;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("replay: gfsl stress --replay (gfsl-stress1:[^\n]*:subject=slabhash[^\n]*)\n"))) << r.out;
  // The line runs that round again, alone, with the same verdict.
  const result again = run("stress --progress off --replay " + m[1].str());
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_TRUE(has(again, "rounds: 1 built, 1 failed the full scan")) << again.out;
}

TEST(StressSubjects, SlabHashPublishedLosesOrDuplicatesKeys) {
  const result r = stress("--subject slabhash --variant published", 20);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(has(r, "variant published")) << r.out;
}

TEST(StressSubjects, LiDengFixedPassesInLockstepBatches) {
  for (const char* shape : {"owned-keys", "stable-contains"}) {
    const result r = stress(std::string("--subject lideng --shape ") + shape);
    EXPECT_EQ(r.code, 0) << shape << "\n" << r.out;
    EXPECT_TRUE(has(r, std::string("configuration: subject lideng, backend host (cpu), shape ") + shape + ", variant fixed, 8 levels"))
        << r.out;
    EXPECT_TRUE(has(r, "structures: 6 built, 6 judged by the structure oracle")) << r.out;
    EXPECT_TRUE(has(r, ", 0 failed;")) << r.out;
    // Every team made every operation of every batch: 6 x 4 x 128.
    EXPECT_TRUE(has(r, "3072 operations in")) << r.out;
  }
}

TEST(StressSubjects, LiDengSeededBugsAreViolations) {
  for (const char* m : {"insert-links-alone", "delete-links-alone", "no-link-barrier"}) {
    const result r = stress(std::string("--subject lideng --mutant ") + m);
    EXPECT_EQ(r.code, 1) << m << "\n" << r.out;
    EXPECT_TRUE(has(r, std::string("mutant: ") + m + " (seeded bug)")) << r.out;
    EXPECT_TRUE(has(r, "verdict: VIOLATIONS FOUND")) << r.out;
    EXPECT_TRUE(has(r, ":subject=lideng\n")) << r.out;  // the replay line names the subject
  }
}

// The paper's semantics do not allow a batch of mixed kinds: `mixed` runs
// them and must fail; `published` links a key held twice in a batch twice.
TEST(StressSubjects, LiDengMixedBatchesAndPublishedFail) {
  const result mixed = stress("--subject lideng --variant mixed");
  EXPECT_EQ(mixed.code, 1) << mixed.out;
  EXPECT_TRUE(has(mixed, "variant mixed")) << mixed.out;
  const result published = stress("--subject lideng --variant published", 10);
  EXPECT_EQ(published.code, 1) << published.out;
}

TEST(StressSubjects, LiDengViolationReplaysAndShowsTheNode) {
  const result r = stress("--subject lideng --mutant insert-links-alone", 10);
  ASSERT_EQ(r.code, 1) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("structures: 10 built, 10 judged by the structure oracle \\(8 list invariants"))) << r.out;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("replay: gfsl stress --replay (gfsl-stress1:[^\n]*)\n"))) << r.out;
  const result again = run("stress --progress off --replay " + m[1].str());
  EXPECT_EQ(again.code, 1) << again.out;
  const result twice = run("stress --progress off --replay " + m[1].str());
  EXPECT_EQ(again.out.substr(again.out.find("violations:")), twice.out.substr(twice.out.find("violations:")));
  if (has(r, "violation 1:")) {
    EXPECT_TRUE(std::regex_search(r.out, std::regex("violation 1: [^\n]*  node [0-9]+ \\(key [0-9a-z]+, height [0-9]+\\)"))) << r.out;
  }
}

TEST(StressSubjects, ThreadsBackendRunsEverySubjectInRounds) {
  for (const char* subject : {"slabhash", "lideng"}) {
    const result r = run(std::string("stress --backend threads --teams 4 --max-structures 4 --ops-per-team 200 --seconds 3600 "
                                     "--progress off --json - --subject ") +
                         subject);
    EXPECT_EQ(r.code, 0) << subject << "\n" << r.out;
    EXPECT_TRUE(has(r, std::string("\"subject\":\"") + subject + "\"")) << r.out;
    EXPECT_TRUE(has(r, "\"operations\":3200,")) << r.out;
    EXPECT_TRUE(has(r, "\"structure_checks\":4,\"structure_violations\":0")) << r.out;
  }
  const result bug = run("stress --backend threads --teams 4 --max-structures 8 --ops-per-team 200 --seconds 3600 --progress off "
                         "--subject lideng --mutant group-in-slot-order");
  EXPECT_EQ(bug.code, 1) << bug.out;
}

TEST(StressSubjects, BadOptionsGetOneLineAndExitTwo) {
  for (const char* args : {"--subject lideng --teams 17", "--subject lideng --writers 1/2", "--subject lideng --chunk 32",
                           "--subject lideng --variant robust", "--subject slabhash --variant mixed",
                           "--subject slabhash --mutant no-such-bug"}) {
    const result r = run(std::string("stress --progress off --seconds 1 ") + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
}

// The lockstep oracle: every team makes the batch's kind, and each answer on
// an owned key is judged against what the team knows.
TEST(StressLockstep, EveryTeamMakesTheBatchsKindAndIsJudged) {
  gfsl::stress::params p;
  p.sh = gfsl::stress::shape::owned_keys;
  p.teams = 3;
  p.range = 12;
  p.writers_num = p.writers_den = 1;
  p.churn = 2;
  struct set_algo {
    std::set<gfsl::key_type> keys;
    bool lose_inserts = false;
    gfsl::op_result insert(gfsl::key_type k, gfsl::value_type) {
      const bool added = keys.insert(k).second;
      if (lose_inserts) keys.erase(k);
      return {gfsl::status::ok, added, 0};
    }
    gfsl::op_result remove(gfsl::key_type k) {
      return {gfsl::status::ok, keys.erase(k) != 0, gfsl::stress::value_of(k)};
    }
    gfsl::op_result contains(gfsl::key_type k) {
      return {gfsl::status::ok, keys.count(k) != 0, gfsl::stress::value_of(k)};
    }
  };
  for (bool lose : {false, true}) {
    set_algo a;
    a.lose_inserts = lose;
    const std::uint64_t seed = 77;
    std::vector<gfsl::stress::team_state> st;
    for (gfsl::team_id t = 0; t < p.teams; ++t) st.push_back(gfsl::stress::initial_team_state(p, t, seed));
    for (const auto& kv : gfsl::stress::prefill_keys(p, seed)) a.keys.insert(kv.first);
    gfsl::stress::counters c;
    std::set<gfsl::op_kind> kinds;
    for (std::uint64_t j = 0; j < 300; ++j) {
      const gfsl::op_kind kind = gfsl::stress::batch_kind(seed, j);
      kinds.insert(kind);
      for (gfsl::team_id t = 0; t < p.teams; ++t) {
        const gfsl::stress::step s = gfsl::stress::lockstep_step(a, p, t, st[t], c, kind);
        EXPECT_EQ(s.kind, kind);
        if (s.key <= p.range) EXPECT_EQ((s.key - 1) % p.teams, t) << s.key;  // its own key
        else EXPECT_LE(s.key, p.range + p.churn);                          // a shared key, unjudged
        EXPECT_EQ(s.judged, s.key <= p.range);
      }
    }
    EXPECT_EQ(kinds.size(), 3u);
    EXPECT_GT(c.reads, 300u);
    if (lose) {
      EXPECT_GT(c.violations, 0u);
      EXPECT_GT(c.missing, 0u);
    } else {
      EXPECT_EQ(c.violations, 0u);
    }
  }
}

}  // namespace
