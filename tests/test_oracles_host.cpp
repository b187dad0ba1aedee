// The host side of the public oracles (include/gfsl/oracles_host.hpp, which
// include/gfsl/oracles.cuh runs on the GPU's figures): the verdict of a run
// that judged nothing, the final-state accounting of each key a final find
// ran on and only those, the report's lines. Plain C++: no GPU, no CUDA.
#include <gtest/gtest.h>

#include <gfsl/oracles_host.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

namespace orc = gfsl::oracles;

std::string printed(const orc::config& c, std::uint32_t span, const orc::summary& s) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  orc::print_summary(f, "my map", "no device", c, span, s);
  std::fclose(f);
  std::string out(buf, len);
  std::free(buf);
  return out;
}

orc::config owned(std::uint32_t tiles) {
  orc::config c;
  c.oracle = orc::kind::owned_keys;
  c.tiles = tiles;
  c.per_tile = 2;
  return c;
}

TEST(OraclesHost, ARunThatJudgedNothingIsRefusedNotClean) {
  // What an empty kernel leaves: every counter 0, the final phase's found[]
  // as the harness cleared it (no find ran on any key).
  const orc::config c = owned(4);
  const std::uint32_t span = orc::span_of(c);
  const std::vector<unsigned> zeros(span, 0);
  orc::summary s;
  s.rounds = 1;
  orc::account_round(c, span, zeros.data(), zeros.data(), zeros.data(), s);
  EXPECT_EQ(s.accounted_keys, 0u) << "a key no find ran on was judged";
  EXPECT_EQ(s.unlooked_keys, span);
  EXPECT_EQ(s.judged(), 0u);
  EXPECT_TRUE(s.refused());
  EXPECT_FALSE(s.clean());
  const std::string text = printed(c, span, s);
  EXPECT_NE(text.find("verdict: REFUSED: nothing was judged"), std::string::npos) << text;
  EXPECT_EQ(text.find("no violation"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(span) + " keys no final find ran on (not judged)"), std::string::npos) << text;
}

TEST(OraclesHost, OnlyKeysAFinalFindRanOnAreAccounted) {
  const orc::config c = owned(2);
  const std::uint32_t span = orc::span_of(c);  // 4 keys
  ASSERT_EQ(span, 4u);
  // key 0: inserted once, found; key 1: inserted and erased, not found;
  // key 2: inserted twice, erased never, no final find (not judged, though
  // its counts would fail); key 3: inserted once, the final find missed it.
  const std::vector<unsigned> ins{1, 1, 2, 1}, era{0, 1, 0, 0};
  const std::vector<unsigned> found{orc::looked_up_present, orc::looked_up_absent, orc::not_looked_up, orc::looked_up_absent};
  orc::summary s;
  orc::account_round(c, span, ins.data(), era.data(), found.data(), s);
  EXPECT_EQ(s.accounted_keys, 3u);
  EXPECT_EQ(s.unlooked_keys, 1u);
  EXPECT_EQ(s.accounting_violations, 1u);
  ASSERT_EQ(s.records.size(), 1u);
  EXPECT_EQ(s.records[0].key, c.base + 3);
  EXPECT_EQ(orc::describe(s.records[0]).find("key " + std::to_string(c.base + 3) + ": 1 successful inserts, 0 successful erases, final find false"),
            std::string("round end, at 0.000000 s: ").size());
  EXPECT_FALSE(s.refused());
  EXPECT_FALSE(s.clean());
}

TEST(OraclesHost, AJudgedRunWithoutViolationsIsClean) {
  const orc::config c = owned(2);
  const std::uint32_t span = orc::span_of(c);
  const std::vector<unsigned> ins(span, 1), era(span, 1), found(span, orc::looked_up_absent);
  orc::summary s;
  s.rounds = 1;
  orc::account_round(c, span, ins.data(), era.data(), found.data(), s);
  EXPECT_EQ(s.accounted_keys, span);
  EXPECT_TRUE(s.clean());
  EXPECT_NE(printed(c, span, s).find("verdict: no violation"), std::string::npos);
  // Answers judged online alone (no final phase) also count as judged.
  orc::summary online;
  online.n[orc::c_judged] = 5;
  EXPECT_TRUE(online.clean());
}

TEST(OraclesHost, InsertOrAssignCountsEveryInsertAndHoldsForAnyOrderOfAssigns) {
  using orc::insert_kind;
  // A churn key of an insert-or-assign structure: inserted 5 times (4 of
  // them assigns that answered true), erased twice, found: a history exists
  // (i i e i i e i). Insert-if-absent's accounting calls it a violation.
  EXPECT_TRUE(orc::accounting_holds(insert_kind::or_assign, 5, 2, true));
  EXPECT_FALSE(orc::accounting_holds(insert_kind::if_absent, 5, 2, true));
  EXPECT_TRUE(orc::accounting_holds(insert_kind::or_assign, 5, 2, false));  // ... i e
  EXPECT_TRUE(orc::accounting_holds(insert_kind::or_assign, 0, 0, false));
  // What no order explains: more erases than inserts; found after as many
  // erases as inserts; absent though inserted and never erased.
  EXPECT_FALSE(orc::accounting_holds(insert_kind::or_assign, 2, 3, false));
  EXPECT_FALSE(orc::accounting_holds(insert_kind::or_assign, 2, 2, true));
  EXPECT_FALSE(orc::accounting_holds(insert_kind::or_assign, 3, 0, false));
  EXPECT_FALSE(orc::accounting_holds(insert_kind::or_assign, 0, 0, true));
}

