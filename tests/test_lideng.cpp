// The Li-Deng skiplist (core/lideng/): its sequential behaviour against
// std::map (a RapidCheck property); batches of one kind under the
// deterministic scheduler, each batch's history checked for linearizability
// from the contents before it and its invariants checked after it (and, in
// `fixed`, between any two accesses); the workloads that stress a batch's
// arrays (one key twice in a batch, neighbouring deletes, the first and last
// positions, tall nodes, a full pool); the mixed batch the paper does not
// allow, shown to break; the snapshot invariants on hand-made lists they must
// reject; and the mutant catalog, each entry killed.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/host_team.hpp"
#include "core/lideng/algorithm.hpp"
#include "core/lideng/host_subject.hpp"
#include "core/lideng/invariants.hpp"
#include "core/lideng/layout.hpp"
#include "core/lideng/mutants.hpp"
#include "core/lideng/subject.hpp"
#include "core/registry.hpp"
#include "exec/host_runner.hpp"
#include "exec/sched/scheduler.hpp"
#include "linearizability/checker.hpp"
#include "model/history.hpp"
#include "tests/gfsl_binary.hpp"

namespace {

using gfsl::key_type;
using gfsl::op_kind;
using gfsl::op_result;
using gfsl::status;
using gfsl::value_type;
using namespace gfsl::lideng;
using team16 = gfsl::host_team<16>;
namespace sched = gfsl::sched;

const char* kind_name(op_kind k) {
  return k == op_kind::insert ? "insert" : k == op_kind::remove ? "delete" : "contains";
}

// A fresh list.
struct list {
  params p;
  std::vector<std::uint64_t> words;
  std::uint64_t seeds = 0;  // lone operations each get a team seed of their own (heights differ)
  explicit list(params prm) : p(prm), words(word_count(prm)) {
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = initial_word(i, p);
  }
  contents now() const { return inspect(words.data(), words.size(), p); }
};

// One operation by team 0 alone: a batch of one (no barrier).
template <lideng_variant V = lideng_variant::fixed>
op_result run_alone(list& t, op_kind kind, key_type k, value_type v = 0) {
  params one = t.p;
  one.batch = 1;
  team16 tm(0, ++t.seeds, t.words.data(), nullptr, false, t.words.size());
  algorithm<team16, V> a(tm, t.words.data(), one);
  return a.apply(kind, k, v);
}

std::vector<std::string> problems_of(const list& t, bool quiescent = true) {
  std::vector<std::string> out;
  for (const auto& v : check_lideng_snapshot(t.words.data(), t.words.size(), t.p, quiescent).violations) {
    out.push_back(v.line());
  }
  return out;
}

// ---- Sequential behaviour against std::map -----------------------------------

struct seq_op {
  int kind;  // 0 insert, 1 delete, 2 contains
  key_type key;
};

template <lideng_variant V>
void sequential_against_map(int levels, const std::vector<seq_op>& ops) {
  const std::uint32_t inserts = static_cast<std::uint32_t>(std::count_if(ops.begin(), ops.end(), [](const seq_op& o) { return o.kind == 0; }));
  list t(params{levels, 1, inserts + first_free_node});
  team16 tm(0, 7, t.words.data(), nullptr, false, t.words.size());
  algorithm<team16, V> a(tm, t.words.data(), t.p);
  std::map<key_type, value_type> m;
  value_type next_value = 1;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const op_kind kind = ops[i].kind == 0 ? op_kind::insert : ops[i].kind == 1 ? op_kind::remove : op_kind::contains;
    const key_type k = ops[i].key;
    const value_type v = next_value++;
    const op_result got = a.apply(kind, k, v);
    op_result want{status::ok, false, 0};
    if (kind == op_kind::insert) {
      want.ok = m.emplace(k, v).second;
    } else if (const auto it = m.find(k); it != m.end()) {
      want = {status::ok, true, it->second};
      if (kind == op_kind::remove) m.erase(it);
    }
    RC_ASSERT(got.st == status::ok);
    RC_ASSERT(got.ok == want.ok);
    RC_ASSERT(got.value == want.value);
    const auto probs = problems_of(t);
    if (!probs.empty()) RC_FAIL("after op " + std::to_string(i) + " " + kind_name(kind) + "(" + std::to_string(k) + "): " + probs.front());
  }
  const contents c = t.now();
  const std::vector<std::pair<key_type, value_type>> want(m.begin(), m.end());
  RC_ASSERT(c.entries == want);
}

rc::Gen<std::vector<seq_op>> gen_seq_ops() {
  return rc::gen::mapcat(rc::gen::inRange<key_type>(1, 40), [](key_type range) {
    return rc::gen::container<std::vector<seq_op>>(rc::gen::construct<seq_op>(
        rc::gen::weightedElement<int>({{5, 0}, {3, 1}, {2, 2}}), rc::gen::inRange<key_type>(1, range + 1)));
  });
}

RC_GTEST_PROP(LiDengSequential, FixedMatchesStdMap, ()) {
  const int levels = *rc::gen::inRange(1, max_levels + 1);
  sequential_against_map<lideng_variant::fixed>(levels, *gen_seq_ops());
}
// One operation at a time, there is nothing to deduplicate: published is a set too.
RC_GTEST_PROP(LiDengSequential, PublishedMatchesStdMap, ()) {
  const int levels = *rc::gen::inRange(1, max_levels + 1);
  sequential_against_map<lideng_variant::published>(levels, *gen_seq_ops());
}

TEST(LiDengSequential, LongRunsBuildTallLevels) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    list t(params{8, 1, 3000});
    team16 tm(0, seed, t.words.data(), nullptr, false, t.words.size());
    algorithm<team16> a(tm, t.words.data(), t.p);
    std::set<key_type> s;
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 2500; ++i) {
      const key_type k = 1 + static_cast<key_type>(rng() % 400);
      const int draw = static_cast<int>(rng() % 10);
      if (draw < 5) {
        ASSERT_EQ(a.apply(op_kind::insert, k, k).ok, s.insert(k).second) << "op " << i;
      } else if (draw < 8) {
        ASSERT_EQ(a.apply(op_kind::remove, k, 0).ok, s.erase(k) == 1) << "op " << i;
      } else {
        ASSERT_EQ(a.apply(op_kind::contains, k, 0).ok, s.count(k) == 1) << "op " << i;
      }
    }
    const lideng_report r = check_lideng_snapshot(t.words.data(), t.words.size(), t.p);
    ASSERT_TRUE(r.violations.empty()) << r.violations.front().line();
    EXPECT_EQ(r.live.size(), s.size());
    // Heights are geometric with p = 1/2: about half the keys on level 1, a
    // quarter on level 2; the top levels are reached.
    EXPECT_GT(r.level_sizes[1], s.size() / 4);
    EXPECT_LT(r.level_sizes[1], 3 * s.size() / 4);
    EXPECT_GT(r.level_sizes[4], 0u);
  }
}

