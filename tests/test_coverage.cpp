// Interleaving coverage (core/coverage.hpp, fuzz/coverage.hpp): the pairs a
// run reaches, the targeted park that holds a team inside a window until
// another team's operation makes an effect on its chunk, and the campaign
// that aims such parks at the pairs it has not reached. Every campaign here
// is bounded by runs; the seconds are hang guards.
#include <gtest/gtest.h>

#include <string>

#include "fuzz/campaign.hpp"
#include "fuzz/coverage.hpp"
#include "fuzz/detectors.hpp"
#include "fuzz/scenarios.hpp"
#include "core/gfsl/types.hpp"

namespace {

using gfsl::fuzz::run_config;

int bit_of(gfsl::gfsl_window w, gfsl::gfsl_effect e) { return gfsl::pair_bit(static_cast<int>(w), static_cast<int>(e)); }

gfsl::sched::hold_directive hold(gfsl::gfsl_window w, gfsl::gfsl_effect e, std::uint32_t nth) {
  gfsl::sched::hold_directive h;
  h.active = true;
  h.window = static_cast<std::uint8_t>(w);
  h.effect = static_cast<std::uint8_t>(e);
  h.nth = nth;
  return h;
}

// The directed restart run (fuzz/scenarios.hpp): a reader looks up the keys
// above a level-2 key j while another team looks up 1 and deletes j.
run_config restart_run(std::uint64_t seed) {
  gfsl::team_rng rng(seed);
  return gfsl::fuzz::directed_run(gfsl::fuzz::scenario::restart, {}, gfsl::mutant::none, gfsl::variant::robust, rng);
}

gfsl::fuzz::campaign_options campaign(gfsl::mutant m, std::uint64_t runs, int targeted) {
  gfsl::fuzz::campaign_options o;
  o.seed = 1;
  o.max_runs = runs;
  o.seconds = 3600;
  o.shrink_seconds = 5;
  o.choice.mutant = static_cast<std::uint8_t>(m);
  o.progress = false;
  o.limits.targeted_parks = targeted != 0;
  o.replay_line = [](const run_config& c) { return c.describe(); };
  return o;
}

}  // namespace

// The names round-trip, and a bad hold is refused naming what is wrong.
TEST(Coverage, AHoldIsWrittenAndReadBack) {
  gfsl::sched::hold_directive h;
  ASSERT_EQ(gfsl::fuzz::parse_hold(gfsl::subject_kind::gfsl, "unlink,split,3", h), "");
  EXPECT_TRUE(h.active);
  EXPECT_EQ(h.window, static_cast<int>(gfsl::gfsl_window::unlink));
  EXPECT_EQ(h.effect, static_cast<int>(gfsl::gfsl_effect::split));
  EXPECT_EQ(h.nth, 3u);
  EXPECT_EQ(h.team, gfsl::sched::hold_directive::any_team);
  EXPECT_EQ(gfsl::fuzz::hold_text(gfsl::subject_kind::gfsl, h), "unlink,split,3");
  ASSERT_EQ(gfsl::fuzz::parse_hold(gfsl::subject_kind::gfsl, "step-down,remove,1,0", h), "");
  EXPECT_EQ(h.team, 0u);
  EXPECT_EQ(gfsl::fuzz::hold_text(gfsl::subject_kind::gfsl, h), "step-down,remove,1,0");
  ASSERT_EQ(gfsl::fuzz::parse_hold(gfsl::subject_kind::slabhash, "delete,insert,2", h), "");
  EXPECT_EQ(gfsl::fuzz::hold_text(gfsl::subject_kind::slabhash, h), "delete,insert,2");
  EXPECT_NE(gfsl::fuzz::parse_hold(gfsl::subject_kind::gfsl, "unlink,split,0", h).find("NTH '0'"), std::string::npos);
  EXPECT_NE(gfsl::fuzz::parse_hold(gfsl::subject_kind::gfsl, "claim,split,1", h).find("no gfsl window 'claim'"), std::string::npos);
  EXPECT_NE(gfsl::fuzz::parse_hold(gfsl::subject_kind::gfsl, "unlink,append,1", h).find("no gfsl effect 'append'"), std::string::npos);
  EXPECT_NE(gfsl::fuzz::parse_hold(gfsl::subject_kind::gfsl, "unlink,split", h).find("expected WINDOW,EFFECT,NTH"), std::string::npos);
  EXPECT_EQ(gfsl::fuzz::pair_name(gfsl::subject_kind::gfsl, bit_of(gfsl::gfsl_window::step_down, gfsl::gfsl_effect::remove)),
            "step-down x remove");
  EXPECT_EQ(gfsl::fuzz::pair_bits(gfsl::subject_kind::gfsl).size(), 16u);
  EXPECT_EQ(gfsl::fuzz::pair_bits(gfsl::subject_kind::slabhash).size(), 6u);
}

