// The gfsl program as users meet it: summaries, checks and exit codes.
#include <gtest/gtest.h>

#include "tests/gfsl_binary.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using gfsl::testing_cli::result;
using gfsl::testing_cli::run;

TEST(Cli, TurnsRunPrintsASummaryAndPassesItsChecks) {
  const result r = run("run --backend host --sched turns --teams 4 --ops 20000 --mix 30,30,40 --range 500 --chunk 16 --seed 3");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* line : {"operations:", "insert", "splits", "merges", "zombie", "restarts", "elapsed:",
                           "13 snapshot invariants hold", "every answer matches the sequential model", "replay:"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << "missing '" << line << "' in:\n" << r.out;
  }
}

std::string replay_string(const std::string& out) {
  const std::string tag = "replay:   gfsl replay ";
  const auto at = out.find(tag);
  if (at == std::string::npos) return {};
  const auto end = out.find_first_of(" \n", at + tag.size());
  return out.substr(at + tag.size(), end - at - tag.size());
}

std::string without_line(std::string out, const std::string& start) {
  const auto at = out.find(start);
  if (at != std::string::npos) out.erase(at, out.find('\n', at) - at);
  return out;
}

std::string without_timing(const std::string& out) { return without_line(out, "elapsed:"); }

// gfsl run leaves linearizability to gfsl check; gfsl replay judges it, as
// the campaign that printed the line did. Everything else is the same.
std::string without_linearizability(const std::string& out) {
  return without_line(without_line(out, "check:    answers of concurrent operations"), "check:    the history is linearizable");
}

// The same replay line with the robust variant in place of thesis.
result replay_as_robust(std::string line) {
  line.replace(line.find(":variant=thesis"), 15, ":variant=robust");
  return run("replay " + line);
}

TEST(Cli, ScheduledRunReplaysFromItsOneLine) {
  for (const char* sched : {"random --granularity lane", "pct --depth 3 --granularity line", "fair-pct --granularity chunk",
                            "park --park-at after-read --park-ops 2 --park-every 5 --granularity lane"}) {
    const result first = run(std::string("run --teams 6 --ops 3000 --mix 40,40,20 --range 200 --chunk 16 --seed 9 --sched ") + sched);
    ASSERT_EQ(first.code, 0) << first.out;
    EXPECT_NE(first.out.find("scheduling points"), std::string::npos) << first.out;
    const std::string line = replay_string(first.out);
    ASSERT_FALSE(line.empty()) << first.out;
    const result again = run("replay " + line);
    EXPECT_EQ(again.code, 0) << again.out;
    EXPECT_NE(again.out.find("check:    the history is linearizable, key by key"), std::string::npos) << again.out;
    EXPECT_EQ(without_linearizability(without_timing(first.out)), without_linearizability(without_timing(again.out)));
  }
}

// The upper levels' rule travels in the replay line: a re-raising run
// replays as itself, and differs from the same line under the thesis' rule.
TEST(Cli, ReraiseRunReplaysFromItsOneLine) {
  const result first =
      run("run --teams 6 --ops 4000 --mix 20,50,30 --range 600 --chunk 16 --seed 4 --sched random --upper reraise");
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_NE(first.out.find("upper=reraise"), std::string::npos) << first.out;
  const std::string line = replay_string(first.out);
  ASSERT_FALSE(line.empty()) << first.out;
  const result again = run("replay " + line);
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(without_linearizability(without_timing(first.out)), without_linearizability(without_timing(again.out)));
  const auto reraised = [](const std::string& out) {
    const auto at = out.find("(re-raised ");
    return at == std::string::npos ? std::string() : out.substr(at, out.find(')', at) - at);
  };
  EXPECT_NE(reraised(first.out), "(re-raised 0") << first.out;
  std::string thesis_line = line;
  thesis_line.replace(thesis_line.find(":upper=reraise"), 14, ":upper=thesis");
  const result thesis = run("replay " + thesis_line);
  EXPECT_EQ(thesis.code, 0) << thesis.out;
  EXPECT_EQ(reraised(thesis.out), "(re-raised 0") << thesis.out;
  std::string bad_line = line;
  bad_line.replace(bad_line.find(":upper=reraise"), 14, ":upper=sometimes");
  const result bad = run("replay " + bad_line);
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("field 'upper' has a bad value 'sometimes'"), std::string::npos) << bad.out;
}

