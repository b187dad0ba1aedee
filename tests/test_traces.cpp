// Trace files: both forms round-trip exactly, in both directions, header and
// all; readers refuse bad input with one line naming the file, the byte
// offset and what was expected, for every truncation of a valid file and for
// byte flips anywhere in it, without crashing and without allocating what a
// corrupt length asks for.
#include <gtest/gtest.h>

#include "tests/files.hpp"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "linearizability/synthetic.hpp"
#include "traces/internal.hpp"
#include "traces/trace.hpp"
#include "tests/trace_bytes.hpp"

namespace {

using gfsl::model::op_record;
using gfsl::traces::trace;
using gfsl::traces::trace_error;

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "gfsl_traces_" + std::to_string(::getpid()) + "_" + name;
}

using gfsl::testing_files::slurp;

using gfsl::testing_files::spit;

gfsl::traces::trace_header sample_header() {
  gfsl::model::workload w;
  w.ops = 1234;
  w.insert_pct = 20;
  w.delete_pct = 30;
  w.contains_pct = 50;
  w.range = 777;
  w.prefill = 0.25;
  w.teams = 9;
  w.chunk = 16;
  w.p_chunk = 0.75;
  w.seed = 0xFFFFFFFFFFFFFFF0ull;
  w.hot_keys = 3;
  w.hot_pct = 40;
  w.hot_spread = true;
  w.sequential_keys = true;
  w.reraise = true;
  auto h = gfsl::traces::make_header(w, "threads", "NVIDIA H200 \"SXM\"\tunit", gfsl::model::clock_kind::device_counter,
                                      "gfsl run --backend threads --teams 9 --seed 18446744073709551600");
  gfsl::traces::extra_field a;
  a.name = "granularity";
  a.s = "lane \xc3\xa9";
  h.extra.push_back(a);
  gfsl::traces::extra_field b;
  b.name = "k_steps";
  b.kind = gfsl::traces::extra_field::type::unsigned_integer;
  b.u = 42;
  h.extra.push_back(b);
  gfsl::traces::extra_field c;
  c.name = "ratio";
  c.kind = gfsl::traces::extra_field::type::real;
  c.r = 3.0;
  h.extra.push_back(c);
  gfsl::traces::extra_field d;
  d.name = "events";
  d.kind = gfsl::traces::extra_field::type::boolean;
  d.b = true;
  h.extra.push_back(d);
  return h;
}

// Every kind of record: pending, errors, unrecorded delete values, extremes.
std::vector<op_record> sample_history() {
  gfsl::lin::synthetic_options o;
  o.ops = 300;
  o.keys = 5;
  o.teams = 7;
  o.pending = 3;
  std::vector<op_record> h = gfsl::lin::synthetic_history(o);
  op_record e;
  e.team = 0xFFFFFFFFu;
  e.op.kind = gfsl::op_kind::insert;
  e.op.key = 0xFFFFFFFFu;
  e.op.value = 0xFFFFFFFFu;
  e.st = gfsl::status::pool_exhausted;
  e.call = 0xFFFFFFFFFFFFFFFDull;
  e.ret = 0xFFFFFFFFFFFFFFFEull;
  h.push_back(e);
  e.op.kind = gfsl::op_kind::remove;
  e.op.value = 0;  // an argument only inserts have
  e.st = gfsl::status::stopped;
  e.ret = gfsl::model::no_stamp;
  h.push_back(e);
  return h;
}

std::vector<std::uint32_t> deletes_that_removed(const std::vector<op_record>& h, std::size_t every) {
  std::vector<std::uint32_t> out;
  std::size_t seen = 0;
  for (std::uint32_t i = 0; i < h.size(); ++i) {
    if (h[i].op.kind == gfsl::op_kind::remove && h[i].ok && !h[i].pending() && seen++ % every == 0) out.push_back(i);
  }
  return out;
}

bool same_records(const std::vector<op_record>& a, const std::vector<op_record>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const op_record &x = a[i], &y = b[i];
    if (x.team != y.team || x.op.kind != y.op.kind || x.op.key != y.op.key || x.op.value != y.op.value || x.st != y.st ||
        x.ok != y.ok || x.value != y.value || x.call != y.call || x.ret != y.ret) {
      ADD_FAILURE() << "record " << i << " differs: " << gfsl::traces::record_json(x) << " vs " << gfsl::traces::record_json(y);
      return false;
    }
  }
  return true;
}

void expect_same_header(const gfsl::traces::trace_header& a, const gfsl::traces::trace_header& b) {
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.replay, b.replay);
  EXPECT_EQ(a.clock, b.clock);
  EXPECT_EQ(a.workload.ops, b.workload.ops);
  EXPECT_EQ(a.workload.insert_pct, b.workload.insert_pct);
  EXPECT_EQ(a.workload.delete_pct, b.workload.delete_pct);
  EXPECT_EQ(a.workload.contains_pct, b.workload.contains_pct);
  EXPECT_EQ(a.workload.range, b.workload.range);
  EXPECT_EQ(a.workload.prefill, b.workload.prefill);
  EXPECT_EQ(a.workload.teams, b.workload.teams);
  EXPECT_EQ(a.workload.chunk, b.workload.chunk);
  EXPECT_EQ(a.workload.p_chunk, b.workload.p_chunk);
  EXPECT_EQ(a.workload.seed, b.workload.seed);
  EXPECT_EQ(a.workload.hot_keys, b.workload.hot_keys);
  EXPECT_EQ(a.workload.hot_pct, b.workload.hot_pct);
  EXPECT_EQ(a.workload.hot_spread, b.workload.hot_spread);
  EXPECT_EQ(a.workload.sequential_keys, b.workload.sequential_keys);
  EXPECT_EQ(a.workload.reraise, b.workload.reraise);
  EXPECT_EQ(a.extra, b.extra);
}

