// The robust variant's mechanisms on structures laid out word by word, with
// the interleaving that defeats each one made exactly (another team acting
// between two lanes of one read) rather than hoped for from a scheduler.
// Each case runs three algorithms on the same shape: `thesis`, which the
// interleaving breaks; `robust`, which must answer correctly; and `robust`
// with the mechanism's seeded bug (core/gfsl/mutants.hpp), which must break again:
// that is what kills the mutant.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <type_traits>

#include "core/gfsl/algorithm.hpp"
#include "core/host_team.hpp"
#include "core/gfsl/mutants.hpp"
#include "core/types.hpp"
#include "tests/laid_structure.hpp"

namespace {

using namespace gfsl::laid;

template <class Width>
class RobustMechanisms : public ::testing::Test {};
using Widths = ::testing::Types<std::integral_constant<int, 16>, std::integral_constant<int, 32>>;
TYPED_TEST_SUITE(RobustMechanisms, Widths);

// Point 1 of docs/ALGORITHM.md's robust section. Level 0 only:
//   0: [-inf 1 2] -> X: [10 .. 10+dsize-1] (full) -> S: [1000 1001]
// Team A runs contains(k) for k in X's upper half and reads X lane by lane.
// Between its load of X's NEXT lane (= S) and its load of X's LOCK lane,
// team B inserts 5 (X is full: split, X -> F -> S, F takes X's upper half,
// k with it) and deletes X's keys down to the merge threshold and one more
// (X merges into F and becomes a zombie whose NEXT is F). A then sees
// "zombie, next = S" and, unless it re-reads NEXT, walks past F, the live
// chunk holding k.
template <int N, gfsl::variant V, bool Mutable>
op_result contains_across_split_and_merge(gfsl::mutant m, bool& interleaved) {
  world<N> w;
  constexpr int dsize = world<N>::dsize;
  constexpr int threshold = gfsl::chunk_shape<N>::merge_threshold;
  const chunk_index x = spare<N>(0), s = spare<N>(1);
  std::vector<key_type> x_keys;
  for (int i = 0; i < dsize; ++i) x_keys.push_back(static_cast<key_type>(10 + i));
  kvs x_entries;
  for (key_type k : x_keys) x_entries.emplace_back(k, val(k));
  w.lay(0, {{0, level0({neg_inf, 1, 2})}, {x, x_entries}, {s, level0({1000, 1001})}});
  expect_well_formed(w);
  const key_type k = x_keys.back();  // moved to F by the split, never deleted

  interleaved = false;
  const std::uint64_t x_next_word =
      gfsl::header_offsets::pool + static_cast<std::uint64_t>(x) * N + world<N>::next_lane;
  w.hook().on_access = [&](const gfsl::access& a, std::uint64_t) {
    if (interleaved || a.kind != gfsl::access_kind::load || a.group_size != N || a.word != x_next_word) return;
    interleaved = true;
    gfsl::host_team<N> b(1, 11, w.words());
    gfsl::algorithm<gfsl::host_team<N>, false, gfsl::variant::thesis> writer(b, w.view(), 0);
    // The split keeps the lower dsize - split_moved keys (and 5) in X; the
    // deletes then leave X at the threshold, and one more merges it into F.
    const int kept = dsize - gfsl::chunk_shape<N>::split_moved;
    ASSERT_TRUE(writer.insert(5, val(5)).ok);
    ASSERT_TRUE(writer.remove(5).ok);
    for (int i = 0; i < kept - threshold + 1; ++i) ASSERT_TRUE(writer.remove(x_keys[i]).ok);
    ASSERT_EQ(gfsl::path_stats_of(b.stats()).splits, 1u);
    ASSERT_EQ(gfsl::path_stats_of(b.stats()).merges, 1u);
    ASSERT_TRUE(gfsl::lock_is_zombie(w.view().chunk(x)[world<N>::lock_lane]));
  };
  if constexpr (Mutable) {
    auto a = w.template mutant_alg<V>(0, m);
    return a.contains(k);
  } else {
    auto a = w.template alg<V>(0);
    return a.contains(k);
  }
}

// Point 5: a split raises its fresh chunk's minimum, at every level, where
// the thesis raises the key that split (max(k, minK) at level 0, k above).
// Level 0: 0 [-inf 10 .. 10(D-1)] (full) -> x0 [1000 1010 ..]; level 1:
// 1 [-inf, 1000 .. ] (full, every key of x0). Inserting k = 10(D-1) - 5
// splits chunk 0 (k goes to its fresh chunk), and the key raised splits
// chunk 1 (and stays in chunk 1).
template <int N>
void lay_two_full_chunks(world<N>& w) {
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  const chunk_index x0 = spare<N>(0);
  kvs full0{{neg_inf, 0}}, keys_x0, full1{{neg_inf, 0}};
  for (int i = 1; i < D; ++i) full0.emplace_back(10 * i, val(10 * i));
  for (int i = 0; i < D - 1; ++i) {
    keys_x0.emplace_back(1000 + 10 * i, val(1000 + 10 * i));
    full1.emplace_back(1000 + 10 * i, x0);
  }
  w.lay(0, {{0, full0}, {x0, keys_x0}});
  w.lay(1, {{1, full1}});
}

TYPED_TEST(RobustMechanisms, ASplitRaisesItsFreshChunksMinimumAtEveryLevel) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  constexpr int F = D - gfsl::chunk_shape<N>::split_moved;  // the smallest moved key of level 0 is 10F
  const key_type k = 10 * (D - 1) - 5;
  for (const gfsl::variant v : {gfsl::variant::robust, gfsl::variant::thesis}) {
    SCOPED_TRACE(gfsl::variant_name(v));
    world<N> w;
    lay_two_full_chunks(w);
    expect_well_formed(w);
    w.reset_observation();
    const op_result r = v == gfsl::variant::robust ? w.template alg<gfsl::variant::robust>(1.0).insert(k, val(k))
                                                   : w.template alg<gfsl::variant::thesis>(1.0).insert(k, val(k));
    expect_result(r, status::ok, true, 0);
    const chunk_index fresh0 = w.image(0).next, fresh1 = w.image(1).next;
    ASSERT_EQ(w.contents(fresh0).front().first, 10u * F);
    const kvs level1 = gfsl::level_entries(w.view(), 1), level2 = gfsl::level_entries(w.view(), 2);
    const key_type m1 = w.contents(fresh1).front().first;  // the level-1 fresh chunk's minimum
    if (v == gfsl::variant::robust) {
      EXPECT_EQ(level1.front(), (kv{10u * F, fresh0})) << "level 0's fresh minimum, pointing at its chunk";
      EXPECT_EQ(level2, (kvs{{m1, fresh1}})) << "level 1's fresh minimum, pointing at its chunk";
    } else {
      EXPECT_EQ(level1.front(), (kv{k, fresh0})) << "max(k, minK) = k";
      EXPECT_EQ(level2, (kvs{{k, 1}})) << "k itself, which stayed in level 1's old chunk";
    }
    EXPECT_EQ(w.stats().raised_keys, 2u);
    expect_well_formed(w);
    auto a = w.template alg<gfsl::variant::robust>(1.0);
    for (int i = 1; i < D; ++i) expect_result(a.contains(10 * i), status::ok, true, val(10 * i));
    expect_result(a.contains(k), status::ok, true, val(k));
    expect_result(a.contains(1000), status::ok, true, val(1000));
  }
}

