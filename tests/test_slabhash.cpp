// SlabHash (core/slabhash/): both variants against std::map in long
// sequential runs; the snapshot invariants (invariants/slabhash_snapshot.hpp)
// on hand-made tables they must reject; and the published faults of issue 38
// as exact two-team interleavings, present in `published` and absent in
// `fixed`.
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/host_team.hpp"
#include "core/slabhash/algorithm.hpp"
#include "core/slabhash/layout.hpp"
#include "core/slabhash/mutants.hpp"

namespace {

using gfsl::key_type;
using gfsl::op_kind;
using gfsl::op_result;
using gfsl::status;
using gfsl::value_type;
using namespace gfsl::slabhash;
using team16 = gfsl::host_team<16>;

// A fresh table and the teams that work on it.
struct table {
  params p;
  std::vector<std::uint64_t> words;
  explicit table(params prm) : p(prm), words(word_count(prm)) {
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = initial_word(i, p);
  }
  team16 team(gfsl::team_id id, gfsl::access_hook* hook = nullptr) {
    return team16(id, 1, words.data(), hook, false, words.size());
  }
};

template <slab_variant V, bool Mutable = false>
op_result run_op(table& t, gfsl::team_id id, op_kind kind, key_type k, value_type v = 0,
                 gfsl::access_hook* hook = nullptr, slab_mutant m = slab_mutant::none) {
  team16 tm = t.team(id, hook);
  algorithm<team16, V, Mutable> a(tm, t.words.data(), t.p, m);
  return a.apply(kind, k, v);
}

// ---- (a) sequential runs against std::map --------------------------------------

// The set semantics every correct design answers.
struct map_model {
  std::map<key_type, value_type> m;
  op_result insert(key_type k, value_type v) { return {status::ok, m.emplace(k, v).second, 0}; }
  op_result remove(key_type k) {
    const auto it = m.find(k);
    if (it == m.end()) return {status::ok, false, 0};
    const value_type v = it->second;
    m.erase(it);
    return {status::ok, true, v};
  }
  op_result contains(key_type k) const {
    const auto it = m.find(k);
    return it == m.end() ? op_result{status::ok, false, 0} : op_result{status::ok, true, it->second};
  }
};

// Upstream's operations run one at a time, written plainly (issue 38): a
// chain of slabs of 15 pairs; insert looks for k in one slab at a time and
// claims that slab's first EMPTY pair; delete empties the first pair holding
// k. Sequentially it departs from a set once a delete opens a hole before a
// later slab holding k (upstream issue 17): insert(k) then answers true.
struct upstream_model {
  std::vector<std::vector<std::vector<std::uint64_t>>> chains;  // bucket -> slab -> pair
  params p;
  explicit upstream_model(const params& prm) : chains(prm.buckets), p(prm) {
    for (auto& c : chains) c.assign(1, std::vector<std::uint64_t>(pairs_per_slab, empty_pair));
  }
  op_result insert(key_type k, value_type v) {
    auto& chain = chains[bucket_of(k, p)];
    for (std::size_t s = 0;; ++s) {
      if (s == chain.size()) chain.emplace_back(pairs_per_slab, empty_pair);
      auto& slab = chain[s];
      for (std::uint64_t w : slab) {
        if (pair_key(w) == k) return {status::ok, false, 0};
      }
      for (std::uint64_t& w : slab) {
        if (w == empty_pair) {
          w = make_pair(k, v);
          return {status::ok, true, 0};
        }
      }
    }
  }
  op_result remove(key_type k) {
    for (auto& slab : chains[bucket_of(k, p)]) {
      for (std::uint64_t& w : slab) {
        if (pair_key(w) == k) {
          const value_type v = pair_value(w);
          w = empty_pair;
          return {status::ok, true, v};
        }
      }
    }
    return {status::ok, false, 0};
  }
  op_result contains(key_type k) const {
    for (const auto& slab : chains[bucket_of(k, p)]) {
      for (std::uint64_t w : slab) {
        if (pair_key(w) == k) return {status::ok, true, pair_value(w)};
      }
    }
    return {status::ok, false, 0};
  }
};

struct run_shape {
  std::uint32_t buckets = 1;
  std::uint64_t seed = 1;
  int ops = 4000;
  key_type range = 80;
  int insert_pct = 40, remove_pct = 35;  // the rest contains
};

// Runs random operations on the team algorithm and on `model` side by side;
// fails at the first answer that differs. Returns the number of successful
// removes (so a caller can tell the run exercised them).
template <slab_variant V, class Model>
int random_run_against(Model& model, const run_shape& r) {
  // fixed never reuses a pair: room for every insert.
  const params p{r.buckets, 2 * r.buckets + static_cast<std::uint32_t>(r.ops / pairs_per_slab) + 8, r.seed};
  table t(p);
  team16 tm = t.team(0);
  algorithm<team16, V> a(tm, t.words.data(), p);
  std::mt19937_64 rng(r.seed);
  int inserted = 0, removed = 0, found = 0;
  for (int i = 0; i < r.ops; ++i) {
    const int draw = static_cast<int>(rng() % 100);
    const key_type k = 1 + static_cast<key_type>(rng() % r.range);
    const auto v = static_cast<value_type>(rng());
    const op_kind kind = draw < r.insert_pct                 ? op_kind::insert
                         : draw < r.insert_pct + r.remove_pct ? op_kind::remove
                                                              : op_kind::contains;
    const op_result got = a.apply(kind, k, v);
    const op_result want = kind == op_kind::insert ? model.insert(k, v)
                           : kind == op_kind::remove ? model.remove(k)
                                                     : model.contains(k);
    const char* names[] = {"insert", "remove", "contains"};
    const std::string where = std::string(variant_name(V)) + " buckets " + std::to_string(r.buckets) + " seed " +
                              std::to_string(r.seed) + " op " + std::to_string(i) + ": " +
                              names[static_cast<int>(kind)] + "(" + std::to_string(k) + ")";
    EXPECT_EQ(got.st, status::ok) << where;
    EXPECT_EQ(got.ok, want.ok) << where;
    EXPECT_EQ(got.value, want.value) << where;
    if (got.ok != want.ok || got.st != status::ok) return removed;
    inserted += kind == op_kind::insert && got.ok;
    removed += kind == op_kind::remove && got.ok;
    found += kind == op_kind::contains && got.ok;
  }
  for (key_type k = 1; k <= r.range; ++k) {
    EXPECT_EQ(a.contains(k).ok, model.contains(k).ok) << "final contents, key " << k;
  }
  // The run went through what it is meant to test: chains past their head.
  EXPECT_GT(inserted, std::min<int>(r.ops / 10, static_cast<int>(r.range / 3)));
  if (r.insert_pct + r.remove_pct < 100) {
    EXPECT_GT(found, r.ops / 50);
  }
  if (r.range > pairs_per_slab * r.buckets) {
    EXPECT_GT(t.words[alloc_counter_word], static_cast<std::uint64_t>(r.buckets) + 2) << "no chain grew past its head";
  }
  EXPECT_EQ(t.words[error_word_index], gfsl::error_none);
  return removed;
}

TEST(SlabHashSequential, FixedMatchesMapOneBucket) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    map_model m;
    EXPECT_GT((random_run_against<slab_variant::fixed>(m, {1, seed, 4000, 80})), 400);
  }
}
TEST(SlabHashSequential, FixedMatchesMapEightBuckets) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    map_model m;
    EXPECT_GT((random_run_against<slab_variant::fixed>(m, {8, seed, 4000, 400})), 400);
  }
}
// published is a set while no delete opens a hole in front of a later slab:
// without deletes (long chains), or with chains of one slab (at most 15 keys
// in the bucket).
TEST(SlabHashSequential, PublishedMatchesMapWithoutDeletes) {
  for (std::uint32_t buckets : {1u, 8u}) {
    map_model m;
    random_run_against<slab_variant::published>(m, {buckets, 5, 4000, 1000 * buckets, 50, 0});
  }
}
TEST(SlabHashSequential, PublishedMatchesMapInOneSlabChains) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    map_model m;
    EXPECT_GT((random_run_against<slab_variant::published>(m, {1, seed, 4000, 15})), 400);
  }
}
// With deletes and long chains, published answers as upstream's operations
// run one at a time, including the insert that answers true while k lives
// in a later slab (upstream issue 17).
TEST(SlabHashSequential, PublishedMatchesUpstreamOneBucket) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    upstream_model m(params{1, 0, seed});
    EXPECT_GT((random_run_against<slab_variant::published>(m, {1, seed, 4000, 80})), 400);
  }
}
TEST(SlabHashSequential, PublishedMatchesUpstreamEightBuckets) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    upstream_model m(params{8, 0, seed});
    EXPECT_GT((random_run_against<slab_variant::published>(m, {8, seed, 4000, 400})), 400);
  }
}
// ... and that is not a set: such a run departs from std::map.
TEST(SlabHashSequential, PublishedDepartsFromMapWithDeletesAndLongChains) {
  const params p{1, 400, 1};
  table t(p);
  team16 tm = t.team(0);
  algorithm<team16, slab_variant::published> a(tm, t.words.data(), p);
  map_model set;
  std::mt19937_64 rng(1);
  int departures = 0;
  for (int i = 0; i < 4000; ++i) {
    const key_type k = 1 + static_cast<key_type>(rng() % 80);
    const int draw = static_cast<int>(rng() % 100);
    if (draw < 40) {
      departures += set.insert(k, 1).ok != a.insert(k, 1).ok;
    } else if (draw < 75) {
      departures += set.remove(k).ok != a.remove(k).ok;
    } else {
      departures += set.contains(k).ok != a.contains(k).ok;
    }
  }
  EXPECT_GT(departures, 0);
}

