// The re-raise rule (docs/ALGORITHM.md, "Re-raising on delete"): a delete
// that removes a raised key puts the next key of its level-0 chunk in its
// place, at the same levels. Checked on laid-out structures (what each level
// holds after the delete, and that the structure stays well formed), against
// the thesis' rule on the same layout, and over a long sequential churn,
// where the thesis' rule drains level 1 and the re-raise rule keeps it.
// Concurrent runs of the rule are fuzzed by the fuzz_reraise_* campaigns
// (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/gfsl/algorithm.hpp"
#include "core/types.hpp"
#include "model/workload.hpp"
#include "tests/laid_structure.hpp"

namespace {

using namespace gfsl::laid;

template <int Width, gfsl::variant V>
struct config {
  static constexpr int N = Width;
  static constexpr gfsl::variant variant = V;
};
template <class C>
class Reraise : public ::testing::Test {};
using Configs = ::testing::Types<config<16, gfsl::variant::thesis>, config<16, gfsl::variant::robust>,
                                 config<32, gfsl::variant::thesis>, config<32, gfsl::variant::robust>>;
TYPED_TEST_SUITE(Reraise, Configs);

template <int N, gfsl::variant V>
gfsl::algorithm<gfsl::host_team<N>, false, V> algorithm_of(world<N>& w, bool reraise) {
  return gfsl::algorithm<gfsl::host_team<N>, false, V>(w.team(), w.view(), gfsl::shape_rule_of(1.0, reraise));
}

bool holds(const kvs& level, key_type k) {
  return std::any_of(level.begin(), level.end(), [k](const kv& e) { return e.first == k; });
}
std::uint32_t down_of(const kvs& level, key_type k) {
  for (const kv& e : level) {
    if (e.first == k) return e.second;
  }
  return ~0u;
}

// Level 0: 0 [-inf 5 9] -> E [13 17 19 20 ... 28] -> F [30 34 38 42]; E
// keeps more than the merge threshold after one delete at both widths.
// 13 represents E at levels 1 and 2, 30 represents F at level 1.
template <int N>
struct layout {
  static constexpr chunk_index e = spare<N>(0), f = spare<N>(1);
};
// Level 0 as above, and level 1 holding `raised` after minus infinity.
template <int N>
void lay_level0_and_1(world<N>& w, const kvs& raised) {
  using l = layout<N>;
  w.lay(0, {{0, level0({neg_inf, 5, 9})}, {l::e, level0({13, 17, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28})}, {l::f, level0({30, 34, 38, 42})}});
  kvs level1{{neg_inf, 0}};
  level1.insert(level1.end(), raised.begin(), raised.end());
  w.lay(1, {{1, level1}});
}
template <int N>
void lay_two_levels(world<N>& w) {
  using l = layout<N>;
  lay_level0_and_1(w, {{13, l::e}, {30, l::f}});
  w.lay(2, {{2, {{neg_inf, 1}, {13, 1}}}});
}

// Deletes `k` with the re-raise rule on, from the structure `w` holds, and
// expects level 1 to end as `level1`, nothing re-raised, and the structure
// well formed.
template <int N, gfsl::variant V>
void expect_delete_raises_nothing(world<N>& w, key_type k, const kvs& level1) {
  expect_well_formed(w);
  auto a = algorithm_of<N, V>(w, true);
  w.reset_observation();
  expect_result(a.remove(k), status::ok, true, val(k));
  EXPECT_EQ(gfsl::level_entries(w.view(), 1), level1);
  EXPECT_EQ(w.stats().reraised_keys, 0u);
  expect_well_formed(w);
}

TYPED_TEST(Reraise, DeleteOfRaisedKeyRaisesTheNextKeyOfItsChunkAtTheSameLevels) {
  constexpr int N = TypeParam::N;
  world<N> w;
  lay_two_levels(w);
  expect_well_formed(w);
  auto a = algorithm_of<N, TypeParam::variant>(w, true);
  w.reset_observation();
  expect_result(a.remove(13), status::ok, true, val(13));
  const kvs level1 = gfsl::level_entries(w.view(), 1), level2 = gfsl::level_entries(w.view(), 2);
  EXPECT_FALSE(holds(level1, 13));
  EXPECT_FALSE(holds(level2, 13));
  ASSERT_TRUE(holds(level1, 17)) << "17, E's next key, takes 13's place at level 1";
  EXPECT_EQ(down_of(level1, 17), layout<N>::e);
  ASSERT_TRUE(holds(level2, 17)) << "and at level 2, where 13 was too";
  EXPECT_EQ(down_of(level2, 17), 1u) << "pointing at the level-1 chunk that holds 17";
  EXPECT_EQ(w.stats().reraised_keys, 2u);
  EXPECT_FALSE(holds(gfsl::level_entries(w.view(), 0), 13));
  expect_well_formed(w);
  // And the structure answers for every key that is left.
  for (key_type k : {5u, 9u, 17u, 19u, 20u, 21u, 22u, 23u, 24u, 25u, 26u, 27u, 28u, 30u, 34u, 38u, 42u}) expect_result(a.contains(k), status::ok, true, val(k));
  expect_result(a.contains(13), status::ok, false, 0);
}

TYPED_TEST(Reraise, TheThesisRuleLeavesTheChunkWithoutARepresentative) {
  constexpr int N = TypeParam::N;
  world<N> w;
  lay_two_levels(w);
  auto a = algorithm_of<N, TypeParam::variant>(w, false);
  w.reset_observation();
  expect_result(a.remove(13), status::ok, true, val(13));
  const kvs level1 = gfsl::level_entries(w.view(), 1);
  EXPECT_EQ(level1, (kvs{{30, layout<N>::f}}));
  EXPECT_TRUE(gfsl::level_entries(w.view(), 2).empty());
  EXPECT_EQ(w.stats().reraised_keys, 0u);
  expect_well_formed(w);
}

TYPED_TEST(Reraise, DeleteOfAnUnraisedKeyRaisesNothing) {
  constexpr int N = TypeParam::N;
  world<N> w;
  lay_two_levels(w);
  expect_delete_raises_nothing<N, TypeParam::variant>(w, 21, {{13, layout<N>::e}, {30, layout<N>::f}});
}

// 28 is the largest key of E and represents it: no key of E lies above it,
// and keys below it are reached from the level-1 key before it, as before.
TYPED_TEST(Reraise, DeleteOfTheLargestKeyOfItsChunkRaisesNothing) {
  constexpr int N = TypeParam::N;
  using l = layout<N>;
  world<N> w;
  lay_level0_and_1(w, {{28, l::e}, {30, l::f}});
  expect_delete_raises_nothing<N, TypeParam::variant>(w, 28, {{30, l::f}});
}

// The next key is itself raised already: nothing is added twice.
TYPED_TEST(Reraise, ANextKeyAlreadyRaisedIsLeftAsItIs) {
  constexpr int N = TypeParam::N;
  using l = layout<N>;
  world<N> w;
  lay_level0_and_1(w, {{13, l::e}, {17, l::e}, {30, l::f}});
  expect_delete_raises_nothing<N, TypeParam::variant>(w, 13, {{17, l::e}, {30, l::f}});
}

// Level 1 in two chunks, 1 [-inf 13] -> G [30]: 13 is the last key of a
// chunk that is not the level's final one, so 17 cannot take its entry
// without rising past the chunk's max. Robust replaces in place and so
// leaves that level to the thesis' rule (k removed, nothing raised); the
// published variant's re-raise inserts 17 where it belongs, in G.
template <int N>
void lay_last_of_its_level1_chunk(world<N>& w) {
  using l = layout<N>;
  w.lay(0, {{0, level0({neg_inf, 5, 9})}, {l::e, level0({13, 17, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28})}, {l::f, level0({30, 34, 38, 42})}});
  w.lay(1, {{1, {{neg_inf, 0}, {13, l::e}}}, {spare<N>(2), {{30, l::f}}}});
}

TYPED_TEST(Reraise, AKeyLastInItsUpperChunkIsReplacedOnlyWhereItFits) {
  constexpr int N = TypeParam::N;
  using l = layout<N>;
  world<N> w;
  lay_last_of_its_level1_chunk(w);
  expect_well_formed(w);
  auto a = algorithm_of<N, TypeParam::variant>(w, true);
  w.reset_observation();
  expect_result(a.remove(13), status::ok, true, val(13));
  if constexpr (TypeParam::variant == gfsl::variant::robust) {
    EXPECT_EQ(gfsl::level_entries(w.view(), 1), (kvs{{30, l::f}}));
    EXPECT_EQ(w.stats().reraised_keys, 0u);
  } else {
    EXPECT_EQ(gfsl::level_entries(w.view(), 1), (kvs{{17, l::e}, {30, l::f}}));
    EXPECT_EQ(w.stats().reraised_keys, 1u);
  }
  expect_well_formed(w);
  for (key_type k : {5u, 9u, 17u, 28u, 30u, 42u}) expect_result(a.contains(k), status::ok, true, val(k));
}

template <class C>
class RobustReraise : public ::testing::Test {};
using RobustConfigs = ::testing::Types<config<16, gfsl::variant::robust>, config<32, gfsl::variant::robust>>;
TYPED_TEST_SUITE(RobustReraise, RobustConfigs);

// Robust replaces in place: the level-1 chunk keeps its entry count, 17 sits
// in 13's lane, and the delete writes that chunk's data lanes once (one
// entry), where a removal and an insertion would shift its larger keys.
TYPED_TEST(RobustReraise, ReplacesTheEntryInPlace) {
  constexpr int N = TypeParam::N;
  using l = layout<N>;
  world<N> w;
  lay_level0_and_1(w, {{13, l::e}, {30, l::f}});
  auto a = algorithm_of<N, TypeParam::variant>(w, true);
  w.reset_observation();
  expect_result(a.remove(13), status::ok, true, val(13));
  EXPECT_EQ(w.contents(1), (kvs{{neg_inf, 0}, {17, l::e}, {30, l::f}}));
  const auto writes = w.hook().data_stores_to(1);
  ASSERT_EQ(writes.size(), 1u) << "one data store to the level-1 chunk";
  EXPECT_EQ(writes[0].first, 1);
  EXPECT_EQ(writes[0].second, gfsl::make_entry(17, l::e));
  EXPECT_EQ(w.stats().reraised_keys, 1u);
  expect_well_formed(w);
}

// The planted fault replace-past-max (core/gfsl/mutants.hpp) makes the
// replacement above anyway: the structure checker must reject the result.
TYPED_TEST(RobustReraise, AReplacementPastTheChunksMaxIsRejectedByTheStructureChecker) {
  constexpr int N = TypeParam::N;
  world<N> w;
  lay_last_of_its_level1_chunk(w);
  auto a = gfsl::algorithm<gfsl::host_team<N>, true, TypeParam::variant>(
      w.team(), w.view(), gfsl::shape_rule_of(1.0, true), gfsl::mutant::replace_past_max);
  expect_result(a.remove(13), status::ok, true, val(13));
  const std::vector<std::string> problems = gfsl::structural_problems(w.view());
  ASSERT_FALSE(problems.empty()) << "17 above its level-1 chunk's max (13) went unnoticed";
  std::string all;
  for (const std::string& p : problems) all += p + "\n";
  EXPECT_NE(all.find("17"), std::string::npos) << all;
}

// Churn: the same operations under both rules, one team, from one prefill.
// Every raised key a delete removes is lost under the thesis' rule (merges
// keep theirs, splits raise new ones); the re-raise rule replaces it.
template <int N, gfsl::variant V>
std::size_t level1_keys_after_churn(bool reraise, std::vector<std::string>& problems) {
  world<N> w(4096);
  w.lay(0, {{0, level0({neg_inf})}});
  auto a = algorithm_of<N, V>(w, reraise);
  gfsl::model::workload load;
  load.range = 4000;
  load.prefill = 0.5;
  load.chunk = N;
  load.seed = 7;
  for (const gfsl::model::operation& op : gfsl::model::prefill_operations(load)) a.insert(op.key, op.value);
  load.ops = 40000;
  load.insert_pct = 50;
  load.delete_pct = 50;
  load.contains_pct = 0;
  for (std::uint64_t j = 0; j < load.ops; ++j) {
    const gfsl::model::operation op = gfsl::model::operation_at(load, j);
    if (op.kind == gfsl::op_kind::insert) a.insert(op.key, op.value);
    else a.remove(op.key);
  }
  problems = gfsl::structural_problems(w.view());
  return gfsl::level_entries(w.view(), 1).size();
}

TYPED_TEST(Reraise, UnderChurnLevelOneKeepsItsKeys) {
  constexpr int N = TypeParam::N;
  std::vector<std::string> thesis_problems, reraise_problems;
  const std::size_t thesis = level1_keys_after_churn<N, TypeParam::variant>(false, thesis_problems);
  const std::size_t reraise = level1_keys_after_churn<N, TypeParam::variant>(true, reraise_problems);
  EXPECT_TRUE(thesis_problems.empty()) << thesis_problems.front();
  EXPECT_TRUE(reraise_problems.empty()) << reraise_problems.front();
  // Measured: see the test's output; the margin asserted is well inside it.
  std::printf("level-1 keys after churn, N = %d: thesis rule %zu, re-raise %zu\n", N, thesis, reraise);
  EXPECT_GT(reraise, thesis * 3 / 2);
}

}  // namespace