// Point 5, the delete's side: the level-1 fresh chunk's minimum m1 of the
// test above, deleted by robust, leaves every level.
TYPED_TEST(RobustMechanisms, ADeleteOfARaisedMinimumLeavesEveryLevel) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  world<N> w;
  lay_two_full_chunks(w);
  auto a = w.template alg<gfsl::variant::robust>(1.0);
  expect_result(a.insert(10 * (D - 1) - 5, val(10 * (D - 1) - 5)), status::ok, true, 0);
  const key_type m1 = w.contents(w.image(1).next).front().first;
  expect_result(a.remove(m1), status::ok, true, val(m1));
  for (int level = 0; level < 3; ++level) {
    for (const kv& e : gfsl::level_entries(w.view(), level)) EXPECT_NE(e.first, m1) << "level " << level;
  }
  expect_well_formed(w);
}

TYPED_TEST(RobustMechanisms, ZombieNextIsReReadAfterTheMark) {
  constexpr int N = TypeParam::value;
  bool interleaved = false;
  const op_result thesis =
      contains_across_split_and_merge<N, gfsl::variant::thesis, false>(gfsl::mutant::none, interleaved);
  ASSERT_TRUE(interleaved);
  EXPECT_FALSE(thesis.ok) << "thesis walks past the live chunk and answers absent";

  const op_result robust =
      contains_across_split_and_merge<N, gfsl::variant::robust, false>(gfsl::mutant::none, interleaved);
  ASSERT_TRUE(interleaved);
  expect_result(robust, status::ok, true, val(10 + world<N>::dsize - 1));

  const op_result bug = contains_across_split_and_merge<N, gfsl::variant::robust, true>(
      gfsl::mutant::zombie_next_not_reloaded, interleaved);
  ASSERT_TRUE(interleaved);
  EXPECT_FALSE(bug.ok) << "zombie-next-not-reloaded must give the thesis' wrong answer back";
}

