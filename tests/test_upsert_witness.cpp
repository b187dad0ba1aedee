// The read-mapping test for upsert-map keys (linearizability/upsert_witness.hpp):
// held to the plain search on random small histories it applies to, with
// linearizable ones and planted violations, every witness replayed; the
// histories it must leave to the search; hand-made violations; and a hot
// key the search would take exponential time on.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "linearizability/model_search.hpp"
#include "linearizability/models.hpp"
#include "linearizability/upsert_witness.hpp"
#include "linearizability/wing_gong.hpp"
#include "traces/trace.hpp"

namespace {

using gfsl::lin::model_op;
using gfsl::lin::register_test;
using gfsl::lin::upsert_key_model;
using gfsl::lin::verdict;
using op = model_op<upsert_key_model>;
namespace codes = gfsl::lin::model_ops;

op make(std::uint8_t code, std::uint64_t call, std::uint64_t ret, bool ok, gfsl::value_type value = 0) {
  op o;
  o.call = call;
  o.ret = ret;
  o.in.code = code;
  if (code == codes::insert || code == codes::upsert) o.in.value = value;
  else o.out.value = value;
  o.out.ok = ok;
  return o;
}

void by_call(std::vector<op>& ops) {
  std::stable_sort(ops.begin(), ops.end(), [](const op& a, const op& b) { return a.call < b.call; });
}

std::string dump(const std::vector<op>& ops) {
  std::string s;
  for (const auto& o : ops) {
    s += "[" + std::to_string(o.call) + "," + std::to_string(o.ret) + "] " +
         upsert_key_model::describe_operation(o.in, o.optional ? nullptr : &o.out) + (o.optional ? " (optional)" : "") + "\n";
  }
  return s;
}

// The witness is a linearization: every completed operation once, pending
// ones at most once (with their effect), no operation after one called
// after it returned, every completed one's answer given.
void expect_replays(const std::vector<op>& ops, const std::vector<std::uint32_t>& w) {
  std::vector<int> seen(ops.size(), 0);
  for (std::uint32_t i : w) ASSERT_EQ(seen.at(i)++, 0) << "placed twice: " << i;
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].optional) ASSERT_EQ(seen[i], 1) << "left out: " << i << "\n" << dump(ops);
  }
  std::uint64_t max_call = 0;
  upsert_key_model::state s = upsert_key_model::init();
  for (std::uint32_t i : w) {
    max_call = std::max(max_call, ops[i].call);
    ASSERT_LE(max_call, ops[i].ret) << "validity at " << i << "\n" << dump(ops);
    auto next = upsert_key_model::step(s, ops[i].in, ops[i].optional ? nullptr : &ops[i].out);
    ASSERT_TRUE(next.has_value()) << "answer of " << i << "\n" << dump(ops);
    s = *next;
  }
}