TEST(LiDengSequential, KeysOutOfRangeAreRefusedAndAFullPoolIsReported) {
  list t(params{4, 1, 4});  // room for two nodes
  EXPECT_EQ(run_alone(t, op_kind::insert, 0).st, status::key_out_of_range);
  EXPECT_EQ(run_alone(t, op_kind::insert, gfsl::key_empty).st, status::key_out_of_range);
  EXPECT_TRUE(run_alone(t, op_kind::insert, 5, 50).ok);
  EXPECT_TRUE(run_alone(t, op_kind::insert, 6, 60).ok);
  EXPECT_EQ(run_alone(t, op_kind::insert, 7, 70).st, status::pool_exhausted);
  EXPECT_EQ(t.words[error_word_index], gfsl::error_pool_exhausted);
  EXPECT_EQ(t.now().entries, (std::vector<std::pair<key_type, value_type>>{{5, 50}, {6, 60}}));
  EXPECT_TRUE(problems_of(t).empty()) << problems_of(t).front();
  EXPECT_FALSE(run_alone(t, op_kind::insert, 5, 51).ok) << "a present key needs no node";
}

TEST(LiDengLayout, DescribesWords) {
  const params p{8, 4, 10};
  EXPECT_EQ(describe_word(p, barrier_word), "header: barrier");
  EXPECT_EQ(describe_word(p, slot_offset(2) + 3), "slot 2 pre/next[1]");
  EXPECT_EQ(describe_word(p, node_offset(0) + forward_word0), "node 0 (head) forward[0]");
  EXPECT_EQ(describe_word(p, node_offset(7) + height_word), "node 7 height");
  EXPECT_EQ(describe_word(p, node_offset(10)), "word " + std::to_string(node_offset(10)) + " (past the pool)");
  EXPECT_EQ(validate(params{15, 1, 10}), "levels 15 is outside 1..14");
  EXPECT_EQ(validate(params{8, 17, 10}), "batch 17 is outside 1..16 (one slot per team)");
  EXPECT_EQ(validate(params{8, 1, 1}), "pool of 1 nodes has no room for head and tail");
}

// ---- Batches under the deterministic scheduler -------------------------------

struct batch_op {
  op_kind kind = op_kind::contains;
  key_type key = 0;
  value_type value = 0;
};
using batch = std::vector<batch_op>;  // one operation per team, team i the i-th

std::string show(const batch& b) {
  std::string s;
  for (std::size_t i = 0; i < b.size(); ++i) {
    s += (i ? ", " : "") + std::string("team ") + std::to_string(i) + " " + kind_name(b[i].kind) + "(" +
         std::to_string(b[i].key) + ")";
  }
  return s;
}

struct batch_outcome {
  std::vector<std::string> problems;  // the first of each kind of check that failed
  std::vector<gfsl::model::op_record> records;
  sched::outcome run;
};

struct run_setup {
  std::uint64_t seed = 1;
  sched::granularity gran = sched::granularity::lane;
  sched::strategy strat = sched::strategy::random;
  lideng_mutant mut = lideng_mutant::none;
  bool mid_run_checks = true;  // fixed only: every mid-run invariant at every step
  bool record = false;         // keep the accesses (for printing an interleaving)
  sched::memory mem = sched::memory::sc;
  std::uint64_t* stale_reads = nullptr;  // ptx: where to add the loads that returned an older store
};

// The history of a batch started on the list `before` holds, checked as a
// whole history: `before` as completed inserts, the batch, then a read of
// every key of `keys` as the list holds it afterwards (so that a lost insert
// or a delete that left its key shows in the answers).
gfsl::lin::verdict check_batch(const std::vector<std::pair<key_type, value_type>>& before,
                               const std::vector<gfsl::model::op_record>& records, const contents& after,
                               key_type max_key) {
  std::vector<gfsl::model::operation> prefill;
  for (const auto& [k, v] : before) prefill.push_back({op_kind::insert, k, v});
  std::vector<gfsl::model::op_record> h = gfsl::model::full_history(prefill, records);
  std::uint64_t clock = 0;
  for (const auto& r : h) clock = std::max(clock, std::max(r.call, r.ret == gfsl::model::no_stamp ? 0 : r.ret));
  std::map<key_type, value_type> held;
  for (const auto& [k, v] : after.entries) held.emplace(k, v);  // a key twice: the unique-keys invariant reports it
  for (key_type k = 1; k <= max_key; ++k) {
    gfsl::model::op_record r;
    r.team = 99;
    r.op = {op_kind::contains, k, 0};
    const auto it = held.find(k);
    r.ok = it != held.end();
    r.value = r.ok ? it->second : 0;
    r.call = ++clock;
    r.ret = ++clock;
    h.push_back(r);
  }
  gfsl::lin::check_options co;
  co.threads = 1;
  co.explain_seconds = 0;
  return gfsl::lin::check_history(h, co).v;
}

