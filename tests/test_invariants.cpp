// The invariant checkers of thesis 4.3 are only worth something if they catch
// what they claim to: every snapshot and temporal invariant is broken here on
// purpose, from a correct structure or a correct event log, and the checker
// must name it. Correct runs of every host mode must pass untouched, and
// corrupt or garbage input must yield a report, never a crash or a hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench/level0_oracle.hpp"
#include "exec/host_runner.hpp"
#include "exec/host_structure.hpp"
#include "core/gfsl/layout.hpp"
#include "exec/sched/scheduler.hpp"
#include "core/types.hpp"
#include "model/final_state.hpp"
#include "model/history.hpp"
#include "core/events.hpp"
#include "core/gfsl/invariants.hpp"
#include "invariants/snapshot.hpp"
#include "invariants/temporal.hpp"
#include "model/sequential_map.hpp"

namespace {

namespace inv = gfsl::invariants;
using gfsl::chunk_index;
using gfsl::entry_type;
using gfsl::key_type;
using gfsl::team_id;
using gfsl::value_type;
using gfsl::header_offsets;

using kv = std::pair<key_type, value_type>;
using Widths = ::testing::Types<std::integral_constant<int, 16>, std::integral_constant<int, 32>>;

constexpr key_type key_empty = gfsl::key_empty;
constexpr key_type neg_inf = gfsl::key_neg_inf;
constexpr chunk_index no_chunk = gfsl::no_chunk;

// A level-0 value distinct from any key or chunk index, so that a value read
// as a down pointer (or the reverse) shows.
constexpr value_type val(key_type k) { return k + 100000u; }

// ---- Reports -------------------------------------------------------------------

std::set<std::string> names_of(const std::vector<inv::violation>& vs) {
  std::set<std::string> out;
  for (const inv::violation& v : vs) out.insert(v.invariant);
  return out;
}

std::string listing(const std::vector<inv::violation>& vs) {
  std::string s;
  for (const inv::violation& v : vs) s += "\n  " + v.describe();
  return s.empty() ? " (none)" : s;
}

// A violation of `name`, naming chunk `c` among its chunks unless c is no_chunk.
const inv::violation* find_violation(const std::vector<inv::violation>& vs, const std::string& name,
                                     chunk_index c = no_chunk) {
  for (const inv::violation& v : vs) {
    if (v.invariant != name) continue;
    if (c == no_chunk || std::find(v.chunks.begin(), v.chunks.end(), c) != v.chunks.end()) return &v;
  }
  return nullptr;
}
bool flags(const std::vector<inv::violation>& vs, const std::string& name, chunk_index c = no_chunk) {
  return find_violation(vs, name, c) != nullptr;
}

// A checker that loops on corrupt input would hang the whole suite; a hang
// must show as a failure with a reason instead.
template <class F>
auto bounded(F f) -> decltype(f()) {
  auto fut = std::async(std::launch::async, std::move(f));
  if (fut.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fputs("FATAL: an invariant checker did not return within 60 s on a corrupt input (it loops)\n", stderr);
    std::fflush(stderr);
    std::_Exit(3);
  }
  return fut.get();
}

inv::snapshot_report check(const inv::snapshot& s, bool quiescent = true, const std::vector<kv>* expected = nullptr) {
  return bounded([&] { return inv::check_snapshot(s, quiescent, expected); });
}
inv::temporal_report check_log(const inv::snapshot& before, const std::vector<inv::structural_event>& events) {
  return bounded([&] { return inv::check_events(before, events); });
}

// ---- Editing snapshots word by word ----------------------------------------------

template <int N>
class editor {
 public:
  using shape = gfsl::chunk_shape<N>;
  static constexpr int dsize = shape::dsize;
  static constexpr int next_lane = shape::next_lane;
  static constexpr int lock_lane = shape::lock_lane;

  explicit editor(inv::snapshot& s) : s_(s) {}

  chunk_index allocated() const {
    return static_cast<chunk_index>((s_.words.size() - header_offsets::pool) / N);
  }
  std::uint64_t* chunk(chunk_index c) const {
    if (c >= allocated()) throw std::out_of_range("editor: chunk " + std::to_string(c) + " not in the snapshot");
    return s_.words.data() + header_offsets::pool + static_cast<std::size_t>(c) * N;
  }
  key_type key(chunk_index c, int lane) const { return gfsl::entry_key(chunk(c)[lane]); }
  key_type max(chunk_index c) const { return gfsl::entry_key(chunk(c)[next_lane]); }
  chunk_index next(chunk_index c) const { return gfsl::entry_value(chunk(c)[next_lane]); }
  bool zombie(chunk_index c) const { return gfsl::lock_is_zombie(chunk(c)[lock_lane]); }
  void set_next(chunk_index c, key_type m, chunk_index nx) { chunk(c)[next_lane] = gfsl::make_entry(m, nx); }
  void set_lock(chunk_index c, std::uint64_t w) { chunk(c)[lock_lane] = w; }
  void set_entry(chunk_index c, int lane, key_type k, std::uint32_t v) { chunk(c)[lane] = gfsl::make_entry(k, v); }

  // The non-EMPTY data entries in lane order.
  std::vector<entry_type> entries(chunk_index c) const {
    std::vector<entry_type> out;
    for (int i = 0; i < dsize; ++i) {
      if (gfsl::entry_key(chunk(c)[i]) != key_empty) out.push_back(chunk(c)[i]);
    }
    return out;
  }
  // Writes `e` from lane 0 on, EMPTY after.
  void set_entries(chunk_index c, const std::vector<entry_type>& e) {
    if (e.size() > static_cast<std::size_t>(dsize)) throw std::invalid_argument("editor: too many entries");
    for (int i = 0; i < dsize; ++i) chunk(c)[i] = i < static_cast<int>(e.size()) ? e[i] : gfsl::empty_entry;
  }

  std::uint64_t& head(int level) { return s_.words[header_offsets::heads + level]; }
  std::uint64_t& counter(int level) { return s_.words[header_offsets::level_counts + level]; }

  // A level in list order, zombies included.
  std::vector<chunk_index> list(int level) const {
    std::vector<chunk_index> out;
    for (auto c = static_cast<chunk_index>(s_.words[header_offsets::heads + level]);
         c != no_chunk && c < allocated() && out.size() <= allocated(); c = next(c)) {
      out.push_back(c);
    }
    return out;
  }
  std::vector<chunk_index> live(int level) const {
    std::vector<chunk_index> out;
    for (chunk_index c : list(level)) {
      if (!zombie(c)) out.push_back(c);
    }
    return out;
  }

