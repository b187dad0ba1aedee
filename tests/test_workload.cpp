// Workloads are a pure function of their description; the final-state oracle
// rejects every kind of disagreement it claims to catch.
#include <gtest/gtest.h>

#include <set>

#include "model/final_state.hpp"
#include "core/registry.hpp"
#include "exec/host_runner.hpp"
#include "model/workload.hpp"
#include "core/gfsl/types.hpp"

namespace {

using gfsl::op_kind;
using gfsl::status;
using gfsl::model::op_record;
using gfsl::model::operation;

gfsl::model::workload small() {
  gfsl::model::workload w;
  w.ops = 10000;
  w.range = 1000;
  w.teams = 7;
  w.seed = 42;
  return w;
}

TEST(Workload, SameSeedSameOperationsAndMixIsRespected) {
  const auto w = small();
  int counts[3] = {};
  for (std::uint64_t j = 0; j < w.ops; ++j) {
    const operation a = gfsl::model::operation_at(w, j), b = gfsl::model::operation_at(w, j);
    ASSERT_EQ(a.kind, b.kind);
    ASSERT_EQ(a.key, b.key);
    ASSERT_EQ(a.value, b.value);
    ASSERT_GE(a.key, 1u);
    ASSERT_LE(a.key, w.range);
    ++counts[static_cast<int>(a.kind)];
  }
  EXPECT_NEAR(counts[0], 1000, 150);
  EXPECT_NEAR(counts[1], 1000, 150);
  EXPECT_NEAR(counts[2], 8000, 300);
  auto other = w;
  other.seed = 43;
  int same = 0;
  for (std::uint64_t j = 0; j < 100; ++j) same += gfsl::model::operation_at(other, j).key == gfsl::model::operation_at(w, j).key;
  EXPECT_LT(same, 10);
}

TEST(Workload, HotKeysTakeTheirShareOfTheOperations) {
  auto w = small();
  w.range = 100000;
  w.hot_keys = 10;
  w.hot_pct = 90;
  int hot = 0;
  for (std::uint64_t j = 0; j < w.ops; ++j) hot += gfsl::model::operation_at(w, j).key <= 10;
  EXPECT_NEAR(hot, 9000, 200);
  w.hot_keys = 200000;
  EXPECT_NE(w.validate().find("hot keys"), std::string::npos);
}

TEST(Workload, OperationsAreDealtToTeamsWithoutGapOrOverlap) {
  auto w = small();
  for (std::uint32_t teams : {1u, 3u, 7u, 10000u, 20000u}) {
    w.teams = teams;
    EXPECT_EQ(gfsl::model::team_first_op(w, 0), 0u);
    EXPECT_EQ(gfsl::model::team_first_op(w, teams), w.ops);
    for (std::uint32_t t = 0; t < teams; ++t) {
      const auto size = gfsl::model::team_first_op(w, t + 1) - gfsl::model::team_first_op(w, t);
      EXPECT_LE(size, w.ops / teams + 1);
      EXPECT_GE(size, w.ops / teams);
    }
  }
}

TEST(Workload, PrefillIsHalfTheRangeOfDistinctKeys) {
  auto w = small();
  const auto ops = gfsl::model::prefill_operations(w);
  ASSERT_EQ(ops.size(), 500u);
  std::set<gfsl::key_type> keys;
  for (const auto& op : ops) {
    EXPECT_EQ(op.kind, op_kind::insert);
    EXPECT_GE(op.key, 1u);
    EXPECT_LE(op.key, w.range);
    keys.insert(op.key);
  }
  EXPECT_EQ(keys.size(), ops.size());
  w.prefill = 1.0;
  EXPECT_EQ(gfsl::model::prefill_operations(w).size(), 1000u);
  w.range = 4000000000u;
  w.prefill = 0.000001;
  EXPECT_EQ(gfsl::model::prefill_operations(w).size(), 4000u);
}

TEST(Workload, ValidationNamesTheBadField) {
  auto w = small();
  EXPECT_EQ(w.validate(), "");
  w.contains_pct = 70;
  EXPECT_NE(w.validate().find("mix"), std::string::npos);
  w = small();
  w.chunk = 64;
  EXPECT_NE(w.validate().find("chunk"), std::string::npos);
  w = small();
  w.p_chunk = 1.5;
  EXPECT_NE(w.validate().find("p-chunk"), std::string::npos);
  w = small();
  w.prefill = -0.1;
  EXPECT_NE(w.validate().find("prefill"), std::string::npos);
}

op_record rec(op_kind k, gfsl::key_type key, bool ok, gfsl::value_type v = 0, gfsl::value_type arg = 0) {
  op_record r;
  r.op.kind = k;
  r.op.key = key;
  r.op.value = arg;
  r.ok = ok;
  r.value = v;
  r.call = 1;  // completed (a record whose return stamp is missing is in flight)
  r.ret = 2;
  return r;
}

TEST(ImpliedFinalState, AcceptsAConsistentEnding) {
  const std::vector<operation> prefill{{op_kind::insert, 5, 50}};
  const std::vector<op_record> records{rec(op_kind::insert, 1, true, 0, 10), rec(op_kind::remove, 1, true, 10),
                                       rec(op_kind::insert, 1, true, 0, 11), rec(op_kind::contains, 5, true, 50),
                                       rec(op_kind::insert, 5, false, 0, 51)};
  EXPECT_TRUE(gfsl::model::check_implied_final_state(prefill, records, {{1, 11}, {5, 50}}).empty());
}

TEST(ImpliedFinalState, RejectsEveryDisagreement) {
  const std::vector<operation> prefill{{op_kind::insert, 5, 50}};
  auto problems = [&](const std::vector<op_record>& r, std::vector<std::pair<gfsl::key_type, gfsl::value_type>> f) {
    return gfsl::model::check_implied_final_state(prefill, r, f);
  };
  // A key that should be present is missing.
  EXPECT_FALSE(problems({rec(op_kind::insert, 1, true, 0, 10)}, {{5, 50}}).empty());
  // A deleted key is still present.
  EXPECT_FALSE(problems({rec(op_kind::remove, 5, true, 50)}, {{5, 50}}).empty());
  // Two successful inserts without a delete between them.
  EXPECT_FALSE(problems({rec(op_kind::insert, 1, true, 0, 1), rec(op_kind::insert, 1, true, 0, 2)}, {{1, 1}, {5, 50}}).empty());
  // A value nobody wrote.
  EXPECT_FALSE(problems({}, {{5, 51}}).empty());
  // A key nobody inserted.
  EXPECT_FALSE(problems({}, {{5, 50}, {9, 1}}).empty());
  // A contains that returned a value nobody wrote.
  EXPECT_FALSE(problems({rec(op_kind::contains, 5, true, 49)}, {{5, 50}}).empty());
  // A key listed twice.
  EXPECT_FALSE(problems({}, {{5, 50}, {5, 50}}).empty());
}

TEST(ImpliedFinalState, AnOperationInFlightMayOrMayNotHaveTakenEffect) {
  // A run stopped by the scheduler: insert(24) was in flight, and its key is
  // there at the end. Neither presence nor absence is a disagreement.
  const std::vector<operation> prefill{{op_kind::insert, 5, 50}};
  op_record in_flight = rec(op_kind::insert, 24, false, 0, 7);
  in_flight.ret = gfsl::model::no_stamp;
  EXPECT_TRUE(gfsl::model::check_implied_final_state(prefill, {in_flight}, {{5, 50}, {24, 7}}).empty());
  EXPECT_TRUE(gfsl::model::check_implied_final_state(prefill, {in_flight}, {{5, 50}}).empty());
  // A completed one is judged: a failed insert leaves nothing behind.
  EXPECT_FALSE(gfsl::model::check_implied_final_state(prefill, {rec(op_kind::insert, 24, false, 0, 7)}, {{5, 50}, {24, 7}}).empty());
}

TEST(ImpliedFinalState, AKeyWithAFailedOperationIsNotJudged) {
  auto r = rec(op_kind::insert, 1, false, 0, 10);
  r.st = status::pool_exhausted;
  EXPECT_TRUE(gfsl::model::check_implied_final_state({}, {r}, {{1, 10}}).empty());
  EXPECT_TRUE(gfsl::model::check_implied_final_state({}, {r}, {}).empty());
}

TEST(SequentialMismatch, FindsTheFirstWrongAnswer) {
  const std::vector<op_record> good{rec(op_kind::insert, 1, true, 0, 10), rec(op_kind::contains, 1, true, 10),
                                    rec(op_kind::remove, 1, true, 10), rec(op_kind::remove, 1, false)};
  EXPECT_EQ(gfsl::model::first_sequential_mismatch({}, good), "");
  auto bad = good;
  bad[1].value = 11;
  const std::string m = gfsl::model::first_sequential_mismatch({}, bad);
  EXPECT_NE(m.find("operation 1"), std::string::npos) << m;
  bad = good;
  bad[3].ok = true;
  EXPECT_NE(gfsl::model::first_sequential_mismatch({}, bad).find("operation 3"), std::string::npos);
}

}  // namespace

