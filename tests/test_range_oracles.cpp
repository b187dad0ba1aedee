// The host judge of gfsl/range_oracles.cuh on hand-made logs (no GPU): the
// logs it must accept and those it must reject, one per finding.
#include <gtest/gtest.h>

#include <gfsl/range_oracles.cuh>

#include <vector>

namespace {

using namespace gfsl::range_oracles;

struct log_t {
  std::vector<insert_event> inserts;
  std::vector<range_event> ranges;
  std::vector<kv> pairs;
  stable_keys stable{100, 5, 10};  // 100, 110, .., 140

  log_t& insert(std::uint32_t k, std::uint32_t v, std::uint64_t c, std::uint64_t r, bool ok = true) {
    inserts.push_back({k, v, c, r, ok ? 1u : 0u});
    return *this;
  }
  // A range answer; with_stable: the stable keys of [lo, hi) are added, as a correct structure holds them.
  log_t& range(std::uint32_t lo, std::uint64_t hi, std::vector<kv> p, std::uint64_t c, std::uint64_t r, bool with_stable = true) {
    if (with_stable) {
      for (std::uint32_t k = stable.base; k < stable.base + stable.count * stable.stride; k += stable.stride) {
        if (k >= lo && k < hi) p.push_back({k, stable_value(k)});
      }
      std::sort(p.begin(), p.end(), [](const kv& a, const kv& b) { return a.key < b.key; });
    }
    range_event e;
    e.lo = lo;
    e.hi = hi;
    e.call = c;
    e.ret = r;
    e.pairs_from = pairs.size();
    e.pairs_count = static_cast<std::uint32_t>(p.size());
    pairs.insert(pairs.end(), p.begin(), p.end());
    ranges.push_back(e);
    return *this;
  }
  range_judgement judge() const { return judge_ranges(inserts, ranges, pairs, stable); }
};

range_finding::kind only(const range_judgement& j) {
  EXPECT_EQ(j.violations, 1u) << j.summary();
  return j.findings.empty() ? range_finding::malformed : j.findings[0].what;
}

TEST(RangeOracles, AcceptsCorrectAnswers) {
  log_t l;
  l.insert(101, 7, 0, 10).insert(102, 8, 20, 30).insert(103, 9, 25, 60);
  l.range(100, 150, {{101, 7}, {102, 8}}, 35, 50);             // 103 concurrent: may be missing
  l.range(100, 150, {{101, 7}, {102, 8}, {103, 9}}, 35, 70);   // or present
  l.range(100, 150, {{101, 7}}, 5, 22);                        // 101 concurrent, 102 concurrent
  l.range(100, 150, {{101, 7}, {103, 9}}, 26, 27);             // 102 and 103 both concurrent with each other
  l.range(0, 100, {}, 0, 1);
  const range_judgement j = l.judge();
  EXPECT_TRUE(j.clean()) << j.summary();
  EXPECT_GT(j.stable_checked, 10u);
}

TEST(RangeOracles, RejectsAMissingStableKey) {
  log_t l;
  l.range(100, 130, {{100, stable_value(100)}, {120, stable_value(120)}}, 0, 1, false);
  EXPECT_EQ(only(l.judge()), range_finding::missing_stable);
  log_t w;
  w.range(100, 111, {{100, stable_value(100)}, {110, 5}}, 0, 1, false);
  EXPECT_EQ(only(w.judge()), range_finding::missing_stable);
}

TEST(RangeOracles, RejectsTheUnorderedPair) {
  // insert(101) returned (10) before insert(102) began (20); the range holds 102 without 101.
  log_t l;
  l.insert(101, 7, 0, 10).insert(102, 8, 20, 30);
  l.range(100, 150, {{102, 8}}, 5, 40);
  const range_judgement j = l.judge();
  EXPECT_EQ(only(j), range_finding::unordered_pair);
  EXPECT_EQ(j.findings[0].key, 101u);
  EXPECT_EQ(j.findings[0].other, 102u);
  EXPECT_NE(j.summary().find("holds key 102 but not key 101"), std::string::npos) << j.summary();
}

TEST(RangeOracles, RejectsMissingEarlierFutureUnknownAndWrongValues) {
  log_t a;
  a.insert(101, 7, 0, 10).range(100, 150, {}, 11, 12);
  EXPECT_EQ(only(a.judge()), range_finding::missing_earlier);
  log_t b;
  b.insert(101, 7, 20, 30).range(100, 150, {{101, 7}}, 0, 10);
  EXPECT_EQ(only(b.judge()), range_finding::from_the_future);
  log_t c;
  c.insert(101, 7, 0, 10, false).range(100, 150, {{101, 7}}, 20, 30);
  EXPECT_EQ(only(c.judge()), range_finding::never_inserted);
  log_t d;
  d.insert(101, 7, 0, 10).range(100, 150, {{101, 8}}, 20, 30);
  EXPECT_EQ(only(d.judge()), range_finding::wrong_value);
  log_t e;
  e.range(100, 150, {{160, 1}}, 20, 30, false);
  EXPECT_EQ(only(e.judge()), range_finding::malformed);
  log_t f;
  f.insert(101, 7, 0, 10).insert(101, 8, 20, 30);
  EXPECT_EQ(only(f.judge()), range_finding::inserted_twice);
  // A key outside the oracle's keys is counted, not judged.
  log_t g;
  g.range(100, 150, {{105, 1}}, 0, 1);
  const range_judgement jg = g.judge();
  EXPECT_TRUE(jg.clean()) << jg.summary();
  EXPECT_EQ(jg.other_pairs, 1u);
}

TEST(RangeOracles, EqualStampsAreConcurrent) {
  log_t l;
  l.insert(101, 7, 0, 10).insert(102, 8, 10, 30);  // 101 returned at 10, 102 called at 10: concurrent
  l.range(100, 150, {{102, 8}}, 5, 40);
  EXPECT_TRUE(l.judge().clean()) << l.judge().summary();
  log_t m;
  m.insert(101, 7, 0, 10).range(100, 150, {}, 10, 12);  // returned at the range's call: concurrent
  EXPECT_TRUE(m.judge().clean());
}

TEST(RangeOracles, TruncatedRangesAreNotJudged) {
  log_t l;
  l.insert(101, 7, 0, 10).range(100, 150, {}, 11, 12);
  l.ranges.back().truncated = 1;
  const range_judgement j = l.judge();
  EXPECT_TRUE(j.clean());
  EXPECT_EQ(j.truncated, 1u);
}

}  // namespace