// Runs one batch on `t` under the scheduler (one fiber per team) and judges it.
template <lideng_variant V, bool Mutable = false>
batch_outcome run_batch(list& t, const batch& b, const run_setup& rs, key_type max_key) {
  batch_outcome out;
  const std::vector<std::pair<key_type, value_type>> before = t.now().entries;
  sched::options o;
  o.seed = rs.seed;
  o.gran = rs.gran;
  o.strat = rs.strat;
  o.pct_steps = rs.gran == sched::granularity::lane ? 3000 : 300;
  o.record_accesses = rs.record;
  o.chunk_words = node_words;
  o.livelock_steps = 200000;
  o.mem = rs.mem;
  o.memory_base = t.words.data();
  o.memory_words = t.words.size();
  std::string mid;
  if (V == lideng_variant::fixed && rs.mid_run_checks) {
    o.check_every = 1;
    o.on_check = [&](std::uint64_t step) {
      if (!mid.empty()) return;
      const auto r = check_lideng_snapshot(t.words.data(), t.words.size(), t.p, false);
      if (!r.violations.empty()) mid = "mid-run, step " + std::to_string(step) + ": " + r.violations.front().line();
    };
  }
  sched::scheduler s(o);
  std::uint64_t clock = gfsl::model::first_free_stamp(before.size());
  out.records.resize(b.size());
  std::vector<std::function<void()>> bodies;
  for (std::size_t i = 0; i < b.size(); ++i) {
    bodies.push_back([&, i] {
      team16 tm(static_cast<gfsl::team_id>(i), rs.seed * 131 + t.seeds, t.words.data(), &s, false, t.words.size());
      algorithm<team16, V, Mutable> a(tm, t.words.data(), t.p, rs.mut);
      gfsl::model::op_record& r = out.records[i];
      r.team = static_cast<gfsl::team_id>(i);
      r.op = {b[i].kind, b[i].key, b[i].value};
      s.stamp();
      r.call = clock++;
      try {
        const op_result got = a.apply(b[i].kind, b[i].key, b[i].value);
        r.st = got.st;
        r.ok = got.ok;
        r.value = got.value;
      } catch (const gfsl::run_stopped&) {
        r.st = status::stopped;
      } catch (const gfsl::access_fault&) {
        r.st = status::corrupt;
      }
      s.stamp();
      r.ret = clock++;
      s.completed_operation();
    });
  }
  ++t.seeds;
  out.run = s.run(std::move(bodies));
  if (rs.stale_reads) *rs.stale_reads += out.run.stale_reads;
  if (out.run.reason != sched::stop_reason::completed) {
    out.problems.push_back(std::string("run stopped: ") + sched::name(out.run.reason) + ": " + out.run.report);
  }
  if (!mid.empty()) out.problems.push_back(mid);
  const contents after = t.now();
  for (const auto& p : after.problems) {
    out.problems.push_back("after the batch: " + p);
    break;
  }
  for (const auto& r : out.records) {
    if (r.st == status::corrupt || r.st == status::stopped) {
      out.problems.push_back(std::string("team ") + std::to_string(r.team) + ": " + gfsl::status_name(r.st));
      break;
    }
  }
  if (check_batch(before, out.records, after, max_key) != gfsl::lin::verdict::linearizable) {
    out.problems.push_back("the batch's history is not linearizable: " + show(b));
  }
  return out;
}

// A workload: a prefill (run alone, in order) and batches of one kind each.
struct workload {
  params p;
  std::vector<key_type> prefill;
  std::vector<batch> batches;
  key_type max_key = 0;
};

// Runs the workload's batches one by one; the first problem, with its batch.
template <lideng_variant V, bool Mutable = false>
std::string run_workload(const workload& w, run_setup rs) {
  list t(w.p);
  t.seeds = rs.seed * 1000;
  for (key_type k : w.prefill) run_alone<V>(t, op_kind::insert, k, k * 10);
  const auto pre = problems_of(t);
  if (!pre.empty()) return "after the prefill: " + pre.front();
  for (std::size_t i = 0; i < w.batches.size(); ++i) {
    rs.seed = rs.seed * 7919 + i;
    const batch_outcome o = run_batch<V, Mutable>(t, w.batches[i], rs, w.max_key);
    if (!o.problems.empty()) return "batch " + std::to_string(i) + " (" + show(w.batches[i]) + "): " + o.problems.front();
  }
  return {};
}

// Random batches of one kind each, keys in [1, range]; `distinct`: no key
// twice in a batch.
workload random_batches(std::uint64_t seed, std::uint32_t teams, key_type range, int batches, bool distinct, int levels = 4) {
  std::mt19937_64 rng(seed);
  workload w;
  w.max_key = range;
  w.p = params{levels, teams, static_cast<std::uint32_t>(first_free_node + range + teams * batches)};
  for (key_type k = 1; k <= range; ++k) {
    if (rng() % 2) w.prefill.push_back(k);
  }
  for (int i = 0; i < batches; ++i) {
    const int draw = static_cast<int>(rng() % 10);
    const op_kind kind = draw < 4 ? op_kind::insert : draw < 8 ? op_kind::remove : op_kind::contains;
    std::vector<key_type> keys;
    for (key_type k = 1; k <= range; ++k) keys.push_back(k);
    std::shuffle(keys.begin(), keys.end(), rng);
    batch b;
    for (std::uint32_t j = 0; j < teams; ++j) {
      const key_type k = distinct ? keys[j % keys.size()] : 1 + static_cast<key_type>(rng() % range);
      b.push_back({kind, k, static_cast<value_type>(1000 * (i + 1) + j)});
    }
    w.batches.push_back(b);
  }
  return w;
}

TEST(LiDengBatches, FixedBatchesOfOneKindAreLinearizable) {
  int runs = 0;
  for (sched::granularity g : {sched::granularity::chunk, sched::granularity::lane}) {
    for (sched::strategy st : {sched::strategy::random, sched::strategy::pct}) {
      for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        const std::uint32_t teams = 2 + static_cast<std::uint32_t>(seed % 7);  // 2 .. 8
        const bool distinct = seed % 2 == 0;
        const workload w = random_batches(seed, teams, 12, 6, distinct);
        run_setup rs;
        rs.seed = seed;
        rs.gran = g;
        rs.strat = st;
        const std::string p = run_workload<lideng_variant::fixed>(w, rs);
        ASSERT_TRUE(p.empty()) << sched::name(g) << " " << sched::name(st) << " seed " << seed << ": " << p;
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 160);
}

// Under the PTX model a load may return an older store than the latest:
// the barrier's acq_rel arrival and acquire wait are what make the previous
// batch's links and this batch's slots visible (the memory-order paragraph
// of algorithm.hpp).
TEST(LiDengBatches, FixedBatchesHoldUnderThePtxModel) {
  std::uint64_t stale = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const workload w = random_batches(seed, 2 + static_cast<std::uint32_t>(seed % 7), 12, 6, seed % 2 == 0);
    run_setup rs;
    rs.seed = seed;
    rs.mem = sched::memory::ptx;
    rs.stale_reads = &stale;
    ASSERT_EQ(run_workload<lideng_variant::fixed>(w, rs), "") << "seed " << seed;
  }
  EXPECT_GT(stale, 100u) << "loads returned older stores";
  std::cout << "ptx: " << stale << " loads returned an older store than the latest\n";
}

// Duplicates inside one batch: the paper's steps link a key twice.
workload duplicate_inserts() {
  workload w;
  w.p = params{3, 4, 16};
  w.prefill = {10, 20};
  w.max_key = 30;
  w.batches = {{{op_kind::insert, 15, 1}, {op_kind::insert, 15, 2}, {op_kind::insert, 5, 3}, {op_kind::insert, 15, 4}}};
  return w;
}
workload duplicate_deletes() {
  workload w;
  w.p = params{3, 3, 16};
  w.prefill = {10, 15, 20};
  w.max_key = 30;
  w.batches = {{{op_kind::remove, 15, 0}, {op_kind::remove, 10, 0}, {op_kind::remove, 15, 0}}};
  return w;
}

