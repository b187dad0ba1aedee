// The range checker (linearizability/range_checker.hpp): histories it must
// accept and must reject, the JSON-lines form of ordered-map traces, and
// agreement with the brute force of range_brute.hpp on random small
// histories (linearizable by construction, and mutated ones), budgeted in
// histories.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "linearizability/range_brute.hpp"
#include "linearizability/range_checker.hpp"
#include "linearizability/range_synthetic.hpp"
#include "traces/trace.hpp"

namespace {

using namespace gfsl;
using namespace gfsl::lin::ranges;
using gfsl::lin::verdict;
using pairs_t = std::vector<std::pair<key_type, value_type>>;
constexpr std::uint64_t never = model::no_stamp;

struct builder {
  range_history h;
  explicit builder(range_model m = range_model::ordered_map) { h.model = m; }
  range_record& add(range_op op, key_type k, std::uint64_t c, std::uint64_t r) {
    range_record x;
    x.op = op;
    x.key = k;
    x.call = c;
    x.ret = r;
    x.team = static_cast<team_id>(h.ops.size());
    h.ops.push_back(x);
    return h.ops.back();
  }
  builder& ins(key_type k, value_type v, bool ok, std::uint64_t c, std::uint64_t r) {
    auto& x = add(range_op::insert, k, c, r);
    x.value = v;
    x.ok = ok;
    return *this;
  }
  builder& ups(key_type k, value_type v, int ok, std::uint64_t c, std::uint64_t r) {  // ok -1: not recorded
    auto& x = add(range_op::upsert, k, c, r);
    x.value = v;
    x.ok = ok == 1;
    x.ok_known = ok >= 0;
    return *this;
  }
  builder& era(key_type k, bool ok, value_type v, std::uint64_t c, std::uint64_t r) {
    auto& x = add(range_op::erase, k, c, r);
    x.ok = ok;
    x.value = v;
    return *this;
  }
  builder& find(key_type k, bool ok, value_type v, std::uint64_t c, std::uint64_t r, std::uint64_t handle = no_handle) {
    auto& x = add(range_op::find, k, c, r);
    x.ok = ok;
    x.value = v;
    x.handle = handle;
    return *this;
  }
  builder& range(key_type lo, std::uint64_t hi, const pairs_t& p, std::uint64_t c, std::uint64_t r, std::uint64_t handle = no_handle) {
    h.add_range(static_cast<team_id>(h.ops.size()), lo, hi, p, c, r, handle);
    return *this;
  }
  builder& snap(std::uint64_t handle, std::uint64_t c, std::uint64_t r) {
    add(range_op::snapshot, 0, c, r).handle = handle;
    return *this;
  }
};

verdict check(const builder& b) { return check_range_history(b.h).v; }

void expect_both(const builder& b, bool linearizable) {
  const range_check_result r = check_range_history(b.h);
  ASSERT_TRUE(r.refusal.empty()) << r.refusal;
  EXPECT_EQ(r.v, linearizable ? verdict::linearizable : verdict::not_linearizable) << range_text_report(b.h, r, "t", "memory");
  EXPECT_EQ(brute_force_range_linearizable(b.h), linearizable);
}

TEST(RangeChecker, AcceptsSequentialAndConcurrentRanges) {
  builder b;
  b.ins(1, 10, true, 0, 1).ins(2, 20, true, 2, 3).range(0, 5, {{1, 10}, {2, 20}}, 4, 5);
  expect_both(b, true);
  // A range concurrent with an insert may see it or not.
  builder c;
  c.ins(1, 10, true, 0, 1).ins(2, 20, true, 4, 8).range(0, 5, {{1, 10}}, 3, 9).range(0, 5, {{1, 10}, {2, 20}}, 5, 9);
  expect_both(c, true);
}

TEST(RangeChecker, RejectsTheSnapshotViolationAcrossKeys) {
  // insert(1) returned before insert(2) began; a range sees 2 but not 1.
  builder b;
  b.ins(1, 10, true, 0, 2).ins(2, 20, true, 3, 5).range(0, 5, {{2, 20}}, 1, 9);
  expect_both(b, false);
  const range_check_result r = check_range_history(b.h);
  const std::string text = range_text_report(b.h, r, "t", "memory");
  EXPECT_NE(text.find("range[0, 5)"), std::string::npos) << text;
  EXPECT_NE(text.find("insert(1, 10)"), std::string::npos) << text;
  EXPECT_NE(text.find("insert(2, 20)"), std::string::npos) << text;
}

TEST(RangeChecker, RejectsARangeMissingACompletedInsert) {
  builder b;
  b.ins(3, 30, true, 0, 1).range(0, 10, {}, 2, 3);
  expect_both(b, false);
}

TEST(RangeChecker, RejectsAValueNeverWritten) {
  builder b;
  b.ins(3, 30, true, 0, 1).range(0, 10, {{3, 31}}, 2, 3);
  expect_both(b, false);
  builder c;
  c.ins(3, 30, true, 0, 1).range(0, 10, {{3, 30}, {4, 40}}, 2, 3);
  expect_both(c, false);
}

TEST(RangeChecker, RejectsTwoRangesSeeingUpdatesInContradictoryOrders) {
  // Two concurrent inserts; the first range (returned before the second
  // began) saw 1 without 2; the second sees 2 without 1.
  builder b;
  b.ins(1, 10, true, 0, 20).ins(2, 20, true, 0, 20).range(0, 5, {{1, 10}}, 1, 5).range(0, 5, {{2, 20}}, 6, 10);
  expect_both(b, false);
  // Concurrent ranges may: each is linearized on its own side.
  builder c;
  c.ins(1, 10, true, 0, 20).ins(2, 20, true, 0, 20).range(0, 5, {{1, 10}}, 1, 10).range(0, 5, {{2, 20}}, 1, 10);
  expect_both(c, false);  // still no: after 1 and before 2, and after 2 and before 1
  builder d;
  d.ins(1, 10, true, 0, 20).ins(2, 20, true, 0, 20).range(0, 5, {{1, 10}}, 1, 10).range(0, 5, {{1, 10}, {2, 20}}, 1, 10);
  expect_both(d, true);
}

TEST(RangeChecker, SnapshotHandles) {
  // Two reads at one handle must agree on one point.
  builder b;
  b.ins(1, 10, true, 0, 2).snap(7, 1, 20).ins(2, 20, true, 3, 30).find(1, true, 10, 25, 26, 7).find(2, true, 20, 27, 28, 7)
      .range(0, 5, {{1, 10}}, 29, 31, 7);
  expect_both(b, false);
  builder c;
  c.ins(1, 10, true, 0, 2).snap(7, 1, 20).ins(2, 20, true, 3, 30).find(1, true, 10, 25, 26, 7).find(2, true, 20, 27, 28, 7)
      .range(0, 5, {{1, 10}, {2, 20}}, 29, 31, 7);
  expect_both(c, true);
  // A snapshot that returned before an insert began never sees it, however late it is read.
  builder d;
  d.snap(1, 0, 1).ins(5, 50, true, 2, 3).range(0, 10, {{5, 50}}, 4, 5, 1);
  expect_both(d, false);
  builder e;
  e.snap(1, 0, 1).ins(5, 50, true, 2, 3).range(0, 10, {}, 4, 5, 1).range(0, 10, {{5, 50}}, 4, 5);
  expect_both(e, true);
}

TEST(RangeChecker, EraseAndInsertAnswers) {
  builder b;  // erase of a value that is not there
  b.ins(1, 10, true, 0, 1).era(1, true, 11, 2, 3);
  EXPECT_EQ(check(b), verdict::not_linearizable);
  builder c;  // insert fails on an absent key
  c.ins(1, 10, false, 0, 1);
  expect_both(c, false);
  builder d;  // insert fails while present; erase then finds nothing
  d.ins(1, 10, true, 0, 1).ins(1, 11, false, 2, 3).era(1, true, 10, 4, 5).era(1, false, 0, 6, 7).find(1, false, 0, 8, 9);
  expect_both(d, true);
  builder e;  // two successful inserts with no erase between
  e.ins(1, 10, true, 0, 1).ins(1, 11, true, 2, 3);
  expect_both(e, false);
  builder f;  // concurrent erase and re-insert: the insert after the erase
  f.ins(1, 10, true, 0, 1).era(1, true, 10, 2, 10).ins(1, 11, true, 3, 9).range(0, 5, {{1, 11}}, 11, 12);
  expect_both(f, true);
}

TEST(RangeChecker, PendingOperations) {
  builder b;  // a pending insert seen by a range took effect
  b.ins(1, 10, true, 0, never).range(0, 5, {{1, 10}}, 5, 6).range(0, 5, {}, 7, 8);
  expect_both(b, false);
  builder c;  // a pending erase explains an absent key
  c.ins(1, 10, true, 0, 1).era(1, false, 0, 2, never).range(0, 5, {}, 5, 6);
  expect_both(c, true);
  builder d;  // an unseen pending insert explains a failed insert
  d.ins(1, 10, true, 0, never).ins(1, 11, false, 5, 6);
  expect_both(d, true);
}

TEST(RangeChecker, UpsertModel) {
  builder b(range_model::ordered_upsert_map);
  b.ups(1, 10, 1, 0, 1).ups(1, 11, 0, 2, 3).range(0, 5, {{1, 11}}, 4, 5);
  expect_both(b, true);
  builder c(range_model::ordered_upsert_map);  // concurrent upserts: reads fix their order
  c.ups(1, 10, -1, 0, 10).ups(1, 11, -1, 0, 10).find(1, true, 10, 11, 12).range(0, 5, {{1, 11}}, 13, 14);
  expect_both(c, false);
  builder d(range_model::ordered_upsert_map);
  d.ups(1, 10, -1, 0, 10).ups(1, 11, -1, 0, 10).find(1, true, 11, 11, 12).range(0, 5, {{1, 11}}, 13, 14);
  expect_both(d, true);
}

TEST(RangeChecker, RefusesWhatItDoesNotDecide) {
  builder b;
  b.ins(1, 10, true, 0, 1).era(1, true, 10, 2, 3).ins(1, 10, true, 4, 5);
  EXPECT_NE(check_range_history(b.h).refusal.find("unique"), std::string::npos);
  builder c;
  c.ins(1, 10, true, 0, 1).era(1, true, 10, 2, 3);
  c.h.ops.back().value_known = false;
  EXPECT_NE(check_range_history(c.h).refusal.find("not recorded"), std::string::npos);
  builder d;
  d.find(1, false, 0, 0, 1, 9);
  EXPECT_NE(check_range_history(d.h).refusal.find("handle"), std::string::npos);
}

std::string temp_path(const char* what) {
  return std::string(::testing::TempDir()) + "/range-" + what + "-" + std::to_string(::getpid()) + ".jsonl";
}

TEST(RangeTraces, RoundTripAndRefusals) {
  range_gen_options o;
  o.ops = 300;
  o.keys = 20;
  o.snapshot_pct = 3;
  o.handle_read_pct = 30;
  o.pending_pct = 3;
  o.model = range_model::ordered_upsert_map;
  o.upsert_pct = 15;
  const range_history h = linearizable_range_history(o);
  const std::string path = temp_path("round");
  write_range_trace(path, h);
  const range_history back = read_range_trace(path, range_model::ordered_upsert_map);
  EXPECT_EQ(range_trace_text(back), range_trace_text(h));
  EXPECT_TRUE(names_range_model(first_line_of(path)));
  EXPECT_EQ(check_range_history(back).v, verdict::linearizable);
  // The other ordered model is refused by the metadata's "model".
  EXPECT_THROW(read_range_trace(path, range_model::ordered_map), traces::trace_error);
  // One line, naming the byte and the line.
  auto refused = [&](const std::string& text) {
    traces::write_file(path, text);
    try {
      read_range_trace(path, range_model::ordered_map);
    } catch (const traces::trace_error& e) {
      const std::string w = e.what();
      EXPECT_EQ(w.find('\n'), std::string::npos);
      return w;
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused("{\"team\":0,\"op\":\"range\",\"lo\":5,\"hi\":9,\"pairs\":[[4,1]],\"call\":0,\"ret\":1}\n").find("(line 1)"),
            std::string::npos);
  EXPECT_NE(refused("{\"team\":0,\"op\":\"range\",\"lo\":5,\"hi\":9,\"pairs\":[[6,1],[6,2]],\"call\":0,\"ret\":1}\n").find("increasing"),
            std::string::npos);
  EXPECT_NE(refused("{\"team\":0,\"op\":\"upsert\",\"key\":5,\"value\":1,\"ok\":true,\"call\":0,\"ret\":1}\n").find("\"op\""),
            std::string::npos);
  EXPECT_NE(refused("{\"team\":0,\"op\":\"range\",\"lo\":5,\"hi\":9,\"call\":0,\"ret\":1}\n").find("pairs"), std::string::npos);
  EXPECT_EQ(refused("{\"team\":0,\"op\":\"range\",\"lo\":5,\"hi\":9,\"pairs\":[],\"call\":0,\"ret\":1}\n"), "accepted");
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------
// Differential: the checker against the brute force.

void mutate(range_history& h, std::mt19937_64& rng) {
  auto below = [&](std::uint64_t n) { return n ? std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng) : 0; };
  if (h.ops.empty()) return;
  range_record& r = h.ops[below(h.ops.size())];
  // Some value written to key k (or a fresh one).
  auto written = [&](key_type k) -> value_type {
    std::vector<value_type> vs;
    for (const auto& x : h.ops) {
      if ((x.op == range_op::insert || x.op == range_op::upsert) && x.key == k) vs.push_back(x.value);
    }
    return vs.empty() || below(5) == 0 ? 9999 : vs[below(vs.size())];
  };
  switch (below(5)) {
    case 0: {  // the interval
      range_record& s = h.ops[below(h.ops.size())];
      std::swap(r.call, s.call);
      std::swap(r.ret, s.ret);
      if (r.ret < r.call) std::swap(r.call, r.ret);
      if (s.ret < s.call && s.ret != never) std::swap(s.call, s.ret);
      if (r.ret != never && r.ret < r.call) r.ret = r.call;
      if (s.ret != never && s.ret < s.call) s.ret = s.call;
      return;
    }
    default: break;
  }
  switch (r.op) {
    case range_op::insert:
    case range_op::upsert:
      if (below(3) == 0 && r.op == range_op::upsert) r.ok_known = !r.ok_known;
      else r.ok = !r.ok;
      break;
    case range_op::erase:
      r.ok = !r.ok;
      r.value = r.ok ? written(r.key) : 0;
      break;
    case range_op::find:
      if (below(2)) {
        r.ok = !r.ok;
        r.value = r.ok ? written(r.key) : 0;
      } else if (r.ok) {
        r.value = written(r.key);
      }
      break;
    case range_op::range: {
      pairs_t p(h.pairs.begin() + r.pairs_from, h.pairs.begin() + r.pairs_from + r.pairs_count);
      const int what = static_cast<int>(below(3));
      if (what == 0 && !p.empty()) {
        p.erase(p.begin() + static_cast<std::ptrdiff_t>(below(p.size())));
      } else if (what == 1 && !p.empty()) {
        p[below(p.size())].second = written(p[0].first);
      } else if (r.hi > r.key) {
        const key_type k = static_cast<key_type>(r.key + below(r.hi - r.key));
        bool have = false;
        for (auto& kv : p) have = have || kv.first == k;
        if (!have) p.emplace_back(k, written(k));
        std::sort(p.begin(), p.end());
      }
      r.pairs_from = static_cast<std::uint32_t>(h.pairs.size());
      r.pairs_count = static_cast<std::uint32_t>(p.size());
      h.pairs.insert(h.pairs.end(), p.begin(), p.end());
      break;
    }
    case range_op::snapshot: break;
  }
}

struct tally {
  std::uint64_t histories = 0, linearizable = 0, violations = 0, unknown = 0, refused = 0, disagreements = 0, searched = 0;
};

void differential(range_model model, std::uint64_t histories, std::uint64_t seed, tally& t) {
  std::mt19937_64 rng(seed);
  for (std::uint64_t i = 0; i < histories; ++i) {
    range_gen_options o;
    o.model = model;
    o.seed = rng();
    o.ops = 3 + static_cast<std::uint32_t>(rng() % 10);
    o.keys = 1 + static_cast<std::uint32_t>(rng() % 4);
    o.teams = 1 + static_cast<std::uint32_t>(rng() % 4);
    o.range_width = 1 + static_cast<std::uint32_t>(rng() % 4);
    o.insert_pct = 30;
    o.erase_pct = 20;
    o.upsert_pct = model == range_model::ordered_upsert_map ? 20 : 0;
    o.range_pct = 15;
    o.snapshot_pct = 5;
    o.handle_read_pct = 40;
    o.max_gap = static_cast<std::uint32_t>(rng() % 6);
    o.max_duration = static_cast<std::uint32_t>(rng() % 40);
    o.pending_pct = rng() % 4 == 0 ? 15 : 0;
    o.error_pct = rng() % 8 == 0 ? 15 : 0;
    range_history h = linearizable_range_history(o);
    const int mutations = static_cast<int>(rng() % 3);  // 0: linearizable by construction
    for (int m = 0; m < mutations; ++m) mutate(h, rng);
    ++t.histories;
    const range_check_result r = check_range_history(h);
    if (!r.refusal.empty()) {
      ++t.refused;  // a mutation made two writes of one value, or similar
      continue;
    }
    if (r.choices) ++t.searched;
    const bool truth = brute_force_range_linearizable(h);
    if (r.v == verdict::unknown) {
      ++t.unknown;
      continue;
    }
    (truth ? t.linearizable : t.violations) += 1;
    const bool said = r.v == verdict::linearizable;
    if (said != truth || (mutations == 0 && !said)) {
      ++t.disagreements;
      if (t.disagreements <= 3) {
        ADD_FAILURE() << "checker " << (said ? "linearizable" : "not linearizable") << ", brute force " << truth << "\n"
                      << range_trace_text(h) << range_text_report(h, r, "t", "memory");
      }
    }
  }
}

void report(const char* name, const tally& t) {
  std::printf("%s: %llu histories: %llu linearizable, %llu not, %llu unknown, %llu refused, %llu searched; %llu disagreements\n", name,
              static_cast<unsigned long long>(t.histories), static_cast<unsigned long long>(t.linearizable),
              static_cast<unsigned long long>(t.violations), static_cast<unsigned long long>(t.unknown),
              static_cast<unsigned long long>(t.refused), static_cast<unsigned long long>(t.searched),
              static_cast<unsigned long long>(t.disagreements));
}

TEST(RangeDifferential, OrderedMapAgainstBruteForce) {
  tally t;
  differential(range_model::ordered_map, 20000, 11, t);
  report("ordered-map", t);
  EXPECT_EQ(t.disagreements, 0u);
  EXPECT_LE(t.unknown, t.histories / 1000);
  EXPECT_GT(t.linearizable, 1000u);
  EXPECT_GT(t.violations, 1000u);
}

TEST(RangeDifferential, OrderedUpsertMapAgainstBruteForce) {
  tally t;
  differential(range_model::ordered_upsert_map, 20000, 12, t);
  report("ordered-upsert-map", t);
  EXPECT_EQ(t.disagreements, 0u);
  EXPECT_LE(t.unknown, t.histories / 1000);
  EXPECT_GT(t.linearizable, 1000u);
  EXPECT_GT(t.violations, 1000u);
}

TEST(RangeChecker, LargeGeneratedHistoryIsLinearizable) {
  range_gen_options o;
  o.ops = 50000;
  o.keys = 2000;
  o.teams = 8;
  o.range_pct = 10;
  o.range_width = 50;
  o.snapshot_pct = 0.5;
  o.handle_read_pct = 5;
  o.pending_pct = 0.1;
  const range_history h = linearizable_range_history(o);
  const range_check_result r = check_range_history(h);
  EXPECT_EQ(r.v, verdict::linearizable) << range_text_report(h, r, "t", "memory");
}

}  // namespace

#ifdef GFSL_BINARY
namespace {

int run_gfsl(const std::string& args, std::string& out) {
  const std::string cmd = std::string(GFSL_BINARY) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  out.clear();
  char buf[4096];
  for (std::size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = p ? ::pclose(p) : -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RangeCli, CheckAndConvert) {
  builder good;
  good.ins(1, 10, true, 0, 1).ins(2, 20, true, 2, 3).range(0, 5, {{1, 10}, {2, 20}}, 4, 5);
  builder bad;
  bad.ins(1, 10, true, 0, 2).ins(2, 20, true, 3, 5).range(0, 5, {{2, 20}}, 1, 9);
  const std::string g = temp_path("cli-good"), b = temp_path("cli-bad");
  write_range_trace(g, good.h);
  write_range_trace(b, bad.h);
  std::string out;
  EXPECT_EQ(run_gfsl("check --model ordered-map " + g, out), 0) << out;
  EXPECT_NE(out.find("verdict:  linearizable"), std::string::npos) << out;
  EXPECT_EQ(run_gfsl("check --model ordered-map " + b, out), 1) << out;
  EXPECT_NE(out.find("range[0, 5) -> {2:20}"), std::string::npos) << out;
  EXPECT_EQ(run_gfsl("check --model ordered-map --json - " + b, out), 1) << out;
  EXPECT_NE(out.find("\"verdict\":\"not linearizable\""), std::string::npos) << out;
  // The metadata names the model; the binary form holds the ranges too
  // (tests/test_range_binary.cpp), with the same verdict.
  EXPECT_EQ(run_gfsl("check --model ordered-upsert-map " + g, out), 2) << out;
  EXPECT_EQ(run_gfsl("convert " + b + " " + b + ".bin", out), 0) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_EQ(run_gfsl("check " + b + ".bin", out), 1) << out;
  EXPECT_NE(out.find("range[0, 5) -> {2:20}"), std::string::npos) << out;
  std::remove((b + ".bin").c_str());
  // Without --model, the trace's own model says which checker reads it;
  // under another model named on the command line it is refused.
  EXPECT_EQ(run_gfsl("check " + g, out), 0) << out;
  EXPECT_NE(out.find("model ordered-map"), std::string::npos) << out;
  EXPECT_EQ(run_gfsl("check --model set " + g, out), 2) << out;
  EXPECT_NE(out.find("names model ordered-map, not set (--model)"), std::string::npos) << out;
  std::remove(g.c_str());
  std::remove(b.c_str());
}

}  // namespace
#endif

namespace {

// Histories too big for the brute force, built linearizable, with many
// operations in flight on few keys: the search must never call one of them
// not linearizable, and should decide them.
TEST(RangeChecker, ContendedLinearizableHistoriesAreNeverRejected) {
  std::mt19937_64 rng(5);
  std::uint64_t unknown = 0, searched = 0;
  const std::uint64_t histories = 300;
  for (std::uint64_t i = 0; i < histories; ++i) {
    range_gen_options o;
    o.model = i % 2 ? range_model::ordered_upsert_map : range_model::ordered_map;
    o.upsert_pct = 15;
    o.seed = rng();
    o.ops = 400 + static_cast<std::uint32_t>(rng() % 1600);
    o.keys = 4 + static_cast<std::uint32_t>(rng() % 60);
    o.teams = 4 + static_cast<std::uint32_t>(rng() % 28);
    o.range_width = 1 + static_cast<std::uint32_t>(rng() % 16);
    o.snapshot_pct = 2;
    o.handle_read_pct = 20;
    o.pending_pct = 1;
    o.error_pct = 1;
    const range_history h = linearizable_range_history(o);
    const range_check_result r = check_range_history(h);
    ASSERT_TRUE(r.refusal.empty()) << r.refusal;
    ASSERT_NE(r.v, verdict::not_linearizable) << range_text_report(h, r, "t", "memory");
    unknown += r.v == verdict::unknown ? 1 : 0;
    if (r.v == verdict::unknown) std::printf("unknown: ops %u keys %u teams %u: %llu steps, %llu choices, %llu ambiguous keys, %.2f s\n", o.ops, o.keys, o.teams, (unsigned long long)r.search_steps, (unsigned long long)r.choices, (unsigned long long)r.ambiguous_keys, r.seconds);
    searched += r.choices ? 1 : 0;
  }
  std::printf("contended: %llu histories, %llu searched, %llu unknown\n", static_cast<unsigned long long>(histories),
              static_cast<unsigned long long>(searched), static_cast<unsigned long long>(unknown));
  EXPECT_LE(unknown, histories / 20);
}

// One range of a large history loses one pair: found, and named.
TEST(RangeChecker, APlantedViolationInALargeHistoryIsFound) {
  range_gen_options o;
  o.ops = 50000;
  o.keys = 2000;
  o.teams = 8;
  o.range_width = 50;
  range_history h = linearizable_range_history(o);
  for (std::size_t i = h.ops.size() / 2; i < h.ops.size(); ++i) {
    range_record& r = h.ops[i];
    if (r.op != range_op::range || r.pending() || r.pairs_count < 2) continue;
    // Drop the pair of a key whose insert had returned before the range began.
    for (std::uint32_t p = 0; p < r.pairs_count; ++p) {
      const auto kv = h.pairs[r.pairs_from + p];
      bool old = false;
      for (const range_record& w : h.ops) {
        old = old || ((w.op == range_op::insert && w.ok) && w.key == kv.first && w.value == kv.second && !w.pending() && w.ret < r.call);
      }
      if (!old) continue;
      pairs_t keep(h.pairs.begin() + r.pairs_from, h.pairs.begin() + r.pairs_from + r.pairs_count);
      keep.erase(keep.begin() + p);
      r.pairs_from = static_cast<std::uint32_t>(h.pairs.size());
      r.pairs_count = static_cast<std::uint32_t>(keep.size());
      h.pairs.insert(h.pairs.end(), keep.begin(), keep.end());
      const range_check_result res = check_range_history(h);
      EXPECT_EQ(res.v, verdict::not_linearizable);
      EXPECT_NE(std::find(res.witness.begin(), res.witness.end(), static_cast<std::uint32_t>(i)), res.witness.end())
          << range_text_report(h, res, "t", "memory");
      return;
    }
  }
  FAIL() << "no range to damage";
}

}  // namespace

namespace {

// A key's projection keeps the operations on it (ranges cut to the key)
// and the snapshots they read at; a violation on one key is a violation of
// its projection, found there with its records numbered as the whole
// history numbers them.
TEST(RangeChecker, AKeysProjectionKeepsItsOperationsAndFindsItsViolation) {
  builder b(range_model::ordered_upsert_map);
  for (value_type v = 10; v < 14; ++v) b.ups(1, v, -1, 0, 100);                  // records 0-3
  b.find(1, true, 12, 101, 102);                                                // 4
  b.snap(7, 0, 5).ups(2, 20, -1, 6, 7).find(2, true, 20, 8, 9, 7);              // 5, 6, 7: reads an insert begun after its snapshot
  b.range(0, 5, {{1, 12}, {2, 20}}, 103, 104).snap(8, 110, 111).range(2, 3, {{2, 20}}, 112, 113, 8);  // 8, 9, 10
  std::vector<std::uint32_t> origin;
  const range_history p = project_on_key(b.h, 2, origin);
  EXPECT_EQ(origin, (std::vector<std::uint32_t>{5, 6, 7, 8, 9, 10}));
  ASSERT_EQ(p.ops.size(), 6u);
  EXPECT_EQ(p.ops[3].op, range_op::range);
  EXPECT_EQ(p.ops[3].lo(), 2u);
  EXPECT_EQ(p.ops[3].hi, 3u);
  ASSERT_EQ(p.ops[3].pairs_count, 1u);
  EXPECT_EQ(p.pairs[p.ops[3].pairs_from], (std::pair<key_type, value_type>{2, 20}));
  const range_check_result pr = check_range_history(p);
  EXPECT_EQ(pr.v, verdict::not_linearizable) << range_text_report(p, pr, "t", "memory");
  EXPECT_FALSE(brute_force_range_linearizable(b.h));
  // Key 1's projection holds no snapshot (none is read at on it) and is linearizable.
  origin.clear();
  const range_history p1 = project_on_key(b.h, 1, origin);
  EXPECT_EQ(origin, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 8}));
  EXPECT_EQ(check_range_history(p1).v, verdict::linearizable);
}

// The projections of linearizable histories are linearizable; under limits
// tight enough to leave wholes undecided, the projections never reject a
// linearizable history.
TEST(RangeChecker, ProjectionsOfLinearizableHistoriesAreLinearizable) {
  std::mt19937_64 rng(11);
  std::uint64_t unknown = 0, projections = 0;
  for (int i = 0; i < 200; ++i) {
    range_gen_options o;
    o.model = i % 2 ? range_model::ordered_upsert_map : range_model::ordered_map;
    o.upsert_pct = 15;
    o.seed = rng();
    o.ops = 200 + static_cast<std::uint32_t>(rng() % 600);
    o.keys = 2 + static_cast<std::uint32_t>(rng() % 16);
    o.teams = 8 + static_cast<std::uint32_t>(rng() % 24);
    o.range_width = 1 + static_cast<std::uint32_t>(rng() % 8);
    o.snapshot_pct = 3;
    o.handle_read_pct = 30;
    const range_history h = linearizable_range_history(o);
    for (key_type k = 1; k <= 2; ++k) {
      std::vector<std::uint32_t> origin;
      const range_history p = project_on_key(h, k, origin);
      const range_check_result pr = check_range_history(p);
      ASSERT_TRUE(pr.refusal.empty()) << pr.refusal;
      ASSERT_NE(pr.v, verdict::not_linearizable) << range_text_report(p, pr, "t", "memory");
      ++projections;
    }
    range_check_options tight;
    tight.max_orders = 2;
    tight.budget = 50;
    const range_check_result r = check_range_history(h, tight);
    ASSERT_TRUE(r.refusal.empty()) << r.refusal;
    ASSERT_NE(r.v, verdict::not_linearizable) << range_text_report(h, r, "t", "memory");
    unknown += r.v == verdict::unknown;
  }
  EXPECT_EQ(projections, 400u);
  EXPECT_GT(unknown, 0u) << "the limits left nothing undecided: the projections were never tried";
}

}  // namespace