// The error is one line that names the file and a byte offset.
void expect_one_line_error(const std::string& path, const std::string& what, const std::string& expected_part = "") {
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
  EXPECT_NE(what.find("byte "), std::string::npos) << what;
  if (!expected_part.empty()) {
    EXPECT_NE(what.find(expected_part), std::string::npos) << what;
  }
}

std::string read_error(const std::string& path) {
  try {
    gfsl::traces::read_trace(path);
  } catch (const trace_error& e) {
    return e.what();
  }
  return {};
}

TEST(Traces, BinaryRoundTripKeepsHeaderRecordsAndUnrecordedValues) {
  const auto header = sample_header();
  const auto history = sample_history();
  const auto unrecorded = deletes_that_removed(history, 3);
  ASSERT_FALSE(unrecorded.empty());
  const std::string p = temp_path("rt.trace");
  gfsl::traces::write_trace(p, header, history, unrecorded);
  EXPECT_EQ(gfsl::traces::detect_format(p), gfsl::traces::trace_format::binary);
  const trace t = gfsl::traces::read_trace(p);
  EXPECT_EQ(t.format, gfsl::traces::trace_format::binary);
  EXPECT_EQ(t.version, gfsl::traces::binary_version);
  EXPECT_EQ(t.header.delete_value, std::optional<bool>(true));
  expect_same_header(header, t.header);
  std::vector<op_record> expected = history;
  for (std::uint32_t i : unrecorded) expected[i].value = 0;  // not recorded: not in the file
  EXPECT_TRUE(same_records(expected, t.history));
  EXPECT_EQ(t.unrecorded_values, unrecorded);
  std::remove(p.c_str());
}

TEST(Traces, JsonRoundTripKeepsHeaderRecordsAndUnrecordedValues) {
  const auto header = sample_header();
  const auto history = sample_history();
  const auto unrecorded = deletes_that_removed(history, 2);
  const std::string p = temp_path("rt.jsonl");
  gfsl::traces::write_trace_json(p, header, history, unrecorded);
  EXPECT_EQ(gfsl::traces::detect_format(p), gfsl::traces::trace_format::json);
  const trace t = gfsl::traces::read_trace(p);
  EXPECT_EQ(t.format, gfsl::traces::trace_format::json);
  expect_same_header(header, t.header);
  std::vector<op_record> expected = history;
  for (std::uint32_t i : unrecorded) expected[i].value = 0;
  EXPECT_TRUE(same_records(expected, t.history));
  EXPECT_EQ(t.unrecorded_values, unrecorded);
  std::remove(p.c_str());
}

TEST(Traces, ConversionBothWaysIsByteIdentical) {
  const std::string bin = temp_path("a.trace"), json = temp_path("a.jsonl"), bin2 = temp_path("b.trace"), json2 = temp_path("b.jsonl");
  const auto history = sample_history();
  const auto unrecorded = deletes_that_removed(history, 4);
  gfsl::traces::write_trace(bin, sample_header(), history, unrecorded);
  gfsl::traces::write_trace(json, gfsl::traces::read_trace(bin), gfsl::traces::trace_format::json);
  gfsl::traces::write_trace(bin2, gfsl::traces::read_trace(json), gfsl::traces::trace_format::binary);
  gfsl::traces::write_trace(json2, gfsl::traces::read_trace(bin2), gfsl::traces::trace_format::json);
  EXPECT_EQ(slurp(bin), slurp(bin2));
  EXPECT_EQ(slurp(json), slurp(json2));
  for (const auto& p : {bin, json, bin2, json2}) std::remove(p.c_str());
}

TEST(Traces, JsonLinesAreExactlyTheDocumentedObjects) {
  op_record r;
  r.team = 3;
  r.op.kind = gfsl::op_kind::insert;
  r.op.key = 17;
  r.op.value = 9;
  r.ok = true;
  r.call = 120;
  r.ret = 180;
  EXPECT_EQ(gfsl::traces::record_json(r), R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":120,"ret":180})");
  r.op.kind = gfsl::op_kind::remove;
  r.op.value = 0;
  r.value = 9;
  r.ret = gfsl::model::no_stamp;
  EXPECT_EQ(gfsl::traces::record_json(r), R"({"team":3,"op":"delete","key":17,"value":9,"ok":true,"call":120,"ret":null})");
  r.st = gfsl::status::pool_exhausted;
  r.ret = 130;
  EXPECT_EQ(gfsl::traces::record_json(r, false), R"({"team":3,"op":"delete","key":17,"ok":true,"call":120,"ret":130,"status":"pool_exhausted"})");
}