TEST(LiDengBatches, FixedTakesAKeyTwiceInABatchOnce) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    run_setup rs;
    rs.seed = seed;
    EXPECT_EQ(run_workload<lideng_variant::fixed>(duplicate_inserts(), rs), "") << "seed " << seed;
    EXPECT_EQ(run_workload<lideng_variant::fixed>(duplicate_deletes(), rs), "") << "seed " << seed;
  }
  // And the answers: the lowest slot of a key acts for it.
  list t(params{3, 4, 16});
  for (key_type k : {10u, 20u}) run_alone(t, op_kind::insert, k, k);
  const batch_outcome o = run_batch<lideng_variant::fixed>(t, duplicate_inserts().batches[0], {}, 30);
  EXPECT_TRUE(o.problems.empty()) << o.problems.front();
  EXPECT_TRUE(o.records[0].ok);
  EXPECT_FALSE(o.records[1].ok);
  EXPECT_TRUE(o.records[2].ok);
  EXPECT_FALSE(o.records[3].ok);
  EXPECT_EQ(t.now().entries, (std::vector<std::pair<key_type, value_type>>{{5, 3}, {10, 10}, {15, 1}, {20, 20}}));
}

TEST(LiDengBatches, PublishedLinksAKeyTwiceInABatchTwice) {
  // Every interleaving: the paper's steps decide from E1's reads alone.
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    run_setup rs;
    rs.seed = seed;
    const std::string ins = run_workload<lideng_variant::published>(duplicate_inserts(), rs);
    EXPECT_NE(ins.find("unique-keys"), std::string::npos) << "seed " << seed << ": " << ins;
    const std::string del = run_workload<lideng_variant::published>(duplicate_deletes(), rs);
    EXPECT_NE(del.find("not linearizable"), std::string::npos) << "seed " << seed << ": " << del;
  }
  list t(params{3, 4, 16});
  for (key_type k : {10u, 20u}) run_alone<lideng_variant::published>(t, op_kind::insert, k, k);
  const batch_outcome o = run_batch<lideng_variant::published>(t, duplicate_inserts().batches[0], {}, 30);
  EXPECT_TRUE(o.records[0].ok && o.records[1].ok && o.records[3].ok) << "three inserts of 15 answer true";
  EXPECT_EQ(t.now().entries, (std::vector<std::pair<key_type, value_type>>{{5, 3}, {10, 10}, {15, 1}, {15, 2}, {15, 4}, {20, 20}}));
  std::cout << "published, one insert batch holding 15 three times: " << o.problems.front() << "\n";
}

TEST(LiDengBatches, PublishedIsLinearizableWithDistinctKeys) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const workload w = random_batches(seed, 2 + static_cast<std::uint32_t>(seed % 7), 12, 6, true);
    run_setup rs;
    rs.seed = seed;
    rs.gran = sched::granularity::chunk;
    ASSERT_EQ(run_workload<lideng_variant::published>(w, rs), "") << "seed " << seed;
  }
}

// Neighbouring deletes (runs of E5's preprocessing), the first and last
// positions, and every node as tall as the list.
TEST(LiDengBatches, NeighbouringDeletesAndTheEnds) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    workload w;
    w.p = params{static_cast<int>(1 + seed % 3), 8, 64};
    for (key_type k = 1; k <= 20; ++k) w.prefill.push_back(k);
    w.max_key = 40;
    w.batches = {
        // a run of four, a run of two, the first and the last key
        {{op_kind::remove, 5}, {op_kind::remove, 6}, {op_kind::remove, 7}, {op_kind::remove, 8},
         {op_kind::remove, 12}, {op_kind::remove, 13}, {op_kind::remove, 1}, {op_kind::remove, 20}},
        // back into the gaps, and past both ends of the list
        {{op_kind::insert, 6, 1}, {op_kind::insert, 7, 2}, {op_kind::insert, 5, 3}, {op_kind::insert, 40, 4},
         {op_kind::insert, 1, 5}, {op_kind::insert, 39, 6}, {op_kind::insert, 13, 7}, {op_kind::insert, 12, 8}},
        // everything from the front: one run from the head
        {{op_kind::remove, 1}, {op_kind::remove, 2}, {op_kind::remove, 3}, {op_kind::remove, 4},
         {op_kind::remove, 5}, {op_kind::remove, 6}, {op_kind::remove, 7}, {op_kind::remove, 9}},
        // everything at the back: one run to the tail
        {{op_kind::remove, 40}, {op_kind::remove, 39}, {op_kind::remove, 19}, {op_kind::remove, 18},
         {op_kind::remove, 17}, {op_kind::remove, 16}, {op_kind::remove, 15}, {op_kind::remove, 14}},
        {{op_kind::contains, 8}, {op_kind::contains, 10}, {op_kind::contains, 11}, {op_kind::contains, 12},
         {op_kind::contains, 13}, {op_kind::contains, 20}, {op_kind::contains, 1}, {op_kind::contains, 14}},
    };
    run_setup rs;
    rs.seed = seed;
    rs.gran = seed % 2 ? sched::granularity::lane : sched::granularity::chunk;
    ASSERT_EQ(run_workload<lideng_variant::fixed>(w, rs), "") << "seed " << seed;
  }
}

// A batch that runs the pool out: the inserts that found none answer
// pool_exhausted (pending to the checker: they did nothing), the others link.
TEST(LiDengBatches, ABatchThatFillsThePool) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    list t(params{4, 6, first_free_node + 4});
    run_alone(t, op_kind::insert, 50, 500);
    run_setup rs;
    rs.seed = seed;
    const batch b = {{op_kind::insert, 10, 1}, {op_kind::insert, 60, 2}, {op_kind::insert, 20, 3},
                     {op_kind::insert, 70, 4}, {op_kind::insert, 30, 5}, {op_kind::insert, 55, 6}};
    const batch_outcome o = run_batch<lideng_variant::fixed>(t, b, rs, 80);
    ASSERT_TRUE(o.problems.empty()) << "seed " << seed << ": " << o.problems.front();
    const auto full = std::count_if(o.records.begin(), o.records.end(), [](const auto& r) { return r.st == status::pool_exhausted; });
    EXPECT_EQ(full, 3) << "three of six inserts find the pool full";
    EXPECT_EQ(t.now().entries.size(), 4u);
    EXPECT_EQ(t.words[error_word_index], gfsl::error_pool_exhausted);
  }
}

