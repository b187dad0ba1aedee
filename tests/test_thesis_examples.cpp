// The worked examples of thesis chapter 4 (Fig. 4.1-4.6), replayed on one host
// team against structures laid out word by word, so that each case starts from
// exactly the shape the figure describes and checks the resulting chunks, not
// only the operation's answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/gfsl/algorithm.hpp"
#include "core/types.hpp"
#include "tests/laid_structure.hpp"

namespace {

using namespace gfsl::laid;

template <class Width>
class ThesisExamples : public ::testing::Test {};
using Widths = ::testing::Types<std::integral_constant<int, 16>, std::integral_constant<int, 32>>;
TYPED_TEST_SUITE(ThesisExamples, Widths);

// Fig. 4.1, three levels (x_i = spare chunk i):
//   level 2  A=2: [-inf->1, 59->C]
//   level 1  B=1: [-inf->0, 24->x0, 47->x0]  ->  C=x4: [59->x2, 68->x2, 75->x3]
//   level 0  0: [-inf 5 9 13 17 21] -> x0: [24 26 30 35 47] -> x1: [50 52 55]
//            -> x2: [59 62 68] -> x3: [70 75 80]
template <int N>
struct fig41 {
  static constexpr chunk_index a = 2, b = 1, x0 = spare<N>(0), x1 = spare<N>(1), x2 = spare<N>(2),
                               x3 = spare<N>(3), c = spare<N>(4);
};

template <int N>
void lay_fig41(world<N>& w) {
  using f = fig41<N>;
  w.lay(0, {{0, level0({neg_inf, 5, 9, 13, 17, 21})},
            {f::x0, level0({24, 26, 30, 35, 47})},
            {f::x1, level0({50, 52, 55})},
            {f::x2, level0({59, 62, 68})},
            {f::x3, level0({70, 75, 80})}});
  w.lay(1, {{f::b, {{neg_inf, 0}, {24, f::x0}, {47, f::x0}}}, {f::c, {{59, f::x2}, {68, f::x2}, {75, f::x3}}}});
  w.lay(2, {{f::a, {{neg_inf, 1}, {59, f::c}}}});
}

TYPED_TEST(ThesisExamples, Fig41LayoutIsWellFormed) {
  constexpr int N = TypeParam::value;
  world<N> w;
  lay_fig41(w);
  expect_well_formed(w);
  using f = fig41<N>;
  EXPECT_EQ(gfsl::level_entries(w.view(), 1), (kvs{{24, f::x0}, {47, f::x0}, {59, f::x2}, {68, f::x2}, {75, f::x3}}));
}

// Fig. 4.1a: down steps only (A -> B -> the chunk holding 17).
TYPED_TEST(ThesisExamples, Fig41aContainsTakesDownSteps) {
  constexpr int N = TypeParam::value;
  world<N> w;
  lay_fig41(w);
  auto a = w.alg(0.5);
  w.reset_observation();
  expect_result(a.contains(17), status::ok, true, val(17));
  using f = fig41<N>;
  EXPECT_EQ(w.hook().chunk_reads, (std::vector<chunk_index>{f::a, f::b, 0}));
  EXPECT_EQ(w.stats().backtracks, 0u);
  EXPECT_EQ(w.stats().restarts, 0u);

  // A down step from the top level straight past B: 75 is the largest key of
  // level 1 at or below 80, reached through C.
  w.reset_observation();
  expect_result(a.contains(80), status::ok, true, val(80));
  EXPECT_EQ(w.hook().chunk_reads, (std::vector<chunk_index>{f::a, f::c, f::x3}));
  EXPECT_EQ(w.stats().backtracks, 0u);
  EXPECT_TRUE(w.hook().stores.empty()) << "contains never writes";
  expect_well_formed(w);
}

// Fig. 4.1b: searching 52 goes lateral from B to C, finds every key of C
// above 52, backtracks through B's 47 and walks level 0 laterally.
TYPED_TEST(ThesisExamples, Fig41bContainsBacktracksOnce) {
  constexpr int N = TypeParam::value;
  world<N> w;
  lay_fig41(w);
  auto a = w.alg(0.5);
  w.reset_observation();
  expect_result(a.contains(52), status::ok, true, val(52));
  using f = fig41<N>;
  EXPECT_EQ(w.hook().chunk_reads, (std::vector<chunk_index>{f::a, f::b, f::c, f::x0, f::x1}));
  EXPECT_EQ(w.stats().backtracks, 1u);
  EXPECT_EQ(w.stats().restarts, 0u);

  // Same path for an absent key of the same range: the enclosing chunk is
  // reached and does not hold it.
  w.reset_observation();
  expect_result(a.contains(53), status::ok, false, 0);
  EXPECT_EQ(w.hook().chunk_reads, (std::vector<chunk_index>{f::a, f::b, f::c, f::x0, f::x1}));
  EXPECT_EQ(w.stats().backtracks, 1u);
  EXPECT_TRUE(w.hook().stores.empty());
  expect_well_formed(w);
}

// 4.2.1 "Lock-Freedom": a team searching 70 reads A and stalls; another team
// deletes 59 and 68; the stalled team steps down through A's stale 59 into C,
// which now holds only 75. It has no previous chunk in level 1, so it
// restarts from the head array, and this time backtracks through B's 47.
TYPED_TEST(ThesisExamples, Fig41ContainsRestartsAfterConcurrentDelete) {
  constexpr int N = TypeParam::value;
  world<N> w;
  lay_fig41(w);
  gfsl::host_team<N> other(1, 99, w.words());
  gfsl::algorithm<gfsl::host_team<N>, false, gfsl::variant::thesis> deleter(other, w.view(), gfsl::p_chunk_threshold_of(0.5));

  bool fired = false;
  op_result del59{}, del68{};
  w.hook().on_chunk_read = [&](chunk_index c) {
    if (c != fig41<N>::a || fired) return;
    fired = true;
    del59 = deleter.remove(59);
    del68 = deleter.remove(68);
  };
  auto a = w.alg(0.5);
  w.reset_observation();
  const op_result r = a.contains(70);
  w.hook().on_chunk_read = nullptr;

  ASSERT_TRUE(fired);
  expect_result(del59, status::ok, true, val(59));
  expect_result(del68, status::ok, true, val(68));
  using f = fig41<N>;
  EXPECT_EQ(w.contents(f::c), (kvs{{75, f::x3}})) << "C keeps only keys above 70";
  EXPECT_EQ(w.level_count(2), 0) << "level 2 held only 59";

  expect_result(r, status::ok, true, val(70));
  EXPECT_EQ(w.stats().restarts, 1u);
  EXPECT_EQ(w.stats().backtracks, 1u);
  // x2 became a zombie when deleting 59 merged it into x3; contains skips it
  // without unlinking.
  EXPECT_TRUE(w.image(f::x2).zombie());
  EXPECT_EQ(w.stats().zombies_skipped, 1u);
  EXPECT_EQ(w.stats().zombie_unlinks, 0u);
  EXPECT_EQ(w.hook().chunk_reads, (std::vector<chunk_index>{f::a, f::c, f::b, f::c, f::x0, f::x1, f::x2, f::x3}));
  expect_well_formed(w);
}

// Fig. 4.2/4.3: 15 goes into the chunk enclosing it; the larger keys shift one
// entry right, written from the last key down to the insertion index.
TYPED_TEST(ThesisExamples, Fig42InsertWithoutSplitShiftsRight) {
  constexpr int N = TypeParam::value;
  using W = world<N>;
  W w;
  lay_fig41(w);
  const auto level1_before = gfsl::level_entries(w.view(), 1);
  const auto level2_before = gfsl::level_entries(w.view(), 2);
  auto a = w.alg(1.0);
  w.reset_observation();
  expect_result(a.insert(15, val(15)), status::ok, true, 0);

  EXPECT_EQ(w.hook().chunk_reads.front(), 2u);
  EXPECT_EQ(w.contents(0), level0({neg_inf, 5, 9, 13, 15, 17, 21}));
  const auto img = w.image(0);
  EXPECT_EQ(img.max, 21u) << "an insert never changes the max field";
  EXPECT_EQ(img.next, fig41<N>::x0);
  EXPECT_EQ(img.lock, gfsl::lock_free_word);
  const std::vector<std::pair<int, std::uint64_t>> expected_order{
      {6, gfsl::make_entry(21, val(21))}, {5, gfsl::make_entry(17, val(17))}, {4, gfsl::make_entry(15, val(15))}};
  EXPECT_EQ(w.hook().data_stores_to(0), expected_order);
  EXPECT_EQ(w.stats().splits, 0u);
  EXPECT_EQ(w.stats().raised_keys, 0u);
  EXPECT_EQ(w.level_count(0), 5);
  EXPECT_EQ(gfsl::level_entries(w.view(), 1), level1_before);
  EXPECT_EQ(gfsl::level_entries(w.view(), 2), level2_before);

  // Insert-if-absent: a second insert of 15 fails and keeps the first value.
  expect_result(a.insert(15, 7), status::ok, false, 0);
  expect_result(a.contains(15), status::ok, true, val(15));
  // At the front and at the back of a chunk.
  expect_result(a.insert(1, val(1)), status::ok, true, 0);
  expect_result(a.insert(48, val(48)), status::ok, true, 0);
  EXPECT_EQ(w.contents(0), level0({neg_inf, 1, 5, 9, 13, 15, 17, 21}));
  EXPECT_EQ(w.contents(fig41<N>::x1), level0({48, 50, 52, 55})) << "48 is above x0's max 47, so x1 encloses it";
  expect_well_formed(w);
}

// Fig. 4.4 layout: chunk 0 is full ([-inf 10 20 .. 10*(D-1)]) and is followed
// by x0 = [1000 1010]; level 1 holds 10*(F+1), one of the keys a split moves
// (F = D - D/2 is the first moved lane), pointing at chunk 0. The split's new
// chunk will be x1.
template <int N>
void lay_fig44(world<N>& w) {
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  constexpr int F = D - gfsl::chunk_shape<N>::split_moved;
  kvs full{{neg_inf, 0}};
  for (int i = 1; i < D; ++i) full.emplace_back(10 * i, val(10 * i));
  w.lay(0, {{0, full}, {spare<N>(0), level0({1000, 1010})}});
  w.lay(1, {{1, {{neg_inf, 0}, {10 * (F + 1), 0}, {1000, spare<N>(0)}}}});
}

template <int N>
kvs tens(int from, int to) {  // level-0 keys 10*from .. 10*(to-1)
  kvs out;
  for (int i = from; i < to; ++i) out.emplace_back(10 * i, val(10 * i));
  return out;
}

// Fig. 4.4: the key lands above the split point, in the new chunk.
TYPED_TEST(ThesisExamples, Fig44SplitMovesTopHalfAndRaisesNewKey) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  constexpr int M = gfsl::chunk_shape<N>::split_moved;
  constexpr int F = D - M;
  constexpr int next_lane = gfsl::chunk_shape<N>::next_lane;
  constexpr int lock_lane = gfsl::chunk_shape<N>::lock_lane;
  world<N> w;
  lay_fig44(w);
  expect_well_formed(w);
  const chunk_index succ = spare<N>(0);
  const chunk_index fresh = static_cast<chunk_index>(w.alloc_counter());
  ASSERT_EQ(fresh, spare<N>(1));
  const key_type k = 10 * F + 5;
  auto a = w.alg(1.0);
  w.reset_observation();
  expect_result(a.insert(k, val(k)), status::ok, true, 0);

