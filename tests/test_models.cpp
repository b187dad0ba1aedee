// gfsl check --model: the sequential specifications beyond GFSL's map, each
// given histories it must accept and histories it must reject, through the
// command as users run it and through the library; and the JSON-lines
// reader's handling of members and operations it does not know.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "linearizability/models.hpp"
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
