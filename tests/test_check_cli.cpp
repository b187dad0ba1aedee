// gfsl check and gfsl convert as users meet them: exit codes 0 (linearizable),
// 1 (not), 2 (bad input or usage), 3 (undecided), the reports, and
// conversions that lose nothing.
#include <gtest/gtest.h>

#include "tests/gfsl_binary.hpp"
#include "tests/files.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "linearizability/synthetic.hpp"
#include "traces/trace.hpp"

namespace {

using gfsl::testing_cli::result;
using gfsl::testing_cli::run;

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "gfsl_check_cli_" + std::to_string(::getpid()) + "_" + name;
}

using gfsl::testing_files::slurp;

using gfsl::testing_files::spit;

std::vector<gfsl::model::op_record> synthetic(std::uint64_t ops) {
  gfsl::lin::synthetic_options o;
  o.ops = ops;
  o.keys = 50;
  o.teams = 16;
  o.insert_pct = 25;
  o.delete_pct = 25;
  o.pending = 2;
  return gfsl::lin::synthetic_history(o);
}

gfsl::traces::trace_header header() {
  gfsl::model::workload w;
  w.ops = 5000;
  w.range = 50;
  w.teams = 16;
  return gfsl::traces::make_header(w, "synthetic", "", gfsl::model::clock_kind::global_counter, "lin synthetic");
}