  kvs kept{{neg_inf, 0}};
  for (const kv& e : tens<N>(1, F)) kept.push_back(e);
  EXPECT_EQ(w.contents(0), kept);
  EXPECT_EQ(w.image(0).max, 10u * (F - 1)) << "max lowered to the largest key kept";
  EXPECT_EQ(w.image(0).next, fresh);
  kvs moved = tens<N>(F, D);
  moved.insert(moved.begin() + 1, {k, val(k)});
  EXPECT_EQ(w.contents(fresh), moved);
  EXPECT_EQ(w.image(fresh).max, 10u * (D - 1)) << "the new chunk takes over the old max";
  EXPECT_EQ(w.image(fresh).next, succ) << "and points at the old successor";
  EXPECT_EQ(w.image(fresh).lock, gfsl::lock_free_word);
  EXPECT_EQ(w.alloc_counter(), fresh + 1u);
  EXPECT_EQ(w.level_count(0), 3);

  // Raised key max(k, minK) = k, pointing at the new chunk; 10*(F+1) moved,
  // so its level-1 entry now points at the new chunk too.
  EXPECT_EQ(w.contents(1), (kvs{{neg_inf, 0}, {k, fresh}, {10 * (F + 1), fresh}, {1000, succ}}));
  EXPECT_EQ(w.level_count(1), 1);
  EXPECT_EQ(w.stats().splits, 1u);
  EXPECT_EQ(w.stats().raised_keys, 1u);
  EXPECT_EQ(w.stats().down_ptr_updates, 1u);