 private:
  inv::snapshot& s_;
};

// ---- Structures laid out by hand ---------------------------------------------------

// Keys 10, 20, 30, ... so that a corruption can put a key or a max strictly
// between two neighbours. Every non-final chunk holds `per` entries, a few
// above the fill bound, so a test can remove one or two without tripping it.
template <int N>
constexpr int per_chunk() {
  return gfsl::invariants::min_keys_of_live_nonfinal_chunk(N) + 3;
}

template <int N>
struct built {
  inv::snapshot snap;
  std::vector<std::vector<chunk_index>> levels;  // chunks of each built level, in list order
  std::vector<kv> bottom;                        // level 0's user keys and values
};

// A skiplist of `user_keys` keys: level 0 cut into chunks of per_chunk
// entries; each level above holds -inf and the first key of every chunk below
// but the first, pointing at that chunk, until a level fits in one chunk or
// `max_levels` levels are built. An empty final chunk is appended to level 0
// on request.
template <int N>
built<N> build(int user_keys, int max_levels, bool empty_final0 = false) {
  const int per = per_chunk<N>();
  built<N> b;
  std::vector<std::vector<std::vector<entry_type>>> groups;  // level, chunk, entries
  std::vector<entry_type> level_entries;
  level_entries.push_back(gfsl::make_entry(neg_inf, 0));
  for (int i = 1; i <= user_keys; ++i) {
    const key_type k = static_cast<key_type>(10 * i);
    level_entries.push_back(gfsl::make_entry(k, val(k)));
    b.bottom.emplace_back(k, val(k));
  }
  chunk_index next_free = N;
  for (int level = 0; level < max_levels && level < N; ++level) {
    std::vector<std::vector<entry_type>> g;
    for (std::size_t i = 0; i < level_entries.size(); i += per) {
      g.emplace_back(level_entries.begin() + static_cast<long>(i),
                     level_entries.begin() + static_cast<long>(std::min(level_entries.size(), i + per)));
    }
    if (level == 0 && empty_final0) g.emplace_back();
    std::vector<chunk_index> idx;
    for (std::size_t i = 0; i < g.size(); ++i) idx.push_back(i == 0 ? static_cast<chunk_index>(level) : next_free++);
    groups.push_back(g);
    b.levels.push_back(idx);
    if (g.size() < 2) break;
    level_entries.clear();
    level_entries.push_back(gfsl::make_entry(neg_inf, idx[0]));
    for (std::size_t i = 1; i < g.size(); ++i) {
      if (!g[i].empty()) level_entries.push_back(gfsl::make_entry(gfsl::entry_key(g[i].front()), idx[i]));
    }
  }
  b.snap.chunk = N;
  b.snap.capacity = next_free + 16;
  b.snap.words.resize(gfsl::structure_view<N>::word_count(next_free));
  for (std::size_t i = 0; i < b.snap.words.size(); ++i) b.snap.words[i] = gfsl::initial_word<N>(i, b.snap.capacity);
  b.snap.words[header_offsets::alloc_counter] = next_free;
  editor<N> e(b.snap);
  for (std::size_t level = 0; level < groups.size(); ++level) {
    bool user_keys_here = false;
    for (std::size_t i = 0; i < groups[level].size(); ++i) {
      const chunk_index c = b.levels[level][i];
      const auto& g = groups[level][i];
      e.set_entries(c, g);
      for (entry_type x : g) user_keys_here = user_keys_here || gfsl::entry_key(x) != neg_inf;
      if (i + 1 == groups[level].size()) {
        e.set_next(c, key_empty, no_chunk);
      } else {
        e.set_next(c, gfsl::entry_key(g.back()), b.levels[level][i + 1]);
      }
      e.set_lock(c, gfsl::lock_free_word);
    }
    e.counter(static_cast<int>(level)) = user_keys_here ? groups[level].size() : 0;
  }
  return b;
}

// Three levels, level 1 spread over three chunks: room for every corruption
// below, including one in the descent from level 2.
template <int N>
built<N> standard() {
  const int per = per_chunk<N>();
  return build<N>(per * (2 * per + 3), 3);
}

// ---- Real runs ------------------------------------------------------------------------

// Heavy insert/delete churn on a small range: splits, merges, zombies and a few
// levels, within a fraction of a second.
gfsl::model::workload churn(int chunk, std::uint32_t teams, std::uint64_t ops, std::uint32_t range, std::uint64_t seed) {
  gfsl::model::workload w;
  w.chunk = chunk;
  w.teams = teams;
  w.ops = ops;
  w.range = range;
  w.prefill = 0.5;
  w.insert_pct = 45;
  w.delete_pct = 45;
  w.contains_pct = 10;
  w.p_chunk = 1.0;
  w.seed = seed;
  return w;
}

std::vector<kv> model_state(const gfsl::host_run& r) {
  gfsl::model::sequential_map m;
  for (const auto& op : r.prefill) m.apply(op);
  for (const auto& rec : r.records) m.apply(rec.op);
  return m.entries();
}

gfsl::run_extras with_events() {
  gfsl::run_extras ex;
  ex.events = true;
  return ex;
}

template <int N>
const gfsl::host_run& sequential_run() {
  static const gfsl::host_run r =
      gfsl::run_on_host(churn(N, 4, 4000, 1000, 7), gfsl::host_mode::sequential, 0, true, with_events());
  return r;
}
template <int N>
const gfsl::host_run& threads_run() {
  static const gfsl::host_run r =
      gfsl::run_on_host(churn(N, 4, 4000, 1000, 8), gfsl::host_mode::threads, 0, true, with_events());
  return r;
}
gfsl::sched::options lane_options(std::uint64_t seed) {
  gfsl::sched::options o;
  o.strat = gfsl::sched::strategy::random;
  o.gran = gfsl::sched::granularity::lane;
  o.seed = seed;
  return o;
}
// Scheduler seeds are ones where the run completes: at lane granularity the
// scheduler can park a team on a LOCK word it loaded before the holder freed
// it (the free came while the rest of the chunk was being read) and report a
// deadlock that is not one.
template <int N>
const gfsl::scheduled_run& scheduled_run() {
  static const gfsl::scheduled_run r = gfsl::run_scheduled(churn(N, 3, 600, 120, 9), lane_options(1), 0, true, with_events());
  return r;
}

// The sequential run's final structure, with what a test needs of it.
template <int N>
inv::snapshot real_snapshot() {
  inv::snapshot s = sequential_run<N>().final_snapshot;
  editor<N> e(s);
  if (e.live(0).size() < 3) throw std::logic_error("the churn run left fewer than 3 live chunks in level 0");
  if (e.live(1).empty() || e.entries(e.live(1).back()).size() < 2) throw std::logic_error("the churn run left level 1 empty");
  return s;
}

// ---- Snapshot invariants ---------------------------------------------------------------

template <class T>
class SnapshotInvariants : public ::testing::Test {};
TYPED_TEST_SUITE(SnapshotInvariants, Widths);

TYPED_TEST(SnapshotInvariants, HandBuiltStructureSatisfiesEveryInvariant) {
  constexpr int N = TypeParam::value;
  const built<N> b = standard<N>();
  ASSERT_EQ(b.levels.size(), 3u);
  ASSERT_EQ(b.levels[1].size(), 3u);
  const inv::snapshot_report r = check(b.snap, true, &b.bottom);
  EXPECT_TRUE(r.violations.empty()) << listing(r.violations);
  EXPECT_EQ(r.checked, inv::snapshot_invariant_names());
  // The empty final chunk variant, used for the zombie-final case, is sound too.
  const built<N> e = build<N>(3 * per_chunk<N>() - 1, 2, true);
  const inv::snapshot_report re = check(e.snap, true, &e.bottom);
  EXPECT_TRUE(re.violations.empty()) << listing(re.violations);
}

TYPED_TEST(SnapshotInvariants, RealRunsOfEveryHostModeHaveNoViolations) {
  constexpr int N = TypeParam::value;
  {
    const gfsl::host_run& r = sequential_run<N>();
    ASSERT_EQ(r.report.first_error, gfsl::status::ok) << r.report.error_detail;
    ASSERT_EQ(gfsl::model::first_sequential_mismatch(r.prefill, r.records), "");
    const std::vector<kv> expected = model_state(r);
    const inv::snapshot_report rep = check(r.final_snapshot, true, &expected);
    EXPECT_TRUE(rep.violations.empty()) << "sequential:" << listing(rep.violations);
    EXPECT_EQ(rep.checked, inv::snapshot_invariant_names());
    EXPECT_GT(rep.live_chunks, 3u);
    EXPECT_GT(r.report.height, 0) << "the run should build upper levels";
  }
  {
    const gfsl::host_run& r = threads_run<N>();
    ASSERT_EQ(r.report.first_error, gfsl::status::ok) << r.report.error_detail;
    const auto implied = gfsl::model::check_implied_final_state(r.prefill, r.records, r.final_entries);
    ASSERT_TRUE(implied.empty()) << implied.front();
    const inv::snapshot_report rep = check(r.final_snapshot, true, &r.final_entries);
    EXPECT_TRUE(rep.violations.empty()) << "threads:" << listing(rep.violations);
  }
  {
    const gfsl::scheduled_run& sr = scheduled_run<N>();
    ASSERT_EQ(sr.outcome.reason, gfsl::sched::stop_reason::completed) << sr.outcome.report;
    const gfsl::host_run& r = sr.run;
    const auto implied = gfsl::model::check_implied_final_state(r.prefill, r.records, r.final_entries);
    ASSERT_TRUE(implied.empty()) << implied.front();
    const inv::snapshot_report rep = check(r.final_snapshot, true, &r.final_entries);
    EXPECT_TRUE(rep.violations.empty()) << "scheduled (lane granularity):" << listing(rep.violations);
    // The snapshot before the concurrent phase is quiescent as well.
    const inv::snapshot_report before = check(r.initial_snapshot);
    EXPECT_TRUE(before.violations.empty()) << "initial snapshot:" << listing(before.violations);
  }
}

TYPED_TEST(SnapshotInvariants, NextCycleIsLevelListAndTheCheckReturns) {
  constexpr int N = TypeParam::value;
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    const std::vector<chunk_index> l0 = e.list(0);
    const chunk_index last = l0.back();
    e.set_next(last, key_empty, l0.front());
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "level-list", last)) << listing(r.violations);
  }
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    const chunk_index mid = e.list(0)[1];
    e.set_next(mid, e.max(mid), mid);
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "level-list", mid)) << "self-loop:" << listing(r.violations);
  }
  {
    // A cycle in an upper level, through chunks the walk reaches laterally.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index second = b.levels[1][1];
    e.set_next(second, e.max(second), b.levels[1][0]);
    const auto r = check(b.snap);
    EXPECT_TRUE(flags(r.violations, "level-list", second)) << listing(r.violations);
  }
}

