// Calls made apart (algorithm::apart, core/gfsl/algorithm.hpp): the device team
// runs the updates' rare paths in functions of their own, and the
// algorithm's and the team's state cross each call by value, both ways.
// The claim is that such a call makes exactly the accesses and decisions
// of the inline one. The host team calls in place, so here a host team
// that detaches (the whole team, by value, as the device team detaches
// its registers) runs the same operations as a plain one on a copy of the
// same structure, and every shared-memory access of the two runs is
// compared, with every answer. A team that loses part of its state across
// the call (its coin stream) must be told apart by the same comparison.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/gfsl/algorithm.hpp"
#include "core/host_team.hpp"
#include "core/types.hpp"
#include "exec/host_structure.hpp"
#include "model/workload.hpp"

namespace {

using gfsl::access;
using gfsl::op_kind;
using gfsl::op_result;

// Every access of one team, in order: kind, order, lane, word, value.
struct access_log : gfsl::access_hook {
  std::vector<std::uint64_t> words;
  void before(const access& a) override {
    words.push_back((static_cast<std::uint64_t>(a.kind) << 8) | (static_cast<std::uint64_t>(a.order) << 4));
    words.push_back(a.lane);
    words.push_back(a.word);
    words.push_back(a.value);
    words.push_back(a.expected);
  }
};

// A host team that makes the algorithm's calls apart. `Faithful` false: it
// keeps its own state across each call (the coin stream's progress made
// apart is lost), a lossy round trip.
template <int N, bool Faithful = true>
class detaching_team : public gfsl::host_team<N> {
 public:
  using base = gfsl::host_team<N>;
  using base::base;
  static constexpr bool calls_apart = true;
  using detached = base;
  explicit detaching_team(const detached& d) : base(d) {}
  detached detach() const {
    ++detaches;
    return *this;
  }
  void reattach(const detached& d) {
    if constexpr (Faithful) static_cast<base&>(*this) = d;
  }
  static inline std::uint64_t detaches = 0;
};

struct run_result {
  std::vector<std::uint64_t> accesses;
  std::vector<std::uint64_t> answers;
  gfsl::path_stats stats;
};

// One team runs `ops` operations of a small range from an empty structure,
// growing and shrinking it so that chunks split, merge and raise keys
// often; the coin raises a split's key with probability 1/2.
template <class Team, int N, gfsl::variant V>
run_result run(std::uint64_t seed, bool reraise, std::uint64_t ops) {
  gfsl::host_structure<N> s(4096);
  access_log log;
  Team team(0, seed, s.words(), &log);
  gfsl::algorithm<Team, false, V> a(team, s.view(), gfsl::shape_rule_of(0.5, reraise));
  // Blocks of 500 operations that grow the structure, then shrink it.
  gfsl::model::workload grow;
  grow.seed = seed;
  grow.range = 12 * N;
  grow.insert_pct = 80;
  grow.delete_pct = 10;
  grow.contains_pct = 10;
  gfsl::model::workload shrink = grow;
  shrink.insert_pct = 10;
  shrink.delete_pct = 80;
  run_result out;
  for (std::uint64_t j = 0; j < ops; ++j) {
    const gfsl::model::operation op = gfsl::model::operation_at((j / 500) % 2 == 0 ? grow : shrink, j);
    const op_result r = gfsl::apply_operation(a, op.kind, op.key, op.value);
    out.answers.push_back((static_cast<std::uint64_t>(r.st) << 40) | (static_cast<std::uint64_t>(r.ok) << 32) | r.value);
  }
  out.accesses = std::move(log.words);
  out.stats = gfsl::path_stats_of(team.stats());
  return out;
}

template <int Width, gfsl::variant V>
struct config {
  static constexpr int N = Width;
  static constexpr gfsl::variant variant = V;
};
template <class C>
class Apart : public ::testing::Test {};
using Configs = ::testing::Types<config<16, gfsl::variant::thesis>, config<16, gfsl::variant::robust>,
                                 config<32, gfsl::variant::thesis>, config<32, gfsl::variant::robust>>;
TYPED_TEST_SUITE(Apart, Configs);

TYPED_TEST(Apart, MakesTheAccessesOfTheCallInPlace) {
  constexpr int N = TypeParam::N;
  constexpr gfsl::variant V = TypeParam::variant;
  for (const bool reraise : {false, true}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const std::string what = "seed " + std::to_string(seed) + (reraise ? ", re-raising" : "");
      const run_result in_place = run<gfsl::host_team<N>, N, V>(seed, reraise, 10000);
      const std::uint64_t before = detaching_team<N>::detaches;
      const run_result apart = run<detaching_team<N>, N, V>(seed, reraise, 10000);
      // Every rare path ran, and ran apart.
      EXPECT_GT(detaching_team<N>::detaches - before, 100u) << what;
      EXPECT_GT(apart.stats.splits, 20u) << what;
      EXPECT_GT(apart.stats.merges, 20u) << what;
      EXPECT_GT(apart.stats.raised_keys, 10u) << what;
      if (reraise) EXPECT_GT(apart.stats.reraised_keys, 0u) << what;
      EXPECT_EQ(apart.answers, in_place.answers) << what;
      ASSERT_EQ(apart.accesses.size(), in_place.accesses.size()) << what;
      EXPECT_TRUE(apart.accesses == in_place.accesses) << what << ": the accesses differ";
    }
  }
}

// The comparison tells a lossy round trip apart: with the coin stream's
// progress made apart lost, the coins differ, and so do the accesses.
TYPED_TEST(Apart, ALossyRoundTripIsToldApart) {
  constexpr int N = TypeParam::N;
  constexpr gfsl::variant V = TypeParam::variant;
  const run_result in_place = run<gfsl::host_team<N>, N, V>(1, false, 3000);
  const run_result lossy = run<detaching_team<N, false>, N, V>(1, false, 3000);
  EXPECT_FALSE(lossy.accesses == in_place.accesses);
}

}  // namespace
