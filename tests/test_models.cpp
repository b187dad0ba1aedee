// gfsl check --model: the sequential specifications beyond GFSL's map, each
// given histories it must accept and histories it must reject, through the
// command as users run it and through the library; and the JSON-lines
// reader's handling of members and operations it does not know.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "linearizability/model_search.hpp"
#include "linearizability/models.hpp"
#include "linearizability/wing_gong.hpp"
#include "tests/files.hpp"
#include "tests/gfsl_binary.hpp"
#include "traces/internal.hpp"
#include "traces/trace.hpp"

namespace {

using gfsl::testing_cli::result;
using gfsl::testing_cli::run;

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "gfsl_models_" + std::to_string(::getpid()) + "_" + name;
}

// A JSON-lines file of these records (no metadata line).
std::string lines(const std::string& name, const std::vector<std::string>& records) {
  std::string text;
  for (const std::string& r : records) text += r + "\n";
  const std::string p = temp_path(name);
  gfsl::testing_files::spit(p, text);
  return p;
}

std::string rec(unsigned team, const std::string& op, unsigned key, const std::string& rest, unsigned call, const std::string& ret) {
  return "{\"team\":" + std::to_string(team) + ",\"op\":\"" + op + "\",\"key\":" + std::to_string(key) + rest +
         ",\"call\":" + std::to_string(call) + ",\"ret\":" + ret + "}";
}

// --- The reader -------------------------------------------------------------

TEST(JsonLinesMembers, UnknownMembersArePassedOverAndNamed) {
  const std::string p = lines("extra.jsonl", {R"({"team":1,"op":"insert","key":5,"value":7,"ok":true,"call":1,"ret":2,"thread":7,"sm":"3"})",
                                              R"({"thread":9,"team":2,"op":"contains","key":5,"value":7,"ok":true,"call":3,"ret":4})"});
  const gfsl::traces::trace t = gfsl::traces::read_trace(p);
  ASSERT_EQ(t.history.size(), 2u);
  EXPECT_EQ(t.history[1].value, 7u);
  EXPECT_EQ(t.ignored_members, (std::vector<std::string>{"thread", "sm"}));
  const result r = run("check " + p);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("ignored:  record members thread, sm"), std::string::npos) << r.out;
}

TEST(JsonLinesMembers, AnUnknownMemberWithANestedValueIsStillRefused) {
  const std::string p = lines("nested.jsonl", {R"({"team":1,"op":"insert","key":5,"value":7,"ok":true,"call":1,"ret":2,"x":{"a":1}})"});
  const result r = run("check " + p);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("line 1"), std::string::npos) << r.out;
}

TEST(JsonLinesMembers, AKnownMemberTwiceIsStillRefused) {
  const std::string p = lines("twice.jsonl", {R"({"team":1,"op":"insert","key":5,"key":6,"value":7,"ok":true,"call":1,"ret":2})"});
  const result r = run("check " + p);
  EXPECT_EQ(r.code, 2) << r.out;
}

