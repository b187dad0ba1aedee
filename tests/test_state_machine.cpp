// One team against the sequential model: RapidCheck generates command
// sequences (insert, delete, contains) over key ranges small enough that a
// sequence splits and merges chunks, leaves zombies behind, grows and empties
// levels and keeps hitting the final chunk of a level. Every answer must equal
// the model's, and at the end of a sequence the structure must be well formed
// and hold exactly the model's entries.
//
// Each property runs RapidCheck's default 100 cases, or as many as RC_PARAMS
// says: ctest sets RC_PARAMS=max_success=1000 for this test (3 properties,
// 3000 sequences), which is the configuration the runtime budget is sized for.
// With RC_PARAMS=reproduce=... a failing sequence replays exactly: the
// sequence, the configuration and the p_chunk coin's seed are all generated.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/gfsl/algorithm.hpp"
#include "exec/host_structure.hpp"
#include "core/host_team.hpp"
#include "core/gfsl/layout.hpp"
#include "core/types.hpp"
#include "model/sequential_map.hpp"

namespace {

using gfsl::key_type;
using gfsl::op_result;
using gfsl::status;
using gfsl::value_type;

constexpr std::size_t never = std::numeric_limits<std::size_t>::max();

// Per-sequence shape of the workload, generated with the sequence.
struct config {
  key_type key_max = 8;        // user keys come from 1..key_max (plus a few extremes)
  double p_chunk = 0.5;
  std::size_t w_insert = 2;    // relative weights of insert and delete commands
  std::size_t w_delete = 1;
  std::size_t flip_at = never;  // from this command on, the two weights swap: grow, then drain
};

// Inserts made before the commands, straight into the model and the
// structure, so that short command sequences also run against a structure of
// several levels and many chunks. Drawn from a seed, so that a case replays.
std::vector<std::pair<key_type, value_type>> preload_entries(std::size_t count, key_type key_max, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<key_type> keys(1, key_max);
  std::vector<std::pair<key_type, value_type>> out;
  for (std::size_t i = 0; i < count; ++i) out.emplace_back(keys(rng), static_cast<value_type>(rng()));
  return out;
}

struct model_state {
  gfsl::model::sequential_map map;
  config cfg;
  std::size_t step = 0;
};

// A single team never has to wait for a lock: if it does, the lock is its
// own and it would spin forever. A traversal looping for ever is turned into
// a failure in the same way.
class strict_hook final : public gfsl::access_hook {
 public:
  void start_operation() { accesses_ = 0; }
  void before(const gfsl::access&) override {
    if (++accesses_ > budget) throw std::logic_error("one operation made over 50 million accesses");
  }
  void lock_wait(gfsl::team_id team, gfsl::chunk_index chunk, std::uint64_t word) override {
    throw std::logic_error("team " + std::to_string(team) + " waited for chunk " + std::to_string(chunk) +
                           " (lock word " + std::to_string(word) + ") with no other team running");
  }

 private:
  static constexpr std::uint64_t budget = 50'000'000;
  std::uint64_t accesses_ = 0;
};

template <int N>
class system_under_test {
 public:
  system_under_test(std::uint32_t capacity, double p_chunk, std::uint64_t seed)
      : structure_(capacity),
        team_(0, seed, structure_.words(), &hook_),
        alg_(team_, structure_.view(), gfsl::p_chunk_threshold_of(p_chunk)) {}
  system_under_test(const system_under_test&) = delete;
  system_under_test& operator=(const system_under_test&) = delete;

  op_result insert(key_type k, value_type v) { return observed([&] { return alg_.insert(k, v); }); }
  op_result remove(key_type k) { return observed([&] { return alg_.remove(k); }); }
  op_result contains(key_type k) { return observed([&] { return alg_.contains(k); }); }

  gfsl::structure_view<N> view() const { return structure_.view(); }
  gfsl::path_stats stats() const { return gfsl::path_stats_of(team_.stats()); }
  int max_height() const { return max_height_; }
  // How many times level 0 went from holding keys to holding only -inf.
  std::uint64_t times_emptied() const { return emptied_; }

  // Highest level whose counter says it holds keys (0 when only level 0 does).
  int height() const {
    int h = 0;
    for (int level = 1; level < N; ++level) {
      if (static_cast<std::int64_t>(view().level_counts()[level]) > 0) h = level;
    }
    return h;
  }

