// gfsl stress --subject slabhash, what runs without a device: the round's
// structure oracle (stress/slab_oracle.hpp) on tables made by the algorithm
// itself and then damaged as the published faults damage them, the slab
// line of a violation report, and the options' SlabHash defaults.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/slab_bench.hpp"
#include "core/host_team.hpp"
#include "core/slabhash/algorithm.hpp"
#include "core/slabhash/layout.hpp"
#include "stress/options.hpp"
#include "stress/report.hpp"
#include "stress/slab_oracle.hpp"
#include "stress/stress.hpp"

namespace {

using gfsl::key_type;
using gfsl::value_type;
using namespace gfsl::slabhash;
using gfsl::stress::value_of;
using team16 = gfsl::host_team<16>;

struct table {
  params p;
  std::vector<std::uint64_t> words;
  explicit table(params prm) : p(prm), words(word_count(prm)) {
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = initial_word(i, p);
  }
  template <slab_variant V>
  void insert(key_type k) {
    team16 tm(0, 1, words.data(), nullptr, false, words.size());
    algorithm<team16, V> a(tm, words.data(), p);
    ASSERT_TRUE(a.insert(k, value_of(k)).ok) << k;
  }
  template <slab_variant V>
  void remove(key_type k) {
    team16 tm(0, 1, words.data(), nullptr, false, words.size());
    algorithm<team16, V> a(tm, words.data(), p);
    ASSERT_TRUE(a.remove(k).ok) << k;
  }
  // Where key k lives (its first pair), as a word offset.
  std::size_t where(key_type k) const {
    for (std::size_t i = header_words; i < words.size(); ++i) {
      if ((i - header_words) % slab_words != next_word && pair_key(words[i]) == k) return i;
    }
    return 0;
  }
};

std::vector<std::pair<key_type, value_type>> expect(std::initializer_list<key_type> ks) {
  std::vector<std::pair<key_type, value_type>> out;
  for (key_type k : ks) out.emplace_back(k, value_of(k));
  return out;
}

TEST(StressSlabOracle, AWellFormedRoundPasses) {
  for (slab_variant v : {slab_variant::published, slab_variant::fixed}) {
    table t(params{2, 16, 7});
    for (key_type k = 1; k <= 40; ++k) {
      if (v == slab_variant::fixed) t.insert<slab_variant::fixed>(k);
      else t.insert<slab_variant::published>(k);
    }
    if (v == slab_variant::fixed) t.remove<slab_variant::fixed>(3);
    else t.remove<slab_variant::published>(3);
    // Owned keys 1, 2 known present; 41..60 shared, unknown; 3 deleted by its owner.
    std::vector<std::pair<key_type, value_type>> want = expect({1, 2});
    const auto r = gfsl::stress::judge_slab_round(t.words.data(), t.words.size(), t.p, v, want, 4, 60);
    EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
  }
}

// The lost insert (docs/FINDINGS.md, "SlabHash"): a stale delete's exchange empties another
// key's pair. The full scan names the key and its bucket.
TEST(StressSlabOracle, ALostInsertIsAMissingKnownKey) {
  table t(params{1, 4, 1});
  for (key_type k = 1; k <= 5; ++k) t.insert<slab_variant::published>(k);
  t.words[t.where(2)] = empty_pair;
  const auto r = gfsl::stress::judge_slab_round(t.words.data(), t.words.size(), t.p, slab_variant::published,
                                                expect({1, 2, 3}), 4, 10);
  EXPECT_EQ(r.lost, 1u);
  EXPECT_EQ(r.duplicates, 0u);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("key 2 (bucket 0) is missing"), std::string::npos) << r.problems[0];
}