TEST(JsonLinesOperations, AnUnknownOperationIsOneLineNamingTheModelsOperations) {
  const std::string p = lines("upsert.jsonl", {rec(1, "upsert", 5, ",\"value\":7,\"ok\":true", 1, "2")});
  result r = run("check " + p);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("expected \"op\" to be insert, delete or contains (model set"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("found \"upsert\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("line 1"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  r = run("check --model map " + p);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("one of insert, erase, find, delete, contains (model map)"), std::string::npos) << r.out;
  r = run("check --model upsert-map " + p);
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST(JsonLinesOperations, OkNullIsTakenOnlyWhereTheModelSaysSo) {
  const std::string upsert = lines("oknull.jsonl", {rec(1, "upsert", 5, ",\"value\":7,\"ok\":null", 1, "2")});
  EXPECT_EQ(run("check --model upsert-map " + upsert).code, 0);
  const std::string insert = lines("oknull_insert.jsonl", {rec(1, "insert", 5, ",\"value\":7,\"ok\":null", 1, "2")});
  const result r = run("check --model upsert-map " + insert);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("only upsert, insert_or_assign may leave it null"), std::string::npos) << r.out;
}

TEST(CheckModels, AnUnknownModelIsRefused) {
  const std::string p = lines("any.jsonl", {rec(1, "insert", 5, ",\"value\":7,\"ok\":true", 1, "2")});
  const result r = run("check --model queue " + p);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("set"), std::string::npos) << r.out;
}

// --- map: insert-if-absent, erase, find with value (the segmented checker) --

TEST(CheckModels, MapAcceptsAndRejects) {
  const std::string good = lines("map_good.jsonl", {rec(1, "insert", 5, ",\"value\":7,\"ok\":true", 1, "2"),
                                                    rec(2, "find", 5, ",\"value\":7,\"ok\":true", 3, "6"),
                                                    rec(1, "erase", 5, ",\"value\":7,\"ok\":true", 4, "5"),
                                                    rec(1, "insert", 5, ",\"value\":8,\"ok\":false", 7, "null")});
  result r = run("check --model map " + good);
  EXPECT_EQ(r.code, 0) << r.out;
  // find answered a value never inserted.
  const std::string wrong_value = lines("map_value.jsonl", {rec(1, "insert", 5, ",\"value\":7,\"ok\":true", 1, "2"),
                                                            rec(2, "find", 5, ",\"value\":9,\"ok\":true", 3, "4")});
  r = run("check --model map " + wrong_value);
  EXPECT_EQ(r.code, 1) << r.out;
  // a second insert of a present key succeeded.
  const std::string twice = lines("map_twice.jsonl", {rec(1, "insert", 5, ",\"value\":7,\"ok\":true", 1, "2"),
                                                      rec(2, "insert", 5, ",\"value\":8,\"ok\":true", 3, "4")});
  r = run("check --model map " + twice);
  EXPECT_EQ(r.code, 1) << r.out;
  // set takes the same object under the names insert, delete and contains, and refuses map's.
  EXPECT_EQ(run("check " + twice).code, 1);
  EXPECT_EQ(run("check " + good).code, 2);
}

// --- upsert-map: the generic search -----------------------------------------

TEST(CheckModels, UpsertMapAcceptsAndRejects) {
  // upsert inserts (true), then replaces (false); find sees the new value.
  const std::string good = lines("up_good.jsonl", {rec(1, "upsert", 5, ",\"value\":1,\"ok\":true", 1, "2"),
                                                   rec(1, "upsert", 5, ",\"value\":2,\"ok\":false", 3, "4"),
                                                   rec(2, "find", 5, ",\"value\":2,\"ok\":true", 5, "6"),
                                                   rec(2, "insert", 5, ",\"value\":3,\"ok\":false", 7, "8"),
                                                   rec(3, "erase", 5, ",\"value\":2,\"ok\":true", 9, "10")});
  result r = run("check --model upsert-map " + good);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verdict:  linearizable"), std::string::npos) << r.out;
  // Concurrent upserts: a find between may see either value.
  const std::string concurrent = lines("up_conc.jsonl", {rec(1, "upsert", 5, ",\"value\":1,\"ok\":null", 1, "10"),
                                                         rec(2, "upsert", 5, ",\"value\":2,\"ok\":null", 2, "9"),
                                                         rec(3, "find", 5, ",\"value\":1,\"ok\":true", 11, "12")});
  EXPECT_EQ(run("check --model upsert-map " + concurrent).code, 0);
  // After upsert(2) returned, find must not see the value it replaced.
  const std::string stale = lines("up_stale.jsonl", {rec(1, "upsert", 5, ",\"value\":1,\"ok\":true", 1, "2"),
                                                     rec(1, "upsert", 5, ",\"value\":2,\"ok\":false", 3, "4"),
                                                     rec(2, "find", 5, ",\"value\":1,\"ok\":true", 5, "6")});
  r = run("check --model upsert-map " + stale);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("NOT LINEARIZABLE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("key 5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("upsert(5, 2) -> false"), std::string::npos) << r.out;
  // upsert on an absent key said it replaced a value.
  const std::string replaced = lines("up_replaced.jsonl", {rec(1, "upsert", 5, ",\"value\":1,\"ok\":false", 1, "2")});
  EXPECT_EQ(run("check --model upsert-map " + replaced).code, 1);
  // A pending upsert may have taken effect: a later find may see it or not.
  for (const char* seen : {",\"value\":4,\"ok\":true", ",\"ok\":false"}) {
    const std::string pending = lines("up_pending.jsonl", {rec(1, "upsert", 5, ",\"value\":4,\"ok\":false", 1, "null"),
                                                           rec(2, "find", 5, seen, 5, "6")});
    EXPECT_EQ(run("check --model upsert-map " + pending).code, 0) << seen;
  }
}

TEST(CheckModels, UpsertMapJsonReportNamesTheFailingKey) {
  const std::string stale = lines("up_json.jsonl", {rec(1, "upsert", 9, ",\"value\":1,\"ok\":true", 1, "2"),
                                                    rec(2, "find", 9, ",\"value\":3,\"ok\":true", 5, "6"),
                                                    rec(2, "find", 4, ",\"ok\":false", 5, "6")});
  const result r = run("check --model upsert-map --json - " + stale);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("\"verdict\":\"not linearizable\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"failing_key\":9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"keys\":2"), std::string::npos) << r.out;
}

// --- multiset ---------------------------------------------------------------