// A history the test applies to: operations around the points of a
// sequential run of an upsert map whose erases only fail (an erase of a
// present key becomes a find), each written value new; then, in two of
// three, damaged: a stale read (a find answering the value before the last
// write), a read of an overwritten value or of one written later, a value
// nobody wrote, a flipped answer, an operation's interval moved.
std::vector<op> random_register_history(std::mt19937& rng, unsigned max_ops, unsigned max_spread, int& damage_kind) {
  auto pick = [&](unsigned n) { return static_cast<unsigned>(rng() % n); };
  std::vector<op> ops;
  bool present = false;
  gfsl::value_type held = 0, next_value = 1;
  std::vector<gfsl::value_type> written;
  const unsigned n = 1 + pick(max_ops);
  const unsigned spread = 1 + pick(max_spread);
  for (unsigned i = 0; i < n; ++i) {
    const std::uint64_t point = 10 * i + 10 * max_spread + 10;
    const std::uint64_t call = point - pick(spread), ret = point + pick(spread);
    const unsigned r = pick(10);
    op o;
    if (r < 3) {  // upsert
      o = make(codes::upsert, call, ret, !present, next_value);
      if (pick(6) == 0) o.out.ok_known = false;
      present = true, held = next_value, written.push_back(next_value++);
    } else if (r < 5) {  // insert
      o = make(codes::insert, call, ret, !present, next_value);
      if (!present) present = true, held = next_value, written.push_back(next_value);
      ++next_value;
    } else if (r < 6 && !present) {
      o = make(codes::erase, call, ret, false);
    } else {
      o = make(codes::find, call, ret, present, present ? held : 0);
      if (present && pick(8) == 0) o.out.value_known = false;
    }
    if (pick(12) == 0 && o.in.code != codes::erase) {
      // Pending (a find: left out; a write: took effect at its point, as the
      // run says), or ended in an error, keeping its return stamp.
      o.optional = true;
      if (pick(2)) o.ret = gfsl::lin::never_returned;
    }
    ops.push_back(o);
  }
  damage_kind = -1;
  if (pick(3) != 0 && !ops.empty()) {
    damage_kind = static_cast<int>(pick(5));
    op& o = ops[pick(static_cast<unsigned>(ops.size()))];
    switch (damage_kind) {
      case 0:  // a read of another written value (stale, overwritten, or not yet written)
        if (!written.empty()) {
          o = make(codes::find, o.call, o.ret, true, written[pick(static_cast<unsigned>(written.size()))]);
        }
        break;
      case 1:  // a value nobody wrote
        o = make(codes::find, o.call, o.ret, true, 1000 + pick(3));
        break;
      case 2:  // the answer flipped (an erase that would succeed stays out)
        if (o.in.code != codes::erase) o.out.ok = !o.out.ok;
        if (o.in.code == codes::find && !o.out.ok) o.out.value = 0;
        break;
      case 3: {  // the interval moved earlier: a read before its write, a lost write
        const std::uint64_t back = 1 + pick(40);
        o.call = o.call > back ? o.call - back : 0;
        o.ret = std::max(o.call, o.ret > back ? o.ret - back : 0);
        break;
      }
      default: {  // the interval moved later
        const std::uint64_t ahead = 1 + pick(40);
        o.call += ahead;
        if (o.ret != gfsl::lin::never_returned) o.ret += ahead;
        break;
      }
    }
  }
  by_call(ops);
  return ops;
}

TEST(UpsertRegisterTest, AgreesWithThePlainSearchOnRandomSmallHistories) {
  std::mt19937 rng(11);
  int linearizable = 0, violating = 0, damaged_and_violating = 0;
  const int histories = 50000;
  for (int h = 0; h < histories; ++h) {
    int damage = -1;
    const std::vector<op> ops = random_register_history(rng, 9, 30, damage);
    const auto t = gfsl::lin::upsert_register_test(ops);
    ASSERT_NE(t.outcome, register_test::not_applicable) << t.why << "\n" << dump(ops);
    const verdict want = gfsl::lin::wing_gong_check<upsert_key_model>(ops, {});
    const verdict got = t.outcome == register_test::linearizable ? verdict::linearizable : verdict::not_linearizable;
    ASSERT_EQ(got, want) << "history " << h << " (" << t.why << "):\n" << dump(ops);
    if (got == verdict::linearizable) {
      expect_replays(ops, t.witness);
      ++linearizable;
    } else {
      ++violating;
      damaged_and_violating += damage >= 0 ? 1 : 0;
    }
  }
  EXPECT_GT(linearizable, histories / 4);
  EXPECT_GT(violating, histories / 5);
  EXPECT_EQ(damaged_and_violating, violating);  // undamaged histories are linearizable by construction
}

// Longer and more concurrent: against the exact search of model_search.hpp.
TEST(UpsertRegisterTest, AgreesWithTheModelSearchOnRandomHistoriesOfUpTo40Operations) {
  std::mt19937 rng(12);
  int linearizable = 0, violating = 0;
  for (int h = 0; h < 10000; ++h) {
    int damage = -1;
    const std::vector<op> ops = random_register_history(rng, 40, 60, damage);
    const auto t = gfsl::lin::upsert_register_test(ops);
    ASSERT_NE(t.outcome, register_test::not_applicable) << t.why;
    const verdict want = gfsl::lin::model_key_search<upsert_key_model>(ops, {});
    ASSERT_NE(want, verdict::unknown);
    const verdict got = t.outcome == register_test::linearizable ? verdict::linearizable : verdict::not_linearizable;
    ASSERT_EQ(got, want) << "history " << h << " (" << t.why << "):\n" << dump(ops);
    if (got == verdict::linearizable) expect_replays(ops, t.witness);
    (got == verdict::linearizable ? linearizable : violating) += 1;
  }
  EXPECT_GT(linearizable, 400);
  EXPECT_GT(violating, 400);
}

