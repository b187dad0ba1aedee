// The deterministic scheduler: replays bit for bit, explores different
// interleavings under different seeds, honours each access granularity, finds
// a planted depth-2 ordering bug within PCT's bound, and reports deadlocks and
// livelocks with who waits on whom.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <set>

#include "core/gfsl/algorithm.hpp"
#include "exec/host_runner.hpp"
#include "exec/host_structure.hpp"
#include "exec/sched/scheduler.hpp"
#include "model/final_state.hpp"

namespace {

using gfsl::sched::granularity;
using gfsl::sched::options;
using gfsl::sched::stop_reason;
using gfsl::sched::strategy;

gfsl::model::workload small_workload(int chunk) {
  gfsl::model::workload w;
  w.teams = 6;
  w.ops = 1500;
  w.range = 120;
  w.insert_pct = 40;
  w.delete_pct = 40;
  w.contains_pct = 20;
  w.chunk = chunk;
  w.p_chunk = 0.5;
  w.seed = 3;
  return w;
}

bool same_records(const std::vector<gfsl::model::op_record>& a, const std::vector<gfsl::model::op_record>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    if (x.team != y.team || x.op.kind != y.op.kind || x.op.key != y.op.key || x.op.value != y.op.value || x.st != y.st ||
        x.ok != y.ok || x.value != y.value || x.call != y.call || x.ret != y.ret) {
      return false;
    }
  }
  return true;
}

struct sched_case {
  strategy strat;
  granularity gran;
  int chunk;
};

class SchedulerRuns : public ::testing::TestWithParam<sched_case> {};

TEST_P(SchedulerRuns, SameSeedReplaysBitForBit) {
  const auto c = GetParam();
  options o;
  o.strat = c.strat;
  o.gran = c.gran;
  o.seed = 17;
  o.pct_steps = 200000;
  o.record_accesses = true;
  const auto w = small_workload(c.chunk);
  const auto first = gfsl::run_scheduled(w, o);
  const auto second = gfsl::run_scheduled(w, o);
  ASSERT_EQ(first.outcome.reason, stop_reason::completed) << first.outcome.report;
  EXPECT_EQ(first.outcome.steps, second.outcome.steps);
  EXPECT_EQ(first.outcome.fingerprint, second.outcome.fingerprint);
  EXPECT_TRUE(first.outcome.accesses == second.outcome.accesses) << "the sequence of shared accesses differs";
  EXPECT_TRUE(same_records(first.run.records, second.run.records)) << "the history differs";
  EXPECT_EQ(first.run.final_entries, second.run.final_entries);
  EXPECT_EQ(first.outcome.steps, first.outcome.accesses.size() == 0 ? 0 : first.outcome.steps);
  // And the run itself is sound.
  EXPECT_TRUE(first.run.structural_problems.empty()) << first.run.structural_problems.front();
  const auto implied = gfsl::model::check_implied_final_state(first.run.prefill, first.run.records, first.run.final_entries);
  EXPECT_TRUE(implied.empty()) << implied.front();
}

TEST_P(SchedulerRuns, DifferentSeedsInterleaveDifferently) {
  const auto c = GetParam();
  const auto w = small_workload(c.chunk);
  std::set<std::uint64_t> fingerprints;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    options o;
    o.strat = c.strat;
    o.gran = c.gran;
    o.seed = seed;
    o.pct_steps = 20000;
    fingerprints.insert(gfsl::run_scheduled(w, o).outcome.fingerprint);
  }
  EXPECT_EQ(fingerprints.size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, SchedulerRuns,
    ::testing::Values(sched_case{strategy::random, granularity::chunk, 16}, sched_case{strategy::random, granularity::line, 32},
                      sched_case{strategy::random, granularity::lane, 32}, sched_case{strategy::pct, granularity::lane, 16},
                      sched_case{strategy::pct, granularity::chunk, 32}, sched_case{strategy::fair_pct, granularity::line, 32},
                      sched_case{strategy::fair_pct, granularity::lane, 16}),
    [](const auto& info) {
      return std::string(gfsl::sched::name(info.param.strat)) == "fair-pct"
                 ? "fair_pct_" + std::string(gfsl::sched::name(info.param.gran)) + "_N" + std::to_string(info.param.chunk)
                 : std::string(gfsl::sched::name(info.param.strat)) + "_" + gfsl::sched::name(info.param.gran) + "_N" +
                       std::to_string(info.param.chunk);
    });