TEST(Traces, JsonReaderTakesMembersInAnyOrderAndMetadataIsOptional) {
  const std::string p = temp_path("order.jsonl");
  spit(p,
       "  {\"ret\":180,\"call\":120,\"ok\":true,\"value\":9,\"key\":17,\"op\":\"insert\",\"team\":3}\r\n"
       "{\"team\":1,\"op\":\"contains\",\"key\":17,\"ok\":false,\"call\":121,\"ret\":null}\n"
       "{\"team\":2,\"op\":\"delete\",\"key\":17,\"ok\":true,\"call\":190,\"ret\":200}\n"
       "{\"team\":2, \"op\" : \"delete\", \"key\":17, \"value\":null, \"ok\":false, \"call\":210, \"ret\":220}");
  const trace t = gfsl::traces::read_trace(p);
  ASSERT_EQ(t.history.size(), 4u);
  EXPECT_EQ(t.history[0].team, 3u);
  EXPECT_EQ(t.history[0].op.value, 9u);
  EXPECT_EQ(t.history[0].call, 120u);
  EXPECT_EQ(t.history[0].ret, 180u);
  EXPECT_TRUE(t.history[1].pending());
  EXPECT_EQ(t.unrecorded_values, std::vector<std::uint32_t>{2});  // a successful delete without its value
  EXPECT_EQ(t.header.backend, "");
  EXPECT_EQ(t.header.clock, gfsl::model::clock_kind::none);
  std::remove(p.c_str());
}

// One spelling written (the trace library's, with '_'), both read: gfsl fuzz
// once wrote "global-counter" in its history.jsonl, and those files still
// check.
TEST(Traces, ClockNamesAreWrittenWithUnderscoresAndReadInEitherSpelling) {
  using gfsl::model::clock_kind;
  const std::string p = temp_path("clock.jsonl");
  for (clock_kind c : {clock_kind::none, clock_kind::global_counter, clock_kind::device_counter, clock_kind::globaltimer}) {
    gfsl::traces::trace_header h = sample_header();
    h.clock = c;
    gfsl::traces::write_trace_json(p, h, {});
    EXPECT_NE(slurp(p).find(std::string("\"clock\":\"") + gfsl::traces::clock_name(c) + "\""), std::string::npos) << slurp(p);
    EXPECT_EQ(slurp(p).find("-counter"), std::string::npos) << slurp(p);
    EXPECT_EQ(gfsl::traces::read_trace(p).header.clock, c);
  }
  const std::string record = "\n{\"team\":0,\"op\":\"contains\",\"key\":1,\"ok\":false,\"call\":0,\"ret\":1}\n";
  spit(p, R"({"format":"gfsl-history","version":1,"backend":"host","clock":"global-counter"})" + record);
  EXPECT_EQ(gfsl::traces::read_trace(p).header.clock, clock_kind::global_counter);
  spit(p, R"({"format":"gfsl-history","version":1,"clock":"device-counter"})" + record);
  EXPECT_EQ(gfsl::traces::read_trace(p).header.clock, clock_kind::device_counter);
  spit(p, R"({"format":"gfsl-history","version":1,"clock":"global counter"})" + record);
  expect_one_line_error(p, read_error(p), "expected a clock none, global_counter");
  std::remove(p.c_str());
}

// The delete-value declaration travels in both forms (absent, true, false);
// a binary file of version 1 (no declaration then) reads as declaring true,
// and one that has the field is refused.
TEST(Traces, TheDeleteValueDeclarationRoundTripsAndVersionOneFilesStillRead) {
  const std::string bin = temp_path("dv.trace"), json = temp_path("dv.jsonl");
  const auto history = sample_history();
  for (std::optional<bool> declared : {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)}) {
    gfsl::traces::trace_header h = sample_header();
    h.delete_value = declared;
    gfsl::traces::write_trace(bin, h, history);
    gfsl::traces::write_trace_json(json, h, history);
    EXPECT_EQ(gfsl::traces::read_trace(bin).header.delete_value, declared);
    EXPECT_EQ(gfsl::traces::read_trace(json).header.delete_value, declared);
    EXPECT_EQ(slurp(json).find("\"delete_value\":") != std::string::npos, declared.has_value());
  }
  // Version 1: the same sections, checksummed by version 1's rule, written
  // without the field as version 1 writers did.
  gfsl::traces::trace_header h = sample_header();
  h.delete_value.reset();
  gfsl::traces::write_trace(bin, h, history);
  std::string bytes = slurp(bin);
  ASSERT_EQ(bytes[8], static_cast<char>(gfsl::traces::binary_version));
  bytes = gfsl::testing_files::assemble(1, gfsl::testing_files::sections_of(bytes));
  spit(bin, bytes);
  trace t = gfsl::traces::read_trace(bin);
  EXPECT_EQ(t.version, 1u);
  EXPECT_EQ(t.header.delete_value, std::optional<bool>(true));
  EXPECT_TRUE(gfsl::traces::delete_values_compared(t));
  EXPECT_NE(gfsl::traces::delete_value_convention(t).find("version 1"), std::string::npos);
  // Converted, it takes the current version, with the declaration explicit.
  gfsl::traces::write_trace(json, t, gfsl::traces::trace_format::json);
  EXPECT_NE(slurp(json).find("\"delete_value\":true"), std::string::npos);
  // A version 1 file with the field is not one a version 1 writer made.
  h.delete_value = false;
  gfsl::traces::write_trace(bin, h, history);
  bytes = gfsl::testing_files::assemble(1, gfsl::testing_files::sections_of(slurp(bin)));
  spit(bin, bytes);
  expect_one_line_error(bin, read_error(bin), "no \"delete_value\" field in a version 1 trace");
  bytes[8] = 4;
  spit(bin, bytes);
  expect_one_line_error(bin, read_error(bin), "expected format version 1 to 3");
  // A declaration must be a boolean.
  spit(json, R"({"format":"gfsl-history","version":1,"delete_value":1})");
  expect_one_line_error(json, read_error(json), "true or false for \"delete_value\"");
  std::remove(bin.c_str());
  std::remove(json.c_str());
}