// Several batches in one scheduled run: a team that leaves a batch's last
// barrier starts its next operation while others are still returning.
TEST(LiDengBatches, SeveralBatchesInOneRun) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const std::uint32_t teams = 2 + static_cast<std::uint32_t>(seed % 5);
    const workload w = random_batches(seed, teams, 10, 8, seed % 2 == 0);
    list t(w.p);
    for (key_type k : w.prefill) run_alone(t, op_kind::insert, k, k * 10);
    const std::vector<std::pair<key_type, value_type>> before = t.now().entries;
    sched::options o;
    o.seed = seed;
    o.gran = seed % 3 == 0 ? sched::granularity::chunk : sched::granularity::lane;
    std::string mid;
    o.check_every = 1;
    o.on_check = [&](std::uint64_t step) {
      if (!mid.empty()) return;
      const auto r = check_lideng_snapshot(t.words.data(), t.words.size(), t.p, false);
      if (!r.violations.empty()) mid = "step " + std::to_string(step) + ": " + r.violations.front().line();
    };
    sched::scheduler s(o);
    std::uint64_t clock = gfsl::model::first_free_stamp(before.size());
    std::vector<gfsl::model::op_record> records;
    std::vector<std::function<void()>> bodies;
    for (std::uint32_t i = 0; i < teams; ++i) {
      bodies.push_back([&, i] {
        team16 tm(i, seed, t.words.data(), &s, false, t.words.size());
        algorithm<team16> a(tm, t.words.data(), t.p);
        for (const batch& b : w.batches) {
          gfsl::model::op_record r;
          r.team = i;
          r.op = {b[i].kind, b[i].key, b[i].value};
          r.call = clock++;
          const op_result got = a.apply(b[i].kind, b[i].key, b[i].value);
          r.ret = clock++;
          r.st = got.st;
          r.ok = got.ok;
          r.value = got.value;
          records.push_back(r);
          s.completed_operation();
        }
      });
    }
    const sched::outcome run = s.run(std::move(bodies));
    ASSERT_EQ(run.reason, sched::stop_reason::completed) << run.report;
    EXPECT_GT(run.switches, run.steps / 4) << "the teams interleave";
    ASSERT_EQ(mid, "") << "seed " << seed;
    ASSERT_TRUE(problems_of(t).empty()) << "seed " << seed << ": " << problems_of(t).front();
    EXPECT_EQ(t.words[barrier_word], 2ull * teams * w.batches.size()) << "two barriers a batch, every team once";
    EXPECT_EQ(check_batch(before, records, t.now(), w.max_key), gfsl::lin::verdict::linearizable) << "seed " << seed;
  }
}

// A team that calls no operation leaves the others at the barrier: the
// scheduler reports a deadlock naming the barrier word, not a hang.
TEST(LiDengBatches, AMissingTeamIsADeadlockAtTheBarrier) {
  list t(params{4, 3, 16});
  sched::options o;
  o.seed = 1;
  sched::scheduler s(o);
  std::vector<std::function<void()>> bodies;
  for (std::uint32_t i = 0; i < 2; ++i) {
    bodies.push_back([&, i] {
      team16 tm(i, 1, t.words.data(), &s, false, t.words.size());
      algorithm<team16> a(tm, t.words.data(), t.p);
      a.apply(op_kind::insert, 5 + i, 0);
    });
  }
  const sched::outcome run = s.run(std::move(bodies));
  EXPECT_EQ(run.reason, sched::stop_reason::deadlock);
  EXPECT_NE(run.report.find("waits on chunk 2"), std::string::npos) << run.report;
}


// ---- Snapshot invariants on hand-made lists they must reject -----------------

// Keys 10, 20, .., 100 inserted one at a time into a list of 4 levels.
list ten_keys() {
  list t(params{4, 1, 32});
  for (key_type k = 10; k <= 100; k += 10) run_alone(t, op_kind::insert, k, k + 1);
  return t;
}
std::uint32_t node_of(const list& t, key_type k) {
  for (std::uint32_t n = first_free_node; n < t.words[alloc_counter_word]; ++n) {
    if (gfsl::entry_key(t.words[node_offset(n)]) == k) return n;
  }
  return no_node;
}
std::uint64_t& forward(list& t, std::uint32_t n, int l) { return t.words[node_offset(n) + forward_word0 + l]; }
// The nodes of level l, head to tail.
std::vector<std::uint32_t> level(const list& t, int l) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t n = low_of(t.words[node_offset(head_node) + forward_word0 + l]); n != tail_node && out.size() < 64;
       n = low_of(t.words[node_offset(n) + forward_word0 + l])) {
    out.push_back(n);
  }
  return out;
}
// The names of the invariants the list breaks.
std::set<std::string> broken(const list& t, bool quiescent = true) {
  std::set<std::string> out;
  for (const auto& v : check_lideng_snapshot(t.words.data(), t.words.size(), t.p, quiescent).violations) out.insert(v.invariant);
  return out;
}
using names = std::set<std::string>;

TEST(LiDengInvariants, AcceptWellFormedLists) {
  const list t = ten_keys();
  const lideng_report r = check_lideng_snapshot(t.words.data(), t.words.size(), t.p);
  EXPECT_TRUE(r.violations.empty()) << r.violations.front().line();
  EXPECT_EQ(r.checked.size(), lideng_invariants().size());
  EXPECT_EQ(r.live.size(), 10u);
  EXPECT_EQ(check_lideng_snapshot(t.words.data(), t.words.size(), t.p, false).checked.size(), lideng_invariants().size() - 1);
  const list empty(params{4, 1, 8});
  EXPECT_TRUE(broken(empty).empty());
}

TEST(LiDengInvariants, RejectBadHeaders) {
  list t = ten_keys();
  EXPECT_EQ(check_lideng_snapshot(t.words.data(), t.words.size() - 1, t.p).violations.at(0).line(),
            "header: header: allocation counter: the list has " + std::to_string(t.words.size() - 1) +
                " words, its parameters need " + std::to_string(t.words.size()));
  list a = t;
  a.words[alloc_counter_word] = 1;
  EXPECT_EQ(broken(a).count("header"), 1u);
  list b = t;
  b.words[error_word_index] = 7;
  EXPECT_EQ(broken(b), names{"header"});
  list c = t;
  c.words[alloc_counter_word] = t.p.pool_nodes + 1;
  EXPECT_EQ(broken(c), names{"header"});
  EXPECT_TRUE(broken(c, false).empty()) << "mid-run the counter passes the pool before the error word is set";
  c.words[error_word_index] = gfsl::error_pool_exhausted;
  EXPECT_TRUE(broken(c).empty());
}

TEST(LiDengInvariants, RejectBadSentinels) {
  list a = ten_keys();
  a.words[node_offset(head_node)] = gfsl::make_entry(3, 0);
  EXPECT_EQ(broken(a), names{"sentinels"});
  list b = ten_keys();
  forward(b, tail_node, 2) = 5;
  EXPECT_EQ(broken(b), names{"sentinels"});
  list c = ten_keys();
  forward(c, head_node, 6) = tail_node;  // above the list's 4 levels
  EXPECT_EQ(broken(c), names{"sentinels"});
}

