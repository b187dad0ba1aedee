// A structure laid out word by word, one host team that reads and writes it,
// and a recorder of what that team read and wrote: the harness of the tests
// that start an operation from an exact shape (the thesis' figures, the
// robust variant's mechanisms) and check the chunks it leaves, not only the
// answer.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/gfsl/algorithm.hpp"
#include "core/host_team.hpp"
#include "core/gfsl/layout.hpp"
#include "core/types.hpp"
#include "exec/host_structure.hpp"

namespace gfsl::laid {

using gfsl::chunk_index;
using gfsl::key_type;
using gfsl::op_result;
using gfsl::status;
using gfsl::value_type;

using kv = std::pair<key_type, std::uint32_t>;
using kvs = std::vector<kv>;

constexpr key_type neg_inf = gfsl::key_neg_inf;
constexpr key_type empty_key = gfsl::key_empty;

// Value stored with a level-0 key: distinct from the key so that a test can
// tell a value from a down pointer or a key.
constexpr value_type val(key_type k) { return k + 100000u; }

struct chunk_spec {
  chunk_index index;
  kvs entries;  // in lane order; a level's first chunk starts with -inf
};

struct store_event {
  chunk_index chunk;
  int lane;
  std::uint64_t value;
  bool cas = false;  // a successful CAS (taking a lock) rather than a store
};

// Watches one team: which chunks it read whole (in order), and every write it
// made to the pool (stores, and CASes that succeeded). A sequential team that
// waits for a lock waits for itself and would spin forever, so a lock wait
// fails the test instead.
template <int N>
class recorder final : public gfsl::access_hook {
 public:
  std::vector<chunk_index> chunk_reads;
  std::vector<store_event> stores;
  std::function<void(chunk_index)> on_chunk_read;  // after a whole chunk was read
  // After every access of the team, before anything else looks at it: where a
  // test makes another team act between two lanes of one read.
  std::function<void(const gfsl::access&, std::uint64_t)> on_access;

  void clear() {
    chunk_reads.clear();
    stores.clear();
  }
  void before(const gfsl::access&) override {}
  void after(const gfsl::access& a, std::uint64_t result) override {
    if (on_access) on_access(a, result);
    if (a.word < gfsl::header_offsets::pool) return;
    const std::uint64_t rel = a.word - gfsl::header_offsets::pool;
    const auto c = static_cast<chunk_index>(rel / N);
    const int lane = static_cast<int>(rel % N);
    if (a.kind == gfsl::access_kind::load && a.group_size == N && a.group_index == N - 1) {
      // No case here comes near this many reads; a traversal that does is
      // looping, and failing beats hanging.
      if (++reads_ > 1000000) throw std::logic_error("a team read over a million chunks");
      chunk_reads.push_back(c);
      if (on_chunk_read) on_chunk_read(c);
    } else if (a.kind == gfsl::access_kind::store) {
      stores.push_back({c, lane, a.value});
    } else if (a.kind == gfsl::access_kind::cas && result == a.expected) {
      stores.push_back({c, lane, a.value, true});
    }
  }
  void lock_wait(gfsl::team_id team, chunk_index chunk, std::uint64_t word) override {
    throw std::logic_error("team " + std::to_string(team) + " waited for chunk " + std::to_string(chunk) +
                           " (lock word " + std::to_string(word) + ") with no other team running");
  }

  // Stores to chunk c's DATA lanes, in order.
  std::vector<std::pair<int, std::uint64_t>> data_stores_to(chunk_index c) const {
    std::vector<std::pair<int, std::uint64_t>> out;
    for (const store_event& e : stores) {
      if (e.chunk == c && e.lane < gfsl::chunk_shape<N>::dsize && !e.cas) out.emplace_back(e.lane, e.value);
    }
    return out;
  }
  // Position of the first write matching, or -1.
  long find_store(chunk_index c, int lane, std::uint64_t value) const {
    for (std::size_t i = 0; i < stores.size(); ++i) {
      if (stores[i].chunk == c && stores[i].lane == lane && stores[i].value == value) return static_cast<long>(i);
    }
    return -1;
  }

 private:
  std::uint64_t reads_ = 0;
};

template <int N>
class world {
 public:
  using shape = gfsl::chunk_shape<N>;
  static constexpr int dsize = shape::dsize;
  static constexpr int next_lane = shape::next_lane;
  static constexpr int lock_lane = shape::lock_lane;

  explicit world(std::uint32_t capacity = 64, gfsl::team_id id = 0)
      : s_(capacity), team_(id, 7, s_.words(), &hook_) {}

