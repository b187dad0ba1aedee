// The segmented per-key checker (linearizability/key_checker.hpp) against the
// search it replaces in `gfsl check` (set_key_checker) and the generic
// Wing-Gong search: the same verdict on many small random histories shaped to
// reach its every path (free intervals, rounds of concurrent operations, one
// round; pending operations, operations ended in an error, unrecorded delete
// values, repeated values, a start state), each witness replayed; histories it
// must reject; the adversarial histories of linearizability/synthetic.hpp at a
// size CI can afford; and its memory bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "linearizability/checker.hpp"
#include "linearizability/jit_search.hpp"
#include "linearizability/key_checker.hpp"
#include "linearizability/model.hpp"
#include "linearizability/set_checker.hpp"
#include "linearizability/synthetic.hpp"
#include "linearizability/wing_gong.hpp"

namespace {

using gfsl::op_kind;
using gfsl::value_type;
using gfsl::lin::key_check_options;
using gfsl::lin::key_op;
using gfsl::lin::never_returned;
using gfsl::lin::verdict;

bool by_call(const key_op& a, const key_op& b) { return std::tie(a.call, a.ret, a.index) < std::tie(b.call, b.ret, b.index); }

// A witness is a linearization: valid (nothing after an operation called
// after it returned), every completed operation once, answers those of the
// key applied in order from the start state.
::testing::AssertionResult replays(const std::vector<key_op>& ops, const std::vector<std::uint32_t>& order, const key_check_options& start) {
  std::vector<int> seen(ops.size(), 0);
  bool present = start.initially_present;
  value_type value = start.initial_value;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (order[k] >= ops.size() || seen[order[k]]++) return ::testing::AssertionFailure() << "position " << order[k] << " twice or out of range";
    const key_op& o = ops[order[k]];
    for (std::size_t j = k + 1; j < order.size(); ++j) {
      if (ops[order[j]].ret != never_returned && o.call > ops[order[j]].ret) {
        return ::testing::AssertionFailure() << "operation " << order[k] << " placed before " << order[j] << ", which returned before its call";
      }
    }
    bool ok = false;
    value_type got = 0;
    switch (o.kind) {
      case op_kind::insert:
        ok = !present;
        if (ok) present = true, value = o.value;
        break;
      case op_kind::remove:
        ok = present, got = value;
        present = false;
        break;
      default: ok = present, got = value;
    }
    if (o.optional) continue;
    if (ok != o.ok || (ok && o.kind != op_kind::insert && o.value_known && got != o.value)) {
      return ::testing::AssertionFailure() << "operation " << order[k] << " does not get its answer";
    }
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].optional && !seen[i]) return ::testing::AssertionFailure() << "completed operation " << i << " left out";
  }
  return ::testing::AssertionSuccess();
}

std::string show(const std::vector<key_op>& ops) {
  std::string s;
  for (const key_op& o : ops) {
    s += "  [" + std::to_string(o.call) + ", " + (o.ret == never_returned ? std::string("inf") : std::to_string(o.ret)) + "] " +
         gfsl::lin::describe(1, o) + "\n";
  }
  return s;
}

