// Every file a gfsl command writes as a history, gfsl check reads back: one
// round trip per writer (gfsl run --trace in each form, gfsl convert both
// ways, gfsl fuzz's history.jsonl of a failure), through the program as a
// user runs it, with the header each writer put there read back as written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/gfsl_binary.hpp"
#include "tests/files.hpp"
#include "traces/trace.hpp"

namespace {

namespace fs = std::filesystem;
using gfsl::testing_cli::result;
using gfsl::testing_cli::run;

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "gfsl_writers_" + std::to_string(::getpid()) + "_" + name;
}

using gfsl::testing_files::slurp;

// gfsl check exits 0 on the file and names its form and clock.
void expect_checks(const std::string& path, const std::string& form) {
  const result r = run("check " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(" + form), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("clock global_counter"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict:  linearizable"), std::string::npos) << r.out;
}

// Whole-chunk reads: the granularity at which GFSL is linearizable
// (docs/FINDINGS.md), so that every check passes.
const char* const small_run =
    "run --backend host --teams 4 --ops 1500 --range 40 --mix 30,30,40 --seed 5 --events on --granularity chunk";

TEST(Writers, RunTraceInTheBinaryFormChecks) {
  const std::string path = temp_path("run.trace");
  const result r = run(std::string(small_run) + " --trace " + path);
  ASSERT_EQ(r.code, 0) << r.out;
  expect_checks(path, "binary v");
  const gfsl::traces::trace t = gfsl::traces::read_trace(path);
  EXPECT_EQ(t.header.backend, "host");
  EXPECT_EQ(t.header.clock, gfsl::model::clock_kind::global_counter);
  EXPECT_TRUE(t.has_final_snapshot && t.has_events);
  EXPECT_GE(t.history.size(), 1500u);  // and the prefill
  std::remove(path.c_str());
}

TEST(Writers, RunTraceInTheJsonFormChecksAndHoldsTheSameHistory) {
  const std::string bin = temp_path("same.trace"), json = temp_path("same.jsonl");
  ASSERT_EQ(run(std::string(small_run) + " --trace " + bin).code, 0);
  const result r = run(std::string(small_run) + " --trace " + json + " --trace-format json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(json).rfind("{\"format\":\"gfsl-history\",\"version\":1,", 0), 0u);
  expect_checks(json, "JSON lines v1");
  const gfsl::traces::trace a = gfsl::traces::read_trace(bin), b = gfsl::traces::read_trace(json);
  EXPECT_EQ(b.header.replay, a.header.replay);
  ASSERT_EQ(b.history.size(), a.history.size());
  for (std::size_t i = 0; i < a.history.size(); ++i) {
    ASSERT_EQ(gfsl::traces::record_json(a.history[i]), gfsl::traces::record_json(b.history[i])) << "record " << i;
  }
  EXPECT_EQ(run(std::string(small_run) + " --trace " + json + " --trace-format yaml").code, 2);
  std::remove(bin.c_str());
  std::remove(json.c_str());
}

TEST(Writers, ConvertOutputChecksInBothDirections) {
  const std::string bin = temp_path("c.trace"), json = temp_path("c.jsonl"), back = temp_path("c2.trace");
  ASSERT_EQ(run(std::string(small_run) + " --trace " + bin).code, 0);
  ASSERT_EQ(run("convert " + bin + " " + json).code, 0);
  expect_checks(json, "JSON lines v1");
  ASSERT_EQ(run("convert " + json + " " + back).code, 0);
  expect_checks(back, "binary v");
  for (const auto& p : {bin, json, back}) std::remove(p.c_str());
}

// A seeded bug the campaign finds in well under a second: the failure's
// history.jsonl is a trace gfsl check reads, with the header of the shrunk
// run (its replay line is the one replay.txt holds) and the clock spelled as
// the trace library spells it.
TEST(Writers, FuzzFailureHistoryChecks) {
  const std::string dir = temp_path("fuzz");
  fs::remove_all(dir);
  // Bounded by runs (found at the 2nd run at seed 1, measured); --seconds is a hang guard.
  const result f = run("fuzz --mutant insert-without-duplicate-check --seed 1 --jobs 1 --max-runs 5 --seconds 3600 --progress off --out " +
                       dir);
  ASSERT_EQ(f.code, 1) << f.out;
  fs::path history;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && fs::exists(e.path() / "history.jsonl")) history = e.path() / "history.jsonl";
  }
  ASSERT_FALSE(history.empty()) << f.out;
  const result c = run("check " + history.string());
  EXPECT_TRUE(c.code == 0 || c.code == 1) << c.out;  // the seeded bug may show in the structure only
  EXPECT_NE(c.out.find("(JSON lines v1, backend host, clock global_counter)"), std::string::npos) << c.out;
  const gfsl::traces::trace t = gfsl::traces::read_trace(history.string());
  EXPECT_EQ(t.header.clock, gfsl::model::clock_kind::global_counter);
  EXPECT_FALSE(t.history.empty());
  std::string replay = slurp((history.parent_path() / "replay.txt").string());
  ASSERT_EQ(replay.rfind("gfsl replay ", 0), 0u) << replay;
  replay = replay.substr(12, replay.find('\n') - 12);
  EXPECT_EQ(t.header.replay, replay);
  ASSERT_EQ(t.header.extra.size(), 1u);
  EXPECT_EQ(t.header.extra[0].name, "variant");
  EXPECT_NE(replay.find(":variant=" + t.header.extra[0].s), std::string::npos) << replay;
  fs::remove_all(dir);
}