// The registry (core/registry.hpp): each subject's catalogs read back what
// they write, and a workload refuses another subject's parameter by name.
namespace {

TEST(Registry, EverySubjectsNamesReadBackAndItsDefaultsAreItsOwn) {
  for (const gfsl::subject_descriptor* d : gfsl::subject_registry) {
    if (d->kind == gfsl::subject_kind::user) continue;  // UserSlot, below
    EXPECT_EQ(gfsl::parse_subject(d->name), d->kind);
    EXPECT_EQ(&gfsl::subject_of(d->kind), d);
    ASSERT_FALSE(d->variants.empty()) << d->name;
    for (std::size_t v = 0; v < d->variants.size(); ++v) EXPECT_EQ(d->parse_variant(d->variants[v]), v) << d->name;
    EXPECT_FALSE(d->parse_variant("no-such-variant")) << d->name;
    EXPECT_LT(d->default_variant, d->variants.size()) << d->name;
    EXPECT_LT(d->unnamed_variant, d->variants.size()) << d->name;
    const auto entries = d->mutant_entries();
    ASSERT_FALSE(entries.empty()) << d->name;
    for (const gfsl::mutant_entry& m : entries) {
      EXPECT_NE(m.id, 0) << m.name;
      EXPECT_EQ(d->mutant_name(m.id), m.name);
      EXPECT_EQ(d->parse_mutant(m.name), m.id) << m.name;
      const gfsl::subject_choice c{d->default_variant, static_cast<std::uint8_t>(m.id)};
      EXPECT_EQ(gfsl::mutant_label(d->kind, c), m.name);
    }
    EXPECT_FALSE(d->parse_mutant("no-such-mutant")) << d->name;
    EXPECT_EQ(gfsl::mutant_label(d->kind, d->default_choice()), "none");
  }
  // The published GFSL is what a replay line without a variant ran; SlabHash's lines always name theirs.
  EXPECT_EQ(gfsl::subject_of(gfsl::subject_kind::gfsl).variant_name(gfsl::subject_of(gfsl::subject_kind::gfsl).unnamed_variant), "thesis");
  EXPECT_EQ(gfsl::variant_label(gfsl::subject_kind::gfsl, gfsl::subject_choice{}), "robust");
  EXPECT_EQ(gfsl::variant_label(gfsl::subject_kind::slabhash, gfsl::subject_of(gfsl::subject_kind::slabhash).default_choice()), "fixed");
}

// The user slot (core/user/subject.hpp): unnamed, it is no subject of
// --subject; named after a trace's subject gfsl does not know, it is that
// name's; a subject of gfsl's own or a bad name is never adopted.
TEST(Registry, UserSlotIsNamedOnlyAfterATracesUnknownSubject) {
  EXPECT_FALSE(gfsl::parse_subject("user"));
  EXPECT_EQ(gfsl::subject_names_text().find("user"), std::string::npos);
  EXPECT_FALSE(gfsl::user::adopt_name("slabhash"));
  EXPECT_FALSE(gfsl::user::adopt_name("Bad Name"));
  EXPECT_FALSE(gfsl::user::adopt_name(""));
  EXPECT_FALSE(gfsl::parse_subject("my_set"));
  ASSERT_TRUE(gfsl::user::adopt_name("my_set"));
  EXPECT_EQ(gfsl::parse_subject("my_set"), gfsl::subject_kind::user);
  EXPECT_STREQ(gfsl::subject_name(gfsl::subject_kind::user), "my_set");
  EXPECT_FALSE(gfsl::user::adopt_name("other_set"));  // one user structure a process
  EXPECT_EQ(gfsl::subject_of(gfsl::subject_kind::user).parse_mutant("none"), 0);
  EXPECT_FALSE(gfsl::subject_of(gfsl::subject_kind::user).parse_mutant("x"));
  // A run of it in a program that registered none: one line, no crash.
  gfsl::model::workload w;
  w.subject = gfsl::subject_kind::user;
  w.chunk = 32;
  w.teams = 2;
  w.ops = 4;
  w.range = 8;
  EXPECT_THROW(gfsl::run_on_host(w, gfsl::host_mode::sequential), std::invalid_argument);
  const gfsl::subject_descriptor& d = gfsl::subject_of(gfsl::subject_kind::user);
  EXPECT_EQ(d.check_workload(w), "");
  w.teams = 33;
  EXPECT_NE(d.check_workload(w).find("teams must be in [1, 32] for my_set"), std::string::npos) << d.check_workload(w);
  w.teams = 2;
  w.chunk = 16;
  EXPECT_NE(d.check_workload(w).find("chunk must be 32"), std::string::npos);
}

TEST(Registry, AWorkloadRefusesAnotherSubjectsParameterAndDescribesItsOwn) {
  gfsl::model::workload w = small();
  w.buckets = 4;
  EXPECT_EQ(w.validate(), "buckets is a slabhash parameter; gfsl has none");
  EXPECT_EQ(w.describe().find("buckets"), std::string::npos);
  w.subject = gfsl::subject_kind::slabhash;
  w.chunk = 16;
  EXPECT_EQ(w.validate(), "");
  EXPECT_NE(w.describe().find(" subject=slabhash buckets=4"), std::string::npos) << w.describe();
  w.buckets = 0;
  EXPECT_NE(w.validate().find("buckets must be in [1, "), std::string::npos) << w.validate();
  const gfsl::subject_parameter* p = gfsl::find_parameter(gfsl::subject_kind::slabhash, "buckets");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->default_value(w), 50u);  // one bucket per 20 keys of the range (1000)
  EXPECT_EQ(gfsl::find_parameter(gfsl::subject_kind::gfsl, "buckets"), nullptr);
}

}  // namespace