// The torn read of the published algorithm (docs/FINDINGS.md), shrunk by a
// campaign at lane granularity: only linearizability sees it (the structure,
// its events, the mid-run checks and the final contents are all right), so
// gfsl run exits 0 and gfsl replay of the same line exits 1.
TEST(Cli, ReplayJudgesLinearizabilityAndExits1OnALinearizabilityOnlyFailure) {
  const result first = run(
      "run --backend host --variant thesis --teams 7 --ops 39 --mix 0,8,92 --range 2 --prefill 0.9 --chunk 16 --p-chunk 0.5 "
      "--seed 109454699 --sched random --granularity lane --sched-seed 4185 --events on --check-every 61");
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_EQ(first.out.find("FAILED"), std::string::npos) << first.out;
  const std::string line = replay_string(first.out);
  ASSERT_FALSE(line.empty()) << first.out;
  const result again = run("replay " + line);
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(again.out.find("check:    FAILED: linearizability: key 2 "), std::string::npos) << again.out;
  // The robust variant passes the same run at the same granularity.
  const result fixed = replay_as_robust(line);
  EXPECT_EQ(fixed.code, 0) << fixed.out;
}

// A listed workload (--team-ops): the published algorithm's torn read in
// three operations, as the campaign shrinks it (docs/FINDINGS.md). Team 1
// inserts 6 and then does not find it, because team 0's insert of 3 shifts
// 6 one lane right while team 1 reads the chunk lane by lane. The replay
// line carries the list; gfsl replay judges it and exits 1; robust passes.
TEST(Cli, AListedWorkloadRunsReplaysAndIsJudged) {
  const std::string args =
      "run --variant thesis --team-ops i3/i6,c6 --chunk 32 --p-chunk 0.25 --seed 391555573 --sched random --granularity lane "
      "--sched-seed 844565173 --events on --check-every 61";
  const result first = run(args);
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_NE(first.out.find("contains           1  (true 0, false 1)"), std::string::npos) << first.out;
  const std::string line = replay_string(first.out);
  EXPECT_NE(line.find(":prefill-keys=:team-ops=i3/i6,c6:"), std::string::npos) << line;
  EXPECT_NE(line.find(":teams=2:ops=3:"), std::string::npos) << line;
  const result again = run("replay " + line);
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(again.out.find("check:    FAILED: linearizability: key 6 "), std::string::npos) << again.out;
  const result fixed = replay_as_robust(line);
  EXPECT_EQ(fixed.code, 0) << fixed.out;
  // The list decides the teams and the operation count: a line that says
  // otherwise is refused, and so is a malformed list.
  std::string wrong = line;
  wrong.replace(wrong.find(":teams=2:"), 9, ":teams=3:");
  const result refused = run("replay " + wrong);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("field 'team-ops' lists 3 operations on 2 teams where 'teams' and 'ops' say 3 on 3"), std::string::npos)
      << refused.out;
  for (const char* bad : {"--team-ops i3/x6", "--team-ops i0", "--team-ops c1 --prefill-keys 4,4", "--prefill-keys 1,2",
                          "--team-ops i3 --backend cuda", "--chunk 8 --backend cuda", "--chunk 64"}) {
    const result r = run(std::string("run ") + bad);
    EXPECT_EQ(r.code, 2) << bad << ":\n" << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line for " << bad << ":\n" << r.out;
  }
}