TEST(LiDengInvariants, RejectLinksOutsideTheNodesHandedOutAndCycles) {
  list a = ten_keys();
  const std::uint32_t n30 = node_of(a, 30);
  forward(a, n30, 0) = a.words[alloc_counter_word];  // a pristine node
  EXPECT_EQ(broken(a).count("level-bounds"), 1u);
  list b = ten_keys();
  forward(b, node_of(b, 30), 0) = no_node;
  const auto v = check_lideng_snapshot(b.words.data(), b.words.size(), b.p).violations;
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.front().line(), "level-bounds: node " + std::to_string(node_of(b, 30)) +
                                  " forward[0]: level 0 goes to no node, not a node handed out (2 .. 11) or the tail");
  list c = ten_keys();
  forward(c, node_of(c, 50), 0) = node_of(c, 20);  // back to an earlier node
  EXPECT_EQ(broken(c).count("level-bounds"), 1u);
  list d = ten_keys();
  forward(d, node_of(d, 50), 0) = head_node;
  EXPECT_EQ(broken(d).count("level-bounds"), 1u);
}

TEST(LiDengInvariants, RejectUnsortedLevelsAndAKeyTwice) {
  list a = ten_keys();
  a.words[node_offset(node_of(a, 40))] = gfsl::make_entry(45, 0);
  a.words[node_offset(node_of(a, 50))] = gfsl::make_entry(42, 0);
  EXPECT_EQ(broken(a).count("sorted"), 1u);
  EXPECT_EQ(broken(a).count("unique-keys"), 0u);
  list b = ten_keys();
  b.words[node_offset(node_of(b, 50))] = gfsl::make_entry(40, 0);
  EXPECT_EQ(broken(b).count("unique-keys"), 1u);
  EXPECT_EQ(broken(b).count("sorted"), 0u);
  list c = ten_keys();
  c.words[node_offset(node_of(c, 100))] = gfsl::make_entry(gfsl::key_empty, 0);
  EXPECT_EQ(broken(c), names{"user-keys"});
}

TEST(LiDengInvariants, RejectBadHeightsAndUpperNodesMissingBelow) {
  list t = ten_keys();
  const std::vector<std::uint32_t> up = level(t, 1);
  ASSERT_FALSE(up.empty()) << "some key of ten reaches level 1";
  const std::uint32_t tall = up.front();
  list a = t;
  a.words[node_offset(tall) + height_word] = 1;  // on level 1 with height 1 (and forward[1] set above it)
  EXPECT_EQ(broken(a), names{"heights"});
  list b = t;
  const std::uint32_t low = level(t, 0).front() == tall ? level(t, 0)[1] : level(t, 0).front();
  b.words[node_offset(low) + height_word] = 9;
  EXPECT_EQ(broken(b), names{"heights"});
  list c = t;
  // Unlink `tall` from level 0 only: still on level 1.
  std::uint32_t before = head_node;
  for (std::uint32_t n : level(t, 0)) {
    if (n == tall) break;
    before = n;
  }
  forward(c, before, 0) = forward(c, tall, 0);
  EXPECT_EQ(broken(c), names{"upper-in-lower"});
  EXPECT_TRUE(broken(c, false).empty()) << "a batch relinks level by level: not a mid-run invariant";
}

TEST(LiDengInvariants, TheHostPolicyPrefillsAndSnapshotsTheList) {
  gfsl::model::workload w;
  w.teams = 4;
  gfsl::lideng_host_subject<lideng_variant::fixed, false> s(w, 40, 5);
  EXPECT_EQ(s.params().batch, 4u);
  team16 tm(0, 1, s.words(), nullptr, false, s.word_count());
  auto pre = s.prefill_algorithm(tm);
  for (key_type k = 1; k <= 20; ++k) EXPECT_TRUE(pre.apply(op_kind::insert, k, k).ok);
  EXPECT_EQ(s.words()[barrier_word], 0u) << "the prefill is a batch of one: no barrier";
  const gfsl::final_state f = s.inspect();
  EXPECT_EQ(f.entries.size(), 20u);
  EXPECT_TRUE(f.problems.empty());
  const gfsl::invariants::snapshot snap = s.snapshot(3);
  EXPECT_EQ(snap.subject, gfsl::subject_kind::lideng);
  EXPECT_EQ(snap.words.size(), s.word_count());
  EXPECT_THROW((gfsl::lideng_host_subject<lideng_variant::fixed, false>(w, 40, 15)), std::invalid_argument);
  EXPECT_EQ(gfsl::parse_subject("lideng"), gfsl::subject_kind::lideng);
  EXPECT_EQ(gfsl::subject_of(gfsl::subject_kind::lideng).name, "lideng");
}

// ---- The mixed batch the paper does not allow ---------------------------------

std::string show_writes(const list& t, const sched::outcome& run) {
  const auto node_name = [&](std::uint64_t n) {
    if (n == head_node) return std::string("head");
    if (n == tail_node) return std::string("tail");
    return "node " + std::to_string(n) + " (key " + std::to_string(gfsl::entry_key(t.words[node_offset(static_cast<std::uint32_t>(n))])) + ")";
  };
  std::string out;
  for (const auto& la : run.accesses) {
    const gfsl::access& a = la.a;
    if (a.kind == gfsl::access_kind::load) continue;
    const std::string team = "  team " + std::to_string(a.team);
    if (a.word == barrier_word) {
      out += team + " arrives at a barrier (arrival " + std::to_string(la.result + 1) + ")\n";
    } else if (a.word == alloc_counter_word) {
      out += team + " allocates node " + std::to_string(la.result) + "\n";
    } else if (a.word >= slots_offset && a.word < pool_offset) {
      if ((a.word - slots_offset) % slot_words == 0) out += team + " writes its slot\n";
    } else if ((a.word - pool_offset) % node_words >= static_cast<std::uint64_t>(forward_word0)) {
      const std::uint64_t n = (a.word - pool_offset) / node_words;
      const std::uint64_t l = (a.word - pool_offset) % node_words - forward_word0;
      out += team + " writes " + node_name(n) + " forward[" + std::to_string(l) + "] <- " + node_name(low_of(a.value)) + "\n";
    }
  }
  return out;
}