TYPED_TEST(SnapshotInvariants, NextOrHeadOutsideThePoolIsLevelList) {
  constexpr int N = TypeParam::value;
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    const chunk_index mid = e.list(0)[1];
    e.set_next(mid, e.max(mid), e.allocated() + 7);
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "level-list", mid)) << listing(r.violations);
  }
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    const chunk_index mid = e.list(0)[1];
    e.set_next(mid, e.max(mid), no_chunk - 1);
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "level-list", mid)) << listing(r.violations);
  }
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    const chunk_index outside = e.allocated() + 3;
    e.head(1) = outside;
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "level-list", outside)) << listing(r.violations);
  }
  {
    // A level that stops at a non-final chunk: its NEXT names no chunk but its
    // max is finite.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index a = b.levels[0][1];
    e.set_next(a, e.max(a), no_chunk);
    const auto r = check(b.snap);
    EXPECT_TRUE(flags(r.violations, "level-list", a)) << listing(r.violations);
  }
}

TYPED_TEST(SnapshotInvariants, ZombieFinalChunkIsFinalNotZombie) {
  constexpr int N = TypeParam::value;
  {
    built<N> b = build<N>(3 * per_chunk<N>() - 1, 2, true);
    editor<N> e(b.snap);
    const chunk_index last = b.levels[0].back();
    e.set_lock(last, gfsl::zombie_word_of(2));
    // The counter follows the live chunks, as the merge that made a zombie
    // would have kept it: only the zombie mark itself is wrong.
    e.counter(0) -= 1;
    const auto r = check(b.snap, true, &b.bottom);
    EXPECT_TRUE(flags(r.violations, "final-not-zombie", last)) << listing(r.violations);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"final-not-zombie"}) << listing(r.violations);
    // It holds at every step, so a mid-run check flags it too.
    const auto mid = check(b.snap, false);
    EXPECT_TRUE(flags(mid.violations, "final-not-zombie", last)) << listing(mid.violations);
  }
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    const chunk_index last = e.list(0).back();
    e.set_lock(last, gfsl::zombie_word_of(1));
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "final-not-zombie", last)) << listing(r.violations);
  }
}

TYPED_TEST(SnapshotInvariants, UnsortedChunkIsChunkSorted) {
  constexpr int N = TypeParam::value;
  {
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index c = b.levels[0][2];
    std::swap(e.chunk(c)[1], e.chunk(c)[2]);
    const auto r = check(b.snap);
    EXPECT_TRUE(flags(r.violations, "chunk-sorted", c)) << listing(r.violations);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"chunk-sorted"}) << listing(r.violations);
  }
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    chunk_index c = no_chunk;
    for (chunk_index x : e.live(0)) {
      if (e.entries(x).size() >= 4) c = x;
    }
    ASSERT_NE(c, no_chunk);
    std::swap(e.chunk(c)[1], e.chunk(c)[2]);
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "chunk-sorted", c)) << listing(r.violations);
  }
  {
    // A key after an EMPTY entry: the last key moved two lanes right.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index c = b.levels[0][2];
    const int per = per_chunk<N>();
    ASSERT_LT(per + 1, editor<N>::dsize);
    e.chunk(c)[per + 1] = e.chunk(c)[per - 1];
    e.chunk(c)[per - 1] = gfsl::empty_entry;
    const auto r = check(b.snap, true, &b.bottom);
    const inv::violation* v = find_violation(r.violations, "chunk-sorted", c);
    ASSERT_NE(v, nullptr) << listing(r.violations);
    EXPECT_NE(v->detail.find("EMPTY"), std::string::npos) << v->describe();
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"chunk-sorted"}) << listing(r.violations);
  }
}

// Level 0 still holds exactly the model's pairs when one chunk has two keys
// out of order: chunk-sorted is what is wrong, and model-state must not claim
// that a key both is missing and should not be there.
TYPED_TEST(SnapshotInvariants, UnsortedChunkDoesNotMakeModelStateMisreport) {
  constexpr int N = TypeParam::value;
  built<N> b = standard<N>();
  editor<N> e(b.snap);
  const chunk_index c = b.levels[0][2];
  std::swap(e.chunk(c)[1], e.chunk(c)[2]);
  const auto r = check(b.snap, true, &b.bottom);
  EXPECT_TRUE(flags(r.violations, "chunk-sorted", c)) << listing(r.violations);
  EXPECT_FALSE(flags(r.violations, "model-state"))
      << "level 0 holds every (key, value) of the model and nothing else:" << listing(r.violations);
}

TYPED_TEST(SnapshotInvariants, WrongMaxIsMaxField) {
  constexpr int N = TypeParam::value;
  {
    // Above the largest key, below the next chunk: nothing but the field is off.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index c = b.levels[0][2];
    e.set_next(c, e.max(c) + 1, e.next(c));
    const auto r = check(b.snap, true, &b.bottom);
    EXPECT_TRUE(flags(r.violations, "max-field", c)) << listing(r.violations);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"max-field"}) << listing(r.violations);
  }
  {
    // Below the largest key: that key is also lost to searches.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index c = b.levels[0][2];
    e.set_next(c, e.max(c) - 1, e.next(c));
    const auto r = check(b.snap);
    EXPECT_TRUE(flags(r.violations, "max-field", c)) << listing(r.violations);
    EXPECT_TRUE(flags(r.violations, "bottom-search", c)) << listing(r.violations);
  }
  {
    // A final chunk with a finite max.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index last = b.levels[0].back();
    e.set_next(last, b.bottom.back().first, no_chunk);
    const auto r = check(b.snap);
    EXPECT_TRUE(flags(r.violations, "max-field", last)) << listing(r.violations);
  }
  {
    // A non-final chunk without keys.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index c = b.levels[0][2];
    e.set_entries(c, {});
    const auto r = check(b.snap);
    EXPECT_TRUE(flags(r.violations, "max-field", c)) << listing(r.violations);
  }
}

TYPED_TEST(SnapshotInvariants, OverlappingNeighboursAreLateralOrder) {
  constexpr int N = TypeParam::value;
  built<N> b = standard<N>();
  editor<N> e(b.snap);
  const chunk_index a = b.levels[0][1], c = b.levels[0][2];
  const chunk_index up = b.levels[1][0];
  // c's first key becomes a's max (same value, so searches still answer
  // right), and the level-1 entry that named c's old first key names a's max
  // and points at a: every other invariant keeps holding.
  const key_type amax = e.max(a);
  ASSERT_EQ(e.key(up, 2), e.key(c, 0));
  ASSERT_EQ(gfsl::entry_value(e.chunk(up)[2]), c);
  e.set_entry(c, 0, amax, val(amax));
  e.set_entry(up, 2, amax, a);
  const auto r = check(b.snap);
  const inv::violation* v = find_violation(r.violations, "lateral-order", a);
  ASSERT_NE(v, nullptr) << listing(r.violations);
  EXPECT_EQ(v->chunks, (std::vector<chunk_index>{a, c}));
  EXPECT_EQ(names_of(r.violations), std::set<std::string>{"lateral-order"}) << listing(r.violations);
}

TYPED_TEST(SnapshotInvariants, BadLevelStartIsLevelHead) {
  constexpr int N = TypeParam::value;
  {
    // -inf missing from level 0's first chunk.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index first = b.levels[0][0];
    std::vector<entry_type> x = e.entries(first);
    x.erase(x.begin());
    e.set_entries(first, x);
    const auto r = check(b.snap, true, &b.bottom);
    EXPECT_TRUE(flags(r.violations, "level-head", first)) << listing(r.violations);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"level-head"}) << listing(r.violations);
    const auto mid = check(b.snap, false);
    EXPECT_TRUE(flags(mid.violations, "level-head", first)) << "mid-run:" << listing(mid.violations);
  }
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    const chunk_index first = e.live(0).front();
    e.set_entry(first, 0, key_empty, 0);
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "level-head", first)) << listing(r.violations);
  }
  {
    // Level 1's -inf skips level 0's first chunk.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index up = b.levels[1][0];
    e.set_entry(up, 0, neg_inf, b.levels[0][1]);
    const auto r = check(b.snap);
    EXPECT_TRUE(flags(r.violations, "level-head", up)) << listing(r.violations);
  }
}

TYPED_TEST(SnapshotInvariants, UpperKeyMissingBelowIsLevelSubset) {
  constexpr int N = TypeParam::value;
  built<N> b = standard<N>();
  editor<N> e(b.snap);
  const chunk_index c = b.levels[0][2];
  const key_type gone = e.key(c, 0);
  std::vector<entry_type> x = e.entries(c);
  x.erase(x.begin());
  e.set_entries(c, x);
  const auto r = check(b.snap);
  const inv::violation* v = find_violation(r.violations, "level-subset");
  ASSERT_NE(v, nullptr) << listing(r.violations);
  EXPECT_NE(v->detail.find(std::to_string(gone)), std::string::npos) << v->describe();
  EXPECT_EQ(names_of(r.violations), std::set<std::string>{"level-subset"}) << listing(r.violations);
}