// Mechanism 1 of the published algorithm (docs/FINDINGS.md) as the campaign
// shrinks it: team 0, the only team that parks (--park-teams 1), is parked
// inside a chunk read after its NEXT lane and before its LOCK lane while
// team 1 splits that chunk and merges it into its new successor; team 0
// then follows the stale NEXT past the live chunk and inserts 188 where
// another chunk encloses it. The replay line carries the park fields; robust
// passes; a line or option naming more parking teams than the run has is
// refused with one line.
TEST(Cli, AVictimParkedInsideAReadFollowsAZombiesStaleNext) {
  const std::string args =
      "run --variant thesis --chunk 8 --p-chunk 1 --prefill-keys 310,320,330,340,350 --team-ops i188/i81,i121,i75,i85,d75,d81 "
      "--seed 153612028 --sched park --park-at mid-read --park-ops 39 --park-every 30 --park-teams 1 --granularity lane "
      "--sched-seed 871796328 --events on --check-every 61";
  const result first = run(args);
  EXPECT_EQ(first.code, 1) << first.out;
  EXPECT_NE(first.out.find("first: lateral-order: max 320 not below the next live chunk's smallest key 188"), std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("park:     at mid-read, for 39 operations of others, one in 30 such points, team 0 only: 1 parks"),
            std::string::npos)
      << first.out;
  const std::string line = replay_string(first.out);
  EXPECT_NE(line.find(":park-at=mid-read:park-ops=39:park-every=30:park-teams=1"), std::string::npos) << line;
  const result again = run("replay " + line);
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_EQ(without_linearizability(without_timing(first.out)), without_linearizability(without_timing(again.out)));
  const result fixed = replay_as_robust(line);
  EXPECT_EQ(fixed.code, 0) << fixed.out;
  std::string wrong = line;
  wrong.replace(wrong.find(":park-teams=1"), 13, ":park-teams=3");
  const result refused = run("replay " + wrong);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("field 'park-teams' is 3 in a run of 2 teams"), std::string::npos) << refused.out;
  const result too_many = run("run --team-ops i1/i2 --sched park --park-teams 3");
  EXPECT_EQ(too_many.code, 2) << too_many.out;
  EXPECT_EQ(too_many.out, "gfsl run: --park-teams 3: the run has 2 teams\n");
}

TEST(Cli, EventsAndMidRunChecksAreReported) {
  const result r = run("run --teams 4 --ops 3000 --mix 40,40,20 --range 200 --chunk 16 --events on --check-every 200");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("5 temporal invariants hold"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mid-run snapshots: 4 invariants hold"), std::string::npos) << r.out;
  const result t = run("run --backend threads --teams 4 --ops 3000 --range 200 --check-every 200");
  EXPECT_EQ(t.code, 2) << t.out;
  EXPECT_NE(t.out.find("--check-every needs the scheduled host backend"), std::string::npos) << t.out;
}

TEST(Cli, StepLimitStopsTheRunUndecidedWithPendingOperations) {
  const result r = run("run --teams 4 --ops 3000 --range 100 --chunk 16 --max-steps 5000");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("stopped:  step limit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept as pending"), std::string::npos) << r.out;
}

TEST(Cli, BadReplayStringsGetOneLineAndExitCode2) {
  for (const char* s : {"nonsense", "gfsl1:backend=host", "gfsl1:backend=host:teams=x", "gfsl1:teams=1:teams=2"}) {
    const result r = run(std::string("replay ") + s);
    EXPECT_EQ(r.code, 2) << s << ":\n" << r.out;
    EXPECT_NE(r.out.find("gfsl replay: replay string"), std::string::npos) << r.out;
  }
}