  // Alg. 4.9 order: the new chunk is written before the single store that
  // lowers 0's max and links it; the moved entries of 0 are emptied after.
  const auto& rec = w.hook();
  const long link = rec.find_store(0, next_lane, gfsl::make_entry(10 * (F - 1), fresh));
  ASSERT_GE(link, 0);
  int fresh_writes_before_link = 0;
  for (long i = 0; i < link; ++i) fresh_writes_before_link += rec.stores[i].chunk == fresh;
  EXPECT_EQ(fresh_writes_before_link, M + 2) << "lock, NEXT and the moved entries";
  for (int lane = F; lane < D; ++lane) {
    EXPECT_GT(rec.find_store(0, lane, gfsl::empty_entry), link) << "lane " << lane;
  }
  // preSplit locks the successor (Alg. 4.9 line 17) and holds it across the link.
  const long succ_locked = rec.find_store(succ, lock_lane, gfsl::lock_word_of(w.team().id()));
  ASSERT_GE(succ_locked, 0);
  EXPECT_LT(succ_locked, link);
  EXPECT_GT(rec.find_store(succ, lock_lane, gfsl::lock_free_word), link);
  expect_well_formed(w);
  for (int i = 1; i < D; ++i) expect_result(a.contains(10 * i), status::ok, true, val(10 * i));
}

// The key stays below the split point: minK, the smallest moved key, is
// raised, pointing at the new chunk.
TYPED_TEST(ThesisExamples, Fig44SplitKeepsKeyAndRaisesMinMoved) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  constexpr int F = D - gfsl::chunk_shape<N>::split_moved;
  world<N> w;
  lay_fig44(w);
  const chunk_index succ = spare<N>(0), fresh = spare<N>(1);
  auto a = w.alg(1.0);
  w.reset_observation();
  expect_result(a.insert(35, val(35)), status::ok, true, 0);

  kvs kept{{neg_inf, 0}};
  for (const kv& e : tens<N>(1, F)) kept.push_back(e);
  kept.insert(kept.begin() + 4, {35, val(35)});
  EXPECT_EQ(w.contents(0), kept);
  EXPECT_EQ(w.image(0).max, 10u * (F - 1));
  EXPECT_EQ(w.image(0).next, fresh);
  EXPECT_EQ(w.contents(fresh), tens<N>(F, D));
  EXPECT_EQ(w.image(fresh).next, succ);
  EXPECT_EQ(w.contents(1), (kvs{{neg_inf, 0}, {10 * F, fresh}, {10 * (F + 1), fresh}, {1000, succ}}));
  EXPECT_EQ(w.stats().raised_keys, 1u);
  EXPECT_EQ(w.stats().down_ptr_updates, 1u);
  expect_well_formed(w);
}

// p_chunk = 0: the split still happens and the moved key's pointer is still
// repaired, but nothing is raised.
TYPED_TEST(ThesisExamples, Fig44SplitWithoutRaise) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  constexpr int F = D - gfsl::chunk_shape<N>::split_moved;
  world<N> w;
  lay_fig44(w);
  auto a = w.alg(0.0);
  w.reset_observation();
  const key_type k = 10 * F + 5;
  expect_result(a.insert(k, val(k)), status::ok, true, 0);
  EXPECT_EQ(w.contents(1), (kvs{{neg_inf, 0}, {10 * (F + 1), spare<N>(1)}, {1000, spare<N>(0)}}));
  EXPECT_EQ(w.stats().splits, 1u);
  EXPECT_EQ(w.stats().raised_keys, 0u);
  EXPECT_EQ(w.stats().down_ptr_updates, 1u);
  expect_well_formed(w);
}

// Splitting a level's final chunk: the new chunk becomes the final one.
TYPED_TEST(ThesisExamples, Fig44SplitOfFinalChunk) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  constexpr int F = D - gfsl::chunk_shape<N>::split_moved;
  world<N> w;
  kvs full{{neg_inf, 0}};
  for (const kv& e : tens<N>(1, D)) full.push_back(e);
  w.lay(0, {{0, full}});
  auto a = w.alg(0.0);
  const key_type k = 10 * D + 5;
  expect_result(a.insert(k, val(k)), status::ok, true, 0);
  const chunk_index fresh = N;  // the first chunk after the level heads
  EXPECT_EQ(w.image(0).max, 10u * (F - 1));
  EXPECT_EQ(w.image(0).next, fresh);
  kvs moved = tens<N>(F, D);
  moved.emplace_back(k, val(k));
  EXPECT_EQ(w.contents(fresh), moved);
  EXPECT_EQ(w.image(fresh).max, empty_key);
  EXPECT_EQ(w.image(fresh).next, gfsl::no_chunk);
  EXPECT_EQ(w.level_count(0), 2);
  EXPECT_EQ(w.level_count(1), 0);
  expect_well_formed(w);
}