TYPED_TEST(SnapshotInvariants, DownPointerPastTheEnclosingChunkIsDownReachability) {
  constexpr int N = TypeParam::value;
  {
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index up = b.levels[1][0], c = b.levels[0][2], after = b.levels[0][3];
    ASSERT_EQ(gfsl::entry_value(e.chunk(up)[2]), c);
    e.set_entry(up, 2, e.key(up, 2), after);
    const auto r = check(b.snap);
    const inv::violation* v = find_violation(r.violations, "down-reachability", up);
    ASSERT_NE(v, nullptr) << listing(r.violations);
    EXPECT_EQ(v->chunks, (std::vector<chunk_index>{up, after}));
    const auto mid = check(b.snap, false);
    EXPECT_TRUE(flags(mid.violations, "down-reachability", up)) << "mid-run:" << listing(mid.violations);
  }
  {
    // Pointing at a chunk before the enclosing one is allowed (lateral steps
    // reach it): the thesis' order between down pointers, not equality.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index up = b.levels[1][0];
    e.set_entry(up, 2, e.key(up, 2), b.levels[0][1]);
    const auto r = check(b.snap, true, &b.bottom);
    EXPECT_TRUE(r.violations.empty()) << listing(r.violations);
  }
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    // A level-1 user key, pointed one live chunk past its enclosing chunk.
    const std::vector<chunk_index> l0 = e.live(0);
    chunk_index up = no_chunk;
    int lane = -1;
    key_type k = 0;
    std::size_t enc = 0;
    for (chunk_index c : e.live(1)) {
      for (int i = 0; i < editor<N>::dsize && up == no_chunk; ++i) {
        const key_type x = e.key(c, i);
        if (x == neg_inf || x == key_empty) continue;
        std::size_t j = 0;
        while (j < l0.size() && e.max(l0[j]) < x) ++j;
        if (j + 1 < l0.size()) up = c, lane = i, k = x, enc = j;
      }
    }
    ASSERT_NE(up, no_chunk) << "no level-1 key outside level 0's final chunk";
    e.set_entry(up, lane, k, l0[enc + 1]);
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "down-reachability", up)) << listing(r.violations);
  }
}

TYPED_TEST(SnapshotInvariants, KeyBeyondItsChunksMaxIsBottomSearch) {
  constexpr int N = TypeParam::value;
  built<N> b = standard<N>();
  editor<N> e(b.snap);
  const chunk_index c = b.levels[0][2], after = b.levels[0][3];
  // A key of the next chunk (not its first, which level 1 indexes) moved to
  // the end of c, whose max stays below it: searches go past c.
  std::vector<entry_type> from = e.entries(after);
  const entry_type moved = from[1];
  from.erase(from.begin() + 1);
  e.set_entries(after, from);
  std::vector<entry_type> into = e.entries(c);
  into.push_back(moved);
  e.set_entries(c, into);
  const auto r = check(b.snap);
  const inv::violation* v = find_violation(r.violations, "bottom-search", c);
  ASSERT_NE(v, nullptr) << listing(r.violations);
  EXPECT_NE(v->detail.find("not found"), std::string::npos) << v->describe();
}

TYPED_TEST(SnapshotInvariants, SearchThatRestartsForeverIsCutByTheBudget) {
  constexpr int N = TypeParam::value;
  built<N> b = standard<N>();
  editor<N> e(b.snap);
  const chunk_index top = b.levels[2][0];
  const chunk_index l1_second = b.levels[1][1], l1_third = b.levels[1][2];
  ASSERT_EQ(gfsl::entry_value(e.chunk(top)[1]), l1_second);
  // Keys in the second level-1 chunk's range descend into the third, whose
  // keys are all above them and which has no predecessor to backtrack to: the
  // search restarts forever, and only the access budget ends it.
  e.set_entry(top, 1, e.key(top, 1), l1_third);
  // Returning at all shows the cut; the detail shows the budget made it.
  const auto r = check(b.snap);
  const inv::violation* v = find_violation(r.violations, "bottom-search");
  ASSERT_NE(v, nullptr) << listing(r.violations);
  EXPECT_NE(v->detail.find("budget"), std::string::npos) << v->describe();
  EXPECT_TRUE(flags(r.violations, "down-reachability", top)) << listing(r.violations);
}

TYPED_TEST(SnapshotInvariants, HeldLockIsNoLocksOnlyAtQuiescence) {
  constexpr int N = TypeParam::value;
  inv::snapshot s = real_snapshot<N>();
  const std::vector<kv> expected = model_state(sequential_run<N>());
  editor<N> e(s);
  const chunk_index c = e.live(0)[1];
  e.set_lock(c, gfsl::lock_word_of(3));
  const auto r = check(s, true, &expected);
  EXPECT_TRUE(flags(r.violations, "no-locks", c)) << listing(r.violations);
  EXPECT_EQ(names_of(r.violations), std::set<std::string>{"no-locks"}) << listing(r.violations);
  const auto mid = check(s, false);
  EXPECT_TRUE(mid.violations.empty()) << "a lock held mid-run is normal:" << listing(mid.violations);
}

TYPED_TEST(SnapshotInvariants, WrongCounterIsLevelCounters) {
  constexpr int N = TypeParam::value;
  {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    e.counter(0) += 1;
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "level-counters")) << listing(r.violations);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"level-counters"}) << listing(r.violations);
  }
  {
    // Zero for a level that holds keys.
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    e.counter(1) = 0;
    const auto r = check(b.snap, true, &b.bottom);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"level-counters"}) << listing(r.violations);
  }
  {
    // Nonzero for a level that holds only -inf (searches start higher, and
    // still find everything).
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    e.counter(5) = 1;
    const auto r = check(b.snap, true, &b.bottom);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"level-counters"}) << listing(r.violations);
  }
}

TYPED_TEST(SnapshotInvariants, UnderfilledChunkIsFillBound) {
  constexpr int N = TypeParam::value;
  const int min = inv::min_keys_of_live_nonfinal_chunk(N);
  ASSERT_EQ(min, (N - 2) / 3);
  for (const int keep : {min - 1, min}) {
    built<N> b = standard<N>();
    editor<N> e(b.snap);
    const chunk_index c = b.levels[0][2];
    // The first key (indexed above) and the last (the max) stay.
    const std::vector<entry_type> all = e.entries(c);
    std::vector<entry_type> x(all.begin(), all.begin() + (keep - 1));
    x.push_back(all.back());
    e.set_entries(c, x);
    const auto r = check(b.snap);
    if (keep < min) {
      EXPECT_TRUE(flags(r.violations, "fill-bound", c)) << listing(r.violations);
      EXPECT_EQ(names_of(r.violations), std::set<std::string>{"fill-bound"}) << listing(r.violations);
    } else {
      EXPECT_TRUE(r.violations.empty()) << "a chunk at the bound is legal:" << listing(r.violations);
    }
  }
}

TYPED_TEST(SnapshotInvariants, DifferentModelIsModelState) {
  constexpr int N = TypeParam::value;
  const inv::snapshot s = real_snapshot<N>();
  const std::vector<kv> model = model_state(sequential_run<N>());
  ASSERT_GT(model.size(), 3u);
  auto only_model_state = [&](const std::vector<kv>& expected, const std::string& what) {
    const auto r = check(s, true, &expected);
    const inv::violation* v = find_violation(r.violations, "model-state");
    ASSERT_NE(v, nullptr) << listing(r.violations);
    EXPECT_NE(v->detail.find(what), std::string::npos) << v->describe();
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"model-state"}) << listing(r.violations);
  };
  {
    std::vector<kv> fewer = model;
    fewer.erase(fewer.begin() + 1);
    only_model_state(fewer, "not in the model's final state");
  }
  {
    std::vector<kv> more = model;
    more.emplace_back(model.back().first + 1, 5);
    only_model_state(more, "is missing");
  }
  {
    std::vector<kv> other = model;
    other[2].second ^= 1;
    only_model_state(other, "has value");
  }
  EXPECT_TRUE(check(s, true, &model).violations.empty());
  // Without a model there is nothing to compare with.
  EXPECT_TRUE(check(s).violations.empty());
}