// Prefill 4 -> 6 -> 7 on one level; one batch: team 0 inserts 5 (between 4
// and 6), team 1 deletes 6. Both write node 4's forward[0].
TEST(LiDengMixed, AnInsertAndADeleteInOneBatchBreakEitherWay) {
  int lost_insert = 0, undone_delete = 0;
  std::string first_lost, first_undone;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    list t(params{1, 2, 8});
    for (key_type k : {4u, 6u, 7u}) run_alone(t, op_kind::insert, k, k);
    run_setup rs;
    rs.seed = seed;
    rs.record = true;
    rs.mid_run_checks = false;
    const batch b = {{op_kind::insert, 5, 50}, {op_kind::remove, 6, 0}};
    const batch_outcome o = run_batch<lideng_variant::fixed>(t, b, rs, 8);
    ASSERT_EQ(o.run.reason, sched::stop_reason::completed);
    EXPECT_TRUE(o.records[0].ok && o.records[1].ok) << "each answered as if alone";
    ASSERT_FALSE(o.problems.empty()) << "seed " << seed << ": the mixed batch is linearizable";
    EXPECT_NE(o.problems.back().find("not linearizable"), std::string::npos) << o.problems.back();
    const auto e = t.now().entries;
    const bool has5 = std::count_if(e.begin(), e.end(), [](const auto& x) { return x.first == 5; }) > 0;
    const bool has6 = std::count_if(e.begin(), e.end(), [](const auto& x) { return x.first == 6; }) > 0;
    // The last write of node 4's forward[0] wins: the insert's (4 -> 5 -> 6,
    // the delete undone) or the delete's (4 -> 7, and 5 goes with 6).
    EXPECT_EQ(has5, has6);
    if (!has5 && lost_insert++ == 0) first_lost = "seed " + std::to_string(seed) + ":\n" + show_writes(t, o.run);
    if (has6 && undone_delete++ == 0) first_undone = "seed " + std::to_string(seed) + ":\n" + show_writes(t, o.run);
  }
  EXPECT_GT(lost_insert, 0);
  EXPECT_GT(undone_delete, 0);
  std::cout << "insert(5) and delete(6) in one batch over 4 -> 6 -> 7, 100 seeds: " << lost_insert
            << " lose the insert, " << undone_delete << " keep 6.\nA lost insert, " << first_lost
            << "A delete undone, " << first_undone;
}

// Random batches with kinds mixed inside a batch: updates of both kinds
// break; searches beside updates of one kind do not (a search reads only
// before barrier 1, when no batch write has been made).
workload mixed_batches(std::uint64_t seed, std::uint32_t teams, bool with_both_updates) {
  std::mt19937_64 rng(seed);
  workload w;
  w.max_key = 10;
  w.p = params{3, teams, 64};
  for (key_type k = 1; k <= w.max_key; ++k) {
    if (rng() % 2) w.prefill.push_back(k);
  }
  for (int i = 0; i < 5; ++i) {
    const op_kind update = rng() % 2 ? op_kind::insert : op_kind::remove;
    batch b;
    for (std::uint32_t j = 0; j < teams; ++j) {
      const int draw = static_cast<int>(rng() % 3);
      const op_kind kind = draw == 2 ? op_kind::contains
                           : with_both_updates ? (draw == 0 ? op_kind::insert : op_kind::remove)
                                               : update;
      b.push_back({kind, 1 + static_cast<key_type>(rng() % w.max_key), static_cast<value_type>(100 * i + j)});
    }
    w.batches.push_back(b);
  }
  return w;
}

TEST(LiDengMixed, InsertsAndDeletesInOneBatchBreakSearchesBesideUpdatesDoNot) {
  int failing = 0;
  std::string first;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    run_setup rs;
    rs.seed = seed;
    rs.mid_run_checks = false;
    const std::string p = run_workload<lideng_variant::fixed>(mixed_batches(seed, 4, true), rs);
    if (!p.empty() && failing++ == 0) first = "seed " + std::to_string(seed) + ": " + p;
    rs.mid_run_checks = true;
    ASSERT_EQ(run_workload<lideng_variant::fixed>(mixed_batches(seed, 4, false), rs), "") << "seed " << seed;
  }
  EXPECT_GT(failing, 10);
  std::cout << "batches mixing inserts and deletes: " << failing << " of 100 workloads fail; first " << first << "\n";
}

// ---- Mutants: each one is killed ------------------------------------------------

struct kill_count {
  int kills = 0, runs = 0;
  std::string first;
};
kill_count mutant_kills(lideng_mutant m) {
  kill_count k;
  const auto tally = [&](const std::string& p, const std::string& what) {
    ++k.runs;
    if (p.empty()) return;
    if (k.kills++ == 0) k.first = what + ": " + p;
  };
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    run_setup rs;
    rs.seed = seed;
    rs.mut = m;
    tally(run_workload<lideng_variant::fixed, true>(random_batches(seed, 2 + seed % 7, 12, 6, seed % 2 == 0), rs),
          "random batches, seed " + std::to_string(seed));
    workload w;
    w.p = params{2, 4, 64};
    for (key_type k = 1; k <= 12; ++k) w.prefill.push_back(k);
    w.max_key = 12;
    w.batches = {{{op_kind::remove, 4}, {op_kind::remove, 5}, {op_kind::remove, 6}, {op_kind::remove, 9}}};
    tally(run_workload<lideng_variant::fixed, true>(w, rs), "neighbouring deletes, seed " + std::to_string(seed));
  }
  return k;
}

TEST(LiDengMutants, CatalogNamesParseBack) {
  for (const auto& i : lideng_mutant_catalog) {
    ASSERT_EQ(parse_mutant(i.name), i.id);
    EXPECT_EQ(info(i.id).name, i.name);
    EXPECT_FALSE(i.breaks.empty());
  }
  EXPECT_EQ(parse_mutant("none"), lideng_mutant::none);
  EXPECT_FALSE(parse_mutant("no-such-mutant"));
}

TEST(LiDengMutants, EveryMutantIsKilled) {
  const kill_count none = mutant_kills(lideng_mutant::none);
  EXPECT_EQ(none.kills, 0) << none.first;
  for (const auto& i : lideng_mutant_catalog) {
    const kill_count k = mutant_kills(i.id);
    EXPECT_GT(k.kills, 0) << i.name << " survives " << k.runs << " runs";
    std::cout << i.name << ": killed in " << k.kills << " of " << k.runs << " runs; first " << k.first << "\n";
  }
}

// ---- Through the registry: the runs it is given made phase-separated -------

gfsl::model::workload registry_workload(std::uint32_t teams, std::uint64_t ops, std::uint64_t seed) {
  gfsl::model::workload w;
  w.subject = gfsl::subject_kind::lideng;
  w.chunk = 16;
  w.levels = 4;
  w.teams = teams;
  w.ops = ops;
  w.insert_pct = 40;
  w.delete_pct = 30;
  w.contains_pct = 30;
  w.range = 24;
  w.prefill = 0.5;
  w.seed = seed;
  return w;
}