TEST(OraclesHost, MultisetKeepsOneOccurrencePerInsert) {
  using orc::insert_kind;
  EXPECT_TRUE(orc::accounting_holds(insert_kind::multiset, 3, 1, true));   // 2 left
  EXPECT_FALSE(orc::accounting_holds(insert_kind::if_absent, 3, 1, true));
  EXPECT_TRUE(orc::accounting_holds(insert_kind::multiset, 3, 3, false));
  EXPECT_FALSE(orc::accounting_holds(insert_kind::multiset, 3, 3, true));  // found none left
  EXPECT_FALSE(orc::accounting_holds(insert_kind::multiset, 3, 2, false)); // lost one
  EXPECT_FALSE(orc::accounting_holds(insert_kind::multiset, 1, 2, false)); // erased one never inserted
}

TEST(OraclesHost, TheAccountingJudgesUnderTheConfiguredSemantics) {
  orc::config c = owned(2);
  c.churn = 2;
  const std::uint32_t span = orc::span_of(c);  // 4 owned, 2 shared
  const std::vector<unsigned> ins{1, 0, 1, 0, 6, 4}, era{0, 0, 1, 0, 3, 4};
  const std::vector<unsigned> found{orc::looked_up_present, orc::looked_up_absent, orc::looked_up_absent,
                                    orc::looked_up_absent,  orc::looked_up_present, orc::looked_up_absent};
  for (orc::insert_kind m : {orc::insert_kind::if_absent, orc::insert_kind::or_assign, orc::insert_kind::multiset}) {
    c.insert = m;
    orc::summary s;
    orc::account_round(c, span, ins.data(), era.data(), found.data(), s);
    EXPECT_EQ(s.accounted_keys, span);
    // Key 4 (6 inserts, 3 erases, found) is a violation only under if_absent.
    EXPECT_EQ(s.accounting_violations, m == orc::insert_kind::if_absent ? 1u : 0u) << orc::insert_kind_name(m);
  }
  c.insert = orc::insert_kind::or_assign;
  const std::vector<unsigned> lost{0, 0, 0, 0, 2, 0};  // key 4 inserted twice, never erased, not found
  orc::summary s;
  orc::account_round(c, span, lost.data(), std::vector<unsigned>(span, 0).data(), std::vector<unsigned>(span, orc::looked_up_absent).data(), s);
  ASSERT_EQ(s.records.size(), 1u);
  EXPECT_NE(orc::describe(s.records[0]).find("2 inserts, 0 successful erases, final find false (insert-or-assign)"), std::string::npos)
      << orc::describe(s.records[0]);
  EXPECT_NE(printed(c, span, s).find(", inserts insert-or-assign"), std::string::npos);
}

TEST(OraclesHost, AWaitEndsAtItsDeadlineOnTheHostClockAndTheHangIsReported) {
  // A launch that never finishes, on a clock that moves 0.1 s a poll.
  double t = 0;
  std::uint64_t polls = 0;
  auto now = [&] { return t; };
  auto pause = [&](std::uint64_t) { t += 0.1; };
  EXPECT_EQ(orc::wait_for([&] { ++polls; return false; }, now, pause, 2.0), orc::wait_result::deadline);
  EXPECT_GE(t, 2.0);
  EXPECT_LT(t, 2.2);
  EXPECT_EQ(polls, 21u);
  // One that finishes at the fifth poll; and no deadline (0) waits for it.
  for (double deadline : {2.0, 0.0}) {
    t = 0, polls = 0;
    EXPECT_EQ(orc::wait_for([&] { return ++polls == 5; }, now, pause, deadline), orc::wait_result::done);
    EXPECT_EQ(polls, 5u);
  }
  const orc::config c = owned(2);
  orc::summary s;
  s.n[orc::c_judged] = 100;
  s.hang = orc::hang_text(2, orc::phase::run, 60.0);
  EXPECT_TRUE(s.hung());
  EXPECT_FALSE(s.clean());
  const std::string text = printed(c, orc::span_of(c), s);
  EXPECT_NE(text.find("  hang: round 3, the run phase: your kernel did not finish within 60.0 s (config::deadline_seconds)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("verdict: HUNG"), std::string::npos) << text;
  EXPECT_EQ(orc::config{}.deadline_seconds, 60.0) << "the documented default";
}

}  // namespace