// Team-wide reads of a run, as (team, positions of its lanes in the order
// they loaded, whether another team's access came between).
struct group_read {
  gfsl::team_id team;
  std::vector<int> lanes;
  bool interleaved;
};
std::vector<group_read> group_reads(const std::vector<gfsl::sched::logged_access>& log) {
  std::vector<group_read> out;
  std::map<gfsl::team_id, std::size_t> open;
  for (std::size_t i = 0; i < log.size(); ++i) {
    const auto& a = log[i].a;
    for (auto& [team, idx] : open) {
      if (team != a.team) out[idx].interleaved = true;
    }
    if (a.group_size <= 1 || a.kind != gfsl::access_kind::load) continue;
    if (a.group_index == 0) {
      open[a.team] = out.size();
      out.push_back({a.team, {}, false});
    }
    out[open[a.team]].lanes.push_back(a.lane);
    if (a.group_index + 1 == a.group_size) open.erase(a.team);
  }
  return out;
}

TEST(SchedulerGranularity, ChunkReadsAreAtomicLineReadsSplitAtLinesLaneReadsInterleaveAnywhere) {
  const auto w = small_workload(32);
  std::uint64_t steps[3] = {};
  for (granularity g : {granularity::chunk, granularity::line, granularity::lane}) {
    options o;
    o.gran = g;
    o.seed = 5;
    o.record_accesses = true;
    const auto r = gfsl::run_scheduled(w, o);
    ASSERT_EQ(r.outcome.reason, stop_reason::completed);
    steps[static_cast<int>(g)] = r.outcome.steps;
    const auto reads = group_reads(r.outcome.accesses);
    ASSERT_FALSE(reads.empty());
    std::size_t interleaved = 0, out_of_order = 0, split_inside_line = 0;
    for (const auto& g_read : reads) {
      ASSERT_EQ(g_read.lanes.size(), 32u);
      interleaved += g_read.interleaved;
      out_of_order += !std::is_sorted(g_read.lanes.begin(), g_read.lanes.end());
      // In line mode each half (a 128-byte line) is loaded as one block.
      const bool first_half_block = std::set<int>(g_read.lanes.begin(), g_read.lanes.begin() + 16).size() == 16 &&
                                    (*std::max_element(g_read.lanes.begin(), g_read.lanes.begin() + 16) < 16 ||
                                     *std::min_element(g_read.lanes.begin(), g_read.lanes.begin() + 16) >= 16);
      split_inside_line += !first_half_block;
    }
    if (g == granularity::chunk) {
      EXPECT_EQ(interleaved, 0u) << "a chunk read was interleaved";
      EXPECT_EQ(out_of_order, 0u);
    } else if (g == granularity::line) {
      EXPECT_GT(interleaved, 0u);
      EXPECT_GT(out_of_order, 0u) << "lines were never read out of order";
      EXPECT_EQ(split_inside_line, 0u) << "a line was split";
    } else {
      EXPECT_GT(interleaved, 0u);
      EXPECT_GT(split_inside_line, 0u) << "lanes never left their lines";
    }
  }
  EXPECT_LT(steps[0], steps[1]);
  EXPECT_LT(steps[1], steps[2]);
}

