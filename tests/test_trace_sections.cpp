// Snapshots and structural events travel in binary traces, are read back
// exactly, are refused when damaged, and `gfsl check` and `gfsl dot` use them.
#include <gtest/gtest.h>

#include "tests/gfsl_binary.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

#include "exec/host_runner.hpp"
#include "model/history.hpp"
#include "traces/trace.hpp"

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
  EXPECT_EQ(run_gfsl("check " + r.path, &out), 0) << out;
  EXPECT_NE(out.find("13 invariants checked on the final structure"), std::string::npos) << out;
  EXPECT_NE(out.find("5 temporal invariants checked: all hold"), std::string::npos) << out;
  EXPECT_EQ(run_gfsl("dot " + r.path, &out), 0);
  EXPECT_EQ(out.rfind("digraph gfsl {", 0), 0u) << out.substr(0, 200);
  std::filesystem::remove(r.path);
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
  EXPECT_NE(out.find("no-locks"), std::string::npos) << out;
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