  gfsl::structure_view<N> view() const { return s_.view(); }
  std::uint64_t* words() const { return s_.words(); }
  gfsl::host_team<N>& team() { return team_; }
  gfsl::path_stats stats() const { return gfsl::path_stats_of(team_.stats()); }
  recorder<N>& hook() { return hook_; }
  template <gfsl::variant V = gfsl::variant::thesis>
  gfsl::algorithm<gfsl::host_team<N>, false, V> alg(double p) {
    return gfsl::algorithm<gfsl::host_team<N>, false, V>(team_, view(), gfsl::p_chunk_threshold_of(p));
  }
  // With seeded bug `m` compiled in and active (core/gfsl/mutants.hpp).
  template <gfsl::variant V>
  gfsl::algorithm<gfsl::host_team<N>, true, V> mutant_alg(double p, gfsl::mutant m) {
    return gfsl::algorithm<gfsl::host_team<N>, true, V>(team_, view(), gfsl::p_chunk_threshold_of(p), m);
  }
  void reset_observation() {
    team_.stats() = {};
    hook_.clear();
  }

  // Writes a whole level: DATA entries, NEXT (max = last key, or +inf and no
  // successor for the final chunk), free locks, the head and the level
  // counter; raises the allocation counter past the chunks used.
  void lay(int level, const std::vector<chunk_spec>& chunks) {
    ASSERT_FALSE(chunks.empty());
    ASSERT_EQ(chunks.front().index, static_cast<chunk_index>(level))
        << "level heads stay the initial chunks so that the -inf down pointers of the levels above hold";
    bool has_keys = false;
    std::uint64_t top = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const chunk_spec& c = chunks[i];
      ASSERT_LE(c.entries.size(), static_cast<std::size_t>(dsize));
      ASSERT_LT(c.index, s_.capacity());
      std::uint64_t* w = view().chunk(c.index);
      for (int lane = 0; lane < dsize; ++lane) {
        w[lane] = lane < static_cast<int>(c.entries.size())
                      ? gfsl::make_entry(c.entries[lane].first, c.entries[lane].second)
                      : gfsl::empty_entry;
      }
      const bool final_chunk = i + 1 == chunks.size();
      if (!final_chunk) {
        ASSERT_FALSE(c.entries.empty()) << "a non-final chunk needs a max key";
      }
      w[next_lane] = final_chunk ? gfsl::final_next_entry
                                 : gfsl::make_entry(c.entries.back().first, chunks[i + 1].index);
      w[lock_lane] = gfsl::lock_free_word;
      for (const kv& e : c.entries) has_keys = has_keys || e.first != neg_inf;
      top = std::max<std::uint64_t>(top, c.index + 1);
    }
    view().heads()[level] = chunks.front().index;
    view().level_counts()[level] = has_keys ? chunks.size() : 0;
    view().alloc_counter()[0] = std::max(view().alloc_counter()[0], top);
  }

  gfsl::chunk_image<N> image(chunk_index c) const { return gfsl::read_chunk_image(view(), c); }
  // DATA entries up to the last non-EMPTY lane (an EMPTY in between shows as
  // key 0xFFFFFFFF).
  kvs contents(chunk_index c) const {
    const gfsl::chunk_image<N> img = image(c);
    int last = -1;
    for (int i = 0; i < dsize; ++i) {
      if (gfsl::entry_key(img.data[i]) != empty_key) last = i;
    }
    kvs out;
    for (int i = 0; i <= last; ++i) out.emplace_back(gfsl::entry_key(img.data[i]), gfsl::entry_value(img.data[i]));
    return out;
  }
  std::int64_t level_count(int level) const { return static_cast<std::int64_t>(view().level_counts()[level]); }
  std::uint64_t alloc_counter() const { return view().alloc_counter()[0]; }
  chunk_index head(int level) const { return static_cast<chunk_index>(view().heads()[level]); }

 private:
  gfsl::host_structure<N> s_;
  recorder<N> hook_;
  gfsl::host_team<N> team_;
};

template <int N>
void expect_well_formed(const world<N>& w) {
  const std::vector<std::string> problems = gfsl::structural_problems(w.view());
  std::string all;
  for (const std::string& p : problems) all += "\n  " + p;
  EXPECT_TRUE(problems.empty()) << "structural problems:" << all;
}

inline void expect_result(const op_result& r, status st, bool ok, value_type value) {
  EXPECT_EQ(gfsl::status_name(r.st), std::string(gfsl::status_name(st)));
  EXPECT_EQ(r.ok, ok);
  EXPECT_EQ(r.value, value);
}

inline kvs level0(std::initializer_list<key_type> keys) {
  kvs out;
  for (key_type k : keys) out.emplace_back(k, k == neg_inf ? 0u : val(k));
  return out;
}

// Chunks 0..N-1 head the levels; the chunks a layout adds are numbered from N.
template <int N>
constexpr chunk_index spare(int i) {
  return static_cast<chunk_index>(N + i);
}

}  // namespace gfsl::laid