// A random history of one key, linearizable by construction (a point in
// each interval, answers in the order of the points), then damaged half of
// the time.
std::vector<key_op> random_key_history(std::mt19937_64& rng, key_check_options& start, std::size_t max_ops = 10, std::uint64_t max_width = 4) {
  auto below = [&](std::uint64_t n) { return n ? rng() % n : 0; };
  const std::size_t n = 1 + below(max_ops);
  const int shape = static_cast<int>(below(3));  // free intervals, rounds, one round
  const std::uint64_t width = 1 + below(max_width);
  std::vector<key_op> ops(n);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> points;
  for (std::uint32_t i = 0; i < n; ++i) {
    key_op& o = ops[i];
    o.index = i;
    o.kind = static_cast<op_kind>(below(3));
    o.value = static_cast<value_type>(1 + below(3));
    if (shape == 0) {
      o.call = below(2 * n);
      o.ret = o.call + below(8);
    } else {
      const std::uint64_t round = shape == 1 ? i / width : 0, w = shape == 1 ? width : n;
      o.call = round * (2 * w + 2) + below(w);
      o.ret = round * (2 * w + 2) + w + below(w);
    }
    const auto fate = below(12);
    if (fate == 0) o.optional = true, o.ret = never_returned;
    if (fate == 1) o.optional = true;
    if (below(10) == 0) o.value_known = false;
    points.emplace_back(o.call + below((o.ret == never_returned ? o.call + 8 : o.ret) - o.call + 1), i);
  }
  start = {};
  if (below(4) == 0) start.initially_present = true, start.initial_value = static_cast<value_type>(1 + below(4));
  if (below(2)) start.counted_segment_min = 1;  // every concurrent segment counted: searched ones probed
  std::sort(points.begin(), points.end());
  bool present = start.initially_present;
  value_type value = start.initial_value;
  for (auto [p, i] : points) {
    key_op& o = ops[i];
    if (o.optional && below(2)) continue;
    switch (o.kind) {
      case op_kind::insert:
        o.ok = !present;
        if (o.ok) present = true, value = o.value;
        break;
      case op_kind::remove:
        o.ok = present, o.value = present ? value : 0;
        present = false;
        break;
      default: o.ok = present, o.value = present ? value : 0;
    }
  }
  if (below(3)) {
    key_op& o = ops[below(n)];
    switch (below(3)) {
      case 0: o.ok = !o.ok; break;
      case 1: o.value = static_cast<value_type>(1 + below(3)); break;
      default: o.kind = static_cast<op_kind>(below(3)); break;
    }
  }
  for (key_op& o : ops) o.value_known |= o.kind != op_kind::remove;  // only a delete's value goes unrecorded
  std::sort(ops.begin(), ops.end(), by_call);
  return ops;
}

TEST(KeyChecker, AgreesWithTheSearchAndTheGenericSearchOnRandomHistories) {
  std::mt19937_64 rng(20261123);
  gfsl::lin::key_checker fast;
  gfsl::lin::set_key_checker search;
  std::size_t violating = 0, counted = 0, mixed = 0, with_start = 0;
  constexpr int cases = 400000;
  for (int c = 0; c < cases; ++c) {
    key_check_options start;
    const std::vector<key_op> ops = random_key_history(rng, start);
    std::vector<std::uint32_t> order;
    const verdict v = fast.check(ops, {}, &order, start);
    ASSERT_NE(v, verdict::unknown);
    ASSERT_EQ(v, search.check(ops, {}, nullptr, start)) << "case " << c << "\n" << show(ops);
    if (!start.initially_present) {
      std::vector<gfsl::lin::model_op<gfsl::lin::map_key_model>> mops;
      for (const key_op& o : ops) mops.push_back(gfsl::lin::to_model_op(o));
      ASSERT_EQ(v, gfsl::lin::wing_gong_check<gfsl::lin::map_key_model>(mops, {})) << "case " << c << "\n" << show(ops);
    } else {
      ++with_start;
    }
    if (v == verdict::linearizable) {
      ASSERT_TRUE(replays(ops, order, start)) << "case " << c;
    }
    violating += v == verdict::not_linearizable ? 1 : 0;
    counted += fast.counted_segments() > 0 ? 1 : 0;
    mixed += fast.segments() > 1 && fast.counted_segments() < fast.segments() ? 1 : 0;
  }
  // Both verdicts, the counting and the start states come up often.
  EXPECT_GT(violating, cases / 5);
  EXPECT_LT(violating, cases * 4 / 5);
  EXPECT_GT(counted, cases / 2);
  EXPECT_GT(with_start, cases / 8);
  EXPECT_GT(mixed, cases / 50);  // segments searched with a probe, or joined
  std::printf("%d histories: %zu not linearizable, %zu with a counted segment, %zu with a searched one among others\n", cases,
              violating, counted, mixed);
}

TEST(KeyChecker, AgreesWithTheSearchOnLongerHistories) {
  std::mt19937_64 rng(11);
  gfsl::lin::key_checker fast;
  gfsl::lin::set_key_checker search;
  std::size_t violating = 0;
  constexpr int cases = 20000;
  for (int c = 0; c < cases; ++c) {
    key_check_options start;
    const std::vector<key_op> ops = random_key_history(rng, start, 24, 8);
    std::vector<std::uint32_t> order;
    const verdict v = fast.check(ops, {}, &order, start);
    ASSERT_NE(v, verdict::unknown);
    ASSERT_EQ(v, search.check(ops, {}, nullptr, start)) << "case " << c << "\n" << show(ops);
    if (v == verdict::linearizable) {
      ASSERT_TRUE(replays(ops, order, start)) << "case " << c;
    }
    violating += v == verdict::not_linearizable ? 1 : 0;
  }
  EXPECT_GT(violating, cases / 5);
  EXPECT_LT(violating, cases * 4 / 5);
}

