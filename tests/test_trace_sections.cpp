// Snapshots and structural events travel in binary traces, are read back
// exactly, are refused when damaged, and `gfsl check` and `gfsl dot` use them.
#include <gtest/gtest.h>

#include "tests/gfsl_binary.hpp"
#include "tests/files.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

#include "exec/host_runner.hpp"
#include "core/gfsl/invariants.hpp"
#include "invariants/snapshot.hpp"
#include "invariants/temporal.hpp"
#include "model/history.hpp"
#include "traces/trace.hpp"
#include "core/gfsl/types.hpp"

namespace {

struct recorded {
  gfsl::host_run run;
  std::string path;
};

recorded record(const std::string& name) {
  gfsl::model::workload w;
  w.teams = 4;
  w.ops = 3000;
  w.range = 150;
  w.insert_pct = 40;
  w.delete_pct = 40;
  w.contains_pct = 20;
  w.chunk = 16;
  gfsl::run_extras ex;
  ex.events = true;
  recorded r{gfsl::run_on_host(w, gfsl::host_mode::sequential, 0, true, ex),
             (std::filesystem::temp_directory_path() / name).string()};
  gfsl::traces::trace_extras extras{&r.run.final_snapshot, &r.run.initial_snapshot, &r.run.events};
  gfsl::traces::write_trace(r.path, gfsl::traces::make_header(w, "host", "", gfsl::model::clock_kind::global_counter, ""),
                            gfsl::model::full_history(r.run.prefill, r.run.records), {}, extras);
  return r;
}

using gfsl::testing_files::slurp;

int run_gfsl(const std::string& args, std::string* out = nullptr) {
  const gfsl::testing_cli::result r = gfsl::testing_cli::run(args);
  if (out) *out = r.out;
  return r.code;
}

TEST(TraceSections, SnapshotsAndEventsRoundTripExactly) {
  const recorded r = record("gfsl-sections.trace");
  const gfsl::traces::trace t = gfsl::traces::read_trace(r.path);
  ASSERT_TRUE(t.has_final_snapshot && t.has_initial_snapshot && t.has_events);
  EXPECT_EQ(t.final_snapshot.words, r.run.final_snapshot.words);
  EXPECT_EQ(t.final_snapshot.chunk, 16);
  EXPECT_EQ(t.initial_snapshot.words, r.run.initial_snapshot.words);
  ASSERT_EQ(t.events.size(), r.run.events.size());
  ASSERT_GT(t.events.size(), 0u);
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    const auto &a = t.events[i], &b = r.run.events[i];
    ASSERT_TRUE(a.seq == b.seq && a.stamp == b.stamp && a.team == b.team && a.kind == b.kind && a.lane == b.lane &&
                a.chunk == b.chunk && a.value == b.value)
        << "event " << i;
  }
  std::string out;
  EXPECT_EQ(run_gfsl("dot " + r.path, &out), 0);
  EXPECT_EQ(out.rfind("digraph gfsl {", 0), 0u) << out.substr(0, 200);
  std::filesystem::remove(r.path);
}