// Undeclared: every successful delete's value is set aside; declared: only
// those the file leaves out.
TEST(Traces, UncheckedDeleteValuesFollowTheDeclaration) {
  trace t;
  t.history = sample_history();
  const auto unrecorded = deletes_that_removed(t.history, 3);
  const auto every = deletes_that_removed(t.history, 1);
  ASSERT_GT(every.size(), unrecorded.size());
  t.unrecorded_values = unrecorded;
  EXPECT_EQ(gfsl::traces::unchecked_delete_values(t), every);
  EXPECT_EQ(gfsl::traces::delete_value_convention(t).rfind("not compared (the trace does not declare delete_value", 0), 0u);
  t.header.delete_value = false;
  EXPECT_EQ(gfsl::traces::unchecked_delete_values(t), every);
  EXPECT_EQ(gfsl::traces::delete_value_convention(t).rfind("not compared (the trace declares delete_value false", 0), 0u);
  t.header.delete_value = true;
  t.format = gfsl::traces::trace_format::json;
  EXPECT_EQ(gfsl::traces::unchecked_delete_values(t), unrecorded);
  EXPECT_EQ(gfsl::traces::delete_value_convention(t).rfind("compared (the trace declares delete_value true", 0), 0u);
  EXPECT_NE(gfsl::traces::delete_value_convention(t).find(std::to_string(unrecorded.size()) + " deletes carry no value"), std::string::npos);
}

// Names and strings may be written with escapes; whitespace (spaces, tabs,
// a carriage return before the newline) may surround tokens.
TEST(Traces, JsonReaderTakesEscapesAndWhitespace) {
  const std::string p = temp_path("escapes.jsonl");
  spit(p, "{\"format\":\"gfsl-history\",\"version\":1,\"backend\":\"h\\u00f6st \\ud83d\\ude00\"}\r\n"
          "{\"te\\u0061m\":3,\t\"op\":\"ins\\u0065rt\",\"key\":17,\"value\":9,\"ok\":true,\"call\":1,\"ret\":2,\"status\":\"\\u006fk\"} \r\n");
  const trace t = gfsl::traces::read_trace(p);
  EXPECT_EQ(t.header.backend, "h\xc3\xb6st \xf0\x9f\x98\x80");
  ASSERT_EQ(t.history.size(), 1u);
  EXPECT_EQ(t.history[0].team, 3u);
  EXPECT_EQ(t.history[0].op.kind, gfsl::op_kind::insert);
  EXPECT_EQ(t.history[0].op.value, 9u);
  std::remove(p.c_str());
}