// The just-in-time search on its own (linearizability/jit_search.hpp): the
// generic search's verdict on random histories of every shape, with pending
// and errored operations, unrecorded values and start states; each witness
// replayed; then longer histories against set_key_checker.
TEST(JitSearch, AgreesWithTheGenericSearchOnRandomHistories) {
  std::mt19937_64 rng(20261127);
  gfsl::lin::jit_key_search jit;
  gfsl::lin::set_key_checker search;
  std::size_t violating = 0, optional = 0;
  constexpr int cases = 200000;
  for (int c = 0; c < cases; ++c) {
    key_check_options start;
    const std::vector<key_op> ops = random_key_history(rng, start);
    std::vector<std::uint32_t> order;
    const verdict v = jit.check(ops, {}, &order, start);
    ASSERT_NE(v, verdict::unknown);
    ASSERT_EQ(v, search.check(ops, {}, nullptr, start)) << "case " << c << "\n" << show(ops);
    if (!start.initially_present) {
      std::vector<gfsl::lin::model_op<gfsl::lin::map_key_model>> mops;
      for (const key_op& o : ops) mops.push_back(gfsl::lin::to_model_op(o));
      ASSERT_EQ(v, gfsl::lin::wing_gong_check<gfsl::lin::map_key_model>(mops, {})) << "case " << c << "\n" << show(ops);
    }
    if (v == verdict::linearizable) {
      ASSERT_TRUE(replays(ops, order, start)) << "case " << c << "\n" << show(ops);
    }
    violating += v == verdict::not_linearizable ? 1 : 0;
    optional += std::any_of(ops.begin(), ops.end(), [](const key_op& o) { return o.optional; }) ? 1 : 0;
  }
  EXPECT_GT(violating, cases / 5);
  EXPECT_LT(violating, cases * 4 / 5);
  EXPECT_GT(optional, cases / 4);
}

TEST(JitSearch, AgreesWithTheSearchOnLongerHistories) {
  std::mt19937_64 rng(27);
  gfsl::lin::jit_key_search jit;
  gfsl::lin::set_key_checker search;
  std::size_t violating = 0;
  constexpr int cases = 20000;
  for (int c = 0; c < cases; ++c) {
    key_check_options start;
    const std::vector<key_op> ops = random_key_history(rng, start, 24, 8);
    std::vector<std::uint32_t> order;
    const verdict v = jit.check(ops, {}, &order, start);
    ASSERT_NE(v, verdict::unknown);
    ASSERT_EQ(v, search.check(ops, {}, nullptr, start)) << "case " << c << "\n" << show(ops);
    if (v == verdict::linearizable) {
      ASSERT_TRUE(replays(ops, order, start)) << "case " << c;
    }
    violating += v == verdict::not_linearizable ? 1 : 0;
  }
  EXPECT_GT(violating, cases / 5);
  EXPECT_LT(violating, cases * 4 / 5);
}

