// The concurrency smoke on a real GPU: thousands of teams (one per warp for
// N = 32, two per warp for N = 16) on overlapping keys; the structure copied
// back must be well formed and agree key by key with the successful
// operations. Skipped, saying so, where no CUDA device is present (CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "core/gfsl/layout.hpp"
#include "exec/cuda/device_runner.hpp"
#include "model/final_state.hpp"
#include "invariants/temporal.hpp"
#include "linearizability/checker.hpp"

namespace {

struct smoke_case {
  int chunk;
  std::uint32_t teams;
  std::uint64_t ops;
  std::uint32_t range;
  int insert_pct, delete_pct, contains_pct;
};

// Keys touched by one team only form a sequential history of that team: count
// the answers that disagree with the model there (reported, see
// docs/ALGORITHM.md on chunk reads that are not snapshots).
std::uint64_t single_team_answers_off_model(const gfsl::host_run& r) {
  std::map<gfsl::key_type, gfsl::team_id> owner;
  std::map<gfsl::key_type, bool> shared;
  for (const auto& rec : r.records) {
    auto [it, fresh] = owner.emplace(rec.op.key, rec.team);
    if (!fresh && it->second != rec.team) shared[rec.op.key] = true;
  }
  gfsl::model::sequential_map m;
  for (const auto& op : r.prefill) m.apply(op);
  std::uint64_t off = 0;
  for (const auto& rec : r.records) {  // grouped by key, by call within a key: one team's operations on a key in its program order
    if (shared.count(rec.op.key) || rec.st != gfsl::status::ok) continue;
    const auto want = m.apply(rec.op);
    if (want.ok != rec.ok || (want.ok && want.value != rec.value)) ++off;
  }
  return off;
}

class CudaSmoke : public ::testing::TestWithParam<smoke_case> {};

TEST_P(CudaSmoke, FinalStructureAgreesWithTheSuccessfulOperations) {
  if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const smoke_case c = GetParam();
  gfsl::model::workload w;
  w.chunk = c.chunk;
  w.teams = c.teams;
  w.ops = c.ops;
  w.range = c.range;
  w.insert_pct = c.insert_pct;
  w.delete_pct = c.delete_pct;
  w.contains_pct = c.contains_pct;
  w.p_chunk = 1.0;
  w.seed = 11;
  gfsl::device_options o;
  o.watchdog_seconds = 60.0;
  const gfsl::device_run d = gfsl::run_on_device(w, o);
  ASSERT_FALSE(d.timed_out) << "kernel watchdog fired on " << d.device_name;
  const gfsl::host_run& r = d.run;
  ASSERT_EQ(r.report.first_error, gfsl::status::ok) << r.report.error_detail;
  ASSERT_FALSE(d.hung) << d.hang_detail;
  ASSERT_EQ(r.records.size(), w.ops);
  // Stamps from the device-wide counter: distinct, after the prefill's, and
  // each operation's call before its return.
  std::vector<std::uint64_t> stamps;
  for (const auto& rec : r.records) {
    ASSERT_LT(rec.call, rec.ret);
    ASSERT_GE(rec.call, gfsl::model::first_free_stamp(r.prefill.size()));
    stamps.push_back(rec.call);
    stamps.push_back(rec.ret);
  }
  // The device grouped the history by key, each key's records by call.
  EXPECT_TRUE(std::is_sorted(r.records.begin(), r.records.end(), [](const auto& x, const auto& y) {
    return x.op.key != y.op.key ? x.op.key < y.op.key : x.call < y.call;
  })) << "the device partition did not group the history by (key, call)";
  std::sort(stamps.begin(), stamps.end());
  EXPECT_EQ(std::adjacent_find(stamps.begin(), stamps.end()), stamps.end()) << "two operations share a stamp";
  EXPECT_TRUE(r.structural_problems.empty()) << r.structural_problems.size() << " problems, first: " << r.structural_problems.front();
  const auto implied = gfsl::model::check_implied_final_state(r.prefill, r.records, r.final_entries);
  EXPECT_TRUE(implied.empty()) << implied.front();
  const auto& p = r.report.paths;
  std::printf("[ smoke    ] %s N=%d teams=%u ops=%llu range=%u: %.3f ms, %.1f Mops/s, splits %llu merges %llu zombie unlinks %llu "
              "restarts %llu backtracks %llu lock waits %llu, height %d, %zu keys; single-team answers off model: %llu\n",
              d.device_name.c_str(), c.chunk, c.teams, (unsigned long long)c.ops, c.range, r.report.seconds * 1e3,
              c.ops / r.report.seconds / 1e6, (unsigned long long)p.splits, (unsigned long long)p.merges,
              (unsigned long long)p.zombie_unlinks, (unsigned long long)p.restarts, (unsigned long long)p.backtracks,
              (unsigned long long)p.lock_waits, r.report.height, r.final_entries.size(),
              (unsigned long long)single_team_answers_off_model(r));
  EXPECT_GT(p.splits, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Teams, CudaSmoke,
    ::testing::Values(smoke_case{32, 1024, 200000, 1000000, 10, 10, 80}, smoke_case{16, 1024, 200000, 1000000, 10, 10, 80},
                      smoke_case{32, 4096, 400000, 2000, 40, 40, 20}, smoke_case{16, 4096, 400000, 2000, 40, 40, 20},
                      smoke_case{32, 8192, 1000000, 100000, 20, 20, 60}, smoke_case{16, 8192, 1000000, 100000, 20, 20, 60}),
    [](const auto& info) {
      const smoke_case& c = info.param;
      return "N" + std::to_string(c.chunk) + "_teams" + std::to_string(c.teams) + "_range" + std::to_string(c.range);
    });

// Stamp groups (device_options::stamp_group): the records a grouped run
// writes keep the recorder's rules, and the history checks linearizable.
// Rules, per team: a group (its operations share a call stamp) holds at most
// `group` operations, every one of them completed, all returning at one
// stamp after the call; no two on one key; and the team's groups follow each
// other (each called after the one before returned). At 2,000 keys with 40%
// inserts and deletes, teams often meet a key again within a group, which
// starts a new one; at 1M keys groups are nearly always full.
struct group_case {
  int chunk;
  std::uint32_t group;
  std::uint32_t range;
  int insert_pct, delete_pct, contains_pct;
};
class CudaStampGroups : public ::testing::TestWithParam<group_case> {};

TEST_P(CudaStampGroups, GroupsKeepTheirRulesAndTheHistoryIsLinearizable) {
  if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const group_case c = GetParam();
  gfsl::model::workload w;
  w.chunk = c.chunk;
  w.teams = 2048;
  w.ops = 400000;
  w.range = c.range;
  w.insert_pct = c.insert_pct;
  w.delete_pct = c.delete_pct;
  w.contains_pct = c.contains_pct;
  w.seed = 5;
  gfsl::device_options o;
  o.watchdog_seconds = 60.0;
  o.stamp_group = c.group;
  const gfsl::device_run d = gfsl::run_on_device(w, o);
  ASSERT_FALSE(d.timed_out) << "kernel watchdog fired on " << d.device_name;
  const gfsl::host_run& r = d.run;
  ASSERT_EQ(r.report.first_error, gfsl::status::ok) << r.report.error_detail;
  ASSERT_EQ(r.records.size(), w.ops);
  struct group_seen {
    std::uint64_t ret = 0;
    std::vector<gfsl::key_type> keys;
  };
  std::map<std::pair<gfsl::team_id, std::uint64_t>, group_seen> groups;  // (team, call) -> group
  for (const auto& rec : r.records) {
    ASSERT_NE(rec.ret, gfsl::model::no_stamp) << "an operation of a finished run has no return stamp";
    ASSERT_LT(rec.call, rec.ret);
    auto [it, fresh] = groups.emplace(std::make_pair(rec.team, rec.call), group_seen{rec.ret, {}});
    ASSERT_EQ(it->second.ret, rec.ret) << "team " << rec.team << ": two returns in the group called at " << rec.call;
    it->second.keys.push_back(rec.op.key);
  }
  std::uint64_t full = 0;
  gfsl::team_id last_team = 0;
  std::uint64_t last_ret = 0;
  for (auto& [at, g] : groups) {
    ASSERT_LE(g.keys.size(), c.group) << "team " << at.first << ": a group of " << g.keys.size();
    std::sort(g.keys.begin(), g.keys.end());
    ASSERT_EQ(std::adjacent_find(g.keys.begin(), g.keys.end()), g.keys.end())
        << "team " << at.first << ": two operations on one key in the group called at " << at.second;
    if (at.first == last_team && last_ret != 0) {
      ASSERT_LT(last_ret, at.second) << "team " << at.first << ": groups overlap";
    }
    last_team = at.first;
    last_ret = g.ret;
    full += g.keys.size() == c.group ? 1 : 0;
  }
  const double mean = static_cast<double>(w.ops) / static_cast<double>(groups.size());
  std::printf("[ groups   ] %s N=%d groups of %u at %u keys: %zu groups, %.2f operations each, %.1f%% full\n",
              d.device_name.c_str(), c.chunk, c.group, c.range, groups.size(), mean, 100.0 * full / groups.size());
  EXPECT_GT(mean, 1.5) << "groups do not form";
  gfsl::lin::check_options co;
  co.explain = false;
  const auto checked = gfsl::lin::check_history(gfsl::model::full_history(r.prefill, r.records), co);
  EXPECT_EQ(checked.v, gfsl::lin::verdict::linearizable) << checked.violating_keys << " keys violating";
}

INSTANTIATE_TEST_SUITE_P(
    Groups, CudaStampGroups,
    ::testing::Values(group_case{32, 4, 1000000, 10, 10, 80}, group_case{32, 32, 2000, 40, 40, 20},
                      group_case{16, 16, 1000000, 10, 10, 80}, group_case{16, 8, 2000, 40, 40, 20}),
    [](const auto& info) {
      const group_case& c = info.param;
      return "N" + std::to_string(c.chunk) + "_group" + std::to_string(c.group) + "_range" + std::to_string(c.range);
    });

// A chunk locked by a team that does not exist: every insert reaching it
// waits forever. The hang bound must end the kernel on the device, name the
// chunk and its holder, and keep what was recorded.
TEST(CudaHang, AStuckRunEndsWithinItsBoundAndNamesTheLockHolder) {
  if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  gfsl::model::workload w;
  w.chunk = 32;
  w.teams = 2048;
  w.ops = 100000;
  w.range = 1000;
  w.prefill = 0;
  w.insert_pct = 100;
  w.delete_pct = 0;
  w.contains_pct = 0;
  gfsl::device_options o;
  o.hang_seconds = 2.0;
  o.watchdog_seconds = 60.0;
  o.locked_at_start = 0;  // the head chunk of level 0
  // Timed for the log line only: the verdict is the device's own hang
  // report, not how long it took.
  const auto start = std::chrono::steady_clock::now();
  const gfsl::device_run d = gfsl::run_on_device(w, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(d.timed_out) << "the host watchdog had to step in: the device-side bound did not work";
  ASSERT_TRUE(d.hung);
  EXPECT_NE(d.hang_detail.find("waited on chunk 0"), std::string::npos) << d.hang_detail;
  EXPECT_NE(d.hang_detail.find("held by team " + std::to_string(gfsl::max_team_id)), std::string::npos) << d.hang_detail;
  std::size_t pending = 0;
  for (const auto& rec : d.run.records) pending += rec.ret == gfsl::model::no_stamp;
  EXPECT_GT(pending, 0u);
  EXPECT_LE(pending, w.teams);
  std::printf("[ hang     ] %s: stopped after %.2f s: %s; %zu records, %zu pending\n", d.device_name.c_str(), seconds,
              d.hang_detail.c_str(), d.run.records.size(), pending);
}

// The structural event log recorded on the device. On the correct core every
// temporal invariant holds, the sequence numbers are exactly 0..n-1 (one
// device-wide counter, each number one slot), and the allocations logged are
// the chunks the pool handed out in the concurrent phase.
gfsl::model::workload churn_workload(int chunk) {
  gfsl::model::workload w;
  w.chunk = chunk;
  w.teams = 2048;
  w.ops = 300000;
  w.range = 3000;
  w.insert_pct = 40;
  w.delete_pct = 40;
  w.contains_pct = 20;
  w.seed = 5;
  return w;
}

class CudaEvents : public ::testing::TestWithParam<int> {};

TEST_P(CudaEvents, TheDeviceLogIsCompleteOrderedAndEveryTemporalInvariantHolds) {
  if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const gfsl::model::workload w = churn_workload(GetParam());
  gfsl::device_options o;
  o.events = true;
  o.watchdog_seconds = 60.0;
  const gfsl::device_run d = gfsl::run_on_device(w, o);
  ASSERT_FALSE(d.timed_out);
  ASSERT_FALSE(d.hung) << d.hang_detail;
  const gfsl::host_run& r = d.run;
  ASSERT_EQ(r.report.first_error, gfsl::status::ok) << r.report.error_detail;
  ASSERT_EQ(r.events_dropped, 0u);
  ASSERT_FALSE(r.initial_snapshot.words.empty());
  ASSERT_GT(r.events.size(), w.ops / 10);
  std::uint64_t allocations = 0, cas = 0;
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    ASSERT_EQ(r.events[i].seq, i) << "slot " << i << " holds another event's number";
    ASSERT_LT(r.events[i].team, w.teams);
    allocations += r.events[i].kind == gfsl::invariants::event_kind::alloc;
    cas += r.events[i].kind == gfsl::invariants::event_kind::cas;
  }
  const std::uint64_t allocated_before = r.initial_snapshot.words[gfsl::header_offsets::alloc_counter];
  const std::uint64_t allocated_after = r.final_snapshot.words[gfsl::header_offsets::alloc_counter];
  EXPECT_EQ(allocations, allocated_after - allocated_before);
  EXPECT_GT(cas, 0u);
  const auto t = gfsl::invariants::check_events(r.initial_snapshot, r.events);
  EXPECT_TRUE(t.violations.empty()) << t.violations.size() << " violations, first: " << t.violations.front().describe();
  EXPECT_EQ(t.checked.size(), gfsl::invariants::temporal_invariant_names().size());
  std::printf("[ events   ] %s N=%d: %zu events (%llu allocations, %llu lock CASes) for %llu operations, %.1f Mops/s; "
              "%zu temporal invariants hold\n",
              d.device_name.c_str(), w.chunk, r.events.size(), (unsigned long long)allocations, (unsigned long long)cas,
              (unsigned long long)w.ops, w.ops / r.report.seconds / 1e6, t.checked.size());
}

INSTANTIATE_TEST_SUITE_P(Chunk, CudaEvents, ::testing::Values(32, 16),
                         [](const auto& info) { return "N" + std::to_string(info.param); });

// A log too small for the run keeps an exact prefix of the order, says how
// many events it lost, and the prefix still checks.
TEST(CudaEvents, AFullLogKeepsAnExactPrefixAndCountsWhatItLost) {
  if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const gfsl::model::workload w = churn_workload(32);
  gfsl::device_options o;
  o.events = true;
  o.event_capacity = 5000;
  const gfsl::device_run d = gfsl::run_on_device(w, o);
  ASSERT_FALSE(d.timed_out || d.hung);
  ASSERT_EQ(d.run.events.size(), 5000u);
  EXPECT_GT(d.run.events_dropped, 0u);
  for (std::size_t i = 0; i < d.run.events.size(); ++i) ASSERT_EQ(d.run.events[i].seq, i);
  const auto t = gfsl::invariants::check_events(d.run.initial_snapshot, d.run.events);
  EXPECT_TRUE(t.violations.empty()) << t.violations.front().describe();
}

// Seeded bugs that break the lock discipline must be flagged from the
// device's log: a zombie unlinked by rewriting its predecessor's NEXT without
// that chunk's lock, and a merge that writes into a successor it never locked.
class CudaEventsMutant : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaEventsMutant, TheDeviceLogFlagsTheLockDiscipline) {
  if (const std::string why = gfsl::cuda_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const gfsl::mutant_info* m = gfsl::find_mutant(GetParam());
  ASSERT_NE(m, nullptr);
  gfsl::model::workload w = churn_workload(32);
  w.teams = 256;
  w.ops = 50000;
  gfsl::device_options o;
  o.events = true;
  o.choice.mutant = static_cast<std::uint8_t>(m->id);
  o.hang_seconds = 2.0;
  o.watchdog_seconds = 60.0;
  gfsl::device_run d;
  try {
    d = gfsl::run_on_device(w, o);
  } catch (const std::exception& e) {
    gfsl::reset_device_after_fault();
    GTEST_SKIP() << "the mutant made the device fault before its log came back: " << e.what();
  }
  ASSERT_FALSE(d.timed_out);
  const auto t = gfsl::invariants::check_events(d.run.initial_snapshot, d.run.events);
  bool lock_discipline = false;
  for (const auto& v : t.violations) lock_discipline |= v.invariant == "lock-discipline";
  EXPECT_TRUE(lock_discipline) << GetParam() << ": " << t.violations.size() << " violations in " << d.run.events.size()
                               << " events, none of lock-discipline";
  if (!t.violations.empty()) {
    std::printf("[ events   ] %s: %s flagged: %s\n", d.device_name.c_str(), GetParam(), t.violations.front().describe().c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Mutants, CudaEventsMutant, ::testing::Values("unlink-without-lock", "merge-into-unlocked"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