TEST(CheckModels, MultisetAcceptsAndRejects) {
  const std::string good = lines("ms_good.jsonl", {rec(1, "insert", 5, ",\"ok\":true", 1, "2"),
                                                   rec(1, "insert", 5, ",\"ok\":true", 3, "4"),
                                                   rec(2, "count", 5, ",\"value\":2,\"ok\":true", 5, "6"),
                                                   rec(2, "erase", 5, ",\"ok\":true", 7, "8"),
                                                   rec(3, "find", 5, ",\"ok\":true", 9, "10"),
                                                   rec(3, "erase", 5, ",\"ok\":true", 11, "12"),
                                                   rec(3, "erase", 5, ",\"ok\":false", 13, "14")});
  EXPECT_EQ(run("check --model multiset " + good).code, 0);
  // Two inserts, then three successful erases.
  const std::string too_many = lines("ms_many.jsonl", {rec(1, "insert", 5, ",\"ok\":true", 1, "2"),
                                                       rec(1, "insert", 5, ",\"ok\":true", 3, "4"),
                                                       rec(2, "erase", 5, ",\"ok\":true", 5, "6"),
                                                       rec(2, "erase", 5, ",\"ok\":true", 7, "8"),
                                                       rec(2, "erase", 5, ",\"ok\":true", 9, "10")});
  EXPECT_EQ(run("check --model multiset " + too_many).code, 1);
  // A count that no order explains.
  const std::string count = lines("ms_count.jsonl", {rec(1, "insert", 5, ",\"ok\":true", 1, "2"),
                                                     rec(2, "count", 5, ",\"value\":2,\"ok\":true", 3, "4")});
  EXPECT_EQ(run("check --model multiset " + count).code, 1);
  // The set model refuses the second successful insert the multiset takes.
  const std::string twice = lines("ms_twice.jsonl", {rec(1, "insert", 5, ",\"value\":0,\"ok\":true", 1, "2"),
                                                     rec(1, "insert", 5, ",\"value\":0,\"ok\":true", 3, "4")});
  EXPECT_EQ(run("check --model multiset " + twice).code, 0);
  EXPECT_EQ(run("check " + twice).code, 1);
}

// --- The library ------------------------------------------------------------

// The generic search under the upsert-map model agrees with the segmented
// checker on histories of insert, delete and contains alone (the two models
// are one object there).
TEST(CheckModels, UpsertMapAgreesWithTheSetCheckerOnSetHistories) {
  using gfsl::model::op_record;
  auto make = [](unsigned team, gfsl::op_kind k, unsigned key, unsigned v, bool ok, std::uint64_t call, std::uint64_t ret) {
    op_record r;
    r.team = team;
    r.op.kind = k;
    r.op.key = key;
    if (k == gfsl::op_kind::insert) r.op.value = v;
    else r.value = v;
    r.ok = ok;
    r.call = call;
    r.ret = ret;
    return r;
  };
  const std::vector<std::vector<op_record>> histories = {
      {make(1, gfsl::op_kind::insert, 1, 4, true, 1, 4), make(2, gfsl::op_kind::contains, 1, 4, true, 2, 3)},
      {make(1, gfsl::op_kind::insert, 1, 4, true, 1, 2), make(2, gfsl::op_kind::contains, 1, 0, false, 3, 4)},
      {make(1, gfsl::op_kind::remove, 1, 4, true, 1, 2)},
      {make(1, gfsl::op_kind::insert, 1, 4, true, 1, 6), make(2, gfsl::op_kind::remove, 1, 4, true, 2, 3),
       make(3, gfsl::op_kind::contains, 1, 0, false, 4, 5)},
  };
  const std::vector<bool> want = {true, false, false, true};
  for (std::size_t i = 0; i < histories.size(); ++i) {
    const auto r = gfsl::lin::check_history_model(gfsl::lin::model_kind::upsert_map, histories[i], {}, {});
    EXPECT_EQ(r.v == gfsl::lin::verdict::linearizable, want[i]) << i;
  }
}

// --- Bounds (finding N1: --key-seconds, --seconds, --max-memory reached only
// the set and map checkers) -------------------------------------------------

// 40 concurrent upserts writing 20 values twice each, then finds of 0 and
// of 1, one after the other: the states the upserts can end in are found
// by going through every set of them, 3^20 at least, so only a bound ends
// it (the values are written twice: no zone refutes it). Key 6 is easy and
// decided.
std::string exponential_upserts(const std::string& name) {
  std::vector<std::string> r;
  for (unsigned i = 0; i < 40; ++i) r.push_back(rec(i + 1, "upsert", 5, ",\"value\":" + std::to_string(i / 2) + ",\"ok\":null", 1, "1000"));
  r.push_back(rec(99, "find", 5, ",\"value\":0,\"ok\":true", 2000, "2001"));
  r.push_back(rec(99, "find", 5, ",\"value\":1,\"ok\":true", 2002, "2003"));
  r.push_back(rec(98, "upsert", 6, ",\"value\":1,\"ok\":true", 1, "2"));
  return lines(name, r);
}

TEST(ModelBounds, KeySecondsEndsAnExponentialUpsertKeyAsUndecided) {
  const std::string p = exponential_upserts("bound_key.jsonl");
  result r = run("check --model upsert-map --key-seconds 0.2 " + p);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("undecided: 1 of 2 keys"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("undecided: key 5 (42 operations): stopped by its own time limit (--key-seconds)"), std::string::npos) << r.out;
  r = run("check --model upsert-map --key-seconds 0.2 --json - " + p);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("\"undecided\":[{\"key\":5,\"operations\":42,\"why\":\"key-seconds\"}]"), std::string::npos) << r.out;
}

TEST(ModelBounds, SecondsEndsItWithTheChecksOwnReason) {
  const std::string p = exponential_upserts("bound_total.jsonl");
  const result r = run("check --model upsert-map --key-seconds 0 --seconds 0.2 --json - " + p);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("\"why\":\"seconds\""), std::string::npos) << r.out;
}