// gfsl check names every check it ran, in text, JSON and HTML, with its
// verdict; model-state, which needs the expected contents, is named as not
// run, with why.
TEST(TraceSections, CheckNamesEveryInvariantWithItsVerdictInEveryReport) {
  const recorded r = record("gfsl-sections-names.trace");
  const std::string html = r.path + ".html";
  std::string out;
  EXPECT_EQ(run_gfsl("check " + r.path + " --html " + html, &out), 0) << out;
  EXPECT_NE(out.find("snapshot: 12 invariants checked on the final structure ("), std::string::npos) << out;
  EXPECT_NE(out.find("events:   5 invariants checked on the structural event log ("), std::string::npos) << out;
  for (const std::string& name : gfsl::invariants::snapshot_invariant_names()) {
    if (name == "model-state") {
      EXPECT_NE(out.find("  not run   model-state: it needs the expected final contents"), std::string::npos) << out;
    } else {
      EXPECT_NE(out.find("  holds     " + name + "\n"), std::string::npos) << name << "\n" << out;
    }
  }
  for (const std::string& name : gfsl::invariants::temporal_invariant_names()) {
    EXPECT_NE(out.find("  holds     " + name + "\n"), std::string::npos) << name << "\n" << out;
  }
  const std::string page = slurp(html);
  for (const auto* names : {&gfsl::invariants::snapshot_invariant_names(), &gfsl::invariants::temporal_invariant_names()}) {
    for (const std::string& name : *names) EXPECT_NE(page.find("<tr><td>" + name + "</td>"), std::string::npos) << name;
  }
  EXPECT_EQ(run_gfsl("check --json - " + r.path, &out), 0) << out;
  EXPECT_NE(out.find(R"({"name":"linearizability","of":"history","verdict":"linearizable"})"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("invariants_hold":true)"), std::string::npos) << out;
  for (const std::string& name : gfsl::invariants::snapshot_invariant_names()) {
    const std::string verdict = name == "model-state" ? "not run\",\"why\":\"" : "holds\",\"violations\":[]";
    EXPECT_NE(out.find("{\"name\":\"" + name + "\",\"of\":\"snapshot\",\"verdict\":\"" + verdict), std::string::npos) << name << "\n" << out;
  }
  for (const std::string& name : gfsl::invariants::temporal_invariant_names()) {
    EXPECT_NE(out.find("{\"name\":\"" + name + "\",\"of\":\"events\",\"verdict\":\"holds\",\"violations\":[]}"), std::string::npos)
        << name << "\n" << out;
  }
  std::filesystem::remove(r.path);
  std::filesystem::remove(html);
}

// The same history as JSON lines: no snapshot, no event log; every
// invariant is named as not run, with why.
TEST(TraceSections, CheckNamesTheInvariantsItCouldNotRunAndWhy) {
  const recorded r = record("gfsl-sections-json.trace");
  const std::string json = r.path + ".jsonl";
  std::string out;
  ASSERT_EQ(run_gfsl("convert " + r.path + " " + json, &out), 0) << out;
  EXPECT_EQ(run_gfsl("check " + json, &out), 0) << out;
  EXPECT_NE(out.find("snapshot: not run: the JSON-lines form holds no snapshot of the final structure"), std::string::npos) << out;
  EXPECT_NE(out.find("events:   not run: the JSON-lines form holds no structural event log"), std::string::npos) << out;
  for (const auto* names : {&gfsl::invariants::snapshot_invariant_names(), &gfsl::invariants::temporal_invariant_names()}) {
    for (const std::string& name : *names) EXPECT_NE(out.find(name), std::string::npos) << name << "\n" << out;
  }
  EXPECT_EQ(run_gfsl("check --json - " + json, &out), 0) << out;
  EXPECT_NE(out.find(R"({"name":"max-monotonic","of":"events","verdict":"not run","why":"the JSON-lines form holds no structural event log)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"({"name":"down-reachability","of":"snapshot","verdict":"not run","why":"the JSON-lines form holds no snapshot)"),
            std::string::npos)
      << out;
  std::filesystem::remove(r.path);
  std::filesystem::remove(json);
}

TEST(TraceSections, AViolatedInvariantInTheTraceFailsTheCheck) {
  recorded r = record("gfsl-sections-bad.trace");
  // A held lock in the stored final structure: no-locks must fire.
  gfsl::traces::trace t = gfsl::traces::read_trace(r.path);
  const std::uint64_t head = t.final_snapshot.words[32];  // level 0's first chunk
  t.final_snapshot.words[128 + head * 16 + 15] = gfsl::lock_word_of(3);  // its LOCK entry (N = 16)
  gfsl::traces::write_trace(r.path, t, gfsl::traces::trace_format::binary);
  std::string out;
  EXPECT_EQ(run_gfsl("check " + r.path, &out), 1) << out;
  EXPECT_NE(out.find("snapshot: 12 invariants checked on the final structure"), std::string::npos) << out;
  EXPECT_NE(out.find("1 VIOLATED"), std::string::npos) << out;
  EXPECT_NE(out.find("  VIOLATED  no-locks (1 violation)\n              chunk " + std::to_string(head) +
                     ", stamp "), std::string::npos) << out;
  EXPECT_NE(out.find(": locked by team 3 at quiescence"), std::string::npos) << out;
  EXPECT_NE(out.find("  holds     level-list\n"), std::string::npos) << out;
  EXPECT_EQ(run_gfsl("check --json - " + r.path, &out), 1) << out;
  EXPECT_NE(out.find(R"("invariants_hold":false)"), std::string::npos) << out;
  EXPECT_NE(out.find(R"({"name":"no-locks","of":"snapshot","verdict":"violated","violations":[{"chunks":[)" + std::to_string(head) +
                     R"(],"key":null,"event":null,"team":null,"stamp":)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"("reason":"locked by team 3 at quiescence")"), std::string::npos) << out;
  std::filesystem::remove(r.path);
}

// A level list broken in the stored structure: level-list fails, and the
// invariants that walk the lists are named as not run, not as holding.
TEST(TraceSections, ChecksThatCouldNotRunAfterABrokenListAreNamedNotRun) {
  recorded r = record("gfsl-sections-broken-list.trace");
  gfsl::traces::trace t = gfsl::traces::read_trace(r.path);
  const std::uint64_t head = t.final_snapshot.words[32];  // level 0's first chunk
  std::uint64_t& next = t.final_snapshot.words[128 + head * 16 + 14];  // its NEXT entry (N = 16)
  next = gfsl::make_entry(gfsl::entry_key(next), 0xFFFFFFu);
  gfsl::traces::write_trace(r.path, t, gfsl::traces::trace_format::binary);
  std::string out;
  EXPECT_EQ(run_gfsl("check " + r.path, &out), 1) << out;
  EXPECT_NE(out.find("snapshot: 2 invariants checked on the final structure"), std::string::npos) << out;
  EXPECT_NE(out.find("  VIOLATED  level-list ("), std::string::npos) << out;
  EXPECT_NE(out.find("  holds     final-not-zombie\n"), std::string::npos) << out;
  for (const char* name : {"chunk-sorted", "down-reachability", "bottom-search", "fill-bound"}) {
    EXPECT_NE(out.find(std::string("  not run   ") + name + ": it walks the level lists, which level-list found broken"),
              std::string::npos)
        << name << "\n" << out;
  }
  EXPECT_NE(out.find("events:   5 invariants checked"), std::string::npos) << out;
  std::filesystem::remove(r.path);
}

// A write to a chunk's data entry by a team that does not hold its lock, in
// the stored event log: lock-discipline names the event, its team, the chunk
// and the key written.
TEST(TraceSections, AViolatedTemporalInvariantNamesTheEventTeamChunkAndKey) {
  recorded r = record("gfsl-sections-bad-events.trace");
  gfsl::traces::trace t = gfsl::traces::read_trace(r.path);
  std::size_t at = t.events.size();
  for (std::size_t i = t.events.size() / 2; i < t.events.size(); ++i) {
    const auto& e = t.events[i];
    if (e.kind == gfsl::event_kind::store && e.lane < 14 && gfsl::entry_key(e.value) != gfsl::key_empty) {
      at = i;
      break;
    }
  }
  ASSERT_LT(at, t.events.size());
  t.events[at].team = 999;
  const auto e = t.events[at];
  gfsl::traces::write_trace(r.path, t, gfsl::traces::trace_format::binary);
  std::string out;
  EXPECT_EQ(run_gfsl("check " + r.path, &out), 1) << out;
  EXPECT_NE(out.find("  VIOLATED  lock-discipline ("), std::string::npos) << out;
  const std::string where = "chunk " + std::to_string(e.chunk) + ", key " + std::to_string(gfsl::entry_key(e.value)) + ", event " +
                            std::to_string(e.seq) + " by team 999, stamp " + std::to_string(e.stamp) + ": chunk " +
                            std::to_string(e.chunk) + ": entry " + std::to_string(e.lane) + " written by a team that does not hold its lock";
  EXPECT_NE(out.find(where), std::string::npos) << where << "\n" << out;
  EXPECT_EQ(run_gfsl("check --json - " + r.path, &out), 1) << out;
  EXPECT_NE(out.find("{\"chunks\":[" + std::to_string(e.chunk) + "],\"key\":" + std::to_string(gfsl::entry_key(e.value)) +
                     ",\"event\":" + std::to_string(e.seq) + ",\"team\":999,\"stamp\":" + std::to_string(e.stamp)),
            std::string::npos)
      << out;
  std::filesystem::remove(r.path);
}

TEST(TraceSections, ADamagedEventCountIsRefusedWithItsOffset) {
  const recorded r = record("gfsl-sections-damaged.trace");
  // Find the events section (type 5) and corrupt its count.
  std::vector<unsigned char> bytes;
  {
    std::ifstream in(r.path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::size_t at = 16;  // after the preamble
  bool found = false;
  while (at + 16 <= bytes.size()) {
    const std::uint32_t type = bytes[at] | bytes[at + 1] << 8 | bytes[at + 2] << 16 | static_cast<std::uint32_t>(bytes[at + 3]) << 24;
    std::uint64_t length = 0;
    for (int i = 7; i >= 0; --i) length = length << 8 | bytes[at + 8 + i];
    if (type == 5) {
      bytes[at + 16] ^= 0x01;  // the count's low byte
      found = true;
      break;
    }
    at += 16 + length + 8;
  }
  ASSERT_TRUE(found);
  {
    std::ofstream o(r.path, std::ios::binary | std::ios::trunc);
    o.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    gfsl::traces::read_trace(r.path);
    FAIL() << "a damaged events section was accepted";
  } catch (const gfsl::traces::trace_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(r.path), std::string::npos) << what;
    EXPECT_NE(what.find("byte "), std::string::npos) << what;
    EXPECT_NE(what.find("event count"), std::string::npos) << what;
  }
  std::filesystem::remove(r.path);
}

}  // namespace