// A split in level 0 raises k into a full level-1 chunk, which splits in turn
// and raises k itself (upper levels raise the key that caused the split) into
// the empty level 2, pointing at the level-1 chunk that now holds k.
TYPED_TEST(ThesisExamples, Fig44SplitCascadesUpward) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  constexpr int M = gfsl::chunk_shape<N>::split_moved;
  constexpr int F = D - M;
  world<N> w;
  kvs full0{{neg_inf, 0}};
  kvs full1{{neg_inf, 0}};
  for (int i = 1; i < D; ++i) {
    full0.emplace_back(10 * i, val(10 * i));
    full1.emplace_back(10 * i, 0);
  }
  w.lay(0, {{0, full0}});
  w.lay(1, {{1, full1}});
  expect_well_formed(w);
  auto a = w.alg(1.0);
  w.reset_observation();
  const key_type k = 10 * (D - 1) + 5;
  expect_result(a.insert(k, val(k)), status::ok, true, 0);

  const chunk_index fresh0 = N, fresh1 = N + 1;
  kvs top0 = tens<N>(F, D);
  top0.emplace_back(k, val(k));
  EXPECT_EQ(w.contents(fresh0), top0);
  EXPECT_EQ(w.image(0).next, fresh0);
  kvs low1{{neg_inf, 0}};
  for (int i = 1; i < F; ++i) low1.emplace_back(10 * i, 0);
  EXPECT_EQ(w.contents(1), low1);
  EXPECT_EQ(w.image(1).max, 10u * (F - 1));
  EXPECT_EQ(w.image(1).next, fresh1);
  kvs top1;
  for (int i = F; i < D; ++i) top1.emplace_back(10 * i, fresh0);  // repointed by the level-0 split
  top1.emplace_back(k, fresh0);
  EXPECT_EQ(w.contents(fresh1), top1);
  EXPECT_EQ(w.contents(2), (kvs{{neg_inf, 1}, {k, fresh1}}));
  EXPECT_EQ(w.level_count(0), 2);
  EXPECT_EQ(w.level_count(1), 2);
  EXPECT_EQ(w.level_count(2), 1);
  EXPECT_EQ(w.stats().splits, 2u);
  EXPECT_EQ(w.stats().raised_keys, 2u);
  EXPECT_EQ(w.stats().down_ptr_updates, static_cast<std::uint64_t>(M));
  expect_well_formed(w);
  w.reset_observation();
  expect_result(a.contains(k), status::ok, true, val(k));
  EXPECT_EQ(w.hook().chunk_reads, (std::vector<chunk_index>{2, fresh1, fresh0}));
}

// Fig. 4.5a/4.5b/4.6 layout. E = x0 holds T+2 keys 11, 13, .. (T = DSIZE/3,
// so a single delete does not merge it); level 1 holds E's keys, level 2 only
// 17, so deleting 13 skips A and removes 13 from B and E.
template <int N>
kvs e_keys() {
  constexpr int T = gfsl::chunk_shape<N>::merge_threshold;
  kvs out;
  for (int i = 0; i < T + 2; ++i) out.emplace_back(11 + 2 * i, val(11 + 2 * i));
  return out;
}

template <int N>
void lay_fig45(world<N>& w) {
  w.lay(0, {{0, level0({neg_inf, 1, 3, 5, 7, 9})}, {spare<N>(0), e_keys<N>()}, {spare<N>(1), level0({100, 110})}});
  kvs b{{neg_inf, 0}};
  for (const kv& e : e_keys<N>()) b.emplace_back(e.first, spare<N>(0));
  w.lay(1, {{1, b}});
  w.lay(2, {{2, {{neg_inf, 1}, {17, 1}}}});
}

TYPED_TEST(ThesisExamples, Fig45Fig46DeleteWithoutMergeShiftsLeft) {
  constexpr int N = TypeParam::value;
  constexpr int T = gfsl::chunk_shape<N>::merge_threshold;
  constexpr int next_lane = gfsl::chunk_shape<N>::next_lane;
  world<N> w;
  lay_fig45(w);
  expect_well_formed(w);
  const chunk_index ce = spare<N>(0), cf = spare<N>(1);
  auto a = w.alg(0.5);
  w.reset_observation();
  expect_result(a.remove(13), status::ok, true, val(13));

  kvs e = e_keys<N>();
  e.erase(e.begin() + 1);
  EXPECT_EQ(w.contents(ce), e);
  EXPECT_EQ(w.image(ce).max, e.back().first);
  kvs b{{neg_inf, 0}};
  for (const kv& x : e) b.emplace_back(x.first, ce);
  EXPECT_EQ(w.contents(1), b);
  EXPECT_EQ(w.contents(2), (kvs{{neg_inf, 1}, {17, 1}}));
  // Fig. 4.6: from 13's index upwards, each entry takes its right neighbour;
  // the old last entry becomes EMPTY.
  std::vector<std::pair<int, std::uint64_t>> order;
  for (int i = 1; i < T + 2; ++i) {
    order.emplace_back(i, i + 1 < T + 2 ? gfsl::make_entry(e[i].first, e[i].second) : gfsl::empty_entry);
  }
  EXPECT_EQ(w.hook().data_stores_to(ce), order);
  EXPECT_EQ(w.stats().merges, 0u);
  EXPECT_EQ(w.level_count(0), 3);
  EXPECT_EQ(w.level_count(1), 1);
  EXPECT_EQ(w.level_count(2), 1);
  expect_well_formed(w);
  expect_result(a.contains(13), status::ok, false, 0);

  // Deleting the largest key of a non-final chunk lowers its max field first,
  // so that no reader sees a max the chunk does not hold.
  const key_type last = e.back().first;
  const key_type second_last = e[e.size() - 2].first;
  w.reset_observation();
  expect_result(a.remove(last), status::ok, true, val(last));
  e.pop_back();
  EXPECT_EQ(w.contents(ce), e);
  EXPECT_EQ(w.image(ce).max, second_last);
  EXPECT_EQ(w.image(ce).next, cf);
  const std::vector<store_event>& st = w.hook().stores;
  const auto first_to_e =
      std::find_if(st.begin(), st.end(), [&](const store_event& x) { return x.chunk == ce && !x.cas; });
  ASSERT_NE(first_to_e, st.end());
  EXPECT_EQ(first_to_e->lane, next_lane);
  EXPECT_EQ(first_to_e->value, gfsl::make_entry(second_last, cf));
  EXPECT_EQ(w.hook().data_stores_to(ce), (std::vector<std::pair<int, std::uint64_t>>{{T, gfsl::empty_entry}}));
  EXPECT_EQ(w.stats().merges, 0u);
  expect_result(a.contains(last), status::ok, false, 0);
  expect_result(a.contains(second_last), status::ok, true, val(second_last));
  expect_well_formed(w);
}