// Hand-made: what only the state sets or the pending counts make cheap,
// and what they must still reject.
TEST(JitSearch, PendingOperationsAreUsedOnceEach) {
  using enum gfsl::op_kind;
  auto make = [](op_kind kind, bool ok, value_type value, std::uint64_t call, std::uint64_t ret, bool optional = false) {
    key_op o;
    o.kind = kind, o.ok = ok, o.value = value, o.call = call, o.ret = ret, o.optional = optional;
    return o;
  };
  gfsl::lin::jit_key_search jit;
  // One pending insert of 1 explains one period of 1, not two.
  const key_op pending = make(insert, false, 1, 0, never_returned, true);
  std::vector<key_op> once{pending, make(contains, true, 1, 2, 3), make(remove, true, 1, 4, 5)};
  EXPECT_EQ(jit.check(once, {}), verdict::linearizable);
  std::vector<key_op> twice = once;
  twice.push_back(make(contains, true, 1, 6, 7));
  EXPECT_EQ(jit.check(twice, {}), verdict::not_linearizable);
  // Two pending inserts of 1 explain two.
  std::vector<key_op> two{pending, make(insert, false, 1, 1, never_returned, true), make(contains, true, 1, 2, 3), make(remove, true, 1, 4, 5),
                          make(contains, true, 1, 6, 7)};
  EXPECT_EQ(jit.check(two, {}), verdict::linearizable);
  // An error's effect lies inside its interval: an insert that ended in an
  // error at stamp 3 cannot explain a value found after an absent read at 4.
  std::vector<key_op> error{make(insert, false, 1, 0, 3, true), make(contains, false, 0, 4, 5), make(contains, true, 1, 6, 7)};
  EXPECT_EQ(jit.check(error, {}), verdict::not_linearizable);
  error[0].ret = 8;  // still running between the two reads: it may insert 1 there
  EXPECT_EQ(jit.check(error, {}), verdict::linearizable);
}

key_op op(op_kind kind, bool ok, value_type value, std::uint64_t call, std::uint64_t ret) {
  key_op o;
  o.kind = kind, o.ok = ok, o.value = value, o.call = call, o.ret = ret;
  return o;
}

verdict judge(std::vector<key_op> ops, const key_check_options& start = {}) {
  for (std::uint32_t i = 0; i < ops.size(); ++i) ops[i].index = i;
  std::sort(ops.begin(), ops.end(), by_call);
  gfsl::lin::key_checker c;
  std::vector<std::uint32_t> order;
  const verdict v = c.check(ops, {}, &order, start);
  gfsl::lin::set_key_checker s;
  EXPECT_EQ(v, s.check(ops, {}, nullptr, start)) << "the search disagrees";
  if (v == verdict::linearizable) {
    EXPECT_TRUE(replays(ops, order, start));
  }
  return v;
}

TEST(KeyChecker, RejectsWhatCountingForbids) {
  using enum op_kind;
  // All concurrent: two inserts succeed with nothing removing the first.
  EXPECT_EQ(judge({op(insert, true, 1, 0, 10), op(insert, true, 1, 1, 11)}), verdict::not_linearizable);
  // One insert, two deletes of its value.
  EXPECT_EQ(judge({op(insert, true, 1, 0, 10), op(remove, true, 1, 1, 11), op(remove, true, 1, 2, 12)}), verdict::not_linearizable);
  // A value found that no one inserted in this period.
  EXPECT_EQ(judge({op(insert, true, 1, 0, 10), op(contains, true, 2, 1, 11)}), verdict::not_linearizable);
  // insert -> false needs the key present, and nothing inserts it.
  EXPECT_EQ(judge({op(insert, false, 1, 0, 10), op(contains, false, 0, 1, 11)}), verdict::not_linearizable);
  // Started present: delete -> false needs it absent, and nothing removes it.
  key_check_options present;
  present.initially_present = true, present.initial_value = 5;
  EXPECT_EQ(judge({op(remove, false, 0, 0, 10), op(contains, true, 5, 1, 11)}, present), verdict::not_linearizable);
  // Started present with 5: a delete and an insert of 7 end with 7, not 5.
  EXPECT_EQ(judge({op(remove, true, 5, 0, 10), op(insert, true, 7, 1, 11), op(contains, true, 5, 20, 21)}, present),
            verdict::not_linearizable);
  // Two rounds: the second inserts again what the first left in place.
  EXPECT_EQ(judge({op(insert, true, 1, 0, 10), op(contains, true, 1, 1, 11), op(insert, true, 2, 20, 30), op(contains, true, 2, 21, 31)}),
            verdict::not_linearizable);
  // A pending delete called after the round cannot act inside it.
  key_op late = op(remove, false, 0, 20, never_returned);
  late.optional = true;
  EXPECT_EQ(judge({op(insert, true, 1, 0, 10), op(insert, true, 2, 1, 11), late}), verdict::not_linearizable);
  // The same pending delete called inside the round can.
  key_op early = op(remove, false, 0, 2, never_returned);
  early.optional = true;
  EXPECT_EQ(judge({op(insert, true, 1, 0, 10), op(insert, true, 2, 1, 11), early}), verdict::linearizable);
  // An error that ended before the round's last call cannot go after it.
  key_op error = op(remove, false, 0, 0, 3);
  error.optional = true;
  EXPECT_EQ(judge({error, op(insert, true, 1, 0, 10), op(insert, true, 2, 5, 11)}), verdict::linearizable);
  EXPECT_EQ(judge({op(insert, true, 1, 0, 2), error, op(insert, true, 2, 5, 11), op(contains, true, 1, 4, 11)}), verdict::not_linearizable);
}

