// Campaigns that survive interruption and run wide: the journal and its
// reader, campaigns killed at random moments (SIGINT, SIGTERM, SIGKILL) and
// resumed, worker processes (--jobs, --devices, with a device count given by
// GFSL_DEVICE_COUNT on machines without a GPU), --shard auto from Slurm's and
// Kubernetes' variables, and gfsl fuzz merge.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/shards.hpp"
#include "fuzz/journal.hpp"
#include "fuzz/merge.hpp"
#include "tests/gfsl_binary.hpp"
#include "tests/files.hpp"

namespace {

namespace fs = std::filesystem;
using gfsl::testing_cli::result;
using gfsl::testing_cli::run;

// Every temp_dir of this binary goes when its tests end.
const ::testing::Environment* const temp_cleanup =
    ::testing::AddGlobalTestEnvironment(new gfsl::testing_files::temp_files_removed("gfsl_scale_"));

std::string temp_dir(const std::string& name) {
  const std::string d = testing::TempDir() + "gfsl_scale_" + std::to_string(::getpid()) + "_" + name;
  fs::remove_all(d);
  return d;
}

using gfsl::testing_files::slurp;

// gfsl with variables added to its environment ("A=1 B=2").
result run_env(const std::string& env, const std::string& args) {
  const std::string cmd = "env " + env + " " + GFSL_BINARY + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  result r{-1, {}};
  if (!p) return r;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) r.out += buf;
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Starts gfsl with `args` (output to `log`), returns its pid.
// `own_group`: in a process group of its own, whose id is the pid (as a
// shell's job, for signals sent to the whole group).
pid_t start(const std::vector<std::string>& args, const std::string& log, const std::vector<std::string>& env = {},
            bool own_group = false) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (own_group) setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv{const_cast<char*>(GFSL_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(GFSL_BINARY, argv.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

// Signals are sent on an event the process shows (a journal line), never
// after a fixed delay, so that a loaded machine only makes the test slower.
// Polls until `ready` holds or `pid` has ended (left for wait_exit to reap);
// false when neither happens within the hang guard.
bool wait_for_event(pid_t pid, const std::function<bool()>& ready) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < give_up) {
    if (ready()) return true;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

std::size_t journal_lines(const std::string& dir) {
  const std::string text = slurp(dir + "/journal.jsonl");
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Both workers of a --jobs 2 campaign in `dir` have completed a batch: each
// is past its start-up, with its signal handlers in place.
bool both_workers_completed_a_batch(const std::string& dir) {
  for (const char* w : {"/worker-0", "/worker-1"}) {
    if (slurp(dir + w + "/journal.jsonl").find("{\"type\":\"batch\"") == std::string::npos) return false;
  }
  return true;
}

gfsl::fuzz::journal_summary journal_of(const std::string& dir) {
  gfsl::fuzz::journal_summary j;
  const std::string e = gfsl::fuzz::read_journal(dir + "/journal.jsonl", j);
  EXPECT_EQ(e, "") << dir;
  return j;
}

gfsl::fuzz::merged_campaigns merged(const std::vector<std::string>& dirs) {
  gfsl::fuzz::merged_campaigns m;
  EXPECT_EQ(gfsl::fuzz::merge_campaigns(dirs, m), "");
  return m;
}

// ---- the journal's reader: what it must accept, and what it must refuse ----

const std::string header =
    "{\"type\":\"campaign\",\"version\":1,\"backend\":\"host\",\"variant\":\"robust\",\"mutant\":\"none\",\"granularity\":\"any\","
    "\"seconds\":5.0,\"max_runs\":0,\"seed\":7,\"max_ops\":100,\"max_teams\":8,\"max_range\":100,\"shard\":1,\"shards\":4,"
    "\"workers\":0,\"devices\":\"\",\"device\":\"\",\"shard_source\":\"option\"}\n";

std::string run_line(std::uint64_t batch, std::uint64_t i, std::uint64_t ops) {
  gfsl::path_stats p;
  p.splits = 2;
  return gfsl::fuzz::run_line(batch, i, ops, false, false, p) + "\n";
}

TEST(Journal, CountsCompleteBatchesAndEveryRun) {
  const std::string dir = temp_dir("journal_ok");
  fs::create_directories(dir);
  write(dir + "/journal.jsonl", header + run_line(0, 0, 10) + run_line(0, 1, 20) + gfsl::fuzz::batch_line(0, 2, 1.5) + "\n" +
                                    run_line(1, 0, 30));
  const auto j = journal_of(dir);
  EXPECT_EQ(j.header.seed, 7u);
  EXPECT_EQ(j.header.shard, 1u);
  EXPECT_EQ(j.header.shards, 4u);
  EXPECT_EQ(j.batches_done, 1u);
  EXPECT_EQ(j.complete.runs, 2u);
  EXPECT_EQ(j.complete.ops, 30u);
  EXPECT_EQ(j.all.runs, 3u);
  EXPECT_EQ(j.all.ops, 60u);
  EXPECT_EQ(j.all.paths.splits, 6u);
  EXPECT_EQ(j.end_reason, "");
  EXPECT_EQ(j.seconds, 1.5);
  EXPECT_TRUE(j.torn_tail.empty());
  // Written before --shrink-seconds existed: those campaigns shrank for 60 s.
  EXPECT_EQ(j.header.shrink_seconds, 60.0);
  // One folder named twice (once with a trailing slash) is one campaign.
  const auto m = merged({dir, dir + "/"});
  EXPECT_EQ(m.totals.runs, 3u);
  EXPECT_EQ(m.shards.size(), 1u);
  EXPECT_NE(merged_text(m).find("given more than once, counted once"), std::string::npos) << merged_text(m);
}

TEST(Journal, IgnoresATornLastLineAndSaysSo) {
  const std::string dir = temp_dir("journal_torn");
  fs::create_directories(dir);
  const std::string full = header + run_line(0, 0, 10) + run_line(0, 1, 20);
  write(dir + "/journal.jsonl", full.substr(0, full.size() - 17));
  const auto j = journal_of(dir);
  EXPECT_EQ(j.all.runs, 1u);
  EXPECT_NE(j.torn_tail.find("line 3 is incomplete"), std::string::npos) << j.torn_tail;
  const auto m = merged({dir});
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(merged_text(m).find("line 3 is incomplete"), std::string::npos);
}

TEST(Journal, RefusesWhatIsNotAJournal) {
  const std::string dir = temp_dir("journal_bad");
  fs::create_directories(dir);
  struct bad_case {
    std::string text, expected;
  };
  const std::vector<bad_case> cases{
      {"", "empty journal"},
      {run_line(0, 0, 1), "line 1: expected the campaign line first"},
      {header + "{\"type\":\"run\",\"batch\":0,\"ops\":1\n", "line 2, byte"},
      {header + run_line(0, 0, 1) + "not json\n", "line 3, byte 1: expected '{'"},
      {header + run_line(0, 0, 1) + gfsl::fuzz::batch_line(1, 1, 1) + "\n", "line 3: batch 1 completes out of order"},
      {header + run_line(0, 0, 1) + gfsl::fuzz::batch_line(0, 2, 1) + "\n", "line 3: batch 0 says 2 runs, the journal holds 1"},
      {header + run_line(3, 0, 1), "line 2: a run of batch 3 while batch 0 is open"},
      {header + "{\"type\":\"meteor\"}\n", "line 2: unknown record type \"meteor\""},
      {header + header, "line 2: a second campaign line"},
      {"{\"type\":\"campaign\",\"version\":2}\n", "line 1: journal version 2 is not 1"},
      {"{\"type\":\"campaign\",\"version\":1,\"shard\":4,\"shards\":4}\n", "line 1: shard 4 of 4"},
  };
  for (const bad_case& c : cases) {
    write(dir + "/journal.jsonl", c.text);
    gfsl::fuzz::journal_summary j;
    const std::string e = gfsl::fuzz::read_journal(dir + "/journal.jsonl", j);
    EXPECT_NE(e.find(c.expected), std::string::npos) << "journal:\n" << c.text << "error: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  const result r = run("fuzz merge " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("journal.jsonl: line 1: shard 4 of 4"), std::string::npos) << r.out;
  const result missing = run("fuzz merge " + dir + "/nowhere");
  EXPECT_EQ(missing.code, 2) << missing.out;
  EXPECT_NE(missing.out.find("nowhere: no journal.jsonl (not a gfsl fuzz campaign folder)"), std::string::npos) << missing.out;
}

// The options --resume takes from the journal include how failures are
// handled: --keep-going and --shrink-seconds.
TEST(Journal, RecordsKeepGoingAndTheShrinkingBound) {
  const std::string dir = temp_dir("journal_keep_going");
  fs::remove_all(dir);
  const result r = run("fuzz --keep-going --shrink-seconds 7 --max-runs 5 --max-ops 50 --progress off --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = journal_of(dir);
  EXPECT_TRUE(j.header.keep_going);
  EXPECT_EQ(j.header.shrink_seconds, 7.0);
  fs::remove_all(dir);
  ASSERT_EQ(run("fuzz --max-runs 5 --max-ops 50 --progress off --out " + dir).code, 0);
  EXPECT_FALSE(journal_of(dir).header.keep_going);
  EXPECT_EQ(journal_of(dir).header.shrink_seconds, 60.0);
}

TEST(Journal, ResumeLineDropsTheUnfinishedBatch) {
  const std::string dir = temp_dir("journal_resume");
  fs::create_directories(dir);
  write(dir + "/journal.jsonl", header + run_line(0, 0, 10) + gfsl::fuzz::batch_line(0, 1, 1) + "\n" + run_line(1, 0, 99) +
                                    "{\"type\":\"resume\",\"batch\":1}\n" + run_line(1, 0, 99) + gfsl::fuzz::batch_line(1, 1, 2) + "\n" +
                                    gfsl::fuzz::end_line("budget", 2.5) + "\n");
  const auto j = journal_of(dir);
  EXPECT_EQ(j.all.runs, 2u);
  EXPECT_EQ(j.all.ops, 109u);
  EXPECT_EQ(j.end_reason, "budget");
  write(dir + "/journal.jsonl", header + "{\"type\":\"resume\",\"batch\":3}\n");
  gfsl::fuzz::journal_summary bad;
  EXPECT_NE(gfsl::fuzz::read_journal(dir + "/journal.jsonl", bad).find("resumes at batch 3, but batch 0 is the first unfinished one"),
            std::string::npos);
}

TEST(Journal, ReportsAreReplacedWholeByRename) {
  const std::string dir = temp_dir("atomic");
  fs::create_directories(dir);
  EXPECT_EQ(gfsl::fuzz::write_file_atomically(dir + "/r.json", "old\n"), "");
  EXPECT_EQ(gfsl::fuzz::write_file_atomically(dir + "/r.json", "new\n"), "");
  EXPECT_EQ(slurp(dir + "/r.json"), "new\n");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);  // no temporary left behind
  const std::string e = gfsl::fuzz::write_file_atomically(dir + "/no/such/folder/r.json", "x");
  EXPECT_NE(e.find("no/such/folder/r.json: cannot write"), std::string::npos) << e;
}

// ---- campaigns killed at random moments, then resumed ----

// The same small campaign every time: 300 runs of at most 400 operations
// (about 3 s on one core).
std::vector<std::string> small_campaign(const std::string& out) {
  return {"fuzz", "--backend", "host", "--seed", "3", "--max-runs", "300", "--max-ops", "400", "--seconds", "600", "--progress", "off",
          "--out", out};
}

TEST(Interrupted, EverySignalLeavesAJournalThatResumesToTheSameCampaign) {
  const std::string ref = temp_dir("ref");
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(wait_exit(start(small_campaign(ref), ref + ".log")), 0) << slurp(ref + ".log");
  const int ref_ms = static_cast<int>(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  const auto whole = journal_of(ref);
  ASSERT_EQ(whole.end_reason, "budget");
  ASSERT_GE(whole.all.runs, 300u);

  const std::size_t whole_lines = journal_lines(ref);

  std::random_device rd;
  const unsigned seed = rd();
  std::mt19937 rng(seed);
  for (int sig : {SIGINT, SIGTERM, SIGKILL}) {
    const std::string dir = temp_dir("killed_" + std::to_string(sig));
    // Anywhere in the campaign's life, measured in journal lines: SIGKILL
    // from the campaign line on (before it there is no campaign to resume);
    // SIGINT and SIGTERM once a run is journalled, as the handlers are in
    // place only after the campaign line (before them a signal ends the
    // process, as for any program). A campaign that finished before the
    // signal landed is run again, signalled at half the lines.
    const std::size_t first_line = sig == SIGKILL ? 1 : 2;
    std::size_t lines = std::uniform_int_distribution<std::size_t>(first_line, whole_lines * 9 / 10)(rng);
    int code = 0;
    for (int attempt = 0; attempt < 4; ++attempt, lines = std::max(first_line, lines / 2)) {
      fs::remove_all(dir);
      const pid_t pid = start(small_campaign(dir), dir + ".log");
      EXPECT_TRUE(wait_for_event(pid, [&] { return journal_lines(dir) >= lines; })) << "no journal line " << lines << " in minutes";
      kill(pid, sig);
      code = wait_exit(pid);
      if (code != 0) break;
    }
    SCOPED_TRACE("signal " + std::to_string(sig) + " at journal line " + std::to_string(lines) + " of " + std::to_string(whole_lines) +
                 " (test seed " + std::to_string(seed) + ")");
    if (code == 0) {
      ADD_FAILURE() << "the campaign finished before the signal (" << ref_ms << " ms uninterrupted)";
      continue;
    }
    if (sig == SIGKILL) {
      EXPECT_EQ(code, -SIGKILL);
    } else {
      EXPECT_EQ(code, 3) << slurp(dir + ".log");  // interrupted: undecided
      EXPECT_NE(slurp(dir + ".log").find("gfsl fuzz --resume " + dir + " continues"), std::string::npos) << slurp(dir + ".log");
      EXPECT_EQ(journal_of(dir).end_reason, "interrupted");
      EXPECT_TRUE(fs::exists(dir + "/report.json"));
    }
    // What was recorded reads back, and merge counts it.
    const auto left = journal_of(dir);
    EXPECT_LE(left.all.runs, whole.all.runs);
    const result m = run("fuzz merge " + dir);
    EXPECT_EQ(m.code, 0) << m.out;
    EXPECT_NE(m.out.find("campaigns: 1, " + std::to_string(left.all.runs) + " runs"), std::string::npos) << m.out;
    EXPECT_NE(m.out.find("did not finish"), std::string::npos) << m.out;
    // --resume finishes it as if it had never stopped: batches are deterministic.
    const result r = run("fuzz --resume " + dir + " --progress off");
    EXPECT_EQ(r.code, 0) << r.out;
    const auto resumed = journal_of(dir);
    EXPECT_EQ(resumed.end_reason, "budget");
    EXPECT_EQ(resumed.all.runs, whole.all.runs);
    EXPECT_EQ(resumed.all.ops, whole.all.ops);
    EXPECT_EQ(resumed.all.paths.splits, whole.all.paths.splits);
    // And a finished campaign has nothing left to resume.
    const result again = run("fuzz --resume " + dir + " --progress off");
    EXPECT_EQ(again.code, 0) << again.out;
    EXPECT_NE(again.out.find("nothing to resume"), std::string::npos) << again.out;
  }
}

TEST(Interrupted, AFailureIsJournalledOnceItsArtifactIsWhole) {
  const std::string dir = temp_dir("failure_kept");
  // Bounded by runs (the mutant is found at the 2nd run at seed 1, measured); --seconds is a hang guard.
  const pid_t pid = start({"fuzz", "--mutant", "insert-without-duplicate-check", "--seed", "1", "--jobs", "1", "--max-runs", "5",
                           "--seconds", "3600", "--progress", "off", "--out", dir},
                          dir + ".log");
  EXPECT_EQ(wait_exit(pid), 1) << slurp(dir + ".log");
  const auto j = journal_of(dir);
  ASSERT_EQ(j.failures.size(), 1u);
  EXPECT_EQ(j.end_reason, "failure");
  for (const char* f : {"history.jsonl", "replay.txt", "report.txt", "timeline.txt", "counterexample.html"}) {
    EXPECT_TRUE(fs::exists(fs::path(j.failures[0].dir) / f)) << f;
  }
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename().string().rfind(".staging", 0), std::string::npos);
  const result c = run("check " + j.failures[0].dir + "/history.jsonl");
  EXPECT_TRUE(c.code == 0 || c.code == 1) << c.out;
  const result r = run("fuzz --resume " + dir);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("ended (failure)"), std::string::npos) << r.out;
}

// Killed after the failing run, before its folder was in place (as SIGKILL
// during shrinking or writing leaves it): the journal holds the failing
// batch's runs but no failure, and --resume runs the batch again.
TEST(Interrupted, AFailureWhoseFolderWasNotWrittenIsFoundAgainOnResume) {
  const std::string dir = temp_dir("failure_lost");
  ASSERT_EQ(run("fuzz --mutant insert-without-duplicate-check --seed 1 --jobs 1 --max-runs 5 --seconds 3600 --progress off --out " + dir).code,
            1);
  const auto first = journal_of(dir);
  ASSERT_EQ(first.failures.size(), 1u);
  const std::string artifact = first.failures[0].dir;
  std::string text = slurp(dir + "/journal.jsonl");
  text = text.substr(0, text.find("{\"type\":\"failure\""));
  ASSERT_NE(text.find("\"failed\":true"), std::string::npos);
  write(dir + "/journal.jsonl", text);
  fs::remove_all(artifact);
  fs::remove(dir + "/report.json");
  fs::create_directories(dir + "/.staging-1/failure-half-written");
  const result r = run("fuzz --resume " + dir + " --progress off");
  EXPECT_EQ(r.code, 1) << r.out;
  const auto again = journal_of(dir);
  ASSERT_EQ(again.failures.size(), 1u);
  EXPECT_EQ(again.failures[0].signature, first.failures[0].signature);
  EXPECT_EQ(again.failures[0].replay, first.failures[0].replay);
  EXPECT_EQ(again.all.runs, first.all.runs);
  EXPECT_TRUE(fs::exists(artifact + "/history.jsonl"));
  EXPECT_FALSE(fs::exists(dir + "/.staging-1"));
}

TEST(Interrupted, ANewCampaignDoesNotOverwriteAnOldOneUnlessAsked) {
  const std::string dir = temp_dir("overwrite");
  std::vector<std::string> args{"fuzz", "--max-runs", "25", "--max-ops", "50", "--progress", "off", "--out", dir};
  ASSERT_EQ(wait_exit(start(args, dir + ".log")), 0);
  EXPECT_EQ(wait_exit(start(args, dir + ".log")), 2);
  EXPECT_NE(slurp(dir + ".log").find("holds a campaign already (gfsl fuzz --resume " + dir + " continues it; --overwrite starts over)"),
            std::string::npos);
  args.push_back("--overwrite");
  EXPECT_EQ(wait_exit(start(args, dir + ".log")), 0) << slurp(dir + ".log");
  const result both = run("fuzz --resume " + dir + " --out " + dir);
  EXPECT_EQ(both.code, 2) << both.out;
  const result none = run("fuzz --seconds 1");
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_NE(none.out.find("--out DIR is needed (or --resume DIR)"), std::string::npos) << none.out;
}

// ---- worker processes ----

TEST(Workers, JobsAreShardsOfOneCampaignMergedIntoOneReport) {
  const std::string dir = temp_dir("jobs");
  const result r = run("fuzz --jobs 2 --seed 3 --max-runs 100 --max-ops 120 --seconds 600 --progress off --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto w0 = journal_of(dir + "/worker-0"), w1 = journal_of(dir + "/worker-1");
  EXPECT_EQ(w0.header.shard, 0u);
  EXPECT_EQ(w1.header.shard, 1u);
  EXPECT_EQ(w0.header.shards, 2u);
  EXPECT_EQ(w0.header.max_runs, 50u);  // the campaign's budget, shared
  const auto m = merged({dir});
  EXPECT_EQ(m.shards.size(), 2u);
  EXPECT_EQ(m.totals.runs, w0.all.runs + w1.all.runs);
  EXPECT_GT(m.totals.paths.splits, 0u);
  const std::string report = slurp(dir + "/report.json");
  EXPECT_NE(report.find("\"campaigns\":2,\"runs\":" + std::to_string(m.totals.runs)), std::string::npos) << report;
  // Worker j of a 2-worker campaign takes the batches shard j of 2 takes:
  // the same runs as two separate shards.
  const std::string solo = temp_dir("shard1of2");
  ASSERT_EQ(run("fuzz --shard 1/2 --seed 3 --max-runs 50 --max-ops 120 --seconds 600 --progress off --out " + solo).code, 0);
  EXPECT_EQ(journal_of(solo).all.ops, w1.all.ops);
}

TEST(Workers, DevicesGiveOneWorkerPerDeviceWithItsOwnVisibleDevice) {
  const std::string dir = temp_dir("devices");
  const result r = run_env("GFSL_DEVICE_COUNT=3", "fuzz --backend host --devices 0,2 --max-runs 50 --max-ops 80 --progress off --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(journal_of(dir + "/worker-0").header.device, "0");
  EXPECT_EQ(journal_of(dir + "/worker-1").header.device, "2");
  EXPECT_NE(r.out.find("device 0: 1 shard(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device 2: 1 shard(s)"), std::string::npos) << r.out;
  const std::string report = slurp(dir + "/report.json");
  EXPECT_NE(report.find("\"devices\":[{\"device\":\"0\""), std::string::npos) << report;
  // CUDA_VISIBLE_DEVICES is respected: "all" is its entries, each worker gets one.
  const std::string cvd = temp_dir("cvd");
  const result w = run_env("CUDA_VISIBLE_DEVICES=5,7 GFSL_DEVICE_COUNT=8",
                           "fuzz --backend host --devices all --max-runs 25 --max-ops 50 --progress off --out " + cvd);
  ASSERT_EQ(w.code, 0) << w.out;
  EXPECT_EQ(journal_of(cvd + "/worker-0").header.device, "5");
  EXPECT_EQ(journal_of(cvd + "/worker-1").header.device, "7");
  EXPECT_FALSE(fs::exists(cvd + "/worker-2"));
}

TEST(Workers, BadDeviceListsAreRefusedInOneLine) {
  const std::string dir = temp_dir("bad_devices");
  struct bad_case {
    std::string env, devices, expected;
  };
  for (const bad_case& c : std::vector<bad_case>{
           {"GFSL_DEVICE_COUNT=2", "2", "--devices 2: device 2 is not visible (2 visible: 0 to 1)"},
           {"GFSL_DEVICE_COUNT=2", "0,0", "--devices 0,0: device 0 is named twice"},
           {"GFSL_DEVICE_COUNT=2", "one", "--devices one: expected all or device numbers such as 0,2"},
           {"GFSL_DEVICE_COUNT=0", "all", "--devices all: no CUDA device is visible"},
           {"GFSL_DEVICE_COUNT=x", "all", "GFSL_DEVICE_COUNT=x: expected a number of devices"},
       }) {
    const result r = run_env(c.env, "fuzz --backend host --devices " + c.devices + " --max-runs 1 --progress off --overwrite --out " + dir);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(c.expected), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  }
  const result host = run("fuzz --backend host --devices all --max-runs 1 --progress off --overwrite --out " + dir);
  EXPECT_EQ(host.code, 2) << host.out;
  EXPECT_NE(host.out.find("--devices goes with --backend cuda"), std::string::npos) << host.out;
  const result both = run("fuzz --backend cuda --devices all --jobs 2 --max-runs 1 --progress off --overwrite --out " + dir);
  EXPECT_EQ(both.code, 2) << both.out;
}

// The operations of `fuzz --jobs 2 --seed 3 --max-runs 1600 --max-ops 400`
// run without interruption (once, for every test that compares with it).
std::uint64_t uninterrupted_jobs_campaign_ops() {
  static const std::uint64_t ops = [] {
    const std::string ref = temp_dir("jobs_ref");
    const result r = run("fuzz --jobs 2 --seed 3 --max-runs 1600 --max-ops 400 --seconds 600 --progress off --out " + ref);
    EXPECT_EQ(r.code, 0) << r.out;
    return r.code == 0 ? merged({ref}).totals.ops : 0;
  }();
  return ops;
}

// Ctrl-C in a terminal, or `timeout`, signals the whole process group: the
// parent and its workers at once, and the parent passes the signal on. Each
// worker stops once, records everything and the campaign resumes.
TEST(Workers, ASignalToTheWholeGroupStopsEveryWorkerCleanly) {
  const std::uint64_t ref_ops = uninterrupted_jobs_campaign_ops();
  ASSERT_GT(ref_ops, 0u);
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string dir = temp_dir("group_" + std::to_string(sig));
    // --progress on: the per-worker lines checked below are progress, which
    // auto leaves out when standard error is a file.
    const pid_t pid = start({"fuzz", "--jobs", "2", "--seed", "3", "--max-runs", "1600", "--max-ops", "400", "--seconds", "600",
                             "--progress", "on", "--out", dir},
                            dir + ".log", {}, true);
    EXPECT_TRUE(wait_for_event(pid, [&] { return both_workers_completed_a_batch(dir); })) << slurp(dir + ".log");
    kill(-pid, sig);
    EXPECT_EQ(wait_exit(pid), 3) << slurp(dir + ".log");
    const std::string log = slurp(dir + ".log");
    EXPECT_NE(log.find("worker 0: exit 3"), std::string::npos) << log;
    EXPECT_NE(log.find("worker 1: exit 3"), std::string::npos) << log;
    for (const char* w : {"/worker-0", "/worker-1"}) {
      EXPECT_EQ(journal_of(dir + w).end_reason, "interrupted") << w;
      EXPECT_TRUE(fs::exists(dir + w + "/report.json")) << w;
    }
    const result r = run("fuzz --resume " + dir + " --progress off");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(merged({dir}).totals.ops, ref_ops) << r.out;
  }
}

// gfsl stress, bench and mutants on several devices: the same mechanism, one
// worker process per device with CUDA_VISIBLE_DEVICES set, checked here with
// the host backend standing in for the GPU.
TEST(Workers, StressOnEveryDeviceReportsEachDeviceAndTheSum) {
  // Bounded by structures, so the counts below hold on any machine; --seconds is a hang guard.
  const result r = run_env("GFSL_DEVICE_COUNT=2", "stress --backend host --devices all --seconds 3600 --max-structures 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("== device 0 (CUDA_VISIBLE_DEVICES=0): exit 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== device 1 (CUDA_VISIBLE_DEVICES=1): exit 0"), std::string::npos) << r.out;
  // Two structures of 4 teams x 2000 operations on each device.
  EXPECT_NE(r.out.find("  device 0: 16000 operations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  device 1: 16000 operations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all 2 devices: 32000 operations"), std::string::npos) << r.out;
  const result csv = run_env("CUDA_VISIBLE_DEVICES=3,6 GFSL_DEVICE_COUNT=8", "stress --backend host --devices 1 --seconds 3600 --max-structures 1 --csv -");
  ASSERT_EQ(csv.code, 0) << csv.out;
  EXPECT_EQ(csv.out.rfind("backend,device,shape", 0), 0u) << csv.out;  // one device: its report as it is
  const result json = run_env("GFSL_DEVICE_COUNT=2", "stress --backend host --devices 0,1 --seconds 3600 --max-structures 1 --json -");
  ASSERT_EQ(json.code, 0) << json.out;
  EXPECT_EQ(json.out.rfind("{\"devices\":[{\"device\":0,\"visible\":\"0\",\"status\":\"exit 0\",\"operations\":8000,", 0), 0u) << json.out;
  EXPECT_NE(json.out.find("],\"operations\":16000,\"violations\":0,"), std::string::npos) << json.out;
  // A seeded bug found on every device: the exit code says so. Each device
  // finds it in its structure 0 (measured); 2 structures leave room.
  const result bug = run_env("GFSL_DEVICE_COUNT=2",
                             "stress --backend host --devices all --variant thesis --granularity lane --range 36 --writers 1/4 "
                             "--seconds 3600 --max-structures 2 --mutant insert-without-duplicate-check");
  EXPECT_EQ(bug.code, 1) << bug.out;
  const result bad = run_env("GFSL_DEVICE_COUNT=2", "stress --backend host --devices 5 --seconds 1");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("gfsl stress: --devices 5: device 5 is not visible (2 visible: 0 to 1)"), std::string::npos) << bad.out;
}

TEST(Workers, BenchAndMutantsRunOnEachDevice) {
  // This build may have no GPU benchmark: each worker says so, in one line
  // led by its device, and the exit code is the workers'.
  const std::string csv = temp_dir("bench.csv");
  const result b = run_env("GFSL_DEVICE_COUNT=2", "bench --devices all --suite launch --csv " + csv);
  if (b.out.find("not available in this build") != std::string::npos) {
    EXPECT_EQ(b.code, 2) << b.out;
    EXPECT_NE(b.out.find("device 1: gfsl bench: not available in this build"), std::string::npos) << b.out;
    EXPECT_NE(b.out.find("gfsl bench: device 1 (CUDA_VISIBLE_DEVICES=1): exit 2"), std::string::npos) << b.out;
  }
  // Bounded by runs (killed after 3 at seed 1, measured); --seconds is a hang guard.
  const result m = run_env("GFSL_DEVICE_COUNT=2",
                           "mutants --backend host --devices all --variant thesis --seed 1 --max-runs 6 --seconds 3600 "
                           "--only insert-without-duplicate-check --json -");
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_NE(m.out.find("\"name\":\"insert-without-duplicate-check\",\"applicable\":true,\"equivalent\":false,\"killed\":true"),
            std::string::npos)
      << m.out;
  EXPECT_NE(m.out.find("\"device\":1,"), std::string::npos) << m.out;  // the control ran on device 0, the mutant beside it
  const result host = run("mutants --backend host --devices all --seconds 1 --only insert-without-duplicate-check");
  EXPECT_EQ(host.code, 2) << host.out;
  EXPECT_NE(host.out.find("--devices goes with --backend cuda"), std::string::npos) << host.out;
}

// Children of `parent` (from /proc).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = slurp(e.path().string() + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(std::stoi(name));
  }
  return out;
}

TEST(Workers, AWorkerThatDiesIsStartedAgainAndTheCampaignCompletes) {
  const std::uint64_t ref_ops = uninterrupted_jobs_campaign_ops();
  ASSERT_GT(ref_ops, 0u);
  const std::string dir = temp_dir("restart");
  const pid_t pid = start({"fuzz", "--jobs", "2", "--seed", "3", "--max-runs", "1600", "--max-ops", "400", "--seconds", "600",
                           "--progress", "on", "--out", dir},
                          dir + ".log");
  EXPECT_TRUE(wait_for_event(pid, [&] { return both_workers_completed_a_batch(dir); })) << slurp(dir + ".log");
  const std::vector<pid_t> kids = children_of(pid);
  ASSERT_EQ(kids.size(), 2u);
  kill(kids[0], SIGKILL);  // as a device fault or the OOM killer would
  EXPECT_EQ(wait_exit(pid), 0) << slurp(dir + ".log");
  const std::string log = slurp(dir + ".log");
  EXPECT_NE(log.find("ended (killed by signal 9 (Killed)): started again"), std::string::npos) << log;
  EXPECT_NE(log.find("(restarted 1 time)"), std::string::npos) << log;
  EXPECT_EQ(merged({dir}).totals.ops, ref_ops);
}

TEST(Workers, AKilledParentLeavesWorkersThatResume) {
  const std::uint64_t ref_ops = uninterrupted_jobs_campaign_ops();
  ASSERT_GT(ref_ops, 0u);
  const std::string dir = temp_dir("parent_killed");
  const pid_t pid = start({"fuzz", "--jobs", "2", "--seed", "3", "--max-runs", "1600", "--max-ops", "400", "--seconds", "600",
                           "--progress", "off", "--out", dir},
                          dir + ".log");
  EXPECT_TRUE(wait_for_event(pid, [&] { return both_workers_completed_a_batch(dir); })) << slurp(dir + ".log");
  const std::vector<pid_t> kids = children_of(pid);
  EXPECT_EQ(kids.size(), 2u);
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), -SIGKILL);
  // The workers are told (SIGTERM) and end, journals closed.
  // (An orphan that ended may stay a zombie where nothing reaps it.)
  auto running = [](pid_t k) {
    const std::string stat = slurp("/proc/" + std::to_string(k) + "/stat");
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z' && stat[close + 2] != 'X';
  };
  for (pid_t k : kids) {
    for (int i = 0; i < 30000 && running(k); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));  // hang guard only
    EXPECT_FALSE(running(k)) << "worker " << k << " outlived its parent by 300 s";
  }
  const result m = run("fuzz merge " + dir);
  EXPECT_EQ(m.code, 0) << m.out;
  const result r = run("fuzz --resume " + dir + " --progress off");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(merged({dir}).totals.ops, ref_ops) << r.out;
}

// ---- issue 55, N4 (and F14): what workers report reaches stderr whatever
// --progress says, and merge does not pass shards that never ran ----

// gfsl with variables added to its environment: its exit code and what it
// wrote to standard error alone.
result run_stderr(const std::string& env, const std::string& args) {
  const std::string cmd = "env " + env + " " + GFSL_BINARY + " " + args + " 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  result r{-1, {}};
  if (!p) return r;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) r.out += buf;
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Workers that cannot be started (a pids limit: --jobs 30 under 12; root
// ignores RLIMIT_NPROC, so an LD_PRELOAD shim fails fork after N) are named
// one line each with --progress off (the parent exited 4 with nothing on
// stderr), and `gfsl fuzz merge` names the shards that never ran and exits 3
// (it passed 10 of 30 shards, exit 0); --resume starts them.
TEST(Workers, WorkersThatCannotStartAreSaidAndMergeDoesNotPassTheirShards) {
  const std::string dir = temp_dir("cannot_start");
  const std::string preload = std::string("GFSL_TEST_FORKS_ALLOWED=2 LD_PRELOAD=") + FAIL_THREADS_PRELOAD;
  const result r = run_stderr(preload, "fuzz --jobs 6 --seed 1 --max-runs 6 --max-ops 50 --seconds 3600 --progress off --out " + dir);
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
  for (int j = 2; j < 6; ++j) {
    EXPECT_NE(r.out.find("gfsl fuzz: cannot start worker " + std::to_string(j) + ": Resource temporarily unavailable\n"),
              std::string::npos)
        << r.out;
  }
  EXPECT_EQ(journal_of(dir).end_reason, "interrupted");
  const result m = run("fuzz merge " + dir);
  EXPECT_EQ(m.code, 3) << m.out;
  EXPECT_NE(m.out.find(": 4 of 6 workers never ran (worker-2 ... worker-5 have no journal)"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("gfsl fuzz merge: 4 shards never ran (" + dir + "/worker-2 ... " + dir + "/worker-5)"), std::string::npos)
      << m.out;
  const std::string junit = dir + ".junit.xml";
  const result j = run("fuzz merge " + dir + " --json - --junit " + junit);
  EXPECT_EQ(j.code, 3) << j.out;
  EXPECT_NE(j.out.find("\"missing_shards\":[\"" + dir + "/worker-2\",\"" + dir + "/worker-3\","), std::string::npos) << j.out;
  EXPECT_NE(slurp(junit).find("errors=\"4\""), std::string::npos) << slurp(junit);
  EXPECT_EQ(count_of(slurp(junit), "(never ran)\"><error message="), 4u) << slurp(junit);
  // With processes to spare again, --resume starts them: merge passes.
  const result resumed = run("fuzz --resume " + dir + " --progress off");
  EXPECT_EQ(resumed.code, 0) << resumed.out;
  const result after = run("fuzz merge " + dir);
  EXPECT_EQ(after.code, 0) << after.out;
  EXPECT_NE(after.out.find("campaigns: 6,"), std::string::npos) << after.out;
  EXPECT_EQ(after.out.find("never ran"), std::string::npos) << after.out;
}

// A --jobs 2 parent killed with SIGKILL and resumed at once, while its
// workers still finish their run (held stopped here, so that "at once" does
// not depend on speed): the resumed workers were refused in their logs
// alone, and the resume exited 2 with nothing on stderr. It is refused in
// one line naming the workers' owners, before anything starts, and goes on
// once they have ended.
TEST(Workers, AResumeWhileTheKilledParentsWorkersStillRunIsRefusedInOneLine) {
  const std::string dir = temp_dir("resume_busy");
  const pid_t pid = start({"fuzz", "--jobs", "2", "--seed", "3", "--max-runs", "1000000", "--max-ops", "50", "--seconds", "3600",
                           "--progress", "off", "--out", dir},
                          dir + ".log");
  ASSERT_TRUE(wait_for_event(pid, [&] { return both_workers_completed_a_batch(dir); })) << slurp(dir + ".log");
  const std::vector<pid_t> kids = children_of(pid);
  ASSERT_EQ(kids.size(), 2u);
  for (pid_t k : kids) kill(k, SIGSTOP);
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid), -SIGKILL);
  const std::string journal = slurp(dir + "/journal.jsonl");
  const result r = run_stderr("GFSL_UNUSED=1", "fuzz --resume " + dir + " --progress off");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  for (pid_t k : kids) EXPECT_NE(r.out.find("in use by process " + std::to_string(k)), std::string::npos) << r.out;
  EXPECT_EQ(slurp(dir + "/journal.jsonl"), journal) << "the parent's journal is left as it was";
  // Let go, the workers end (their SIGTERM from the parent's death was
  // waiting); the resumed campaign then searches on.
  for (pid_t k : kids) kill(k, SIGCONT);
  auto running = [](pid_t k) {
    const std::string stat = slurp("/proc/" + std::to_string(k) + "/stat");
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z' && stat[close + 2] != 'X';
  };
  for (pid_t k : kids) {
    for (int i = 0; i < 30000 && running(k); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));  // hang guard only
    ASSERT_FALSE(running(k)) << "worker " << k << " outlived its parent by 300 s";
  }
  const std::uint64_t before = journal_of(dir + "/worker-0").batches_done;
  const pid_t again = start({"fuzz", "--resume", dir, "--progress", "off"}, dir + ".again.log");
  ASSERT_TRUE(wait_for_event(again, [&] {
    gfsl::fuzz::journal_summary j;
    return gfsl::fuzz::read_journal(dir + "/worker-0/journal.jsonl", j).empty() && j.batches_done > before;
  }));
  kill(again, SIGINT);
  EXPECT_EQ(wait_exit(again), 3) << slurp(dir + ".again.log");
}