// A toy program with a depth-2 ordering bug (an atomicity violation): team B's
// check at its step `b_at` must fall between team A's steps `a_at` and
// `a_at + 1`. PCT finds a bug of depth d in a run of n teams and k steps with
// probability at least 1 / (n k^(d-1)).
bool toy_atomicity_bug_found(strategy s, std::uint64_t seed, int steps_each, int a_at, int b_at) {
  options o;
  o.strat = s;
  o.depth = 2;
  o.seed = seed;
  o.pct_steps = 2 * static_cast<std::uint64_t>(steps_each);
  gfsl::sched::scheduler sch(o);
  bool a_inside = false, found = false;
  std::vector<std::function<void()>> bodies;
  bodies.emplace_back([&] {
    for (int i = 0; i < steps_each; ++i) {
      sch.point();
      if (i == a_at) a_inside = true;
      if (i == a_at + 1) a_inside = false;
    }
  });
  bodies.emplace_back([&] {
    for (int j = 0; j < steps_each; ++j) {
      sch.point();
      if (j == b_at && a_inside) found = true;
    }
  });
  const auto out = sch.run(std::move(bodies));
  EXPECT_EQ(out.reason, stop_reason::completed);
  return found;
}

TEST(SchedulerPct, FindsADepth2BugWithinItsBound) {
  const int steps_each = 50, n = 2;
  const double k = 2.0 * steps_each;
  const double p = 1.0 / (n * std::pow(k, 2 - 1));  // PCT's per-run lower bound, here 1/200
  const int runs = static_cast<int>(std::ceil(5.0 / p));  // P(miss) <= (1-p)^runs < e^-5
  int found_at = -1, found_count = 0;
  for (int seed = 1; seed <= runs; ++seed) {
    if (toy_atomicity_bug_found(strategy::pct, seed, steps_each, 20, 35)) {
      if (found_at < 0) found_at = seed;
      ++found_count;
    }
  }
  ASSERT_GE(found_at, 1) << "PCT(d=2) missed the bug in " << runs << " runs";
  // The empirical rate honours the bound (with slack for sampling).
  EXPECT_GE(static_cast<double>(found_count) / runs, p / 2) << found_count << " of " << runs;
  // Replaying the first finding seed finds it again.
  EXPECT_TRUE(toy_atomicity_bug_found(strategy::pct, found_at, steps_each, 20, 35));
}

// Two teams take two locks in opposite orders.
gfsl::sched::outcome toy_lock_order_inversion(std::uint64_t seed) {
  options o;
  o.strat = strategy::random;
  o.seed = seed;
  gfsl::sched::scheduler sch(o);
  std::uint64_t lock[2] = {0, 0};  // 0 free, else team + 1
  auto acquire = [&](int which, gfsl::team_id me) {
    for (;;) {
      sch.point();
      if (lock[which] == 0) {
        lock[which] = gfsl::lock_word_of(me);
        sch.wrote();
        return;
      }
      sch.wait_on(static_cast<gfsl::chunk_index>(which), lock[which]);
    }
  };
  auto release = [&](int which) {
    sch.point();
    lock[which] = 0;
    sch.wrote();
  };
  std::vector<std::function<void()>> bodies;
  bodies.emplace_back([&] {
    acquire(0, 0);
    acquire(1, 0);
    release(1);
    release(0);
  });
  bodies.emplace_back([&] {
    acquire(1, 1);
    acquire(0, 1);
    release(0);
    release(1);
  });
  return sch.run(std::move(bodies));
}

