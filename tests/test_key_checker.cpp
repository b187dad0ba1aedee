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