// --jobs 2 --keep-going on a full disk: each worker's error is one line on
// the parent's stderr with --progress off (exit 4 with nothing on stderr),
// naming the worker and what failed; a parent whose own journal fills says
// so in one line and exits 4 (its worker and end lines went unchecked).
TEST(Workers, WorkersOnAFullDiskSayWhatWentWrongWithoutProgress) {
  const std::string args = "fuzz --jobs 2 --keep-going --variant thesis --mutant insert-left-to-right --seed 1 --max-runs 200 "
                           "--seconds 3600 --shrink-seconds 1 --progress off --out ";
  const std::string full = std::string("LD_PRELOAD=") + FAIL_WRITES_PRELOAD + " GFSL_TEST_WRITE_BYTES=";
  const std::string dir = temp_dir("jobs_full_disk");
  const result r = run_stderr(full + "3000", args + dir);
  EXPECT_EQ(r.code, 4) << r.out;
  for (const std::string w : {"worker 0", "worker 1"}) {
    EXPECT_NE(r.out.find("gfsl fuzz: " + w + ": exit 4 (restarted 3 times): "), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) EXPECT_EQ(l.rfind("gfsl fuzz: ", 0), 0u) << l;
  // The parent's own journal: room for its first line, not for a worker's.
  const std::string ref = temp_dir("jobs_full_disk_ref");
  ASSERT_EQ(run("fuzz --jobs 2 --seed 1 --max-runs 2 --max-ops 50 --progress off --out " + ref).code, 0);
  const std::string text = slurp(ref + "/journal.jsonl");
  const std::size_t header_bytes = text.find('\n') + 1;
  const std::string parent = temp_dir("jobs_full_parent");
  const result p = run_stderr(full + std::to_string(header_bytes + 8),
                              "fuzz --jobs 2 --seed 1 --max-runs 2 --max-ops 50 --progress off --out " + parent);
  EXPECT_EQ(p.code, 4) << p.out;
  EXPECT_NE(p.out.find("gfsl fuzz: " + parent + "/journal.jsonl: cannot append to the journal: No space left on device (the workers' "
                       "journals hold their runs and failures: gfsl fuzz merge " + parent + " reads them)"),
            std::string::npos)
      << p.out;
}

// --jobs 2 --keep-going: a worker that ended with failures stopped the
// other, whose shard was cut short of its budget ("did not finish"). Each
// worker runs to its share of --max-runs; the campaign exits 1.
TEST(Workers, AKeepGoingCampaignOfWorkersRunsEveryShardToItsBudget) {
  const std::string dir = temp_dir("keep_going_jobs");
  const result r = run("fuzz --jobs 2 --keep-going --variant thesis --mutant insert-left-to-right --seed 1 --max-runs 300 --max-ops 300 "
                       "--seconds 3600 --shrink-seconds 1 --progress off --out " + dir);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.find("did not finish"), std::string::npos) << r.out;
  for (const std::string w : {"/worker-0", "/worker-1"}) {
    const auto j = journal_of(dir + w);
    EXPECT_TRUE(j.end_reason == "failure" || j.end_reason == "budget") << w << ": " << j.end_reason;
    EXPECT_GE(j.all.runs, 150u) << w;
  }
  EXPECT_EQ(journal_of(dir).end_reason, "failure");
}