TEST(SlabHashSequential, KeysOutOfRangeAreRefused) {
  table t(params{1, 4, 0});
  for (key_type k : {tombstone_key, empty_key}) {
    EXPECT_EQ((run_op<slab_variant::fixed>(t, 0, op_kind::insert, k, 1).st), status::key_out_of_range);
    EXPECT_EQ((run_op<slab_variant::published>(t, 0, op_kind::contains, k).st), status::key_out_of_range);
    EXPECT_EQ((run_op<slab_variant::fixed>(t, 0, op_kind::remove, k).st), status::key_out_of_range);
  }
  // 0 is a user key here (GFSL's minus infinity is not).
  EXPECT_TRUE((run_op<slab_variant::fixed>(t, 0, op_kind::insert, 0, 7).ok));
  EXPECT_EQ((run_op<slab_variant::fixed>(t, 0, op_kind::contains, 0).value), 7u);
}

TEST(SlabHashSequential, FullPoolSetsTheErrorWordAndKeepsTheKeys) {
  for (slab_variant v : {slab_variant::published, slab_variant::fixed}) {
    table t(params{1, 3, 0});  // the head and two more slabs: 45 pairs
    key_type k = 1;
    op_result r;
    for (;; ++k) {
      r = v == slab_variant::fixed ? run_op<slab_variant::fixed>(t, 0, op_kind::insert, k, k)
                                   : run_op<slab_variant::published>(t, 0, op_kind::insert, k, k);
      if (r.st != status::ok) break;
      ASSERT_TRUE(r.ok);
    }
    EXPECT_EQ(r.st, status::pool_exhausted) << variant_name(v);
    EXPECT_EQ(k, 3u * pairs_per_slab + 1) << variant_name(v);
    EXPECT_EQ(t.words[error_word_index], gfsl::error_pool_exhausted);
    for (key_type j = 1; j < k; ++j) EXPECT_TRUE((run_op<slab_variant::fixed>(t, 1, op_kind::contains, j).ok)) << j;
  }
}