TYPED_TEST(SnapshotInvariants, MidRunCheckOnlyLooksAtStepInvariants) {
  constexpr int N = TypeParam::value;
  inv::snapshot s = real_snapshot<N>();
  editor<N> e(s);
  // What a run passes through between two steps: a held lock, a chunk
  // mid-shift, a counter that lags.
  const chunk_index c = e.live(0)[1];
  e.set_lock(c, gfsl::lock_word_of(0));
  chunk_index shifting = no_chunk;
  for (chunk_index x : e.live(0)) {
    if (e.entries(x).size() >= 4) shifting = x;
  }
  ASSERT_NE(shifting, no_chunk);
  e.chunk(shifting)[2] = e.chunk(shifting)[1];
  e.counter(0) += 1;
  const auto mid = check(s, false);
  EXPECT_EQ(mid.checked, inv::mid_run_invariant_names());
  EXPECT_TRUE(mid.violations.empty()) << listing(mid.violations);
  for (const inv::violation& v : mid.violations) {
    const auto& allowed = inv::mid_run_invariant_names();
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), v.invariant), allowed.end()) << v.describe();
  }
  const auto quiet = check(s, true);
  EXPECT_TRUE(flags(quiet.violations, "no-locks", c)) << listing(quiet.violations);
  EXPECT_TRUE(flags(quiet.violations, "chunk-sorted", shifting)) << listing(quiet.violations);
  EXPECT_TRUE(flags(quiet.violations, "level-counters")) << listing(quiet.violations);
  // A broken list is wrong at any step.
  const chunk_index last = e.list(0).back();
  e.set_next(last, key_empty, e.list(0).front());
  EXPECT_TRUE(flags(check(s, false).violations, "level-list", last));
}

TYPED_TEST(SnapshotInvariants, GarbageYieldsViolationsNeverACrashOrHang) {
  constexpr int N = TypeParam::value;
  std::mt19937_64 rng(1234 + N);
  const std::uint32_t capacities[] = {0, 1, N, N + 1, 40, 200, 0xFFFFFFFFu};
  for (int round = 0; round < 60; ++round) {
    inv::snapshot s;
    s.chunk = N;
    s.capacity = capacities[rng() % std::size(capacities)];
    s.words.resize(rng() % (header_offsets::pool + 60 * N));
    for (auto& w : s.words) w = rng();
    if (round % 3 == 1 && s.words.size() > header_offsets::pool) {
      // Sane header, garbage pool: the walks meet random NEXT words.
      const std::uint64_t have = (s.words.size() - header_offsets::pool) / N;
      s.words[header_offsets::alloc_counter] = have;
      for (int l = 0; l < 32; ++l) s.words[header_offsets::heads + l] = have ? rng() % have : 0;
    }
    const auto r = check(s);
    EXPECT_FALSE(r.violations.empty()) << "round " << round << ": " << s.words.size() << " random words passed";
    (void)check(s, false);
  }
  // Too short for the header, or for the chunks the header claims.
  for (const std::size_t size : {std::size_t{0}, std::size_t{1}, header_offsets::pool - 1, header_offsets::pool}) {
    inv::snapshot s;
    s.chunk = N;
    s.capacity = 64;
    s.words.assign(size, 0);
    if (size > header_offsets::alloc_counter) s.words[header_offsets::alloc_counter] = N;
    const auto r = check(s);
    EXPECT_TRUE(flags(r.violations, "level-list")) << size << " words:" << listing(r.violations);
  }
  // A real structure declared with a chunk size no GFSL has.
  for (const int chunk : {20, 0, -3, 64}) {
    inv::snapshot s = real_snapshot<N>();
    s.chunk = chunk;
    const auto r = check(s);
    ASSERT_TRUE(flags(r.violations, "level-list")) << "chunk " << chunk << ":" << listing(r.violations);
    EXPECT_NE(r.violations.front().detail.find("16 or 32"), std::string::npos) << r.violations.front().describe();
  }
  // A real structure with random keys at level 0: lists intact, contents not.
  for (int round = 0; round < 5; ++round) {
    inv::snapshot s = real_snapshot<N>();
    editor<N> e(s);
    for (chunk_index c : e.live(0)) {
      for (int lane = 0; lane < editor<N>::dsize; ++lane) e.chunk(c)[lane] = rng();
    }
    const auto r = check(s);
    EXPECT_FALSE(r.violations.empty());
  }
}

// Inputs that make bottom-search run the algorithm's own contains through a
// chunk index that is not in the snapshot. The checker promises to never
// trust the words; each case runs in a child process so that a crash fails
// its test instead of ending the suite.
template <class Pred>
void expect_check_survives(const inv::snapshot& s, Pred wanted) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const auto r = inv::check_snapshot(s);
        std::_Exit(wanted(r.violations) ? 0 : 2);
      },
      ::testing::ExitedWithCode(0), "")
      << "exit code 2: the check returned without the expected violation; a signal: it crashed";
}

TYPED_TEST(SnapshotInvariants, DownPointerOutsideThePoolIsReportedWithoutACrash) {
  constexpr int N = TypeParam::value;
  built<N> b = standard<N>();
  editor<N> e(b.snap);
  const chunk_index up = b.levels[1][0];
  e.set_entry(up, 2, e.key(up, 2), 0xFFFFFF00u);
  expect_check_survives(b.snap, [up](const std::vector<inv::violation>& vs) { return flags(vs, "down-reachability", up); });
}

TYPED_TEST(SnapshotInvariants, ZombieOnlyChunkOfTheTopLevelIsReportedWithoutACrash) {
  constexpr int N = TypeParam::value;
  built<N> b = standard<N>();
  editor<N> e(b.snap);
  const chunk_index top = b.levels[2][0];
  e.set_lock(top, gfsl::zombie_word_of(1));
  expect_check_survives(b.snap, [top](const std::vector<inv::violation>& vs) { return flags(vs, "final-not-zombie", top); });
}

TYPED_TEST(SnapshotInvariants, RandomUpperLevelsAreReportedWithoutACrash) {
  constexpr int N = TypeParam::value;
  inv::snapshot s = real_snapshot<N>();
  editor<N> e(s);
  std::mt19937_64 rng(99);
  for (int level = 1; level < N; ++level) {
    for (chunk_index c : e.live(level)) {
      for (int lane = 0; lane < editor<N>::dsize; ++lane) e.chunk(c)[lane] = rng();
    }
  }
  expect_check_survives(s, [](const std::vector<inv::violation>& vs) { return !vs.empty(); });
}

// ---- Temporal invariants ------------------------------------------------------------

using event = inv::structural_event;
using inv::event_kind;

template <int N>
constexpr std::uint8_t next_lane = gfsl::chunk_shape<N>::next_lane;
template <int N>
constexpr std::uint8_t lock_lane = gfsl::chunk_shape<N>::lock_lane;

template <int N>
bool is_mark(const event& e) {
  return e.kind == event_kind::store && e.lane == lock_lane<N> && gfsl::lock_is_zombie(e.value);
}
template <int N>
bool is_lock_cas(const event& e) {
  return e.kind == event_kind::cas && e.lane == lock_lane<N>;
}
template <int N>
bool is_data_store(const event& e) {
  return e.kind == event_kind::store && e.lane < next_lane<N>;
}

// The log with `e` placed at position `pos`, renumbered: the order is all the
// checker relies on.
std::vector<event> with_event(std::vector<event> log, std::size_t pos, event e) {
  log.insert(log.begin() + static_cast<long>(pos), e);
  for (std::size_t i = 0; i < log.size(); ++i) log[i].seq = i;
  return log;
}
std::vector<event> renumbered(std::vector<event> log) {
  for (std::size_t i = 0; i < log.size(); ++i) log[i].seq = i;
  return log;
}

// Hand-made logs: one event per call, stamps 1000, 1001, ...
template <int N>
struct log_builder {
  std::vector<event> events;
  event& add(team_id t, event_kind k, chunk_index c, std::uint8_t lane, std::uint64_t value) {
    event e;
    e.seq = events.size();
    e.stamp = 1000 + events.size();
    e.team = t;
    e.kind = k;
    e.chunk = c;
    e.lane = lane;
    e.value = value;
    events.push_back(e);
    return events.back();
  }
  void lock(team_id t, chunk_index c) { add(t, event_kind::cas, c, lock_lane<N>, gfsl::lock_word_of(t)); }
  void unlock(team_id t, chunk_index c) { add(t, event_kind::store, c, lock_lane<N>, gfsl::lock_free_word); }
  void mark(team_id t, chunk_index c) { add(t, event_kind::store, c, lock_lane<N>, gfsl::zombie_word_of(t)); }
  void store_lock(team_id t, chunk_index c, std::uint64_t w) { add(t, event_kind::store, c, lock_lane<N>, w); }
  void alloc(team_id t, chunk_index c) { add(t, event_kind::alloc, c, 0, 0); }
  void data(team_id t, chunk_index c, std::uint8_t lane, key_type k) {
    add(t, event_kind::store, c, lane, gfsl::make_entry(k, val(k)));
  }
  void next(team_id t, chunk_index c, key_type max, chunk_index nx) {
    add(t, event_kind::store, c, next_lane<N>, gfsl::make_entry(max, nx));
  }
};