// Every artifact a campaign writes is read back by the tool: with
// --keep-going, each signature's history.jsonl by gfsl check, each
// replay.txt by gfsl replay, which fails the same way (exit 1), and
// report.json by gfsl fuzz merge, which lists every signature. The torn
// reads of the published algorithm at lane granularity give linearizability
// failures (gfsl check exits 1 on the history), structural ones (the history
// may be linearizable: the damage is in the structure, which replay judges)
// and hangs.
TEST(Writers, EveryArtifactOfAKeepGoingCampaignIsReadBack) {
  const std::string dir = temp_path("keep-going");
  fs::remove_all(dir);
  // Bounded by runs, so that every machine makes the same campaign: at seed 1
  // the first failing run is the 70th (measured), 150 leaves room. --seconds
  // is a hang guard; --shrink-seconds bounds time only, which the assertions
  // below do not depend on (a shrunk run keeps its signature however far
  // shrinking got).
  const result f = run("fuzz --variant thesis --granularity lane --keep-going --max-ops 150 --seed 1 --jobs 1 --max-runs 150 "
                       "--seconds 3600 --shrink-seconds 3 --progress off --out " + dir);
  ASSERT_EQ(f.code, 1) << f.out;
  std::size_t folders = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_directory()) continue;
    ++folders;
    const fs::path history = e.path() / "history.jsonl";
    const std::string report = slurp((e.path() / "report.txt").string());
    const auto at = report.find("signature: ");
    ASSERT_NE(at, std::string::npos) << report;
    const std::string sig = report.substr(at + 11, report.find('\n', at) - at - 11);
    const bool linearizability = sig.rfind("linearizability @ ", 0) == 0;
    ASSERT_TRUE(linearizability || sig.rfind("invariant:", 0) == 0 || sig == "hang @ concurrent phase") << sig;
    const result c = run("check " + history.string());
    if (linearizability) {
      EXPECT_EQ(c.code, 1) << history << "\n" << c.out;
    } else {
      EXPECT_TRUE(c.code == 0 || c.code == 1) << history << "\n" << c.out;
    }
    EXPECT_NE(c.out.find("(JSON lines v1, backend host, clock global_counter)"), std::string::npos) << c.out;
    std::string replay = slurp((e.path() / "replay.txt").string());
    ASSERT_EQ(replay.rfind("gfsl replay ", 0), 0u) << replay;
    replay = replay.substr(12, replay.find('\n') - 12);
    EXPECT_EQ(gfsl::traces::read_trace(history.string()).header.replay, replay);
    const result again = run("replay " + replay);
    EXPECT_EQ(again.code, 1) << again.out;
    if (linearizability) {
      EXPECT_NE(again.out.find("FAILED: linearizability"), std::string::npos) << again.out;
    } else if (sig == "hang @ concurrent phase") {
      EXPECT_NE(again.out.find("stopped:  livelock"), std::string::npos) << again.out;
    } else {
      EXPECT_NE(again.out.find("FAILED: "), std::string::npos) << again.out;
      EXPECT_NE(again.out.find(sig.substr(10) + ":"), std::string::npos) << sig << "\n" << again.out;
    }
    // The counterexample as chunk accesses around the key that failed, when
    // a detector names one.
    if (fs::exists(e.path() / "interleaving.txt")) {
      const std::string interleaving = slurp((e.path() / "interleaving.txt").string());
      EXPECT_NE(interleaving.find(" read chunk "), std::string::npos) << interleaving.substr(0, 2000);
    } else {
      EXPECT_FALSE(linearizability) << sig;
    }
  }
  EXPECT_GE(folders, 1u) << f.out;
  const std::string merged = dir + ".merged.json";
  const result m = run("fuzz merge " + dir + " --json " + merged);
  EXPECT_EQ(m.code, 1) << m.out;
  EXPECT_NE(slurp(merged).find("\"failures\":" + std::to_string(folders) + ","), std::string::npos) << slurp(merged);
  fs::remove(merged);
  fs::remove_all(dir);
}

}  // namespace