TEST(CheckCli, ALinearizableHistoryExitsZeroInBothForms) {
  const std::string bin = temp_path("ok.trace"), json = temp_path("ok.jsonl");
  gfsl::traces::write_trace(bin, header(), synthetic(5000));
  result r = run("check " + bin);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verdict:  linearizable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("binary v" + std::to_string(gfsl::traces::binary_version)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("deletes:  values compared (the trace declares delete_value true"), std::string::npos) << r.out;
  r = run("convert " + bin + " " + json);
  EXPECT_EQ(r.code, 0) << r.out;
  r = run("check " + json + " --threads 1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("JSON lines v1"), std::string::npos) << r.out;
  std::remove(bin.c_str());
  std::remove(json.c_str());
}

TEST(CheckCli, AViolationExitsOneWithTheKeyATimelineAndReports) {
  auto h = synthetic(5000);
  // A contains that found nothing now finds a value nobody inserted.
  std::size_t planted = h.size() / 2;
  while (h[planted].op.kind != gfsl::op_kind::contains || h[planted].pending() || h[planted].ok) ++planted;
  h[planted].ok = true;
  h[planted].value = 4242u;
  const std::string bin = temp_path("bad.trace"), html = temp_path("bad.html");
  gfsl::traces::write_trace(bin, header(), h);

  result r = run("check --all-keys " + bin + " --html " + html);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("NOT LINEARIZABLE: 1 of 50 keys"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("key " + std::to_string(h[planted].op.key) + ":"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("team "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1"), std::string::npos) << r.out;  // intervals drawn
  EXPECT_NE(r.out.find("(record " + std::to_string(planted) + ")"), std::string::npos) << r.out;
  const std::string page = slurp(html);
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("<script>"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);  // nothing fetched
  EXPECT_EQ(page.find("https://"), std::string::npos);

  r = run("check --json - " + bin);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.rfind("{\"file\":", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\"verdict\":\"not linearizable\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"record\":" + std::to_string(planted)), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1);  // one line
  std::remove(bin.c_str());
  std::remove(html.c_str());
}

TEST(CheckCli, BadInputAndUsageExitTwoWithOneLine) {
  const std::string bin = temp_path("cut.trace");
  gfsl::traces::write_trace(bin, header(), synthetic(200));
  const std::string bytes = slurp(bin);
  spit(bin, bytes.substr(0, bytes.size() - 100));
  // A cut trace is no whole input: convert refuses it in one line; check
  // reads what is complete and calls it cut (exit 3, traces/FORMAT.md).
  result r = run("convert " + bin + " " + bin + ".jsonl");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
  EXPECT_NE(r.out.find(bin + ": byte "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expected"), std::string::npos) << r.out;
  r = run("check " + bin);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("\ncut:      the trace is cut: " + bin + ": byte "), std::string::npos) << r.out;

  const std::string json = temp_path("bad.jsonl");
  spit(json, "{\"team\":1,\"op\":\"insert\",\"key\":1,\"value\":1,\"ok\":true,\"call\":9,\"ret\":3}\n");
  r = run("check " + json);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(json + ": byte 0 (line 1): expected a return stamp not before the call stamp 9"), std::string::npos) << r.out;

  for (const char* args : {"check", "check /nonexistent/trace", "check a b", "check x --seconds -1", "convert only-one"}) {
    r = run(args);
    EXPECT_EQ(r.code, 2) << args << ":\n" << r.out;
    EXPECT_FALSE(r.out.empty());
  }
  std::remove(bin.c_str());
  std::remove(json.c_str());
}

// Every delete succeeding with its value unrecorded, one more delete than
// inserts, all at once but for two reads that take the common point away
// (with it, counting decides at once): only trying the orders shows that
// none works.
std::string hard_trace() {
  std::string text = "{\"format\":\"gfsl-history\",\"version\":1,\"backend\":\"hand-made\"}\n";
  const int n = 26;
  for (int i = 0; i < n; ++i) {
    text += "{\"team\":" + std::to_string(i) + ",\"op\":\"insert\",\"key\":5,\"value\":" + std::to_string(i + 1) +
            ",\"ok\":true,\"call\":0,\"ret\":1000}\n";
  }
  for (int i = 0; i <= n; ++i) {
    text += "{\"team\":" + std::to_string(n + i) + ",\"op\":\"delete\",\"key\":5,\"ok\":true,\"call\":0,\"ret\":1000}\n";
  }
  text += "{\"team\":60,\"op\":\"contains\",\"key\":5,\"ok\":false,\"call\":0,\"ret\":1}\n";
  text += "{\"team\":61,\"op\":\"contains\",\"key\":5,\"ok\":false,\"call\":999,\"ret\":2000}\n";
  return text;
}

// Issue 44's first family, small: a hard hot key (errors, 64 in flight) and
// a one-operation key no order explains. With the default options the
// violation is reported, exit 1, whichever record comes first and with one
// thread or two; the verdict line comes before the explanation, and
// --explain-seconds 0 says that nothing was shrunk.
TEST(CheckCli, AViolationIsReportedAtOnceWhateverAHardKeyHolds) {
  for (const bool first : {false, true}) {
    gfsl::lin::hard_options o;
    o.ops = 4000, o.in_flight = 64, o.error_pct = 10, o.violating_key = true, o.violating_first = first;
    const gfsl::lin::hard_history h = gfsl::lin::hard_family_history(o);
    const std::string json = temp_path(first ? "family-first.jsonl" : "family-last.jsonl");
    gfsl::traces::write_trace_json(json, header(), h.records, h.unrecorded_values);
    for (const char* threads : {"1", "2"}) {
      result r = run(std::string("check --threads ") + threads + " " + json);
      EXPECT_EQ(r.code, 1) << r.out;
      const std::size_t verdict = r.out.find("verdict:  NOT LINEARIZABLE: ");
      ASSERT_NE(verdict, std::string::npos) << r.out;
      EXPECT_NE(r.out.find("2 (1 operations)", verdict), std::string::npos) << r.out;
      EXPECT_LT(verdict, r.out.find("answer that cannot hold")) << r.out;
    }
    result r = run("check --explain-seconds 0 " + json);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("not explained (--explain-seconds 0: no counterexample is shrunk)"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("cannot hold"), std::string::npos) << r.out;
    r = run("check --all-keys --json - " + json);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("\"violating_keys\":1,\"undecided_keys\":0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"unchecked_keys\":0"), std::string::npos) << r.out;
    std::remove(json.c_str());
  }
}

// A key's own bound: a hard key stopped by it is listed with the reason,
// exit 3; a bound that is not a number is refused.
TEST(CheckCli, AKeyBoundNamesTheKeyAndTheBound) {
  const std::string json = temp_path("hard-key.jsonl");
  spit(json, hard_trace());
  result r = run("check --key-seconds 0.3 " + json);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("undecided: key 5 (55 operations): stopped by its own time limit (--key-seconds)"), std::string::npos) << r.out;
  r = run("check --key-seconds soon " + json);
  EXPECT_EQ(r.code, 2) << r.out;
  std::remove(json.c_str());
}

TEST(CheckCli, ATimeLimitGivesExitThree) {
  const std::string json = temp_path("hard.jsonl");
  spit(json, hard_trace());
  const result r = run("check --seconds 0.3 " + json);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("undecided"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("within the time limit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5 (55 operations)"), std::string::npos) << r.out;
  std::remove(json.c_str());
}

// A memory bound the key cannot be searched within: undecided, exit 3, the
// bound named; a bound that is not a size is refused with exit 2.
TEST(CheckCli, AMemoryBoundGivesExitThree) {
  const std::string json = temp_path("hard-memory.jsonl");
  spit(json, hard_trace());
  // --seconds is a hang guard: the memory bound, not the time limit, must be what ends it.
  const result r = run("check --seconds 600 --max-memory 8k " + json);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("within the memory limit (--max-memory)"), std::string::npos) << r.out;
  const result j = run("check --json - --seconds 600 --max-memory 8k " + json);
  EXPECT_NE(j.out.find("\"memory_bound_keys\":1"), std::string::npos) << j.out;
  const result bad = run("check --max-memory lots " + json);
  EXPECT_EQ(bad.code, 2) << bad.out;
  std::remove(json.c_str());
}