TEST(Traces, JsonReaderRefusesBadLinesWithOneLineNamingFileOffsetAndExpectation) {
  const std::string good = R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":120,"ret":180})";
  const std::string meta = R"({"format":"gfsl-history","version":1})";
  struct bad_case {
    std::string text;
    std::string at;        // the error names the byte where this first occurs ("" : the end of the text)
    std::string expected;  // part of the message
  };
  const std::vector<bad_case> cases = {
      {good + "\n" + R"({"team":3,"op":"insert","key":17,"ok":true,"call":1,"ret":2})", "", "\"value\""},
      // An unknown member is passed over (test_models.cpp), but not with a nested value.
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":2,"colour":{"r":1}})", "{\"r", "nested"},
      {R"({"team":3,"team":4,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":2})", "\"team\":4", "once"},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":2,})", "}", "'\"'"},
      {R"({"team":03,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":2})", "03", "leading zeros"},
      {R"({"team":3,"op":"insert","key":4294967296,"value":9,"ok":true,"call":1,"ret":2})", "4294967296", "[0, 4294967295]"},
      {R"({"team":3,"op":"insert","key":-1,"value":9,"ok":true,"call":1,"ret":2})", "-1", "[0, 4294967295]"},
      {R"({"team":3,"op":"insert","key":1.5,"value":9,"ok":true,"call":1,"ret":2})", "1.5", "[0, 4294967295]"},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":1,"call":1,"ret":2})", "1,\"call", "true or false"},
      {R"({"team":3,"op":"upsert","key":17,"value":9,"ok":true,"call":1,"ret":2})", "\"upsert", "insert, delete or contains (model set"},
      {R"({"team":3,"op":"insert","key":{"k":1},"value":9,"ok":true,"call":1,"ret":2})", "{\"k", "nested"},
      {R"({"team":3,"op":"ins\qrt","key":17,"value":9,"ok":true,"call":1,"ret":2})", "q", "expected one of"},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":5,"ret":2})", "{", "not before the call stamp 5"},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":2} x)", "x", "end of the line"},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":2,"status":"melted"})", "\"melted", "\"status\""},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":18446744073709551615,"ret":null})", "18446744073709551615", "[0, 18446744073709551614]"},
      {R"({"team":3,"op":"contains","key":17,"ok":true,"call":1,"ret":2})", "", "the value found"},
      {good + "\n\n" + good, "\n\n", "expected '{'"},
      {R"({"format":"gfsl-history","version":2})", "2}", "\"version\":1"},
      {R"({"format":"other","version":1})", "\"other", "gfsl-history"},
      {meta + "\n" + meta, "\n{", "may only be the first line"},
      {R"({"format":"gfsl-history","version":1,"chunk":"big"})", "\"big", "\"chunk\""},
      {R"({"format":"gfsl-history","version":1,"clock":"sundial"})", "\"sundial", "globaltimer"},
      {R"({"format":"gfsl-history","version":1,"Bad Name":1})", "1}", "metadata names"},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":2)", "", "',' or '}'"},
      {R"({"team":3,"op":"insert","key":17,"value":"9","ok":true,"call":1,"ret":2})", "\"9", "\"value\""},
      {"{\"team\":3,\"op\":\"in\x01sert\"}", "\x01", "printable"},
      {"{\"team\":3,\"op\":\"in\xffsert\"}", "\xff", "UTF-8"},
      // What simdjson leaves to the reader: atoms run on, lone surrogates,
      // control bytes in strings, numbers that are not unsigned integers.
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":nullx})", "x}", "',' or '}'"},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":truer,"call":1,"ret":2})", "r,\"call", "',' or '}'"},
      {R"({"team":3,"op":"\udc00","key":17,"value":9,"ok":true,"call":1,"ret":2})", "\\udc00", "high surrogate"},
      {R"({"format":"gfsl-history","version":1,"backend":"\ud800x"})", "x\"}", "low surrogate"},
      {std::string("{\"team\":3,\"op\":\"ins") + '\0' + "ert\"}", std::string(1, '\0'), "printable"},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":1.0,"ret":2})", "1.0", "[0, 18446744073709551614]"},
      {R"({"team":3,"op":"insert","key":1e2,"value":9,"ok":true,"call":1,"ret":2})", "1e2", "[0, 4294967295]"},
      {R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":18446744073709551616})", "18446744073709551616", "below 2^64"},
  };
  const std::string p = temp_path("bad.jsonl");
  for (const bad_case& c : cases) {
    spit(p, c.text);
    const std::string what = read_error(p);
    ASSERT_FALSE(what.empty()) << c.text;
    expect_one_line_error(p, what, c.expected);
    std::size_t offset = c.text.size();
    if (!c.at.empty()) {
      offset = c.text.find(c.at);
      if (c.at[0] == '\n') ++offset;  // the line after the marked newline
      if (c.at == "{") offset = c.text.rfind('\n') == std::string::npos ? 0 : c.text.rfind('\n') + 1;
    }
    EXPECT_NE(what.find("byte " + std::to_string(offset) + " "), std::string::npos) << c.text << "\n" << what;
  }
  // The file's first byte decides the form: a byte-order mark is neither.
  spit(p, "\xef\xbb\xbf" + good);
  const std::string what = read_error(p);
  expect_one_line_error(p, what, "starting with '{'");
  EXPECT_NE(what.find("byte 0:"), std::string::npos) << what;
  std::remove(p.c_str());
}

// Large JSON-lines files are read as ranges in parallel, joined in order:
// the same trace, and the same error (the first a reader from the start
// meets, with its line number), however many ranges.
TEST(Traces, JsonRangesReadInParallelGiveTheSameTraceAndTheSameFirstError) {
  const std::string p = temp_path("ranges.jsonl");
  const auto history = sample_history();
  const auto unrecorded = deletes_that_removed(history, 2);
  gfsl::traces::write_trace_json(p, sample_header(), history, unrecorded);
  const trace whole = gfsl::traces::detail::read_json(p, 1);
  ASSERT_EQ(whole.history.size(), history.size());
  for (unsigned ranges = 2; ranges <= 9; ++ranges) {
    const trace t = gfsl::traces::detail::read_json(p, ranges);
    EXPECT_TRUE(same_records(whole.history, t.history)) << ranges << " ranges";
    EXPECT_EQ(t.unrecorded_values, whole.unrecorded_values) << ranges << " ranges";
    expect_same_header(whole.header, t.header);
  }
  auto error_of = [&](unsigned ranges) -> std::string {
    try {
      gfsl::traces::detail::read_json(p, ranges);
    } catch (const trace_error& e) {
      return e.what();
    }
    return {};
  };
  std::string text = slurp(p);
  auto line_start = [&](std::size_t line) {  // 1-based
    std::size_t at = 0;
    for (std::size_t l = 1; l < line; ++l) at = text.find('\n', at) + 1;
    return at;
  };
  // A bad line near the end, then one more near the start: every split
  // reports the earlier one, with its line number.
  const std::size_t late = line_start(280);
  const std::size_t ok_value = text.find("\"ok\":", late) + 5;
  text.replace(ok_value, text[ok_value] == 't' ? 4 : 5, "1");
  spit(p, text);
  const std::string late_error = error_of(1);
  EXPECT_NE(late_error.find("(line 280): expected true or false for \"ok\""), std::string::npos) << late_error;
  for (unsigned ranges = 2; ranges <= 9; ++ranges) EXPECT_EQ(error_of(ranges), late_error) << ranges << " ranges";
  const std::size_t early = line_start(40);
  text.insert(early, R"({"format":"gfsl-history","version":1})" "\n");
  spit(p, text);
  const std::string early_error = error_of(1);
  EXPECT_NE(early_error.find("byte " + std::to_string(early) + " (line 40): expected a record: a metadata line"), std::string::npos)
      << early_error;
  for (unsigned ranges = 2; ranges <= 9; ++ranges) EXPECT_EQ(error_of(ranges), early_error) << ranges << " ranges";
  std::remove(p.c_str());
}