// A multiset key of 20,000 operations takes at least 20,000 steps, and the
// search looks at its deadline every 4,096: a deadline of a nanosecond has
// passed by the first look on any machine.
TEST(ModelBounds, KeySecondsReachesTheMultisetSearch) {
  std::vector<std::string> r;
  for (unsigned i = 0; i < 20000; ++i) r.push_back(rec(1, i % 2 ? "erase" : "insert", 5, ",\"ok\":true", 2 * i + 1, std::to_string(2 * i + 2)));
  const std::string p = lines("bound_ms.jsonl", r);
  EXPECT_EQ(run("check --model multiset " + p).code, 0);
  const result b = run("check --model multiset --key-seconds 0.000000001 " + p);
  EXPECT_EQ(b.code, 3) << b.out;
  EXPECT_NE(b.out.find("stopped by its own time limit (--key-seconds)"), std::string::npos) << b.out;
}

TEST(ModelBounds, MaxMemoryLeavesAKeyUndecidedWithItsReason) {
  const std::string p = exponential_upserts("bound_mem.jsonl");
  for (const char* model : {"upsert-map", "multiset"}) {
    std::vector<std::string> inserts;
    for (unsigned i = 0; i < 100; ++i) inserts.push_back(rec(1, "insert", 5, ",\"ok\":true", 2 * i + 1, std::to_string(2 * i + 2)));
    const std::string q = std::string(model) == "multiset" ? lines("bound_mem_ms.jsonl", inserts) : p;
    const result r = run("check --model " + std::string(model) + " --max-memory 1k --json - " + q);
    EXPECT_EQ(r.code, 3) << model << r.out;
    EXPECT_NE(r.out.find("\"why\":\"max-memory\""), std::string::npos) << model << r.out;
    EXPECT_NE(r.out.find("\"memory_bound_keys\":"), std::string::npos) << model << r.out;
  }
}

// The finding's reproduction: 30 concurrent inserts and a count of 31. Each
// insert is the same operation to the search, so it is decided at once
// (it ran past 30 s and 800 MB, --key-seconds or not).
TEST(ModelBounds, ThirtyConcurrentInsertsAndACountOf31AreDecided) {
  std::vector<std::string> r;
  for (unsigned i = 0; i < 30; ++i) r.push_back(rec(i + 1, "insert", 5, ",\"ok\":true", 1 + i, std::to_string(100 + i)));
  r.push_back(rec(40, "count", 5, ",\"value\":31,\"ok\":true", 2, "200"));
  const std::string p = lines("n1.jsonl", r);
  EXPECT_EQ(run("check --model multiset " + p).code, 1);
  EXPECT_EQ(run("check --model multiset --key-seconds 3 " + p).code, 1);
  r.back() = rec(40, "count", 5, ",\"value\":30,\"ok\":true", 2, "200");
  EXPECT_EQ(run("check --model multiset " + lines("n1_ok.jsonl", r)).code, 0);
}

// A sequential history is one segment per operation: a step each, however
// long (10^5 operations took 22 s and 1.2 GB through the plain search).
TEST(ModelSearch, ASequentialHistoryTakesAStepPerOperation) {
  using M = gfsl::lin::upsert_key_model;
  std::vector<gfsl::lin::model_op<M>> ops;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    gfsl::lin::model_op<M> o;
    o.call = 2 * i + 1;
    o.ret = 2 * i + 2;
    o.in.code = i % 2 ? gfsl::lin::model_ops::find : gfsl::lin::model_ops::upsert;
    o.in.value = i % 2 ? 0 : i;
    o.out.ok = i % 2 ? true : i == 0;
    o.out.value = i % 2 ? i - 1 : 0;
    ops.push_back(o);
  }
  gfsl::lin::model_search_stats st;
  EXPECT_EQ(gfsl::lin::model_key_search<M>(ops, {}, {}, &st), gfsl::lin::verdict::linearizable);
  EXPECT_EQ(st.segments, ops.size());
  EXPECT_LE(st.nodes, 3 * ops.size());
  ops[50001].out.value = 7;  // a find of a value overwritten long before
  EXPECT_EQ(gfsl::lin::model_key_search<M>(ops, {}, {}, &st), gfsl::lin::verdict::not_linearizable);
}

