// The linearizability checker on histories whose verdict is known: the
// classic cases of the literature for a set/map, pending operations that must
// and must not have taken effect, a time limit that gives `unknown` and never
// a wrong verdict, counterexamples that are minimal, and histories recorded by
// real runs of GFSL.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "exec/host_runner.hpp"
#include "linearizability/brute_force.hpp"
#include "linearizability/checker.hpp"
#include "linearizability/key_checker.hpp"
#include "linearizability/model.hpp"
#include "linearizability/report.hpp"
#include "linearizability/set_checker.hpp"
#include "linearizability/synthetic.hpp"
#include "linearizability/wing_gong.hpp"
#include "model/history.hpp"
#include "core/gfsl/types.hpp"

namespace {

using gfsl::op_kind;
using gfsl::lin::verdict;
using gfsl::model::op_record;
constexpr std::uint64_t never = gfsl::model::no_stamp;

op_record rec(gfsl::team_id team, op_kind kind, gfsl::key_type key, gfsl::value_type value, bool ok, std::uint64_t call,
              std::uint64_t ret) {
  op_record r;
  r.team = team;
  r.op.kind = kind;
  r.op.key = key;
  if (kind == op_kind::insert) r.op.value = value;
  else r.value = value;
  r.ok = ok;
  r.call = call;
  r.ret = ret;
  return r;
}
op_record ins(gfsl::team_id t, gfsl::value_type v, bool ok, std::uint64_t c, std::uint64_t r, gfsl::key_type k = 1) {
  return rec(t, op_kind::insert, k, v, ok, c, r);
}
op_record del(gfsl::team_id t, bool ok, gfsl::value_type v, std::uint64_t c, std::uint64_t r, gfsl::key_type k = 1) {
  return rec(t, op_kind::remove, k, v, ok, c, r);
}
op_record con(gfsl::team_id t, bool ok, gfsl::value_type v, std::uint64_t c, std::uint64_t r, gfsl::key_type k = 1) {
  return rec(t, op_kind::contains, k, v, ok, c, r);
}
op_record failed(op_record r, gfsl::status st) {
  r.st = st;
  r.ok = false;
  r.value = 0;
  return r;
}

// The relaxed window a counterexample describes (checker.hpp): its
// answers, the writes set aside as pending ones, and, unless it starts the
// history, any state at the start, written as a first insert. Brute force
// must find no linearization for any start.
bool explanation_fails(const std::vector<op_record>& h, const gfsl::lin::counterexample& ex, const std::vector<bool>& unrecorded,
                       std::size_t also_aside = ~std::size_t{0}) {
  std::vector<op_record> sub;
  std::vector<bool> bits;
  std::vector<gfsl::value_type> values = {0xFFFFFFFFu};
  for (std::size_t k = 0; k < ex.minimal.size(); ++k) {
    op_record r = h[ex.minimal[k]];
    if (k == also_aside) {
      if (r.op.kind == op_kind::contains || !r.ok) continue;
      r.st = gfsl::status::pool_exhausted;
    }
    sub.push_back(r), bits.push_back(unrecorded[ex.minimal[k]]);
  }
  for (std::uint32_t i : ex.set_aside) {
    op_record r = h[i];
    if (r.ret != never) r.st = gfsl::status::pool_exhausted;
    sub.push_back(r), bits.push_back(false);
  }
  for (op_record& r : sub) {
    values.push_back(r.op.kind == op_kind::insert ? r.op.value : r.value);
    r.call += 2;
    if (r.ret != never) r.ret += 2;
  }
  if (ex.from_start) return !gfsl::lin::brute_force_linearizable(sub, bits);
  if (gfsl::lin::brute_force_linearizable(sub, bits)) return false;
  for (gfsl::value_type v : values) {
    std::vector<op_record> with = sub;
    std::vector<bool> with_bits = bits;
    with.insert(with.begin(), ins(99, v, true, 0, 0, sub.front().op.key));
    with_bits.insert(with_bits.begin(), false);
    if (gfsl::lin::brute_force_linearizable(with, with_bits)) return false;
  }
  return true;
}

// The fast checker, the generic search and brute force must all say so, and
// a counterexample must be one.
void expect_linearizable(const std::vector<op_record>& h, bool expected, const std::vector<std::uint32_t>& unrecorded = {}) {
  std::vector<bool> bits(h.size(), false);
  for (std::uint32_t i : unrecorded) bits[i] = true;
  EXPECT_EQ(gfsl::lin::brute_force_linearizable(h, bits), expected) << "brute force";
  EXPECT_EQ(gfsl::lin::check_history_generic(h, {}, unrecorded) == verdict::linearizable, expected) << "generic search";
  const auto r = gfsl::lin::check_history(h, {}, unrecorded);
  EXPECT_EQ(r.v == verdict::linearizable, expected) << "fast checker";
  if (!expected) {
    ASSERT_TRUE(r.example.has_value());
    EXPECT_TRUE(explanation_fails(h, *r.example, bits));
    EXPECT_TRUE(r.example->one_minimal);
    for (std::size_t k = 0; k < r.example->minimal.size(); ++k) {
      EXPECT_FALSE(explanation_fails(h, *r.example, bits, k)) << "still fails with answer " << k << " set aside";
    }
  }
}

// ---- the literature's cases ----

TEST(Linearizability, ContainsMaySeeAKeyBetweenAConcurrentInsertAndDelete) {
  expect_linearizable({ins(0, 5, true, 0, 10), del(1, true, 5, 0, 10), con(2, true, 5, 2, 8)}, true);
  expect_linearizable({ins(0, 5, true, 0, 10), del(1, true, 5, 0, 10), con(2, false, 0, 2, 8)}, true);
  // Once both have returned, the key is gone: a later contains cannot see it.
  expect_linearizable({ins(0, 5, true, 0, 10), del(1, true, 5, 0, 10), con(2, true, 5, 20, 21)}, false);
  // Seeing it present, then absent, then present again needs a second insert.
  expect_linearizable({ins(0, 5, true, 0, 100), del(1, true, 5, 0, 100), con(2, true, 5, 1, 2), con(2, false, 0, 3, 4),
                       con(2, true, 5, 5, 6)},
                      false);
}

TEST(Linearizability, TwoSuccessfulDeletesNeedAnInsertBetween) {
  expect_linearizable({ins(0, 1, true, 0, 1), del(1, true, 1, 2, 3), del(2, true, 1, 4, 5)}, false);
  expect_linearizable({ins(0, 1, true, 0, 1), del(1, true, 1, 2, 6), del(2, true, 1, 3, 7)}, false);  // concurrent deletes
  expect_linearizable({ins(0, 1, true, 0, 1), del(1, true, 1, 2, 6), del(2, true, 1, 3, 7), ins(3, 1, true, 2, 7)}, true);
  // The second insert must come between: if it returned before the first
  // delete was called, it failed (the key was there).
  expect_linearizable({ins(0, 1, true, 0, 1), ins(3, 1, true, 1, 1), del(1, true, 1, 2, 6), del(2, true, 1, 3, 7)}, false);
}

TEST(Linearizability, ALostInsertIsCaught) {
  expect_linearizable({ins(0, 1, true, 0, 1), con(1, false, 0, 2, 3)}, false);
  expect_linearizable({ins(0, 1, true, 0, 1), ins(1, 2, true, 2, 3)}, false);  // inserted twice, nothing deleted
  expect_linearizable({ins(0, 1, true, 0, 1), del(1, false, 0, 2, 3)}, false);
  expect_linearizable({ins(0, 1, true, 0, 4), con(1, false, 0, 2, 3)}, true);  // concurrent: may come first
}

TEST(Linearizability, AValueNeverInsertedCannotBeFoundOrRemoved) {
  expect_linearizable({con(0, true, 7, 0, 1)}, false);
  expect_linearizable({ins(0, 1, true, 0, 10), con(1, true, 2, 0, 10)}, false);
  expect_linearizable({ins(0, 1, true, 0, 10), del(1, true, 2, 0, 10)}, false);
  expect_linearizable({del(0, true, 0, 0, 1)}, false);  // the map starts empty
  expect_linearizable({del(0, false, 0, 0, 1), con(1, false, 0, 2, 3)}, true);
}

TEST(Linearizability, InsertIsInsertIfAbsentAndKeepsTheOldValue) {
  expect_linearizable({ins(0, 1, true, 0, 1), ins(1, 2, false, 2, 3), con(2, true, 1, 4, 5)}, true);
  expect_linearizable({ins(0, 1, true, 0, 1), ins(1, 2, false, 2, 3), con(2, true, 2, 4, 5)}, false);
  expect_linearizable({ins(0, 1, true, 0, 1), ins(1, 2, false, 2, 3), del(2, true, 2, 4, 5)}, false);
  expect_linearizable({ins(1, 2, false, 0, 1)}, false);  // failed on an empty map
}

TEST(Linearizability, DeleteReturnsTheValueItRemoved) {
  expect_linearizable({ins(0, 1, true, 0, 1), del(1, true, 1, 2, 3)}, true);
  expect_linearizable({ins(0, 1, true, 0, 1), del(1, true, 9, 2, 3)}, false);
  // Unless the value was not recorded.
  expect_linearizable({ins(0, 1, true, 0, 1), del(1, true, 0, 2, 3)}, true, {1});
  expect_linearizable({ins(0, 1, true, 0, 1), del(1, true, 0, 2, 3), del(2, true, 0, 4, 5)}, false, {1, 2});
}

TEST(Linearizability, PendingInsertsThatMustAndMustNotTakeEffect) {
  // Seen by a later contains: it must have taken effect.
  expect_linearizable({ins(0, 7, false, 0, never), con(1, true, 7, 5, 6)}, true);
  // Not seen: it may not have taken effect (or only later).
  expect_linearizable({ins(0, 7, false, 0, never), con(1, false, 0, 5, 6)}, true);
  // Seen, then not seen, with nothing deleting it: impossible either way.
  expect_linearizable({ins(0, 7, false, 0, never), con(1, true, 7, 5, 6), con(1, false, 0, 8, 9)}, false);
  // A pending delete may remove it in between.
  expect_linearizable({ins(0, 7, false, 0, never), con(1, true, 7, 5, 6), del(2, false, 0, 1, never), con(1, false, 0, 8, 9)}, true);
  // A pending insert of another value cannot explain this one.
  expect_linearizable({ins(0, 8, false, 0, never), con(1, true, 7, 5, 6)}, false);
  // An insert that ended in an error took effect before its return or not
  // at all: after its return, the key's state no longer depends on it.
  const op_record err = failed(ins(0, 7, true, 0, 3), gfsl::status::pool_exhausted);
  expect_linearizable({err, con(1, true, 7, 5, 6)}, true);
  expect_linearizable({err, con(1, false, 0, 5, 6)}, true);
  expect_linearizable({err, con(1, true, 7, 1, 2), con(1, false, 0, 5, 6)}, false);
  expect_linearizable({err, con(1, false, 0, 5, 6), con(2, true, 7, 8, 9)}, false);
}

TEST(Linearizability, KeysAreIndependent) {
  // Each key alone is fine, so the map is (P-compositionality); brute force
  // checks the whole map without splitting it.
  expect_linearizable({ins(0, 1, true, 0, 4, 1), ins(1, 2, true, 1, 5, 2), con(2, true, 1, 2, 6, 1), con(3, false, 0, 0, 1, 2),
                       del(0, true, 2, 6, 8, 2), con(1, false, 0, 9, 10, 1)},
                      false);
  expect_linearizable({ins(0, 1, true, 0, 4, 1), ins(1, 2, true, 1, 5, 2), con(2, true, 1, 2, 6, 1), con(3, false, 0, 0, 1, 2),
                       del(0, true, 2, 6, 8, 2), con(1, true, 1, 9, 10, 1)},
                      true);
}

// ---- the checker's own behaviour ----

TEST(Linearizability, WitnessesAreLinearizations) {
  gfsl::lin::synthetic_options o;
  o.ops = 3000;
  o.keys = 2;
  o.teams = 16;
  o.insert_pct = 30;
  o.delete_pct = 30;
  o.pending = 4;
  const std::vector<op_record> h = gfsl::lin::synthetic_history(o);
  for (gfsl::key_type key : {1u, 2u}) {
    std::vector<std::uint32_t> idx;
    for (std::uint32_t i = 0; i < h.size(); ++i) {
      if (h[i].op.key == key) idx.push_back(i);
    }
    const auto ops = gfsl::lin::key_operations(h, idx);
    gfsl::lin::set_key_checker c;
    std::vector<std::uint32_t> order;
    ASSERT_EQ(c.check(ops, {}, &order), verdict::linearizable);
    // Replay the order: each answer holds, no operation follows one that was
    // called after it returned, every completed operation is there.
    gfsl::model::sequential_map m;
    std::vector<bool> used(ops.size(), false);
    std::uint64_t latest_call = 0;
    for (std::uint32_t p : order) {
      const auto& op = ops[p];
      ASSERT_FALSE(used[p]);
      used[p] = true;
      ASSERT_GE(op.ret, latest_call) << "placed after an operation called after it returned";
      latest_call = std::max(latest_call, op.call);
      const auto got = m.apply(h[op.index].op);
      if (!op.optional) {
        ASSERT_EQ(got.ok, op.ok);
        if (op.ok && op.kind != op_kind::insert) {
          ASSERT_EQ(got.value, op.value);
        }
      }
    }
    for (std::size_t p = 0; p < ops.size(); ++p) EXPECT_TRUE(used[p] || ops[p].optional);
  }
}

// No order of n inserts and n+1 deletes (values not recorded) works. When the
// operations share a common point the counting of key_checker sees it at
// once; two reads that take the common point away (the key absent at the
// start, and again at the end) leave it to the search, and nothing short of
// trying the orders of the pairs shows it: with a time limit the checker must
// say `unknown`, never a verdict it has not proven.
std::vector<op_record> hard_history(int n, std::vector<std::uint32_t>& unrecorded, bool common_point = true) {
  std::vector<op_record> h;
  for (int i = 0; i < n; ++i) h.push_back(ins(static_cast<gfsl::team_id>(i), static_cast<gfsl::value_type>(i + 1), true, 0, 1000));
  for (int i = 0; i <= n; ++i) {
    unrecorded.push_back(static_cast<std::uint32_t>(h.size()));
    h.push_back(del(static_cast<gfsl::team_id>(n + i), true, 0, 0, 1000));
  }
  if (!common_point) {
    h.push_back(con(static_cast<gfsl::team_id>(2 * n + 1), false, 0, 0, 1));
    h.push_back(con(static_cast<gfsl::team_id>(2 * n + 2), false, 0, 999, 2000));
  }
  return h;
}

TEST(Linearizability, ATimeLimitGivesUnknownNeverAWrongVerdict) {
  std::vector<std::uint32_t> unrecorded;
  const auto h = hard_history(26, unrecorded, false);
  gfsl::lin::check_options o;
  o.timeout_seconds = 0.3;
  const auto r = gfsl::lin::check_history(h, o, unrecorded);
  EXPECT_EQ(r.v, verdict::unknown);
  EXPECT_EQ(r.undecided_keys, 1u);
  EXPECT_EQ(r.memory_bound_keys, 0u);
  ASSERT_EQ(r.undecided.size(), 1u);
  EXPECT_EQ(r.undecided[0].key, 1u);
  EXPECT_EQ(r.undecided[0].operations, h.size());
  // Only the limit passing can make it `unknown`, so it cannot have given up
  // sooner, however fast the machine.
  EXPECT_GE(r.seconds, o.timeout_seconds);
  // Small enough to finish: the same shape is rejected.
  unrecorded.clear();
  EXPECT_EQ(gfsl::lin::check_history(hard_history(5, unrecorded, false), {}, unrecorded).v, verdict::not_linearizable);
  // With the common point, counting rejects it at any size.
  unrecorded.clear();
  const auto concurrent = hard_history(26, unrecorded);
  EXPECT_EQ(gfsl::lin::check_history(concurrent, o, unrecorded).v, verdict::not_linearizable);
}

// "Counting rejects it at any size" in a measure the machine cannot change:
// the key checker judges every segment by counting, and rejects within a
// search budget that the same shape without the common point exhausts.
TEST(Linearizability, CountingRejectsTheCommonPointShapeWithoutSearching) {
  gfsl::lin::key_check_options budget;
  budget.node_budget = 1000;
  for (int n : {5, 26, 400}) {
    std::vector<std::uint32_t> unrecorded;
    const auto concurrent = hard_history(n, unrecorded);
    std::vector<std::uint32_t> all(concurrent.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    gfsl::lin::key_checker k;
    EXPECT_EQ(k.check(gfsl::lin::key_operations(concurrent, all, unrecorded), {}, nullptr, budget),
              verdict::not_linearizable)
        << n << " pairs";
    EXPECT_GE(k.segments(), 1u);
    EXPECT_EQ(k.counted_segments(), k.segments()) << n << " pairs";

    unrecorded.clear();
    const auto searched = hard_history(n, unrecorded, false);
    all.resize(searched.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    gfsl::lin::key_checker s;
    const verdict v = s.check(gfsl::lin::key_operations(searched, all, unrecorded), {}, nullptr, budget);
    if (n > 5) EXPECT_EQ(v, verdict::unknown) << n << " pairs: the budget is too large to show anything";
    else EXPECT_EQ(v, verdict::not_linearizable);
  }
}

TEST(Linearizability, AViolationInALongHistoryShrinksToAFewOperations) {
  gfsl::lin::synthetic_options o;
  o.ops = 20000;
  o.keys = 3;
  o.teams = 12;
  o.insert_pct = 25;
  o.delete_pct = 25;
  std::vector<op_record> h = gfsl::lin::synthetic_history(o);
  ASSERT_EQ(gfsl::lin::check_history(h).v, verdict::linearizable);
  // A contains in the middle that answers wrongly.
  std::size_t planted = h.size() / 2;
  while (h[planted].op.kind != op_kind::contains || h[planted].op.key != 2) ++planted;
  h[planted].ok = !h[planted].ok;
  h[planted].value = h[planted].ok ? 123456789u : 0u;
  const auto r = gfsl::lin::check_history(h);
  ASSERT_EQ(r.v, verdict::not_linearizable);
  EXPECT_EQ(r.violating_keys, 1u);
  ASSERT_TRUE(r.example.has_value());
  const auto& ex = *r.example;
  EXPECT_EQ(ex.key, 2u);
  EXPECT_TRUE(ex.one_minimal);
  EXPECT_LE(ex.minimal.size(), 4u);
  EXPECT_LE(ex.set_aside.size(), 6u);
  EXPECT_NE(std::find(ex.minimal.begin(), ex.minimal.end(), planted), ex.minimal.end());
  // Minimal: it fails, and with any one more answer set aside it does not.
  const std::vector<bool> none(h.size(), false);
  EXPECT_TRUE(explanation_fails(h, ex, none));
  for (std::size_t k = 0; k < ex.minimal.size(); ++k) {
    EXPECT_FALSE(explanation_fails(h, ex, none, k)) << "still fails with answer " << k << " set aside";
  }
  // The prefix stops before the planted answer and is linearizable.
  EXPECT_FALSE(ex.prefix_empty);
  EXPECT_LT(ex.prefix.size(), ex.key_history.size());
  EXPECT_LE(ex.prefix_until, h[planted].ret);
  EXPECT_GE(ex.prefix_order.size(), ex.prefix.size() / 2);
  // The reports name the key and the operations.
  gfsl::lin::report_context ctx;
  ctx.file = "memory";
  ctx.form = "memory";
  const std::string text = gfsl::lin::text_report(h, r, ctx);
  EXPECT_NE(text.find("NOT LINEARIZABLE"), std::string::npos) << text;
  EXPECT_NE(text.find("key 2:"), std::string::npos) << text;
  EXPECT_NE(text.find("record " + std::to_string(planted)), std::string::npos) << text;
  const std::string html = gfsl::lin::html_report(h, r, ctx);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("class=\"linpt\""), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // the SVG namespace is the only URL
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

// The report's prefix sentence tells an operation that ended in an error
// before the cut (no answer: it may or may not have taken effect) from one
// still running at the cut.
TEST(Linearizability, ThePrefixSentenceDoesNotCountAnErroredOperationAsRunning) {
  // The insert of 1 ended in an error at stamp 1; its effect, if any, lies
  // inside [0, 1], so 1 absent at [2, 3] and present at [4, 5] cannot both be.
  const std::vector<op_record> h = {failed(ins(0, 7, true, 0, 1), gfsl::status::pool_exhausted), con(1, false, 0, 2, 3),
                                    con(1, true, 7, 4, 5)};
  const auto r = gfsl::lin::check_history(h);
  ASSERT_EQ(r.v, verdict::not_linearizable);
  ASSERT_TRUE(r.example.has_value());
  const auto& ex = *r.example;
  ASSERT_FALSE(ex.prefix_empty);
  ASSERT_NE(std::find(ex.prefix.begin(), ex.prefix.end(), 0u), ex.prefix.end()) << "the errored insert is in the prefix";
  ASSERT_GE(ex.prefix_until, h[0].ret);
  const std::string sentence = gfsl::lin::prefix_sentence(h, ex);
  EXPECT_NE(sentence.find("the one that ended in an error before it may or may not have taken effect"), std::string::npos) << sentence;
  std::size_t running = 0;
  for (std::uint32_t i : ex.prefix) running += h[i].ret > ex.prefix_until ? 1 : 0;
  if (running == 0) {
    EXPECT_EQ(sentence.find("still running"), std::string::npos) << sentence;
  } else {
    EXPECT_NE(sentence.find(running == 1 ? "the one of them still running" : "the " + std::to_string(running) + " of them still running"),
              std::string::npos)
        << sentence;
  }
}

TEST(Linearizability, BadRecordsAreRefused) {
  std::vector<op_record> h = {ins(0, 1, true, 5, 4)};
  EXPECT_NE(gfsl::lin::validate_history(h).find("record 0"), std::string::npos);
  EXPECT_THROW(gfsl::lin::check_history(h), std::invalid_argument);
  h[0].call = never;
  EXPECT_THROW(gfsl::lin::check_history(h), std::invalid_argument);
}

// ---- histories recorded by GFSL ----

gfsl::model::workload small_workload(std::uint32_t teams, std::uint64_t seed) {
  gfsl::model::workload w;
  w.ops = 40000;
  w.range = 64;  // few keys: many operations per key, much overlap
  w.insert_pct = 30;
  w.delete_pct = 30;
  w.contains_pct = 40;
  w.teams = teams;
  w.chunk = 16;
  w.seed = seed;
  return w;
}

// Teams taking turns: linearizable by construction, so the checker must
// agree, whatever the stamps look like.
TEST(Linearizability, RecordedSequentialRunsAreLinearizable) {
  for (std::uint64_t seed : {1, 2, 3}) {
    const auto run = gfsl::run_on_host(small_workload(8, seed), gfsl::host_mode::sequential);
    const auto h = gfsl::model::full_history(run.prefill, run.records);
    const auto r = gfsl::lin::check_history(h);
    EXPECT_EQ(r.v, verdict::linearizable) << "seed " << seed;
    EXPECT_EQ(r.keys, 64u);
  }
}

// Teams on OS threads read chunks lane by lane, which is not a snapshot
// (docs/ALGORITHM.md): a contains or delete may miss a key. The verdict is
// printed, not asserted; a violation is shown in full.
// On OS threads reads are lane by lane for real; the default variant
// (robust) is linearizable there, so every recorded run must check so.
TEST(Linearizability, RecordedThreadedRunsArePrintedWithTheirVerdict) {
  for (std::uint64_t seed : {1, 2}) {
    const auto run = gfsl::run_on_host(small_workload(4, seed), gfsl::host_mode::threads);
    ASSERT_EQ(gfsl::default_variant, gfsl::variant::robust);
    const auto h = gfsl::model::full_history(run.prefill, run.records);
    const auto r = gfsl::lin::check_history(h);
    EXPECT_EQ(r.v, verdict::linearizable) << "seed " << seed;
    EXPECT_EQ(r.operations, h.size()) << "seed " << seed;
    EXPECT_EQ(r.violating_keys, 0u) << "seed " << seed;
    std::printf("threads run, seed %llu: %llu operations, %s (%llu of %llu keys violating)\n", static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(r.operations), gfsl::lin::verdict_name(r.v),
                static_cast<unsigned long long>(r.violating_keys), static_cast<unsigned long long>(r.keys));
    if (r.example) {
      gfsl::lin::report_context ctx;
      ctx.file = "threads run";
      ctx.form = "memory";
      std::printf("%s\n", gfsl::lin::text_report(h, r, ctx).c_str());
    }
  }
}


// Stamp groups (exec/cuda/recording.cuh, `gfsl run --stamp-group`): the
// device recorder's rule applied to a history with exact stamps. Each team's
// operations, in call order, form groups of up to `group`; a group is called
// at its first operation's call and returns at its last one's return (the
// opening and closing stamps bracket them on the device); a group with an
// operation that never returned never closed. With `one_per_key`, an
// operation whose key the open group holds starts a new group.
std::vector<op_record> widen_to_stamp_groups(std::vector<op_record> h, std::size_t group, bool one_per_key) {
  std::map<gfsl::team_id, std::vector<std::size_t>> by_team;
  for (std::size_t i = 0; i < h.size(); ++i) by_team[h[i].team].push_back(i);
  for (auto& [team, ops] : by_team) {
    std::stable_sort(ops.begin(), ops.end(), [&](std::size_t a, std::size_t b) { return h[a].call < h[b].call; });
    std::vector<std::size_t> open;
    std::set<gfsl::key_type> keys;
    auto close = [&] {
      if (open.empty()) return;
      const std::uint64_t call = h[open.front()].call;
      std::uint64_t ret = h[open.back()].ret;
      for (std::size_t i : open) {
        if (h[i].ret == never) ret = never;
      }
      for (std::size_t i : open) {
        h[i].call = call;
        h[i].ret = ret;
      }
      open.clear();
      keys.clear();
    };
    for (std::size_t i : ops) {
      if (open.size() == group || (one_per_key && keys.count(h[i].op.key))) close();
      open.push_back(i);
      keys.insert(h[i].op.key);
    }
    close();
  }
  return h;
}

// Every interval only grows: a history linearizable with its exact stamps
// stays linearizable with its groups' (the checker sees fewer real-time
// orders, never a false one).
TEST(StampGroups, WideningKeepsLinearizableHistoriesLinearizable) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    gfsl::lin::synthetic_options o;
    o.ops = 6000;
    o.keys = 60;
    o.teams = 12;
    o.pending = 2;
    o.insert_pct = 30;
    o.delete_pct = 30;
    o.seed = seed;
    const auto h = gfsl::lin::synthetic_history(o);
    ASSERT_EQ(gfsl::lin::check_history(h).v, verdict::linearizable) << "seed " << seed;
    for (std::size_t group : {2, 4, 16, 32}) {
      const auto widened = widen_to_stamp_groups(h, group, true);
      std::size_t moved = 0;
      for (std::size_t i = 0; i < h.size(); ++i) {
        ASSERT_LE(widened[i].call, h[i].call);
        if (h[i].ret != never) {
          ASSERT_GE(widened[i].ret, h[i].ret);
        }
        moved += widened[i].call != h[i].call ? 1 : 0;
      }
      EXPECT_GT(moved, h.size() / 4) << "seed " << seed << ", groups of " << group << ": the widening changed little";
      EXPECT_EQ(gfsl::lin::check_history(widened).v, verdict::linearizable) << "seed " << seed << ", groups of " << group;
    }
  }
}

// Why a group never holds two operations on one key: one team inserts key 5
// and then does not find it. Its own program order makes that a violation; in
// one group the two operations would overlap and the checker could put the
// contains first. Started anew at the second operation on the key, the group
// keeps the order, and the violation stays.
TEST(StampGroups, OneOperationPerKeyAndGroupKeepsATeamsOwnOrder) {
  const std::vector<op_record> h = {ins(1, 7, true, 10, 11, 5), con(1, false, 0, 12, 13, 5)};
  EXPECT_EQ(gfsl::lin::check_history(h).v, verdict::not_linearizable);
  EXPECT_EQ(gfsl::lin::check_history(widen_to_stamp_groups(h, 2, false)).v, verdict::linearizable)
      << "without the rule, the group hides the team's own order";
  const auto kept = widen_to_stamp_groups(h, 2, true);
  EXPECT_LT(kept[0].ret, kept[1].call);
  EXPECT_EQ(gfsl::lin::check_history(kept).v, verdict::not_linearizable);
}

// What groups give up: real-time order between teams inside a group's span.
// Team 2 misses key 5 after team 1's insert of it returned; team 1's group
// (the insert and an operation on key 6) still runs when team 2 calls, so
// with groups the miss is judged possible.
TEST(StampGroups, GroupsHideOrderBetweenTeamsWithinTheirSpan) {
  const std::vector<op_record> h = {ins(1, 7, true, 10, 11, 5), con(1, false, 0, 14, 15, 6), con(2, false, 0, 12, 13, 5)};
  EXPECT_EQ(gfsl::lin::check_history(h).v, verdict::not_linearizable);
  EXPECT_EQ(gfsl::lin::check_history(widen_to_stamp_groups(h, 2, true)).v, verdict::linearizable);
}

}  // namespace

namespace {

// The --html page of a key with 10^5 operations whose explanation search
// stopped early (its "minimal" sub-history the whole key) was 99 MB; 10^6
// did not finish in 120 s. It now draws a bounded window around the point
// where linearizability got stuck and says how many operations it left out.
TEST(HtmlReport, AHugeKeyGivesABoundedPageAroundTheStuckOperation) {
  std::vector<op_record> h;
  const std::uint64_t n = 100000;
  for (std::uint64_t i = 0; i < n; ++i) {
    // Sequential inserts then deletes of key 1; record n/2 answers wrong.
    h.push_back(i % 2 == 0 ? ins(static_cast<gfsl::team_id>(i % 4), 7, true, 2 * i, 2 * i + 1)
                           : del(static_cast<gfsl::team_id>(i % 4), true, 7, 2 * i, 2 * i + 1));
  }
  const std::uint32_t stuck = n / 2;
  h[stuck].ok = false;
  h[stuck].value = 0;
  gfsl::lin::check_result r;
  r.v = verdict::not_linearizable;
  r.operations = n;
  r.keys = 1;
  r.violating_keys = 1;
  gfsl::lin::counterexample ex;
  ex.key = 1;
  for (std::uint32_t i = 0; i < n; ++i) ex.key_history.push_back(i);
  ex.minimal = ex.key_history;  // the explanation search stopped: everything
  for (std::uint32_t i = 0; i < stuck; ++i) {
    ex.prefix.push_back(i);
    ex.prefix_order.push_back(i);
  }
  ex.prefix_until = h[stuck - 1].call;
  ex.prefix_empty = false;
  r.example = ex;
  gfsl::lin::report_context ctx;
  ctx.file = "memory";
  ctx.form = "memory";
  const std::string html = gfsl::lin::html_report(h, r, ctx);
  EXPECT_LT(html.size(), 2u << 20) << "bytes: " << html.size();
  EXPECT_NE(html.find("got stuck at record " + std::to_string(stuck)), std::string::npos);
  EXPECT_NE(html.find("left out: 49000 operations before them and 49000 after them"), std::string::npos)
      << html.substr(0, 4000);
  EXPECT_NE(html.find("record " + std::to_string(stuck)), std::string::npos);
}

TEST(HtmlReport, TheHoverBoxIsThereOnlyWithSomethingToHoverAndLongLinesWrap) {
  // A linearizable history draws no operation: no hover box to cover a row.
  std::vector<op_record> h{ins(0, 7, true, 1, 2), del(1, true, 7, 3, 4)};
  const auto ok = gfsl::lin::check_history(h, {}, {});
  ASSERT_EQ(ok.v, verdict::linearizable);
  gfsl::lin::report_context ctx;
  ctx.file = "memory";
  ctx.form = "memory";
  ctx.html_after = "<pre>" + std::string(400, 'x') + "</pre>";  // an access line longer than any page is wide
  std::string html = gfsl::lin::html_report(h, ok, ctx);
  EXPECT_EQ(html.find("id=\"info\""), std::string::npos) << html;
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("pre{white-space:pre-wrap;overflow-wrap:anywhere}"), std::string::npos) << "long lines run off the page";
  // A violation draws the key's operations: the box is there.
  h[1].ok = false;
  h.push_back(ins(2, 8, true, 5, 6));
  const auto bad = gfsl::lin::check_history(h, {}, {});
  ASSERT_EQ(bad.v, verdict::not_linearizable);
  html = gfsl::lin::html_report(h, bad, ctx);
  EXPECT_NE(html.find("<g class=\"op "), std::string::npos);
  EXPECT_NE(html.find("id=\"info\""), std::string::npos);
  EXPECT_NE(html.find("<script>"), std::string::npos);
}

}  // namespace