TEST(UpsertRegisterTest, LeavesToTheSearchWhatItsProofDoesNotCover) {
  const auto erased = gfsl::lin::upsert_register_test({make(codes::upsert, 1, 2, true, 5), make(codes::erase, 3, 4, true, 5)});
  // (a pending erase, too: below)
  EXPECT_EQ(erased.outcome, register_test::not_applicable);
  EXPECT_EQ(erased.why, "an erase that succeeded");
  const auto twice = gfsl::lin::upsert_register_test({make(codes::upsert, 1, 2, true, 5), make(codes::upsert, 3, 4, false, 5)});
  EXPECT_EQ(twice.outcome, register_test::not_applicable);
  EXPECT_EQ(twice.why, "a value written twice");
  op pending = make(codes::upsert, 3, gfsl::lin::never_returned, false, 6);
  pending.optional = true;
  op pending_erase = make(codes::erase, 3, gfsl::lin::never_returned, false);
  pending_erase.optional = true;
  const auto open = gfsl::lin::upsert_register_test({make(codes::upsert, 1, 2, true, 5), pending_erase});
  EXPECT_EQ(open.outcome, register_test::not_applicable);
  // A pending write is decided: unread, it is left out or taken as the first write.
  EXPECT_EQ(gfsl::lin::upsert_register_test({make(codes::upsert, 1, 2, true, 5), pending}).outcome, register_test::linearizable);
  op pending_insert = make(codes::insert, 1, gfsl::lin::never_returned, false, 6);
  pending_insert.optional = true;
  EXPECT_EQ(gfsl::lin::upsert_register_test({pending_insert, make(codes::insert, 3, 4, false, 9)}).outcome, register_test::linearizable);
  EXPECT_EQ(gfsl::lin::upsert_register_test({make(codes::insert, 0, 0, false, 9), pending_insert}).outcome, register_test::not_linearizable);
  // A pending find is left out, and the rest decided.
  op pending_find = make(codes::find, 3, gfsl::lin::never_returned, false);
  pending_find.optional = true;
  EXPECT_EQ(gfsl::lin::upsert_register_test({make(codes::upsert, 1, 2, true, 5), pending_find}).outcome, register_test::linearizable);
}

register_test outcome(std::vector<op> ops) {
  by_call(ops);
  return gfsl::lin::upsert_register_test(ops).outcome;
}

TEST(UpsertRegisterTest, RejectsThePlantedShapesAndAcceptsTheirRelatives) {
  using gfsl::lin::register_test;
  const auto yes = register_test::linearizable, no = register_test::not_linearizable;
  // Stale read: 5 replaced by 6, then a find called later answers 5.
  EXPECT_EQ(outcome({make(codes::upsert, 1, 2, true, 5), make(codes::upsert, 3, 4, false, 6), make(codes::find, 5, 6, true, 5)}), no);
  // ... concurrent with the replacing upsert, it may read 5.
  EXPECT_EQ(outcome({make(codes::upsert, 1, 2, true, 5), make(codes::upsert, 3, 6, false, 6), make(codes::find, 5, 7, true, 5)}), yes);
  // Lost write: 6 completed, then two finds in turn see 5 and 6... and 5 again.
  EXPECT_EQ(outcome({make(codes::upsert, 1, 10, true, 5), make(codes::upsert, 1, 10, false, 6), make(codes::find, 11, 12, true, 6),
                     make(codes::find, 13, 14, true, 5)}),
            no);
  // Read of an overwritten value: 5's period ended before the read began.
  EXPECT_EQ(outcome({make(codes::insert, 1, 2, true, 5), make(codes::upsert, 3, 4, false, 7), make(codes::find, 2, 8, true, 7),
                     make(codes::find, 9, 10, true, 5)}),
            no);
  // Read before its write: the find returned before the upsert was called.
  EXPECT_EQ(outcome({make(codes::find, 1, 2, true, 5), make(codes::upsert, 3, 4, true, 5)}), no);
  // A read of the start state after a value was read.
  EXPECT_EQ(outcome({make(codes::upsert, 1, 2, true, 5), make(codes::find, 3, 4, true, 5), make(codes::find, 5, 6, false)}), no);
  EXPECT_EQ(outcome({make(codes::upsert, 1, 2, true, 5), make(codes::find, 3, 4, true, 5), make(codes::erase, 1, 6, false)}), yes);
  // Two writes that found the key absent: no erase between them.
  EXPECT_EQ(outcome({make(codes::insert, 1, 2, true, 5), make(codes::upsert, 1, 2, true, 6)}), no);
  // An upsert that replaced must not come first; here nothing else can.
  EXPECT_EQ(outcome({make(codes::upsert, 1, 2, false, 5), make(codes::insert, 3, 4, true, 6)}), no);
  EXPECT_EQ(outcome({make(codes::upsert, 1, 4, false, 5), make(codes::insert, 3, 4, true, 6)}), yes);
  // insert -> false needs a value there: before any write returned, none.
  EXPECT_EQ(outcome({make(codes::insert, 1, 2, false, 9), make(codes::upsert, 3, 4, true, 6)}), no);
  EXPECT_EQ(outcome({make(codes::insert, 3, 5, false, 9), make(codes::upsert, 1, 4, true, 6)}), yes);
  // With answers not recorded, the first write is whichever fits.
  op a = make(codes::upsert, 1, 10, false, 5), b = make(codes::upsert, 1, 10, false, 6);
  a.out.ok_known = b.out.ok_known = false;
  EXPECT_EQ(outcome({a, b, make(codes::find, 11, 12, true, 5)}), yes);
  EXPECT_EQ(outcome({a, b, make(codes::find, 11, 12, true, 5), make(codes::find, 13, 14, true, 6)}), no);
  EXPECT_EQ(outcome({a, b, make(codes::find, 2, 3, true, 6), make(codes::find, 4, 12, true, 5)}), yes);
}