// Point 3. A key left above by a torn read of delete's upper-level check (the
// thesis can leave one; docs/FINDINGS.md, mechanism 2): 50 at level 2 with a
// down pointer to X1, though 50 is in neither level below.
//   level 2  2: [-inf->1, 50->X1]
//   level 1  1: [-inf->0, 20->0] -> X1: [60->X0, 70->X0]
//   level 0  0: [-inf 5 10 20] -> X0: [60 70]
// contains(55) steps down from 50 to X1, whose keys are all above 55, with no
// previous chunk at level 1 to backtrack through. The thesis restarts from the
// top, which comes back to the same place forever; robust walks level 1 from
// its head instead.
template <int N>
void lay_stale_upper_key(world<N>& w) {
  const chunk_index x0 = spare<N>(0), x1 = spare<N>(1);
  w.lay(0, {{0, level0({neg_inf, 5, 10, 20})}, {x0, level0({60, 70})}});
  w.lay(1, {{1, {{neg_inf, 0}, {20, 0}}}, {x1, {{60, x0}, {70, x0}}}});
  w.lay(2, {{2, {{neg_inf, 1}, {50, x1}}}});
}

TYPED_TEST(RobustMechanisms, NoPreviousChunkFallsBackToTheLevelsHead) {
  constexpr int N = TypeParam::value;
  {
    world<N> w;
    lay_stale_upper_key(w);
    auto a = w.template alg<gfsl::variant::thesis>(0);
    EXPECT_THROW(a.contains(55), std::logic_error) << "thesis restarts forever (the recorder stops it)";
    EXPECT_GT(w.stats().restarts, 1000u);
  }
  {
    world<N> w;
    lay_stale_upper_key(w);
    auto a = w.template alg<gfsl::variant::robust>(0);
    expect_result(a.contains(55), status::ok, false, 0);
    expect_result(a.contains(58), status::ok, false, 0);
    expect_result(a.contains(60), status::ok, true, val(60));
    expect_result(a.contains(20), status::ok, true, val(20));
    EXPECT_EQ(w.stats().restarts, 2u) << "one fallback for each search that crossed the stale key";
  }
  {
    world<N> w;
    lay_stale_upper_key(w);
    auto a = w.template mutant_alg<gfsl::variant::robust>(0, gfsl::mutant::head_fallback_wrong);
    EXPECT_THROW(a.contains(55), std::logic_error) << "head-fallback-wrong must loop like the thesis";
  }
}

}  // namespace

namespace {

// Point 4: a robust burst's entries are one wave (one group of stores, in no
// order), between the odd and the even version; the thesis writes them one
// by one, right to left (4.2.2). Level 0 only: [-inf 10 20 30 40], insert 15.
struct store_group {
  int lane;
  int group_index;
  int group_size;
};
template <int N, gfsl::variant V>
std::vector<store_group> data_stores_of_insert_15(std::vector<std::uint64_t>& lock_words) {
  world<N> w;
  w.lay(0, {{0, level0({neg_inf, 10, 20, 30, 40})}});
  expect_well_formed(w);
  std::vector<store_group> data;
  w.hook().on_access = [&](const gfsl::access& a, std::uint64_t) {
    if (a.kind != gfsl::access_kind::store || a.word < gfsl::header_offsets::pool) return;
    const int lane = static_cast<int>((a.word - gfsl::header_offsets::pool) % N);
    if (lane == world<N>::lock_lane) lock_words.push_back(a.value);
    if (lane < world<N>::dsize) data.push_back({lane, a.group_index, a.group_size});
  };
  auto a = w.template alg<V>(0.0);
  expect_result(a.insert(15, val(15)), status::ok, true, 0);
  w.hook().on_access = nullptr;
  for (key_type k : {10u, 15u, 20u, 30u, 40u}) expect_result(a.contains(k), status::ok, true, val(k));
  expect_result(a.contains(25), status::ok, false, 0);
  return data;
}

}  // namespace