TEST(SchedulerDeadlock, OppositeLockOrdersAreReportedWithWhoWaitsOnWhom) {
  int deadlocks = 0, completed = 0;
  std::uint64_t first_seed = 0;
  for (std::uint64_t seed = 1; seed <= 64; ++seed) {
    const auto out = toy_lock_order_inversion(seed);
    if (out.reason == stop_reason::completed) {
      ++completed;
      continue;
    }
    ASSERT_EQ(out.reason, stop_reason::deadlock) << out.report;
    ++deadlocks;
    if (!first_seed) first_seed = seed;
    EXPECT_NE(out.report.find("team 0 waits on chunk 1, held by team 1"), std::string::npos) << out.report;
    EXPECT_NE(out.report.find("team 1 waits on chunk 0, held by team 0"), std::string::npos) << out.report;
    ASSERT_EQ(out.waits.size(), 2u);
  }
  EXPECT_GT(deadlocks, 0);
  EXPECT_GT(completed, 0);
  // The same seed deadlocks the same way again.
  const auto again = toy_lock_order_inversion(first_seed);
  EXPECT_EQ(again.reason, stop_reason::deadlock);
  EXPECT_EQ(again.report, toy_lock_order_inversion(first_seed).report);
}

TEST(SchedulerLivelock, StepsWithoutACompletedOperationStopTheRun) {
  options o;
  o.livelock_steps = 5000;
  gfsl::sched::scheduler sch(o);
  std::uint64_t counter = 0;
  bool unwound = false;
  struct on_unwind {
    bool& flag;
    ~on_unwind() { flag = true; }
  };
  std::vector<std::function<void()>> bodies;
  bodies.emplace_back([&] {
    on_unwind guard{unwound};
    for (;;) {
      sch.point();
      ++counter;
      sch.wrote();
    }
  });
  bodies.emplace_back([&] {
    for (int i = 0; i < 10; ++i) {
      sch.point();
      sch.completed_operation();
    }
  });
  const auto out = sch.run(std::move(bodies));
  EXPECT_EQ(out.reason, stop_reason::livelock);
  EXPECT_NE(out.report.find("team 0 is running, not waiting on a lock"), std::string::npos) << out.report;
  EXPECT_TRUE(unwound) << "the stopped team's stack was not unwound";
  EXPECT_GE(out.steps, 5000u);
}

// Park: when every team is parked, nobody can complete the operations they
// wait for; the team parked last goes on, since it is inside the operation
// the others parked across. Its operation completes before any other team
// moves (releasing every parked team let the first one run on before the
// operation it was parked to let through).
TEST(SchedulerPark, WhenEveryTeamIsParkedTheOneParkedLastGoesOnFirst) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    options o;
    o.strat = strategy::park;
    o.park_at = gfsl::sched::park_point::lock_cas;
    o.park_every = 1;
    o.park_ops = 1;
    o.seed = seed;
    gfsl::sched::scheduler sch(o);
    std::vector<int> arrived, completed;
    std::vector<std::function<void()>> bodies;
    for (int t = 0; t < 3; ++t) {
      bodies.emplace_back([&, t] {
        sch.point();
        gfsl::access cas;
        cas.team = static_cast<gfsl::team_id>(t);
        cas.kind = gfsl::access_kind::cas;
        arrived.push_back(t);
        sch.before(cas);  // parks: every lock CAS is a park point here
        sch.after(cas, 0);
        completed.push_back(t);
        sch.completed_operation();
      });
    }
    const auto out = sch.run(std::move(bodies));
    ASSERT_EQ(out.reason, stop_reason::completed) << out.report;
    ASSERT_EQ(arrived.size(), 3u);
    ASSERT_EQ(completed.size(), 3u);
    EXPECT_EQ(out.parks, 3u);
    // All three park (no one can complete before reaching its CAS); the one
    // parked last completes first, and its completion is the one operation
    // the other two waited for.
    EXPECT_EQ(completed.front(), arrived.back()) << "seed " << seed;
  }
}