// The search against the plain Wing-Gong search (every move, the whole set
// memoised) on small random histories of both models: operations around
// the points of a sequential run, pending ones, errors, answers not
// recorded, and a third of them damaged.
template <class M>
void agree_with_wing_gong(std::uint32_t seed, int histories, bool unique_values = false, bool whole_history = false) {
  using gfsl::lin::model_op;
  using gfsl::lin::verdict;
  using namespace gfsl::lin::model_ops;
  const bool multiset = std::is_same_v<M, gfsl::lin::multiset_key_model>;
  std::mt19937 rng(seed);
  auto pick = [&](unsigned n) { return static_cast<unsigned>(rng() % n); };
  int linearizable = 0, violating = 0;
  for (int h = 0; h < histories; ++h) {
    typename M::state s = M::init();
    std::vector<model_op<M>> ops;
    const unsigned n = 1 + pick(9);
    const unsigned spread = 1 + pick(30);
    for (unsigned i = 0; i < n; ++i) {
      model_op<M> o;
      const std::uint64_t point = 10 * i + 40;
      o.call = point - pick(spread);
      o.ret = point + pick(spread);
      o.in.code = static_cast<std::uint8_t>(multiset ? (pick(4) == 3 ? unsigned{count} : pick(3)) : pick(4));
      if (!multiset && (o.in.code == insert || o.in.code == upsert)) o.in.value = unique_values ? 1 + i : 1 + pick(3);
      // The answer the sequential run gives, read off the model's step.
      for (bool ok : {false, true}) {
        for (std::uint64_t v = 0; v < 12; ++v) {
          typename M::output out{};
          out.ok = ok;
          out.value = v;
          if (auto next = M::step(s, o.in, &out)) {
            if (!o.out.ok_known) continue;
            o.out = out;
            o.out.ok_known = false;  // found: stop looking
          }
        }
      }
      o.out.ok_known = true;
      s = *M::step(s, o.in, &o.out);
      const unsigned kind = pick(10);
      if (kind == 0) o.optional = true, o.ret = gfsl::lin::never_returned;
      else if (kind == 1) o.optional = true;
      else if (kind == 2 && !multiset && o.in.code == upsert) o.out.ok_known = false;
      if (multiset) {
        o.in.value = 0;
        if (o.in.code != count) o.out.value = 0;
      }
      if (o.optional && (o.in.code == find || o.in.code == count)) continue;
      ops.push_back(o);
    }
    if (pick(3) == 0 && !ops.empty()) {
      auto& o = ops[pick(static_cast<unsigned>(ops.size()))];
      if (pick(2)) o.out.ok = !o.out.ok;
      else o.out.value = (o.out.value + 1 + pick(3)) % (unique_values ? 11 : 5);
    }
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.call < b.call; });
    const verdict want = gfsl::lin::wing_gong_check<M>(ops, {});
    verdict got = gfsl::lin::model_key_search<M>(ops, {});
    // With no steps allowed for finding a segment's end states, the first
    // segment with a choice is searched together with the rest.
    gfsl::lin::model_search_options joined;
    joined.enumeration_steps_per_op = 0;
    ASSERT_EQ(gfsl::lin::model_key_search<M>(ops, {}, joined), gfsl::lin::wing_gong_check<M>(ops, {})) << "joined, history " << h;
    if (whole_history) {
      // The same operations as records through gfsl check's path: the set
      // checker where every upsert inserted, model_key_search elsewhere.
      std::vector<gfsl::model::op_record> records;
      std::vector<std::uint8_t> codes;
      for (const auto& o : ops) {
        gfsl::model::op_record r;
        r.team = static_cast<gfsl::team_id>(records.size());
        r.op.key = 1;
        r.op.kind = o.in.code == insert || o.in.code == upsert ? gfsl::op_kind::insert
                    : o.in.code == erase                       ? gfsl::op_kind::remove
                                                               : gfsl::op_kind::contains;
        if (r.op.kind == gfsl::op_kind::insert) r.op.value = o.in.value;
        else r.value = o.out.value;
        r.ok = o.out.ok;
        r.call = o.call;
        r.ret = o.ret == gfsl::lin::never_returned ? gfsl::model::no_stamp : o.ret;
        if (o.optional && o.ret != gfsl::lin::never_returned) r.st = gfsl::status::pool_exhausted;
        records.push_back(r);
        codes.push_back(static_cast<std::uint8_t>(o.in.code | (o.out.ok_known ? 0 : gfsl::traces::ok_not_recorded)));
      }
      got = gfsl::lin::check_history_model(gfsl::lin::model_kind::upsert_map, records, codes, {}).v;
    }
    if (got != want) {
      std::string dump;
      for (const auto& o : ops) {
        dump += "[" + std::to_string(o.call) + "," + (o.ret == gfsl::lin::never_returned ? std::string("inf") : std::to_string(o.ret)) + "] " +
                M::describe_operation(o.in, o.optional ? nullptr : &o.out) + (o.optional ? " (optional)" : "") + "\n";
      }
      ASSERT_EQ(got, want) << "history " << h << " of seed " << seed << ":\n" << dump;
    }
    (want == verdict::linearizable ? linearizable : violating) += 1;
  }
  // Both kinds are well represented.
  EXPECT_GT(linearizable, histories / 5);
  EXPECT_GT(violating, histories / 10);
}

TEST(ModelSearch, AgreesWithThePlainSearchOnRandomUpsertMapHistories) {
  agree_with_wing_gong<gfsl::lin::upsert_key_model>(1, 20000);
}

// Every value written once: where R3' (a value's last period) cuts most.
TEST(ModelSearch, AgreesWithThePlainSearchOnRandomUpsertMapHistoriesOfUniqueValues) {
  agree_with_wing_gong<gfsl::lin::upsert_key_model>(3, 20000, true);
}

// Through check_history_model: keys whose upserts all inserted go to the set
// checker (they are map keys), the others to the search.
TEST(ModelSearch, UpsertMapHistoriesAgreeWithThePlainSearchThroughEitherChecker) {
  agree_with_wing_gong<gfsl::lin::upsert_key_model>(4, 20000, false, true);
  agree_with_wing_gong<gfsl::lin::upsert_key_model>(5, 20000, true, true);
}

TEST(ModelSearch, AgreesWithThePlainSearchOnRandomMultisetHistories) {
  agree_with_wing_gong<gfsl::lin::multiset_key_model>(2, 20000);
}