// Upstream issue 27: the same key in two pairs. Counted once per extra copy,
// named by bucket, slab and lane.
TEST(StressSlabOracle, ADuplicateIsCountedAndPlaced) {
  table t(params{1, 4, 1});
  for (key_type k = 1; k <= 20; ++k) t.insert<slab_variant::published>(k);  // slabs 0 and 1
  t.words[t.where(17)] = make_pair(4, value_of(4));                         // 4 again, in slab 1
  const auto r = gfsl::stress::judge_slab_round(t.words.data(), t.words.size(), t.p, slab_variant::published, expect({4}),
                                                1, 20);
  EXPECT_EQ(r.duplicates, 1u);
  EXPECT_EQ(r.lost, 0u);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("unique-keys: bucket 0 slab 1 lane"), std::string::npos) << r.problems[0];
  EXPECT_NE(r.problems[0].find("key 4 is live twice"), std::string::npos) << r.problems[0];
}

TEST(StressSlabOracle, KeysOutsideTheWorkloadAndWrongValuesAreUnexpected) {
  table t(params{1, 4, 1});
  t.insert<slab_variant::fixed>(1);
  t.insert<slab_variant::fixed>(99);  // neither known nor in the shared range
  const auto r = gfsl::stress::judge_slab_round(t.words.data(), t.words.size(), t.p, slab_variant::fixed, {{1, 5}}, 2, 10);
  EXPECT_EQ(r.unexpected, 2u);  // 1's value, 99's presence
}

TEST(StressSlabReport, AFailingReadShowsItsSlab) {
  gfsl::stress::violation_record v;
  v.subject = static_cast<std::uint8_t>(gfsl::subject_kind::slabhash);
  v.kind = static_cast<std::uint8_t>(gfsl::op_kind::contains);
  v.key = 20;
  v.expected = 1;
  v.answer = 0;
  v.chunk = 3;
  v.bucket = 0;
  for (int i = 0; i < slab_words; ++i) v.words[i] = empty_pair;
  v.words[0] = make_pair(5, 1);
  v.words[1] = make_pair(tombstone_key, 1);
  v.words[next_word] = next_word_of(17);
  const std::string line = gfsl::stress::describe_read(v);
  EXPECT_NE(line.find("false contains(20) (expected true)"), std::string::npos) << line;
  EXPECT_NE(line.find("bucket 0 slab 3"), std::string::npos) << line;
  EXPECT_NE(line.find(": 5 T . . . . . . . . . . . . . | next 17"), std::string::npos) << line;
}