// Park inside a read: a victim (park_teams 1) that has loaded some lanes of
// a team-wide read sleeps there until the other team has completed
// park_ops whole operations, so that every one of them lands between two
// lanes of that one read. The other team reads lane by lane too and never
// parks: only victims do.
TEST(SchedulerPark, AVictimParkedInsideAReadSleepsThroughTheOthersOperations) {
  int all_three = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    options o;
    o.strat = strategy::park;
    o.gran = granularity::lane;
    o.park_at = gfsl::sched::park_point::mid_read;
    o.park_every = 1;
    o.park_ops = 3;
    o.park_teams = 1;
    o.seed = seed;
    gfsl::sched::scheduler sch(o);
    std::vector<std::string> events;
    auto read_lanes = [&](gfsl::team_id t, const std::string& who) {
      std::array<std::uint8_t, 4> order{0, 1, 2, 3};
      sch.lane_order(t, 4, order.data());
      for (int i = 0; i < 4; ++i) {
        gfsl::access a;
        a.team = t;
        a.kind = gfsl::access_kind::load;
        a.lane = order[static_cast<std::size_t>(i)];
        a.group_index = static_cast<std::uint8_t>(i);
        a.group_size = 4;
        sch.before(a);
        sch.after(a, 0);
        events.push_back(who + std::to_string(i));
      }
    };
    std::vector<std::function<void()>> bodies;
    bodies.emplace_back([&] { read_lanes(0, "victim"); sch.completed_operation(); });
    bodies.emplace_back([&] {
      for (int op = 0; op < 3; ++op) {
        read_lanes(1, "other");
        events.push_back("done");
        sch.completed_operation();
      }
    });
    const auto out = sch.run(std::move(bodies));
    ASSERT_EQ(out.reason, stop_reason::completed) << out.report;
    // The victim parks at each of its three points inside the read (the
    // later two find nobody left to wait for); the other team's nine never.
    EXPECT_EQ(out.parks, 3u) << "seed " << seed;
    // The victim loaded one lane, then the other team did every operation
    // it had left (all three when the victim read first), then the victim
    // loaded the rest.
    const auto first = std::find(events.begin(), events.end(), "victim0");
    const auto second = std::find(events.begin(), events.end(), "victim1");
    ASSERT_NE(first, events.end());
    ASSERT_NE(second, events.end());
    const auto inside = std::count(first, second, std::string("done"));
    EXPECT_EQ(inside, std::count(first, events.end(), std::string("done"))) << "seed " << seed;
    all_three += inside == 3;
  }
  EXPECT_GE(all_three, 5);
}

// A team that read a chunk lane by lane may see its lock taken although the
// holder released it while the read was still going on; the wait must then
// end at once, not at the next write (which may never come): no run of the
// correct algorithm may end in a deadlock report.
TEST(SchedulerDeadlock, ALockFreedDuringTheReadThatSawItTakenWakesTheReader) {
  for (int chunk : {16, 32}) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      gfsl::model::workload w = small_workload(chunk);
      w.ops = 600;
      w.range = 60;
      w.seed = 9;
      options o;
      o.gran = granularity::lane;
      o.seed = seed;
      const auto r = gfsl::run_scheduled(w, o);
      ASSERT_EQ(r.outcome.reason, stop_reason::completed) << "N=" << chunk << " seed " << seed << ":\n" << r.outcome.report;
    }
  }
}

TEST(SchedulerStop, AStoppedGfslRunKeepsItsOperationsInFlightAsPending) {
  auto w = small_workload(16);
  options o;
  o.seed = 2;
  o.max_steps = 20000;
  const auto r = gfsl::run_scheduled(w, o);
  EXPECT_EQ(r.outcome.reason, stop_reason::step_limit);
  std::size_t pending = 0;
  for (const auto& rec : r.run.records) pending += rec.ret == gfsl::model::no_stamp;
  EXPECT_GE(pending, 1u);
  EXPECT_LE(pending, w.teams);
  EXPECT_LT(r.run.records.size(), w.ops);
}