// Forty concurrent upserts of distinct values nobody reads until a find of
// each of two in turn, contradicting: the search's classes do not merge
// distinct values, the test decides it at once either way.
TEST(UpsertRegisterTest, DecidesAtOnceWhatTheSearchWouldEnumerate) {
  std::vector<op> ops;
  for (unsigned i = 0; i < 40; ++i) {
    op u = make(codes::upsert, 1, 100, false, 1 + i);
    u.out.ok_known = false;
    ops.push_back(u);
  }
  ops.push_back(make(codes::find, 101, 102, true, 7));
  ops.push_back(make(codes::find, 103, 104, true, 8));
  by_call(ops);
  EXPECT_EQ(gfsl::lin::upsert_register_test(ops).outcome, register_test::not_linearizable);
  ops.pop_back();
  const auto t = gfsl::lin::upsert_register_test(ops);
  ASSERT_EQ(t.outcome, register_test::linearizable);
  expect_replays(ops, t.witness);
}

// Through gfsl check's library path: keys the test applies to and keys it
// does not, in one history, with one violation on a register key.
TEST(UpsertRegisterTest, TheWholeHistoryCheckUsesItAndKeepsTheSearchForTheRest) {
  std::vector<gfsl::model::op_record> h;
  std::vector<std::uint8_t> c;
  auto add = [&](gfsl::key_type key, std::uint8_t code, gfsl::op_kind kind, bool ok, gfsl::value_type v, std::uint64_t call, std::uint64_t ret) {
    gfsl::model::op_record r;
    r.team = static_cast<gfsl::team_id>(h.size());
    r.op.key = key;
    r.op.kind = kind;
    if (kind == gfsl::op_kind::insert) r.op.value = v;
    else r.value = v;
    r.ok = ok;
    r.call = call;
    r.ret = ret;
    h.push_back(r);
    c.push_back(code);
  };
  using gfsl::op_kind;
  // key 1: a register, linearizable; key 2: an erase succeeded (the search); key 3: a stale read.
  add(1, codes::upsert, op_kind::insert, true, 5, 1, 2);
  add(1, codes::upsert, op_kind::insert, false, 6, 3, 4);
  add(1, codes::find, op_kind::contains, true, 6, 5, 6);
  add(2, codes::upsert, op_kind::insert, true, 5, 1, 2);
  add(2, codes::upsert, op_kind::insert, false, 6, 3, 4);
  add(2, codes::erase, op_kind::remove, true, 6, 5, 6);
  add(3, codes::upsert, op_kind::insert, true, 5, 1, 2);
  add(3, codes::upsert, op_kind::insert, false, 6, 3, 4);
  add(3, codes::find, op_kind::contains, true, 5, 5, 6);
  const auto r = gfsl::lin::check_history_model(gfsl::lin::model_kind::upsert_map, h, c, {});
  EXPECT_EQ(r.v, verdict::not_linearizable);
  EXPECT_EQ(r.violating_keys, 1u);
  ASSERT_TRUE(r.failing_key.has_value());
  EXPECT_EQ(*r.failing_key, 3u);
  h.pop_back(), c.pop_back();
  EXPECT_EQ(gfsl::lin::check_history_model(gfsl::lin::model_kind::upsert_map, h, c, {}).v, verdict::linearizable);
}

}  // namespace