// Fig. 4.5a: with 13 in every level, the bottom chunk is locked first and
// stays locked while 13 leaves level 2, then level 1 (lock-delete-unlock
// each), and is the last one written and unlocked.
TYPED_TEST(ThesisExamples, Fig45aDeleteTopDownWithBottomLocked) {
  constexpr int N = TypeParam::value;
  constexpr int lock_lane = gfsl::chunk_shape<N>::lock_lane;
  world<N> w;
  lay_fig45(w);
  w.lay(2, {{2, {{neg_inf, 1}, {13, 1}, {17, 1}}}});
  expect_well_formed(w);
  const chunk_index ce = spare<N>(0);
  auto a = w.alg(0.5);
  w.reset_observation();
  expect_result(a.remove(13), status::ok, true, val(13));
  EXPECT_EQ(w.contents(2), (kvs{{neg_inf, 1}, {17, 1}}));

  const auto& rec = w.hook();
  const std::uint64_t mine = gfsl::lock_word_of(w.team().id());
  const long lock_e = rec.find_store(ce, lock_lane, mine);
  const long lock_a = rec.find_store(2, lock_lane, mine);
  const long unlock_a = rec.find_store(2, lock_lane, gfsl::lock_free_word);
  const long lock_b = rec.find_store(1, lock_lane, mine);
  const long unlock_b = rec.find_store(1, lock_lane, gfsl::lock_free_word);
  long first_e_data = -1;
  for (std::size_t i = 0; i < rec.stores.size() && first_e_data < 0; ++i) {
    if (rec.stores[i].chunk == ce && rec.stores[i].lane != lock_lane) first_e_data = static_cast<long>(i);
  }
  ASSERT_GE(lock_e, 0);
  EXPECT_LT(lock_e, lock_a);
  EXPECT_LT(lock_a, unlock_a);
  EXPECT_LT(unlock_a, lock_b);
  EXPECT_LT(lock_b, unlock_b);
  EXPECT_LT(unlock_b, first_e_data);
  ASSERT_FALSE(rec.stores.empty());
  EXPECT_EQ(rec.stores.back().chunk, ce);
  EXPECT_EQ(rec.stores.back().lane, lock_lane);
  EXPECT_EQ(rec.stores.back().value, gfsl::lock_free_word);
  expect_well_formed(w);
}

// Fig. 4.5c layout: E = x0 [13 17 21] is at the merge threshold, F = x1
// [24 26] has room for E's keys; G = x2 [30 40] is the final chunk.
template <int N>
struct fig45c {
  static constexpr chunk_index e = spare<N>(0), f = spare<N>(1), g = spare<N>(2);
};

template <int N>
void lay_fig45c(world<N>& w) {
  using c = fig45c<N>;
  w.lay(0, {{0, level0({neg_inf, 5, 9})},
            {c::e, level0({13, 17, 21})},
            {c::f, level0({24, 26})},
            {c::g, level0({30, 40})}});
  w.lay(1, {{1, {{neg_inf, 0}, {13, c::e}, {17, c::e}, {24, c::f}, {30, c::g}}}});
  w.lay(2, {{2, {{neg_inf, 1}, {24, 1}}}});
}