// A prefill that cannot finish ends in a hang report on every host mode, and
// the concurrent phase does not run: a lock on the level-0 head that nobody
// will release is a deadlock (who waits on what, held by whom); a NEXT
// pointer of that chunk to itself, below every key, is a search that never
// ends, a livelock with the team's position and operation.
// Damage to the level-0 head chunk (chunk 0) of an N = 16 structure: a lock
// held by a team that does not exist, or a NEXT pointer to itself below
// every key (a search that never ends).
void lock_head_forever(std::uint64_t* words, std::size_t) {
  words[gfsl::header_offsets::pool + gfsl::chunk_shape<16>::lock_lane] = gfsl::lock_word_of(7);
}
void loop_head_to_itself(std::uint64_t* words, std::size_t) {
  words[gfsl::header_offsets::pool + gfsl::chunk_shape<16>::next_lane] = gfsl::make_entry(gfsl::key_neg_inf, 0);
}

TEST(SchedulerStop, APrefillThatCannotFinishEndsInAHangReport) {
  constexpr int N = 16;
  auto w = small_workload(N);
  w.prefill = 0.5;
  const auto locked = lock_head_forever;
  const auto cycle = loop_head_to_itself;
  options o;
  o.livelock_steps = 20000;
  for (int mode = 0; mode < 3; ++mode) {
    gfsl::run_extras deadlocked, livelocked;
    deadlocked.before_prefill = locked;
    livelocked.before_prefill = cycle;
    const auto run = [&](const gfsl::run_extras& ex) {
      if (mode == 0) return gfsl::run_scheduled(w, o, 0, true, ex).run;
      return gfsl::run_on_host(w, mode == 1 ? gfsl::host_mode::sequential : gfsl::host_mode::threads, 0, true, ex);
    };
    const gfsl::host_run d = run(deadlocked);
    EXPECT_EQ(d.prefill_stop, stop_reason::deadlock) << "mode " << mode << ": " << d.prefill_report;
    EXPECT_NE(d.prefill_report.find("team 0 waits on chunk 0, held by team 7"), std::string::npos) << d.prefill_report;
    EXPECT_NE(d.prefill_report.find("prefill operation 1 of "), std::string::npos) << d.prefill_report;
    EXPECT_TRUE(d.prefill.empty());
    EXPECT_TRUE(d.records.empty());
    const gfsl::host_run l = run(livelocked);
    EXPECT_EQ(l.prefill_stop, stop_reason::livelock) << "mode " << mode << ": " << l.prefill_report;
    EXPECT_NE(l.prefill_report.find("team 0 is running, not waiting on a lock; last access: load of chunk 0 lane "),
              std::string::npos)
        << l.prefill_report;
    EXPECT_NE(l.prefill_report.find("in insert("), std::string::npos) << l.prefill_report;
    EXPECT_TRUE(l.records.empty());
  }
  // Untouched, the same prefill completes and the concurrent phase runs.
  const auto fine = gfsl::run_scheduled(w, o);
  EXPECT_EQ(fine.run.prefill_stop, stop_reason::completed) << fine.run.prefill_report;
  EXPECT_EQ(fine.run.prefill.size(), static_cast<std::size_t>(std::llround(w.prefill * w.range)));
  EXPECT_EQ(fine.run.records.size(), w.ops);
}

// On the threads backend nothing schedules the teams, so a watchdog does: a
// team that completes no operation within the hang bound stops the run, which
// names the team and its operation. A lock nobody will release (teams wait
// in lock_wait) and a NEXT cycle (a search that spins without waiting,
// stopped by the check every 256 accesses) both end in such a report.
TEST(ThreadsWatchdog, AConcurrentPhaseThatCannotFinishEndsInAHangReport) {
  auto w = small_workload(16);
  w.prefill = 0.5;
  for (const auto& damage : {std::function<void(std::uint64_t*, std::size_t)>(lock_head_forever),
                             std::function<void(std::uint64_t*, std::size_t)>(loop_head_to_itself)}) {
    gfsl::run_extras ex;
    ex.hang_seconds = 0.3;
    ex.before_concurrent = damage;
    // Without the watchdog the run would never return; the report below
    // shows that it is what ended it.
    const gfsl::host_run r = gfsl::run_on_host(w, gfsl::host_mode::threads, 0, true, ex);
    EXPECT_EQ(r.prefill_stop, stop_reason::completed);
    EXPECT_NE(r.hang_report.find("completed no operation for 0.3 s, in "), std::string::npos) << r.hang_report;
    EXPECT_NE(r.hang_report.find("operations in flight pending"), std::string::npos) << r.hang_report;
    std::size_t pending = 0;
    for (const auto& rec : r.records) pending += rec.pending() ? 1 : 0;
    EXPECT_GE(pending, 1u);
  }
  // Undamaged, the same run completes with no report.
  gfsl::run_extras ex;
  ex.hang_seconds = 30;
  const gfsl::host_run ok = gfsl::run_on_host(w, gfsl::host_mode::threads, 0, true, ex);
  EXPECT_EQ(ok.hang_report, "");
  EXPECT_EQ(ok.records.size(), w.ops);
}