TEST(SlabHashLayout, HashSpreadsKeysOverTheBuckets) {
  const params p{8, 8, 42};
  std::vector<int> per_bucket(8);
  for (key_type k = 1; k <= 8000; ++k) ++per_bucket[bucket_of(k, p)];
  for (int n : per_bucket) EXPECT_GT(n, 600);  // 1000 each on average
  EXPECT_EQ(bucket_of(12345, params{1, 1, 7}), 0u);
  int moved = 0;  // the seed picks the function
  for (key_type k = 1; k <= 100; ++k) moved += bucket_of(k, params{8, 8, 1}) != bucket_of(k, params{8, 8, 2});
  EXPECT_GT(moved, 50);
}

TEST(SlabHashLayout, DescribesWordsInUpstreamLanes) {
  const params p{4, 20, 0};
  EXPECT_EQ(describe_word(p, 0), "header: allocation counter");
  EXPECT_EQ(describe_word(p, 1), "header: error word");
  EXPECT_EQ(describe_word(p, slab_offset(3) + 7), "bucket 3 slab 3 lane 14 (pair 7)");
  EXPECT_EQ(describe_word(p, slab_offset(12) + 15), "slab 12 lane 31 (next)");
  EXPECT_EQ(describe_word(p, slab_offset(12) + 0, 2), "bucket 2 slab 12 lane 0 (pair 0)");
  EXPECT_EQ(word_count(p), 16u + 20u * 16u);
  EXPECT_EQ(initial_word(0, p), 4u);
  EXPECT_EQ(initial_word(slab_offset(5) + 15, p), last_next_word);
}

TEST(SlabHashMutants, CatalogNamesParseBack) {
  EXPECT_GE(slab_mutant_count, 8u);
  for (const slab_mutant_info& m : slab_mutant_catalog) {
    EXPECT_EQ(parse_mutant(m.name), m.id) << m.name;
    EXPECT_EQ(info(m.id).name, m.name);
    EXPECT_FALSE(m.breaks.empty()) << m.name;
    EXPECT_EQ(m.name.find('_'), std::string_view::npos) << m.name;
  }
  EXPECT_EQ(parse_mutant("none"), slab_mutant::none);
  EXPECT_FALSE(parse_mutant("no-such-mutant").has_value());
  EXPECT_EQ(parse_variant("published"), slab_variant::published);
  EXPECT_EQ(parse_variant("fixed"), slab_variant::fixed);
  EXPECT_FALSE(parse_variant("robust").has_value());
}

}  // namespace