TEST(StressSlabReport, RatesArePer1e9AnswersWithTimeToFirst) {
  gfsl::stress::config_result r;
  r.subject = "slabhash";
  r.totals.reads = 2000000000;
  r.totals.missing = 4;
  r.first_missing_s = 0.25;
  r.structure_checks = 3;
  r.duplicates = 1;
  r.first_duplicate_s = 1.5;
  const auto lines = gfsl::stress::slab_summary_lines(r);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("(a key missing: lost insert) 4, 2 per 10^9 answers, first at 0.250 s"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("inserted over itself) 0, 0 per 10^9 answers, none"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("duplicate keys 1 (0.5 per 10^9 answers, first at 1.500 s)"), std::string::npos) << lines[1];
}

TEST(StressSlabOptions, DefaultsAndRefusals) {
  gfsl::stress::options o;
  o.subject = gfsl::subject_kind::slabhash;
  o.sh = gfsl::stress::shape::owned_keys;
  o.backend = "cuda";
  o.chunks = {16};
  o.writers_num = o.writers_den = 1;
  // Two keys a team, a bucket per 64 teams, four shared keys per bucket.
  EXPECT_EQ(gfsl::stress::default_range(o, 1000), 2000u);
  EXPECT_EQ(gfsl::stress::slabhash_default_buckets(16896), 264u);
  EXPECT_EQ(gfsl::stress::slabhash_default_buckets(10), 1u);
  const gfsl::stress::params p = gfsl::stress::params_of(o, 2000, 1000);
  EXPECT_EQ(p.churn, 4u * 15);
  o.buckets = 8;
  EXPECT_EQ(gfsl::stress::params_of(o, 2000, 1000).churn, 32u);
  EXPECT_EQ(gfsl::stress::validate(o, 1000), "");
  // The CPU backends run it, seeded bugs included; the GPU runs the correct design only.
  o.backend = "host";
  EXPECT_EQ(gfsl::stress::validate(o, 4), "");
  o.choice.mutant = static_cast<std::uint8_t>(gfsl::slabhash::slab_mutant::delete_empties_pair);
  EXPECT_EQ(gfsl::stress::validate(o, 4), "");
  o.backend = "cuda";
  EXPECT_NE(gfsl::stress::validate(o, 1000).find("--mutant"), std::string::npos);
  // GFSL's owned keys share none unless asked.
  gfsl::stress::options g;
  g.sh = gfsl::stress::shape::owned_keys;
  EXPECT_EQ(gfsl::stress::params_of(g, 64, 4).churn, 0u);
}

// A churn operation is the writer's, unjudged; GFSL's steps are unchanged
// with churn 0 (no key above the range is ever touched).
TEST(StressSlabOptions, ChurnKeysAreUnjudgedAndAboveTheRange) {
  gfsl::stress::params p;
  p.sh = gfsl::stress::shape::owned_keys;
  p.range = 8;
  p.teams = 4;
  p.writers_num = p.writers_den = 1;
  p.churn = 5;
  struct fake {
    gfsl::op_result insert(key_type, value_type) { return {gfsl::status::ok, true, 0}; }
    gfsl::op_result remove(key_type) { return {gfsl::status::ok, true, 0}; }
    gfsl::op_result contains(key_type) { return {gfsl::status::ok, false, 0}; }
  } a;
  gfsl::stress::team_state st = gfsl::stress::initial_team_state(p, 1, 99);
  gfsl::stress::counters c;
  int churned = 0;
  for (int i = 0; i < 400; ++i) {
    const gfsl::stress::step s = gfsl::stress::stress_step(a, p, 1, st, c);
    if (s.key > p.range) {
      ++churned;
      EXPECT_LE(s.key, p.range + p.churn);
      EXPECT_FALSE(s.judged);
    } else {
      EXPECT_TRUE(s.key == 2 || s.key == 6) << s.key;  // team 1's keys
    }
  }
  EXPECT_GT(churned, 100);
  EXPECT_LT(churned, 300);
  p.churn = 0;
  for (int i = 0; i < 100; ++i) EXPECT_LE(gfsl::stress::stress_step(a, p, 1, st, c).key, p.range);
}

// gfsl bench --subject slabhash: the paper's mixes and its utilisation.
TEST(SlabBench, MixesAndUtilisationAreThePapers) {
  const auto mixes = gfsl::bench::slab_mixes();
  ASSERT_EQ(mixes.size(), 3u);
  EXPECT_EQ(mixes[0].a + mixes[0].b, 100);  // Gamma0: updates only
  EXPECT_EQ(mixes[1].c + mixes[1].d, 60);   // Gamma1: 40% updates
  EXPECT_EQ(mixes[2].a, 10);                // Gamma2: 20% updates
  for (const auto& m : mixes) EXPECT_EQ(m.a + m.b + m.c + m.d, 100) << m.name;
  // 15 pairs in a 128-byte slab: at most 15/16.
  EXPECT_DOUBLE_EQ(gfsl::bench::slab_utilisation(15, 1), 15.0 / 16);
  EXPECT_EQ(gfsl::bench::chain_slabs_of({0, 15, 16, 31}), 1u + 1 + 2 + 3);
  std::vector<key_type> keys;
  for (key_type k = 1; k <= 30000; ++k) keys.push_back(k * 2654435761u);
  for (double target : {0.2, 0.5, 0.8}) {
    const std::uint32_t b = gfsl::bench::buckets_for_utilisation(keys, target, 1);
    params p{b, 0, 1};
    std::vector<std::uint32_t> sizes(b, 0);
    for (key_type k : keys) ++sizes[bucket_of(k, p)];
    EXPECT_NEAR(gfsl::bench::slab_utilisation(keys.size(), gfsl::bench::chain_slabs_of(sizes)), target, 0.02) << b;
  }
}

}  // namespace