gfsl::lin::check_result check(const std::vector<gfsl::model::op_record>& h, double timeout = 0) {
  gfsl::lin::check_options o;
  o.timeout_seconds = timeout;
  o.explain = false;
  return gfsl::lin::check_history(h, o);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The adversarial histories at a size CI affords: each decided, and the old
// search, given a few seconds, never says otherwise.
TEST(KeyChecker, AdversarialHistoriesAreDecidedAndTheSearchNeverDisagrees) {
  struct adversary {
    const char* name;
    gfsl::lin::adversarial_options o;
    verdict expected;
  };
  std::vector<adversary> cases;
  gfsl::lin::adversarial_options o;
  o.ops = 20000;
  cases.push_back({"all concurrent, one value", o, verdict::linearizable});
  o.values = 0;
  cases.push_back({"all concurrent, fresh values", o, verdict::linearizable});
  o.values = 1, o.pending_pct = 10;
  cases.push_back({"all concurrent, 10% pending", o, verdict::linearizable});
  o.pending_pct = 0, o.error_pct = 10;
  cases.push_back({"all concurrent, 10% errors", o, verdict::linearizable});
  o.error_pct = 0, o.width = 64, o.ops = 12800;
  cases.push_back({"64-wide rounds", o, verdict::linearizable});
  o.violation = true;
  cases.push_back({"64-wide rounds, one violation", o, verdict::not_linearizable});
  o.values = 0;
  cases.push_back({"64-wide rounds, fresh values, one violation", o, verdict::not_linearizable});
  o.violation = false, o.values = 1, o.error_pct = 10;
  cases.push_back({"64-wide rounds, 10% errors", o, verdict::linearizable});
  o.error_pct = 0, o.pending_pct = 1;
  o.ops = 2000;
  cases.push_back({"64-wide rounds, 1% pending", o, verdict::linearizable});
  o.pending_pct = 0, o.ops = 100000, o.keys = 10;
  cases.push_back({"10 keys, 64-wide rounds", o, verdict::linearizable});
  o.width = 0;
  cases.push_back({"10 keys, all concurrent", o, verdict::linearizable});
  for (const adversary& a : cases) {
    const auto h = gfsl::lin::adversarial_history(a.o);
    const auto t0 = std::chrono::steady_clock::now();
    const gfsl::lin::check_result r = check(h);
    const double s = seconds_since(t0);
    EXPECT_EQ(r.v, a.expected) << a.name;
    const verdict old = gfsl::lin::check_history_search(h, gfsl::lin::deadline::after_seconds(1));
    if (old != verdict::unknown) {
      EXPECT_EQ(old, r.v) << a.name << ": the search";
    }
    std::printf("%-44s %7zu ops: %-16s in %.3f s; the search alone: %s\n", a.name, h.size(), gfsl::lin::verdict_name(r.v), s,
                gfsl::lin::verdict_name(old));
  }
}

TEST(KeyChecker, AMemoryBoundGivesUnknownNeverAWrongVerdict) {
  gfsl::lin::adversarial_options o;
  o.ops = 5000;
  o.width = 64;
  o.violation = true;
  const auto h = gfsl::lin::adversarial_history(o);
  gfsl::lin::check_options co;
  co.max_memory_bytes = 1000;
  const gfsl::lin::check_result r = gfsl::lin::check_history(h, co);
  EXPECT_EQ(r.v, verdict::unknown);
  EXPECT_EQ(r.memory_bound_keys, 1u);
  co.max_memory_bytes = std::size_t{64} << 20;
  EXPECT_EQ(gfsl::lin::check_history(h, co).v, verdict::not_linearizable);

  // The search alone, on a segment it must search (a pending insert joins
  // every round after it into one), stops at its budget.
  o.violation = false;
  o.pending_pct = 2;
  const auto pending = gfsl::lin::adversarial_history(o);
  std::vector<std::uint32_t> all(pending.size());
  for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<key_op> ops = gfsl::lin::key_operations(pending, all);
  gfsl::lin::set_key_checker search;
  key_check_options tight;
  tight.memory_budget = ops.size() * 64 + 1;
  EXPECT_EQ(search.check(ops, {}, nullptr, tight), verdict::unknown);
  EXPECT_TRUE(search.out_of_memory());
  EXPECT_EQ(search.check(ops, {}, nullptr, {}), verdict::linearizable);
  EXPECT_FALSE(search.out_of_memory());
}

}  // namespace