struct real_log {
  const char* mode;
  const gfsl::host_run* run;
};
template <int N>
std::vector<real_log> real_logs() {
  return {{"sequential", &sequential_run<N>()}, {"threads", &threads_run<N>()}, {"scheduled", &scheduled_run<N>().run}};
}

template <class T>
class TemporalInvariants : public ::testing::Test {};
TYPED_TEST_SUITE(TemporalInvariants, Widths);

TYPED_TEST(TemporalInvariants, RealLogsOfEveryHostModeAreClean) {
  constexpr int N = TypeParam::value;
  for (const real_log& l : real_logs<N>()) {
    const auto& ev = l.run->events;
    ASSERT_FALSE(ev.empty()) << l.mode;
    const auto r = check_log(l.run->initial_snapshot, ev);
    EXPECT_TRUE(r.violations.empty()) << l.mode << ":" << listing(r.violations);
    EXPECT_EQ(r.events, ev.size()) << l.mode;
    EXPECT_EQ(r.checked, inv::temporal_invariant_names()) << l.mode;
    // The logs hold what the temporal invariants are about: splits (fresh
    // chunks) and merges (zombie marks).
    const auto allocs = std::count_if(ev.begin(), ev.end(), [](const event& e) { return e.kind == event_kind::alloc; });
    const auto marks = std::count_if(ev.begin(), ev.end(), is_mark<N>);
    EXPECT_GT(allocs, 0) << l.mode;
    EXPECT_GT(marks, 0) << l.mode;
    for (std::size_t i = 0; i < ev.size(); ++i) ASSERT_EQ(ev[i].seq, i) << l.mode << ": the log is in global order";
  }
}

TYPED_TEST(TemporalInvariants, RaisedMaxIsMaxMonotonic) {
  constexpr int N = TypeParam::value;
  {
    const gfsl::host_run& run = sequential_run<N>();
    const auto& ev = run.events;
    std::size_t i = 0;
    while (i < ev.size() && !(ev[i].kind == event_kind::store && ev[i].lane == next_lane<N> &&
                              gfsl::entry_key(ev[i].value) != key_empty)) {
      ++i;
    }
    ASSERT_LT(i, ev.size());
    event bad = ev[i];
    bad.value = gfsl::make_entry(gfsl::entry_key(ev[i].value) + 1, gfsl::entry_value(ev[i].value));
    const auto r = check_log(run.initial_snapshot, with_event(ev, i + 1, bad));
    const inv::violation* v = find_violation(r.violations, "max-monotonic", bad.chunk);
    ASSERT_NE(v, nullptr) << listing(r.violations);
    EXPECT_EQ(v->when, bad.stamp);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"max-monotonic"}) << listing(r.violations);
  }
  {
    const built<N> b = standard<N>();
    inv::snapshot copy = b.snap;
    editor<N> e(copy);
    const chunk_index a = b.levels[0][1];
    log_builder<N> lb;
    lb.lock(1, a);
    lb.next(1, a, e.max(a) - 3, e.next(a));  // lowering is what removals do
    lb.next(1, a, e.max(a) + 5, e.next(a));
    lb.next(1, a, key_empty, e.next(a));
    lb.unlock(1, a);
    const auto r = check_log(b.snap, lb.events);
    ASSERT_EQ(r.violations.size(), 2u) << listing(r.violations);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"max-monotonic"}) << listing(r.violations);
    EXPECT_EQ(r.violations[0].when, lb.events[2].stamp);
    EXPECT_EQ(r.violations[0].chunks, std::vector<chunk_index>{a});
  }
}

TYPED_TEST(TemporalInvariants, WriteAfterMarkIsZombieFrozen) {
  constexpr int N = TypeParam::value;
  {
    const gfsl::host_run& run = sequential_run<N>();
    const auto& ev = run.events;
    const auto it = std::find_if(ev.begin(), ev.end(), is_mark<N>);
    ASSERT_NE(it, ev.end());
    const std::size_t i = static_cast<std::size_t>(it - ev.begin());
    for (const std::uint8_t lane : {std::uint8_t{0}, next_lane<N>}) {
      event bad = ev[i];
      bad.kind = event_kind::store;
      bad.lane = lane;
      bad.value = lane == next_lane<N> ? gfsl::make_entry(0, no_chunk) : gfsl::make_entry(5, 5);
      const auto r = check_log(run.initial_snapshot, with_event(ev, i + 1, bad));
      EXPECT_TRUE(flags(r.violations, "zombie-frozen", bad.chunk)) << "lane " << int(lane) << ":" << listing(r.violations);
    }
  }
  {
    const built<N> b = standard<N>();
    const chunk_index a = b.levels[0][1], c = b.levels[0][2];
    log_builder<N> lb;
    lb.lock(1, a);
    lb.lock(1, c);
    lb.data(1, c, 0, 15);
    lb.mark(1, a);
    lb.unlock(1, c);
    ASSERT_TRUE(check_log(b.snap, lb.events).violations.empty()) << "a merge as the algorithm makes it";
    log_builder<N> bad = lb;
    bad.data(1, a, 3, 77);
    auto r = check_log(b.snap, bad.events);
    EXPECT_TRUE(flags(r.violations, "zombie-frozen", a)) << listing(r.violations);
    log_builder<N> twice = lb;
    twice.mark(1, a);
    r = check_log(b.snap, twice.events);
    EXPECT_TRUE(flags(r.violations, "zombie-frozen", a)) << "marked twice:" << listing(r.violations);
  }
}

TYPED_TEST(TemporalInvariants, MarkingAFinalChunkIsFinalNeverZombie) {
  constexpr int N = TypeParam::value;
  {
    // After a lock CAS on a chunk whose max is infinite at that moment, its
    // holder marks it.
    const gfsl::host_run& run = sequential_run<N>();
    const auto& ev = run.events;
    std::map<chunk_index, key_type> max;
    inv::snapshot initial = run.initial_snapshot;
    editor<N> init(initial);
    auto max_of = [&](chunk_index c) {
      auto it = max.find(c);
      if (it != max.end()) return it->second;
      return c < init.allocated() ? init.max(c) : key_empty;
    };
    std::size_t i = 0;
    for (; i < ev.size(); ++i) {
      if (ev[i].kind == event_kind::alloc) max[ev[i].chunk] = key_empty;
      if (ev[i].kind == event_kind::store && ev[i].lane == next_lane<N>) max[ev[i].chunk] = gfsl::entry_key(ev[i].value);
      if (is_lock_cas<N>(ev[i]) && max_of(ev[i].chunk) == key_empty) break;
    }
    ASSERT_LT(i, ev.size()) << "no final chunk was ever locked";
    event bad = ev[i];
    bad.kind = event_kind::store;
    bad.value = gfsl::zombie_word_of(bad.team);
    const auto r = check_log(run.initial_snapshot, with_event(ev, i + 1, bad));
    const inv::violation* v = find_violation(r.violations, "final-never-zombie", bad.chunk);
    ASSERT_NE(v, nullptr) << listing(r.violations);
    EXPECT_EQ(v->when, bad.stamp);
  }
  {
    // Everything a merge does right, into a chunk its team allocated, but the
    // marked chunk is final.
    const built<N> b = standard<N>();
    const chunk_index last = b.levels[0].back();
    const auto fresh = static_cast<chunk_index>(b.snap.words[header_offsets::alloc_counter]);
    log_builder<N> lb;
    lb.lock(0, last);
    lb.alloc(0, fresh);
    lb.store_lock(0, fresh, gfsl::lock_word_of(0));
    lb.data(0, fresh, 0, 9999);
    lb.next(0, last, key_empty, fresh);
    lb.mark(0, last);
    lb.unlock(0, fresh);
    const auto r = check_log(b.snap, lb.events);
    EXPECT_TRUE(flags(r.violations, "final-never-zombie", last)) << listing(r.violations);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"final-never-zombie"}) << listing(r.violations);
  }
}