// A run with a hold repeats bit for bit, and the hold changes the run: the
// same configuration without it interleaves otherwise.
TEST(Coverage, ARunWithAHoldReplaysBitForBit) {
  run_config c = restart_run(3);
  c.so.hold = hold(gfsl::gfsl_window::step_down, gfsl::gfsl_effect::remove, 1);
  const auto first = gfsl::fuzz::execute_and_judge(c);
  const auto again = gfsl::fuzz::execute_and_judge(c);
  EXPECT_TRUE(first.outcome.hold_taken);
  EXPECT_EQ(first.outcome.fingerprint, again.outcome.fingerprint);
  EXPECT_EQ(first.outcome.steps, again.outcome.steps);
  EXPECT_EQ(first.outcome.pairs, again.outcome.pairs);
  run_config free = c;
  free.so.hold = {};
  const auto unheld = gfsl::fuzz::execute_and_judge(free);
  EXPECT_FALSE(unheld.outcome.hold_taken);
  EXPECT_NE(first.outcome.fingerprint, unheld.outcome.fingerprint);
  EXPECT_NE(c.describe().find(" hold=step-down,remove,1"), std::string::npos) << c.describe();
}

// The reader held at its step down until the delete lands (the restart
// run's own hold): the pair step-down x remove and the restart path are
// reached in most runs, and in few of the same runs without the hold.
TEST(Coverage, AHoldAtTheStepDownLetsTheDeleteLandInsideTheWindow) {
  const int aimed = bit_of(gfsl::gfsl_window::step_down, gfsl::gfsl_effect::remove);
  int plain_pairs = 0, plain_restarts = 0, held_pairs = 0, held_restarts = 0, met = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const run_config held = restart_run(seed);
    ASSERT_TRUE(held.so.hold.active);
    EXPECT_EQ(held.so.hold.team, 0u);
    run_config plain = held;
    plain.so.hold = {};
    const auto free = gfsl::fuzz::execute_and_judge(plain);
    const auto j = gfsl::fuzz::execute_and_judge(held);
    ASSERT_FALSE(free.failed()) << plain.describe();
    ASSERT_FALSE(j.failed()) << held.describe();
    plain_pairs += (free.outcome.pairs >> aimed & 1u) != 0;
    plain_restarts += free.run.report.paths.restarts > 0;
    held_pairs += (j.outcome.pairs >> aimed & 1u) != 0;
    held_restarts += j.run.report.paths.restarts > 0;
    met += j.outcome.hold_met;
  }
  std::printf("of 30 restart runs: pair reached %d, restart %d; without the hold %d and %d\n", held_pairs, held_restarts, plain_pairs,
              plain_restarts);
  EXPECT_GT(held_pairs, 2 * plain_pairs);
  EXPECT_GT(held_restarts, 2 * plain_restarts);
  EXPECT_GE(met, 10);
}

// A campaign's summary names the pairs it has not reached; with
// --variant thesis the validated read's pairs are ruled out, not missed.
TEST(Coverage, TheCampaignCountsPairsAndRulesOutThoseOfAnotherVariant) {
  auto o = campaign(gfsl::mutant::none, 60, 4);
  const auto robust = gfsl::fuzz::run_campaign(o);
  ASSERT_FALSE(robust.found);
  EXPECT_NE(robust.pairs, 0u);
  EXPECT_GT(robust.hold_runs, 0u);
  const std::string json = gfsl::fuzz::campaign_json(o, robust);
  EXPECT_NE(json.find("\"pairs_never_reached\":["), std::string::npos) << json;
  EXPECT_NE(json.find("\"pairs_reached\":[\""), std::string::npos) << json;
  o.choice.variant = static_cast<std::uint8_t>(gfsl::variant::thesis);
  const int validate_split = bit_of(gfsl::gfsl_window::validate, gfsl::gfsl_effect::split);
  EXPECT_EQ(gfsl::fuzz::pair_disabled_by(o, validate_split), "--variant thesis");
  o.choice.variant = static_cast<std::uint8_t>(gfsl::variant::robust);
  EXPECT_EQ(gfsl::fuzz::pair_disabled_by(o, validate_split), "");
}