// A GPU run's stamp groups travel in its replay line; a group larger than
// the chunk (a lane per operation) is refused as the line is read.
TEST(Cli, ReplayStringsCarryTheStampGroup) {
  const std::string line =
      "gfsl1:backend=cuda:teams=4:ops=100:mix=10,10,80:range=100:prefill=0.5:chunk=16:p-chunk=1:seed=1:pool=0:clock=counter";
  const result big = run("replay " + line + ":stamp-group=32:variant=robust");
  EXPECT_EQ(big.code, 2) << big.out;
  EXPECT_NE(big.out.find("field 'stamp-group' is 32, expected 1 to the chunk size 16"), std::string::npos) << big.out;
  const result bad = run("replay " + line + ":stamp-group=x:variant=robust");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("field 'stamp-group' has a bad value 'x'"), std::string::npos) << bad.out;
  const result fits = run("replay " + line + ":stamp-group=16:variant=robust");
  if (fits.code == 0) {
    EXPECT_NE(fits.out.find("stamp-group=16"), std::string::npos) << fits.out;  // a GPU is present: the run's line has it
  } else {
    EXPECT_EQ(fits.code, 2) << fits.out;  // no GPU: read, then refused for want of a device
    EXPECT_EQ(fits.out.find("replay string"), std::string::npos) << fits.out;
  }
}