// Teams on disjoint keys sharing chunks: each key has one writer, so every
// answer must match its owner's sequential model. Returns how many do not.
template <gfsl::variant V = gfsl::variant::thesis>
std::uint64_t disjoint_key_answers_off_model(granularity g, std::uint64_t seed) {
  constexpr int N = 32, teams = 8;
  gfsl::host_structure<N> s(1u << 14);
  options o;
  o.gran = g;
  o.seed = seed;
  gfsl::sched::scheduler sch(o);
  std::vector<std::unique_ptr<gfsl::host_team<N>>> team;
  std::vector<gfsl::model::sequential_map> models(teams);
  std::uint64_t off = 0;
  std::vector<std::function<void()>> bodies;
  for (int t = 0; t < teams; ++t) team.push_back(std::make_unique<gfsl::host_team<N>>(t, seed, s.words(), &sch));
  for (int t = 0; t < teams; ++t) {
    bodies.emplace_back([&, t] {
      gfsl::algorithm<gfsl::host_team<N>, false, V> a(*team[t], s.view(), gfsl::p_chunk_threshold_of(1.0));
      gfsl::team_rng rng(seed * 100 + t);
      for (int i = 0; i < 2000; ++i) {
        gfsl::model::operation op;
        op.kind = static_cast<gfsl::op_kind>(rng.next() % 3);
        op.key = static_cast<gfsl::key_type>(1 + t + teams * (rng.next() % 100));
        op.value = op.key;
        const gfsl::op_result r = gfsl::apply_operation(a, op.kind, op.key, op.value);
        const auto want = models[t].apply(op);
        off += want.ok != r.ok;
        sch.completed_operation();
      }
    });
  }
  const auto out = sch.run(std::move(bodies));
  EXPECT_EQ(out.reason, stop_reason::completed) << out.report;
  EXPECT_TRUE(gfsl::structural_problems(s.view()).empty());
  return off;
}

// docs/ALGORITHM.md, "Chunk reads are not snapshots": with every lane's load
// its own step, a reader can miss a key that a concurrent removal shifts
// left, and contains/delete answer false wrongly; with whole-chunk reads (the
// thesis' view) they never do. Both sides are pinned here, per seed.
TEST(SchedulerGranularity, LaneGranularReadsExposeTheTornReadFalseNegativesChunkReadsDoNot) {
  std::uint64_t lane_off = 0, chunk_off = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    lane_off += disjoint_key_answers_off_model(granularity::lane, seed);
    chunk_off += disjoint_key_answers_off_model(granularity::chunk, seed);
  }
  EXPECT_GT(lane_off, 0u);
  EXPECT_EQ(chunk_off, 0u);
}

TEST(SchedulerGranularity, TheRobustVariantAnswersAsTheModelAtEveryGranularity) {
  for (granularity g : {granularity::lane, granularity::line, granularity::chunk}) {
    std::uint64_t off = 0;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) off += disjoint_key_answers_off_model<gfsl::variant::robust>(g, seed);
    EXPECT_EQ(off, 0u) << gfsl::sched::name(g);
  }
}

}  // namespace