// Finding N2 for the generic models: two keys that only a bound would end,
// checked by two threads with no bound but the address space: one line
// "out of memory", exit 2 (it was std::terminate, exit 134), at each limit.
TEST(ModelBounds, MemoryRunningOutWhileThreadsCheckIsOneLineAndExitTwo) {
  std::vector<std::string> r;
  for (unsigned key : {5u, 6u}) {
    for (unsigned i = 0; i < 40; ++i) r.push_back(rec(i + 1, "upsert", key, ",\"value\":" + std::to_string(i / 2) + ",\"ok\":null", 1, "1000"));
    r.push_back(rec(99, "find", key, ",\"value\":0,\"ok\":true", 2000, "2001"));
    r.push_back(rec(99, "find", key, ",\"value\":1,\"ok\":true", 2002, "2003"));
  }
  const std::string p = lines("two_hard_keys.jsonl", r);
  for (unsigned kb : {40000u, 80000u, 160000u}) {
    // --seconds only guards against a hang: memory runs out long before.
    const std::string cmd = "/bin/sh -c 'ulimit -v " + std::to_string(kb) + "; exec " + GFSL_BINARY +
                            " check --model upsert-map --threads 2 --max-memory 0 --key-seconds 0 --seconds 300 " + p + "' 2>&1";
    FILE* f = popen(cmd.c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string out;
    char buf[4096];
    while (fgets(buf, sizeof buf, f)) out += buf;
    const int status = pclose(f);
    ASSERT_TRUE(WIFEXITED(status)) << kb << " KB: " << out;
    EXPECT_EQ(WEXITSTATUS(status), 2) << kb << " KB: " << out;
    EXPECT_EQ(out, "gfsl check: " + p + ": out of memory\n") << kb << " KB";
  }
}

// --- upsert-map at set speed (issue 53) --------------------------------------

// Histories every upsert-map checker must reject, and close relatives it
// must accept; each value written once, so R3' applies throughout.
TEST(UpsertMap, RejectsWhatNoOrderExplainsAndAcceptsItsRelatives) {
  struct kase {
    const char* name;
    std::vector<std::string> records;
    int code;
  };
  const std::vector<kase> cases = {
      {"stale read: find saw 1 after upsert(2) returned",
       {rec(1, "upsert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(1, "upsert", 5, ",\"value\":2,\"ok\":false", 3, "4"),
        rec(2, "find", 5, ",\"value\":1,\"ok\":true", 5, "6")},
       1},
      {"the same find concurrent with upsert(2): fine",
       {rec(1, "upsert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(1, "upsert", 5, ",\"value\":2,\"ok\":false", 3, "6"),
        rec(2, "find", 5, ",\"value\":1,\"ok\":true", 5, "7")},
       0},
      {"a read of a value never written",
       {rec(1, "upsert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(2, "find", 5, ",\"value\":9,\"ok\":true", 1, "6")},
       1},
      {"a read from a write overwritten before the read began",
       {rec(1, "upsert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(2, "upsert", 5, ",\"value\":2,\"ok\":false", 1, "4"),
        rec(3, "find", 5, ",\"value\":2,\"ok\":true", 5, "6"), rec(3, "find", 5, ",\"value\":1,\"ok\":true", 7, "8")},
       1},
      {"two finds that see the writes in either order, concurrent: fine",
       {rec(1, "upsert", 5, ",\"value\":1,\"ok\":null", 1, "10"), rec(2, "upsert", 5, ",\"value\":2,\"ok\":null", 1, "10"),
        rec(3, "find", 5, ",\"value\":2,\"ok\":true", 2, "9"), rec(4, "find", 5, ",\"value\":1,\"ok\":true", 3, "9")},
       0},
      {"the same finds one after the other see opposite orders",
       {rec(1, "upsert", 5, ",\"value\":1,\"ok\":null", 1, "10"), rec(2, "upsert", 5, ",\"value\":2,\"ok\":null", 1, "10"),
        rec(3, "find", 5, ",\"value\":2,\"ok\":true", 2, "3"), rec(3, "find", 5, ",\"value\":1,\"ok\":true", 4, "5"),
        rec(4, "find", 5, ",\"value\":2,\"ok\":true", 6, "7")},
       1},
      {"erase said absent while the key held a value",
       {rec(1, "upsert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(2, "erase", 5, ",\"ok\":false", 3, "4")},
       1},
      {"insert said inserted while the key held a value",
       {rec(1, "upsert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(2, "insert", 5, ",\"value\":2,\"ok\":true", 3, "4")},
       1},
      {"upsert said it replaced after the only value was erased",
       {rec(1, "insert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(2, "erase", 5, ",\"value\":1,\"ok\":true", 3, "4"),
        rec(3, "upsert", 5, ",\"value\":2,\"ok\":false", 5, "6")},
       1},
      {"erase answered a value that an earlier upsert had replaced",
       {rec(1, "insert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(2, "upsert", 5, ",\"value\":2,\"ok\":false", 3, "4"),
        rec(3, "erase", 5, ",\"value\":1,\"ok\":true", 5, "6")},
       1},
      {"a pending upsert explains a later find of its value",
       {rec(1, "insert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(2, "upsert", 5, ",\"value\":2,\"ok\":null", 3, "null"),
        rec(3, "find", 5, ",\"value\":2,\"ok\":true", 5, "6"), rec(3, "find", 5, ",\"value\":2,\"ok\":true", 7, "8")},
       0},
      {"a pending upsert takes effect once: its value cannot come back after another",
       {rec(1, "insert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(2, "upsert", 5, ",\"value\":2,\"ok\":null", 3, "null"),
        rec(3, "find", 5, ",\"value\":2,\"ok\":true", 5, "6"), rec(3, "upsert", 5, ",\"value\":3,\"ok\":false", 7, "8"),
        rec(3, "find", 5, ",\"value\":2,\"ok\":true", 9, "10")},
       1},
      {"a pending erase explains a later absent find",
       {rec(1, "insert", 5, ",\"value\":1,\"ok\":true", 1, "2"), rec(2, "erase", 5, ",\"ok\":true", 3, "null"),
        rec(3, "find", 5, ",\"ok\":false", 5, "6")},
       0},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    // Erases' values are compared where the trace says its recorder wrote them.
    std::vector<std::string> records = {R"({"format":"gfsl-history","version":1,"delete_value":true})"};
    records.insert(records.end(), cases[i].records.begin(), cases[i].records.end());
    const result r = run("check --model upsert-map " + lines("um_" + std::to_string(i) + ".jsonl", records));
    EXPECT_EQ(r.code, cases[i].code) << cases[i].name << "\n" << r.out;
  }
}

// A hot key, 64 operations in flight, every value written once, upserts
// that replace: decided in a bounded number of steps per operation (it was
// undecided after 20 s at 100,000 operations before R3'), and damaged, refused.
TEST(UpsertMap, AHotKeyOf64InFlightTakesAFewStepsPerOperation) {
  using M = gfsl::lin::upsert_key_model;
  using gfsl::value_type;
  using namespace gfsl::lin::model_ops;
  std::mt19937 rng(9);
  std::vector<gfsl::lin::model_op<M>> ops;
  M::state s = M::init();
  const std::uint64_t n = 20000, spread = 320;
  for (std::uint64_t i = 0; i < n; ++i) {
    gfsl::lin::model_op<M> o;
    const std::uint64_t point = 10 * i + spread + 1;
    o.call = point - rng() % spread;
    o.ret = point + rng() % spread;
    const unsigned r = rng() % 20;
    o.in.code = r < 6 ? upsert : r < 8 ? insert : r < 11 ? erase : find;
    o.in.value = i + 1;
    o.out.ok = o.in.code == insert || o.in.code == upsert ? !s.present : s.present;
    o.out.value = o.in.code == erase || o.in.code == find ? s.value : 0;
    s = *M::step(s, o.in, &o.out);
    ops.push_back(o);
  }
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.call < b.call; });
  gfsl::lin::model_search_options budget;
  budget.node_budget = 20 * n;
  gfsl::lin::model_search_stats st;
  EXPECT_EQ(gfsl::lin::model_key_search<M>(ops, {}, budget, &st), gfsl::lin::verdict::linearizable) << st.nodes << " steps";
  // A find in the middle answers a value written (and overwritten) long
  // before, or one never written.
  value_type early = 0;
  for (const auto& o : ops) {
    if (o.in.code == upsert) {
      early = o.in.value;
      break;
    }
  }
  for (const value_type wrong : {early, value_type{n + 100}}) {
    std::vector<gfsl::lin::model_op<M>> damaged = ops;
    for (auto& o : damaged) {
      if (o.call > 10 * n / 2 && o.in.code == find && o.out.ok) {
        o.out.value = wrong;
        break;
      }
    }
    EXPECT_EQ(gfsl::lin::model_key_search<M>(damaged, {}, budget, &st), gfsl::lin::verdict::not_linearizable)
        << wrong << ": " << st.nodes << " steps";
  }
}