// The unlink-split run (fuzz/scenarios.hpp) holds the unlinker until the
// predecessor has split (or, in a third of the runs, merged): the correct
// core passes it on both variants, each run mostly reaches the pair it aims
// at, the unlink without its re-check under the lock fails the split runs,
// and without the hold the same runs do not fail (the split comes before or
// after the window, not inside it).
TEST(Coverage, TheUnlinkSplitRunBreaksOnlyAnUnlinkWithoutItsRecheck) {
  for (const gfsl::variant v : {gfsl::variant::robust, gfsl::variant::thesis}) {
    int split_runs = 0, merge_runs = 0, split_reached = 0, merge_reached = 0, held_failed = 0, free_failed = 0;
    gfsl::team_rng rng(7);
    for (int i = 0; i < 45; ++i) {
      const run_config correct = gfsl::fuzz::directed_run(gfsl::fuzz::scenario::unlink_split, {}, gfsl::mutant::none, v, rng);
      ASSERT_TRUE(correct.so.hold.active);
      const bool split = correct.so.hold.effect == static_cast<int>(gfsl::gfsl_effect::split);
      const int aimed = gfsl::pair_bit(correct.so.hold.window, correct.so.hold.effect);
      const auto passed = gfsl::fuzz::execute_and_judge(correct);
      EXPECT_FALSE(passed.failed()) << correct.describe() << ": " << passed.found.front().detail;
      const bool reached = (passed.outcome.pairs >> aimed & 1u) != 0;
      (split ? split_runs : merge_runs) += 1;
      (split ? split_reached : merge_reached) += reached;
      run_config mutated = correct;
      mutated.choice.mutant = static_cast<std::uint8_t>(gfsl::mutant::unlink_without_recheck);
      if (split) held_failed += gfsl::fuzz::execute_and_judge(mutated).failed();
      mutated.so.hold = {};
      free_failed += gfsl::fuzz::execute_and_judge(mutated).failed();
    }
    std::printf("%s: %d split runs (pair reached %d, the mutant failed %d), %d merge runs (pair reached %d); without the hold the "
                "mutant failed %d of 45\n",
                gfsl::variant_name(v), split_runs, split_reached, held_failed, merge_runs, merge_reached, free_failed);
    EXPECT_GE(split_reached, split_runs / 3) << gfsl::variant_name(v);
    EXPECT_GE(merge_reached, 1) << gfsl::variant_name(v);
    EXPECT_GE(held_failed, split_runs / 4) << gfsl::variant_name(v);
    EXPECT_EQ(free_failed, 0) << gfsl::variant_name(v);
  }
}

// A scripted fault of each pair that the campaign without targeted parks
// does not kill within the run budget and the campaign with them does:
// unlink x split (unlink-without-recheck) and step-down x remove
// (restart-steps-down). Run budgets, not time: the same runs on any machine.
TEST(Coverage, TargetedParksKillFaultsTheCampaignWithoutThemMisses) {
  for (const gfsl::mutant m : {gfsl::mutant::unlink_without_recheck, gfsl::mutant::restart_steps_down}) {
    auto o = campaign(m, 100, 0);
    o.limits.vary_granularity = false;
    o.limits.granularity = gfsl::sched::granularity::chunk;
    o.limits.max_ops = 150;
    const auto without = gfsl::fuzz::run_campaign(o);
    EXPECT_FALSE(without.found) << gfsl::mutant_name(m) << ": " << without.found->first.describe();
    EXPECT_EQ(without.hold_runs, 0u);
    o.limits.targeted_parks = true;
    const auto with = gfsl::fuzz::run_campaign(o);
    ASSERT_TRUE(with.found) << gfsl::mutant_name(m) << " survived " << with.runs << " runs";
    EXPECT_TRUE(with.found->first.so.hold.active) << with.found->first.describe();
    std::printf("%s: killed within %llu runs (without targeted parks: survived %llu)\n", std::string(gfsl::mutant_name(m)).c_str(),
                (unsigned long long)with.runs, (unsigned long long)without.runs);
  }
}