// After the object, nothing but whitespace: not a stray brace, not a second
// object; and an object ends on its line.
TEST(Traces, JsonReaderRefusesWhatFollowsTheObjectOnItsLine) {
  const std::string good = R"({"team":3,"op":"insert","key":17,"value":9,"ok":true,"call":1,"ret":2})";
  const std::string p = temp_path("after.jsonl");
  const struct {
    std::string text;
    std::size_t byte;
    std::string expected;
  } cases[] = {
      {good + "}", good.size(), "expected the end of the line after the object, found '}'"},
      {good + " \t" + good, good.size() + 2, "expected the end of the line after the object, found '{'"},
      {good + ",", good.size(), "expected the end of the line after the object, found ','"},
      {R"({"team":3,"op":"insert",)" "\n" R"("key":17,"value":9,"ok":true,"call":1,"ret":2})", 24,
       "expected '\"' to start a member name, found the end of the line"},
  };
  for (const auto& c : cases) {
    spit(p, c.text);
    const std::string what = read_error(p);
    expect_one_line_error(p, what, "byte " + std::to_string(c.byte) + " (line 1): " + c.expected);
  }
  std::remove(p.c_str());
}

TEST(Traces, EmptyMissingAndForeignFilesAreRefusedClearly) {
  const std::string p = temp_path("empty");
  spit(p, "");
  expect_one_line_error(p, read_error(p), "empty file");
  spit(p, "GFSL but not really");
  expect_one_line_error(p, read_error(p), "expected a gfsl trace");
  std::remove(p.c_str());
  const std::string missing = read_error(p);
  EXPECT_NE(missing.find(p + ": cannot open"), std::string::npos) << missing;
  EXPECT_EQ(missing.find('\n'), std::string::npos);
}

class BinaryCorruption : public testing::Test {
 protected:
  void SetUp() override {
    path_ = temp_path("small.trace");
    gfsl::lin::synthetic_options o;
    o.ops = 24;
    o.keys = 3;
    o.teams = 4;
    o.pending = 1;
    history_ = gfsl::lin::synthetic_history(o);
    const auto unrecorded = deletes_that_removed(history_, 1);
    gfsl::traces::write_trace(path_, sample_header(), history_, unrecorded);
    for (std::uint32_t i : unrecorded) history_[i].value = 0;  // what the file holds
    bytes_ = slurp(path_);
    probe_ = temp_path("probe.trace");
  }
  void TearDown() override {
    std::remove(path_.c_str());
    std::remove(probe_.c_str());
  }
  std::string path_, probe_, bytes_;
  std::vector<op_record> history_;  // as read back
};

TEST_F(BinaryCorruption, EveryTruncationIsRefusedWithTheOffsetWhereDataRanOut) {
  ASSERT_GT(bytes_.size(), 800u);
  for (std::size_t n = 0; n < bytes_.size(); ++n) {
    spit(probe_, bytes_.substr(0, n));
    const std::string what = read_error(probe_);
    ASSERT_FALSE(what.empty()) << "a file cut to " << n << " bytes was accepted";
    expect_one_line_error(probe_, what);
  }
}

TEST_F(BinaryCorruption, EverySingleByteChangeIsRefused) {
  std::mt19937 rng(7);
  for (std::size_t at = 0; at < bytes_.size(); ++at) {
    std::string b = bytes_;
    b[at] = static_cast<char>(b[at] ^ static_cast<char>(1 + rng() % 255));
    spit(probe_, b);
    const std::string what = read_error(probe_);
    ASSERT_FALSE(what.empty()) << "a change at byte " << at << " went unnoticed";
    expect_one_line_error(probe_, what);
  }
}

TEST_F(BinaryCorruption, RandomDamageNeverCrashesTheReader) {
  std::mt19937_64 rng(11);
  std::size_t refused = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string b = bytes_;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) b.resize(rng() % b.size());
    if (rng() % 8 == 0) b += std::string(rng() % 64, static_cast<char>(rng()));
    spit(probe_, b);
    try {
      const trace t = gfsl::traces::read_trace(probe_);
      EXPECT_TRUE(same_records(history_, t.history) || b == bytes_);
    } catch (const trace_error& e) {
      expect_one_line_error(probe_, e.what());
      ++refused;
    }
  }
  EXPECT_GT(refused, 3900u);
}