TYPED_TEST(RobustMechanisms, ABurstIsOneWaveOfStoresBetweenTheOddAndTheEvenVersion) {
  constexpr int N = TypeParam::value;
  std::vector<std::uint64_t> locks;
  const auto robust = data_stores_of_insert_15<N, gfsl::variant::robust>(locks);
  std::string seen;
  for (const auto& g : robust) seen += " " + std::to_string(g.lane) + "/" + std::to_string(g.group_index) + "/" + std::to_string(g.group_size);
  ASSERT_EQ(robust.size(), 4u) << "15 into lane 2 and 20, 30, 40 one lane right:" << seen;
  std::set<int> lanes;
  for (std::size_t i = 0; i < robust.size(); ++i) {
    EXPECT_EQ(robust[i].group_size, 4) << "one wave";
    EXPECT_EQ(robust[i].group_index, static_cast<int>(i));
    lanes.insert(robust[i].lane);
  }
  EXPECT_EQ(lanes, (std::set<int>{2, 3, 4, 5}));
  // The LOCK word stored around it: odd version, then, the insert having no
  // split to make, the even version and the unlock in one store.
  ASSERT_EQ(locks.size(), 2u);
  EXPECT_TRUE(gfsl::lock_in_burst(locks[0]));
  EXPECT_FALSE(gfsl::lock_is_free(locks[0]));
  EXPECT_FALSE(gfsl::lock_in_burst(locks[1]));
  EXPECT_EQ(gfsl::lock_version(locks[1]), gfsl::lock_version(locks[0]) + 1);
  EXPECT_TRUE(gfsl::lock_is_free(locks[1]));

  locks.clear();
  const auto thesis = data_stores_of_insert_15<N, gfsl::variant::thesis>(locks);
  ASSERT_EQ(thesis.size(), 4u);
  for (std::size_t i = 0; i < thesis.size(); ++i) {
    EXPECT_EQ(thesis[i].group_size, 1) << "one store at a time";
    EXPECT_EQ(thesis[i].lane, 5 - static_cast<int>(i)) << "right to left";
  }
}

namespace {
// The memory order of each write an insert makes to the structure, in order:
// the lock's CAS, then its stores ('C' a CAS, 'L' a LOCK-lane store, 'D' a
// data-lane store; then the order).
template <int N, gfsl::variant V>
std::vector<std::pair<char, gfsl::mem_order>> write_orders_of_insert_15() {
  world<N> w;
  w.lay(0, {{0, level0({neg_inf, 10, 20, 30, 40})}});
  expect_well_formed(w);
  std::vector<std::pair<char, gfsl::mem_order>> writes;
  w.hook().on_access = [&](const gfsl::access& a, std::uint64_t) {
    if (a.word < gfsl::header_offsets::pool) return;
    const int lane = static_cast<int>((a.word - gfsl::header_offsets::pool) % N);
    if (a.kind == gfsl::access_kind::cas) writes.emplace_back('C', a.order);
    if (a.kind == gfsl::access_kind::store) writes.emplace_back(lane == world<N>::lock_lane ? 'L' : 'D', a.order);
  };
  auto a = w.template alg<V>(0.0);
  expect_result(a.insert(15, val(15)), status::ok, true, 0);
  w.hook().on_access = nullptr;
  return writes;
}
}  // namespace