TYPED_TEST(ThesisExamples, Fig45cDeleteMergesIntoSuccessor) {
  constexpr int N = TypeParam::value;
  constexpr int lock_lane = gfsl::chunk_shape<N>::lock_lane;
  using c = fig45c<N>;
  world<N> w;
  lay_fig45c(w);
  expect_well_formed(w);
  auto a = w.alg(0.5);
  w.reset_observation();
  expect_result(a.remove(13), status::ok, true, val(13));

  // F receives E's keys but 13 in its low entries, its own keys after them.
  EXPECT_EQ(w.contents(c::f), level0({17, 21, 24, 26}));
  EXPECT_EQ(w.image(c::f).max, 26u);
  EXPECT_EQ(w.image(c::f).next, c::g);
  EXPECT_EQ(w.image(c::f).lock, gfsl::lock_free_word);
  // E is a zombie, left as it was (13 included) and still pointing at F.
  const auto e = w.image(c::e);
  EXPECT_TRUE(e.zombie());
  EXPECT_EQ(e.lock, gfsl::zombie_word_of(w.team().id()));
  EXPECT_EQ(w.contents(c::e), level0({13, 17, 21}));
  EXPECT_EQ(e.next, c::f);
  EXPECT_EQ(w.image(0).next, c::e) << "the predecessor is redirected lazily, not by the delete";
  // 13 left level 1; 17's down pointer moved from the zombie to F.
  EXPECT_EQ(w.contents(1), (kvs{{neg_inf, 0}, {17, c::f}, {24, c::f}, {30, c::g}}));
  EXPECT_EQ(w.contents(2), (kvs{{neg_inf, 1}, {24, 1}}));
  EXPECT_EQ(w.level_count(0), 3);
  EXPECT_EQ(w.stats().merges, 1u);
  EXPECT_EQ(w.stats().down_ptr_updates, 1u);
  // Right to left into F (26 first, then 24, 21, 17); the zombie mark comes
  // after the last of them and before F is unlocked.
  const std::vector<std::pair<int, std::uint64_t>> order{{3, gfsl::make_entry(26, val(26))},
                                                         {2, gfsl::make_entry(24, val(24))},
                                                         {1, gfsl::make_entry(21, val(21))},
                                                         {0, gfsl::make_entry(17, val(17))}};
  EXPECT_EQ(w.hook().data_stores_to(c::f), order);
  const auto& rec = w.hook();
  const long mark = rec.find_store(c::e, lock_lane, gfsl::zombie_word_of(w.team().id()));
  ASSERT_GE(mark, 0);
  EXPECT_GT(mark, rec.find_store(c::f, 0, gfsl::make_entry(17, val(17))));
  EXPECT_GT(rec.find_store(c::f, lock_lane, gfsl::lock_free_word), mark);
  expect_well_formed(w);

  // contains walks over the zombie and leaves it linked.
  w.reset_observation();
  expect_result(a.contains(10), status::ok, false, 0);
  expect_result(a.contains(21), status::ok, true, val(21));
  expect_result(a.contains(13), status::ok, false, 0);
  EXPECT_GE(w.stats().zombies_skipped, 1u);
  EXPECT_EQ(w.stats().zombie_unlinks, 0u);
  EXPECT_EQ(w.image(0).next, c::e);

  // An insert that walks past the zombie unlinks it.
  w.reset_observation();
  expect_result(a.insert(10, val(10)), status::ok, true, 0);
  EXPECT_EQ(w.stats().zombie_unlinks, 1u);
  EXPECT_EQ(w.image(0).next, c::f);
  EXPECT_EQ(w.image(0).max, 9u);
  EXPECT_EQ(w.contents(c::f), level0({10, 17, 21, 24, 26}));
  EXPECT_EQ(gfsl::level_chunks(w.view(), 0), (std::vector<chunk_index>{0, c::f, c::g}));
  expect_well_formed(w);
}

// Fig. 4.5c when F cannot take E's keys: F is split first (its top DSIZE/2
// keys to a new chunk), then merged into.
TYPED_TEST(ThesisExamples, Fig45cMergeSplitsFullSuccessorFirst) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  constexpr int M = gfsl::chunk_shape<N>::split_moved;
  constexpr int F = D - M;
  const chunk_index ce = spare<N>(0), cf = spare<N>(1), cg = spare<N>(2);
  world<N> w;
  kvs full;
  for (int i = 0; i < D; ++i) full.emplace_back(100 + i, val(100 + i));
  w.lay(0, {{0, level0({neg_inf, 5})}, {ce, level0({10, 11, 12})}, {cf, full}, {cg, level0({500})}});
  const key_type top = 100 + D - 1;
  w.lay(1, {{1, {{neg_inf, 0}, {11, ce}, {top, cf}, {500, cg}}}});
  expect_well_formed(w);
  const chunk_index fresh = static_cast<chunk_index>(w.alloc_counter());
  ASSERT_EQ(fresh, spare<N>(3));
  auto a = w.alg(0.5);
  w.reset_observation();
  expect_result(a.remove(10), status::ok, true, val(10));

  EXPECT_TRUE(w.image(ce).zombie());
  kvs merged = level0({11, 12});
  for (int i = 0; i < F; ++i) merged.emplace_back(100 + i, val(100 + i));
  EXPECT_EQ(w.contents(cf), merged);
  EXPECT_EQ(w.image(cf).max, static_cast<key_type>(100 + F - 1));
  EXPECT_EQ(w.image(cf).next, fresh);
  kvs moved;
  for (int i = F; i < D; ++i) moved.emplace_back(100 + i, val(100 + i));
  EXPECT_EQ(w.contents(fresh), moved);
  EXPECT_EQ(w.image(fresh).max, top);
  EXPECT_EQ(w.image(fresh).next, cg);
  EXPECT_EQ(w.image(fresh).lock, gfsl::lock_free_word);
  EXPECT_EQ(w.contents(1), (kvs{{neg_inf, 0}, {11, cf}, {top, fresh}, {500, cg}}));
  EXPECT_EQ(w.level_count(0), 4) << "one chunk added by the split, one removed by the merge";
  EXPECT_EQ(w.stats().splits, 1u);
  EXPECT_EQ(w.stats().merges, 1u);
  EXPECT_EQ(w.stats().down_ptr_updates, 2u);
  expect_well_formed(w);
  for (int i = 0; i < D; ++i) expect_result(a.contains(100 + i), status::ok, true, val(100 + i));
  expect_result(a.contains(11), status::ok, true, val(11));
}