// A length or a count is checked against the file before anything is
// allocated for it: a section claiming 2^60 bytes, or a count of 2^40
// records, is one line, at once.
TEST_F(BinaryCorruption, HugeLengthsAndCountsAreCheckedAgainstTheFile) {
  auto put64 = [](std::string& b, std::size_t at, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) b[at + i] = static_cast<char>(v >> (8 * i));
  };
  auto get64 = [](const std::string& b, std::size_t at) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    return v;
  };
  std::string b = bytes_;
  put64(b, 16 + 8, std::uint64_t{1} << 60);  // the header section's length
  spit(probe_, b);
  expect_one_line_error(probe_, read_error(probe_), "fits in the file");
  EXPECT_NE(read_error(probe_).find("byte 24:"), std::string::npos);

  const std::uint64_t header_len = get64(bytes_, 24);
  const std::size_t history_at = 16 + 16 + header_len + 8;
  b = bytes_;
  put64(b, history_at + 16, std::uint64_t{1} << 40);  // the record count
  spit(probe_, b);
  const std::string what = read_error(probe_);
  expect_one_line_error(probe_, what, "record count that fills the section");
  EXPECT_NE(what.find("byte " + std::to_string(history_at + 16) + ":"), std::string::npos) << what;
}

// Versions 1 and 2 skip a section of a type they do not know (checksum
// checked); version 3 skips only the optional types (2^31 and above) and
// refuses any other type it does not know: a changed type must not hide a
// section the verdict depends on.
TEST_F(BinaryCorruption, UnknownSectionsAreSkippedOnlyWhereVersionThreeSaysTheyAreOptional) {
  using namespace gfsl::testing_files;
  const std::vector<raw_section> sections = sections_of(bytes_);
  ASSERT_EQ(sections.front().type, 1u);
  auto with = [&](std::uint32_t type) {
    std::vector<raw_section> out = sections;
    raw_section extra;
    extra.type = type;
    extra.payload = "snapshot bytes a newer writer put here";
    out.insert(out.begin() + 1, extra);
    return out;
  };
  // Versions 1 and 2: no writer of theirs wrote a type past 6, so type 7
  // (a history block whose type byte flipped), and an optional type too, is
  // damage, refused at its type field; the file without it still reads.
  // (Version 1 shares the rule; this trace declares delete_value, which a
  // version 1 file cannot hold.)
  for (std::uint32_t version : {2u}) {
    spit(probe_, assemble(version, sections));
    EXPECT_TRUE(same_records(history_, gfsl::traces::read_trace(probe_).history)) << "version " << version;
    for (std::uint32_t type : {7u, 0x80000007u}) {
      const std::string old = assemble(version, with(type));
      spit(probe_, old);
      const std::string what = read_error(probe_);
      expect_one_line_error(probe_, what, "expected a section type 0 to 6 (the only ones a version " + std::to_string(version));
      EXPECT_NE(what.find("byte " + std::to_string(16 + 16 + le64(old, 24) + 8) + ":"), std::string::npos) << what;
    }
  }
  // Version 3: an optional type is skipped, type 7 refused at its type field.
  spit(probe_, assemble(3, with(0x80000007u)));
  EXPECT_TRUE(same_records(history_, gfsl::traces::read_trace(probe_).history));
  const std::string v3 = assemble(3, with(7));
  spit(probe_, v3);
  const std::string what = read_error(probe_);
  expect_one_line_error(probe_, what, "expected a section type 0 to 6, or an optional one");
  EXPECT_NE(what.find("byte " + std::to_string(16 + 16 + le64(v3, 24) + 8) + ":"), std::string::npos) << what;
}

// Section-level damage to a version 3 trace: a section's type changed (with
// its checksum made to match, as a writer with a bug would), a section
// removed, repeated, or two swapped. Each is refused with one line; none
// reads as a shorter or different history.
TEST_F(BinaryCorruption, EverySectionLevelChangeIsRefused) {
  using namespace gfsl::testing_files;
  // A trace of several history blocks, as a recording run writes it.
  const std::string rec_path = temp_path("blocks.trace");
  {
    gfsl::traces::trace_recorder rec(rec_path, sample_header());
    const std::size_t third = history_.size() / 3;
    rec.append(history_.data(), third);
    rec.append(history_.data() + third, third);
    rec.append(history_.data() + 2 * third, history_.size() - 2 * third);
    rec.finish();
  }
  for (const std::string& whole : {bytes_, slurp(rec_path)}) {
    const std::vector<raw_section> sections = sections_of(whole);
    ASSERT_EQ(assemble(3, sections), whole) << "the test's assembler must write what the writers write";
    std::size_t tried = 0;
    auto refused = [&](const std::vector<raw_section>& changed, bool end_as_given, const std::string& what) {
      ++tried;
      spit(probe_, assemble(3, changed, end_as_given));
      const std::string e = read_error(probe_);
      EXPECT_FALSE(e.empty()) << what << " was accepted";
      if (!e.empty()) expect_one_line_error(probe_, e);
    };
    for (std::size_t i = 0; i + 1 < sections.size(); ++i) {
      for (std::uint32_t type : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 0x80000000u}) {
        if (type == sections[i].type) continue;
        std::vector<raw_section> c = sections;
        c[i].type = type;
        // With the end section's payload kept: the chain no longer matches.
        refused(c, true, "section " + std::to_string(i) + " retyped " + std::to_string(type));
      }
      std::vector<raw_section> removed = sections;
      removed.erase(removed.begin() + static_cast<std::ptrdiff_t>(i));
      refused(removed, true, "section " + std::to_string(i) + " removed");
      std::vector<raw_section> repeated = sections;
      repeated.insert(repeated.begin() + static_cast<std::ptrdiff_t>(i), sections[i]);
      refused(repeated, true, "section " + std::to_string(i) + " repeated");
      if (i + 2 < sections.size()) {
        std::vector<raw_section> swapped = sections;
        std::swap(swapped[i], swapped[i + 1]);
        refused(swapped, true, "sections " + std::to_string(i) + " and " + std::to_string(i + 1) + " swapped");
      }
    }
    // The end section removed: a cut trace, refused unless asked to keep it.
    std::vector<raw_section> no_end = sections;
    no_end.pop_back();
    refused(no_end, true, "the end section removed");
    EXPECT_GT(tried, 20u);
  }
  std::remove(rec_path.c_str());
}