 private:
  // Every so often the whole structure is checked mid-sequence too, so that
  // a problem is reported near the command that made it, not only when the
  // sequence ends (a later command may hide it).
  static constexpr std::uint64_t check_every = 64;

  template <class Op>
  op_result observed(Op&& op) {
    hook_.start_operation();
    const op_result r = op();
    max_height_ = std::max(max_height_, height());
    const bool has_keys = static_cast<std::int64_t>(view().level_counts()[0]) > 0;
    emptied_ += had_keys_ && !has_keys;
    had_keys_ = has_keys;
    if (++ops_ % check_every == 0) {
      const std::vector<std::string> problems = gfsl::structural_problems(view());
      if (!problems.empty()) {
        std::string all = "structural problems after operation " + std::to_string(ops_) + ":";
        for (const std::string& p : problems) all += "\n  " + p;
        RC_FAIL(all);
      }
    }
    return r;
  }

  gfsl::host_structure<N> structure_;
  strict_hook hook_;
  gfsl::host_team<N> team_;
  gfsl::algorithm<gfsl::host_team<N>> alg_;
  int max_height_ = 0;
  std::uint64_t ops_ = 0;
  bool had_keys_ = false;
  std::uint64_t emptied_ = 0;
};

void assert_result(const op_result& r, status st, bool ok, value_type value) {
  RC_ASSERT(std::string(gfsl::status_name(r.st)) == std::string(gfsl::status_name(st)));
  RC_ASSERT(r.ok == ok);
  RC_ASSERT(r.value == value);
}

template <int N>
using command = rc::state::Command<model_state, system_under_test<N>>;

template <int N>
struct insert_cmd final : command<N> {
  key_type k;
  value_type v;
  insert_cmd(key_type key, value_type value) : k(key), v(value) {}
  void apply(model_state& m) const override {
    m.map.insert(k, v);
    ++m.step;
  }
  void run(const model_state& m, system_under_test<N>& s) const override {
    assert_result(s.insert(k, v), status::ok, !m.map.contains(k).ok, 0);
  }
  void show(std::ostream& os) const override { os << "insert(" << k << ", " << v << ")"; }
};

template <int N>
struct remove_cmd final : command<N> {
  key_type k;
  explicit remove_cmd(key_type key) : k(key) {}
  void apply(model_state& m) const override {
    m.map.remove(k);
    ++m.step;
  }
  void run(const model_state& m, system_under_test<N>& s) const override {
    const gfsl::model::outcome want = m.map.contains(k);
    assert_result(s.remove(k), status::ok, want.ok, want.value);
  }
  void show(std::ostream& os) const override { os << "delete(" << k << ")"; }
};

// Deletes the smallest present key >= k (k itself when there is none), so
// that a draining phase keeps hitting keys however sparse the set has become.
template <int N>
struct remove_near_cmd final : command<N> {
  key_type k;
  explicit remove_near_cmd(key_type key) : k(key) {}
  static key_type target(const model_state& m, key_type k) {
    const auto it = m.map.as_map().lower_bound(k);
    return it == m.map.as_map().end() ? k : it->first;
  }
  void apply(model_state& m) const override {
    m.map.remove(target(m, k));
    ++m.step;
  }
  void run(const model_state& m, system_under_test<N>& s) const override {
    const key_type t = target(m, k);
    RC_LOG() << "delete_near(" << k << ") deletes " << t << "\n";
    const gfsl::model::outcome want = m.map.contains(t);
    assert_result(s.remove(t), status::ok, want.ok, want.value);
  }
  void show(std::ostream& os) const override { os << "delete_near(" << k << ")"; }
};

template <int N>
struct contains_cmd final : command<N> {
  key_type k;
  explicit contains_cmd(key_type key) : k(key) {}
  void apply(model_state& m) const override { ++m.step; }
  void run(const model_state& m, system_under_test<N>& s) const override {
    const gfsl::model::outcome want = m.map.contains(k);
    assert_result(s.contains(k), status::ok, want.ok, want.value);
  }
  void show(std::ostream& os) const override { os << "contains(" << k << ")"; }
};

// The sentinels are refused by every operation and change nothing.
template <int N>
struct sentinel_cmd final : command<N> {
  key_type k;
  int op;
  sentinel_cmd(key_type key, int which) : k(key), op(which) {}
  void apply(model_state& m) const override { ++m.step; }
  void run(const model_state&, system_under_test<N>& s) const override {
    const op_result r = op == 0 ? s.insert(k, 1) : op == 1 ? s.remove(k) : s.contains(k);
    assert_result(r, status::key_out_of_range, false, 0);
  }
  void show(std::ostream& os) const override {
    os << (op == 0 ? "insert" : op == 1 ? "delete" : "contains") << "(" << k << ") [sentinel]";
  }
};

template <int N>
rc::Gen<std::shared_ptr<const command<N>>> gen_command(const model_state& m) {
  const config cfg = m.cfg;
  const bool drain = m.step >= cfg.flip_at;
  const std::size_t wi = drain ? cfg.w_delete : cfg.w_insert;
  const std::size_t wd = drain ? cfg.w_insert : cfg.w_delete;
  return rc::gen::exec([cfg, wi, wd]() -> std::shared_ptr<const command<N>> {
    // Mostly the small range; now and then the extreme user keys, which live
    // at the two ends of level 0.
    const key_type k = *rc::gen::weightedOneOf<key_type>(
        {{39, rc::gen::inRange<key_type>(1, cfg.key_max + 1)},
         {1, rc::gen::element(key_type{gfsl::min_user_key}, key_type{gfsl::max_user_key - 1},
                              key_type{gfsl::max_user_key})}});
    switch (*rc::gen::weightedElement<int>({{10 * wi, 0}, {5 * wd, 1}, {5 * wd, 2}, {8, 3}, {1, 4}})) {
      case 0: return std::make_shared<insert_cmd<N>>(k, *rc::gen::arbitrary<value_type>());
      case 1: return std::make_shared<remove_cmd<N>>(k);
      case 2: return std::make_shared<remove_near_cmd<N>>(k);
      case 3: return std::make_shared<contains_cmd<N>>(k);
      default:
        return std::make_shared<sentinel_cmd<N>>(
            *rc::gen::element(key_type{gfsl::key_neg_inf}, key_type{gfsl::key_empty}), *rc::gen::inRange(0, 3));
    }
  });
}

// What all the sequences of a property reached, added up.
struct coverage {
  gfsl::path_stats stats;
  std::size_t sequences = 0;
  std::size_t three_levels = 0;  // sequences whose structure had keys in level 2
  std::size_t emptied = 0;       // sequences that emptied the set at least once
  int max_height = 0;
};

template <int N>
void well_formed_and_equal(const system_under_test<N>& s, const gfsl::model::sequential_map& model) {
  const std::vector<std::string> problems = gfsl::structural_problems(s.view());
  if (!problems.empty()) {
    std::string all = "structural problems:";
    for (const std::string& p : problems) all += "\n  " + p;
    RC_FAIL(all);
  }
  RC_ASSERT(gfsl::level_entries(s.view(), 0) == model.entries());
}

// One property case: a configuration, a command sequence and a coin seed.
template <int N>
void one_sequence(const std::vector<key_type>& key_maxes, double length_scale, coverage& cov) {
  config cfg;
  cfg.key_max = *rc::gen::elementOf(key_maxes);
  cfg.p_chunk = *rc::gen::element(0.25, 0.5, 1.0);
  cfg.w_insert = *rc::gen::inRange<std::size_t>(1, 5);
  cfg.w_delete = *rc::gen::inRange<std::size_t>(1, 4);
  cfg.flip_at = *rc::gen::element(std::size_t{never}, std::size_t{40}, std::size_t{150}, std::size_t{400});
  const double preload_share = *rc::gen::element(0.0, 0.0, 0.4, 0.8);
  const auto preload_seed = *rc::gen::arbitrary<std::uint64_t>();
  const auto preload =
      preload_entries(static_cast<std::size_t>(preload_share * cfg.key_max), cfg.key_max, preload_seed);
  model_state initial{{}, cfg, 0};
  for (const auto& [k, v] : preload) initial.map.insert(k, v);
  const auto cmds = *rc::gen::scale(length_scale, rc::state::gen::commands(initial, &gen_command<N>));
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  // The generated values above print unnamed in a counterexample; this names them.
  RC_LOG() << "GFSL<" << N << ">: keys 1.." << cfg.key_max << ", p_chunk " << cfg.p_chunk << ", insert:delete "
           << cfg.w_insert << ":" << cfg.w_delete << ", weights swap at command "
           << (cfg.flip_at == never ? std::string("never") : std::to_string(cfg.flip_at)) << ", preload "
           << preload.size() << " inserts (seed " << preload_seed << "), coin seed " << seed << ", "
           << cmds.size() << " commands\n";

  // Each split takes one chunk and an operation splits at most a chunk per
  // level; 4 per operation is far above what a sequence uses.
  const auto capacity = static_cast<std::uint32_t>(N + 64 + 4 * (preload.size() + cmds.size()));
  system_under_test<N> s(capacity, cfg.p_chunk, seed);
  {
    gfsl::model::sequential_map replay;
    for (const auto& [k, v] : preload) {
      const gfsl::model::outcome want = replay.insert(k, v);
      assert_result(s.insert(k, v), status::ok, want.ok, want.value);
    }
  }
  rc::state::runAll(cmds, initial, s);

  model_state final_state = initial;
  rc::state::applyAll(cmds, final_state);
  well_formed_and_equal(s, final_state.map);
  // A restart needs a concurrent delete (4.2.1); alone, a team never makes one.
  RC_ASSERT(s.stats().restarts == 0u);

  RC_CLASSIFY(s.stats().splits > 0, "split");
  RC_CLASSIFY(s.stats().merges > 0, "merge");
  RC_CLASSIFY(s.stats().zombie_unlinks + s.stats().head_unlinks > 0, "zombie unlinked");
  RC_CLASSIFY(s.max_height() >= 2, "3+ levels");
  RC_CLASSIFY(s.max_height() >= 3, "4+ levels");
  RC_CLASSIFY(s.times_emptied() > 0, "emptied");
  cov.stats += s.stats();
  ++cov.sequences;
  cov.three_levels += s.max_height() >= 2;
  cov.emptied += s.times_emptied() > 0;
  cov.max_height = std::max(cov.max_height, s.max_height());
}

// With fewer cases than this (a small RC_PARAMS) the coverage totals are not
// checked; the answers and the structure still are.
constexpr std::size_t coverage_min_cases = 100;

void expect_rare_paths(const coverage& cov, bool expect_three_levels) {
  if (cov.sequences < coverage_min_cases) return;
  EXPECT_GT(cov.stats.splits, 0u);
  EXPECT_GT(cov.stats.merges, 0u);
  EXPECT_GT(cov.stats.zombie_unlinks, 0u);
  EXPECT_GT(cov.stats.head_unlinks, 0u);
  EXPECT_GT(cov.stats.backtracks, 0u);
  EXPECT_GT(cov.stats.down_ptr_updates, 0u);
  EXPECT_GT(cov.stats.raised_keys, 0u);
  if (expect_three_levels) {
    EXPECT_GT(cov.three_levels, 0u);
  }
}

TEST(StateMachine, Width16AgainstModel) {
  coverage cov;
  const bool passed = rc::check("GFSL<16> behaves like the sequential map", [&] {
    one_sequence<16>({8, 16, 40, 100, 250, 600, 2000}, 60.0, cov);
  });
  EXPECT_TRUE(passed);
  if (passed) expect_rare_paths(cov, true);
}

TEST(StateMachine, Width32AgainstModel) {
  coverage cov;
  const bool passed = rc::check("GFSL<32> behaves like the sequential map", [&] {
    one_sequence<32>({8, 30, 60, 150, 400, 600, 2000, 5000}, 100.0, cov);
  });
  EXPECT_TRUE(passed);
  if (passed) expect_rare_paths(cov, false);
}

// Key sets that fit in a chunk or two: the final chunk is where nearly every
// update lands, levels empty and refill, and -inf's chunk merges away.
TEST(StateMachine, TinyKeySetsAgainstModel) {
  coverage cov;
  const bool passed = rc::check("GFSL behaves like the sequential map on tiny key sets", [&] {
    if (*rc::gen::arbitrary<bool>()) {
      one_sequence<16>({2, 3, 5, 8, 13, 20}, 3.0, cov);
    } else {
      one_sequence<32>({2, 3, 5, 8, 13, 20, 40}, 3.0, cov);
    }
  });
  EXPECT_TRUE(passed);
  if (passed && cov.sequences >= coverage_min_cases) {
    EXPECT_GT(cov.emptied, 0u);
  }
}

// A fixed long run (no RapidCheck): grow to several levels, churn, then
// delete everything. Checks every answer against the model, the structure at
// intervals, and that each rare path of the algorithm actually ran.
template <int N>
void long_sequence(std::uint64_t seed, key_type key_max, std::size_t grow_ops, std::size_t churn_ops,
                   int must_reach_level) {
  system_under_test<N> s(static_cast<std::uint32_t>(N + 64 + 2 * (grow_ops + churn_ops)), 1.0, seed);
  gfsl::model::sequential_map model;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<key_type> keys(1, key_max);
  bool reached = false;
  std::size_t step = 0;

  auto check_structure = [&] {
    const std::vector<std::string> problems = gfsl::structural_problems(s.view());
    ASSERT_TRUE(problems.empty()) << "after step " << step << ": " << problems.front();
    ASSERT_EQ(gfsl::level_entries(s.view(), 0), model.entries()) << "after step " << step;
    reached = reached || !gfsl::level_entries(s.view(), must_reach_level).empty();
  };
  auto expect_same = [&](const op_result& r, const gfsl::model::outcome& want, const char* what, key_type k) {
    ASSERT_EQ(r.st, status::ok) << what << "(" << k << ") at step " << step;
    ASSERT_EQ(r.ok, want.ok) << what << "(" << k << ") at step " << step;
    ASSERT_EQ(r.value, want.value) << what << "(" << k << ") at step " << step;
  };
  auto random_op = [&](int insert_weight) {
    const key_type k = keys(rng);
    const auto roll = static_cast<int>(rng() % static_cast<std::uint64_t>(insert_weight + 2));
    if (roll < insert_weight) {
      const auto v = static_cast<value_type>(rng());
      expect_same(s.insert(k, v), model.insert(k, v), "insert", k);
    } else if (roll == insert_weight) {
      expect_same(s.remove(k), model.remove(k), "delete", k);
    } else {
      expect_same(s.contains(k), model.contains(k), "contains", k);
    }
  };

  for (; step < grow_ops; ++step) {
    ASSERT_NO_FATAL_FAILURE(random_op(6));
    if (step % 1000 == 999) {
      ASSERT_NO_FATAL_FAILURE(check_structure());
    }
  }
  ASSERT_NO_FATAL_FAILURE(check_structure());
  for (std::size_t i = 0; i < churn_ops; ++i, ++step) {
    ASSERT_NO_FATAL_FAILURE(random_op(1));
    if (step % 1000 == 999) {
      ASSERT_NO_FATAL_FAILURE(check_structure());
    }
  }
  ASSERT_NO_FATAL_FAILURE(check_structure());

  // Drain in random order: every level shrinks back to its -inf chunk.
  std::vector<key_type> left;
  for (const auto& e : model.entries()) left.push_back(e.first);
  std::shuffle(left.begin(), left.end(), rng);
  for (key_type k : left) {
    expect_same(s.remove(k), model.remove(k), "delete", k);
    ++step;
    if (step % 1000 == 999) {
      ASSERT_NO_FATAL_FAILURE(check_structure());
    }
  }
  ASSERT_NO_FATAL_FAILURE(check_structure());
  EXPECT_EQ(model.size(), 0u);
  for (int level = 0; level < N; ++level) {
    EXPECT_EQ(s.view().level_counts()[level], 0u) << "level " << level << " holds only -inf";
    EXPECT_TRUE(gfsl::level_entries(s.view(), level).empty()) << "level " << level;
  }

  EXPECT_TRUE(reached) << "level " << must_reach_level << " never held a key";
  const gfsl::path_stats& st = s.stats();
  EXPECT_GT(st.splits, 0u);
  EXPECT_GT(st.merges, 0u);
  EXPECT_GT(st.zombies_skipped, 0u);
  EXPECT_GT(st.zombie_unlinks, 0u);
  EXPECT_GT(st.head_unlinks, 0u);
  EXPECT_GT(st.backtracks, 0u);
  EXPECT_GT(st.down_ptr_updates, 0u);
  EXPECT_GT(st.raised_keys, 0u);
  EXPECT_EQ(st.restarts, 0u);
  EXPECT_EQ(st.lock_waits, 0u);
}

TEST(StateMachine, LongRandomSequenceWidth16ReachesLevel3) {
  long_sequence<16>(0x6F5A11ull, 20000, 12000, 8000, 3);
}

TEST(StateMachine, LongRandomSequenceWidth32ReachesLevel2) {
  long_sequence<32>(0x6F5A12ull, 20000, 12000, 8000, 2);
}

}  // namespace