TYPED_TEST(TemporalInvariants, MarkWithoutKeysForItsNextIsZombieNextReceiver) {
  constexpr int N = TypeParam::value;
  {
    // A real merge with the marking team's data writes since it locked the
    // chunk taken out of the log.
    const gfsl::host_run& run = sequential_run<N>();
    const auto& ev = run.events;
    const auto it = std::find_if(ev.begin(), ev.end(), is_mark<N>);
    ASSERT_NE(it, ev.end());
    const std::size_t mark = static_cast<std::size_t>(it - ev.begin());
    const event m = ev[mark];
    std::size_t locked = mark;
    while (locked > 0 && !(is_lock_cas<N>(ev[locked]) && ev[locked].chunk == m.chunk && ev[locked].team == m.team)) --locked;
    ASSERT_TRUE(is_lock_cas<N>(ev[locked]) && ev[locked].chunk == m.chunk);
    std::vector<event> cut;
    std::size_t removed = 0;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (i > locked && i < mark && ev[i].team == m.team && is_data_store<N>(ev[i]) && ev[i].chunk != m.chunk) {
        ++removed;
        continue;
      }
      cut.push_back(ev[i]);
    }
    ASSERT_GT(removed, 0u);
    const auto r = check_log(run.initial_snapshot, renumbered(cut));
    const inv::violation* v = find_violation(r.violations, "zombie-next-receiver", m.chunk);
    ASSERT_NE(v, nullptr) << listing(r.violations);
    EXPECT_EQ(v->when, m.stamp);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"zombie-next-receiver"}) << listing(r.violations);
  }
  const built<N> b = standard<N>();
  const chunk_index a = b.levels[0][1], c = b.levels[0][2];
  auto only_receiver = [&](const log_builder<N>& lb, const char* what) {
    const auto r = check_log(b.snap, lb.events);
    const inv::violation* v = find_violation(r.violations, "zombie-next-receiver", a);
    ASSERT_NE(v, nullptr) << what << ":" << listing(r.violations);
    EXPECT_EQ(v->chunks, (std::vector<chunk_index>{a, c})) << what;
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"zombie-next-receiver"}) << what << ":" << listing(r.violations);
  };
  {
    log_builder<N> lb;
    lb.lock(1, a);
    lb.lock(1, c);
    lb.mark(1, a);
    only_receiver(lb, "no data written");
  }
  {
    log_builder<N> lb;
    lb.lock(1, c);
    lb.data(1, c, 0, 15);
    lb.lock(1, a);
    lb.mark(1, a);
    only_receiver(lb, "data written before the zombie was locked");
  }
  {
    log_builder<N> lb;
    lb.lock(2, c);
    lb.data(2, c, 0, 15);
    lb.unlock(2, c);
    lb.lock(1, a);
    lb.mark(1, a);
    only_receiver(lb, "data written by another team");
  }
}

TYPED_TEST(TemporalInvariants, WritesAndUnlocksByNonHoldersAreLockDiscipline) {
  constexpr int N = TypeParam::value;
  const gfsl::host_run& run = sequential_run<N>();
  const auto& ev = run.events;
  {
    const auto it = std::find_if(ev.begin(), ev.end(), is_data_store<N>);
    ASSERT_NE(it, ev.end());
    const std::size_t i = static_cast<std::size_t>(it - ev.begin());
    event bad = ev[i];
    bad.team = 77;
    const auto r = check_log(run.initial_snapshot, with_event(ev, i + 1, bad));
    const inv::violation* v = find_violation(r.violations, "lock-discipline", bad.chunk);
    ASSERT_NE(v, nullptr) << listing(r.violations);
    EXPECT_EQ(v->when, bad.stamp);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"lock-discipline"}) << listing(r.violations);
  }
  {
    const auto it = std::find_if(ev.begin(), ev.end(), is_lock_cas<N>);
    ASSERT_NE(it, ev.end());
    const std::size_t i = static_cast<std::size_t>(it - ev.begin());
    event bad = ev[i];
    bad.team = 77;
    bad.kind = event_kind::store;
    bad.value = gfsl::lock_free_word;
    const auto r = check_log(run.initial_snapshot, with_event(ev, i + 1, bad));
    ASSERT_FALSE(r.violations.empty());
    EXPECT_EQ(r.violations.front().invariant, "lock-discipline") << listing(r.violations);
    EXPECT_EQ(r.violations.front().chunks, std::vector<chunk_index>{bad.chunk});
    EXPECT_NE(r.violations.front().detail.find("unlocked"), std::string::npos) << r.violations.front().describe();
    // Later writes by the real holder are then unguarded too; all of the same kind.
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"lock-discipline"}) << listing(r.violations);
  }
  const built<N> b = standard<N>();
  const chunk_index a = b.levels[0][1], c = b.levels[0][2];
  auto expect_only_lock_discipline = [&](const log_builder<N>& lb, const char* what) {
    const auto r = check_log(b.snap, lb.events);
    EXPECT_TRUE(flags(r.violations, "lock-discipline")) << what << ":" << listing(r.violations);
    EXPECT_EQ(names_of(r.violations), std::set<std::string>{"lock-discipline"}) << what << ":" << listing(r.violations);
  };
  {
    log_builder<N> lb;
    lb.data(2, a, 0, 15);
    expect_only_lock_discipline(lb, "write to a free chunk");
  }
  {
    log_builder<N> lb;
    lb.lock(1, a);
    lb.data(2, a, 0, 15);
    lb.next(2, a, 12, c);
    expect_only_lock_discipline(lb, "writes to a chunk another team holds");
  }
  {
    log_builder<N> lb;
    lb.lock(1, a);
    lb.unlock(2, a);
    expect_only_lock_discipline(lb, "unlock by a non-holder");
  }
  {
    log_builder<N> lb;
    lb.unlock(2, a);
    expect_only_lock_discipline(lb, "unlock of a free chunk");
  }
  {
    log_builder<N> lb;
    lb.store_lock(1, a, gfsl::lock_word_of(1));
    expect_only_lock_discipline(lb, "a lock taken by a plain store");
  }
  {
    const auto fresh = static_cast<chunk_index>(b.snap.words[header_offsets::alloc_counter]);
    log_builder<N> lb;
    lb.alloc(1, fresh);
    lb.store_lock(2, fresh, gfsl::lock_word_of(2));
    expect_only_lock_discipline(lb, "a fresh chunk initialised by a team that did not allocate it");
  }
  {
    log_builder<N> lb;
    lb.lock(1, a);
    lb.lock(2, c);
    lb.data(2, c, 0, 15);
    lb.mark(2, a);
    const auto r = check_log(b.snap, lb.events);
    EXPECT_TRUE(flags(r.violations, "lock-discipline", a)) << "a mark by a non-holder:" << listing(r.violations);
  }
}

TEST(InFlight, NamesTheOperationsWhoseIntervalContainsTheStamp) {
  using gfsl::model::op_record;
  auto rec = [](team_id t, gfsl::op_kind k, key_type key, std::uint64_t call, std::uint64_t ret) {
    op_record r;
    r.team = t;
    r.op.kind = k;
    r.op.key = key;
    r.op.value = k == gfsl::op_kind::insert ? 7 : 0;
    r.call = call;
    r.ret = ret;
    return r;
  };
  const std::vector<op_record> history{
      rec(0, gfsl::op_kind::insert, 1, 0, 5),
      rec(1, gfsl::op_kind::insert, 2, 10, 20),
      rec(2, gfsl::op_kind::remove, 3, 15, 30),
      rec(3, gfsl::op_kind::contains, 4, 25, gfsl::model::no_stamp),
      rec(0, gfsl::op_kind::remove, 5, 40, 50),
  };
  auto at = [](std::uint64_t when) {
    inv::violation v;
    v.invariant = "lock-discipline";
    v.when = when;
    return v;
  };
  std::vector<inv::violation> vs{at(18), at(20), at(27), at(45), at(7), at(10)};
  inv::name_operations_in_flight(vs, history);
  EXPECT_EQ(vs[0].in_flight, (std::vector<std::string>{"team 1 insert(2, 7)", "team 2 delete(3)"}));
  EXPECT_EQ(vs[1].in_flight, (std::vector<std::string>{"team 1 insert(2, 7)", "team 2 delete(3)"})) << "the return stamp is in";
  EXPECT_EQ(vs[2].in_flight, (std::vector<std::string>{"team 2 delete(3)", "team 3 contains(4) (pending)"}));
  EXPECT_EQ(vs[3].in_flight, (std::vector<std::string>{"team 3 contains(4) (pending)", "team 0 delete(5)"}));
  EXPECT_TRUE(vs[4].in_flight.empty()) << "between operations";
  EXPECT_EQ(vs[5].in_flight, (std::vector<std::string>{"team 1 insert(2, 7)"})) << "the call stamp is in";
  std::vector<inv::violation> capped{at(27)};
  inv::name_operations_in_flight(capped, history, 1);
  EXPECT_EQ(capped[0].in_flight.size(), 1u);
}