// 4.2.3 "Deleting From Last Chunk in Level": the final chunk never merges; a
// level whose final chunk keeps only -inf has its counter back at 0.
TYPED_TEST(ThesisExamples, LastChunkNeverMergesAndLevelEmpties) {
  constexpr int N = TypeParam::value;
  world<N> w;
  w.lay(0, {{0, level0({neg_inf, 5, 9, 13})}});
  w.lay(1, {{1, {{neg_inf, 0}, {9, 0}}}});
  expect_well_formed(w);
  auto a = w.alg(0.5);
  w.reset_observation();
  expect_result(a.remove(13), status::ok, true, val(13));
  EXPECT_EQ(w.contents(0), level0({neg_inf, 5, 9}));
  EXPECT_EQ(w.level_count(0), 1);
  expect_result(a.remove(9), status::ok, true, val(9));
  EXPECT_EQ(w.contents(1), (kvs{{neg_inf, 0}}));
  EXPECT_EQ(w.level_count(1), 0);
  expect_result(a.remove(5), status::ok, true, val(5));
  EXPECT_EQ(w.contents(0), (kvs{{neg_inf, 0}}));
  EXPECT_EQ(w.level_count(0), 0);
  EXPECT_FALSE(w.image(0).zombie());
  EXPECT_EQ(w.image(0).lock, gfsl::lock_free_word);
  EXPECT_EQ(w.stats().merges, 0u);
  EXPECT_EQ(w.alloc_counter(), static_cast<std::uint64_t>(N));
  expect_well_formed(w);
  expect_result(a.remove(5), status::ok, false, 0);
  expect_result(a.contains(5), status::ok, false, 0);
  expect_result(a.insert(7, val(7)), status::ok, true, 0);
  EXPECT_EQ(w.level_count(0), 1) << "the first key of an empty level counts its chunk again";
  EXPECT_EQ(w.contents(0), level0({neg_inf, 7}));
  expect_well_formed(w);
}

// A final chunk that is not the level's first may empty out completely; it
// stays live and linked, and takes new keys again.
TYPED_TEST(ThesisExamples, LastChunkMayBecomeEmpty) {
  constexpr int N = TypeParam::value;
  const chunk_index last = spare<N>(0);
  world<N> w;
  w.lay(0, {{0, level0({neg_inf, 5, 9, 13, 17, 21, 25})}, {last, level0({50, 60})}});
  expect_well_formed(w);
  auto a = w.alg(0.5);
  expect_result(a.remove(60), status::ok, true, val(60));
  expect_result(a.remove(50), status::ok, true, val(50));
  EXPECT_TRUE(w.contents(last).empty());
  EXPECT_FALSE(w.image(last).zombie());
  EXPECT_EQ(w.image(last).max, empty_key);
  EXPECT_EQ(gfsl::level_chunks(w.view(), 0), (std::vector<chunk_index>{0, last}));
  EXPECT_EQ(w.level_count(0), 2);
  EXPECT_EQ(w.stats().merges, 0u);
  expect_well_formed(w);
  expect_result(a.insert(70, val(70)), status::ok, true, 0);
  expect_result(a.insert(30, val(30)), status::ok, true, 0);
  EXPECT_EQ(w.contents(last), level0({30, 70}));
  EXPECT_EQ(w.contents(0), level0({neg_inf, 5, 9, 13, 17, 21, 25}));
  expect_well_formed(w);
}

// Merging a level's first chunk moves -inf into its successor; the head array
// still names the zombie until an update walks past it and moves the head.
TYPED_TEST(ThesisExamples, MergeOfFirstChunkMovesHeadLazily) {
  constexpr int N = TypeParam::value;
  const chunk_index next = spare<N>(0);
  world<N> w;
  w.lay(0, {{0, level0({neg_inf, 5, 9})}, {next, level0({50, 60})}});
  auto a = w.alg(0.5);
  w.reset_observation();
  expect_result(a.remove(5), status::ok, true, val(5));
  EXPECT_TRUE(w.image(0).zombie());
  EXPECT_EQ(w.contents(next), level0({neg_inf, 9, 50, 60}));
  EXPECT_EQ(w.level_count(0), 1);
  EXPECT_EQ(w.head(0), 0u);
  // Level 1's -inf pointed at the zombie; it now points at the chunk that
  // holds -inf.
  EXPECT_EQ(w.contents(1), (kvs{{neg_inf, next}}));
  EXPECT_EQ(w.stats().down_ptr_updates, 1u);
  expect_well_formed(w);

  w.reset_observation();
  expect_result(a.insert(7, val(7)), status::ok, true, 0);
  EXPECT_EQ(w.stats().head_unlinks, 1u);
  EXPECT_EQ(w.head(0), next);
  EXPECT_EQ(w.contents(next), level0({neg_inf, 7, 9, 50, 60}));
  EXPECT_EQ(gfsl::level_chunks(w.view(), 0), (std::vector<chunk_index>{next}));
  expect_well_formed(w);
}

// Keys 0 (-inf) and 0xFFFFFFFF (EMPTY) are refused before anything is read
// or written; the extreme user keys are accepted.
TYPED_TEST(ThesisExamples, SentinelKeysAreRefused) {
  constexpr int N = TypeParam::value;
  world<N> w;
  lay_fig41(w);
  const std::vector<std::uint64_t> before(w.words(), w.words() + gfsl::structure_view<N>::word_count(64));
  auto a = w.alg(1.0);
  w.reset_observation();
  for (key_type k : {gfsl::key_neg_inf, gfsl::key_empty}) {
    expect_result(a.insert(k, 1), status::key_out_of_range, false, 0);
    expect_result(a.remove(k), status::key_out_of_range, false, 0);
    expect_result(a.contains(k), status::key_out_of_range, false, 0);
  }
  EXPECT_TRUE(w.hook().chunk_reads.empty());
  EXPECT_TRUE(w.hook().stores.empty());
  EXPECT_EQ(std::vector<std::uint64_t>(w.words(), w.words() + before.size()), before);

  for (key_type k : {gfsl::min_user_key, gfsl::max_user_key}) {
    expect_result(a.insert(k, 5), status::ok, true, 0);
    expect_result(a.contains(k), status::ok, true, 5);
  }
  EXPECT_EQ(w.contents(0).at(1), (kv{1, 5}));
  EXPECT_EQ(w.contents(fig41<N>::x3).back(), (kv{gfsl::max_user_key, 5}));
  expect_well_formed(w);
  for (key_type k : {gfsl::min_user_key, gfsl::max_user_key}) expect_result(a.remove(k), status::ok, true, 5);
  expect_well_formed(w);
}