// A third-party recorder that writes "value":0 for deletes (as many do):
// insert(2,3) -> true, then delete(2) -> true, strictly after it. Without a
// declaration the delete's value is not compared and the history is
// linearizable; declared, the value is compared: 3 is right, 0 is a
// violation; declared false, it is not compared again.
TEST(CheckCli, ADeleteValueIsComparedOnlyWhenTheTraceDeclaresIt) {
  const std::string json = temp_path("third-party.jsonl");
  auto history = [](const std::string& metadata, int delete_value) {
    return metadata + "{\"team\":0,\"op\":\"insert\",\"key\":2,\"value\":3,\"ok\":true,\"call\":30,\"ret\":40}\n" +
           "{\"team\":1,\"op\":\"delete\",\"key\":2,\"value\":" + std::to_string(delete_value) +
           ",\"ok\":true,\"call\":65,\"ret\":80}\n";
  };
  const std::string declared = "{\"format\":\"gfsl-history\",\"version\":1,\"delete_value\":true}\n";
  const std::string declared_false = "{\"format\":\"gfsl-history\",\"version\":1,\"delete_value\":false}\n";

  spit(json, history("", 0));
  result r = run("check " + json);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verdict:  linearizable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("deletes:  values not compared (the trace does not declare delete_value"), std::string::npos) << r.out;
  r = run("check --json - " + json);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"delete_values_compared\":false"), std::string::npos) << r.out;

  spit(json, history(declared, 3));
  r = run("check " + json);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("deletes:  values compared"), std::string::npos) << r.out;

  spit(json, history(declared, 0));
  r = run("check " + json);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("NOT LINEARIZABLE: key 2 (2 operations), the first violation found"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("delete(2) -> true, 0"), std::string::npos) << r.out;
  r = run("check --json - " + json);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("\"delete_values_compared\":true"), std::string::npos) << r.out;

  spit(json, history(declared_false, 0));
  r = run("check " + json);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("deletes:  values not compared (the trace declares delete_value false"), std::string::npos) << r.out;
  std::remove(json.c_str());
}

// The progress line: drawn on stderr when it is a terminal (here the pty of
// util-linux's script), erased before the report; never into a pipe or a
// log, and not with --progress off.
TEST(CheckCli, AProgressLineOnlyOnATerminalAndNotWithQuiet) {
  const std::string bin = temp_path("progress.trace");
  gfsl::traces::write_trace(bin, header(), synthetic(5000));
  result r = run("check " + bin);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("gfsl check: reading"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\033[K"), std::string::npos) << r.out;
  if (std::system("script --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no util-linux script to give gfsl a terminal";
  auto on_a_terminal = [&](const std::string& args) {
    const std::string cmd = "script -qec '" + std::string(GFSL_BINARY) + " " + args + "' /dev/null < /dev/null 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    result out{-1, {}};
    if (!p) return out;
    std::array<char, 4096> buf{};
    for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.out.append(buf.data(), n);
    const int status = pclose(p);
    out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
  };
  r = on_a_terminal("check " + bin);
  EXPECT_EQ(r.code, 0) << r.out;
  const std::size_t drawn = r.out.find("\r\033[Kgfsl check: reading " + bin + ": ");
  const std::size_t erased = r.out.rfind("\r\033[K");
  const std::size_t report = r.out.find("verdict:  linearizable");
  EXPECT_NE(drawn, std::string::npos) << r.out;
  EXPECT_NE(report, std::string::npos) << r.out;
  EXPECT_LT(drawn, erased) << r.out;
  EXPECT_LT(erased, report) << r.out;
  // Each phase is drawn as it starts, with the times of those before it.
  const std::size_t grouping = r.out.find("\r\033[Kgfsl check: read ");
  EXPECT_NE(grouping, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" MB in ", grouping), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" records by key (", grouping), std::string::npos) << r.out;
  const std::size_t checking = r.out.find("; checking the invariants of the final structure", grouping);
  EXPECT_NE(checking, std::string::npos) << r.out;
  EXPECT_LT(checking, erased) << r.out;
  r = on_a_terminal("check --progress off " + bin);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verdict:  linearizable"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("gfsl check: reading"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\033[K"), std::string::npos) << r.out;
  std::remove(bin.c_str());
}