namespace {

// The hard history families at a size CI affords (the large forms are
// bench/checker_families.cpp's). Budgets are generous: the verdicts asserted
// do not depend on the machine's speed.
gfsl::lin::check_result check_family(const gfsl::lin::hard_history& h, unsigned threads, bool all_keys = false, double explain = 0) {
  gfsl::lin::check_options o;
  o.threads = threads;
  o.all_keys = all_keys;
  o.explain_seconds = explain;
  o.key_seconds = 600;
  return gfsl::lin::check_history(h.records, o, h.unrecorded_values);
}

TEST(HardFamilies, AViolatingKeyIsReportedWhateverAHardKeyHolds) {
  for (const int pending : {0, 6}) {
    for (const bool first : {false, true}) {
      gfsl::lin::hard_options o;
      o.ops = 4000, o.in_flight = 64, o.error_pct = pending ? 0 : 10, o.pending_pct = pending;
      o.violating_key = true, o.violating_first = first, o.seed = 44 + pending;
      const gfsl::lin::hard_history h = gfsl::lin::hard_family_history(o);
      for (const unsigned threads : {1u, 2u}) {
        const gfsl::lin::check_result r = check_family(h, threads);
        ASSERT_EQ(r.v, verdict::not_linearizable) << "pending " << pending << ", first " << first << ", threads " << threads;
        ASSERT_TRUE(r.first_violation.has_value());
        EXPECT_EQ(r.first_violation->key, 2u);
        EXPECT_EQ(r.first_violation->operations, 1u);
        EXPECT_EQ(r.undecided_keys, 0u);
        // The hot key was stopped or never taken up, or found linearizable.
        EXPECT_LE(r.unchecked_keys, 1u);
      }
      // Every key, on request: the hot key is decided too, and linearizable.
      const gfsl::lin::check_result all = check_family(h, 2, true);
      EXPECT_EQ(all.v, verdict::not_linearizable);
      EXPECT_EQ(all.violating_keys, 1u);
      EXPECT_EQ(all.undecided_keys, 0u);
      EXPECT_EQ(all.unchecked_keys, 0u);
    }
  }
}

TEST(HardFamilies, AnErroredHotKeyWithAFlippedAnswerIsNotLinearizable) {
  gfsl::lin::hard_options o;
  o.ops = 2000, o.in_flight = 8, o.error_pct = 10, o.values = 2, o.unrecorded_pct = 30, o.flip = true, o.seed = 13;
  const gfsl::lin::hard_history bad = gfsl::lin::hard_family_history(o);
  EXPECT_FALSE(bad.unrecorded_values.empty());
  const gfsl::lin::check_result r = check_family(bad, 2, false, 600);
  EXPECT_EQ(r.v, verdict::not_linearizable);
  ASSERT_TRUE(r.example.has_value());
  EXPECT_TRUE(r.example->one_minimal);
  EXPECT_LE(r.example->minimal.size(), 8u);
  o.flip = false;
  const gfsl::lin::hard_history good = gfsl::lin::hard_family_history(o);
  EXPECT_EQ(check_family(good, 2).v, verdict::linearizable);

  // At a size the generic search (Wing-Gong with Lowe's memo, every move
  // tried) finishes, it agrees, with and without the flip.
  o.ops = 120;
  for (const bool flip : {true, false}) {
    o.flip = flip;
    const gfsl::lin::hard_history small = gfsl::lin::hard_family_history(o);
    const verdict v = check_family(small, 1).v;
    EXPECT_EQ(v, flip ? verdict::not_linearizable : verdict::linearizable);
    EXPECT_EQ(gfsl::lin::check_history_generic(small.records, {}, small.unrecorded_values), v) << "flip " << flip;
  }
}

// A linearizable history with pending operations, and every prefix of it
// (what was running at the cut counts as pending): each decided.
TEST(HardFamilies, LinearizablePrefixesWithPendingOperationsStayDecided) {
  gfsl::lin::hard_options o;
  o.ops = 4000, o.in_flight = 64, o.error_pct = 0, o.pending_pct = 6, o.seed = 12;
  const gfsl::lin::hard_history h = gfsl::lin::hard_family_history(o);
  std::uint64_t last = 0;
  for (const auto& r : h.records) last = std::max(last, r.call);
  for (int k = 1; k <= 8; ++k) {
    const std::uint64_t until = last * k / 8;
    gfsl::lin::hard_history prefix;
    for (const auto& r : h.records) {
      if (r.call > until) continue;
      prefix.records.push_back(r);
      if (r.ret != gfsl::model::no_stamp && r.ret > until) prefix.records.back().ret = gfsl::model::no_stamp;
    }
    const gfsl::lin::check_result r = check_family(prefix, 2);
    EXPECT_EQ(r.v, verdict::linearizable) << "prefix up to stamp " << until << " of " << last;
    // One more successful insert after the cut: still decided (either way:
    // pending deletes may have emptied the key, or not).
    gfsl::model::op_record more;
    more.op.kind = op_kind::insert;
    more.op.key = 1;
    more.op.value = 1;
    more.ok = true;
    more.call = until + 1;
    more.ret = until + 2;
    prefix.records.push_back(more);
    EXPECT_NE(check_family(prefix, 2).v, verdict::unknown) << "prefix up to stamp " << until << " and an insert";
  }
}

TEST(HardFamilies, ExplainSecondsZeroBuildsNoExplanation) {
  gfsl::lin::hard_options o;
  o.ops = 2000, o.in_flight = 8, o.error_pct = 10, o.values = 2, o.flip = true, o.seed = 13;
  const gfsl::lin::hard_history h = gfsl::lin::hard_family_history(o);
  bool told = false;
  gfsl::lin::check_options co;
  co.explain_seconds = 0;
  co.on_verdict = [&](const gfsl::lin::check_result& r) { told = r.v == verdict::not_linearizable; };
  const gfsl::lin::check_result none = gfsl::lin::check_history(h.records, co, h.unrecorded_values);
  EXPECT_TRUE(told);
  EXPECT_EQ(none.v, verdict::not_linearizable);
  EXPECT_TRUE(none.explain_skipped);
  EXPECT_FALSE(none.example.has_value());
  co.explain_seconds = 600;
  const gfsl::lin::check_result some = gfsl::lin::check_history(h.records, co, h.unrecorded_values);
  EXPECT_FALSE(some.explain_skipped);
  ASSERT_TRUE(some.example.has_value());
  EXPECT_FALSE(some.example->minimal.empty());
}

// Three keys that violate and one that does not: by default the check stops
// at the first; with all_keys it counts the three.
TEST(HardFamilies, AllKeysCountsEveryViolationAndTheDefaultStopsAtTheFirst) {
  std::vector<gfsl::model::op_record> h;
  for (gfsl::key_type k = 1; k <= 4; ++k) {
    gfsl::model::op_record r;
    r.op.kind = op_kind::contains;
    r.op.key = k;
    r.ok = k != 4;  // keys 1-3 find a value nobody inserted
    r.value = r.ok ? 9 : 0;
    r.call = 1;
    r.ret = 2;
    h.push_back(r);
  }
  gfsl::lin::check_options o;
  o.threads = 1;
  o.explain = false;
  const gfsl::lin::check_result first = gfsl::lin::check_history(h, o);
  EXPECT_EQ(first.v, verdict::not_linearizable);
  EXPECT_EQ(first.violating_keys, 1u);
  EXPECT_EQ(first.unchecked_keys, 3u);
  EXPECT_EQ(first.first_violation->key, 1u);
  o.all_keys = true;
  const gfsl::lin::check_result all = gfsl::lin::check_history(h, o);
  EXPECT_EQ(all.violating_keys, 3u);
  EXPECT_EQ(all.unchecked_keys, 0u);
}

}  // namespace