// Checks what a stopped structure holds: every key whose insert said ok is
// there with its value, nothing else, and the structure is well formed.
template <int N>
void expect_stopped_with(world<N>& w, const std::map<key_type, value_type>& inserted) {
  EXPECT_EQ(w.view().error_word()[0], gfsl::error_pool_exhausted);
  const std::vector<kv> expected(inserted.begin(), inserted.end());
  EXPECT_EQ(gfsl::level_entries(w.view(), 0), expected);
  expect_well_formed(w);
  auto a = w.alg(1.0);
  expect_result(a.insert(999999, 1), status::stopped, false, 0);
  expect_result(a.remove(inserted.begin()->first), status::stopped, false, 0);
  expect_result(a.contains(inserted.begin()->first), status::stopped, false, 0);
  EXPECT_EQ(gfsl::level_entries(w.view(), 0), expected) << "a stopped structure is left alone";
}

// The merge needs a split of the full successor and the pool is empty: the
// delete stops with pool_exhausted before touching level 0, so the key stays
// in the set (it has already left level 1, which keeps level 1 a subset of
// level 0), E is not a zombie, and nothing stays locked.
TYPED_TEST(ThesisExamples, MergeSplitWithEmptyPoolLeavesKey) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  const chunk_index ce = spare<N>(0), cf = spare<N>(1), cg = spare<N>(2);
  world<N> w(N + 3);
  kvs full;
  for (int i = 0; i < D; ++i) full.emplace_back(100 + i, val(100 + i));
  w.lay(0, {{0, level0({neg_inf, 5})}, {ce, level0({10, 11, 12})}, {cf, full}, {cg, level0({500})}});
  w.lay(1, {{1, {{neg_inf, 0}, {10, ce}, {11, ce}, {500, cg}}}});
  ASSERT_EQ(w.alloc_counter(), static_cast<std::uint64_t>(N + 3));
  expect_well_formed(w);
  auto a = w.alg(0.5);
  w.reset_observation();
  expect_result(a.remove(10), status::pool_exhausted, false, 0);
  EXPECT_EQ(w.contents(ce), level0({10, 11, 12}));
  EXPECT_FALSE(w.image(ce).zombie());
  EXPECT_EQ(w.contents(cf), full);
  EXPECT_EQ(w.contents(1), (kvs{{neg_inf, 0}, {11, ce}, {500, cg}}));
  EXPECT_EQ(w.stats().merges, 0u);
  EXPECT_EQ(w.stats().splits, 0u);
  std::map<key_type, value_type> present{{5, val(5)}, {10, val(10)}, {11, val(11)}, {12, val(12)}, {500, val(500)}};
  for (const kv& e : full) present.insert(e);
  expect_stopped_with(w, present);
}

// Two spare chunks: the third level-0 split finds the pool empty. The insert
// that needed it fails without inserting, and the structure stops.
TYPED_TEST(ThesisExamples, PoolExhaustedInBottomSplit) {
  constexpr int N = TypeParam::value;
  world<N> w(N + 2);
  auto a = w.alg(0.0);
  std::map<key_type, value_type> inserted;
  op_result failed{};
  key_type failed_key = 0;
  for (key_type k = 1; k < 10000; ++k) {
    const op_result r = a.insert(k, val(k));
    if (r.ok) inserted.emplace(k, val(k));
    if (r.st != status::ok) {
      failed = r;
      failed_key = k;
      break;
    }
  }
  ASSERT_NE(failed_key, 0u) << "the pool never ran out";
  expect_result(failed, status::pool_exhausted, false, 0);
  EXPECT_EQ(w.stats().splits, 2u);
  EXPECT_EQ(inserted.size(), failed_key - 1u);
  EXPECT_EQ(inserted.count(failed_key), 0u);
  EXPECT_GT(w.alloc_counter(), static_cast<std::uint64_t>(N + 2));
  expect_stopped_with(w, inserted);
}

// With p_chunk = 1 every level-0 split raises a key. After DSIZE-1 raises
// level 1's only chunk is full; with DSIZE spare chunks the next level-0 split
// takes the last one and the raise that follows cannot split level 1. The key
// is in the set (level 0) but not raised: ok with pool_exhausted.
TYPED_TEST(ThesisExamples, PoolExhaustedInUpperLevelSplit) {
  constexpr int N = TypeParam::value;
  constexpr int D = gfsl::chunk_shape<N>::dsize;
  world<N> w(N + D);
  auto a = w.alg(1.0);
  std::map<key_type, value_type> inserted;
  op_result failed{};
  key_type failed_key = 0;
  for (key_type k = 1; k < 100000; ++k) {
    const op_result r = a.insert(k, val(k));
    if (r.ok) inserted.emplace(k, val(k));
    if (r.st != status::ok) {
      failed = r;
      failed_key = k;
      break;
    }
  }
  ASSERT_NE(failed_key, 0u) << "the pool never ran out";
  expect_result(failed, status::pool_exhausted, true, 0);
  EXPECT_EQ(w.stats().splits, static_cast<std::uint64_t>(D));
  EXPECT_EQ(w.stats().raised_keys, static_cast<std::uint64_t>(D - 1));
  EXPECT_EQ(inserted.count(failed_key), 1u);
  const auto level1 = gfsl::level_entries(w.view(), 1);
  EXPECT_EQ(level1.size(), static_cast<std::size_t>(D - 1));
  EXPECT_TRUE(std::none_of(level1.begin(), level1.end(), [&](const kv& e) { return e.first == failed_key; }));
  expect_stopped_with(w, inserted);
}

}  // namespace