// Each team's records in its order of calls.
std::vector<std::vector<gfsl::model::op_record>> by_team(const std::vector<gfsl::model::op_record>& records, std::uint32_t teams) {
  std::vector<std::vector<gfsl::model::op_record>> out(teams);
  for (const auto& r : records) out.at(r.team).push_back(r);
  for (auto& t : out) std::sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.call < b.call; });
  return out;
}

gfsl::lin::verdict linearizable(const gfsl::host_run& r) {
  gfsl::lin::check_options co;
  co.threads = 1;
  co.explain_seconds = 0;
  return gfsl::lin::check_history(gfsl::model::full_history(r.prefill, r.records), co).v;
}

// 43 operations over 4 teams: 10 each (the fewest a team is dealt), and
// operation j of every team of team 0's kind; answers linearizable, the
// final list well formed. The drawn mix gives batches of mixed kinds, so
// the rewrite is what makes these pass.
TEST(LiDengRegistry, TheHostEntryRunsPhaseSeparatedBatches) {
  int rewritten = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const gfsl::model::workload w = registry_workload(4, 43, seed);
    ASSERT_EQ(w.validate(), "");
    sched::options so;
    so.seed = seed;
    so.gran = sched::granularity::lane;
    const gfsl::scheduled_run sr = gfsl::run_scheduled(w, so);
    ASSERT_EQ(sr.outcome.reason, sched::stop_reason::completed) << "seed " << seed << ": " << sr.outcome.report;
    const auto teams = by_team(sr.run.records, w.teams);
    for (const auto& t : teams) ASSERT_EQ(t.size(), 10u) << "seed " << seed;
    for (std::size_t j = 0; j < 10; ++j) {
      for (const auto& t : teams) EXPECT_EQ(t[j].op.kind, teams[0][j].op.kind) << "seed " << seed << " batch " << j;
      bool drawn_mixed = false;
      for (std::uint32_t t = 1; t < w.teams; ++t) {
        drawn_mixed |= gfsl::model::operation_at(w, gfsl::model::team_first_op(w, t) + j).kind !=
                       gfsl::model::operation_at(w, j).kind;
      }
      rewritten += drawn_mixed;
    }
    EXPECT_EQ(linearizable(sr.run), gfsl::lin::verdict::linearizable) << "seed " << seed;
    EXPECT_TRUE(sr.run.structural_problems.empty()) << "seed " << seed << ": " << sr.run.structural_problems.front();
    EXPECT_TRUE(gfsl::invariants::check_snapshot(sr.run.final_snapshot).violations.empty()) << "seed " << seed;
  }
  EXPECT_GT(rewritten, 100) << "the drawn batches were of one kind already: the test shows nothing";
}

// The mixed variant keeps the kinds as drawn: the documented failure.
TEST(LiDengRegistry, TheMixedVariantRunsMixedBatchesAndFails) {
  int failed = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const gfsl::model::workload w = registry_workload(4, 40, seed);
    sched::options so;
    so.seed = seed;
    gfsl::run_extras ex;
    ex.choice.variant = static_cast<std::uint8_t>(mixed_variant);
    const gfsl::scheduled_run sr = gfsl::run_scheduled(w, so, 0, true, ex);
    failed += sr.outcome.reason != sched::stop_reason::completed || linearizable(sr.run) != gfsl::lin::verdict::linearizable ||
              !gfsl::invariants::check_snapshot(sr.run.final_snapshot).violations.empty();
  }
  EXPECT_GT(failed, 0) << "no mixed batch of 40 runs failed";
}

// What its semantics cannot run is refused in one line naming the field.
TEST(LiDengRegistry, RefusesWhatItsBatchesCannotRun) {
  gfsl::model::workload w = registry_workload(17, 40, 1);
  EXPECT_NE(w.validate().find("teams must be in [1, 16] for lideng"), std::string::npos) << w.validate();
  w = registry_workload(4, 40, 1);
  w.levels = 15;
  EXPECT_NE(w.validate().find("levels must be in [1, 14]"), std::string::npos) << w.validate();
  w.levels = 4;
  w.chunk = 32;
  EXPECT_NE(w.validate().find("chunk must be 16 for lideng"), std::string::npos) << w.validate();
  w.chunk = 16;
  w.buckets = 3;
  EXPECT_NE(w.validate().find("buckets is a slabhash parameter"), std::string::npos) << w.validate();
  w.buckets = 0;
  try {
    (void)gfsl::run_on_host(w, gfsl::host_mode::sequential);
    ADD_FAILURE() << "teams taking turns ran batches";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--sched turns"), std::string::npos) << e.what();
  }
}

std::string replay_line(const std::string& out) {
  const std::string tag = "replay:   gfsl replay ";
  const auto at = out.find(tag);
  if (at == std::string::npos) return {};
  const auto end = out.find_first_of(" \n", at + tag.size());
  return out.substr(at + tag.size(), end - at - tag.size());
}

// gfsl run --subject lideng passes its checks, and its replay line runs it again.
TEST(LiDengCli, RunPassesAndReplaysFromItsLine) {
  const auto first = gfsl::testing_cli::run("run --subject lideng --teams 8 --ops 400 --levels 5 --range 2000 --seed 3");
  ASSERT_EQ(first.code, 0) << first.out;
  const std::string line = replay_line(first.out);
  ASSERT_NE(line.find("subject=lideng"), std::string::npos) << first.out;
  EXPECT_NE(line.find("levels=5"), std::string::npos) << line;
  const auto again = gfsl::testing_cli::run("replay " + line);
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("linearizable"), std::string::npos) << again.out;
  // The trace of the same run: its history (the rewritten batches, the
  // workload's prefill) is linearizable and its snapshot lideng's.
  const std::string trace = ::testing::TempDir() + "lideng-cli.trace";
  const auto traced = gfsl::testing_cli::run("run --subject lideng --teams 8 --ops 400 --levels 5 --range 2000 --seed 3 --trace " + trace);
  ASSERT_EQ(traced.code, 0) << traced.out;
  const auto checked = gfsl::testing_cli::run("check --subject lideng " + trace);
  EXPECT_EQ(checked.code, 0) << checked.out;
  EXPECT_NE(checked.out.find("upper-in-lower"), std::string::npos) << checked.out;
  EXPECT_EQ(gfsl::testing_cli::run("check --subject slabhash " + trace).code, 2) << "a lideng trace checked as another subject's";
  const auto mixed = gfsl::testing_cli::run("run --subject lideng --teams 16 --variant mixed --ops 64 --sched turns");
  EXPECT_EQ(mixed.code, 4) << mixed.out;  // exit_run_error: the host entry refuses it
  EXPECT_NE(mixed.out.find("--sched turns"), std::string::npos) << mixed.out;
}

}  // namespace