// Why robust may take its locks with an acquire CAS (the argument at
// try_lock): a burst orders its odd version before its data by the data
// stores' own release, and the unlock is a release store. The thesis
// variant keeps the acq_rel CAS it was measured with.
TYPED_TEST(RobustMechanisms, TheLockIsTakenWithAcquireAndTheBurstOrdersItselfByItsReleases) {
  constexpr int N = TypeParam::value;
  using gfsl::mem_order;
  const auto robust = write_orders_of_insert_15<N, gfsl::variant::robust>();
  ASSERT_EQ(robust.size(), 7u) << "the CAS, the odd version, four data stores, the unlock";
  EXPECT_EQ(robust[0], std::make_pair('C', mem_order::acquire));
  EXPECT_EQ(robust[1], std::make_pair('L', mem_order::relaxed));
  for (int i = 2; i < 6; ++i) EXPECT_EQ(robust[i], std::make_pair('D', mem_order::release)) << i;
  EXPECT_EQ(robust[6], std::make_pair('L', mem_order::release));

  const auto thesis = write_orders_of_insert_15<N, gfsl::variant::thesis>();
  ASSERT_FALSE(thesis.empty());
  EXPECT_EQ(thesis.front(), std::make_pair('C', mem_order::acq_rel));
  for (std::size_t i = 1; i < thesis.size(); ++i) EXPECT_EQ(thesis[i].second, mem_order::release) << i;
}

namespace {
// The stores (data lanes and NEXT) of deleting the max key of a non-final
// chunk that stays above the merge threshold.
template <int N, gfsl::variant V>
std::vector<store_group> stores_of_removing_a_max(key_type& removed) {
  world<N> w;
  constexpr int keys = gfsl::chunk_shape<N>::merge_threshold + 3;
  std::vector<key_type> first{neg_inf};
  kvs first_entries{{neg_inf, 0}};
  for (int i = 1; i < keys; ++i) {
    first.push_back(static_cast<key_type>(10 * i));
    first_entries.emplace_back(first.back(), val(first.back()));
  }
  removed = first.back();
  const chunk_index last = spare<N>(0);
  w.lay(0, {{0, first_entries}, {last, level0({1000, 1001})}});
  expect_well_formed(w);
  std::vector<store_group> stores;
  w.hook().on_access = [&](const gfsl::access& a, std::uint64_t) {
    if (a.kind != gfsl::access_kind::store || a.word < gfsl::header_offsets::pool) return;
    const int lane = static_cast<int>((a.word - gfsl::header_offsets::pool) % N);
    if (lane != world<N>::lock_lane) stores.push_back({lane, a.group_index, a.group_size});
  };
  auto a = w.template alg<V>(0.0);
  expect_result(a.remove(removed), status::ok, true, val(removed));
  w.hook().on_access = nullptr;
  expect_well_formed(w);
  expect_result(a.contains(removed), status::ok, false, 0);
  expect_result(a.contains(first[keys - 2]), status::ok, true, val(first[keys - 2]));
  return stores;
}
}  // namespace

// A removal of a chunk's max key lowers the max (the NEXT lane) and empties
// k's entry. The thesis stores the max first, alone: a whole-chunk read
// between the two sees k in a DATA lane and NEXT voting past it. Robust
// stores both in its one wave (docs/ALGORITHM.md, robust point 4).
TYPED_TEST(RobustMechanisms, ARemovalLowersTheMaxInTheWaveThatEmptiesTheKey) {
  constexpr int N = TypeParam::value;
  key_type k = 0;
  const auto robust = stores_of_removing_a_max<N, gfsl::variant::robust>(k);
  ASSERT_EQ(robust.size(), 2u) << "the max key's entry and NEXT";
  EXPECT_EQ(robust[0].group_size, 2);
  EXPECT_EQ(robust[1].group_size, 2);
  EXPECT_EQ((std::set<int>{robust[0].lane, robust[1].lane}),
            (std::set<int>{gfsl::chunk_shape<N>::merge_threshold + 2, world<N>::next_lane}));

  const auto thesis = stores_of_removing_a_max<N, gfsl::variant::thesis>(k);
  ASSERT_EQ(thesis.size(), 2u);
  EXPECT_EQ(thesis[0].lane, world<N>::next_lane) << "the max drops first";
  EXPECT_EQ(thesis[0].group_size, 1);
  EXPECT_EQ(thesis[1].lane, gfsl::chunk_shape<N>::merge_threshold + 2);
  EXPECT_EQ(thesis[1].group_size, 1);
}