TEST_F(BinaryCorruption, JsonTruncationsAreRefusedOrReadAsTheLinesBeforeTheCut) {
  const std::string json = temp_path("small.jsonl");
  gfsl::traces::write_trace_json(json, sample_header(), history_);
  const std::string text = slurp(json);
  std::size_t complete_lines = 0;
  for (std::size_t n = 0; n <= text.size(); ++n) {
    spit(probe_, text.substr(0, n));
    try {
      const trace t = gfsl::traces::read_trace(probe_);
      // A cut right after a newline (or just before it) leaves whole lines.
      EXPECT_TRUE(n == text.size() || text[n] == '\n' || (n > 0 && text[n - 1] == '\n')) << n;
      EXPECT_LE(t.history.size(), history_.size());
      ++complete_lines;
    } catch (const trace_error& e) {
      expect_one_line_error(probe_, e.what());
    }
  }
  EXPECT_GT(complete_lines, history_.size());
  std::remove(json.c_str());
}

// A history in hundreds of history blocks (as gfsl run writes a device run:
// blocks of 32,768 records) reads whole and in order from a file and from a
// stream, and a cut inside the last block keeps the blocks before it. The
// file's history is reserved once from the file's size, never more than
// the records the file could hold.
TEST(Traces, AHistoryInHundredsOfBlocksReadsWholeFromAFileAStreamAndACut) {
  gfsl::lin::synthetic_options o;
  o.ops = 30000;
  o.keys = 500;
  o.teams = 16;
  o.pending = 3;
  const std::vector<op_record> h = gfsl::lin::synthetic_history(o);
  const std::string path = temp_path("many_blocks.trace");
  constexpr std::size_t block = 97;
  std::size_t blocks = 0;
  {
    gfsl::traces::trace_recorder rec(path, sample_header());
    for (std::size_t at = 0; at < h.size(); at += block, ++blocks) rec.append(&h[at], std::min(block, h.size() - at));
    rec.finish();
  }
  ASSERT_GT(blocks, 300u);
  const std::string bytes = slurp(path);

  const trace t = gfsl::traces::read_trace(path);
  EXPECT_TRUE(t.cut.empty()) << t.cut;
  EXPECT_TRUE(same_records(h, t.history));
  EXPECT_LE(t.history.capacity(), bytes.size() / 32) << "reserved beyond what the file could hold";

  const std::string fifo = temp_path("many_blocks.fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A reader that stops early closes the FIFO: the writes then fail
  // (EPIPE) instead of ending the test with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  std::thread feeder([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    for (std::size_t at = 0; fd >= 0 && at < bytes.size(); at += 4096) {
      if (::write(fd, bytes.data() + at, std::min<std::size_t>(4096, bytes.size() - at)) < 0) break;
    }
    if (fd >= 0) ::close(fd);
  });
  trace streamed;
  try {
    streamed = gfsl::traces::read_trace(fifo);
  } catch (const trace_error& e) {
    ADD_FAILURE() << e.what();
  }
  feeder.join();
  std::remove(fifo.c_str());
  EXPECT_TRUE(same_records(h, streamed.history));

  // Cut 10 bytes into the last block's records: the blocks before it stay.
  const std::size_t last_block = h.size() - (blocks - 1) * block;
  const std::size_t tail = 8 + (16 + 16 + 8);  // the last block's checksum, the end section (head, payload, checksum)
  const std::size_t cut_at = bytes.size() - tail - last_block * 32 + 10;
  spit(path, bytes.substr(0, cut_at));
  const trace kept = gfsl::traces::read_trace(path, nullptr, true);
  EXPECT_FALSE(kept.cut.empty());
  EXPECT_TRUE(same_records(std::vector<op_record>(h.begin(), h.end() - static_cast<std::ptrdiff_t>(last_block)), kept.history));
  std::remove(path.c_str());
}

}  // namespace