TYPED_TEST(TemporalInvariants, ViolationInARealLogNamesTheOperationThatMadeIt) {
  constexpr int N = TypeParam::value;
  const gfsl::host_run& run = sequential_run<N>();
  const auto& ev = run.events;
  const std::size_t i = ev.size() / 2;
  std::size_t j = i;
  while (j < ev.size() && !is_data_store<N>(ev[j])) ++j;
  ASSERT_LT(j, ev.size());
  event bad = ev[j];
  bad.team = 77;
  auto r = check_log(run.initial_snapshot, with_event(ev, j + 1, bad));
  ASSERT_EQ(r.violations.size(), 1u) << listing(r.violations);
  const auto history = gfsl::model::full_history(run.prefill, run.records);
  inv::name_operations_in_flight(r.violations, history);
  const inv::violation& v = r.violations.front();
  // Teams take turns one operation at a time: exactly the operation that
  // wrote the neighbouring event was in flight.
  std::vector<std::string> expected;
  for (const auto& h : history) {
    if (h.call <= v.when && h.ret != gfsl::model::no_stamp && h.ret >= v.when) {
      expected.push_back("team " + std::to_string(h.team) + " " + gfsl::model::describe(h.op));
    }
  }
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_EQ(v.in_flight, expected);
  EXPECT_NE(v.describe().find(expected.front()), std::string::npos) << v.describe();
}

TYPED_TEST(TemporalInvariants, GarbageLogsNeverCrash) {
  constexpr int N = TypeParam::value;
  std::mt19937_64 rng(77 + N);
  const inv::snapshot before = standard<N>().snap;
  for (int round = 0; round < 20; ++round) {
    std::vector<event> log(rng() % 400);
    for (std::size_t i = 0; i < log.size(); ++i) {
      log[i].seq = rng() % 1000;
      log[i].stamp = rng();
      log[i].team = static_cast<team_id>(rng() % 4);
      log[i].kind = static_cast<event_kind>(rng() % 3);
      log[i].lane = static_cast<std::uint8_t>(rng() % N);
      log[i].chunk = static_cast<chunk_index>(round % 2 ? rng() : rng() % 80);
      log[i].value = rng();
    }
    (void)check_log(before, log);
    inv::snapshot empty;
    empty.chunk = N;
    (void)check_log(empty, log);
  }
}

// ---- Mid-run checks during scheduled runs ----------------------------------------------

TYPED_TEST(TemporalInvariants, ScheduledRunsCheckStepInvariantsAsTheyGo) {
  constexpr int N = TypeParam::value;
  for (const auto gran : {gfsl::sched::granularity::lane, gfsl::sched::granularity::chunk}) {
    gfsl::sched::options o = lane_options(5);
    o.gran = gran;
    gfsl::run_extras ex;
    ex.check_every = 53;
    ex.events = gran == gfsl::sched::granularity::chunk;
    const gfsl::scheduled_run sr = gfsl::run_scheduled(churn(N, 3, 400, 80, 21), o, 0, true, ex);
    ASSERT_EQ(sr.outcome.reason, gfsl::sched::stop_reason::completed) << sr.outcome.report;
    EXPECT_GT(sr.run.mid_run_checks, 0u);
    EXPECT_GE(sr.run.mid_run_checks + 1, sr.outcome.steps / ex.check_every);
    EXPECT_TRUE(sr.run.mid_run_violations.empty()) << listing(sr.run.mid_run_violations);
    EXPECT_TRUE(check(sr.run.final_snapshot, true, &sr.run.final_entries).violations.empty());
    if (ex.events) {
      EXPECT_TRUE(check_log(sr.run.initial_snapshot, sr.run.events).violations.empty());
    }
  }
  // Without check_every nothing is checked mid-run.
  const gfsl::scheduled_run plain = gfsl::run_scheduled(churn(N, 2, 100, 80, 22), lane_options(6));
  EXPECT_EQ(plain.run.mid_run_checks, 0u);
}

}  // namespace

// ---- The benchmark's level-0 oracle (bench/level0_oracle.hpp) -------------------------

namespace {

template <class T>
class Level0Oracle : public ::testing::Test {};
TYPED_TEST_SUITE(Level0Oracle, Widths);

template <int N>
gfsl::bench::level0_verdict judge(const inv::snapshot& s, std::uint64_t expected) {
  const std::uint64_t allocated = (s.words.size() - header_offsets::pool) / N;
  return gfsl::bench::judge_level0<N>(s.words.data(), allocated, expected);
}

TYPED_TEST(Level0Oracle, HoldsOnRealRunsOfEveryHostMode) {
  constexpr int N = TypeParam::value;
  const gfsl::host_run& seq = sequential_run<N>();
  const gfsl::bench::level0_verdict v = judge<N>(seq.final_snapshot, model_state(seq).size());
  EXPECT_EQ(v.problem, "");
  EXPECT_EQ(v.user_keys, model_state(seq).size());
  EXPECT_GT(v.user_keys, 100u);
  const gfsl::host_run& thr = threads_run<N>();
  EXPECT_EQ(judge<N>(thr.final_snapshot, thr.final_entries.size()).problem, "");
  const gfsl::host_run& sch = scheduled_run<N>().run;
  EXPECT_EQ(judge<N>(sch.final_snapshot, sch.final_entries.size()).problem, "");
  // A hand-built structure, and its empty final chunk.
  const built<N> b = build<N>(3 * per_chunk<N>() - 1, 2, true);
  EXPECT_EQ(judge<N>(b.snap, b.bottom.size()).problem, "");
}

TYPED_TEST(Level0Oracle, RejectsEveryKindOfDamage) {
  constexpr int N = TypeParam::value;
  const inv::snapshot good = real_snapshot<N>();
  const std::uint64_t keys = model_state(sequential_run<N>()).size();
  auto problem_after = [&](auto&& damage) {
    inv::snapshot s = good;
    editor<N> e(s);
    damage(e);
    return judge<N>(s, keys).problem;
  };
  auto has = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };

  // A count the answers do not explain (a lost insert or delete).
  EXPECT_TRUE(has(judge<N>(good, keys + 1).problem, "keys where the answers say " + std::to_string(keys + 1)));
  // A key dropped from a chunk (its max still right): the count.
  EXPECT_TRUE(has(problem_after([](editor<N>& e) {
                    const chunk_index c = e.live(0)[1];
                    std::vector<entry_type> en = e.entries(c);
                    en.erase(en.begin());
                    e.set_entries(c, en);
                  }),
                  "keys where the answers say"));
  // Keys out of order inside a chunk.
  EXPECT_TRUE(has(problem_after([](editor<N>& e) {
                    const chunk_index c = e.live(0)[1];
                    std::vector<entry_type> en = e.entries(c);
                    std::swap(en[0], en[1]);
                    e.set_entries(c, en);
                  }),
                  " after "));
  // A key after an EMPTY entry.
  EXPECT_TRUE(has(problem_after([](editor<N>& e) {
                    const chunk_index c = e.live(0)[1];
                    e.chunk(c)[0] = gfsl::empty_entry;
                  }),
                  "after an EMPTY entry"));
  // Chunks out of order: the second live chunk's keys below the first's.
  EXPECT_TRUE(has(problem_after([](editor<N>& e) {
                    const chunk_index c = e.live(0)[2];
                    std::vector<entry_type> en = e.entries(c);
                    en[0] = gfsl::make_entry(1, 1);
                    e.set_entries(c, en);
                  }),
                  "key 1 after"));
  // A wrong max field.
  EXPECT_TRUE(has(problem_after([](editor<N>& e) {
                    const chunk_index c = e.live(0)[1];
                    e.set_next(c, e.max(c) + 1, e.next(c));
                  }),
                  "max field"));
  // A lock held, or a burst open, at quiescence.
  EXPECT_TRUE(has(problem_after([](editor<N>& e) { e.set_lock(e.live(0)[1], gfsl::lock_word_of(5)); }),
                  "locked by team 5"));
  EXPECT_TRUE(has(problem_after([](editor<N>& e) { e.set_lock(e.live(0)[1], gfsl::lock_version_unit); }),
                  "burst of writes open"));
  // A NEXT pointer outside the pool, and a cycle of zombies.
  EXPECT_TRUE(has(problem_after([](editor<N>& e) {
                    const chunk_index c = e.live(0)[1];
                    e.set_next(c, e.max(c), e.allocated() + 7);
                  }),
                  "not an allocated chunk"));
  EXPECT_TRUE(has(problem_after([](editor<N>& e) {
                    const chunk_index c = e.live(0)[1];
                    e.set_lock(c, gfsl::zombie_word_of(0));
                    e.set_next(c, e.max(c), c);
                  }),
                  "does not end"));
  // The first key is not minus infinity.
  EXPECT_TRUE(has(problem_after([](editor<N>& e) {
                    const chunk_index c = e.live(0)[0];
                    e.chunk(c)[0] = gfsl::make_entry(3, 3);
                  }),
                  "not minus infinity"));
}

}  // namespace