// A targeted park is in the replay line (hold=...), and replaying the line
// makes the same run: the same scheduling points, switches, hold and pairs.
// A line from before holds existed (none here) still replays; a bad hold is
// refused in one line, exit 2.
TEST(Cli, AHoldIsInTheReplayLineAndReplaysBitForBit) {
  std::string keys;
  for (int k = 1; k <= 400; ++k) keys += (k > 1 ? "," : "") + std::to_string(k);
  const result r = run("run --backend host --sched random --granularity lane --chunk 16 --team-ops c50,c51,c52,c53/c1,d49 "
                       "--prefill-keys " + keys + " --hold step-down,remove,2,0");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto line_of = [](const std::string& out, const std::string& head) {
    const auto at = out.find("\n" + head);
    return at == std::string::npos ? std::string() : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(line_of(r.out, "hold:").find("held until another team's operation made the effect"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "pairs:").find("step-down x remove"), std::string::npos) << r.out;
  const auto at = r.out.find("gfsl replay ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string replay = r.out.substr(at + 12, r.out.find('\n', at) - at - 12);
  EXPECT_NE(replay.find(":hold=step-down,remove,2,0"), std::string::npos) << replay;
  const result again = run("replay " + replay);
  ASSERT_EQ(again.code, 0) << again.out;
  for (const char* head : {"schedule:", "hold:", "pairs:", "paths:"}) {
    EXPECT_FALSE(line_of(r.out, head).empty()) << head;
    EXPECT_EQ(line_of(r.out, head), line_of(again.out, head)) << head;
  }
  // Without the hold: the line has no hold field, and the run is another one.
  const std::string plain = replay.substr(0, replay.find(":hold="));
  const result unheld = run("replay " + plain);
  ASSERT_EQ(unheld.code, 0) << unheld.out;
  EXPECT_NE(line_of(unheld.out, "schedule:"), line_of(r.out, "schedule:")) << unheld.out;
  for (const std::string& bad : {std::string(":hold=unlink,append,1"), std::string(":hold=unlink,split,0"), std::string(":hold=unlink,split,1,7")}) {
    const result refused = run("replay " + plain + bad);
    EXPECT_EQ(refused.code, 2) << bad << ": " << refused.out;
    EXPECT_NE(refused.out.find("replay string: field"), std::string::npos) << refused.out;
  }
  const result flag = run("run --backend host --teams 2 --ops 10 --hold lock-enclosing,split");
  EXPECT_EQ(flag.code, 2) << flag.out;
  EXPECT_NE(flag.out.find("expected WINDOW,EFFECT,NTH"), std::string::npos) << flag.out;
}

TEST(Cli, ThreadsRunSaysItCannotBeReplayed) {
  const result r = run("run --backend threads --teams 4 --ops 20000 --range 500 --chunk 32");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("cannot be replayed"), std::string::npos) << r.out;
}

TEST(Cli, BadOptionsGetOneLineAndExitCode2) {
  for (const char* args : {"run --mix 10,10", "run --mix 50,50,50", "run --chunk 64", "run --backend gpu",
                           "run --p-chunk 2", "run --teams 0", "run --sched fifo", "run --granularity word", "run --depth 0", "run --range 0", "run --frobnicate", "",
                           "run --stamp-group 4", "run --backend threads --stamp-group 2", "run --backend cuda --stamp-group 0",
                           "run --backend cuda --chunk 16 --stamp-group 17", "run --backend cuda --clock off --stamp-group 4"}) {
    const result r = run(args);
    EXPECT_EQ(r.code, 2) << args << ":\n" << r.out;
    EXPECT_FALSE(r.out.empty()) << args;
  }
}

TEST(Cli, ATraceOfAnUnrecordedCudaRunIsRefusedBeforeTheDeviceIsSought) {
  // --clock off keeps no history: a trace of it would hold the prefill only,
  // and gfsl check would judge the final structure against no operations.
  const result r = run("run --backend cuda --clock off --ops 1000 --range 100 --trace unrecorded.trace");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--clock off records no history"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists("unrecorded.trace"));
}

TEST(Cli, PoolExhaustionIsReportedWithExitCode4) {
  const result r = run("run --backend host --sched turns --ops 5000 --mix 100,0,0 --range 100000 --prefill 0 --chunk 16 --pool 40");
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_NE(r.out.find("chunk pool exhausted"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("snapshot invariants hold"), std::string::npos) << r.out;
}

TEST(Cli, CudaWithoutADeviceIsACleanExitCode2) {
  const result r = run("run --backend cuda --ops 1000 --range 100");
  if (r.code == 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(r.out.find("no CUDA device") != std::string::npos || r.out.find("not available in this build") != std::string::npos)
      << r.out;
}

// gfsl bench refuses bad options with one line and exit code 2, and on a
// machine without a GPU (CI) says so, also with exit code 2; nothing runs.
TEST(Cli, BenchRefusesBadOptionsAndAMissingGpuWithOneLine) {
  const result plain = run("bench --chunk 32 --repeats 1 --range 10K --workload contains");
  if (plain.code == 0) GTEST_SKIP() << "a CUDA device is present: the suite ran";
  EXPECT_EQ(plain.code, 2) << plain.out;
  if (plain.out.find("not available in this build") != std::string::npos) {
    GTEST_SKIP() << "built without nvcc: gfsl bench only says so (checked above)";
  }
  // gfsl-bench is a program of its own (docs/BUILD.md); without it gfsl
  // bench names it and how to build it.
  if (plain.out.find("gfsl-bench is not built") != std::string::npos) {
    EXPECT_NE(plain.out.find("--target gfsl-bench"), std::string::npos) << plain.out;
    GTEST_SKIP() << "gfsl-bench is not built beside gfsl: gfsl bench only says so (checked above)";
  }
  EXPECT_NE(plain.out.find("no CUDA device"), std::string::npos) << plain.out;
  // The launch table needs its nine kernels, compiled only on request.
  const result table = run("bench --suite launch --chunk 32 --repeats 1");
  EXPECT_EQ(table.code, 2) << table.out;
  EXPECT_TRUE(table.out.find("configure with -DGFSL_LAUNCH_TABLE=ON") != std::string::npos ||
              table.out.find("no CUDA device") != std::string::npos)
      << table.out;
  const result chunks = run("bench --chunk 8");
  EXPECT_EQ(chunks.code, 2) << chunks.out;
  const result ranges = run("bench --range 10X,1M");
  EXPECT_EQ(ranges.code, 2) << ranges.out;
  const result workloads = run("bench --workload 10-10-80,sometimes");
  EXPECT_EQ(workloads.code, 2) << workloads.out;
  EXPECT_NE(workloads.out.find("no workload named 'sometimes'"), std::string::npos) << workloads.out;
  const result suite = run("bench --suite everything");
  EXPECT_EQ(suite.code, 2) << suite.out;
  const result launch = run("bench --launch 7/7 --chunk 32");
  EXPECT_EQ(launch.code, 2) << launch.out;
  EXPECT_NE(launch.out.find("not a compiled configuration"), std::string::npos) << launch.out;
}

// gfsl run's progress line: on stderr with --progress on (drawn in place,
// erased before the report), never with off or into a pipe under auto; and
// a help of grouped options, no line of it over 100 characters.
TEST(Cli, RunDrawsAProgressLineOnlyWhenAskedAndItsHelpIsGroupedAndShort) {
  for (const char* backend : {"host", "threads"}) {
    const std::string args = std::string("run --backend ") + backend + " --teams 2 --ops 3000 --range 100";
    result r = run(args + " --progress on");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("\rgfsl run: 3000 of 3000 operations (100%)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\r\033[K"), std::string::npos) << "the line is not erased";
    for (const char* mode : {" --progress off", ""}) {  // "": auto, and the output is a pipe
      r = run(args + mode);
      EXPECT_EQ(r.code, 0) << r.out;
      EXPECT_EQ(r.out.find(" operations ("), std::string::npos) << mode << "\n" << r.out;
      EXPECT_EQ(r.out.find("\033[K"), std::string::npos) << mode << "\n" << r.out;
    }
  }
  EXPECT_EQ(run("run --progress sometimes").code, 2);
  const result help = run("run --help");
  ASSERT_EQ(help.code, 0);
  for (const char* group : {"Workload:", "Structure:", "Backend and schedule:", "Recording and checks:", "Bounds and output:"})
    EXPECT_NE(help.out.find(std::string("\n") + group + "\n"), std::string::npos) << group << "\n" << help.out;
  std::size_t longest = 0, start = 0;
  for (std::size_t nl; (nl = help.out.find('\n', start)) != std::string::npos; start = nl + 1) longest = std::max(longest, nl - start);
  EXPECT_LE(longest, 100u) << help.out;
}

// One vocabulary (docs/CLI.md, "Flag audit"): a retired name appears in no
// command's help, and every shared name is offered by each command it
// belongs to. Tokens are matched whole: --seconds must not match
// --shrink-seconds, nor --json a word in a description.
bool offers(const std::string& help, const std::string& flag) {
  for (std::size_t at = help.find(flag); at != std::string::npos; at = help.find(flag, at + 1)) {
    const bool starts = at == 0 || help[at - 1] == ' ' || help[at - 1] == ',' || help[at - 1] == '\n';
    const std::size_t end = at + flag.size();
    const bool ends = end == help.size() || help[end] == ' ' || help[end] == '=' || help[end] == ',' || help[end] == '\n';
    if (starts && ends) return true;
  }
  return false;
}

TEST(Cli, EveryCommandSpeaksOneVocabulary) {
  const std::vector<std::string> commands{"run", "replay", "fuzz", "fuzz merge", "mutants", "check", "convert", "dot", "bench", "stress"};
  const std::vector<std::string> retired{"--hang-timeout", "--watchdog", "--no-progress", "--quiet", "--budget",
                                         "--equivalent-budget", "--timeout", "--structures", "--chunks", "--ranges", "--workloads"};
  std::map<std::string, std::string> help;
  for (const std::string& c : commands) {
    const result r = run(c + " --help");
    // gfsl bench's help is gfsl-bench's, where that program is built.
    if (c == "bench" && r.code == 2 && r.out.find("gfsl-bench is not built") != std::string::npos) continue;
    ASSERT_EQ(r.code, 0) << c << ": " << r.out;
    help[c] = r.out;
    for (const std::string& name : retired) EXPECT_FALSE(offers(r.out, name)) << c << " still offers " << name << ":\n" << r.out;
  }
  const std::map<std::string, std::vector<std::string>> shared{
      {"--progress", {"run", "fuzz", "mutants", "check", "stress"}},
      {"--json", {"fuzz merge", "mutants", "check", "stress"}},
      {"--csv", {"bench", "stress"}},
      {"--junit", {"fuzz merge", "mutants"}},
      {"--hang-seconds", {"run", "stress"}},
      {"--seconds", {"fuzz", "mutants", "check", "stress"}},
      {"--chunk", {"run", "bench", "stress"}},
      {"--range", {"run", "bench", "stress"}},
      {"--variant", {"run", "fuzz", "mutants", "bench", "stress"}},
      {"--devices", {"fuzz", "mutants", "bench", "stress"}},
  };
  for (const auto& [flag, owners] : shared) {
    for (const std::string& c : owners) {
      if (help.count(c)) EXPECT_TRUE(offers(help[c], flag)) << c << " lacks " << flag << ":\n" << help[c];
    }
  }
  // Help texts true to the defaults.
  EXPECT_NE(help["check"].find("half of physical memory"), std::string::npos) << help["check"];
  EXPECT_EQ(help["fuzz"].find("the correct core is only linearizable at chunk"), std::string::npos) << help["fuzz"];
  EXPECT_NE(help["fuzz"].find("robust, the default variant, at every one"), std::string::npos) << help["fuzz"];
  // --seconds says what it bounds, shrinking included.
  EXPECT_NE(help["fuzz"].find("--seconds + signatures x --shrink-seconds"), std::string::npos) << help["fuzz"];
}

// --json FILE writes the report there and leaves the text report on
// standard output; --json - puts the JSON in its place.
TEST(Cli, JsonTakesAFileOrDashForStandardOutput) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gfsl-cli-json-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = (dir / "t.jsonl").string();
  ASSERT_EQ(run("run --backend host --sched turns --teams 2 --ops 200 --range 50 --trace " + trace + " --trace-format json").code, 0);
  const result to_stdout = run("check --json - " + trace);
  EXPECT_EQ(to_stdout.code, 0) << to_stdout.out;
  EXPECT_EQ(to_stdout.out.rfind("{", 0), 0u) << to_stdout.out;
  EXPECT_EQ(to_stdout.out.find("verdict:"), std::string::npos) << to_stdout.out;
  const std::string file = (dir / "r.json").string();
  const result to_file = run("check --json " + file + " " + trace);
  EXPECT_EQ(to_file.code, 0) << to_file.out;
  EXPECT_NE(to_file.out.find("verdict:  linearizable"), std::string::npos) << to_file.out;
  std::ifstream in(file);
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(json.rfind("{", 0), 0u) << json;
  const result stress = run("stress --backend host --max-structures 1 --seconds 60 --progress off --json " + (dir / "s.json").string());
  EXPECT_EQ(stress.code, 0) << stress.out;
  EXPECT_NE(stress.out.find("verdict: no violation"), std::string::npos) << stress.out;
  EXPECT_TRUE(fs::exists(dir / "s.json"));
  fs::remove_all(dir);
}

// gfsl mutants says, as each campaign ends, which mutant it was and what
// became of it; the campaign's seed is printed, RapidCheck's own is not.
TEST(Cli, MutantsPrintsALinePerMutantAsItFinishes) {
  // Bounded by runs (killed after 3 at seed 1, measured), so the lines are
  // the same on any machine; --seconds is a hang guard.
  const std::string args = "mutants --variant thesis --only insert-without-duplicate-check --seed 1 --max-runs 6 --seconds 3600";
  const result r = run(args + " --progress on");
  EXPECT_NE(r.out.find("gfsl mutants: seed 1, 1 mutant and the control"), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("control \\(the correct core\\): passed [0-9]+ runs"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("mutant 1/1 insert-without-duplicate-check: killed after [0-9]+ runs \\([a-z-]+\\)")))
      << r.out;
  EXPECT_EQ(r.out.find("Using configuration"), std::string::npos) << r.out;
  // The lines go before the table, and only when asked for (stderr is a pipe here).
  EXPECT_LT(r.out.find("mutant 1/1"), r.out.find("mutation score"));
  const result quiet = run(args);
  EXPECT_EQ(quiet.out.find("mutant 1/1"), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.out.find("Using configuration"), std::string::npos) << quiet.out;
}

// A campaign whose upper-level rule cannot re-raise does not call re-raise
// "never reached"; it names it as ruled out by the configuration.
TEST(Cli, FuzzNamesPathsTheConfigurationDisablesApart) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gfsl-cli-disabled-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const result r = run("fuzz --upper thesis --max-runs 5 --max-ops 50 --seconds 600 --progress off --out " + dir.string());
  EXPECT_EQ(r.code, 0) << r.out;
  const auto line_at = r.out.find("rare paths:");
  ASSERT_NE(line_at, std::string::npos) << r.out;
  const std::string line = r.out.substr(line_at, r.out.find('\n', line_at) - line_at);
  const auto never = line.find("never reached:");
  const auto disabled = line.find("; not reachable with --upper thesis: ");
  ASSERT_NE(disabled, std::string::npos) << line;
  EXPECT_EQ(line.substr(never, disabled - never).find("re-raise"), std::string::npos) << line;
  EXPECT_NE(line.find("re-raise", disabled), std::string::npos) << line;
  // The coverage pairs of the default variant: none is ruled out by this
  // configuration, and the line counts them all (4 windows x 4 effects).
  const auto pairs_at = r.out.find("coverage pairs: ");
  ASSERT_NE(pairs_at, std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out.substr(pairs_at), std::regex("^coverage pairs: [0-9]+ of 16 reached"))) << r.out;
  // The thesis variant validates no read: its four validate pairs are ruled
  // out by the configuration, not missed, and the default --upper (mixed)
  // rules out nothing.
  fs::remove_all(dir);
  const result thesis = run("fuzz --variant thesis --granularity chunk --max-runs 5 --max-ops 50 --seconds 600 --progress off --out " +
                            dir.string());
  EXPECT_EQ(thesis.code, 0) << thesis.out;
  EXPECT_TRUE(std::regex_search(thesis.out, std::regex("coverage pairs: [0-9]+ of 12 reached [^\n]*; not reachable with --variant thesis: "
                                                       "validate x split, validate x merge, validate x remove, validate x insert\n")))
      << thesis.out;
  EXPECT_EQ(thesis.out.find("not reachable with --upper"), std::string::npos) << thesis.out;
  EXPECT_NE(r.out.find("gfsl fuzz: seed 1,"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

// Each stress replay line stands under the violation it reproduces: run
// again, it gives that violation, the same read of the same chunk at the
// same scheduling point, in its structure 0.
TEST(Cli, StressReplayLinesStandUnderTheirViolations) {
  const result r = run("stress --backend host --granularity lane --variant thesis --max-structures 40 --seconds 600 --progress off");
  ASSERT_EQ(r.code, 1) << r.out;
  const std::regex tied("  violation 1: team ([0-9]+), structure [0-9]+, (at scheduling point [0-9]+: [^\n]*)\n"
                        "    replay: gfsl stress --replay (gfsl-stress1:[^\n]*)\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, tied)) << r.out;
  const result again = run("stress --progress off --replay " + m[3].str());
  EXPECT_EQ(again.code, 1) << again.out;
  const std::string expected = "  violation 1: team " + m[1].str() + ", structure 0, " + m[2].str() + "\n";
  EXPECT_NE(again.out.find(expected), std::string::npos) << expected << "\n" << again.out;
}

}  // namespace