// 40 concurrent upserts of values none reads, then finds of two of them one
// after the other: both would have to be the last written. The search goes
// through the sets of the other 38 (it was undecided at --key-seconds 5);
// the zones of the two values overlap, and refute it at once.
TEST(UpsertMap, OverlappingZonesRefuteWhatTheSearchWouldExhaust) {
  std::vector<std::string> r = {rec(1, "upsert", 5, ",\"value\":1000,\"ok\":true", 1, "2")};
  for (unsigned i = 0; i < 40; ++i) r.push_back(rec(i + 2, "upsert", 5, ",\"value\":" + std::to_string(i + 1) + ",\"ok\":false", 3, "100"));
  r.push_back(rec(99, "find", 5, ",\"value\":1,\"ok\":true", 200, "201"));
  r.push_back(rec(99, "find", 5, ",\"value\":2,\"ok\":true", 202, "203"));
  result out = run("check --model upsert-map --key-seconds 0 --seconds 300 " + lines("zones.jsonl", r));
  EXPECT_EQ(out.code, 1) << out.out;
  // One find alone is fine: value 1 written last.
  r.pop_back();
  out = run("check --model upsert-map --key-seconds 0 --seconds 300 " + lines("zones_ok.jsonl", r));
  EXPECT_EQ(out.code, 0) << out.out;
}

}  // namespace