TEST(CheckCli, ConvertRoundTripsAndCanBeForced) {
  const std::string a = temp_path("a.trace"), b = temp_path("b.jsonl"), c = temp_path("c.trace"), d = temp_path("d.jsonl");
  gfsl::traces::write_trace(a, header(), synthetic(1000));
  EXPECT_EQ(run("convert " + a + " " + b).code, 0);
  EXPECT_EQ(run("convert " + b + " " + c).code, 0);
  EXPECT_EQ(slurp(a), slurp(c));
  const result r = run("convert --to json " + b + " " + d);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(slurp(b), slurp(d));
  EXPECT_EQ(slurp(b).rfind("{\"format\":\"gfsl-history\",\"version\":1,\"backend\":\"synthetic\"", 0), 0u);
  for (const auto& p : {a, b, c, d}) std::remove(p.c_str());
}

}  // namespace

namespace {

// A SlabHash run's trace names its subject: gfsl check judges its table by
// SlabHash's invariants, --subject refuses it as another subject's, and gfsl
// dot (GFSL's levels) refuses it; the replay line carries the subject too.
TEST(CheckCli, ATraceNamesItsSubjectAndIsJudgedAsIt) {
  const std::string trace = temp_path("slab.trace");
  const result r = run("run --subject slabhash --buckets 2 --teams 4 --ops 400 --range 40 --trace " + trace);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("subject=slabhash:buckets=2"), std::string::npos) << r.out;
  const result same = run("check --subject slabhash " + trace);
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find("the final table"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("unique-keys"), std::string::npos) << same.out;
  const result other = run("check --subject gfsl " + trace);
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.out.find("records subject slabhash, not gfsl"), std::string::npos) << other.out;
  const result dot = run("dot " + trace);
  EXPECT_EQ(dot.code, 2);
  EXPECT_NE(dot.out.find("subject slabhash"), std::string::npos) << dot.out;
  std::remove(trace.c_str());
}

// Finding N2: memory that ran out in a thread deciding keys, or on the main
// thread while helpers were running, ended the check in std::terminate
// (exit 134). Two hot keys of 100,000 operations, none with a common point,
// checked by two threads under address-space limits from below what the
// reading needs to above what the whole check needs: each run ends either
// decided or with one line "out of memory" and exit 2, whatever the limit
// and wherever the allocation that failed (the limits are bytes, so the
// test does not depend on speed).
TEST(CheckCli, MemoryRunningOutWhileThreadsCheckIsOneLineAndExitTwo) {
  std::string text;
  std::uint64_t seed = 5;
  auto next = [&](std::uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  for (unsigned key = 1; key <= 2; ++key) {
    std::uint64_t value = 0, present = 0;  // present: 0 when absent
    for (std::uint64_t i = 0; i < 100000; ++i) {
      const std::uint64_t point = 10 * i + 321, call = point - next(320), ret = point + next(320);
      const std::uint64_t r = next(10);
      std::string op;
      if (r < 4) {
        ++value;
        const bool ok = present == 0;
        if (ok) present = value;
        op = "\"op\":\"insert\",\"value\":" + std::to_string(value) + ",\"ok\":" + (ok ? "true" : "false");
      } else if (r < 7) {
        op = present ? "\"op\":\"delete\",\"value\":" + std::to_string(present) + ",\"ok\":true" : std::string("\"op\":\"delete\",\"ok\":false");
        present = 0;
      } else {
        op = present ? "\"op\":\"contains\",\"value\":" + std::to_string(present) + ",\"ok\":true" : std::string("\"op\":\"contains\",\"ok\":false");
      }
      text += "{\"team\":" + std::to_string(i % 500) + "," + op + ",\"key\":" + std::to_string(key) + ",\"call\":" + std::to_string(call) +
              ",\"ret\":" + std::to_string(ret) + "}\n";
    }
  }
  const std::string p = temp_path("two_hot_keys.jsonl");
  spit(p, text);
  int decided = 0, out_of_memory = 0;
  for (unsigned kb = 30000; kb <= 200000; kb += 10000) {
    const std::string cmd = "/bin/sh -c 'ulimit -v " + std::to_string(kb) + "; exec " + GFSL_BINARY + " check --threads 2 " + p + "' 2>&1";
    FILE* f = popen(cmd.c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string out;
    std::array<char, 4096> buf{};
    while (fgets(buf.data(), buf.size(), f)) out += buf.data();
    const int status = pclose(f);
    ASSERT_TRUE(WIFEXITED(status)) << kb << " KB: " << out;
    const int code = WEXITSTATUS(status);
    if (code == 2) {
      EXPECT_EQ(out, "gfsl check: " + p + ": out of memory\n") << kb << " KB";
      ++out_of_memory;
    } else {
      EXPECT_EQ(code, 0) << kb << " KB: " << out;
      ++decided;
    }
  }
  // The limits reach both sides.
  EXPECT_GT(out_of_memory, 0);
  EXPECT_GT(decided, 0);
}

}  // namespace