// ---- --shard auto ----

struct fake_env {
  std::map<std::string, std::string> vars;
  const char* operator()(const char* name) const {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  }
};

TEST(ShardAuto, SlurmArraysAndKubernetesIndexedJobs) {
  using gfsl::cli::choose_shard;
  gfsl::cli::shard_choice c;
  EXPECT_EQ(choose_shard("auto", 0, c, fake_env{{{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_MIN", "4"},
                                                 {"SLURM_ARRAY_TASK_COUNT", "8"}, {"SLURM_ARRAY_JOB_ID", "812"}}}),
            "");
  EXPECT_EQ(c.shard, 3u);
  EXPECT_EQ(c.shards, 8u);
  EXPECT_EQ(c.source, "slurm");
  EXPECT_EQ(c.detail, "SLURM_ARRAY_JOB_ID=812 SLURM_ARRAY_TASK_ID=7");
  // --array=0-63:2: 32 tasks, ids 0, 2, ..., 62.
  EXPECT_EQ(choose_shard("auto", 0, c, fake_env{{{"SLURM_ARRAY_TASK_ID", "62"}, {"SLURM_ARRAY_TASK_MIN", "0"},
                                                 {"SLURM_ARRAY_TASK_COUNT", "32"}, {"SLURM_ARRAY_TASK_STEP", "2"}}}),
            "");
  EXPECT_EQ(c.shard, 31u);
  EXPECT_EQ(c.shards, 32u);
  EXPECT_EQ(choose_shard("auto", 16, c, fake_env{{{"JOB_COMPLETION_INDEX", "15"}}}), "");
  EXPECT_EQ(c.shard, 15u);
  EXPECT_EQ(c.shards, 16u);
  EXPECT_EQ(c.source, "kubernetes");
  EXPECT_EQ(choose_shard("2/5", 0, c, fake_env{}), "");
  EXPECT_EQ(c.shard, 2u);
  EXPECT_EQ(c.source, "option");
}

TEST(ShardAuto, MissingOrInconsistentVariablesAreNamed) {
  using gfsl::cli::choose_shard;
  gfsl::cli::shard_choice c;
  struct bad_case {
    std::string shard;
    unsigned count;
    fake_env env;
    std::string expected;
  };
  const std::vector<bad_case> cases{
      {"auto", 0, {}, "neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX"},
      {"auto", 0, {{{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}}, "SLURM_ARRAY_TASK_MIN=(unset) is not a task number"},
      {"auto", 0, {{{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "0"}}}, "SLURM_ARRAY_TASK_COUNT=(unset) is not a task count"},
      {"auto", 0, {{{"SLURM_ARRAY_TASK_ID", "x3"}}}, "SLURM_ARRAY_TASK_ID=x3 is not a task number"},
      {"auto", 0, {{{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}},
       "SLURM_ARRAY_TASK_ID=9 is not one of the 4 tasks from SLURM_ARRAY_TASK_MIN=0"},
      {"auto", 0, {{{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_ARRAY_TASK_STEP", "3"}}},
       "an array with gaps"},
      {"auto", 8, {{{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}},
       "--shard-count 8 disagrees with SLURM_ARRAY_TASK_COUNT=4"},
      {"auto", 0, {{{"JOB_COMPLETION_INDEX", "3"}}}, "JOB_COMPLETION_INDEX is set (a Kubernetes indexed Job) but not --shard-count"},
      {"auto", 3, {{{"JOB_COMPLETION_INDEX", "3"}}}, "JOB_COMPLETION_INDEX=3 is not below --shard-count 3"},
      {"auto", 3, {{{"JOB_COMPLETION_INDEX", "-1"}}}, "JOB_COMPLETION_INDEX=-1 is not an index"},
      {"auto", 4, {{{"JOB_COMPLETION_INDEX", "1"}, {"SLURM_ARRAY_TASK_ID", "1"}}}, "both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set"},
      {"1/4", 4, {}, "--shard-count goes with --shard auto"},
      {"4/4", 0, {}, "--shard 4/4: expected i/n with 0 <= i < n, or auto"},
  };
  for (const bad_case& b : cases) {
    const std::string e = choose_shard(b.shard, b.count, c, b.env);
    EXPECT_NE(e.find(b.expected), std::string::npos) << "got: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos);
  }
}

TEST(ShardAuto, TheCommandRecordsTheShardAndItsSource) {
  const std::string dir = temp_dir("auto");
  const result r = run_env("SLURM_ARRAY_JOB_ID=44 SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=3",
                           "fuzz --shard auto --seed 9 --max-runs 25 --max-ops 50 --progress off --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = journal_of(dir);
  EXPECT_EQ(j.header.shard, 2u);
  EXPECT_EQ(j.header.shards, 3u);
  EXPECT_EQ(j.header.seed, 9u);
  EXPECT_EQ(j.header.shard_source, "slurm SLURM_ARRAY_JOB_ID=44 SLURM_ARRAY_TASK_ID=6");
  // The same shard by index: the same runs.
  const std::string k8s = temp_dir("auto_k8s");
  ASSERT_EQ(run_env("JOB_COMPLETION_INDEX=2", "fuzz --shard auto --shard-count 3 --seed 9 --max-runs 25 --max-ops 50 --progress off --out " + k8s).code,
            0);
  EXPECT_EQ(journal_of(k8s).header.shard_source, "kubernetes JOB_COMPLETION_INDEX=2");
  EXPECT_EQ(journal_of(k8s).all.ops, j.all.ops);
  const result bad = run_env("JOB_COMPLETION_INDEX=2", "fuzz --shard auto --out " + dir + "x");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("but not --shard-count"), std::string::npos) << bad.out;
  EXPECT_FALSE(fs::exists(dir + "x"));  // nothing written for a refused command
}

// ---- gfsl fuzz merge ----

TEST(Merge, FailuresAreGroupedBySignatureWithOneArtifactEach) {
  std::vector<std::string> dirs;
  std::string args;
  for (int shard = 0; shard < 3; ++shard) {
    dirs.push_back(temp_dir("merge_" + std::to_string(shard)));
    // Bounded by runs (each shard finds the mutant within 6 runs at seed 1, measured); --seconds is a hang guard.
    const result r = run("fuzz --mutant insert-without-duplicate-check --seed 1 --max-runs 12 --seconds 3600 --progress off --shard " +
                         std::to_string(shard) +
                         "/3 --out " + dirs.back());
    ASSERT_EQ(r.code, 1) << r.out;
    args += " " + dirs.back();
  }
  const std::string clean = temp_dir("merge_clean");
  ASSERT_EQ(run("fuzz --max-runs 25 --max-ops 50 --progress off --out " + clean).code, 0);
  const std::string json = temp_dir("merged.json"), junit = temp_dir("merged.xml");
  const result m = run("fuzz merge" + args + " " + clean + " --json " + json + " --junit " + junit);
  EXPECT_EQ(m.code, 1) << m.out;
  const auto mm = merged({dirs[0], dirs[1], dirs[2], clean});
  EXPECT_EQ(mm.shards.size(), 4u);
  EXPECT_EQ(mm.failure_count(), 3u);
  std::size_t artifacts = 0;
  for (const auto& g : mm.failures) {
    artifacts += 1;
    EXPECT_TRUE(fs::exists(fs::path(g.failures.front().dir) / "history.jsonl")) << g.signature;
    EXPECT_NE(m.out.find(g.signature + " x" + std::to_string(g.failures.size())), std::string::npos) << m.out;
  }
  EXPECT_EQ(artifacts, mm.failures.size());
  EXPECT_LE(mm.failures.size(), 3u);
  const std::string x = slurp(junit);
  EXPECT_NE(x.find("<testsuites name=\"gfsl-fuzz\" tests=\"" + std::to_string(4 + mm.failures.size()) + "\" failures=\"" +
                   std::to_string(3 + mm.failures.size()) + "\""),
            std::string::npos)
      << x;
  const std::string j = slurp(json);
  EXPECT_NE(j.find("\"campaigns\":4,\"runs\":" + std::to_string(mm.totals.runs)), std::string::npos) << j;
  EXPECT_NE(j.find("\"failures\":3,\"signatures\":[{\"signature\":"), std::string::npos) << j;
  const result without_failures = run("fuzz merge " + clean);
  EXPECT_EQ(without_failures.code, 0) << without_failures.out;
}

// ---- the hostile-input audit: a resume never forgets a run ----

// The runs an unfinished batch journalled stay counted across a resume: the
// resume line says how many it keeps, and the resumed process journals only
// the runs after them.
TEST(ResumeKeepsRuns, TheKeptRunsOfAnUnfinishedBatchStayCounted) {
  const std::string dir = temp_dir("journal_kept");
  fs::create_directories(dir);
  write(dir + "/journal.jsonl", header + run_line(0, 0, 10) + run_line(0, 1, 20) + gfsl::fuzz::resume_line(0, 2) + "\n" +
                                    run_line(0, 2, 30) + gfsl::fuzz::batch_line(0, 3, 1) + "\n");
  const auto j = journal_of(dir);
  EXPECT_EQ(j.all.runs, 3u);
  EXPECT_EQ(j.all.ops, 60u);
  EXPECT_EQ(j.complete.runs, 3u);
  EXPECT_EQ(j.batches_done, 1u);
  write(dir + "/journal.jsonl", header + run_line(0, 0, 10) + run_line(0, 1, 20) + gfsl::fuzz::resume_line(0, 2) + "\n");
  const auto open = journal_of(dir);
  EXPECT_EQ(open.all.runs, 2u);
  EXPECT_EQ(open.open.runs, 2u);
  EXPECT_EQ(open.complete.runs, 0u);
  write(dir + "/journal.jsonl", header + run_line(0, 0, 10) + gfsl::fuzz::resume_line(0, 5) + "\n");
  gfsl::fuzz::journal_summary bad;
  EXPECT_NE(gfsl::fuzz::read_journal(dir + "/journal.jsonl", bad).find("line 3: resume keeps 5 runs of batch 0, the journal holds 1"),
            std::string::npos);
}

// A file that is no journal is refused at its first line, however long it
// is: /dev/zero (it never ended), and a first line past the line cap.
TEST(ResumeKeepsRuns, AJournalThatIsNoJournalIsRefusedAtItsFirstLine) {
  const std::string dir = temp_dir("journal_zero");
  fs::create_directories(dir);
  fs::create_symlink("/dev/zero", dir + "/journal.jsonl");
  const result zero = run("fuzz merge " + dir);
  EXPECT_EQ(zero.code, 2) << zero.out;
  EXPECT_NE(zero.out.find("journal.jsonl: line 1, byte 1: expected '{'"), std::string::npos) << zero.out;
  EXPECT_EQ(std::count(zero.out.begin(), zero.out.end(), '\n'), 1) << zero.out;
  const result resume = run("fuzz --resume " + dir + " --progress off");
  EXPECT_EQ(resume.code, 2) << resume.out;
  fs::remove(dir + "/journal.jsonl");
  write(dir + "/journal.jsonl", "{\"type\":\"campaign\",\"x\":\"" + std::string(gfsl::fuzz::max_journal_line + 10, 'a'));
  const result longer = run("fuzz merge " + dir);
  EXPECT_EQ(longer.code, 2) << longer.out;
  EXPECT_NE(longer.out.find("line 1 is longer than 1048576 bytes (not a journal line)"), std::string::npos) << longer.out;
}

// A campaign budgeted in runs (fixed seed, one process or --jobs 2, with or
// without --keep-going), killed (SIGKILL or SIGINT) after several numbers of
// journal lines: the merged run count never goes down, neither when the
// resumed campaign is stopped again at once nor when its time budget was
// spent already, and a resume that may run to its budget ends with exactly
// the runs of the campaign never stopped.
TEST(ResumeKeepsRuns, ARunCountNeverGoesDownAndEndsAsTheUninterruptedOne) {
  struct shape {
    std::string name;
    std::vector<std::string> extra;
    bool jobs2;
  };
  for (const shape& sh : {shape{"one", {}, false}, shape{"keep", {"--keep-going"}, false}, shape{"jobs", {"--jobs", "2"}, true}}) {
    auto campaign = [&](const std::string& out) {
      std::vector<std::string> a{"fuzz", "--backend", "host", "--seed", "5", "--max-runs", "120", "--max-ops", "300",
                                 "--seconds", "600", "--progress", "off", "--out", out};
      a.insert(a.end(), sh.extra.begin(), sh.extra.end());
      return a;
    };
    const std::string ref = temp_dir("kept_ref_" + sh.name);
    ASSERT_EQ(wait_exit(start(campaign(ref), ref + ".log")), 0) << slurp(ref + ".log");
    const std::uint64_t whole = merged({ref}).totals.runs;
    ASSERT_GE(whole, 120u);
    // Journal lines of the campaign's own journal (one process), or of
    // worker 0's (--jobs 2): a few runs in, mid-batch, later batches.
    for (std::size_t lines : {std::size_t{4}, std::size_t{40}}) {
      for (int sig : {SIGKILL, SIGINT}) {
        SCOPED_TRACE(sh.name + ": signal " + std::to_string(sig) + " after " + std::to_string(lines) + " journal lines");
        const std::string dir = temp_dir("kept_" + sh.name + "_" + std::to_string(lines) + "_" + std::to_string(sig));
        const std::string watched = sh.jobs2 ? dir + "/worker-0" : dir;
        const pid_t pid = start(campaign(dir), dir + ".log", {}, true);
        EXPECT_TRUE(wait_for_event(pid, [&] { return journal_lines(watched) >= lines; })) << "no journal line " << lines;
        kill(-pid, sig);  // the whole group: a parent and its workers
        const int code = wait_exit(pid);
        if (code == 0) continue;  // finished before the signal: nothing to resume
        const std::uint64_t left = merged({dir}).totals.runs;
        // Resumed and stopped again at once (SIGKILL when the resume line
        // is written): nothing may be lost.
        if (!sh.jobs2) {
          const std::size_t at = journal_lines(dir);
          const pid_t again = start({"fuzz", "--resume", dir, "--progress", "off"}, dir + ".again.log", {}, true);
          EXPECT_TRUE(wait_for_event(again, [&] { return journal_lines(dir) > at; }));
          kill(-again, SIGKILL);
          wait_exit(again);
          EXPECT_GE(merged({dir}).totals.runs, left);
        }
        // Its time budget spent already (the campaign line says 1 ms): the
        // runs it had are all it keeps, none lost.
        const std::string spent = dir + "_spent";
        fs::remove_all(spent);
        fs::copy(dir, spent, fs::copy_options::recursive);
        for (const std::string& j : {spent + "/journal.jsonl", spent + "/worker-0/journal.jsonl", spent + "/worker-1/journal.jsonl"}) {
          if (!fs::exists(j)) continue;
          const std::string text = slurp(j);
          const std::size_t first_end = text.find('\n');
          ASSERT_NE(first_end, std::string::npos) << j;
          const std::string first = std::regex_replace(text.substr(0, first_end), std::regex("\"seconds\":[0-9.e+]+"),
                                                       "\"seconds\":0.001");
          ASSERT_NE(first, text.substr(0, first_end)) << j;
          write(j, first + text.substr(first_end));
        }
        const result r_spent = run("fuzz --resume " + spent + " --progress off");
        EXPECT_NE(r_spent.code, 2) << r_spent.out;
        EXPECT_GE(merged({spent}).totals.runs, left) << r_spent.out;
        // Left to run to its budget, it is the campaign never stopped.
        const result r = run("fuzz --resume " + dir + " --progress off");
        EXPECT_EQ(r.code, 0) << r.out;
        EXPECT_EQ(merged({dir}).totals.runs, whole) << r.out;
      }
    }
  }
}

// ---- the hostile-input audit: a resumed journal's campaign line is held
// to the command line's rules, and what it says is printed escaped ----
TEST(ResumedHeader, EachFieldIsValidatedLikeTheCommandLineInOneLine) {
  const std::string dir = temp_dir("resumed_header");
  struct bad_case {
    std::string from, to, expected;
  };
  for (const bad_case& c : std::vector<bad_case>{
           {"\"backend\":\"host\"", "\"backend\":\"bogus\"", "line 1: field \"backend\" is \"bogus\" (host, threads, cuda)"},
           {"\"granularity\":\"any\"", "\"granularity\":\"bogus\"", "line 1: field \"granularity\" is \"bogus\" (any, chunk, line, lane)"},
           {"\"variant\":\"robust\"", "\"variant\":\"\\u001b[2Jx\"", "line 1: field \"variant\" is \"\\x1b[2Jx\" (thesis, robust)"},
           {"\"mutant\":\"none\"", "\"mutant\":\"nope\"", "line 1: field \"mutant\" is \"nope\""},
           {"\"max_teams\":8", "\"max_teams\":1", "line 1: field \"max_teams\" is \"1\" (2 to 1048576)"},
           {"\"max_range\":100", "\"max_range\":0", "line 1: field \"max_range\" is \"0\""},
           {"\"seconds\":5.0", "\"seconds\":0", "line 1: field \"seconds\" is \"0\" (a positive number)"},
       }) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::string h = header;
    const std::size_t at = h.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    h.replace(at, c.from.size(), c.to);
    write(dir + "/journal.jsonl", h);
    const result r = run("fuzz --resume " + dir + " --progress off");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(c.expected), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
    EXPECT_EQ(journal_lines(dir), 1u) << "the journal is left as it was";
  }
}

// A campaign line's member of another kind than its writer gives it was
// taken as 0 or false ("seed":-1, "seed":1.5, "keep_going":"yes"), and a
// max_ops past what a run holds was taken too: each is refused in one line
// naming the field and its value, exit 2, the journal untouched.
TEST(ResumedHeader, AFieldOfTheWrongKindOrPastARunsLimitIsRefusedInOneLine) {
  const std::string dir = temp_dir("resumed_kinds");
  const std::string line = header.substr(0, header.size() - 2) + ",\"keep_going\":false}\n";
  struct bad_case {
    std::string from, to, expected;
  };
  for (const bad_case& c : std::vector<bad_case>{
           {"\"seed\":7", "\"seed\":-1", "line 1: field \"seed\" is -1 (expected a whole number from 0 to 2^64-1)"},
           {"\"seed\":7", "\"seed\":1.5", "line 1: field \"seed\" is 1.5 (expected a whole number from 0 to 2^64-1)"},
           {"\"keep_going\":false", "\"keep_going\":\"yes\"", "line 1: field \"keep_going\" is \"yes\" (expected true or false)"},
           {"\"max_runs\":0", "\"max_runs\":null", "line 1: field \"max_runs\" is null"},
           {"\"backend\":\"host\"", "\"backend\":1", "line 1: field \"backend\" is 1 (expected a string)"},
           {"\"seconds\":5.0", "\"seconds\":\"5\"", "line 1: field \"seconds\" is \"5\" (expected a number)"},
           {"\"max_ops\":100", "\"max_ops\":4294967296", "line 1: field \"max_ops\" is \"4294967296\" (4 to 100000 for backend host)"},
           {"\"max_ops\":100", "\"max_ops\":0", "line 1: field \"max_ops\" is \"0\" (4 to 100000 for backend host)"},
       }) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::string h = line;
    const std::size_t at = h.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    h.replace(at, c.from.size(), c.to);
    write(dir + "/journal.jsonl", h);
    const result r = run("fuzz --resume " + dir + " --progress off");
    EXPECT_EQ(r.code, 2) << c.to << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expected), std::string::npos) << c.to << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << c.to << "\n" << r.out;
    EXPECT_EQ(slurp(dir + "/journal.jsonl"), h) << "the journal is left as it was";
  }
}

// A cuda campaign where no CUDA device is usable: resumed from its journal,
// it ran every run as a run error and reported a failure of the structure
// (FAILURE [run-error], exit 1, a failure folder). It is refused in one line,
// exit 2, by the check that refuses the same campaign on the command line,
// in a build without the CUDA backend and in one with it (CUDA sees no
// device through an empty CUDA_VISIBLE_DEVICES).
TEST(ResumedHeader, ACudaJournalWithoutAUsableDeviceIsRefusedLikeTheCommandLine) {
  const std::string dir = temp_dir("resumed_cuda");
  const result host = run("fuzz --backend host --seed 1 --max-runs 10 --max-ops 50 --progress off --out " + dir);
  ASSERT_EQ(host.code, 0) << host.out;
  std::string text = slurp(dir + "/journal.jsonl");
  const std::size_t at = text.find("\"backend\":\"host\"");
  ASSERT_LT(at, text.find('\n'));
  text.replace(at, 16, "\"backend\":\"cuda\"");
  // An unfinished campaign: its end line goes, so that --resume would run.
  text.erase(text.rfind("{\"type\":\"end\""));
  write(dir + "/journal.jsonl", text);
  const std::string report = slurp(dir + "/report.json");
  const result r = run_env("CUDA_VISIBLE_DEVICES=", "fuzz --resume " + dir + " --progress off");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("line 1: field \"backend\" is \"cuda\": no CUDA device"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAILURE"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(dir + "/journal.jsonl"), text) << "the journal is left as it was";
  EXPECT_EQ(slurp(dir + "/report.json"), report);
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_NE(e.path().filename().string().rfind("failure-", 0), 0u) << e.path();
  // The same reason as the command line's refusal of the same campaign.
  const std::string fresh = temp_dir("resumed_cuda_fresh");
  const result given = run_env("CUDA_VISIBLE_DEVICES=", "fuzz --backend cuda --seed 1 --max-runs 10 --max-ops 50 --progress off --out " + fresh);
  EXPECT_EQ(given.code, 2) << given.out;
  EXPECT_EQ(std::count(given.out.begin(), given.out.end(), '\n'), 1) << given.out;
  const std::string reason = r.out.substr(r.out.find("no CUDA device"));
  EXPECT_NE(given.out.find("--backend cuda: " + reason), std::string::npos) << given.out << r.out;
  EXPECT_FALSE(fs::exists(fresh + "/journal.jsonl"));
}

// Strings from the input reach the terminal escaped: a folder name given to
// merge and --resume, a replay line's fields.
TEST(ResumedHeader, FolderNamesAndReplayFieldsArePrintedEscaped) {
  const std::string odd = testing::TempDir() + "gfsl_scale_" + std::to_string(::getpid()) + "_no\x1b[2Jwhere";
  for (const std::string& args : {"fuzz merge '" + odd + "'", "fuzz --resume '" + odd + "' --progress off",
                                  std::string("replay 'gfsl1:backend=\x1b[2J'"), std::string("replay '\x1b[2J'"),
                                  std::string("stress --replay 'gfsl-stress1:\x1b[2J'")}) {
    const result r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << args << "\n" << r.out;
    if (args.rfind("fuzz", 0) == 0) EXPECT_NE(r.out.find("\\x1b[2J"), std::string::npos) << args << "\n" << r.out;
  }
}


// ---- a campaign's signals and kills ----

// The lines of DIR's journal that end in a newline (a torn last one is not).
std::vector<std::string> whole_lines_of(const std::string& dir) {
  const std::string text = slurp(dir + "/journal.jsonl");
  std::vector<std::string> out;
  for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) out.push_back(text.substr(at, nl - at));
  return out;
}

// SIGINT ends a campaign after the run under way: exit 3, the journal whole
// and read back, and nothing begun after the signal. The campaign is frozen
// (SIGSTOP) while its journal is read, so that what it held when the signal
// came is known exactly; the 30 s bound is a hang guard, not the promise.
TEST(CampaignSignals, SigintEndsACampaignAfterTheRunUnderWay) {
  const std::string dir = temp_dir("sigint_prompt");
  const pid_t pid = start({"fuzz", "--backend", "host", "--seed", "1", "--seconds", "3600", "--progress", "off", "--out", dir}, dir + ".log");
  // Well under way: a batch complete, the signal handler long in place.
  ASSERT_TRUE(wait_for_event(pid, [&] { return slurp(dir + "/journal.jsonl").find("{\"type\":\"batch\"") != std::string::npos; }));
  ASSERT_EQ(kill(pid, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, WUNTRACED), pid);
  ASSERT_TRUE(WIFSTOPPED(status)) << "the campaign ended before the signal: " << slurp(dir + ".log");
  const std::vector<std::string> before = whole_lines_of(dir);
  kill(pid, SIGINT);
  kill(pid, SIGCONT);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  pid_t ended = 0;
  while ((ended = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (ended != pid) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "the campaign ran on for 30 s after SIGINT: " << slurp(dir + ".log");
  }
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 3) << slurp(dir + ".log");
  const std::vector<std::string> after = whole_lines_of(dir);
  ASSERT_GT(after.size(), before.size());
  EXPECT_TRUE(std::equal(before.begin(), before.end(), after.begin())) << "the journal was rewritten";
  // After the signal: the run that was under way (and its batch's line, had
  // it been the batch's last), then the end line. No other run began.
  std::size_t runs = 0, batches = 0;
  for (std::size_t i = before.size(); i + 1 < after.size(); ++i) {
    if (after[i].rfind("{\"type\":\"run\",", 0) == 0) ++runs;
    else if (after[i].rfind("{\"type\":\"batch\",", 0) == 0) ++batches;
    else ADD_FAILURE() << "journalled after the signal: " << after[i];
  }
  EXPECT_LE(runs, 1u);
  EXPECT_LE(batches, 1u);
  EXPECT_EQ(after.back().rfind("{\"type\":\"end\",\"reason\":\"interrupted\"", 0), 0u) << after.back();
  const auto j = journal_of(dir);
  EXPECT_EQ(j.end_reason, "interrupted");
  EXPECT_EQ(j.all.runs, static_cast<std::uint64_t>(std::count_if(after.begin(), after.end(), [](const std::string& l) {
              return l.rfind("{\"type\":\"run\",", 0) == 0;
            })));
  EXPECT_NE(slurp(dir + ".log").find("interrupted: " + std::to_string(j.all.runs) + " runs recorded"), std::string::npos)
      << slurp(dir + ".log");
}

// --keep-going journals each failure as soon as its folder is in place (it
// journalled them after the search and the shrinking, so a SIGKILL lost
// every one from the journal), and merge and --resume count each once.
TEST(CampaignSignals, AKeepGoingCampaignJournalsEachFailureWhenFound) {
  const std::string dir = temp_dir("keep_going_kill");
  // Bounded by runs (--seconds is a hang guard); the search goes on well
  // after its first failure, and each signature is shrunk after it.
  const pid_t pid = start({"fuzz", "--backend", "host", "--mutant", "insert-without-duplicate-check", "--keep-going", "--seed", "1",
                           "--seconds", "3600", "--max-runs", "300", "--shrink-seconds", "2", "--progress", "off", "--out", dir},
                          dir + ".log");
  ASSERT_TRUE(wait_for_event(pid, [&] { return slurp(dir + "/journal.jsonl").find("{\"type\":\"failure\"") != std::string::npos; }));
  kill(pid, SIGKILL);
  ASSERT_EQ(wait_exit(pid), -SIGKILL) << "the campaign ended before the kill: " << slurp(dir + ".log");
  const auto folders = [&] {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().rfind("failure-", 0) == 0;
    return n;
  };
  const auto killed = journal_of(dir);
  ASSERT_FALSE(killed.failures.empty());
  for (const auto& f : killed.failures) EXPECT_TRUE(fs::exists(fs::path(f.dir) / "report.txt")) << f.dir;
  // A folder put in place just before the kill may lack its line: merge
  // counts it from the folder, once.
  EXPECT_GE(folders(), killed.failures.size());
  const std::string count = std::to_string(folders());
  const result m = run("fuzz merge " + dir);
  EXPECT_EQ(m.code, 1) << m.out;
  EXPECT_NE(m.out.find("failures: " + count + " in " + count + " signature(s)"), std::string::npos) << m.out;
  const result r = run("fuzz --resume " + dir + " --progress off");
  EXPECT_EQ(r.code, 1) << r.out;
  const auto done = journal_of(dir);
  EXPECT_EQ(done.end_reason, "failure");
  std::size_t lines = 0;
  for (const std::string& l : whole_lines_of(dir)) lines += l.rfind("{\"type\":\"failure\",", 0) == 0;
  EXPECT_GT(lines, done.failures.size()) << "each signature journalled as found and again shrunk";
  const std::string total = std::to_string(done.failures.size());
  EXPECT_EQ(folders(), done.failures.size());
  const result again = run("fuzz merge " + dir);
  EXPECT_EQ(again.code, 1) << again.out;
  EXPECT_NE(again.out.find("failures: " + total + " in " + total + " signature(s)"), std::string::npos) << again.out;
  EXPECT_EQ(again.out.find("does not list"), std::string::npos) << again.out;
}

// A --keep-going campaign interrupted after a failure has not spent its
// budget: it was journalled as ended by "failure", and --resume said
// "nothing to resume" (51 of 60 s never searched). Its end is "interrupted",
// its failures still counted (exit 1), and --resume goes on: it journals
// batches past those of the interrupted campaign. Budgeted in runs; each
// signal is sent on a journal line, never after a delay.
TEST(CampaignSignals, AKeepGoingCampaignInterruptedAfterAFailureIsResumed) {
  const std::string dir = temp_dir("keep_going_sigint");
  const pid_t pid = start({"fuzz", "--backend", "host", "--variant", "thesis", "--mutant", "insert-left-to-right", "--keep-going", "--seed",
                           "1", "--seconds", "3600", "--max-runs", "1000000", "--shrink-seconds", "1", "--progress", "off", "--out", dir},
                          dir + ".log");
  ASSERT_TRUE(wait_for_event(pid, [&] { return slurp(dir + "/journal.jsonl").find("{\"type\":\"failure\"") != std::string::npos; }));
  kill(pid, SIGINT);
  ASSERT_EQ(wait_exit(pid), 1) << slurp(dir + ".log");
  const auto stopped = journal_of(dir);
  EXPECT_EQ(stopped.end_reason, "interrupted");
  ASSERT_FALSE(stopped.failures.empty());
  EXPECT_NE(slurp(dir + ".log").find("gfsl fuzz --resume " + dir + " continues"), std::string::npos) << slurp(dir + ".log");
  const result m = run("fuzz merge " + dir);
  EXPECT_EQ(m.code, 1) << m.out;
  // Resumed, it searches on: stopped again once it has completed a batch
  // the interrupted campaign had not.
  const std::string again_log = dir + ".again.log";
  const pid_t again = start({"fuzz", "--resume", dir, "--progress", "off"}, again_log);
  ASSERT_TRUE(wait_for_event(again, [&] {
    gfsl::fuzz::journal_summary j;
    return gfsl::fuzz::read_journal(dir + "/journal.jsonl", j).empty() && j.batches_done > stopped.batches_done;
  }));
  kill(again, SIGINT);
  EXPECT_EQ(wait_exit(again), 1) << slurp(again_log);
  EXPECT_EQ(slurp(again_log).find("nothing to resume"), std::string::npos) << slurp(again_log);
  const auto resumed = journal_of(dir);
  EXPECT_GT(resumed.batches_done, stopped.batches_done) << slurp(again_log);
  EXPECT_GE(resumed.all.runs, stopped.all.runs);
  EXPECT_GE(resumed.failures.size(), stopped.failures.size());
}

// A resumed --keep-going campaign that does not find its earlier failures
// again (its budget was spent) still has them: it ended "budget", exit 0,
// "no failure", though its journal held them. They are printed, counted
// (exit 1) and in report.json; the end is "failure".
TEST(CampaignSignals, AResumedCampaignCountsTheFailuresJournalledBeforeIt) {
  const std::string dir = temp_dir("keep_going_earlier");
  const result first = run("fuzz --backend host --variant thesis --mutant insert-left-to-right --keep-going --seed 1 --seconds 3600 "
                           "--max-runs 30 --shrink-seconds 1 --progress off --out " + dir);
  ASSERT_EQ(first.code, 1) << first.out;
  std::string text = slurp(dir + "/journal.jsonl");
  const auto finished = journal_of(dir);
  ASSERT_FALSE(finished.failures.empty());
  // As if killed before its end line, its time budget spent already: the
  // resumed campaign makes no run.
  text.erase(text.rfind("{\"type\":\"end\""));
  const std::size_t first_end = text.find('\n');
  const std::string spent = std::regex_replace(text.substr(0, first_end), std::regex("\"seconds\":[0-9.e+]+"), "\"seconds\":0.001");
  ASSERT_NE(spent, text.substr(0, first_end));
  write(dir + "/journal.jsonl", spent + text.substr(first_end));
  const result r = run("fuzz --resume " + dir + " --progress off");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.find("no failure"), std::string::npos) << r.out;
  for (const auto& f : finished.failures) {
    EXPECT_NE(r.out.find("FAILURE [" + f.signature + "]"), std::string::npos) << f.signature << "\n" << r.out;
    EXPECT_NE(slurp(dir + "/report.json").find("\"signature\":\"" + f.signature + "\""), std::string::npos) << f.signature;
  }
  const auto done = journal_of(dir);
  EXPECT_EQ(done.end_reason, "failure");
  EXPECT_EQ(done.failures.size(), finished.failures.size());
}

// stress --devices: SIGINT to the parent ends every worker's run with its
// report (exit 3 each), and the parent exits 3 (it exited 4: an interrupted
// worker was counted as a run error). The host backend stands in for the
// GPU; the signal waits until both workers handle SIGINT and SIGTERM.
TEST(Workers, StressOnDevicesEndsOnSigintWithExitThree) {
  const std::string log = temp_dir("stress_devices_sigint.log");
  const pid_t pid = start({"stress", "--backend", "host", "--devices", "0,1", "--ops-per-team", "200", "--seconds", "100000"}, log,
                          {"GFSL_DEVICE_COUNT=2"});
  const auto handling = [](pid_t k) {
    const std::string status = slurp("/proc/" + std::to_string(k) + "/status");
    const std::size_t at = status.find("SigCgt:\t");
    if (at == std::string::npos) return false;
    const unsigned long long mask = std::stoull(status.substr(at + 8, 16), nullptr, 16);
    return ((mask >> (SIGINT - 1)) & 1) && ((mask >> (SIGTERM - 1)) & 1);
  };
  ASSERT_TRUE(wait_for_event(pid, [&] {
    const std::vector<pid_t> kids = children_of(pid);
    return kids.size() == 2 && std::all_of(kids.begin(), kids.end(), handling);
  }));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit(pid), 3) << slurp(log);
  EXPECT_NE(slurp(log).find("gfsl stress: interrupted by a signal"), std::string::npos) << slurp(log);
}

}  // namespace