// --- The model a trace names -----------------------------------------------

namespace {

// A trace as gfsl/record.cuh writes it: a metadata line naming the model and
// the recorder, then the records.
std::string recorded(const std::string& name, const std::string& model, const std::vector<std::string>& records,
                     const std::string& recorder = ",\"recorder\":\"gfsl/record.cuh\"") {
  std::vector<std::string> all{"{\"format\":\"gfsl-history\",\"version\":1,\"backend\":\"cuda\",\"clock\":\"device_counter\","
                               "\"delete_value\":true" +
                               recorder + (model.empty() ? "" : ",\"model\":\"" + model + "\"") + "}"};
  all.insert(all.end(), records.begin(), records.end());
  return lines(name, all);
}

const std::vector<std::string> multiset_records = {rec(0, "insert", 5, ",\"ok\":true", 1, "2"), rec(1, "insert", 5, ",\"ok\":true", 3, "4"),
                                                   rec(2, "count", 5, ",\"value\":2,\"ok\":true", 5, "6")};

}  // namespace

TEST(TraceModel, ATraceNamingItsModelIsCheckedUnderItWithoutModel) {
  const std::string p = recorded("named-multiset.jsonl", "multiset", multiset_records);
  result r = run("check " + p);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("multiset"), std::string::npos) << r.out;
  // From standard input too (the model is picked from the stream's first line).
  r = run("check - < " + p);
  EXPECT_EQ(r.code, 0) << r.out;
  // The same --model agrees.
  r = run("check --model multiset " + p);
  EXPECT_EQ(r.code, 0) << r.out;
  // Without the metadata's model the count is an operation set does not take.
  r = run("check " + recorded("unnamed-multiset.jsonl", "", multiset_records));
  EXPECT_EQ(r.code, 2) << r.out;
}

TEST(TraceModel, AModelThatDisagreesWithTheTracesIsOneLineExitTwo) {
  const std::string p = recorded("disagree.jsonl", "multiset", multiset_records);
  for (const char* m : {"set", "map", "upsert-map"}) {
    const result r = run(std::string("check --model ") + m + " " + p);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("the trace names model multiset, not " + std::string(m) + " (--model)"), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  // set and map are one object: either --model takes a trace naming the other.
  const std::string map = recorded("map.jsonl", "map", {rec(0, "insert", 5, ",\"value\":1,\"ok\":true", 1, "2")});
  EXPECT_EQ(run("check --model set " + map).code, 0);
  // A model gfsl check does not know: refused, naming the ones it does.
  const result r = run("check " + recorded("btree.jsonl", "btree", {rec(0, "insert", 5, ",\"value\":1,\"ok\":true", 1, "2")}));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("the trace names model \"btree\", which gfsl check does not know"), std::string::npos) << r.out;
}

TEST(TraceModel, AForeignRecordersReportListsOnlyTheChecksThatApply) {
  const std::vector<std::string> h = {rec(0, "insert", 5, ",\"value\":1,\"ok\":true", 1, "2"),
                                      rec(1, "contains", 5, ",\"value\":1,\"ok\":true", 3, "4")};
  result r = run("check " + recorded("foreign.jsonl", "map", h));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verdict:  linearizable"), std::string::npos) << r.out;
  for (const char* gfsl_own : {"level-list", "lock-discipline", "not run", "snapshot:", "events:"})
    EXPECT_EQ(r.out.find(gfsl_own), std::string::npos) << gfsl_own << "\n" << r.out;
  r = run("check --json - " + recorded("foreign-json.jsonl", "map", h));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("level-list"), std::string::npos) << r.out;
  // A trace of gfsl's own writers (no recorder named) reads as before: the
  // invariants it cannot feed are listed as not run.
  r = run("check " + recorded("own.jsonl", "", h, ""));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("not run   level-list"), std::string::npos) << r.out;
}

TEST(TraceModel, TheModelIsPickedBeforeAnyRangeOfALargeFileIsRead) {
  // Read in several ranges at once (each needs the operation table first).
  std::vector<std::string> h;
  for (unsigned i = 0; i < 3000; ++i)
    h.push_back(rec(i % 4, i % 3 == 2 ? "count" : "insert", i % 50,
                    i % 3 == 2 ? ",\"value\":0,\"ok\":true" : ",\"ok\":true", 10 * i + 1, std::to_string(10 * i + 2)));
  const std::string p = recorded("ranges.jsonl", "multiset", h);
  const gfsl::traces::operation_table ops = gfsl::lin::operation_table_of(gfsl::lin::model_kind::multiset);
  unsigned calls = 0;
  const gfsl::traces::model_chooser choose = [&](const gfsl::traces::trace_header& hd) -> const gfsl::traces::operation_table* {
    ++calls;
    EXPECT_EQ(gfsl::traces::declared_model(hd), "multiset");
    return &ops;
  };
  const gfsl::traces::trace t = gfsl::traces::detail::read_json(p, 4, nullptr, nullptr, &choose);
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(t.history.size(), h.size());
  EXPECT_EQ(t.op_codes.size(), h.size());
  EXPECT_EQ(gfsl::traces::declared_recorder(t.header), "gfsl/record.cuh");
}
